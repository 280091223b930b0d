/* ceilings_measure: measures the ceilings (REFERENCE.md §3 and §6) as the best of
 * interleaved trials, checks them against collect/ceiling_rules, re-measures what fails
 * and flags what still fails.
 *
 * One round runs one trial of every family in turn: FMA peak, int8 peak, the bandwidth
 * sweep (every size, read and triad), the independent STREAM triad, OpenBLAS sgemm;
 * each with 1 thread, then all threads. The next round starts over, so the trials of a
 * ceiling are spread over the whole measurement (a disturbance of a few seconds spoils
 * one trial of each, not every trial of one) and their spread says how steady the
 * machine was. A ceiling is the best trial (an attained rate cannot be too high); its
 * spread is (best - worst) / best over the rounds.
 *
 * Multi-threaded kernels run through ocb_team_run: one pinned thread per core, each
 * timing itself, so each ceiling records every thread's own rate (in its method) and
 * the rules can see one slow thread. Bandwidth: an ERT-style sweep (Empirical Roofline
 * Tool, Lo et al., "Roofline model toolkit", PMBS 2014) over working sets from 16 KiB
 * upward, each size repeated until a timing lasts a few ms (best of two timings per
 * trial); the plateau of each level is taken inside its size band (ocb_ceilings_bands).
 * Read (sum) gives 'bw_l1' .. 'bw_dram', STREAM triad 'bw_l1_triad' .. 'bw_dram_triad'.
 * OpenBLAS sgemm runs last in a round, followed by a pause: its pthreads spin for a
 * while after each call and would steal a core from the next round's kernels. */
#include "ceilings.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_log.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_time.h"
#include "../kernels/peak_fma.h"
#include "../kernels/peak_int8.h"
#include "../kernels/stream.h"
#include "ceiling_llc.h"
#include "ceiling_team.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)
#define MAX_TRIALS 8
#define SHOW 8                  /* per-thread rates written into a ceiling's method */
#define SGEMM_PAUSE_US 250000   /* > OpenBLAS's default spin (2^28 cycles ~ 0.1 s) */
#define NLEVEL 4

static const char *const level_name[NLEVEL] = {"l1", "l2", "l3", "dram"};

/* One timed trial: the aggregate rate and each thread's own (first SHOW of them). */
struct tstat {
	double v;        /* aggregate rate in the ceiling's unit */
	double bal;      /* slowest / fastest thread; NaN with one thread or none known */
	double share;    /* least CPU time / wall time of a thread (1: had its core) */
	int nt;
	double rate[SHOW];
	int cpu[SHOW];
};

/* The trials of one ceiling. */
struct series {
	char kind[32];
	int threads;
	const char *unit;
	char how[200];   /* the method text without the trials and per-thread part */
	int n;
	struct tstat tr[MAX_TRIALS];
};

/* The trials a ceiling is made of: those whose threads had their cores (share >=
 * share_min) when there are at least trials_min of them, else all; *best the index of
 * the best used one. Returns how many are used (used[i] says which). */
static int series_used(const struct series *s, const struct ocb_ceiling_rules *r, int *used,
		       int *best)
{
	int clean = 0, k = 0;
	for (int i = 0; i < s->n; i++)
		clean += !(s->tr[i].share < r->share_min);
	*best = -1;
	for (int i = 0; i < s->n; i++) {
		used[i] = clean < r->trials_min || !(s->tr[i].share < r->share_min);
		if (!used[i])
			continue;
		k++;
		if (*best < 0 || s->tr[i].v > s->tr[*best].v)
			*best = i;
	}
	return k;
}

/* Every series of a measurement. */
struct series_set {
	struct series fma[2], int8[2], sgemm[2], xchk[2], bw[2][2][NLEVEL];
};

/* The last-level capacity seen in the 1-thread read sweep (ceiling_llc.h): the best
 * rate per size over every trial, and each trial's own capacity (its spread). */
#define LLC_TRIALS 16
struct llc_curve {
	double best[OCB_CEIL_MAX_SIZES];
	double cap[LLC_TRIALS];
	int trials, ncap;
};

/* The whole measurement: what it measures, its buffers, and every series. */
struct meas {
	struct ocb_machine mach;       /* the machine, its measured capacity cleared: the sweep
					* must reach past the reported L3 to find it again */
	const struct ocb_machine *m;   /* = &mach */
	int quick, rounds, tl[2], ntl;
	struct ocb_bands b;
	int64_t llc_bands;             /* bytes of last level the bands follow (0: the reported
					* L3 sets them) */
	unsigned measured;             /* families with a complete set of rounds */
	long fma_iters, int8_iters;
	/* sweep: one buffer of the largest working set, reused for every size */
	float *buf;
	size_t top, ws[2][OCB_CEIL_MAX_SIZES], nws[2];
	long reps[2][2][OCB_CEIL_MAX_SIZES]; /* [thread idx][read, triad][size]; 0 = to do */
	/* STREAM triad of the cross-check: 3 arrays of sn floats */
	float *sbuf;
	size_t sn;
	/* sgemm: A, B, C of sgemm_n x sgemm_n; warmed[i] after the first call at tl[i] */
	float *gbuf;
	int sgemm_n, warmed[2];
	const struct ocb_ceiling_rules *rules;
	struct series_set s;
	struct llc_curve llc;
};

/* ---- series and trials ------------------------------------------------------------ */

static void series_init(struct series *s, const char *kind, int threads, const char *unit,
			const char *how)
{
	memset(s, 0, sizeof *s);
	snprintf(s->kind, sizeof s->kind, "%s", kind);
	s->threads = threads;
	s->unit = unit;
	snprintf(s->how, sizeof s->how, "%s", how);
}

/* Forgets the trials (a re-measure starts the series over). */
static void series_reset(struct series *s)
{
	s->n = 0;
}

/* A trial without a finite positive rate (an empty band) is not a trial. */
static void series_add(struct series *s, const struct tstat *t)
{
	if (s->n >= MAX_TRIALS || !(t->v > 0) || !isfinite(t->v))
		return;
	s->tr[s->n++] = *t;
}

/* One team run of fn on nt threads; rates scaled by `scale` (to GFLOP/s, GB/s ...). */
static int team_trial(int nt, ocb_team_fn fn, void *arg, double scale, struct tstat *ts)
{
	double *rate = calloc((size_t)nt, sizeof *rate), agg = NAN;
	double *share = calloc((size_t)nt, sizeof *share);
	int *cpu = calloc((size_t)nt, sizeof *cpu);
	int rc = OCB_OK;
	memset(ts, 0, sizeof *ts);
	if (!rate || !cpu || !share) {
		rc = ocb_seterr(OCB_ENOMEM, "ceilings: team of %d", nt);
		goto out;
	}
	if ((rc = ocb_team_run(nt, fn, arg, &agg, rate, cpu, share, NULL)))
		goto out;
	ts->v = agg * scale;
	ts->bal = nt > 1 ? ocb_team_balance(rate, nt) : NAN;
	ts->nt = nt;
	ts->share = share[0];
	for (int t = 1; t < nt; t++)
		ts->share = fmin(ts->share, share[t]);
	for (int t = 0; t < nt && t < SHOW; t++) {
		ts->rate[t] = rate[t] * scale;
		ts->cpu[t] = cpu[t];
	}
out:
	free(rate);
	free(share);
	free(cpu);
	return rc;
}

/* ---- compute peaks: FMA and int8 -------------------------------------------------- */

struct peak_arg {
	long iters;
	int bad; /* set when a thread's accumulators came out wrong */
};

static double fma_body(int t, int nt, void *arg)
{
	struct peak_arg *a = arg;
	double sink = 0.0, f = ocb_peak_fma(a->iters, 1, &sink);
	(void)t, (void)nt;
	if (!(sink > 0))
		__atomic_store_n(&a->bad, 1, __ATOMIC_RELAXED);
	return f;
}

static double int8_body(int t, int nt, void *arg)
{
	struct peak_arg *a = arg;
	uint64_t sink = 0;
	double f = ocb_peak_int8(a->iters, 1, &sink);
	(void)t, (void)nt;
	if (sink != ocb_peak_int8_expected(a->iters, 1))
		__atomic_store_n(&a->bad, 1, __ATOMIC_RELAXED);
	return f;
}

/* Iterations for one thread's call to last about trial_s, from 1-thread runs that start
 * at trial_s / 4 at 20 G per second (ops_per_iter each). */
static int calibrate(ocb_team_fn fn, double ops_per_iter, double trial_s, long *iters)
{
	struct peak_arg a = {.iters = (long)(trial_s / 4 * 20e9 / ops_per_iter) + 1};
	for (;;) {
		double agg = NAN;
		int rc = ocb_team_run(1, fn, &a, &agg, NULL, NULL, NULL, NULL);
		if (rc)
			return rc;
		double t = agg > 0 ? (double)a.iters * ops_per_iter / agg : 0;
		if (t >= trial_s / 2 || a.iters > (1L << 40))
			break;
		double f = t > 0 ? trial_s / t : 16.0;
		a.iters = (long)((double)a.iters * (f < 16.0 ? f : 16.0)) + 1;
	}
	*iters = a.iters;
	return OCB_OK;
}

/* One trial of a compute peak at every thread count. */
static int peak_round(struct meas *x, int int8)
{
	double trial_s = x->quick ? 0.02 : 0.05;
	ocb_team_fn fn = int8 ? int8_body : fma_body;
	double per = int8 ? ocb_peak_int8_ops_per_iter() : ocb_peak_fma_flops_per_iter();
	long *iters = int8 ? &x->int8_iters : &x->fma_iters;
	int rc;
	if (*iters == 0 && (rc = calibrate(fn, per, trial_s, iters)))
		return rc;
	for (int i = 0; i < x->ntl; i++) {
		struct peak_arg a = {.iters = *iters};
		struct tstat ts;
		if ((rc = team_trial(x->tl[i], fn, &a, 1e-9, &ts)))
			return rc;
		if (a.bad)
			return ocb_seterr(OCB_ERUNTIME, "%s peak kernel: wrong accumulators",
					  int8 ? "int8" : "FMA");
		series_add(int8 ? &x->s.int8[i] : &x->s.fma[i], &ts);
	}
	return OCB_OK;
}

/* ---- bandwidth sweep -------------------------------------------------------------- */

struct sweep_arg {
	int kind;      /* 0 read (sum), 1 triad */
	int variant;   /* read: ocb_stream_sum_variant's loop (kernels/stream.h) */
	float *buf;
	size_t ws;     /* working set, bytes, all threads */
	long reps;
};

/* Floats per triad array in ws bytes: a whole number of 64-byte lines, so that each of
 * the 3 arrays starts on a line. Otherwise the line where one array ends and the next
 * begins is written by the last thread and read by the first: at the L1-sized working
 * sets that one line crossing cores every pass halved the 2-thread triad rate (AMD EPYC
 * Zen 5 VM: 111 GB/s per thread against 197 alone, below its own L2 plateau). */
static size_t triad_n(size_t ws)
{
	return ws / (3 * sizeof(float)) / 16 * 16;
}

/* Bytes one pass over ws counts: all of x for read; 3 arrays of triad_n floats for triad
 * (STREAM's count: no write-allocate). */
static double counted(int kind, size_t ws)
{
	return kind == 0 ? (double)(ws / sizeof(float) * sizeof(float))
			 : (double)(triad_n(ws) * 3 * sizeof(float));
}

/* Thread t's slice (ocb_stream_slice, as the kernels cut it) done reps times by that
 * thread alone; returns its counted bytes. */
static double sweep_body(int t, int nt, void *arg)
{
	const struct sweep_arg *a = arg;
	size_t lo, hi;
	if (a->kind == 0) {
		ocb_stream_slice(a->ws / sizeof(float), nt, t, &lo, &hi);
		ocb_stream_sum_variant(a->variant, a->buf + lo, hi - lo, a->reps, 1);
		return (double)(hi - lo) * sizeof(float) * (double)a->reps;
	}
	size_t n = triad_n(a->ws);
	float *p = a->buf;
	ocb_stream_slice(n, nt, t, &lo, &hi);
	ocb_stream_triad(p + lo, p + n + lo, p + 2 * n + lo, 3.0f, hi - lo, a->reps, 1);
	return 3.0 * (double)(hi - lo) * sizeof(float) * (double)a->reps;
}

/* Passes per timing at one size, so that a timing lasts >= min_s. Starts from enough
 * passes for min_s at 10 GB/s: on a busy machine the first call of a team can wait
 * milliseconds for a core, and calibrating on that alone would leave small sizes with
 * one pass per timing. */
static int calibrate_reps(int nt, struct sweep_arg *a, double min_s)
{
	a->reps = (long)(min_s * 1e10 / (double)a->ws) + 1;
	for (;;) {
		double agg = NAN;
		int rc = ocb_team_run(nt, sweep_body, a, &agg, NULL, NULL, NULL, NULL);
		if (rc)
			return rc;
		double t = agg > 0 ? counted(a->kind, a->ws) * (double)a->reps / agg : 0;
		if (t >= min_s || a->reps > (1L << 40))
			return OCB_OK;
		double f = t > 0 ? 1.5 * min_s / t : 64.0;
		a->reps = (long)((double)a->reps * (f > 64.0 ? 64.0 : f < 2.0 ? 2.0 : f));
	}
}

/* Capacities below this are no last level: twice one core's L2 (the L3 band's floor). */
static double llc_floor(const struct ocb_machine *m)
{
	return 2.0 * (m->l2_bytes > 0 ? (double)m->l2_bytes : 256.0 * KIB);
}

/* One 1-thread read trial of the sweep into the capacity curve; its own capacity counts
 * for the spread only when its thread had its core at every size (clean), as the rate
 * ceilings leave such trials out. */
static void llc_add(struct meas *x, const double *val, size_t n, int clean)
{
	struct llc_curve *c = &x->llc;
	double cap;
	for (size_t i = 0; i < n; i++)
		if (val[i] > c->best[i])
			c->best[i] = val[i];
	c->trials++;
	if (clean && ocb_llc_find(x->ws[0], val, n, llc_floor(x->m), &cap, NULL) && c->ncap < LLC_TRIALS)
		c->cap[c->ncap++] = cap;
}

/* The best of `timings` timings of one sweep point: thread count tl[ti], read (kind 0)
 * or triad, size ws[ti][i]; its repetitions are calibrated on first use and kept. A
 * read point runs its timings once per read loop of this CPU (ocb_stream_sum_variants:
 * one stream on zmm and ymm on AVX-512, then 2 and 4 streams, in turn), and keeps the
 * best of all. */
static int sweep_point(struct meas *x, int ti, int kind, size_t i, int timings,
		       struct tstat *best)
{
	const int nt = x->tl[ti], nv = kind == 0 ? ocb_stream_sum_variants() : 1;
	struct sweep_arg a = {kind, 0, x->buf, x->ws[ti][i], x->reps[ti][kind][i]};
	struct tstat ts;
	int rc;
	if (a.reps == 0 && (rc = calibrate_reps(nt, &a, x->quick ? 0.002 : 0.004)))
		return rc;
	x->reps[ti][kind][i] = a.reps;
	best->v = 0;
	for (int k = 0; k < timings * nv; k++) {
		a.variant = k % nv;
		if ((rc = team_trial(nt, sweep_body, &a, 1e-9, &ts)))
			return rc;
		if (ts.v > best->v)
			*best = ts;
	}
	return OCB_OK;
}

/* One trial of the sweep for thread count tl[ti]: every size, read then triad (the
 * better of two timings each), then one plateau per level from this trial alone. */
static int sweep_round(struct meas *x, int ti)
{
	struct tstat pts[OCB_CEIL_MAX_SIZES];
	double val[OCB_CEIL_MAX_SIZES];
	size_t n = x->nws[ti];
	int nt = x->tl[ti], rc;
	for (int kind = 0; kind < 2; kind++) {
		for (size_t i = 0; i < n; i++) {
			if ((rc = sweep_point(x, ti, kind, i, 2, &pts[i])))
				return rc;
			val[i] = pts[i].v;
		}
		if (ti == 0 && kind == 0) {
			int clean = 1;
			for (size_t i = 0; i < n; i++)
				clean &= !(pts[i].share < x->rules->share_min);
			llc_add(x, val, n, clean);
		}
		for (int l = 0; l < NLEVEL; l++) {
			int at = ocb_ceilings_plateau_at(x->ws[ti], val, n, nt, x->b.lo[l], x->b.hi[l]);
			if (at >= 0)
				series_add(&x->s.bw[ti][kind][l], &pts[at]);
		}
	}
	return OCB_OK;
}

/* ---- STREAM triad (cross-check) and sgemm ----------------------------------------- */

/* Passes of one STREAM cross-check timing, back to back (STREAM's own NTIMES loop). One
 * pass alone, after the other families' measurements, starts from caches holding other
 * data; the sweep's DRAM points run pass after pass, and on the Zen 5 VM the rate of
 * pass after pass depends on the working set far past the measured last level: a
 * 1-thread read ran 49 GB/s over 160 MiB, 45 over 320, 41-43 over 640, 38 over 1280 and
 * 36 over 2560 MiB (huge pages throughout, sizes in either order; a triad over 80-160
 * MiB 1.24-1.25x faster pass after pass than in single passes after an eviction, over
 * 640 MiB alike: 3 Dec 2026). So both take passes back to back. */
#define XCHK_PASSES 4

static int xchk_round(struct meas *x)
{
	for (int i = 0; i < x->ntl; i++) {
		struct sweep_arg a = {1, 0, x->sbuf, 3 * x->sn * sizeof(float), XCHK_PASSES};
		struct tstat ts;
		int rc = team_trial(x->tl[i], sweep_body, &a, 1e-9, &ts);
		if (rc)
			return rc;
		series_add(&x->s.xchk[i], &ts);
	}
	return OCB_OK;
}

static void sgemm_call(const struct meas *x)
{
	size_t nn = (size_t)x->sgemm_n * (size_t)x->sgemm_n;
	int n = x->sgemm_n;
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, x->gbuf, n,
		    x->gbuf + nn, n, 0.0f, x->gbuf + 2 * nn, n);
}

/* One timed sgemm at nt threads */
static struct tstat sgemm_timed(const struct meas *x, int nt)
{
	const double flops = 2.0 * x->sgemm_n * (double)x->sgemm_n * (double)x->sgemm_n;
	struct tstat ts = {.bal = NAN, .nt = nt};
	double c = ocb_process_cpu_s(), t = ocb_now_s();
	sgemm_call(x);
	t = ocb_now_s() - t;
	c = ocb_process_cpu_s() - c;
	ts.v = t > 0 ? flops / t * 1e-9 : NAN;
	/* OpenBLAS's threads are not ours to time one by one: the process's CPU time over
	 * threads x wall says whether they had their cores */
	ts.share = t > 0 ? fmin(1.0, c / (t * nt)) : NAN;
	return ts;
}

/* Per thread count, the better of two sgemms back to back (the first call at a count is
 * also a warm-up: buffers, threads, pages), then a pause while OpenBLAS's threads stop
 * spinning. Two, because the first call after the other kernels runs slower: on a Xeon
 * model 0xcf VM, n = 4096 at 2 threads, 267 then 307-325 GFLOP/s (147 then 164 at 1),
 * and one call per trial spread the trials by 15-31% in 5 runs of 5. */
static int sgemm_round(struct meas *x)
{
	for (int i = 0; i < x->ntl; i++) {
		openblas_set_num_threads(x->tl[i]);
		if (!x->warmed[i]) {
			sgemm_call(x);
			x->warmed[i] = 1;
		}
		struct tstat a = sgemm_timed(x, x->tl[i]), b = sgemm_timed(x, x->tl[i]);
		series_add(&x->s.sgemm[i], b.v > a.v || !(a.v > 0) ? &b : &a);
	}
	usleep(SGEMM_PAUSE_US);
	return OCB_OK;
}

/* Calls f on every series of families fam in a and the same series in b. */
static void each_series(struct series_set *a, struct series_set *b, unsigned fam, int ntl,
			void (*f)(struct series *, struct series *, const void *), const void *arg)
{
	for (int i = 0; i < ntl; i++) {
		if (fam & OCB_CEIL_FMA)
			f(&a->fma[i], &b->fma[i], arg);
		if (fam & OCB_CEIL_INT8)
			f(&a->int8[i], &b->int8[i], arg);
		if (fam & OCB_CEIL_SGEMM)
			f(&a->sgemm[i], &b->sgemm[i], arg);
		if (fam & OCB_CEIL_XCHK)
			f(&a->xchk[i], &b->xchk[i], arg);
		for (int k = 0; (fam & OCB_CEIL_BW) && k < 2 * NLEVEL; k++)
			f(&a->bw[i][k / NLEVEL][k % NLEVEL], &b->bw[i][k / NLEVEL][k % NLEVEL], arg);
	}
}

/* (best - worst) / best over the used trials; INFINITY when none. */
static double series_spread(const struct series *s, const struct ocb_ceiling_rules *r)
{
	int used[MAX_TRIALS], best, k = series_used(s, r, used, &best);
	double lo = INFINITY;
	for (int i = 0; i < s->n; i++)
		if (used[i])
			lo = fmin(lo, s->tr[i].v);
	return k ? (s->tr[best].v - lo) / s->tr[best].v : INFINITY;
}

/* Median of the finite values of v[0..n); NaN when none. */
static double median_finite(const double *v, int n);

/* The worse of the best used trial's and the median used trial's value of field f
 * (balance, CPU share): a disturbance that lasts shows in most trials. NaN if unknown. */
static double series_worst_of(const struct series *s, const struct ocb_ceiling_rules *r,
			      int share)
{
	int used[MAX_TRIALS], best, k = 0;
	double v[MAX_TRIALS];
	series_used(s, r, used, &best);
	if (best < 0)
		return NAN;
	for (int i = 0; i < s->n; i++)
		if (used[i])
			v[k++] = share ? s->tr[i].share : s->tr[i].bal;
	double b = share ? s->tr[best].share : s->tr[best].bal, med = median_finite(v, k);
	return isfinite(med) && isfinite(b) ? fmin(b, med) : b;
}

/* The per-series rules of ceiling_rules (trials, spread, balance) on one pass. */
static int series_clean(const struct series *s, const struct ocb_ceiling_rules *r)
{
	int used[MAX_TRIALS], best;
	if (series_used(s, r, used, &best) < r->trials_min || series_spread(s, r) > r->spread_max)
		return 0;
	double bal = series_worst_of(s, r, 0), sh = series_worst_of(s, r, 1);
	return !(bal < r->balance_min) && !(sh < r->share_min);
}

/* After a re-measure pass: keep in *cur the better of the earlier pass *old and the new
 * one. Each pass is a complete, independent best-of-trials measurement; a pass that
 * satisfies the per-series rules beats one that does not, then the higher best value
 * (both clean) or the smaller spread (neither clean) wins. */
static void keep_better(struct series *cur, struct series *old, const void *arg)
{
	const struct ocb_ceiling_rules *r = arg;
	int uo[MAX_TRIALS], uc[MAX_TRIALS], bo, bc;
	if (old->n == 0)
		return;
	if (cur->n == 0) {
		*cur = *old;
		return;
	}
	int co = series_clean(old, r), cn = series_clean(cur, r);
	series_used(old, r, uo, &bo);
	series_used(cur, r, uc, &bc);
	if ((co && !cn) || (co && cn && old->tr[bo].v > cur->tr[bc].v) ||
	    (!co && !cn && series_spread(old, r) < series_spread(cur, r)))
		*cur = *old;
}

static void forget(struct series *cur, struct series *old, const void *arg)
{
	(void)arg;
	*old = *cur;
	series_reset(cur);
}

/* `rounds` interleaved rounds of the families in fam. A family measured before (a
 * re-measure) keeps, per series, the better pass (keep_better). */
static int run_rounds(struct meas *x, unsigned fam)
{
	struct series_set *old = malloc(sizeof *old);
	int rc = OCB_OK;
	if (!old)
		return ocb_seterr(OCB_ENOMEM, "ceilings: no memory");
	each_series(&x->s, old, fam, x->ntl, forget, NULL);
	for (int r = 0; r < x->rounds && rc == OCB_OK; r++) {
		ocb_info("ceilings: round %d of %d (1 and %d threads)", r + 1, x->rounds,
			 x->tl[x->ntl - 1]);
		if ((fam & OCB_CEIL_FMA) && (rc = peak_round(x, 0)))
			break;
		if ((fam & OCB_CEIL_INT8) && (rc = peak_round(x, 1)))
			break;
		for (int i = 0; (fam & OCB_CEIL_BW) && i < x->ntl && rc == OCB_OK; i++)
			rc = sweep_round(x, i);
		if (rc == OCB_OK && (fam & OCB_CEIL_XCHK))
			rc = xchk_round(x);
		if (rc == OCB_OK && (fam & OCB_CEIL_SGEMM))
			rc = sgemm_round(x);
	}
	if (rc == OCB_OK) {
		each_series(&x->s, old, fam, x->ntl, keep_better, x->rules);
		x->measured |= fam;
	}
	free(old);
	return rc;
}

/* ---- from trials to ceilings ------------------------------------------------------ */

static int cmp_asc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of the finite values of v[0..n); NaN when none. */
static double median_finite(const double *v, int n)
{
	if (n <= 0)
		return NAN;
	double s[MAX_TRIALS];
	int k = 0;
	for (int i = 0; i < n; i++)
		if (isfinite(v[i]))
			s[k++] = v[i];
	if (k == 0)
		return NAN;
	qsort(s, (size_t)k, sizeof s[0], cmp_asc);
	return k % 2 ? s[k / 2] : 0.5 * (s[k / 2 - 1] + s[k / 2]);
}

/* `{"cpu":[0,1],"rate":[94.1,93.9]}` of the best trial into buf (first SHOW threads). */
static void per_thread_json(const struct tstat *t, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "{\"cpu\":[");
	int k = t->nt < SHOW ? t->nt : SHOW;
	for (int i = 0; i < k && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%d", i ? "," : "", t->cpu[i]);
	if (o < len)
		o += (size_t)snprintf(buf + o, len - o, "],\"rate\":[");
	for (int i = 0; i < k && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%.1f", i ? "," : "", t->rate[i]);
	if (o < len)
		snprintf(buf + o, len - o, "]%s}", t->nt > SHOW ? ",\"more\":true" : "");
}

/* The ceiling of a series: the best used trial (series_used), their count and spread,
 * balance and CPU share (series_worst_of), the per-thread rates of the best trial. */
static int series_ceiling(const struct series *s, int quick, const struct ocb_ceiling_rules *r,
			  struct ocb_ceiling *c)
{
	int used[MAX_TRIALS], best, k = series_used(s, r, used, &best);
	if (k == 0)
		return 0; /* not measured (an empty band): left out rather than stored as 0 */
	const struct tstat *bt = &s->tr[best];
	memset(c, 0, sizeof *c);
	snprintf(c->kind, sizeof c->kind, "%s", s->kind);
	c->threads = s->threads;
	c->value = bt->v;
	snprintf(c->unit, sizeof c->unit, "%s", s->unit);
	c->trials = k;
	c->spread = series_spread(s, r);
	double sh = series_worst_of(s, r, 1);
	c->cpu_share = isfinite(sh) ? sh : 0;
	char per[160] = "", left[48] = "";
	if (bt->nt > 1 && isfinite(bt->bal)) {
		double bal = series_worst_of(s, r, 0);
		c->balance = isfinite(bal) ? bal : 0;
		per_thread_json(bt, per, sizeof per);
	}
	if (k < s->n)
		snprintf(left, sizeof left, " (+%d left out: cores not ours)", s->n - k);
	snprintf(c->method, sizeof c->method, "%s%s; best of %d interleaved trials%s%s%s%s%s",
		 quick ? "quick; " : "", s->how, k, left, per[0] ? "; per-thread " : "",
		 per[0] ? s->unit : "", per[0] ? " " : "", per);
	return 1;
}

static void fmt_size(char *buf, size_t len, double bytes);

/* The 'cap_llc' ceiling (MiB) of the sweep's best-per-size curve, with the spread of the
 * trials' own capacities; 0 when the curve shows no last-level cache (then readers use
 * the reported size). */
static int llc_ceiling(const struct meas *x, struct ocb_ceiling *c)
{
	const struct llc_curve *lc = &x->llc;
	size_t n = x->nws[0];
	double cap, thr = NAN, lo = INFINITY, hi = 0;
	int i = ocb_llc_find(x->ws[0], lc->best, n, llc_floor(x->m), &cap, &thr);
	if (!i) {
		ocb_info("ceilings: no last-level cache capacity seen in the read sweep; the "
			 "reported L3 size is used");
		return 0;
	}
	for (int k = 0; k < lc->ncap; k++) {
		lo = fmin(lo, lc->cap[k]);
		hi = fmax(hi, lc->cap[k]);
	}
	memset(c, 0, sizeof *c);
	snprintf(c->kind, sizeof c->kind, "cap_llc");
	c->threads = 1;
	c->value = cap / (double)MIB;
	snprintf(c->unit, sizeof c->unit, "MiB");
	c->trials = lc->ncap;
	c->spread = hi > 0 ? (hi - lo) / hi : 0;
	char a[16], b[16], top[16], rep[16];
	fmt_size(a, sizeof a, (double)x->ws[0][i - 1]);
	fmt_size(b, sizeof b, (double)x->ws[0][i]);
	fmt_size(top, sizeof top, (double)x->ws[0][n - 1]);
	if (x->m->l3_bytes > 0)
		fmt_size(rep, sizeof rep, (double)x->m->l3_bytes);
	else
		snprintf(rep, sizeof rep, "none");
	snprintf(c->method, sizeof c->method, "%s1-thread read sweep to %s: rate falls below "
		 "%.1f GB/s (geometric mean of cache and DRAM %.1f GB/s) between %s (%.1f GB/s) "
		 "and %s (%.1f GB/s), log-interpolated; best per size of %d trials, %d clean ones found it; "
		 "OS reports L3 %s", x->quick ? "quick; " : "", top, thr, lc->best[n - 1], a,
		 lc->best[i - 1], b, lc->best[i], lc->trials, lc->ncap, rep);
	return 1;
}

/* Every measured ceiling of x into out (cap >= 32): fp32, int8, bandwidth, the
 * last-level capacity, sgemm. */
static size_t collect(const struct meas *x, struct ocb_ceiling *out)
{
	size_t n = 0;
	for (int i = 0; i < x->ntl; i++) {
		if (x->measured & OCB_CEIL_FMA)
			n += (size_t)series_ceiling(&x->s.fma[i], x->quick, x->rules, &out[n]);
		if (x->measured & OCB_CEIL_INT8)
			n += (size_t)series_ceiling(&x->s.int8[i], x->quick, x->rules, &out[n]);
	}
	for (int i = 0; (x->measured & OCB_CEIL_BW) && i < x->ntl; i++)
		for (int k = 0; k < 2 * NLEVEL; k++)
			n += (size_t)series_ceiling(&x->s.bw[i][k / NLEVEL][k % NLEVEL], x->quick,
						    x->rules, &out[n]);
	if (x->measured & OCB_CEIL_BW)
		n += (size_t)llc_ceiling(x, &out[n]);
	for (int i = 0; (x->measured & OCB_CEIL_SGEMM) && i < x->ntl; i++)
		n += (size_t)series_ceiling(&x->s.sgemm[i], x->quick, x->rules, &out[n]);
	return n;
}

static void xcheck_of(const struct meas *x, struct ocb_ceilings_report *rep)
{
	rep->nxc = (size_t)x->ntl;
	for (int i = 0; i < x->ntl; i++) {
		rep->xc[i].threads = x->tl[i];
		int used[MAX_TRIALS], best;
		series_used(&x->s.xchk[i], x->rules, used, &best);
		rep->xc[i].stream_triad = best >= 0 ? x->s.xchk[i].tr[best].v : NAN;
	}
}

/* sgemm's upper bound over flops_fp32: the rule's 1.02 when the FMA kernel is the
 * machine's widest (AVX2 or AVX-512F, whichever the CPU offers, as the BLAS's own kernels
 * do), none when the FMA kernel is plain C (not a peak). */
static double sgemm_peak_max(double rule)
{
	return ocb_cpu_avx2() ? rule : INFINITY;
}

static const struct ocb_ceiling *find_in(const struct ocb_ceiling *c, size_t n,
					 const char *kind, int threads)
{
	for (size_t i = 0; c && i < n; i++)
		if (c[i].threads == threads && strcmp(c[i].kind, kind) == 0)
			return &c[i];
	return NULL;
}

unsigned ocb_ceiling_family(const char *kind)
{
	if (strcmp(kind, "flops_fp32") == 0)
		return OCB_CEIL_FMA;
	if (strcmp(kind, "ops_int8") == 0)
		return OCB_CEIL_INT8;
	if (strcmp(kind, "flops_sgemm") == 0)
		return OCB_CEIL_SGEMM;
	if (strncmp(kind, "bw_", 3) == 0)
		return OCB_CEIL_BW | OCB_CEIL_XCHK; /* bw_dram is checked against STREAM */
	if (strcmp(kind, "cap_llc") == 0)
		return OCB_CEIL_BW; /* found in the read sweep */
	return 0;
}

/* ---- measure, check, re-measure --------------------------------------------------- */

#define MAX_FRESH 32

/* Measures fam, then checks the fresh ceilings together with base[0..nbase) (stored
 * values that stay as they are) and re-measures the families of failing fresh targets
 * (targets NULL: every fresh ceiling) up to OCB_CEIL_REMEASURES times. *out: the fresh
 * targets with their final suspect reasons (malloc'd). */
static int measure_checked(struct meas *x, unsigned fam, const struct ocb_ceiling *base,
			   size_t nbase, const struct ocb_ceiling *targets, size_t ntg,
			   struct ocb_ceiling **out, size_t *nout, struct ocb_ceilings_report *rep)
{
	struct ocb_ceiling fresh[MAX_FRESH], *all = calloc(nbase + MAX_FRESH, sizeof *all);
	struct ocb_ceiling_rules *rules = &rep->rules;
	size_t na = 0, first = 0, k = 0;
	int rc;

	if (!all)
		return ocb_seterr(OCB_ENOMEM, "ceilings: no memory");
	ocb_ceiling_rules_default(rules);
	rules->sgemm_peak_max = sgemm_peak_max(rules->sgemm_peak_max);
	x->rules = rules;
	if ((rc = run_rounds(x, fam)))
		goto out;
	for (int attempt = 0;; attempt++) {
		size_t nf = collect(x, fresh);
		na = 0;
		for (size_t i = 0; i < nbase; i++)
			if (!find_in(fresh, nf, base[i].kind, base[i].threads))
				all[na++] = base[i];
		first = na;
		memcpy(all + na, fresh, nf * sizeof *fresh);
		na += nf;
		xcheck_of(x, rep);
		ocb_ceilings_check(all, na, rep->xc, rep->nxc, rules);
		unsigned again = 0;
		for (size_t i = first; i < na; i++)
			if (all[i].suspect[0] && (!targets || find_in(targets, ntg, all[i].kind,
								      all[i].threads)))
				again |= ocb_ceiling_family(all[i].kind);
		if (!again || attempt == OCB_CEIL_REMEASURES)
			break;
		rep->remeasures++;
		ocb_info("ceilings: %s%s%s%sfailed a consistency rule: re-measuring (%d of %d)",
			 again & OCB_CEIL_FMA ? "fp32 FMA, " : "", again & OCB_CEIL_INT8 ? "int8, " : "",
			 again & OCB_CEIL_BW ? "bandwidth, " : "", again & OCB_CEIL_SGEMM ? "sgemm, " : "",
			 attempt + 1, OCB_CEIL_REMEASURES);
		if ((rc = run_rounds(x, again)))
			goto out;
	}
	/* keep the fresh targets, in place at the front of all */
	for (size_t i = first; i < na; i++)
		if (!targets || find_in(targets, ntg, all[i].kind, all[i].threads))
			all[k++] = all[i];
	rep->suspect = 0;
	for (size_t i = 0; i < k; i++) {
		if (!all[i].suspect[0])
			continue;
		rep->suspect++;
		ocb_info("ceilings: %s at %d thread(s) = %.1f %s fails the rules: %s", all[i].kind,
			 all[i].threads, all[i].value, all[i].unit, all[i].suspect);
	}
	*out = all;
	*nout = k;
	all = NULL;
out:
	free(all);
	return rc;
}

static void fmt_size(char *buf, size_t len, double bytes)
{
	if (bytes >= (double)GIB)
		snprintf(buf, len, "%.4gGiB", bytes / (double)GIB);
	else if (bytes >= (double)MIB)
		snprintf(buf, len, "%.4gMiB", bytes / (double)MIB);
	else
		snprintf(buf, len, "%.4gKiB", bytes / (double)KIB);
}

/* The largest working set for `threads`: the first power of two at which every thread's
 * slice is in the DRAM band; at least 512 MiB unless quick; at most cap bytes. */
static size_t sweep_top(const struct ocb_bands *b, int threads, int quick, size_t cap)
{
	size_t top = 16 * KIB;
	while ((double)top < b->lo[3] * threads && top < cap)
		top *= 2;
	if (!quick && top < 512 * MIB)
		top = 512 * MIB;
	return top < cap ? top : cap;
}

static size_t sweep_step(const struct meas *x)
{
	return x->quick ? 4 : 2;
}

/* The sweep: its buffer (the largest working set, first-touched by all threads; capped
 * at a quarter of memory and 2 GiB) and its sizes per thread count (sweep_series names
 * its series once the bands are final). */
static int sweep_init(struct meas *x)
{
	size_t cap = 2 * GIB;
	int nmax = x->tl[x->ntl - 1];
	if (x->m->mem_bytes > 0 && (size_t)x->m->mem_bytes / 4 < cap)
		cap = (size_t)x->m->mem_bytes / 4;
	x->top = sweep_top(&x->b, nmax, x->quick, cap);
	if ((double)x->top < x->b.lo[3] * nmax)
		ocb_warn("ceilings: the largest sweep size (%zu MiB) is below the DRAM band of %d "
			 "threads (memory cap)", x->top / MIB, nmax);
	/* huge pages asked, as for the GEMV weights whose roof this is (ocb_alloc.h) */
	if (!(x->buf = ocb_alloc_huge(x->top)))
		return OCB_ENOMEM;
	ocb_stream_fill(x->buf, x->top / sizeof(float), 1.0f, 1.0f / 1024, nmax);
	for (int i = 0; i < x->ntl; i++) {
		size_t topt = sweep_top(&x->b, x->tl[i], x->quick, x->top), n = 0;
		for (size_t s = 16 * KIB; s <= topt && n < OCB_CEIL_MAX_SIZES; s *= sweep_step(x))
			x->ws[i][n++] = s;
		if (x->ws[i][n - 1] != topt && n < OCB_CEIL_MAX_SIZES)
			x->ws[i][n++] = topt; /* the DRAM point is always measured */
		x->nws[i] = n;
	}
	return OCB_OK;
}

/* The sweep's series, their method text naming the bands (x->b, final by now). */
static void sweep_series(struct meas *x)
{
	for (int i = 0; i < x->ntl; i++) {
		const size_t n = x->nws[i];
		char lo[16], hi[16], blo[16], bhi[16], how[200], kind[32];
		fmt_size(lo, sizeof lo, (double)x->ws[i][0]);
		fmt_size(hi, sizeof hi, (double)x->ws[i][n - 1]);
		for (int k = 0; k < 2 * NLEVEL; k++) {
			int l = k % NLEVEL, triad = k / NLEVEL;
			fmt_size(blo, sizeof blo, x->b.lo[l]);
			fmt_size(bhi, sizeof bhi, x->b.hi[l]);
			snprintf(kind, sizeof kind, "bw_%s%s", level_name[l], triad ? "_triad" : "");
			snprintf(how, sizeof how, "%s sweep %s-%s x%zu, %s; band %s-%s/thread, median "
				 "of top 3", triad ? "triad" : "read", lo, hi, sweep_step(x),
				 ocb_stream_isa(!triad), l == 0 ? "0" : blo, l == 3 ? "max" : bhi);
			series_init(&x->s.bw[i][triad][l], kind, x->tl[i], "GB/s", how);
		}
	}
}

/* Three 1-thread read passes over the sweep sizes (their repetitions calibrated here and
 * kept for the rounds): the last-level capacity the best rate per size shows, or 0. One
 * pass alone, on a busy host, once put a dip at 4-8 MiB and took it for the edge. */
static int llc_presweep(struct meas *x, double *cap)
{
	double val[OCB_CEIL_MAX_SIZES] = {0};
	const size_t n = x->nws[0];
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < n; i++) {
			struct tstat ts;
			int rc = sweep_point(x, 0, 0, i, 1, &ts);
			if (rc)
				return rc;
			val[i] = ts.v > val[i] ? ts.v : val[i];
		}
	if (!ocb_llc_find(x->ws[0], val, n, llc_floor(x->m), cap, NULL))
		*cap = 0;
	return OCB_OK;
}

/* The bands from the best last-level capacity there is: the one measured before (the
 * caller's m->llc_bytes, from a stored cap_llc), else the one a first read pass finds,
 * else the size the OS reports (as set at init). A VM may report the host's L3, or none
 * (the AMD EPYC Zen 5 VM: none, so before this no bw_l3 band existed and the DRAM band
 * began at 64 MiB, two LLCs). The sweep sizes stay as set from the reported size, so the
 * capacity can be found again; a DRAM band the sweep would not reach keeps its edge. */
static int bands_from_llc(struct meas *x, const struct ocb_machine *m)
{
	struct ocb_machine mm = x->mach;
	mm.llc_bytes = m->llc_bytes;
	if (mm.llc_bytes <= 0) {
		double cap = 0;
		int rc = llc_presweep(x, &cap);
		if (rc)
			return rc;
		mm.llc_bytes = (int64_t)cap;
		if (cap > 0)
			ocb_info("ceilings: last level about %.1f MiB (first read passes): the bands "
				 "follow it", cap / (double)MIB);
	}
	if (mm.llc_bytes <= 0)
		return OCB_OK;
	x->llc_bands = mm.llc_bytes;
	struct ocb_bands b;
	ocb_ceilings_bands(&mm, x->quick, &b);
	if (b.lo[3] * x->tl[x->ntl - 1] > (double)x->top)
		b.lo[3] = x->b.lo[3];
	x->b = b;
	return OCB_OK;
}

/* STREAM triad arrays >= 4x the per-core L3 share and >= 64 MiB each (REFERENCE.md §3,
 * §6), at most a quarter of memory for the three. The L3 is the one the bands follow
 * (measured where it could be, bands_from_llc), else the reported one: the Zen 5 VM
 * reports the host's 508 MiB, which made 3 arrays of 1016 MiB, on which the 1-thread
 * triad ran at 30-31 GB/s against 37-39 in the sweep's own DRAM band (152 MiB-1 GiB per
 * thread), flagging bw_dram_triad in 5 of 5 runs (3 Dec 2026; with the measured 38 MiB
 * the gap narrowed but stayed, README). Their pages are the sweep's (huge pages asked
 * for; OCB_NO_THP=1: none), so the cross-check compares two kernels over the same
 * kind of memory: with 4 KiB pages, on the AMD EPYC (Zen 5) VM, the 1-thread triad came
 * out at 8-20 GB/s inside this process against 30-36 with huge pages (2 threads: 40-59
 * either way), which flagged every 1-thread DRAM ceiling. */
static int xchk_init(struct meas *x)
{
	const struct ocb_machine *m = x->m;
	const double l3 = x->llc_bands > 0 ? (double)x->llc_bands : (double)m->l3_bytes;
	double share = l3 > 0 ? l3 / (m->threads > 0 ? m->threads : 1) : 0.0;
	double arr = 64.0 * (double)MIB;
	if (!x->quick && 4 * share > arr)
		arr = 4 * share;
	if (m->mem_bytes > 0 && 3 * arr > (double)m->mem_bytes / 4)
		arr = (double)m->mem_bytes / 12;
	x->sn = ocb_round_up((size_t)(arr / sizeof(float)), 16);
	if (!(x->sbuf = ocb_alloc_huge(3 * x->sn * sizeof(float))))
		return OCB_ENOMEM;
	int nmax = x->tl[x->ntl - 1];
	ocb_stream_fill(x->sbuf, x->sn, 0.0f, 0.0f, nmax);
	ocb_stream_fill(x->sbuf + x->sn, x->sn, 1.0f, 0.001f, nmax);
	ocb_stream_fill(x->sbuf + 2 * x->sn, x->sn, 2.0f, 0.001f, nmax);
	char how[200];
	snprintf(how, sizeof how, "STREAM triad, 3 arrays of %.0f MiB", arr / (double)MIB);
	for (int i = 0; i < x->ntl; i++)
		series_init(&x->s.xchk[i], "stream_triad", x->tl[i], "GB/s", how);
	return OCB_OK;
}

static int sgemm_init(struct meas *x)
{
	struct ocb_rng rng;
	size_t nn;
	char how[200];
	x->sgemm_n = x->quick ? 2048 : 4096;
	nn = (size_t)x->sgemm_n * (size_t)x->sgemm_n;
	/* on transparent huge pages like the sweep's buffers: on 4 KiB pages, allocated after
	 * the sweep's GiBs, the 1-thread sgemm ran at 134-161 GFLOP/s in this process against
	 * 182-191 on huge pages, in alternating runs (Zen 5 VM, 2 Dec 2026), and the cases
	 * of a run then stood above their roof */
	if (!(x->gbuf = ocb_alloc_huge(3 * nn * sizeof(float))))
		return ocb_seterr(OCB_ENOMEM, "sgemm n=%d: no memory", x->sgemm_n);
	ocb_rng_seed(&rng, 42);
	for (size_t i = 0; i < 2 * nn; i++)
		x->gbuf[i] = 2.0f * ocb_rng_uniformf(&rng) - 1.0f;
	/* the core OpenBLAS runs, and whether ocbench (or the user) forced it */
	const char *forced = getenv("OPENBLAS_CORETYPE");
	int f = forced && *forced;
	snprintf(how, sizeof how,
		 "OpenBLAS cblas_sgemm n=%d row-major after a warm-up, better of 2 calls per "
		 "trial, core %s%s%s%s",
		 x->sgemm_n, openblas_get_corename(), f ? " (OPENBLAS_CORETYPE=" : "",
		 f ? forced : "", f ? ")" : "");
	for (int i = 0; i < x->ntl; i++)
		series_init(&x->s.sgemm[i], "flops_sgemm", x->tl[i], "GFLOP/s", how);
	return OCB_OK;
}

static void meas_release(struct meas *x)
{
	free(x->buf);
	free(x->sbuf);
	ocb_free(x->gbuf);
	x->buf = x->sbuf = x->gbuf = NULL;
}

/* Everything families fam need; on failure what was made is released. */
static int meas_init(struct meas *x, const struct ocb_machine *m, int threads_all, int quick,
		     unsigned fam)
{
	int rc = OCB_OK;
	memset(x, 0, sizeof *x);
	x->mach = *m;
	x->mach.llc_bytes = 0;
	x->m = &x->mach;
	x->quick = quick;
	x->rounds = quick ? 3 : 5;
	x->tl[0] = 1;
	x->tl[1] = threads_all > 1 ? threads_all : 1;
	x->ntl = x->tl[1] > 1 ? 2 : 1;
	ocb_ceilings_bands(x->m, quick, &x->b);
	for (int i = 0; i < x->ntl; i++) {
		series_init(&x->s.fma[i], "flops_fp32", x->tl[i], "GFLOP/s", ocb_peak_fma_isa());
		series_init(&x->s.int8[i], "ops_int8", x->tl[i], "GOP/s", ocb_peak_int8_isa());
	}
	if ((fam & OCB_CEIL_BW) && (rc = sweep_init(x)))
		goto fail;
	if ((fam & OCB_CEIL_BW) && (rc = bands_from_llc(x, m)))
		goto fail;
	if (fam & OCB_CEIL_BW)
		sweep_series(x);
	if ((fam & OCB_CEIL_XCHK) && (rc = xchk_init(x)))
		goto fail;
	if ((fam & OCB_CEIL_SGEMM) && (rc = sgemm_init(x)))
		goto fail;
	return OCB_OK;
fail:
	meas_release(x);
	return rc;
}

int ocb_ceilings_measure_ex(const struct ocb_machine *m, int threads_all, int quick,
			    struct ocb_ceiling **out, size_t *n, struct ocb_ceilings_report *rep)
{
	struct ocb_ceilings_report local;
	struct meas *x = calloc(1, sizeof *x);
	int rc;
	*out = NULL;
	*n = 0;
	if (!rep)
		rep = &local;
	memset(rep, 0, sizeof *rep);
	if (!x)
		return ocb_seterr(OCB_ENOMEM, "ceilings: no memory");
	if ((rc = meas_init(x, m, threads_all, quick, OCB_CEIL_ALL)) == OCB_OK) {
		rc = measure_checked(x, OCB_CEIL_ALL, NULL, 0, NULL, 0, out, n, rep);
		meas_release(x);
	}
	openblas_set_num_threads(x->tl[x->ntl - 1]);
	free(x);
	return rc;
}

int ocb_ceilings_measure(const struct ocb_machine *m, int threads_all, int quick,
			 struct ocb_ceiling **out, size_t *n)
{
	return ocb_ceilings_measure_ex(m, threads_all, quick, out, n, NULL);
}

int ocb_ceilings_verify(const struct ocb_machine *m, int quick, const struct ocb_ceiling *cur,
			size_t ncur, const struct ocb_ceiling *flagged, size_t nf,
			struct ocb_ceiling **out, size_t *n, struct ocb_ceilings_report *rep)
{
	struct ocb_ceilings_report local;
	struct meas *x = NULL;
	unsigned fam = 0;
	int threads_all = 1, rc = OCB_OK;
	*out = NULL;
	*n = 0;
	if (!rep)
		rep = &local;
	memset(rep, 0, sizeof *rep);
	for (size_t i = 0; i < nf; i++)
		fam |= ocb_ceiling_family(flagged[i].kind);
	for (size_t i = 0; i < ncur; i++) /* the machine's "all threads" of the last time */
		threads_all = cur[i].threads > threads_all ? cur[i].threads : threads_all;
	for (size_t i = 0; i < nf; i++)
		threads_all = flagged[i].threads > threads_all ? flagged[i].threads : threads_all;
	if (fam == 0)
		return OCB_OK; /* nothing flagged: nothing to do */
	if (!(x = calloc(1, sizeof *x)))
		return ocb_seterr(OCB_ENOMEM, "ceilings: no memory");
	if ((rc = meas_init(x, m, threads_all, quick, fam)) == OCB_OK) {
		rc = measure_checked(x, fam, cur, ncur, flagged, nf, out, n, rep);
		meas_release(x);
	}
	openblas_set_num_threads(x->tl[x->ntl - 1]);
	free(x);
	return rc;
}
