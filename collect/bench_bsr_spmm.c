/* bsr_spmm: Y[m x n] = W X with W block-sparse (kernels/bsr.h), and its peers on the same
 * matrix in the same run: `peer` "bsr" (our kernels; variant avx512/avx2/ref), "openblas"
 * (sgemm on the dense equivalent, same shapes and threads) and "librsb" (its SpMM after its own
 * autotuning, kernels/rsb_peer.h; tuning time printed and kept out of the timed region).
 * W: a random block mask of `density` percent of the block x block blocks (seeded), values
 * uniform in [-0.5, 0.5]; X likewise. Checked against a double-precision _ref on a few
 * rows. Work: the useful FLOPs (2 nnz n) for bsr and librsb, 2 m k n for openblas.
 * Set-up times (never timed) are stored as final metrics of the workload
 * "bsr_spmm:<peer>:<m>x<k>x<n>:b<B>:d<density>:t<threads>", identity kind "bsr_spmm_setup"
 * (peer, m, k, n, block, density, threads): convert_time (dense -> BSR, s), and for
 * librsb librsb_build_time, librsb_tune_time (s) and librsb_tune_speedup (its estimate). */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_log.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_time.h"
#include "../kernels/bsr.h"
#include "../kernels/rsb_peer.h"
#include "suite_baseline.h"

static const char *const peers[] = {"bsr", "openblas", "librsb", NULL};

static const struct ocb_param bsr_params[] = {
	{"m", OCB_P_INT, "4096", 4, 1 << 16, NULL, "rows", "rows of W and Y"},
	{"k", OCB_P_INT, "4096", 4, 1 << 16, NULL, "elements", "columns of W, rows of X"},
	{"n", OCB_P_INT, "128", 1, 4096, NULL, "columns", "columns of X and Y"},
	{"block", OCB_P_INT, "32", 4, 64, NULL, "elements", "square block side: 4, 8, 16, 32, 64"},
	{"density", OCB_P_FLOAT, "10", 0.1, 100, NULL, "%", "percent of blocks stored"},
	{"peer", OCB_P_ENUM, "\"bsr\"", 0, 0, peers, "", "bsr (ours), openblas (dense), librsb"},
	{0},
};

struct bsr_state {
	int m, k, n, peer; /* peer: index in peers[] */
	float *w, *x, *y;  /* dense W (openblas and the check), X, Y */
	struct ocb_bsr s;
	struct ocb_rsb r;
	int threads, have_rsb;
	uint64_t seed;
};

/* full: the headline 4096 x 4096 x 128, 32x32 blocks at 10 and 5% with all three peers;
 * the density x block sweep at 2048 x 2048 x 128 (bsr; the dense line once; librsb at
 * 32x32 up to 50%: its tuning takes 5-30 s above); an n sweep. quick: 512 x 512 x 32. */
static cJSON *bsr_cases(const struct ocb_ctx *ctx)
{
	static const double dens[] = {100, 50, 30, 20, 10, 5};
	static const int blocks[] = {8, 16, 32, 64}, ns[] = {1, 16, 512};
	char buf[160];
	cJSON *a = cJSON_CreateArray();
#define ADD(...)                                                                        \
	do {                                                                            \
		snprintf(buf, sizeof buf, __VA_ARGS__);                                 \
		cJSON *o = cJSON_Parse(buf);                                            \
		if (!o || !a) {                                                         \
			cJSON_Delete(o);                                                \
			cJSON_Delete(a);                                                \
			return NULL;                                                    \
		}                                                                       \
		cJSON_AddItemToArray(a, o);                                             \
	} while (0)
	if (ctx->quick) {
		for (int p = 0; p < 3; p++)
			ADD("{\"m\":512,\"k\":512,\"n\":32,\"block\":32,\"density\":10,\"peer\":\"%s\"}",
			    peers[p]);
		ADD("{\"m\":512,\"k\":512,\"n\":32,\"block\":16,\"density\":50,\"peer\":\"bsr\"}");
		return a;
	}
	for (int d = 4; d < 6; d++)
		for (int p = 0; p < 3; p++)
			ADD("{\"m\":4096,\"k\":4096,\"n\":128,\"block\":32,\"density\":%g,\"peer\":\"%s\"}",
			    dens[d], peers[p]);
	ADD("{\"m\":2048,\"k\":2048,\"n\":128,\"block\":32,\"density\":100,\"peer\":\"openblas\"}");
	for (int b = 0; b < 4; b++)
		for (int d = 0; d < 6; d++)
			ADD("{\"m\":2048,\"k\":2048,\"n\":128,\"block\":%d,\"density\":%g,\"peer\":\"bsr\"}",
			    blocks[b], dens[d]);
	for (int d = 1; d < 6; d++)
		ADD("{\"m\":2048,\"k\":2048,\"n\":128,\"block\":32,\"density\":%g,\"peer\":\"librsb\"}",
		    dens[d]);
	for (int i = 0; i < 3; i++)
		for (int p = 0; p < 2; p++)
			ADD("{\"m\":2048,\"k\":2048,\"n\":%d,\"block\":32,\"density\":10,\"peer\":\"%s\"}",
			    ns[i], peers[p]);
#undef ADD
	return a;
}

static void bsr_teardown(void *state)
{
	struct bsr_state *s = state;
	if (!s)
		return;
	if (s->have_rsb) {
		ocb_rsb_release(&s->r);
		ocb_rsb_finalize();
	}
	ocb_bsr_release(&s->s);
	ocb_free(s->w), ocb_free(s->x), ocb_free(s->y);
	free(s);
}

/* Blocks stored for `density` percent of nb: exactly this many, so the static work model
 * (bsr_work) is the work done. */
static long kept_blocks(double density, long nb)
{
	long keep = llround(density / 100.0 * nb);
	return keep < 1 ? 1 : keep > nb ? nb : keep;
}

/* The set-up times of this case as final metrics (see the head of this file). */
static int setup_metrics(const struct bsr_state *s, const struct ocb_ctx *ctx, int B,
			 double density, double convert_s)
{
	char name[128], id[256];
	const char *peer = peers[s->peer];
	snprintf(name, sizeof name, "bsr_spmm:%s:%dx%dx%d:b%d:d%g:t%d", peer, s->m, s->k, s->n, B,
		 density, s->threads);
	snprintf(id, sizeof id, "{\"kind\":\"bsr_spmm_setup\",\"peer\":\"%s\",\"m\":%d,\"k\":%d,"
		 "\"n\":%d,\"block\":%d,\"density\":%g,\"threads\":%d}", peer, s->m, s->k, s->n,
		 B, density, s->threads);
	const struct ocb_metric_sink *mk = &ctx->metrics;
	int rc = ocb_metric_ident(mk, name, id);
	if (!rc)
		rc = ocb_metric(mk, name, -1, "convert_time", convert_s, "s");
	if (!rc && s->have_rsb)
		rc = ocb_metric(mk, name, -1, "librsb_build_time", s->r.build_time, "s");
	if (!rc && s->have_rsb)
		rc = ocb_metric(mk, name, -1, "librsb_tune_time", s->r.tune_time, "s");
	if (!rc && s->have_rsb)
		rc = ocb_metric(mk, name, -1, "librsb_tune_speedup", s->r.tune_speedup, "1");
	return rc;
}

/* W with a seeded mask of exactly kept_blocks() blocks (a partial Fisher-Yates), X; the
 * BSR copy (conversion timed apart, logged) and, for librsb, its matrix tuned once here.
 * *convert_s: the dense -> BSR time. */
static int bsr_build(struct bsr_state *s, int B, double density, double *convert_s)
{
	struct ocb_rng r;
	ocb_rng_seed(&r, s->seed);
	int mb = s->m / B, kb = s->k / B, rc;
	long nb = (long)mb * kb, keep = kept_blocks(density, nb);
	int32_t *idx = malloc((size_t)nb * sizeof *idx);
	if (!idx)
		return ocb_seterr(OCB_ENOMEM, "bsr_spmm: no memory");
	for (long i = 0; i < nb; i++)
		idx[i] = (int32_t)i;
	memset(s->w, 0, (size_t)s->m * s->k * sizeof(float));
	for (long i = 0; i < keep; i++) {
		long j = i + (long)ocb_rng_below(&r, (uint64_t)(nb - i));
		int32_t t = idx[i];
		idx[i] = idx[j], idx[j] = t;
		int bi = idx[i] / kb, bj = idx[i] % kb;
		for (int a = 0; a < B; a++)
			for (int c = 0; c < B; c++)
				s->w[(size_t)(bi * B + a) * s->k + bj * B + c] =
					ocb_rng_uniformf(&r) - 0.5f;
	}
	free(idx);
	for (size_t i = 0; i < (size_t)s->k * s->n; i++)
		s->x[i] = ocb_rng_uniformf(&r) - 0.5f;
	double t0 = ocb_now_s();
	if ((rc = ocb_bsr_from_dense(&s->s, s->w, s->m, s->k, B, B)))
		return rc;
	*convert_s = ocb_now_s() - t0;
	ocb_info("bsr_spmm: dense -> BSR %.3f s (%d of %d blocks)", *convert_s, s->s.nnzb,
		 mb * kb);
	if (strcmp(peers[s->peer], "librsb") != 0)
		return OCB_OK;
	if ((rc = ocb_rsb_init()))
		return rc;
	if ((rc = ocb_rsb_from_bsr(&s->r, &s->s))) {
		ocb_rsb_finalize();
		return rc;
	}
	s->have_rsb = 1;
	/* its own autotuning, capped at 2 s; kept out of the timed region */
	if ((rc = ocb_rsb_tune(&s->r, s->x, s->y, s->n, s->threads, 2.0)))
		return rc;
	ocb_info("bsr_spmm: librsb assembly %.3f s, autotuning %.3f s (its estimate: %.2fx)",
		 s->r.build_time, s->r.tune_time, s->r.tune_speedup);
	return OCB_OK;
}

static int bsr_setup(const cJSON *params, const struct ocb_ctx *ctx, void **state)
{
	struct bsr_state *s = calloc(1, sizeof *s);
	int rc;
	*state = NULL;
	if (!s)
		return ocb_seterr(OCB_ENOMEM, "bsr_spmm: no memory");
	s->m = (int)ocb_pint(params, "m"), s->k = (int)ocb_pint(params, "k");
	s->n = (int)ocb_pint(params, "n");
	int B = (int)ocb_pint(params, "block");
	for (s->peer = 0; peers[s->peer] && strcmp(peers[s->peer], ocb_pstr(params, "peer")); )
		s->peer++;
	s->threads = ocb_baseline_threads(ctx);
	s->seed = ctx->seed;
	if (!ocb_bsr_shape_ok(s->m, s->k, B, B)) {
		rc = ocb_seterr(OCB_EINVAL, "bsr_spmm: %dx%d blocks do not tile %d x %d", B, B,
				s->m, s->k);
		goto out;
	}
	s->w = ocb_alloc((size_t)s->m * s->k * sizeof(float));
	s->x = ocb_alloc((size_t)s->k * s->n * sizeof(float));
	s->y = ocb_alloc((size_t)s->m * s->n * sizeof(float));
	if (!s->w || !s->x || !s->y) {
		rc = ocb_seterr(OCB_ENOMEM, "bsr_spmm: no memory for %d x %d", s->m, s->k);
		goto out;
	}
	/* OpenBLAS only for the dense peer; one thread otherwise, so its pool does not spin
	 * against the OpenMP teams (REFERENCE.md section 6) */
	openblas_set_num_threads(s->peer == 1 ? s->threads : 1);
	double density = ocb_pfloat(params, "density"), convert_s = 0.0;
	if ((rc = bsr_build(s, B, density, &convert_s)) ||
	    (rc = setup_metrics(s, ctx, B, density, convert_s)))
		goto out;
	*state = s;
	s = NULL;
out:
	bsr_teardown(s);
	return rc;
}

static int bsr_run(void *state)
{
	struct bsr_state *s = state;
	switch (s->peer) {
	case 0:
		return ocb_bsr_spmm(&s->s, s->x, s->n, s->n, s->y, s->n, s->threads);
	case 1:
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->m, s->n, s->k, 1.0f, s->w,
			    s->k, s->x, s->n, 0.0f, s->y, s->n);
		return OCB_OK;
	default:
		return ocb_rsb_spmm(&s->r, s->x, s->y, s->n, s->threads);
	}
}

/* Runs once and compares 4 rows with a double-precision product on the dense W:
 * err = |Y - ref| / sum |w x|, limit 16 eps sqrt(k). */
static int bsr_check(void *state, double *err)
{
	struct bsr_state *s = state;
	double worst = 0.0;
	int rc = bsr_run(s);
	for (int t = 0; rc == OCB_OK && t < 4; t++) {
		int i = (int)(((long)t * 7919) % s->m);
		for (int j = 0; j < s->n; j++) {
			double ref = 0.0, mag = 0.0;
			for (int c = 0; c < s->k; c++) {
				double p = (double)s->w[(size_t)i * s->k + c] * s->x[(size_t)c * s->n + j];
				ref += p, mag += fabs(p);
			}
			double e = fabs(s->y[(size_t)i * s->n + j] - ref) / (mag > 0 ? mag : 1.0);
			if (!(e <= worst))
				worst = isnan(e) ? INFINITY : e;
		}
	}
	*err = worst;
	if (rc == OCB_OK && worst > 16.0 * FLT_EPSILON * sqrt((double)s->k))
		rc = ocb_seterr(OCB_ECHECK, "bsr_spmm %s: relative error %.3g", peers[s->peer],
				worst);
	return rc;
}

/* Useful work 2 (stored fraction m k) n for the sparse peers, 2 m k n for sgemm; bytes: stored
 * values + indices, X read, Y written. Roofline with the fp32 compute roof. */
static int bsr_work(const cJSON *params, struct ocb_work *w)
{
	double m = (double)ocb_pint(params, "m"), k = (double)ocb_pint(params, "k");
	double n = (double)ocb_pint(params, "n"), B = (double)ocb_pint(params, "block");
	double nb = floor(m / B) * floor(k / B);
	double d = strcmp(ocb_pstr(params, "peer"), "openblas") == 0
			   ? 1.0
			   : (double)kept_blocks(ocb_pfloat(params, "density"), (long)nb) / nb;
	w->flops = 2.0 * d * m * k * n;
	w->bytes = 4.0 * (d * m * k + d * m * k / (B * B) + m / B + k * n + m * n);
	w->bound = NULL;
	w->compute = NULL;
	return OCB_OK;
}

static const char *bsr_variant(void *state)
{
	struct bsr_state *s = state;
	return s->peer == 0 ? ocb_bsr_path(&s->s) : peers[s->peer];
}

const struct ocb_bench ocb_bench_bsr_spmm = {
	.name = "bsr_spmm",
	.doc = "block-sparse Y = W X (BSR, blocks 8..64, density 5..100%) vs OpenBLAS dense and "
	       "tuned librsb on the same matrix",
	.kind = OCB_KERNEL,
	.params = bsr_params,
	.cases = bsr_cases,
	.setup = bsr_setup,
	.run = bsr_run,
	.check = bsr_check,
	.work = bsr_work,
	.variant = bsr_variant,
	.teardown = bsr_teardown,
	.sweep_threads = 0,
};
