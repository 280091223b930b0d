/* canary: see canary.h. The L3/DRAM reads reuse kernels/stream (ocb_stream_sum), the FMA
 * loop kernels/peak_fma, the sgemm OpenBLAS: the canaries measure the machine with the
 * same code paths the benches do. */
#include "canary.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_time.h"
#include "../kernels/peak_fma.h"
#include "../kernels/stream.h"
#include "ceilings.h"

const char *const ocb_canary_name[OCB_CANARY_N] = {"canary_fma", "canary_read_l3",
						   "canary_read_dram", "canary_sgemm"};
const char *const ocb_canary_unit[OCB_CANARY_N] = {"GFLOP/s", "GB/s", "GB/s", "GFLOP/s"};
const char *const ocb_canary_point[OCB_CANARY_NPOINT] = {"start", "mid", "end"};

/* Keeps the compiler from dropping a result. */
static volatile double canary_sink;

void ocb_canary_plan(const struct ocb_machine *m, struct ocb_canary_plan *p)
{
	ocb_canary_plan_mode(m, 0, p);
}

void ocb_canary_plan_mode(const struct ocb_machine *m, int quick, struct ocb_canary_plan *p)
{
	struct ocb_bands b;
	ocb_ceilings_bands(m, quick, &b);
	p->threads = m->cores > 0 ? m->cores : 1;
	/* L3: geometric middle of the per-thread band; an empty band (no L3 known) takes its
	 * lower edge, 2 x L2, which still lies past L2. */
	double l3 = b.lo[2] <= b.hi[2] ? sqrt(b.lo[2] * b.hi[2]) : b.lo[2];
	p->l3_floats = ocb_round_up((size_t)(l3 * p->threads / sizeof(float)), 1024);
	/* DRAM: the band's lower edge (>= 4 per-thread L3 shares), for the whole team. */
	p->dram_floats = ocb_round_up((size_t)(b.lo[3] / sizeof(float)), 1024);
	double l2 = m->l2_bytes > 0 ? (double)m->l2_bytes : 2 * b.hi[1];
	int n = (int)sqrt(l2 / (3.0 * sizeof(float))) / 16 * 16;
	p->sgemm_n = n < 16 ? 16 : n;
}

/* One timed call of canary k with `reps`; returns seconds, *work its flops or bytes. */
static double call(struct ocb_canaries *c, int k, long reps, double *work)
{
	const struct ocb_canary_plan *p = &c->plan;
	double t0 = ocb_now_s(), w = 0;
	switch (k) {
	case OCB_CANARY_FMA: {
		double s = 0;
		w = ocb_peak_fma(reps, p->threads, &s);
		canary_sink = s;
		break;
	}
	case OCB_CANARY_L3:
		canary_sink = ocb_stream_sum(c->l3, p->l3_floats, reps, p->threads);
		w = 4.0 * (double)p->l3_floats * (double)reps;
		break;
	case OCB_CANARY_DRAM:
		canary_sink = ocb_stream_sum(c->dram, p->dram_floats, reps, p->threads);
		w = 4.0 * (double)p->dram_floats * (double)reps;
		break;
	default: {
		int n = p->sgemm_n;
		size_t nn = (size_t)n * (size_t)n;
		for (long r = 0; r < reps; r++)
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
				    c->mat, n, c->mat + nn, n, 0.0f, c->mat + 2 * nn, n);
		canary_sink = c->mat[2 * nn - 1];
		w = 2.0 * (double)n * n * n * (double)reps;
	}
	}
	*work = w;
	return ocb_now_s() - t0;
}

/* Doubles reps from 1 until one call lasts OCB_CANARY_CALL_S (FMA starts at 4096
 * iterations: one iteration is a few ns). */
static long calibrate(struct ocb_canaries *c, int k)
{
	long reps = k == OCB_CANARY_FMA ? 4096 : 1;
	double w;
	call(c, k, reps, &w); /* warm: first touch, OpenBLAS threads */
	while (call(c, k, reps, &w) < OCB_CANARY_CALL_S && reps < (1L << 40))
		reps *= 2;
	return reps;
}

int ocb_canaries_init(struct ocb_canaries *c, const struct ocb_machine *m)
{
	return ocb_canaries_init_mode(c, m, 0);
}

int ocb_canaries_init_mode(struct ocb_canaries *c, const struct ocb_machine *m, int quick)
{
	return ocb_canaries_init_reps(c, m, quick, NULL);
}

int ocb_canaries_init_reps(struct ocb_canaries *c, const struct ocb_machine *m, int quick,
			   const long reps[OCB_CANARY_N])
{
	memset(c, 0, sizeof *c);
	ocb_canary_plan_mode(m, quick, &c->plan);
	const struct ocb_canary_plan *p = &c->plan;
	size_t nn = (size_t)p->sgemm_n * (size_t)p->sgemm_n;
	c->l3 = ocb_alloc(p->l3_floats * sizeof(float));
	c->dram = ocb_alloc(p->dram_floats * sizeof(float));
	c->mat = ocb_alloc(3 * nn * sizeof(float));
	if (!c->l3 || !c->dram || !c->mat) {
		ocb_canaries_release(c);
		return ocb_seterr(OCB_ENOMEM, "canaries: %zu + %zu floats", p->l3_floats,
				  p->dram_floats);
	}
	/* Filled by the threads that read them (first touch). */
	ocb_stream_fill(c->l3, p->l3_floats, 1.0f, 1e-3f, p->threads);
	ocb_stream_fill(c->dram, p->dram_floats, 1.0f, 1e-3f, p->threads);
	struct ocb_rng rng;
	ocb_rng_seed(&rng, 1);
	for (size_t i = 0; i < 2 * nn; i++)
		c->mat[i] = 2.0f * ocb_rng_uniformf(&rng) - 1.0f;
	openblas_set_num_threads(p->threads);
	for (int k = 0; k < OCB_CANARY_N; k++)
		c->reps[k] = reps && reps[k] > 0 ? reps[k] : calibrate(c, k);
	return OCB_OK;
}

void ocb_canaries_release(struct ocb_canaries *c)
{
	ocb_free(c->l3);
	ocb_free(c->dram);
	ocb_free(c->mat);
	c->l3 = c->dram = c->mat = NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int ocb_canaries_measure(struct ocb_canaries *c, double rate[OCB_CANARY_N])
{
	double r[OCB_CANARY_N][OCB_CANARY_TRIALS];
	openblas_set_num_threads(c->plan.threads);
	/* Trials interleave the canaries, so a short disturbance hits one trial of each
	 * rather than every trial of one. */
	for (int t = 0; t < OCB_CANARY_TRIALS; t++)
		for (int k = 0; k < OCB_CANARY_N; k++) {
			double w, s = call(c, k, c->reps[k], &w);
			r[k][t] = s > 0 ? w / s * 1e-9 : NAN;
		}
	for (int k = 0; k < OCB_CANARY_N; k++) {
		qsort(r[k], OCB_CANARY_TRIALS, sizeof(double), cmp_double);
		rate[k] = r[k][OCB_CANARY_TRIALS / 2];
	}
	return OCB_OK;
}

void ocb_canary_drift(const double rate[OCB_CANARY_NPOINT][OCB_CANARY_N], double threshold,
		      struct ocb_canary_drift *d)
{
	double worst = -1;
	d->worst_k = -1;
	d->drifted = 0;
	for (int k = 0; k < OCB_CANARY_N; k++) {
		d->ratio[k] = NAN;
		double best = -1;
		for (int pt = OCB_CANARY_MID; pt < OCB_CANARY_NPOINT; pt++) {
			double r = rate[OCB_CANARY_START][k] / rate[pt][k];
			if (!(r > 0) || isinf(r))
				continue;
			if (fabs(log(r)) > best) {
				best = fabs(log(r));
				d->ratio[k] = r;
			}
		}
		if (best > worst) {
			worst = best;
			d->worst_k = k;
		}
	}
	if (d->worst_k >= 0)
		d->drifted = worst > log1p(threshold);
}

void ocb_canary_between(const double base[OCB_CANARY_N], const double cand[OCB_CANARY_N],
			double ratio[OCB_CANARY_N])
{
	for (int k = 0; k < OCB_CANARY_N; k++)
		ratio[k] = base[k] / cand[k];
}
