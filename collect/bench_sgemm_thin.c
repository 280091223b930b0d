/* sgemm_thin: OpenBLAS C[m x n] = A[m x k] B[k x n], row-major fp32, with one thin
 * operand: n = 1..128 columns, the shapes of batched decode (a weight matrix A applied
 * to a batch of n token vectors). n = 1 is a GEMV through the GEMM path; as n grows the
 * product moves from the memory roof (A streamed once per call) toward OpenBLAS's own
 * compute roof. Checked on a few rows against a plain double-precision loop (_ref).
 *
 * Two threads can be slower than one here, and that is OpenBLAS's own doing: flagged,
 * not fixed. A small program with no OpenMP (only cblas_sgemm, row-major as here, best of
 * 30 calls, OpenBLAS 0.3.21 pthread, Zen 5 VM, 4 Dec 2026) timed m = k = 1024 at 2
 * threads 1.9-2.4x slower than at 1 for n = 4, 8 and 16 (n = 8: 494 against 252 us),
 * 1.3x for n = 32, 1.0x for n = 64, while n = 1 and 2 ran 0.57-0.59x; at m = k = 4096,
 * n = 4 to 16 ran 1.00-1.09x. OMP_WAIT_POLICY=passive and OPENBLAS_THREAD_TIMEOUT=4
 * changed nothing in ocbench's runs, so neither our threads nor OpenBLAS's idle
 * workers are the cause: it is how OpenBLAS runs this shape (in its column-major terms
 * M = n, tiny) on two threads. */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "suite_baseline.h"

#define THIN_CHECK_ROWS 4

struct thin_state {
	int m, k, n;
	float *a, *b, *c; /* views of buf: m x k, k x n, m x n, row-major */
	float *buf;
	uint64_t seed;
};

static const struct ocb_param thin_params[] = {
	{"m", OCB_P_INT, "4096", 1, 1 << 20, NULL, "rows", "rows of A and C (weight outputs)"},
	{"k", OCB_P_INT, "4096", 1, 1 << 20, NULL, "elements", "columns of A, rows of B"},
	{"n", OCB_P_INT, "1", 1, 4096, NULL, "columns", "columns of B and C (the batch)"},
	{0},
};

/* full: m = k = 4096, n = 1, 2, 4 ... 128; quick: m = k = 1024, n = 1, 8, 64. */
static cJSON *thin_cases(const struct ocb_ctx *ctx)
{
	static const int full[] = {1, 2, 4, 8, 16, 32, 64, 128}, quick[] = {1, 8, 64};
	const int *ns = ctx->quick ? quick : full, mk = ctx->quick ? 1024 : 4096;
	size_t cnt = ctx->quick ? sizeof quick / sizeof *quick : sizeof full / sizeof *full;
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < cnt; i++) {
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddNumberToObject(o, "m", mk) ||
		    !cJSON_AddNumberToObject(o, "k", mk) || !cJSON_AddNumberToObject(o, "n", ns[i])) {
			cJSON_Delete(o);
			cJSON_Delete(a);
			return NULL;
		}
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static int thin_setup(const cJSON *params, const struct ocb_ctx *ctx, void **state)
{
	struct ocb_rng rng;
	struct thin_state *s = calloc(1, sizeof *s);
	*state = NULL;
	if (!s)
		return ocb_seterr(OCB_ENOMEM, "sgemm_thin: no memory");
	s->m = (int)ocb_pint(params, "m");
	s->k = (int)ocb_pint(params, "k");
	s->n = (int)ocb_pint(params, "n");
	s->seed = ctx->seed;
	size_t na = (size_t)s->m * s->k, nb = (size_t)s->k * s->n, nc = (size_t)s->m * s->n;
	if (s->m < 1 || s->k < 1 || s->n < 1 || !(s->buf = ocb_alloc((na + nb + nc) * sizeof(float)))) {
		free(s);
		return ocb_seterr(OCB_EINVAL, "sgemm_thin: shape m, k, n >= 1 that fits in memory");
	}
	s->a = s->buf;
	s->b = s->a + na;
	s->c = s->b + nb;
	ocb_rng_seed(&rng, ctx->seed);
	for (size_t i = 0; i < na + nb; i++)
		s->buf[i] = 2.0f * ocb_rng_uniformf(&rng) - 1.0f;
	openblas_set_num_threads(ocb_baseline_threads(ctx));
	*state = s;
	return OCB_OK;
}

static int thin_run(void *state)
{
	struct thin_state *s = state;
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->m, s->n, s->k, 1.0f, s->a, s->k,
		    s->b, s->n, 0.0f, s->c, s->n);
	return OCB_OK;
}

/* The _ref twin on one row i of C: ref[j] = sum_k A[i][k] B[k][j] in double, and the
 * magnitude sum_k |A[i][k] B[k][j]| that fp32 rounding errors scale with. */
static void thin_row_ref(const struct thin_state *s, size_t i, double *ref, double *mag)
{
	for (int j = 0; j < s->n; j++)
		ref[j] = mag[j] = 0.0;
	for (int kk = 0; kk < s->k; kk++) {
		double a = s->a[i * (size_t)s->k + (size_t)kk];
		const float *brow = s->b + (size_t)kk * (size_t)s->n;
		for (int j = 0; j < s->n; j++) {
			ref[j] += a * (double)brow[j];
			mag[j] += fabs(a * (double)brow[j]);
		}
	}
}

/* Runs once, then compares THIN_CHECK_ROWS random rows (every column) with the _ref
 * twin: err = |C - ref| / magnitude, limit 16 eps sqrt(k) as for sgemm. */
static int thin_check(void *state, double *err)
{
	struct thin_state *s = state;
	struct ocb_rng rng;
	double worst = 0.0, *ref = malloc(2 * (size_t)s->n * sizeof *ref);
	int rc = ref ? thin_run(s) : ocb_seterr(OCB_ENOMEM, "sgemm_thin: check");
	ocb_rng_seed(&rng, s->seed ^ 0x7417c0ffeeULL);
	for (int t = 0; rc == OCB_OK && t < THIN_CHECK_ROWS; t++) {
		size_t i = ocb_rng_below(&rng, (uint64_t)s->m);
		thin_row_ref(s, i, ref, ref + s->n);
		for (int j = 0; j < s->n; j++) {
			double mag = ref[s->n + j] > 0 ? ref[s->n + j] : 1.0;
			double e = fabs((double)s->c[i * (size_t)s->n + (size_t)j] - ref[j]) / mag;
			if (!(e <= worst)) /* also catches NaN */
				worst = isnan(e) ? INFINITY : e;
		}
	}
	free(ref);
	*err = worst;
	if (rc == OCB_OK && worst > 16.0 * FLT_EPSILON * sqrt((double)s->k))
		rc = ocb_seterr(OCB_ECHECK, "sgemm_thin %dx%dx%d: relative error %.3g vs the double "
				"reference", s->m, s->k, s->n, worst);
	return rc;
}

/* 2 m k n flops; compulsory bytes: A and B read, C written, 4 (m k + k n + m n). The
 * roofline with OpenBLAS's compute roof; the memory level from the working set (the
 * roofline module): at small n the A stream bounds it, at large n the compute roof. */
static int thin_work(const cJSON *params, struct ocb_work *w)
{
	double m = (double)ocb_pint(params, "m"), k = (double)ocb_pint(params, "k");
	double n = (double)ocb_pint(params, "n");
	if (!(m >= 1 && k >= 1 && n >= 1))
		return ocb_seterr(OCB_EINVAL, "sgemm_thin: m, k, n must be >= 1");
	w->flops = 2.0 * m * k * n;
	w->bytes = 4.0 * (m * k + k * n + m * n);
	w->bound = NULL;
	w->compute = "flops_sgemm";
	return OCB_OK;
}

static const char *thin_variant(void *state)
{
	(void)state;
	return "openblas";
}

static void thin_teardown(void *state)
{
	struct thin_state *s = state;
	if (s)
		ocb_free(s->buf);
	free(s);
}

const struct ocb_bench ocb_bench_sgemm_thin = {
	.name = "sgemm_thin",
	.doc = "OpenBLAS sgemm C[m x n] = A[m x k] B[k x n], thin n = 1..128 (batched decode)",
	.kind = OCB_KERNEL,
	.params = thin_params,
	.cases = thin_cases,
	.setup = thin_setup,
	.run = thin_run,
	.check = thin_check,
	.work = thin_work,
	.variant = thin_variant,
	.teardown = thin_teardown,
	.sweep_threads = 1,
};
