/* runner: `ocbench run` — plans the cases of the chosen suites (bench x params x
 * threads), makes sure the machine and its ceilings are in the store, runs every case
 * under the harness and stores each result as soon as it is measured. */
#ifndef OCB_RUNNER_H
#define OCB_RUNNER_H

#include <regex.h>
#include <stdint.h>

#include "../db/store.h"
#include "harness.h"
#include "suite_def.h"

struct ocb_run_opts {
	const char *suites[16];   /* names; "all" expanded by the caller */
	const struct ocb_suite_def *defs[16]; /* what each of suites[] runs (suite_def.h) */
	int nsuites;
	const char *suite_spec;   /* as typed, stored in run.suite */
	const regex_t *filter;    /* matched against "suite/bench/params_json"; NULL = all */
	const char *label;        /* NULL */
	uint64_t seed;
	int quick;
	int threads[8];           /* explicit thread counts; nthreads == 0 -> a suite
				     entry's own, else defaults */
	int nthreads;
	int default_threads;      /* all cores */
	const char *const *events;
	int nevents;
	int no_papi;
	int remeasure_ceilings;   /* measure ceilings even when cached */
	int keep_ceilings;        /* use cached ceilings as they are, flagged ones too (the
				     ranks of an MPI job: none measures, `run --ranks` did) */
	const char *out_dir;      /* created if missing */
	const char *data_dir;     /* NULL: Debian package paths */
	const char *cmdline;
	int quiet, json;
	/* Interleaving (Google Benchmark's random interleaving): kernel cases run in
	 * `passes` passes (< 1 counts as 1), each in a fresh order shuffled from the seed and
	 * the pass number, each with budget_s / passes, min_reps / passes (>= 2) and
	 * max_reps / passes (both rounded up); their samples are merged into one result per
	 * case, stored after the last pass. Workloads run once, in the first pass. 1: every
	 * case once, in plan order, stored as it is measured. Either way a case runs after
	 * the cases producing what it consumes (struct ocb_bench .produces/.consumes). */
	int passes;
	struct ocb_harness_opts harness;
};

/* Result of a whole run, for the exit code. */
struct ocb_run_summary {
	int64_t run_id;
	long cases, ok, failed;
	int interrupted;
	/* The first case that failed on bad input (a malformed or truncated dataset, a bad
	 * parameter): its error, so that the command can exit 2 like any bad input. */
	int input_error;
	char input_msg[400];
};

/* One planned case: which bench, its params, at how many threads. */
struct ocb_planned {
	const struct ocb_bench *bench;
	const char *suite; /* result.suite: borrowed from the suite description */
	cJSON *params;     /* as listed: stored as params_json (borrowed from case_sets) */
	cJSON *full;       /* checked, defaults filled: what setup() and work() read */
	int threads;
};

/* Plans every case of o (suites, filter, threads; ctx gives quick for the benches' own
 * cases): returns a malloc'd array (*np entries); *case_sets holds the cJSON arrays the
 * params are borrowed from (caller deletes). Used by the runner and by collect/serve.h. */
int ocb_runner_plan(const struct ocb_run_opts *o, const struct ocb_ctx *ctx,
		    struct ocb_planned **out, size_t *np, cJSON **case_sets);

/* Runs everything. Returns OCB_OK when the run completed (even with failed cases:
 * see summary), or an error for what stopped it (store failure, unwritable out dir). */
int ocb_runner_run(struct ocb_store *s, const struct ocb_run_opts *o, struct ocb_run_summary *sum);

/* A request to stop after the current case (set from a signal handler). */
extern volatile int ocb_runner_stop;

#endif
