/* ocbench run: parse options, open the store, hand over to collect/runner. */
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../collect/counters.h"
#include "../collect/registry.h"
#include "../collect/runner.h"
#include "../collect/serve.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_log.h"
#include "cli.h"
#include "run_dist.h"
#include "run_dry.h"

static void run_help(void)
{
	printf("usage: ocbench run [options]\n\n"
	       "Runs benchmark suites and stores every sample, statistic, counter and metric.\n\n"
	       "  --suite LIST       comma-separated built-in suites and suite files\n"
	       "                     (FILE.json, see examples/suites/), or 'all' (default)\n"
	       "  --list             list the suites and their benchmarks, then exit\n"
	       "  --describe BENCH   print BENCH's declared parameters, then exit\n"
	       "  --dry-run          print the cases this command would run (suites, filter,\n"
	       "                     threads, quick applied), then exit: nothing measured or\n"
	       "                     stored (with --json: a JSON array)\n"
	       "  --quick            small sizes and budgets (CI)\n"
	       "  --filter REGEX     run only cases whose 'suite/bench/params' matches\n"
	       "  --label TEXT       a label for the run (compare and report can name it)\n"
	       "  --seed N           seed of every random choice (default 1)\n"
	       "  --threads LIST     thread counts, e.g. 1,2 (default: all cores; kernels\n"
	       "                     that sweep run at 1 and all)\n"
	       "  --events LIST      PAPI events to record (default: see 'ocbench events')\n"
	       "  --no-papi          no counters: timing-only results\n"
	       "  --target-ci P      stop repeating when the median's 95%% CI is within P\n"
	       "                     (default 2%%; tested from 6 repetitions on)\n"
	       "  --budget S         seconds of repetitions per case (default 2, quick 0.3)\n"
	       "  --min-reps N       at least N repetitions (default 5)\n"
	       "  --max-reps N       at most N repetitions (default 1000)\n"
	       "  --ranks LIST       MPI rank counts, e.g. 1,2,4: runs this command under\n"
	       "                     mpirun once per count (the dist suite); inside mpirun or\n"
	       "                     srun the job's ranks are used and rank 0 writes the db\n"
	       "  --passes N         interleave: run the kernel cases N times over, each pass\n"
	       "                     in its own shuffled order (from --seed) with 1/N of the\n"
	       "                     budget, min and max reps, and merge each case's samples\n"
	       "                     into one result, so that a burst of host noise is spread\n"
	       "                     over all cases (default 3; 1: each case once, in order).\n"
	       "                     A case's later passes take as many repetitions as its\n"
	       "                     first, so that each pass weighs the same.\n"
	       "                     Workloads run once; results are stored after the last pass,\n"
	       "                     after re-measuring any ceiling they ran above (>105%%).\n"
	       "  --ceilings         re-measure the machine's ceilings even if cached\n"
	       "  --out DIR          run artifacts: MLLOG files, checkpoints (default ocbench-out)\n"
	       "  --data-dir DIR     datasets instead of the Debian package paths\n"
	       "  --inject-slowdown BENCH:FRACTION\n"
	       "                     testing 'compare': BENCH's timed region takes FRACTION\n"
	       "                     (e.g. 0.1) longer; recorded in the run's config\n"
	       "  --serve            the child of 'ocbench ab': no store; lists the planned\n"
	       "                     cases as one JSON line, then sets cases up once and times\n"
	       "                     them on request from stdin (collect/serve.h)\n\n"
	       "Exit: 0 all cases ok; 2 bad usage or bad input (e.g. a truncated dataset);\n"
	       "3 a case failed or the run broke.\n");
}

static void on_signal(int sig)
{
	(void)sig;
	ocb_runner_stop = 1;
}

/* Splits a comma list in place into out[0..max); returns the count or -1 if too many. */
static int split_list(char *s, const char **out, int max)
{
	int n = 0;
	for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
		if (n == max)
			return -1;
		out[n++] = tok;
	}
	return n;
}

/* What the command line gave besides the runner's options. */
struct run_cli {
	struct ocb_run_opts o;
	const char *suite_spec, *filter, *describe;
	int list, serve, dry, budget_set, passes_set, tci_set, minr_set, maxr_set, quick_set;
	char thread_buf[128], event_buf[1024], slow_buf[128];
	const char *thread_words[8];
	char ranks_buf[128];
	int ranks[16], nranks;
	const char *events[32];
};

static int opt_threads(struct run_cli *c, const char *arg)
{
	long v;
	snprintf(c->thread_buf, sizeof c->thread_buf, "%s", arg);
	int n = split_list(c->thread_buf, c->thread_words, 8);
	if (n <= 0)
		return cli_usage_error("run", "--threads wants a list like 1,2");
	for (int i = 0; i < n; i++) {
		if (cli_parse_long("run", "--threads", c->thread_words[i], 1, 1024, &v))
			return 2;
		c->o.threads[i] = (int)v;
	}
	c->o.nthreads = n;
	return 0;
}

static int opt_ranks(struct run_cli *c, const char *arg)
{
	const char *w[16];
	snprintf(c->ranks_buf, sizeof c->ranks_buf, "%s", arg);
	int n = split_list(c->ranks_buf, w, 16);
	if (n <= 0)
		return cli_usage_error("run", "--ranks wants a list like 1,2,4");
	for (int i = 0; i < n; i++) {
		long v;
		if (cli_parse_long("run", "--ranks", w[i], 1, 4096, &v))
			return 2;
		c->ranks[i] = (int)v;
	}
	c->nranks = n;
	return 0;
}

static int opt_slowdown(struct run_cli *c, const char *arg)
{
	double d;
	const char *colon = strrchr(arg, ':');
	if (!colon || colon == arg || strlen(arg) >= sizeof c->slow_buf)
		return cli_usage_error("run", "--inject-slowdown wants BENCH:FRACTION");
	if (cli_parse_double("run", "--inject-slowdown", colon + 1, 0.0, 10.0, &d))
		return 2;
	snprintf(c->slow_buf, sizeof c->slow_buf, "%.*s", (int)(colon - arg), arg);
	c->o.harness.slow_bench = c->slow_buf;
	c->o.harness.slow_frac = d;
	return 0;
}

enum { O_SUITE = 256, O_LIST, O_QUICK, O_FILTER, O_LABEL, O_SEED, O_THREADS, O_EVENTS,
       O_NOPAPI, O_TCI, O_BUDGET, O_MINREPS, O_MAXREPS, O_CEIL, O_OUT, O_DATA, O_SLOW,
       O_PASSES, O_DESCRIBE, O_HELP, O_RANKS, O_SERVE, O_DRY };

/* The options taking a number; 0 or the exit code. */
static int opt_number(struct run_cli *c, int opt, const char *arg)
{
	struct ocb_run_opts *o = &c->o;
	long v = 0;
	switch (opt) {
	case O_SEED:
		if (cli_parse_long("run", "--seed", arg, 0, 0x7fffffffffffffffL, &v))
			return 2;
		o->seed = (uint64_t)v;
		return 0;
	case O_TCI:
		c->tci_set = 1;
		return cli_parse_double("run", "--target-ci", arg, 1e-4, 1.0, &o->harness.target_ci);
	case O_BUDGET:
		c->budget_set = 1;
		return cli_parse_double("run", "--budget", arg, 0.0, 86400.0, &o->harness.budget_s);
	case O_MINREPS:
		c->minr_set = 1;
		return cli_parse_long("run", "--min-reps", arg, 1, 1000000, &o->harness.min_reps);
	case O_MAXREPS:
		c->maxr_set = 1;
		return cli_parse_long("run", "--max-reps", arg, 1, 10000000, &o->harness.max_reps);
	case O_PASSES:
		c->passes_set = 1;
		if (cli_parse_long("run", "--passes", arg, 1, 100, &v))
			return 2;
		o->passes = (int)v;
		return 0;
	}
	return cli_usage_error("run", "internal: option %d", opt);
}

/* One option; 0, or the exit code (-1: --help printed, exit 0). */
static int run_opt(struct run_cli *c, int opt, int argc, char **argv)
{
	switch (opt) {
	case O_SUITE:
		if (!*optarg)
			return cli_usage_error("run", "--suite wants a list of suites");
		c->suite_spec = optarg;
		return 0;
	case O_LIST: c->list = 1; return 0;
	case O_SERVE: c->serve = 1; return 0;
	case O_DRY: c->dry = 1; return 0;
	case O_DESCRIBE: c->describe = optarg; return 0;
	case O_QUICK: c->o.quick = 1; c->quick_set = 1; return 0;
	case O_FILTER: c->filter = optarg; return 0;
	case O_LABEL: c->o.label = optarg; return 0;
	case O_THREADS: return opt_threads(c, optarg);
	case O_RANKS: return opt_ranks(c, optarg);
	case O_EVENTS: {
		snprintf(c->event_buf, sizeof c->event_buf, "%s", optarg);
		int n = split_list(c->event_buf, c->events, 32);
		if (n <= 0)
			return cli_usage_error("run", "--events wants a comma-separated list");
		c->o.events = c->events;
		c->o.nevents = n;
		return 0;
	}
	case O_NOPAPI: c->o.no_papi = 1; return 0;
	case O_CEIL: c->o.remeasure_ceilings = 1; return 0;
	case O_OUT:
		if (!*optarg)
			return cli_usage_error("run", "--out wants a folder");
		c->o.out_dir = optarg;
		return 0;
	case O_DATA: c->o.data_dir = optarg; return 0;
	case O_SLOW: return opt_slowdown(c, optarg);
	case O_HELP: run_help(); return -1;
	case ':': return cli_usage_error("run", "%s needs a value", argv[optind - 1]);
	case '?': return cli_bad_option("run", argc, argv);
	default: return opt_number(c, opt, optarg);
	}
}

static int run_parse(struct run_cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"suite", required_argument, 0, O_SUITE}, {"list", no_argument, 0, O_LIST},
		{"describe", required_argument, 0, O_DESCRIBE},
		{"quick", no_argument, 0, O_QUICK}, {"filter", required_argument, 0, O_FILTER},
		{"label", required_argument, 0, O_LABEL}, {"seed", required_argument, 0, O_SEED},
		{"threads", required_argument, 0, O_THREADS},
		{"events", required_argument, 0, O_EVENTS}, {"no-papi", no_argument, 0, O_NOPAPI},
		{"target-ci", required_argument, 0, O_TCI}, {"budget", required_argument, 0, O_BUDGET},
		{"min-reps", required_argument, 0, O_MINREPS},
		{"max-reps", required_argument, 0, O_MAXREPS}, {"ceilings", no_argument, 0, O_CEIL},
		{"out", required_argument, 0, O_OUT}, {"data-dir", required_argument, 0, O_DATA},
		{"inject-slowdown", required_argument, 0, O_SLOW},
		{"passes", required_argument, 0, O_PASSES},
		{"ranks", required_argument, 0, O_RANKS}, {"serve", no_argument, 0, O_SERVE},
		{"dry-run", no_argument, 0, O_DRY},
		{"help", no_argument, 0, O_HELP}, {0, 0, 0, 0},
	};
	int opt, rc;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":", opts, NULL)) != -1)
		if ((rc = run_opt(c, opt, argc, argv)))
			return rc;
	if (optind < argc)
		return cli_usage_error("run", "unexpected argument '%s'", argv[optind]);
	return 0;
}

/* A suite file's settings, where the command line gave none (the first file that sets
 * one wins). */
static void apply_suite_settings(struct run_cli *c, const struct ocb_suite_def *d)
{
	struct ocb_run_opts *o = &c->o;
	if (!o->label && d->label[0])
		o->label = d->label;
	if (!o->nthreads && d->nthreads) {
		memcpy(o->threads, d->threads, sizeof o->threads);
		o->nthreads = d->nthreads;
	}
	if (!c->quick_set && d->quick >= 0)
		o->quick = d->quick, c->quick_set = 1;
	if (!c->budget_set && d->budget_s >= 0)
		o->harness.budget_s = d->budget_s, c->budget_set = 1;
	if (!c->passes_set && d->passes > 0)
		o->passes = d->passes, c->passes_set = 1;
	if (!c->tci_set && d->target_ci > 0)
		o->harness.target_ci = d->target_ci, c->tci_set = 1;
	if (!c->minr_set && d->min_reps > 0)
		o->harness.min_reps = d->min_reps, c->minr_set = 1;
	if (!c->maxr_set && d->max_reps > 0)
		o->harness.max_reps = d->max_reps, c->maxr_set = 1;
}

/* Resolves --suite into defs (validated: benches, parameters) and the runner's lists. */
static int run_suites(struct run_cli *c, struct ocb_suite_def *defs, int *ndefs)
{
	if (ocb_suite_defs_resolve(c->suite_spec, defs, 16, ndefs) != OCB_OK)
		return cli_usage_error("run", "%s", ocb_lasterr());
	c->o.suite_spec = c->suite_spec;
	c->o.nsuites = *ndefs;
	for (int i = 0; i < *ndefs; i++) {
		c->o.suites[i] = defs[i].name;
		c->o.defs[i] = &defs[i];
		apply_suite_settings(c, &defs[i]);
	}
	return 0;
}

static void default_events(struct ocb_run_opts *o)
{
	static const char *defs[32];
	int n = 0;
	while (ocb_default_events[n] && n < 32) {
		defs[n] = ocb_default_events[n];
		n++;
	}
	o->events = defs;
	o->nevents = n;
}

/* Opens the store and runs; the exit code. */
static int run_store(const struct ocb_global *g, const struct ocb_run_opts *o)
{
	struct ocb_store *s = NULL;
	int rc = cli_open_store(g, "run", OCB_STORE_WRITE, &s);
	if (rc)
		return rc;
	struct sigaction sa = {0};
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	const char *as = ocb_cpu_as();
	if (as && !g->quiet) /* results of another CPU's kernel choices: say so */
		fprintf(stderr, "ocbench: warning: OCB_CPU_AS=%s: the kernels take that CPU's "
				"layouts and settings, not this one's\n", as);
	struct ocb_run_summary sum;
	int st = ocb_runner_run(s, o, &sum);
	ocb_store_close(s);
	if (st != OCB_OK)
		return cli_fail("run", st);
	if (!g->quiet)
		fprintf(stderr, "run %lld: %ld cases, %ld ok, %ld failed%s\n", (long long)sum.run_id,
			sum.cases, sum.ok, sum.failed, sum.interrupted ? ", interrupted" : "");
	if (sum.input_error) {
		fprintf(stderr, "ocbench: run: %s\n", sum.input_msg);
		return 2;
	}
	if (sum.interrupted)
		return 3;
	return sum.failed ? 3 : 0;
}

/* One rank of an MPI job: every rank runs the plan in order; rank 0 into the database,
 * the others into a private copy (cli/run_dist.c). */
static int run_rank(const struct ocb_global *g, struct ocb_run_opts *o)
{
	struct ocb_global gr = *g;
	char tmp[4400];
	int rank, st = run_dist_rank_setup(g->db_path, &rank, tmp, sizeof tmp);
	if (st)
		return cli_fail("run", st);
	o->passes = 1;
	o->keep_ceilings = 1; /* no rank re-measures flagged ceilings (every rank would) */
	/* one BLAS thread per rank unless --threads says otherwise: a rank stands for one
	 * accelerator, and mpirun binds a rank to one core (np <= 2) or runs more ranks than
	 * cores, where a second OpenBLAS thread per rank only spins against the other ranks
	 * (2 ranks x 2 threads on 2 cores made a step slower than 1 rank's, and the
	 * projection's per-core compute wrong) */
	if (!o->nthreads)
		o->default_threads = 1;
	if (rank) { /* rank 0 speaks for the job; the others' errors still reach stderr */
		gr.db_path = tmp;
		gr.quiet = 1;
		o->quiet = 1;
		ocb_log_quiet = 1; /* no second "run N (uuid)" header from a private copy */
		if (!freopen("/dev/null", "w", stdout))
			return cli_fail("run", OCB_EIO);
	}
	int rc = run_store(&gr, o);
	run_dist_rank_done(tmp);
	return rc;
}

int cmd_run(const struct ocb_global *g, int argc, char **argv)
{
	static struct run_cli c;
	struct ocb_suite_def defs[16];
	int ndefs = 0, rc;
	regex_t re;

	memset(&c, 0, sizeof c);
	ocb_harness_defaults(&c.o.harness);
	c.o.seed = 1;
	c.o.passes = 3;
	c.o.out_dir = "ocbench-out";
	c.o.default_threads = ocb_cpu_cores();
	c.o.cmdline = g->cmdline;
	c.o.quiet = g->quiet;
	c.o.json = g->json;
	c.suite_spec = "all";
	if ((rc = run_parse(&c, argc, argv)))
		return rc < 0 ? 0 : rc;
	if (c.list) {
		run_list_suites();
		return 0;
	}
	if (c.describe)
		return run_describe(c.describe);
	if ((rc = run_suites(&c, defs, &ndefs)))
		return rc;
	struct ocb_run_opts *o = &c.o;
	if (o->harness.min_reps > o->harness.max_reps)
		rc = cli_usage_error("run", "--min-reps is larger than --max-reps");
	struct stat dst;
	if (!rc && o->data_dir && stat(o->data_dir, &dst) != 0)
		rc = cli_usage_error("run", "--data-dir %s: no such file or folder", o->data_dir);
	if (!rc && c.filter) {
		if (regcomp(&re, c.filter, REG_EXTENDED | REG_NOSUB) != 0)
			rc = cli_usage_error("run", "--filter: '%s' is not a valid regular expression",
					     c.filter);
		else
			o->filter = &re;
	}
	if (o->quick && !c.budget_set)
		o->harness.budget_s = 0.3;
	if (!o->events)
		default_events(o);
	if (!rc && c.dry)
		rc = run_dry(o, g->json);
	else if (!rc && c.serve) {
		int st = ocb_serve(o, stdin, stdout);
		rc = st == OCB_OK ? 0 : cli_fail("run", st);
	} else if (!rc && run_dist_in_job())
		rc = run_rank(g, o);
	else if (!rc && c.nranks)
		rc = run_dist_launch(g, c.ranks, c.nranks, o->quick, argc, argv);
	else if (!rc)
		rc = run_store(g, o);
	if (o->filter)
		regfree(&re);
	for (int i = 0; i < ndefs; i++)
		ocb_suite_def_release(&defs[i]);
	return rc;
}
