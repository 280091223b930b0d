/* ocbench: the command line. A git-style table of subcommands; global options come
 * before the command (`ocbench --db x.db run ...`) or anywhere after it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "collect/host.h"
#include "common/ocb_log.h"

static int cmd_version(const struct ocb_global *g, int argc, char **argv);
static int cmd_help(const struct ocb_global *g, int argc, char **argv);

static const struct ocb_cmd commands[] = {
	{"run", cmd_run, "measure suites of benchmarks and workloads into the database"},
	{"runs", cmd_runs, "list the runs in the database"},
	{"show", cmd_show, "show one run's results"},
	{"machines", cmd_machines, "list the machines in the database"},
	{"ceilings", cmd_ceilings, "measure (or show) this machine's roofline ceilings"},
	{"events", cmd_events, "list the PAPI events available here and those ocbench records"},
	{"report", cmd_report, "write tables, roofline and curves (md, LaTeX, CSV, HTML, JSON)"},
	{"compare", cmd_compare, "compare two runs case by case; exit 1 on a regression"},
	{"ab", cmd_ab, "interleaved A/B of two builds on this machine; exit 1 on a regression"},
	{"history", cmd_history, "one case's medians over runs, with change points"},
	{"export", cmd_export, "write a run as Google Benchmark JSON, CSV or JSON"},
	{"import", cmd_import, "read Google Benchmark JSON as a new run"},
	{"merge", cmd_merge, "bring the runs of another ocbench database into this one"},
	{"inspect", cmd_inspect, "static analysis of a model: per-layer cost, footprint, predicted speed"},
	{"plan", cmd_plan, "mixed-precision plan of a model under a storage budget (bpw or bytes)"},
	{"compress", cmd_compress, "progressive compression of an LM checkpoint under a plan (pivot, block, global)"},
	{"version", cmd_version, "print the version"},
	{"help", cmd_help, "list the commands, or 'help CMD' for one"},
};
#define NCMD (sizeof commands / sizeof commands[0])

static const struct ocb_cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < NCMD; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ocbench [--db PATH] [--quiet] [--json] COMMAND [ARGS]\n\n"
		   "Benchmarks model-compression and large-scale-training workloads, keeps every\n"
		   "measurement in SQLite and reports them.\n\ncommands:\n");
	for (size_t i = 0; i < NCMD; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nglobal options:\n"
		   "  --db PATH  database file (default $OCBENCH_DB or ./ocbench.db)\n"
		   "  --quiet    no progress or info on stderr\n"
		   "  --json     machine-readable output on stdout where a command prints data\n"
		   "\n'ocbench COMMAND --help' describes one command.\n");
}

static int cmd_version(const struct ocb_global *g, int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--help") == 0) {
		printf("usage: ocbench version\n\nPrints ocbench's version and git commit.\n");
		return 0;
	}
	if (argc > 1)
		return cli_usage_error("version", "takes no arguments");
	if (g->json)
		printf("{\"version\":\"%s\",\"git_sha\":\"%s\"}\n", OCB_VERSION, OCB_GIT_SHA);
	else
		printf("ocbench %s (%s)\n", OCB_VERSION, OCB_GIT_SHA);
	return 0;
}

static int cmd_help(const struct ocb_global *g, int argc, char **argv)
{
	(void)g;
	if (argc > 1 && strcmp(argv[1], "--help") != 0) {
		const struct ocb_cmd *c = find_cmd(argv[1]);
		if (!c)
			return cli_usage_error("help", "no command '%s'", argv[1]);
		char *sub[] = {argv[1], "--help", NULL};
		return c->fn(g, 2, sub);
	}
	usage(stdout);
	return 0;
}

/* Takes the global options out of argv (anywhere), leaving the rest in order. */
static int take_globals(struct ocb_global *g, int *argc, char **argv)
{
	int out = 1;
	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
			g->quiet = 1;
		} else if (strcmp(a, "--json") == 0) {
			g->json = 1;
		} else if (strcmp(a, "--db") == 0) {
			if (i + 1 >= *argc || !argv[i + 1][0])
				return cli_usage_error("--db", "needs a path");
			g->db_path = argv[++i];
		} else if (strncmp(a, "--db=", 5) == 0) {
			if (!a[5])
				return cli_usage_error("--db", "needs a path");
			g->db_path = a + 5;
		} else {
			argv[out++] = argv[i];
		}
	}
	*argc = out;
	argv[out] = NULL;
	return 0;
}

int main(int argc, char **argv)
{
	struct ocb_global g = {0};
	/* OpenBLAS 0.3.21 does not know newer CPUs and falls back to SSE3 kernels, which
	 * would make every BLAS number (and the sgemm ceiling) meaningless: restart once
	 * with its Haswell (AVX2+FMA) kernels unless the user chose OPENBLAS_CORETYPE. */
	ocb_host_blas_reexec(argv);
	const char *env = getenv("OCBENCH_DB");
	g.db_path = env && *env ? env : "ocbench.db";
	g.argv0 = argv[0];
	for (int i = 0, len = 0; i < argc && len < (int)sizeof g.cmdline - 1; i++)
		len += snprintf(g.cmdline + len, sizeof g.cmdline - (size_t)len, "%s%s", i ? " " : "",
				argv[i]);
	if (take_globals(&g, &argc, argv))
		return 2;
	ocb_log_quiet = g.quiet;
	if (argc < 2) {
		fprintf(stderr, "ocbench: no command given (see 'ocbench help')\n");
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0)
		return cmd_version(&g, 1, argv + 1);
	const struct ocb_cmd *c = find_cmd(argv[1]);
	if (!c) {
		fprintf(stderr, "ocbench: '%s' is not a command (see 'ocbench help')\n", argv[1]);
		return 2;
	}
	return c->fn(&g, argc - 1, argv + 1);
}
