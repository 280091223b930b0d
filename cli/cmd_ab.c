/* ocbench ab BASE CAND: interleaved A/B comparison of two builds (see ab.h).
 * Exit 0: no case slower; 1: at least one case slower; 2: bad input; 3: failure. */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../collect/ceiling_llc.h"
#include "../collect/host.h"
#include "../common/ocb_error.h"
#include "../common/ocb_log.h"
#include "../common/ocb_time.h"
#include "../report/mde.h"
#include "ab.h"

volatile int ab_stop;

static void on_signal(int sig)
{
	(void)sig;
	ab_stop = 1;
}

static void help(void)
{
	printf("usage: ocbench ab BASE CAND [options]\n\n"
	       "Compares two builds of ocbench on this machine by running the same cases with\n"
	       "both, alternately, in a fresh random order over many short rounds (randomized\n"
	       "multiple interleaved trials, Abedi & Brecht, ICPE 2017): whatever the machine\n"
	       "does hits both sides alike. Per case, the per-round ratios CAND/BASE give the\n"
	       "median ratio with a bootstrap 95%% CI, a Wilcoxon signed-rank p-value, the\n"
	       "minimal detectable effect (MDE, at alpha and 80%% power) and a verdict:\n"
	       "  slower/faster  p < alpha, CI excludes 1, ratio beyond 1 +- threshold\n"
	       "  noise          p < alpha but a change smaller than the threshold\n"
	       "  same           p >= alpha; '(MDE > threshold)' when the comparison could not\n"
	       "                 have seen a change as small as the threshold\n"
	       "Drift canaries (FMA, L3 read, DRAM read, sgemm) run at the start, middle and end.\n\n"
	       "BASE and CAND are ocbench binaries or git revisions of the repository in the\n"
	       "current directory (built in temporary worktrees with make).\n\n"
	       "  --suite LIST        suites to run (default all)\n"
	       "  --filter REGEX      only cases whose 'suite/bench/params' match\n"
	       "  --rounds N          rounds (default %d, or from --target-mde)\n"
	       "  --target-mde X      choose the rounds from a pilot so that the MDE of 90%%\n"
	       "                      of the cases is <= X (e.g. 3%%)\n"
	       "  --max-rounds N      upper bound for --target-mde and --time-limit (default %d)\n"
	       "  --time-limit S      adaptive: after the rounds, keep adding rounds of the cases\n"
	       "                      leaning to a change the rank test does not yet show,\n"
	       "                      then of those still undecided (CI across 1 +- threshold,\n"
	       "                      or MDE above it) until S seconds in all or --max-rounds\n"
	       "  --stat min|median   per-round value of a case on a side: its fastest sample\n"
	       "                      (default; interference only adds time) or its median\n"
	       "  --threshold X       change that matters (default 2%%)\n"
	       "  --alpha A           significance level (default 0.01)\n"
	       "  --budget S          seconds per case per round and side (default 0.05)\n"
	       "  --min-reps N        `run` children: repetitions per case per round at least\n"
	       "                      (default 3); serving: samples per side per round at\n"
	       "                      least (ABAB, ceil(N/2) per request)\n"
	       "  --block N           without serving children: cases (suite/bench/params) per\n"
	       "                      child process (default 4); smaller puts the two sides\n"
	       "                      of a case closer in time\n"
	       "  --no-serve          one `run` child per block of cases even when both builds\n"
	       "                      can serve (run --serve: set up once, timed on request;\n"
	       "                      used by default, an older build falls back to this)\n"
	       "  --mem-cap GIB       serving: set-up cases held per side at a time (default a\n"
	       "                      quarter of MemAvailable); more are set up in groups\n"
	       "  --resetup N         serving: tear every case down and set it up anew every N\n"
	       "                      rounds (default 0: once), so that a difference between\n"
	       "                      the two processes' set-ups varies across rounds\n"
	       "  --respawn N         serving: start both children anew (and set every case\n"
	       "                      up again) every N rounds (default 1; 0 never), so that\n"
	       "                      what one process's set-up holds (data placement, huge\n"
	       "                      pages) varies across rounds instead of biasing them all;\n"
	       "                      a case set up again was checked at its first set-up\n"
	       "                      (same build, same inputs), so it skips the check and\n"
	       "                      warms up 20 ms\n"
	       "  --threads LIST      passed to run\n"
	       "  --seed N            seed of the inputs and of the round order (default 1)\n"
	       "  --inject-slowdown BENCH:FRACTION   CAND side only (testing ab itself)\n"
	       "  --quick             the children run --quick (small sizes; CI)\n"
	       "  --no-canaries       skip the drift canaries\n"
	       "  --keep              keep the temporary folder (scratch stores, logs)\n"
	       "  --json              machine-readable output\n\n"
	       "Exit status: 0 no case slower, 1 a case is slower, 2 bad input, 3 failure.\n",
	       OCB_AB_ROUNDS, OCB_AB_MAX_ROUNDS);
}

static int parse_num(int c, const char *arg, struct ab_opts *o)
{
	long v;
	switch (c) {
	case 'r':
		if (cli_parse_long("ab", "--rounds", arg, OCB_MDE_MIN_ROUNDS, 10000, &v))
			return 2;
		o->rounds = (size_t)v;
		return 0;
	case 'M':
		if (cli_parse_long("ab", "--max-rounds", arg, OCB_MDE_MIN_ROUNDS, 10000, &v))
			return 2;
		o->max_rounds = (size_t)v;
		return 0;
	case 'R':
		if (cli_parse_long("ab", "--resetup", arg, 0, 10000, &v))
			return 2;
		o->resetup = (size_t)v;
		return 0;
	case 'P':
		if (cli_parse_long("ab", "--respawn", arg, 0, 10000, &v))
			return 2;
		o->respawn = (size_t)v;
		return 0;
	case 'B':
		if (cli_parse_long("ab", "--block", arg, 1, 100000, &v))
			return 2;
		o->block = (size_t)v;
		return 0;
	case 'm':
		return cli_parse_long("ab", "--min-reps", arg, 1, 1000000, &o->min_reps);
	case 's':
		if (cli_parse_long("ab", "--seed", arg, 0, 0x7fffffffffffffffL, &v))
			return 2;
		o->seed = (uint64_t)v;
		return 0;
	case 'T':
		return cli_parse_double("ab", "--target-mde", arg, 1e-4, 1, &o->target_mde);
	case 't':
		return cli_parse_double("ab", "--threshold", arg, 0, 10, &o->stat.threshold);
	case 'a':
		return cli_parse_double("ab", "--alpha", arg, 1e-12, 0.5, &o->stat.alpha);
	case 'b':
		return cli_parse_double("ab", "--budget", arg, 0, 3600, &o->budget);
	case 'L':
		return cli_parse_double("ab", "--time-limit", arg, 1, 1e7, &o->time_limit);
	case 'G':
		if (cli_parse_double("ab", "--mem-cap", arg, 0.01, 1e6, &o->mem_cap))
			return 2;
		o->mem_cap *= 1024.0 * 1024.0 * 1024.0;
		return 0;
	}
	return 2;
}

static int parse(int argc, char **argv, struct ab_opts *o, int *json, int *done)
{
	static const struct option opts[] = {
		{"suite", required_argument, NULL, 'S'}, {"filter", required_argument, NULL, 'f'},
		{"rounds", required_argument, NULL, 'r'}, {"target-mde", required_argument, NULL, 'T'},
		{"max-rounds", required_argument, NULL, 'M'},
		{"threshold", required_argument, NULL, 't'}, {"alpha", required_argument, NULL, 'a'},
		{"budget", required_argument, NULL, 'b'}, {"min-reps", required_argument, NULL, 'm'},
		{"block", required_argument, NULL, 'B'}, {"threads", required_argument, NULL, 'n'},
		{"seed", required_argument, NULL, 's'}, {"time-limit", required_argument, NULL, 'L'},
		{"stat", required_argument, NULL, 'x'}, {"mem-cap", required_argument, NULL, 'G'},
		{"no-serve", no_argument, NULL, 'N'}, {"resetup", required_argument, NULL, 'R'},
		{"respawn", required_argument, NULL, 'P'},
		{"inject-slowdown", required_argument, NULL, 'i'},
		{"no-canaries", no_argument, NULL, 'C'}, {"keep", no_argument, NULL, 'k'},
		{"quick", no_argument, NULL, 'q'},
		{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'S': o->suite = optarg; break;
		case 'f': o->filter = optarg; break;
		case 'n': o->threads = optarg; break;
		case 'i':
			if (!strchr(optarg, ':'))
				return cli_usage_error("ab", "--inject-slowdown wants BENCH:FRACTION");
			o->inject = optarg;
			break;
		case 'x':
			if (strcmp(optarg, "min") && strcmp(optarg, "median"))
				return cli_usage_error("ab", "--stat wants min or median");
			o->use_median = strcmp(optarg, "median") == 0;
			break;
		case 'C': o->no_canaries = 1; break;
		case 'N': o->no_serve = 1; break;
		case 'k': o->keep = 1; break;
		case 'q': o->quick = 1; break;
		case 'j': *json = 1; break;
		case 'h': help(); *done = 1; return 0;
		case '?': case ':': return cli_bad_option("ab", argc, argv);
		default:
			if (parse_num(c, optarg, o))
				return 2;
		}
	}
	if (argc - optind != 2)
		return cli_usage_error("ab", "wants BASE and CAND (see 'ocbench ab --help')");
	o->spec[0] = argv[optind];
	o->spec[1] = argv[optind + 1];
	return 0;
}

static void defaults(struct ab_opts *o)
{
	memset(o, 0, sizeof *o);
	ocb_ab_defaults(&o->stat);
	o->max_rounds = OCB_AB_MAX_ROUNDS;
	o->block = 4;
	o->budget = 0.05;
	o->min_reps = 3;
	o->seed = 1;
	o->respawn = 1;
}

/* Temporary folder, both sides' binaries and scratch stores. */
static int prepare(struct ab *a, const struct ocb_global *g)
{
	struct ocb_ceiling *ceil = NULL;
	size_t nceil = 0;
	int rc;
	const char *t = getenv("TMPDIR");
	snprintf(a->tmp, sizeof a->tmp, "%s/ocbench-ab.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(a->tmp))
		return ocb_seterr(OCB_EPERM, "%s: cannot create the temporary folder", a->tmp);
	snprintf(a->log, sizeof a->log, "%s/children.log", a->tmp);
	for (int side = 0; side < 2; side++) {
		const char *name = side ? "cand" : "base";
		if ((rc = ab_side_resolve(a->o.spec[side], a->tmp, name, &a->side[side])))
			goto out;
		snprintf(a->db[side], sizeof a->db[side], "%s/%s.db", a->tmp, name);
		snprintf(a->out[side], sizeof a->out[side], "%s/%s-out", a->tmp, name);
	}
	if ((rc = ab_user_ceilings(g->db_path, a->o.quick, &ceil, &nceil)))
		goto out;
	struct ocb_machine host;
	ocb_host_probe(&host);
	ocb_machine_use_llc(&host, ceil, nceil);
	a->llc_bytes = host.llc_bytes; /* sizes the canaries */
	for (int side = 0; side < 2 && rc == OCB_OK; side++)
		rc = ab_scratch_seed(a->db[side], ceil, nceil);
out:
	free(ceil);
	return rc;
}

static void start_canaries(struct ab *a)
{
	if (a->o.no_canaries)
		return;
	for (int p = 0; p < OCB_CANARY_NPOINT; p++)
		for (int k = 0; k < OCB_CANARY_N; k++)
			a->canary[p][k] = NAN;
	a->have_canary = 1;
	ab_canary_point(a, OCB_CANARY_START);
}

/* Discovery, then the rounds (planned from a pilot when --target-mde). */
static int measure(struct ab *a)
{
	int rc = ab_serve_start(a);
	if (rc == OCB_OK && !a->serve)
		rc = ab_discover(a);
	if (rc != OCB_OK)
		return rc;
	ocb_info("ab: %zu cases on both sides", a->n);
	size_t total = a->o.rounds ? a->o.rounds : OCB_AB_ROUNDS;
	if (a->o.target_mde > 0 && !a->o.rounds) {
		size_t pilot = ocb_mde_min_rounds(a->o.stat.alpha) + 2;
		if ((rc = ab_rounds(a, pilot, a->o.seed, SIZE_MAX, NULL, 0)) != OCB_OK)
			return rc;
		total = ab_plan_rounds(a);
		if (a->rounds >= total / 2)
			ab_canary_point(a, OCB_CANARY_MID);
	}
	if (total > a->rounds)
		rc = ab_rounds(a, total - a->rounds, a->o.seed + 0x9e3779b97f4a7c15ULL, total / 2,
			       NULL, 0);
	if (rc == OCB_OK && a->o.time_limit > 0)
		rc = ab_adaptive(a, a->o.seed * 0x9e3779b97f4a7c15ULL + 7);
	ab_canary_point(a, OCB_CANARY_END);
	return rc;
}

int cmd_ab(const struct ocb_global *g, int argc, char **argv)
{
	struct ab a;
	int json = g->json, done = 0, rc;
	memset(&a, 0, sizeof a);
	defaults(&a.o);
	if ((rc = parse(argc, argv, &a.o, &json, &done)) || done)
		return rc;
	a.o.stat.seed = a.o.seed;
	a.cap_rounds = a.o.rounds ? a.o.rounds : a.o.target_mde > 0 ? a.o.max_rounds + 16
								: OCB_AB_ROUNDS;
	if (a.o.time_limit > 0 && a.cap_rounds < a.o.max_rounds)
		a.cap_rounds = a.o.max_rounds;
	/* the children's runs skip their own canaries: ab measures them itself, around
	 * the rounds (collect/canary_run.h) */
	setenv("OCBENCH_NO_CANARIES", "1", 1);
	/* and both sides run the GEMV's default setting, not one each side's planner picked
	 * by a few timings in its own moment (kernels/qgemv_plan.h): a different pick would
	 * be a difference between the sides that no commit made. OCB_QGEMV_PLAN=1 asks for
	 * the planners. */
	setenv("OCB_QGEMV_PLAN", "0", 0);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN); /* a serving child that dies is an EIO, not our death */
	a.wall_s = ocb_now_s();
	if ((rc = prepare(&a, g)) == OCB_OK) {
		start_canaries(&a);
		rc = measure(&a);
	}
	if (a.serve)
		ab_serve_finish(&a);
	a.wall_s = ocb_now_s() - a.wall_s;
	int slower = 0, print_ec = 0;
	if (rc == OCB_OK) {
		for (size_t i = 0; i < a.n && rc == OCB_OK; i++) {
			rc = ocb_ab_eval(a.c[i].med[0], a.c[i].med[1], a.rounds, &a.o.stat, &a.c[i].st);
			slower |= a.c[i].st.verdict == OCB_V_SLOWER;
		}
	}
	a.cmdline = g->cmdline;
	if (rc == OCB_OK)
		rc = ab_store(&a, g->db_path);
	if (rc == OCB_OK)
		print_ec = ab_print(&a, json);
	if (a.failed_steps)
		ocb_info("ab: %zu of %zu child runs had a failed case (see %s)", a.failed_steps,
			 a.steps, a.log);
	ab_release(&a);
	if (a.o.keep)
		ocb_info("ab: kept %s", a.tmp);
	else if (a.tmp[0]) {
		char cmd[PATH_MAX + 32];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", a.tmp); /* ours, from mkdtemp */
		if (system(cmd) != 0)
			ocb_info("ab: could not remove %s", a.tmp);
	}
	if (rc != OCB_OK)
		return cli_fail("ab", rc);
	return print_ec ? print_ec : slower ? 1 : 0;
}
