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
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "cli.h"

static void run_help(void)
{
	printf("usage: ocbench run [options]\n\n"
	       "Runs benchmark suites and stores every sample, statistic, counter and metric.\n\n"
	       "  --suite LIST       comma-separated suites, or 'all' (default: all)\n"
	       "  --list             list the suites and their benchmarks, then exit\n"
	       "  --quick            small sizes and budgets (CI)\n"
	       "  --filter REGEX     run only cases whose 'suite/bench/params' matches\n"
	       "  --label TEXT       a label for the run (compare and report can name it)\n"
	       "  --seed N           seed of every random choice (default 1)\n"
	       "  --threads LIST     thread counts, e.g. 1,2 (default: all cores; kernels\n"
	       "                     that sweep run at 1 and all)\n"
	       "  --events LIST      PAPI events to record (default: see 'ocbench events')\n"
	       "  --no-papi          no counters: timing-only results\n"
	       "  --target-ci P      stop repeating when the median's 95%% CI is within P\n"
	       "                     (default 2%%)\n"
	       "  --budget S         seconds of repetitions per case (default 2, quick 0.3)\n"
	       "  --min-reps N       at least N repetitions (default 5)\n"
	       "  --max-reps N       at most N repetitions (default 1000)\n"
	       "  --passes N         interleave: run the kernel cases N times over, each pass\n"
	       "                     in its own shuffled order (from --seed) with 1/N of the\n"
	       "                     budget, min and max reps, and merge each case's samples\n"
	       "                     into one result, so that a burst of host noise is spread\n"
	       "                     over all cases (default 3; 1: each case once, in order).\n"
	       "                     Workloads run once; results are stored after the last pass.\n"
	       "  --ceilings         re-measure the machine's ceilings even if cached\n"
	       "  --out DIR          run artifacts: MLLOG files, checkpoints (default ocbench-out)\n"
	       "  --data-dir DIR     datasets instead of the Debian package paths\n"
	       "  --inject-slowdown BENCH:FRACTION\n"
	       "                     testing 'compare': BENCH's timed region takes FRACTION\n"
	       "                     (e.g. 0.1) longer; recorded in the run's config\n\n"
	       "Exit: 0 all cases ok; 2 bad usage or bad input (e.g. a truncated dataset);\n"
	       "3 a case failed or the run broke.\n");
}

static void list_suites(void)
{
	for (size_t i = 0; i < ocb_nsuites; i++) {
		const struct ocb_suite *s = ocb_suites[i];
		printf("%s: %s\n", s->name, s->doc ? s->doc : "");
		for (size_t b = 0; b < s->nbenches; b++)
			printf("  %-24s %s %s\n", s->benches[b]->name,
			       s->benches[b]->kind == OCB_WORKLOAD ? "[workload]" : "[kernel]  ",
			       s->benches[b]->doc ? s->benches[b]->doc : "");
	}
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

int cmd_run(const struct ocb_global *g, int argc, char **argv)
{
	enum { O_SUITE = 256, O_LIST, O_QUICK, O_FILTER, O_LABEL, O_SEED, O_THREADS, O_EVENTS,
	       O_NOPAPI, O_TCI, O_BUDGET, O_MINREPS, O_MAXREPS, O_CEIL, O_OUT, O_DATA, O_SLOW,
	       O_PASSES, O_HELP };
	static const struct option opts[] = {
		{"suite", required_argument, 0, O_SUITE}, {"list", no_argument, 0, O_LIST},
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
		{"help", no_argument, 0, O_HELP}, {0, 0, 0, 0},
	};
	struct ocb_run_opts o = {0};
	static char suite_buf[512], thread_buf[128], event_buf[1024];
	static const char *events[32];
	const char *thread_words[8];
	const char *filter = NULL;
	regex_t re;
	int have_re = 0, list = 0, budget_set = 0, rc, c;
	long v;
	double d;

	ocb_harness_defaults(&o.harness);
	o.seed = 1;
	o.passes = 3;
	o.out_dir = "ocbench-out";
	o.default_threads = ocb_cpu_cores();
	o.cmdline = g->cmdline;
	o.quiet = g->quiet;
	o.json = g->json;
	snprintf(suite_buf, sizeof suite_buf, "all");
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case O_SUITE:
			if (!*optarg || strlen(optarg) >= sizeof suite_buf)
				return cli_usage_error("run", "--suite wants a list of suites");
			snprintf(suite_buf, sizeof suite_buf, "%s", optarg);
			break;
		case O_LIST: list = 1; break;
		case O_QUICK: o.quick = 1; break;
		case O_FILTER: filter = optarg; break;
		case O_LABEL: o.label = optarg; break;
		case O_SEED:
			if (cli_parse_long("run", "--seed", optarg, 0, 0x7fffffffffffffffL, &v))
				return 2;
			o.seed = (uint64_t)v;
			break;
		case O_THREADS: {
			snprintf(thread_buf, sizeof thread_buf, "%s", optarg);
			int n = split_list(thread_buf, thread_words, 8);
			if (n <= 0)
				return cli_usage_error("run", "--threads wants a list like 1,2");
			for (int i = 0; i < n; i++) {
				if (cli_parse_long("run", "--threads", thread_words[i], 1, 1024, &v))
					return 2;
				o.threads[i] = (int)v;
			}
			o.nthreads = n;
			break;
		}
		case O_EVENTS: {
			snprintf(event_buf, sizeof event_buf, "%s", optarg);
			int n = split_list(event_buf, events, 32);
			if (n <= 0)
				return cli_usage_error("run", "--events wants a comma-separated list");
			o.events = events;
			o.nevents = n;
			break;
		}
		case O_NOPAPI: o.no_papi = 1; break;
		case O_TCI:
			if (cli_parse_double("run", "--target-ci", optarg, 1e-4, 1.0, &d))
				return 2;
			o.harness.target_ci = d;
			break;
		case O_BUDGET:
			if (cli_parse_double("run", "--budget", optarg, 0.0, 86400.0, &d))
				return 2;
			o.harness.budget_s = d;
			budget_set = 1;
			break;
		case O_MINREPS:
			if (cli_parse_long("run", "--min-reps", optarg, 1, 1000000, &v))
				return 2;
			o.harness.min_reps = v;
			break;
		case O_MAXREPS:
			if (cli_parse_long("run", "--max-reps", optarg, 1, 10000000, &v))
				return 2;
			o.harness.max_reps = v;
			break;
		case O_PASSES:
			if (cli_parse_long("run", "--passes", optarg, 1, 100, &v))
				return 2;
			o.passes = (int)v;
			break;
		case O_CEIL: o.remeasure_ceilings = 1; break;
		case O_OUT:
			if (!*optarg)
				return cli_usage_error("run", "--out wants a folder");
			o.out_dir = optarg;
			break;
		case O_DATA: o.data_dir = optarg; break;
		case O_SLOW: {
			static char slow_buf[128];
			char *colon = strrchr(optarg, ':');
			if (!colon || colon == optarg || strlen(optarg) >= sizeof slow_buf)
				return cli_usage_error("run", "--inject-slowdown wants BENCH:FRACTION");
			if (cli_parse_double("run", "--inject-slowdown", colon + 1, 0.0, 10.0, &d))
				return 2;
			snprintf(slow_buf, sizeof slow_buf, "%.*s", (int)(colon - optarg), optarg);
			o.harness.slow_bench = slow_buf;
			o.harness.slow_frac = d;
			break;
		}
		case O_HELP: run_help(); return 0;
		case ':': return cli_usage_error("run", "%s needs a value", argv[optind - 1]);
		default: return cli_bad_option("run", argc, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("run", "unexpected argument '%s'", argv[optind]);
	if (list) {
		list_suites();
		return 0;
	}
	if (o.harness.min_reps > o.harness.max_reps)
		return cli_usage_error("run", "--min-reps is larger than --max-reps");
	if (o.quick && !budget_set)
		o.harness.budget_s = 0.3;
	if (!o.events) {
		static const char *defs[32];
		int n = 0;
		while (ocb_default_events[n] && n < 32) {
			defs[n] = ocb_default_events[n];
			n++;
		}
		o.events = defs;
		o.nevents = n;
	}

	/* Suites: validate every name before touching the database. */
	static char spec_copy[512];
	snprintf(spec_copy, sizeof spec_copy, "%s", suite_buf);
	o.suite_spec = spec_copy;
	if (strcmp(suite_buf, "all") == 0) {
		for (size_t i = 0; i < ocb_nsuites && i < 16; i++)
			o.suites[o.nsuites++] = ocb_suites[i]->name;
	} else {
		int n = split_list(suite_buf, o.suites, 16);
		if (n <= 0)
			return cli_usage_error("run", "--suite wants a list of suites");
		o.nsuites = n;
		for (int i = 0; i < n; i++)
			if (!ocb_suite_find(o.suites[i]))
				return cli_usage_error("run", "no suite '%s' (see 'ocbench run --list')",
						       o.suites[i]);
	}
	struct stat dst;
	if (o.data_dir && stat(o.data_dir, &dst) != 0)
		return cli_usage_error("run", "--data-dir %s: no such file or folder", o.data_dir);
	if (filter) {
		if (regcomp(&re, filter, REG_EXTENDED | REG_NOSUB) != 0)
			return cli_usage_error("run", "--filter: '%s' is not a valid regular expression",
					       filter);
		have_re = 1;
		o.filter = &re;
	}

	struct ocb_store *s = NULL;
	rc = cli_open_store(g, "run", OCB_STORE_WRITE, &s);
	if (rc) {
		if (have_re)
			regfree(&re);
		return rc;
	}
	struct sigaction sa = {0};
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct ocb_run_summary sum;
	int st = ocb_runner_run(s, &o, &sum);
	ocb_store_close(s);
	if (have_re)
		regfree(&re);
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
