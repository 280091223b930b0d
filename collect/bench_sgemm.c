/* sgemm: OpenBLAS C = A B, square n x n x n, row-major fp32 (the dense baseline and
 * the 'flops_sgemm' ceiling's workload). params {"n": N}. Checked on sampled entries
 * against a plain double-precision dot product. */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_rng.h"
#include "suite_baseline.h"

#define SGEMM_CHECK_SAMPLES 64

struct sgemm_state {
	int n;
	float *a, *b, *c; /* views of buf: n x n each, row-major */
	float *buf;
	uint64_t seed;
};

static cJSON *sgemm_cases(const struct ocb_ctx *ctx)
{
	static const int full[] = {256, 1024, 2048, 4096}, quick[] = {256, 512};
	const int *sz = ctx->quick ? quick : full;
	size_t k = ctx->quick ? sizeof quick / sizeof quick[0] : sizeof full / sizeof full[0];
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < k; i++) {
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddNumberToObject(o, "n", sz[i])) {
			cJSON_Delete(o);
			cJSON_Delete(a);
			return NULL;
		}
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static int sgemm_n(const cJSON *params, int *n)
{
	double v = (double)ocb_pint(params, "n");
	if (!(v >= 1 && v <= 65536) || v != floor(v))
		return ocb_seterr(OCB_EINVAL, "sgemm: params.n must be a whole number 1..65536");
	*n = (int)v;
	return OCB_OK;
}

static int sgemm_setup(const cJSON *params, const struct ocb_ctx *ctx, void **state)
{
	struct sgemm_state *s = NULL;
	struct ocb_rng rng;
	int n = 0, rc;

	*state = NULL;
	if ((rc = sgemm_n(params, &n)))
		return rc;
	s = calloc(1, sizeof *s);
	if (!s)
		return ocb_seterr(OCB_ENOMEM, "sgemm: no memory");
	size_t nn = (size_t)n * (size_t)n;
	s->n = n;
	s->seed = ctx->seed;
	s->buf = ocb_alloc(3 * nn * sizeof(float));
	if (!s->buf) {
		free(s);
		return OCB_ENOMEM;
	}
	s->a = s->buf;
	s->b = s->a + nn;
	s->c = s->b + nn;
	ocb_rng_seed(&rng, ctx->seed);
	for (size_t i = 0; i < 2 * nn; i++)
		s->buf[i] = 2.0f * ocb_rng_uniformf(&rng) - 1.0f;
	openblas_set_num_threads(ocb_baseline_threads(ctx));
	*state = s;
	return OCB_OK;
}

static int sgemm_run(void *state)
{
	struct sgemm_state *s = state;
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->n, s->n, s->n, 1.0f, s->a, s->n,
		    s->b, s->n, 0.0f, s->c, s->n);
	return OCB_OK;
}

/* Runs once, then recomputes SGEMM_CHECK_SAMPLES random entries C[i][j] in double.
 * err = |C - ref| / sum_k |A_ik B_kj| (the scale fp32 rounding errors grow with), which
 * must stay below 16 eps sqrt(n): far above rounding, far below a wrong layout (~1). */
static int sgemm_check(void *state, double *err)
{
	struct sgemm_state *s = state;
	struct ocb_rng rng;
	int n = s->n, rc = sgemm_run(s);
	double worst = 0.0;
	if (rc)
		return rc;
	ocb_rng_seed(&rng, s->seed ^ 0x5eedc0ffeeULL);
	for (int t = 0; t < SGEMM_CHECK_SAMPLES; t++) {
		size_t i = ocb_rng_below(&rng, (uint64_t)n), j = ocb_rng_below(&rng, (uint64_t)n);
		double ref = 0.0, mag = 0.0;
		for (int k = 0; k < n; k++) {
			double p = (double)s->a[i * (size_t)n + (size_t)k] *
				   (double)s->b[(size_t)k * (size_t)n + j];
			ref += p;
			mag += fabs(p);
		}
		double e = fabs((double)s->c[i * (size_t)n + j] - ref) / (mag > 0 ? mag : 1.0);
		if (!(e <= worst)) /* also catches NaN */
			worst = isnan(e) ? INFINITY : e;
	}
	*err = worst;
	if (worst > 16.0 * FLT_EPSILON * sqrt((double)n))
		return ocb_seterr(OCB_ECHECK, "sgemm n=%d: relative error %.3g vs the double reference",
				  n, worst);
	return OCB_OK;
}

/* 2 n^3 flops; compulsory bytes: A and B read, C written, 3 n^2 x 4. The roofline with
 * OpenBLAS's own compute roof: large n is compute-bound by it, small n may be bound by
 * the bandwidth of the level the matrices live in. */
static int sgemm_work(const cJSON *params, struct ocb_work *w)
{
	int n = 0, rc = sgemm_n(params, &n);
	if (rc)
		return rc;
	double d = n;
	w->flops = 2.0 * d * d * d;
	w->bytes = 3.0 * d * d * sizeof(float);
	w->bound = NULL;
	w->compute = "flops_sgemm";
	return OCB_OK;
}

static const char *sgemm_variant(void *state)
{
	(void)state;
	return "openblas";
}

static void sgemm_teardown(void *state)
{
	struct sgemm_state *s = state;
	if (!s)
		return;
	ocb_free(s->buf);
	free(s);
}

/* Declared parameters (collect/params.h). */
static const struct ocb_param sgemm_params[] = {
	{"n", OCB_P_INT, "4096", 1, 65536, NULL, "elements", "m = n = k of C[n x n] = A B"},
	{0},
};

const struct ocb_bench ocb_bench_sgemm = {
	.name = "sgemm",
	.doc = "OpenBLAS sgemm C = A B, n x n x n fp32 row-major",
	.kind = OCB_KERNEL,
	.params = sgemm_params,
	.cases = sgemm_cases,
	.setup = sgemm_setup,
	.run = sgemm_run,
	.check = sgemm_check,
	.work = sgemm_work,
	.variant = sgemm_variant,
	.teardown = sgemm_teardown,
	.sweep_threads = 1,
};
