/* ab: `ocbench ab BASE CAND`, the interleaved A/B comparison of two builds (issue 16).
 * cmd_ab.c parses options and runs the steps below in order; ab_exec.c drives the
 * children (discovery, rounds, canaries); ab_print.c writes the verdicts.
 *
 * Flow: resolve both sides into binaries (ab_side.h), seed their scratch stores with
 * the machine's ceilings, measure the drift canaries (start), start both builds as
 * serving children (ab_serve.c: each case set up once, timed on request) or, when a
 * build cannot serve, run one discovery round of each side with `run` children (the
 * cases both produce; also a warm-up: not counted), then rounds planned
 * by collect/ab_plan (randomized interleaved trials); with --target-mde a pilot of
 * ocb_mde_min_rounds(alpha) + 2 rounds first chooses how many. Canaries again at the
 * middle and the end. Each case's verdict: report/ab_verdict.h. */
#ifndef OCB_AB_H
#define OCB_AB_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "../collect/ab_child.h"
#include "../collect/canary.h"
#include "../report/ab_verdict.h"
#include "ab_side.h"
#include "cli.h"

struct ab_opts {
	const char *spec[2];       /* BASE, CAND as typed */
	const char *suite, *filter, *threads, *inject;
	size_t rounds;             /* 0: from --target-mde, else OCB_AB_ROUNDS */
	double target_mde;         /* 0: none */
	size_t max_rounds, block;
	double budget;
	long min_reps;
	uint64_t seed;
	int keep, no_canaries, quick; /* quick: children run --quick (small sizes) */
	int no_serve;              /* 1: one `run` child per block even if both builds serve */
	double mem_cap;            /* bytes a serving child may hold set up; 0: MemAvailable/4 */
	size_t resetup;            /* serving: set every case up anew every N rounds (0 never) */
	size_t respawn;            /* serving: restart both children every N rounds (0 never) */
	int use_median;            /* per-round statistic: 0 the fastest sample (min_s), 1
				      the median (median_s; also where a build has no min_s) */
	double time_limit;         /* s; > 0: adaptive rounds for undecided cases until then */
	struct ocb_ab_opts stat;
};

#define OCB_AB_ROUNDS 12       /* rounds when neither --rounds nor --target-mde */
#define OCB_AB_MAX_ROUNDS 40

/* One case: a result key both sides produce, and its per-round medians (s). */
struct ab_case {
	char *key;                 /* "suite/bench/params|variant|threads" */
	size_t unit;               /* index into ab.units */
	double *med[2];            /* [side][round], NaN until measured */
	struct ocb_ab_stats st;
	/* serve mode (ab_serve.c): each side's case id, bytes held while set up (RSS
	 * growth at its set-up), whether set up now, whether that side's build set it up
	 * and checked it before in this run; the longest sample of both sides (s) */
	long id[2];
	double foot[2], sample_s;
	int held[2], checked[2], failed;
};

struct ab {
	struct ab_opts o;
	char tmp[PATH_MAX];
	struct ab_side side[2];
	char db[2][PATH_MAX + 16], out[2][PATH_MAX + 16], log[PATH_MAX + 16];
	char **units;              /* "suite/bench/params" of the cases, for --filter */
	size_t nunits;
	struct ab_case *c;
	size_t n, cap_rounds, rounds; /* rounds measured so far */
	double canary[OCB_CANARY_NPOINT][OCB_CANARY_N];
	int have_canary;
	struct ocb_canaries can;
	int64_t llc_bytes;         /* measured last-level capacity (0: the reported L3) */
	double wall_s;
	size_t extra_rounds;       /* adaptive rounds run (ab_adaptive: a subset of units) */
	size_t steps, failed_steps;
	const char *cmdline;       /* the whole command line, stored with the runs */
	int64_t run_id[2];         /* the stored pair (ab_store), 0 until stored */
	int serve;                 /* 1: long-lived children (ab_serve.c), 0: `run` per block */
	struct ocb_ab_proc proc[2];
	double mem_cap, held[2], rss[2]; /* bytes: the cap, held set up, each child's RSS */
	size_t setups;             /* set-ups done by the serving children (both sides) */
	size_t setups_again;       /* of which `setup ID again` (no check, short warm-up) */
	int no_again[2];           /* the side's build refused `setup ID again` (older) */
	size_t respawns, since_spawn; /* restarts of the pair; rounds served since the last */
};

/* Set by SIGINT/SIGTERM: stop after the current round. */
extern volatile int ab_stop;

/* ab_exec.c. Each returns OCB_OK or a status with ocb_lasterr() set. */
/* The arguments both kinds of child take from the options (--quick, --threads, and
 * --inject-slowdown on CAND) appended at argv[k]; returns the new k (at most 5 more). */
int ab_argv_common(const struct ab *a, int side, char **argv, int k);
int ab_discover(struct ab *a);
/* Runs rounds [a->rounds, a->rounds + n) (plan seeded from seed) of the units sub[0..nsub)
 * (indices into a->units; sub NULL: all of them); measures the middle canary when round
 * `mid` completes (mid == SIZE_MAX: never). */
int ab_rounds(struct ab *a, size_t n, uint64_t seed, size_t mid, const size_t *sub,
	      size_t nsub);
/* Adaptive rounds (--time-limit): while time is left and rounds < max_rounds, one more
 * round of the units whose cases lean (ocb_ab_leaning), or when none leans, of those
 * whose cases are undecided (ocb_ab_undecided), padded to a quarter of the units.
 * Returns OCB_OK. */
int ab_adaptive(struct ab *a, uint64_t seed);
/* From the rounds so far: the rounds needed for the target MDE (90th percentile over the
 * cases), clamped to [a->rounds, max_rounds]. */
size_t ab_plan_rounds(struct ab *a);
void ab_canary_point(struct ab *a, int point);
void ab_release(struct ab *a);

/* ab_serve.c: the long-lived children (collect/serve.h). ab_serve_start starts both and
 * lists the cases both plan (a->serve = 1), or, when either build has no --serve (an
 * older revision) or --no-serve, leaves a->serve = 0 with nothing started: then
 * ab_discover and the `run` children. ab_serve_rounds is ab_rounds for serve mode:
 * cases set up once in groups that fit a->mem_cap per side, all n rounds of a group in
 * turn, each case ABAB (or AB when a sample is longer than half the budget) with a
 * random first side. ab_serve_stop ends both children. */
int ab_serve_start(struct ab *a);
/* The serving children's environment, set in this process before they start: both
 * children live at once, and OpenBLAS's idle workers spin (sched_yield) for about
 * 2^28 cycles (~0.1 s) after each BLAS call before they sleep; so the side that
 * answered last kept a core busy while the other side ran, and a 2-thread OpenBLAS
 * case read 2x on both sides in 5 of 12 rounds (quiet, 2 vCPU). OPENBLAS_THREAD_TIMEOUT=4
 * (2^4 cycles, OpenBLAS's minimum) puts them to sleep at once: 0 of 12. A value the
 * user set is kept. */
void ab_child_env(void);
int ab_serve_rounds(struct ab *a, size_t n, uint64_t seed, size_t mid, const size_t *sub,
		    size_t nsub);
void ab_serve_stop(struct ab *a);
/* Stops the children and drops the cases never set up on both sides. */
void ab_serve_finish(struct ab *a);

/* ab_store.c: the rounds as two runs linked as a pair in the store at db_path. */
int ab_store(struct ab *a, const char *db_path);

/* ab_print.c */
/* 0, or the exit code of a failed JSON write (its one error line printed) */
int ab_print(const struct ab *a, int json);

#endif
