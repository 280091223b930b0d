/* ceilings: measures the roofline's ceilings (REFERENCE.md §3 and §6).
 *
 * Compute: kernels/peak_fma (independent FMA chains) -> 'flops_fp32'; OpenBLAS sgemm
 * -> 'flops_sgemm'. Bandwidth: an ERT-style sweep (Empirical Roofline Tool, Lo et al.,
 * "Roofline model toolkit", PMBS 2014): the same kernel over working sets from 16 KiB
 * upward, each size repeated until a trial lasts a few ms, best of several trials; the
 * plateau of each memory level is taken inside that level's size band. Read (sum) gives
 * 'bw_l1' .. 'bw_dram', STREAM triad gives 'bw_l1_triad' .. 'bw_dram_triad'. Each for 1
 * thread and for threads_all. */
#include "ceilings.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_log.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_time.h"
#include "../kernels/peak_fma.h"
#include "../kernels/stream.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)
#define MAX_SIZES 40

static const char *const level_name[4] = {"l1", "l2", "l3", "dram"};

const struct ocb_ceiling *ocb_ceiling_find(const struct ocb_ceiling *c, size_t n,
					   const char *kind, int threads)
{
	for (size_t i = 0; c && i < n; i++)
		if (c[i].threads == threads && strcmp(c[i].kind, kind) == 0)
			return &c[i];
	return NULL;
}

void ocb_ceilings_bands(const struct ocb_machine *m, int quick, struct ocb_bands *b)
{
	double l1 = m->l1d_bytes > 0 ? (double)m->l1d_bytes : 32.0 * KIB;
	double l2 = m->l2_bytes > 0 ? (double)m->l2_bytes : 256.0 * KIB;
	double share = m->l3_bytes > 0 ? (double)m->l3_bytes / (m->threads > 0 ? m->threads : 1)
				       : 0.0;
	double dram = 64.0 * MIB;
	if (!quick && 4 * share > dram)
		dram = 4 * share;
	b->lo[0] = 0;
	b->hi[0] = 0.75 * l1;
	b->lo[1] = 2 * l1;
	b->hi[1] = l2 / 2;
	b->lo[2] = 2 * l2;
	b->hi[2] = fmin(share / 2, dram / 2); /* share 0: empty band (lo > hi) */
	b->lo[3] = dram;
	b->hi[3] = INFINITY;
}

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x < y) - (x > y);
}

double ocb_ceilings_plateau(const size_t *ws, const double *val, size_t n, int threads,
			    double lo, double hi)
{
	double in[MAX_SIZES];
	size_t k = 0;
	for (size_t i = 0; i < n && k < MAX_SIZES; i++) {
		double w = (double)ws[i] / (threads > 0 ? threads : 1);
		if (w >= lo && w <= hi && !isnan(val[i]))
			in[k++] = val[i];
	}
	if (k == 0)
		return NAN;
	qsort(in, k, sizeof in[0], cmp_desc);
	return k >= 3 ? in[1] : in[0];
}

int ocb_ceilings_fma(int threads, int trials, double trial_s, double *gflops)
{
	double sink = 0.0, best = 0.0;
	/* start at about trial_s / 4 at 20 GFLOP/s per thread (see sweep_point) */
	long iters = (long)(trial_s / 4 * 20e9 / OCB_FMA_FLOPS_PER_ITER) + 1;
	/* Calibrate: grow iters until one call lasts about trial_s. */
	for (;;) {
		double t = ocb_now_s();
		ocb_peak_fma(iters, threads, &sink);
		t = ocb_now_s() - t;
		if (t >= trial_s / 2 || iters > (1L << 40))
			break;
		double f = t > 0 ? trial_s / t : 16.0;
		iters = (long)((double)iters * (f < 16.0 ? f : 16.0)) + 1;
	}
	for (int r = 0; r < trials; r++) {
		double t = ocb_now_s();
		double fl = ocb_peak_fma(iters, threads, &sink);
		t = ocb_now_s() - t;
		if (t > 0 && fl / t > best)
			best = fl / t;
	}
	if (!(sink > 0))
		return ocb_seterr(OCB_ERUNTIME, "FMA peak kernel: accumulators went bad (%g)", sink);
	*gflops = best * 1e-9;
	return OCB_OK;
}

/* One sweep kernel pass set: 0 read (sum) over n floats, 1 triad over 3 arrays. */
static void sweep_call(int kind, float *buf, size_t ws, long reps, int threads)
{
	if (kind == 0) {
		ocb_stream_sum(buf, ws / sizeof(float), reps, threads);
	} else {
		size_t n = ws / (3 * sizeof(float));
		ocb_stream_triad(buf, buf + n, buf + 2 * n, 3.0f, n, reps, threads);
	}
}

/* Best-of-trials bandwidth (GB/s) of kernel `kind` at working set ws bytes. The counted
 * bytes per pass are ws: all of x for read; 3 arrays of ws/3 for triad. */
static double sweep_point(int kind, float *buf, size_t ws, int threads, int trials,
			  double min_s)
{
	double t, best = INFINITY;
	size_t counted = kind == 0 ? ws / sizeof(float) * sizeof(float)
				   : ws / (3 * sizeof(float)) * 3 * sizeof(float);
	/* Start from enough passes for min_s at 10 GB/s: on a busy machine the first call
	 * of a team can wait milliseconds for a core, and calibrating on that alone would
	 * leave small sizes with one pass per trial. */
	long reps = (long)(min_s * 1e10 / (double)ws) + 1;
	for (;;) {
		t = ocb_now_s();
		sweep_call(kind, buf, ws, reps, threads);
		t = ocb_now_s() - t;
		if (t >= min_s || reps > (1L << 40))
			break;
		double f = t > 0 ? 1.5 * min_s / t : 64.0;
		reps = (long)((double)reps * (f > 64.0 ? 64.0 : f < 2.0 ? 2.0 : f));
	}
	for (int r = 0; r < trials; r++) {
		t = ocb_now_s();
		sweep_call(kind, buf, ws, reps, threads);
		t = ocb_now_s() - t;
		if (t < best)
			best = t;
	}
	return best > 0 ? (double)counted * (double)reps / best * 1e-9 : NAN;
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

/* Appends one ceiling. method gets "quick; " in front for a --quick measurement (the
 * runner re-measures a full run's ceilings when the stored ones say "quick"). */
static int push(struct ocb_ceiling *out, size_t *n, size_t cap, const char *kind, int threads,
		double value, const char *unit, int quick, const char *method)
{
	if (*n >= cap)
		return ocb_seterr(OCB_ERUNTIME, "ceilings: more than %zu ceilings", cap);
	if (!(value > 0) || !isfinite(value))
		return OCB_OK; /* not measured (empty band): leave it out rather than store 0 */
	struct ocb_ceiling *c = &out[(*n)++];
	memset(c, 0, sizeof *c);
	snprintf(c->kind, sizeof c->kind, "%s", kind);
	c->threads = threads;
	c->value = value;
	snprintf(c->unit, sizeof c->unit, "%s", unit);
	snprintf(c->method, sizeof c->method, "%s%s", quick ? "quick; " : "", method);
	return OCB_OK;
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

/* The sweep for one thread count: both kernels over every size, then the plateaus. */
static int sweep(const struct ocb_machine *m, float *buf, size_t top, int threads, int quick,
		 struct ocb_ceiling *out, size_t *nout, size_t cap)
{
	size_t ws[MAX_SIZES];
	double val[2][MAX_SIZES];
	size_t n = 0;
	int trials = quick ? 3 : 5;
	double min_s = quick ? 0.002 : 0.004;
	size_t step = quick ? 4 : 2;
	struct ocb_bands b;
	int rc = OCB_OK;

	ocb_ceilings_bands(m, quick, &b);
	for (size_t s = 16 * KIB; s <= top && n < MAX_SIZES; s *= step)
		ws[n++] = s;
	if (ws[n - 1] != top && n < MAX_SIZES)
		ws[n++] = top; /* the DRAM point is always measured */
	for (int kind = 0; kind < 2; kind++)
		for (size_t i = 0; i < n; i++)
			val[kind][i] = sweep_point(kind, buf, ws[i], threads, trials, min_s);

	char lo[16], hi[16], method[160];
	fmt_size(lo, sizeof lo, (double)ws[0]);
	fmt_size(hi, sizeof hi, (double)ws[n - 1]);
	for (int kind = 0; kind < 2; kind++) {
		for (int l = 0; l < 4; l++) {
			char kname[32], blo[16], bhi[16];
			double v = ocb_ceilings_plateau(ws, val[kind], n, threads, b.lo[l], b.hi[l]);
			fmt_size(blo, sizeof blo, b.lo[l]);
			fmt_size(bhi, sizeof bhi, b.hi[l]);
			snprintf(kname, sizeof kname, "bw_%s%s", level_name[l], kind ? "_triad" : "");
			snprintf(method, sizeof method,
				 "%s sweep %s-%s x%zu, best of %d, %s; band %s-%s/thread, "
				 "median of top 3",
				 kind ? "triad" : "read", lo, hi, step, trials,
				 ocb_cpu_avx2() ? "AVX2" : "C", l == 0 ? "0" : blo,
				 l == 3 ? "max" : bhi);
			rc = push(out, nout, cap, kname, threads, v, "GB/s", quick, method);
			if (rc)
				return rc;
		}
	}
	return OCB_OK;
}

int ocb_ceilings_sgemm(int n, int threads, int trials, double *gflops)
{
	float *buf = NULL, *a, *b, *c;
	size_t nn = (size_t)n * (size_t)n;
	struct ocb_rng rng;
	double best = 0.0;
	int rc = OCB_OK;

	if (n <= 0 || trials <= 0)
		return ocb_seterr(OCB_EINVAL, "sgemm: n %d, trials %d", n, trials);
	buf = ocb_alloc(3 * nn * sizeof(float));
	if (!buf) {
		rc = OCB_ENOMEM;
		goto out;
	}
	a = buf;
	b = a + nn;
	c = b + nn;
	ocb_rng_seed(&rng, 42);
	for (size_t i = 0; i < 2 * nn; i++)
		buf[i] = 2.0f * ocb_rng_uniformf(&rng) - 1.0f;
	openblas_set_num_threads(threads > 0 ? threads : ocb_cpu_cores());
	for (int r = -1; r < trials; r++) { /* r = -1: warm-up (buffers, threads, pages) */
		double t = ocb_now_s();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n,
			    0.0f, c, n);
		t = ocb_now_s() - t;
		double g = 2.0 * (double)n * (double)n * (double)n / t * 1e-9;
		if (r >= 0 && g > best)
			best = g;
	}
	*gflops = best;
out:
	ocb_free(buf);
	return rc;
}

/* Buffers for the sweep and STREAM: posix_memalign rather than ocb_alloc, whose
 * single-threaded memset would touch every page before the kernels' parallel first
 * touch (ocb_stream_fill) could place them. */
static float *alloc_untouched(size_t bytes)
{
	void *p = NULL;
	if (posix_memalign(&p, OCB_ALIGN, ocb_round_up(bytes, OCB_ALIGN)) != 0) {
		ocb_seterr(OCB_ENOMEM, "cannot allocate %zu bytes", bytes);
		return NULL;
	}
	return p;
}

int ocb_ceilings_stream_triad(size_t n, int threads, int trials, double *gbs)
{
	float *buf = NULL;
	double best = INFINITY;
	int rc = OCB_OK;

	n = ocb_round_up(n, 16);
	if (n == 0 || trials < 2)
		return ocb_seterr(OCB_EINVAL, "STREAM triad: n %zu, trials %d (need >= 2)", n, trials);
	buf = alloc_untouched(3 * n * sizeof(float));
	if (!buf) {
		rc = OCB_ENOMEM;
		goto out;
	}
	/* a, b, c filled by the threads that will use them (STREAM's parallel init). */
	ocb_stream_fill(buf, n, 0.0f, 0.0f, threads);
	ocb_stream_fill(buf + n, n, 1.0f, 0.001f, threads);
	ocb_stream_fill(buf + 2 * n, n, 2.0f, 0.001f, threads);
	for (int r = 0; r < trials; r++) {
		double t = ocb_now_s();
		ocb_stream_triad(buf, buf + n, buf + 2 * n, 3.0f, n, 1, threads);
		t = ocb_now_s() - t;
		if (r > 0 && t < best) /* STREAM skips the first trial */
			best = t;
	}
	*gbs = 3.0 * sizeof(float) * (double)n / best * 1e-9;
out:
	free(buf);
	return rc;
}

int ocb_ceilings_measure(const struct ocb_machine *m, int threads_all, int quick,
			 struct ocb_ceiling **out, size_t *n)
{
	const size_t cap = 64;
	struct ocb_ceiling *c = NULL;
	float *buf = NULL;
	size_t nc = 0, top = 0;
	int tl[2] = {1, threads_all > 1 ? threads_all : 1};
	int nt = tl[1] > 1 ? 2 : 1;
	struct ocb_bands b;
	char method[160];
	int rc = OCB_OK;

	*out = NULL;
	*n = 0;
	c = calloc(cap, sizeof *c);
	if (!c) {
		rc = ocb_seterr(OCB_ENOMEM, "ceilings: no memory");
		goto out;
	}

	/* Compute: FMA kernel. */
	for (int i = 0; i < nt; i++) {
		double g = 0.0;
		int trials = quick ? 3 : 5;
		ocb_info("ceilings: FMA peak, %d thread(s)", tl[i]);
		rc = ocb_ceilings_fma(tl[i], trials, quick ? 0.02 : 0.05, &g);
		if (rc)
			goto out;
		snprintf(method, sizeof method,
			 "%s FMA kernel, %d independent %d-lane accumulators, best of %d",
			 ocb_cpu_avx2() ? "AVX2" : "plain-C", OCB_FMA_ACC, OCB_FMA_LANES, trials);
		if ((rc = push(c, &nc, cap, "flops_fp32", tl[i], g, "GFLOP/s", quick, method)))
			goto out;
	}

	/* Bandwidth sweep: one buffer of the largest working set, first-touched by all
	 * threads, reused for every size and both kernels. The top size puts every
	 * thread's slice in the DRAM band, capped at a quarter of memory and 2 GiB. */
	ocb_ceilings_bands(m, quick, &b);
	size_t cap_bytes = 2 * GIB;
	if (m->mem_bytes > 0 && (size_t)m->mem_bytes / 4 < cap_bytes)
		cap_bytes = (size_t)m->mem_bytes / 4;
	top = sweep_top(&b, tl[nt - 1], quick, cap_bytes);
	if ((double)top < b.lo[3] * tl[nt - 1])
		ocb_warn("ceilings: the largest sweep size (%zu MiB) is below the DRAM band of %d "
			 "threads (memory cap)", top / MIB, tl[nt - 1]);
	buf = alloc_untouched(top);
	if (!buf) {
		rc = OCB_ENOMEM;
		goto out;
	}
	ocb_stream_fill(buf, top / sizeof(float), 1.0f, 1.0f / 1024, tl[nt - 1]);
	for (int i = 0; i < nt; i++) {
		size_t topt = sweep_top(&b, tl[i], quick, top);
		ocb_info("ceilings: bandwidth sweep 16 KiB - %zu MiB, %d thread(s)", topt / MIB, tl[i]);
		if ((rc = sweep(m, buf, topt, tl[i], quick, c, &nc, cap)))
			goto out;
	}
	free(buf);
	buf = NULL;

	/* Compute: OpenBLAS sgemm (last: its pthreads spin for a while after each call and
	 * would steal the second core from the OpenMP kernels above). */
	int sn = quick ? 2048 : 4096;
	for (int i = 0; i < nt; i++) {
		double g = 0.0;
		int trials = quick ? 2 : 4;
		ocb_info("ceilings: OpenBLAS sgemm n=%d, %d thread(s)", sn, tl[i]);
		if ((rc = ocb_ceilings_sgemm(sn, tl[i], trials, &g)))
			goto out;
		snprintf(method, sizeof method,
			 "OpenBLAS cblas_sgemm n=%d row-major, warm-up + best of %d, core %s", sn,
			 trials, openblas_get_corename());
		if ((rc = push(c, &nc, cap, "flops_sgemm", tl[i], g, "GFLOP/s", quick, method)))
			goto out;
	}
	openblas_set_num_threads(tl[nt - 1]);

	*out = c;
	*n = nc;
	c = NULL;
out:
	free(buf);
	free(c);
	return rc;
}
