/* sgemv: OpenBLAS y = A x, A m x n fp32 row-major: the batch-1 matrix-vector product,
 * memory-bound (REFERENCE.md §2: its floor is matrix bytes / bandwidth). params
 * {"m": M, "n": N}. Checked on sampled rows against a double-precision dot product. */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_rng.h"
#include "suite_baseline.h"

#define SGEMV_CHECK_ROWS 64

struct sgemv_state {
	int m, n;
	float *a, *x, *y; /* views of buf: a m x n (copy 0), x n, y m */
	float *buf;
	uint64_t seed;
	/* A DRAM-level case rotates over `ncopies` copies of A (`astride` floats apart),
	 * enough to exceed ocb_roof_dram_cycle: no call finds A in the cache. */
	int ncopies, next;
	size_t astride;
};

/* Copies of A for this machine: 1 unless 4 m n + 4 (m + n) bytes are at the DRAM level
 * by the roofline module's rule (the same working set as sgemv_work's bound); then
 * floor(cycle / A) + 1 (their total exceeds ocb_roof_dram_cycle, the DRAM ceiling's
 * working sets), at most a quarter of memory and 64. */
static int sgemv_copies(const struct ocb_ctx *ctx, int m, int n)
{
	struct ocb_roof_caches mc;
	double a = 4.0 * m * (double)n, ws = a + 4.0 * ((double)m + n);
	ocb_machine_caches(ctx->machine, &mc);
	if (ocb_roof_level(&mc, ws, ocb_baseline_threads(ctx)) != OCB_LEVEL_DRAM)
		return 1;
	double c = floor(ocb_roof_dram_cycle(&mc, ocb_baseline_threads(ctx)) / a) + 1;
	if (ctx->machine && ctx->machine->mem_bytes > 0 && c * a > ctx->machine->mem_bytes / 4.0)
		c = floor(ctx->machine->mem_bytes / 4.0 / a);
	return c < 1 ? 1 : c > 64 ? 64 : (int)c;
}

static cJSON *sgemv_cases(const struct ocb_ctx *ctx)
{
	static const int full[][2] = {{4096, 4096}, {16384, 4096}};
	static const int quick[][2] = {{1024, 1024}, {4096, 1024}};
	const int(*sz)[2] = ctx->quick ? quick : full;
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < 2; i++) {
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddNumberToObject(o, "m", sz[i][0]) ||
		    !cJSON_AddNumberToObject(o, "n", sz[i][1])) {
			cJSON_Delete(o);
			cJSON_Delete(a);
			return NULL;
		}
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static int sgemv_shape(const cJSON *params, int *m, int *n)
{
	double vm = (double)ocb_pint(params, "m"), vn = (double)ocb_pint(params, "n");
	if (!(vm >= 1 && vm <= 1 << 20) || vm != floor(vm) || !(vn >= 1 && vn <= 1 << 20) ||
	    vn != floor(vn))
		return ocb_seterr(OCB_EINVAL, "sgemv: params.m and params.n must be whole numbers "
					      "1..1048576");
	if (vm * vn > 1e10)
		return ocb_seterr(OCB_EINVAL, "sgemv: m x n = %.0f is too large", vm * vn);
	*m = (int)vm;
	*n = (int)vn;
	return OCB_OK;
}

static int sgemv_setup(const cJSON *params, const struct ocb_ctx *ctx, void **state)
{
	struct sgemv_state *s = NULL;
	struct ocb_rng rng;
	int m = 0, n = 0, rc;

	*state = NULL;
	if ((rc = sgemv_shape(params, &m, &n)))
		return rc;
	s = calloc(1, sizeof *s);
	if (!s)
		return ocb_seterr(OCB_ENOMEM, "sgemv: no memory");
	size_t mn = (size_t)m * (size_t)n;
	s->m = m;
	s->n = n;
	s->seed = ctx->seed;
	s->ncopies = sgemv_copies(ctx, m, n);
	s->astride = ocb_round_up(mn, 16);
	size_t na = s->astride * (size_t)s->ncopies;
	/* Every copy and x start on a 64-byte boundary (ocb_alloc aligns buf). */
	s->buf = ocb_alloc((na + (size_t)n + (size_t)m) * sizeof(float));
	if (!s->buf) {
		free(s);
		return OCB_ENOMEM;
	}
	s->a = s->buf;
	s->x = s->a + na;
	s->y = s->x + n;
	ocb_rng_seed(&rng, ctx->seed);
	for (size_t i = 0; i < mn; i++)
		s->a[i] = 2.0f * ocb_rng_uniformf(&rng) - 1.0f;
	for (size_t i = 0; i < (size_t)n; i++)
		s->x[i] = 2.0f * ocb_rng_uniformf(&rng) - 1.0f;
	for (int c = 1; c < s->ncopies; c++)
		memcpy(s->a + (size_t)c * s->astride, s->a, mn * sizeof(float));
	openblas_set_num_threads(ocb_baseline_threads(ctx));
	*state = s;
	return OCB_OK;
}

static int sgemv_run(void *state)
{
	struct sgemv_state *s = state;
	const float *a = s->a + (size_t)s->next * s->astride; /* the copies are identical */
	if (++s->next == s->ncopies)
		s->next = 0;
	cblas_sgemv(CblasRowMajor, CblasNoTrans, s->m, s->n, 1.0f, a, s->n, s->x, 1, 0.0f, s->y, 1);
	return OCB_OK;
}

/* Runs once, then recomputes SGEMV_CHECK_ROWS random rows in double; error relative to
 * sum_j |A_ij x_j|, limit 16 eps sqrt(n) (see bench_sgemm.c). */
static int sgemv_check(void *state, double *err)
{
	struct sgemv_state *s = state;
	struct ocb_rng rng;
	double worst = 0.0;
	int rc = sgemv_run(s);
	if (rc)
		return rc;
	ocb_rng_seed(&rng, s->seed ^ 0x5eedc0ffeeULL);
	for (int t = 0; t < SGEMV_CHECK_ROWS; t++) {
		size_t i = ocb_rng_below(&rng, (uint64_t)s->m);
		const float *row = s->a + i * (size_t)s->n;
		double ref = 0.0, mag = 0.0;
		for (int j = 0; j < s->n; j++) {
			double p = (double)row[j] * (double)s->x[j];
			ref += p;
			mag += fabs(p);
		}
		double e = fabs((double)s->y[i] - ref) / (mag > 0 ? mag : 1.0);
		if (!(e <= worst))
			worst = isnan(e) ? INFINITY : e;
	}
	*err = worst;
	if (worst > 16.0 * FLT_EPSILON * sqrt((double)s->n))
		return ocb_seterr(OCB_ECHECK, "sgemv %dx%d: relative error %.3g vs the double "
					      "reference", s->m, s->n, worst);
	return OCB_OK;
}

/* 2 m n flops; bytes: A once (4 m n), x read and y written (4 (m + n)). The roofline,
 * its memory level from these bytes against this machine's caches (common/ocb_roofline.h):
 * no size constant here. */
static int sgemv_work(const cJSON *params, struct ocb_work *w)
{
	int m = 0, n = 0, rc = sgemv_shape(params, &m, &n);
	if (rc)
		return rc;
	w->flops = 2.0 * m * (double)n;
	w->bytes = 4.0 * m * (double)n + 4.0 * ((double)m + n);
	w->bound = NULL;
	w->compute = "flops_fp32";
	return OCB_OK;
}

static const char *sgemv_variant(void *state)
{
	(void)state;
	return "openblas";
}

static void sgemv_teardown(void *state)
{
	struct sgemv_state *s = state;
	if (!s)
		return;
	ocb_free(s->buf);
	free(s);
}

/* Declared parameters (collect/params.h). */
static const struct ocb_param sgemv_params[] = {
	{"m", OCB_P_INT, "4096", 1, 1 << 20, NULL, "elements", "rows of A (length of y)"},
	{"n", OCB_P_INT, "4096", 1, 1 << 20, NULL, "elements", "columns of A (length of x)"},
	{0},
};

const struct ocb_bench ocb_bench_sgemv = {
	.name = "sgemv",
	.doc = "OpenBLAS sgemv y = A x, A m x n fp32 row-major (memory-bound)",
	.kind = OCB_KERNEL,
	.params = sgemv_params,
	.cases = sgemv_cases,
	.setup = sgemv_setup,
	.run = sgemv_run,
	.check = sgemv_check,
	.work = sgemv_work,
	.variant = sgemv_variant,
	.teardown = sgemv_teardown,
	.sweep_threads = 1,
};
