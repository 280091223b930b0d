/* bench_ternary_gemm: the forward product of low-bit training (kernels/tern_gemm.h),
 * Y[n][m] = Xq[n][k] Wq^T with int8 activations (per-token absmax, blocks of 256) and int8
 * weight codes, as a kernel case of suite `ternary`:
 *   impl "int8"    8-bit codes through tg_gemm (blocked: AVX-512 VNNI / AVX-VNNI / AVX2
 *                  int16 / _ref by CPU; the variant names the path)
 *   impl "ternary" codes in {-1,0,1} through tg_gemm_lowbit (VNNI paths / AVX2 maddubs)
 *   impl "sgemm"   OpenBLAS sgemm on the same shape in fp32 (the reference point)
 * Work: 2 n m k (int8 multiply-adds x 2, the unit of the ops_int8 roof; sgemm: FLOPs on
 * flops_sgemm). Checked against tg_gemm_ref (int8 paths; exact integers, so the error is
 * fp32 summation only) or a double product on a few rows (sgemm). */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../kernels/tern_gemm.h"
#include "bench.h"

struct tstate {
	int n, m, k, threads, impl; /* impl: 0 int8, 1 ternary, 2 sgemm */
	float *x, *xd, *w, *y;
	int8_t *xq, *wq;
};

static const char *const impls[] = {"int8", "ternary", "sgemm", NULL};

static int impl_of(const cJSON *p)
{
	const char *s = ocb_pstr(p, "impl");
	for (int i = 0; impls[i]; i++)
		if (!strcmp(s, impls[i]))
			return i;
	return 0;
}

static void add_case(cJSON *a, int n, int m, int k, const char *impl)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddNumberToObject(c, "n", n);
	cJSON_AddNumberToObject(c, "m", m);
	cJSON_AddNumberToObject(c, "k", k);
	cJSON_AddStringToObject(c, "impl", impl);
	cJSON_AddItemToArray(a, c);
}

/* 1024 x 1024 x 256 (the shape) and the MLP's first layer at batch 256; quick:
 * 512 x 512 x 256. Each shape in all three impls. The quick shape was 256^3 until 4 Dec
 * 2026: 3.4e7 int8 ops, under the two threads' worth (2 x 3.2e7, tern_tile.c's
 * TG_OPS_PER_THREAD) at which the tiled kernel takes a second thread, so its 2-thread
 * case ran on one and was flagged slower than the 1-thread one (x1.00-1.03). */
static cJSON *cases(const struct ocb_ctx *ctx)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; impls[i] && a; i++) {
		if (ctx && ctx->quick) {
			add_case(a, 512, 512, 256, impls[i]);
			continue;
		}
		add_case(a, 1024, 1024, 256, impls[i]);
		add_case(a, 256, 512, 784, impls[i]);
	}
	return a;
}

static void teardown(void *st)
{
	struct tstate *s = st;
	if (!s)
		return;
	ocb_free(s->x), ocb_free(s->xd), ocb_free(s->w), ocb_free(s->y);
	ocb_free(s->xq), ocb_free(s->wq);
	free(s);
}

static int setup(const cJSON *p, const struct ocb_ctx *ctx, void **out)
{
	struct tstate *s = calloc(1, sizeof *s);
	struct ocb_rng r;
	*out = NULL;
	if (!s)
		return ocb_seterr(OCB_ENOMEM, "ternary_gemm: out of memory");
	s->n = (int)ocb_pint(p, "n"), s->m = (int)ocb_pint(p, "m"), s->k = (int)ocb_pint(p, "k");
	s->impl = impl_of(p);
	s->threads = ctx->threads;
	int ldk = tg_ldk(s->k), nb = tg_nblk(s->k);
	s->x = ocb_alloc((size_t)s->n * s->k * 4);
	s->xd = ocb_alloc((size_t)s->n * nb * 4);
	s->w = ocb_alloc((size_t)s->m * s->k * 4);
	s->y = ocb_alloc((size_t)s->n * s->m * 4);
	s->xq = ocb_alloc((size_t)s->n * ldk);
	s->wq = ocb_alloc((size_t)s->m * ldk);
	if (!s->x || !s->xd || !s->w || !s->y || !s->xq || !s->wq) {
		teardown(s);
		return ocb_seterr(OCB_ENOMEM, "ternary_gemm: out of memory");
	}
	ocb_rng_seed(&r, ctx->seed);
	for (size_t i = 0; i < (size_t)s->n * s->k; i++)
		s->x[i] = (float)ocb_rng_normal(&r);
	int lim = s->impl == 1 ? 1 : 127;
	for (int j = 0; j < s->m; j++)
		for (int t = 0; t < s->k; t++) {
			int c = (int)ocb_rng_below(&r, (uint64_t)(2 * lim + 1)) - lim;
			s->wq[(size_t)j * ldk + t] = (int8_t)c;
			s->w[(size_t)j * s->k + t] = (float)c * 0.01f;
		}
	tg_quant_act(s->x, s->n, s->k, s->xq, s->xd);
	*out = s;
	return OCB_OK;
}

static int run(void *st)
{
	struct tstate *s = st;
	if (s->impl == 0)
		tg_gemm(s->xq, s->xd, s->n, s->wq, 0.01f, s->m, s->k, s->y, s->threads);
	else if (s->impl == 1)
		tg_gemm_lowbit(s->xq, s->xd, s->n, s->wq, 0.01f, s->m, s->k, s->y, s->threads);
	else
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s->n, s->m, s->k, 1.0f, s->x,
			    s->k, s->w, s->k, 0.0f, s->y, s->m);
	return OCB_OK;
}

static int check(void *st, double *err)
{
	struct tstate *s = st;
	int rows = s->n < 8 ? s->n : 8, rc = run(s);
	float *ref = malloc((size_t)rows * s->m * sizeof(float));
	*err = 0.0;
	if (rc || !ref) {
		free(ref);
		return rc ? rc : ocb_seterr(OCB_ENOMEM, "ternary_gemm: out of memory");
	}
	if (s->impl < 2) {
		tg_gemm_ref(s->xq, s->xd, rows, s->wq, 0.01f, s->m, s->k, ref, 1);
	} else {
		for (int i = 0; i < rows; i++)
			for (int j = 0; j < s->m; j++) {
				double d = 0.0;
				for (int t = 0; t < s->k; t++)
					d += (double)s->x[(size_t)i * s->k + t] * s->w[(size_t)j * s->k + t];
				ref[(size_t)i * s->m + j] = (float)d;
			}
	}
	double num = 0.0, den = 0.0;
	for (size_t i = 0; i < (size_t)rows * s->m; i++) {
		num = fmax(num, fabs((double)s->y[i] - ref[i]));
		den = fmax(den, fabs((double)ref[i]));
	}
	*err = den > 0 ? num / den : num;
	free(ref);
	return OCB_OK;
}

static int work(const cJSON *p, struct ocb_work *w)
{
	int n = (int)ocb_pint(p, "n"), m = (int)ocb_pint(p, "m"), k = (int)ocb_pint(p, "k");
	int sg = impl_of(p) == 2;
	w->flops = tg_gemm_ops(n, m, k);
	/* int8: activations + codes + fp32 out; sgemm: fp32 everything */
	w->bytes = sg ? 4.0 * ((double)n * k + (double)m * k + (double)n * m)
		      : (double)n * k + (double)m * k + 4.0 * n * m;
	w->compute = sg ? "flops_sgemm" : "ops_int8";
	w->bound = w->compute;
	return OCB_OK;
}

/* struct ocb_bench .team: the threads the tiled kernel runs this shape on where fewer
 * than asked (OpenBLAS decides its own: 0) */
static int team(void *st)
{
	struct tstate *s = st;
	if (s->impl == 2)
		return 0;
	const int t = tg_gemm_team(s->impl == 1, s->n, s->m, s->k, s->threads);
	return t < s->threads ? t : 0;
}

static const char *variant(void *st)
{
	struct tstate *s = st;
	return s->impl == 2 ? "openblas" : tg_gemm_path(s->impl == 1);
}

static const struct ocb_param params[] = {
	{"n", OCB_P_INT, "1024", 1, 65536, NULL, "rows", "activation rows (tokens x batch)"},
	{"m", OCB_P_INT, "1024", 1, 65536, NULL, "rows", "weight rows (outputs)"},
	{"k", OCB_P_INT, "256", 1, 65536, NULL, "columns", "inner dimension"},
	{"impl", OCB_P_ENUM, "\"int8\"", 0, 0, impls, "",
	 "int8 codes (tg_gemm), ternary codes (tg_gemm_lowbit) or fp32 sgemm"},
	{0},
};

const struct ocb_bench ocb_bench_ternary_gemm = {
	.name = "ternary_gemm",
	.doc = "low-bit training forward GEMM: int8 / ternary codes x int8 activations vs sgemm "
	       "(ops_int8 roof)",
	.kind = OCB_KERNEL,
	.params = params,
	.cases = cases,
	.setup = setup,
	.run = run,
	.check = check,
	.work = work,
	.variant = variant,
	.teardown = teardown,
	.team = team,
	.sweep_threads = 1,
};
