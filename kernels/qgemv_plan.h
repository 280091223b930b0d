/* qgemv_plan: the r16 GEMV's settings chosen by timing them on the machine at hand, once,
 * when a weight matrix is loaded (the way FFTW's planner times its candidate algorithms:
 * Frigo and Johnson, "The Design and Implementation of FFTW3", Proc. IEEE 93(2), 2005).
 *
 * Why: how many groups a thread should read side by side, and how far ahead to prefetch,
 * is not a property of the CPU model alone. On instances of the same Zen 5 VM the best
 * setting for Q4_0 at 16384^2 was 8 streams with 1 KiB ahead on one day (first in seven
 * of eight interleaved rounds) and 2 streams without prefetch on another (91-97% of the
 * read loop against 72-78%, every round): the host behind the VM decides. A fixed
 * per-CPU default is right on one and 15-25 points short on the other.
 *
 * A plan is made per (format, m, k, threads) of the r16 kernels, kept for the life of
 * the process, and used by every later qgemv_r8 call of that shape (the harness's
 * rotation copies of a matrix share it). It never changes during a measurement: the
 * harness plans in a case's first set-up, timed apart (as the repacking is), later passes
 * keep that plan, and all the case's repetitions run the chosen setting. The
 * environment's explicit settings (OCB_QGEMV_STREAMS, OCB_QGEMV_PF, OCB_QGEMV_PF_L2) win
 * over plans: with any of them set, nothing is timed and plans are not consulted.
 * OCB_QGEMV_PLAN=0 makes qgemv_plan time nothing (the CPU's default setting stays). */
#ifndef OCB_QGEMV_PLAN_H
#define OCB_QGEMV_PLAN_H

#include <stdint.h>

#include "../common/ocb_cpu.h"
#include "quant_formats.h"
#include "quant_repack.h"

#define QGEMV_PLAN_SETTINGS 6 /* candidate settings per format, at most */
/* timed settings per plan, at most: at 2+ threads each candidate also on one thread */
#define QGEMV_PLAN_MAX (2 * QGEMV_PLAN_SETTINGS)

struct qgemv_plan_info {
	int ncand;			   /* settings timed (0: nothing to plan, see why) */
	int chosen;			   /* index of the one kept; 0 is the CPU's default */
	struct qgemv_setting cand[QGEMV_PLAN_MAX];
	double median_s[QGEMV_PLAN_MAX];   /* each one's median GEMV time over the rounds */
	int rounds;			   /* rounds of every setting, in rotating order */
	double seconds;			   /* the planning's own wall time */
	const char *why;		   /* ncand == 0: not the r16 kernels, the environment */
	struct qgemv_setting setting;	   /* what qgemv_r8 now runs for this shape */
};

/* Candidate settings for a format's r16 kernels on a CPU, the CPU's default first
 * (qr_default_streams, qr_default_prefetch); returns how many (<= QGEMV_PLAN_SETTINGS). Pure:
 * tests feed it CPUs we do not have. */
int qgemv_plan_candidates(enum qformat_type type, const struct ocb_cpu_id *cpu,
			  struct qgemv_setting *out);

/* The setting timed i-th (0 <= i < n) in round `round` of a plan over n settings whose
 * first nteam run on the whole team (the rest on one thread): the team's settings in
 * turn, then the others, each group rotated by the round (nteam = n: one group). Pure. */
int qgemv_plan_order(int n, int nteam, int round, int i);

/* Index of the fastest of n settings from their timings t[r * n + j] (round r, setting
 * j), by median over the rounds (at most the first 41), among the default (j = 0) and the
 * settings that ran faster than the default in at least 4 of every 5 rounds (paired by
 * round); a tie goes to the lower index. median_s[j]: every setting's median. Pure. */
int qgemv_plan_pick(const double *t, int n, int rounds, double *median_s);

/* How the timings should see the caches: as the measurements that follow will. A GEMV
 * timed right after another over the same weights finds part of them in the last-level
 * cache; the harness times each repetition on the next of its rotation copies, and
 * quant_gemv_bw after streaming an eviction buffer. */
struct qgemv_plan_opts {
	const void *const *copies; /* ncopies repacked copies of the weights, used in turn */
	int ncopies;		   /* 0: the wr argument alone */
	void (*before)(void *arg); /* if set: called, untimed, before every timed GEMV */
	void *arg;
};

/* Time f's candidate settings on the repacked weights wr (m x k, qrepack_pack'ed; or the
 * copies of opts, which may be NULL) with activations xq into y (m floats, overwritten),
 * on `threads` threads, in rotating rounds (at least 5, more while under 0.2 s), and
 * remember the one qgemv_plan_pick keeps for this shape; info (may be NULL) says what was
 * timed and kept.
 * Where f does not run the r16 kernels, or the environment sets them, nothing is timed
 * (info->ncand = 0) and OCB_OK is returned. Errors as qgemv_r8. */
int qgemv_plan(const struct qformat *f, const void *wr, int64_t m, int64_t k, const void *xq,
	       float *y, int threads, const struct qgemv_plan_opts *opts,
	       struct qgemv_plan_info *info);

/* 1 and *set if f runs the r16 kernels now and a plan for it at this shape and thread
 * count (threads <= 0: OpenMP's default, as qgemv_r8 reads it) is in force; 0 if none or
 * if the environment's settings override plans. */
int qgemv_plan_find(const struct qformat *f, int64_t m, int64_t k, int threads,
		    struct qgemv_setting *set);

/* The median time (s) of one GEMV in the setting that plan keeps, over its planning
 * rounds: a measurement of the same kernel on the same data that the caller's later
 * timings can be held against; 0 where qgemv_plan_find finds no plan. */
double qgemv_plan_median(const struct qformat *f, int64_t m, int64_t k, int threads);

/* qgemv_plan_find for a caller that has kind = qgemv_choose(f) already (qgemv_r8, once
 * per call). */
int qgemv_plan_find_kind(const struct qformat *f, enum qgemv_kind kind, int64_t m, int64_t k,
			 int threads, struct qgemv_setting *set);

/* Forget every plan (tests). */
void qgemv_plan_forget(void);

/* The variant name of a setting's kernel for f ("avx512vnni-r16x2"), as qgemv_variant
 * names the default's. */
const char *qgemv_plan_variant(const struct qformat *f, const struct qgemv_setting *set);

#endif
