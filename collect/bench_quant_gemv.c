/* bench_quant_gemv: batch-1 GEMV y[m] = W[m][k] x[k] with quantized weights, every format of
 * kernels/quant_formats.h, plus fp32 OpenBLAS sgemv as the reference point (format "f32").
 * Also holds the helpers shared with bench_quant_gemm.c (bench_quant.h). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_log.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_time.h"
#include "../kernels/qgemv_plan.h"
#include "../kernels/quant_gemv.h"
#include "../kernels/quant_repack.h"
#include "bench_quant.h"

#define POOL 64
#define MAX_COPIES 64 /* rotation copies of W, at most */

/* Does the GEMV of format f (NULL: f32) run on the interleaved layout on this CPU? The
 * one rule for the set-up's repacking and the work model's working set. */
static int gemv_repacked(const struct qformat *f)
{
	return f && qgemv_kind_r8(qgemv_choose(f));
}

/* What the case reports of the setting its GEMVs run: the variant, and one thread */
static void qbench_use(struct qbench *q, const struct qgemv_setting *set)
{
	q->variant = qgemv_plan_variant(q->f, set);
	q->one_thread = set->threads == 1 && q->threads > 1;
}

/* The r16 kernels' setting for this shape, timed on the rotation copies as the
 * repetitions will use them (kernels/qgemv_plan.h), once per process: logged, and stored
 * as metrics of workload "quant_gemv": plan_time_<case> (s) and plan_streams_<case>,
 * plan_pf_l1_<case>, plan_pf_l2_<case>, plan_threads_<case> (the setting kept: the
 * threads it runs on), plan_median_<case> (s, its median GEMV time in the planning
 * rounds: the set-up timing the harness holds the case's median against,
 * collect/suspect.h). Nothing is stored where nothing was timed. */
static int qbench_plan(struct qbench *q, const struct ocb_ctx *ctx)
{
	/* a later pass of the same case (or another case of this shape and thread count) in
	 * this process keeps the plan the first one made: a case's repetitions over all its
	 * passes run one setting */
	struct qgemv_setting kept;
	if (qgemv_plan_find(q->f, q->m, q->k, q->threads, &kept)) {
		qbench_use(q, &kept);
		return OCB_OK;
	}
	const void *copies[MAX_COPIES];
	const int nc = q->ncopies < MAX_COPIES ? q->ncopies : MAX_COPIES;
	for (int c = 0; c < nc; c++)
		copies[c] = (const char *)q->wr + (size_t)c * q->wrstride;
	const struct qgemv_plan_opts opts = { copies, nc, NULL, NULL };
	struct qgemv_plan_info pi;
	int rc = qgemv_plan(q->f, q->wr, q->m, q->k, q->xq, q->y, q->threads, &opts, &pi);
	if (rc || pi.ncand == 0)
		return rc;
	qbench_use(q, &pi.setting);
	char cands[640] = "";
	size_t o = 0;
	for (int j = 0; j < pi.ncand && o < sizeof cands; j++)
		o += (size_t)snprintf(cands + o, sizeof cands - o, "%s%d:%d:%d%s %.3g ms",
				      j ? ", " : "", pi.cand[j].streams, pi.cand[j].pf_l1,
				      pi.cand[j].pf_l2, pi.cand[j].threads == 1 ? "-1t" : "",
				      pi.median_s[j] * 1e3);
	ocb_info("quant_gemv: %s %lldx%lld t%d: plan %d:%d:%d%s (streams:L1:L2 bytes[-1t: on one "
		 "thread]) in %.3f s; medians of %d rounds: %s", q->f->name, (long long)q->m,
		 (long long)q->k, q->threads, pi.setting.streams, pi.setting.pf_l1, pi.setting.pf_l2,
		 pi.setting.threads == 1 ? "-1t" : "", pi.seconds, pi.rounds, cands);
	const struct ocb_metric_sink *ms = ctx ? &ctx->metrics : NULL;
	const char *names[6] = { "plan_time", "plan_streams", "plan_pf_l1", "plan_pf_l2",
				 "plan_median", "plan_threads" };
	const double vals[6] = { pi.seconds, pi.setting.streams, pi.setting.pf_l1, pi.setting.pf_l2,
				 pi.median_s[pi.chosen],
				 pi.setting.threads == 1 ? 1 : q->threads };
	const char *units[6] = { "s", "count", "bytes", "bytes", "s", "count" };
	for (int i = 0; i < 6 && !rc; i++) {
		char key[96];
		snprintf(key, sizeof key, "%s_%s_%lldx%lld_t%d", names[i], q->f->name, (long long)q->m,
			 (long long)q->k, q->threads);
		rc = ocb_metric(ms, "quant_gemv", -1, key, vals[i], units[i]);
	}
	return rc;
}

/* The load-time step of a GEMV or GEMM whose chosen kernel wants the r8 layout: repack
 * copy 0 (timed, stored as a metric of the bench's workload: repack_time_<case>), duplicate
 * it into the other copies, then, for a GEMV, plan the r16 kernels' setting (qbench_plan;
 * the GEMM runs no streams and no prefetch: qgemm_r8). */
static int qbench_repack(struct qbench *q, const struct ocb_ctx *ctx, int gemm)
{
	const int repacked = gemv_repacked(q->f);
	if (!gemm) /* the kernel, streams and all (a plan may change them: qbench_plan) */
		q->variant = qgemv_variant(q->f);
	else if (repacked) /* the GEMM runs no streams: the kernel kind alone */
		q->variant = qgemv_kind_name(qgemv_choose(q->f));
	if (!repacked)
		return OCB_OK;
	q->wrstride = ocb_round_up(qrepack_bytes(q->f, q->m, q->k), 64);
	if (!(q->wr = qrepack_alloc(q->wrstride * (size_t)q->ncopies)))
		return ocb_seterr(OCB_ENOMEM, "quant %s %s: %zu bytes of repacked weights",
				  gemm ? "gemm" : "gemv", q->f->name, q->wrstride * (size_t)q->ncopies);
	double t0 = ocb_now_s();
	int rc = qrepack_pack(q->f, q->w, q->m, q->k, q->wr, q->threads);
	q->repack_s = ocb_now_s() - t0;
	if (rc)
		return rc;
	for (int c = 1; c < q->ncopies; c++)
		memcpy((char *)q->wr + (size_t)c * q->wrstride, q->wr, qrepack_bytes(q->f, q->m, q->k));
	char key[112];
	if (gemm)
		snprintf(key, sizeof key, "repack_time_%s_%lldx%lld_n%lld_t%d", q->f->name,
			 (long long)q->m, (long long)q->k, (long long)q->n, q->threads);
	else
		snprintf(key, sizeof key, "repack_time_%s_%lldx%lld_t%d", q->f->name, (long long)q->m,
			 (long long)q->k, q->threads);
	if ((rc = ocb_metric(ctx ? &ctx->metrics : NULL, gemm ? "quant_gemm" : "quant_gemv", -1, key,
			     q->repack_s, "s")))
		return rc;
	return gemm ? OCB_OK : qbench_plan(q, ctx);
}

int qbench_setup(const cJSON *params, const struct ocb_ctx *ctx, int gemm, void **state)
{
	struct qbench *q = NULL;
	float *wf = NULL;
	int rc = OCB_OK;
	const char *fmt = ocb_pstr(params, "format");
	const int is_f32 = strcmp(fmt, "f32") == 0;
	const struct qformat *f = is_f32 ? NULL : qformat_find(fmt);
	int64_t m = ocb_pint(params, "m"), k = ocb_pint(params, "k"), n = ocb_pint(params, "n");

	*state = NULL;
	if (!is_f32 && !f) {
		rc = ocb_seterr(OCB_EINVAL, "quant bench: unknown format \"%s\"", fmt);
		goto out;
	}
	int blk = f ? f->block : 1;
	if (m <= 0 || k <= 0 || n <= 0 || (!gemm && n != 1) || k % blk) {
		rc = ocb_seterr(OCB_EINVAL, "quant bench %s: bad shape m=%lld k=%lld n=%lld (k must be "
				"a multiple of %d)", fmt, (long long)m, (long long)k, (long long)n, blk);
		goto out;
	}
	q = calloc(1, sizeof *q);
	if (!q) {
		rc = ocb_seterr(OCB_ENOMEM, "quant bench: state");
		goto out;
	}
	q->f = f, q->m = m, q->k = k, q->n = n;
	q->pool = m < POOL ? m : POOL;
	q->threads = ctx && ctx->threads > 0 ? ctx->threads : 1;

	size_t rb = f ? qformat_row_bytes(f, k) : (size_t)k * sizeof(float);
	size_t wbytes = ocb_round_up(rb * (size_t)m, 64);
	if ((rc = qbench_copies(params, ctx, gemm, (double)wbytes, &q->ncopies)))
		goto out;
	q->wstride = wbytes;
	q->next = 0;
	wbytes *= (size_t)q->ncopies;
	size_t xbytes = ocb_round_up(sizeof(float) * (size_t)(n * k), 64);
	size_t qbytes = f ? ocb_round_up(qformat_act_bytes(f, n, k), 64) : 0;
	size_t ybytes = ocb_round_up(sizeof(float) * (size_t)(n * m), 64);
	q->mem = ocb_alloc(wbytes + xbytes + qbytes + ybytes);
	wf = malloc(sizeof(float) * (size_t)(q->pool * k));
	if (!q->mem || !wf) {
		rc = ocb_seterr(OCB_ENOMEM, "quant bench %s %lldx%lld: %zu bytes", fmt, (long long)m,
				(long long)k, wbytes + xbytes + qbytes + ybytes);
		goto out;
	}
	char *p = q->mem;
	q->w = p, p += wbytes;
	q->x = (float *)p, p += xbytes;
	q->xq = qbytes ? p : NULL, p += qbytes;
	q->y = (float *)p;

	struct ocb_rng r;
	ocb_rng_seed(&r, ctx ? ctx->seed : 1);
	for (int64_t i = 0; i < q->pool * k; i++)
		wf[i] = 0.05f * (float)ocb_rng_normal(&r);
	for (int64_t i = 0; i < n * k; i++)
		q->x[i] = (float)ocb_rng_normal(&r);
	if (f) {
		if ((rc = qformat_quantize(f, wf, q->w, q->pool, k)) ||
		    (rc = qformat_quantize_act(f, q->x, q->xq, n, k)))
			goto out;
	} else {
		memcpy(q->w, wf, rb * (size_t)q->pool);
	}
	for (int64_t i = q->pool; i < m; i++)
		memcpy((char *)q->w + (size_t)i * rb, (char *)q->w + (size_t)(i % q->pool) * rb, rb);
	for (int c = 1; c < q->ncopies; c++)
		memcpy((char *)q->w + (size_t)c * q->wstride, q->w, rb * (size_t)m);
	q->variant = f ? qkernel_variant() : "openblas";
	if (f && (rc = qbench_repack(q, ctx, gemm)))
		goto out;
	if (!f)
		openblas_set_num_threads(q->threads);
	*state = q;
	q = NULL;
out:
	free(wf);
	qbench_teardown(q);
	return rc;
}

void qbench_teardown(void *state)
{
	struct qbench *q = state;
	if (!q)
		return;
	ocb_free(q->mem);
	qrepack_free(q->wr);
	free(q);
}

int qbench_team(void *state)
{
	return ((struct qbench *)state)->one_thread ? 1 : 0;
}

const char *qbench_variant(void *state)
{
	return ((struct qbench *)state)->variant;
}

int qbench_run(struct qbench *q, int gemm)
{
	const void *w = (const char *)q->w + (size_t)q->next * q->wstride;
	if (++q->next == q->ncopies)
		q->next = 0;
	if (!q->f) {
		if (gemm)
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)q->n, (int)q->m, (int)q->k,
				    1.0f, q->x, (int)q->k, w, (int)q->k, 0.0f, q->y, (int)q->m);
		else
			cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)q->m, (int)q->k, 1.0f, w,
				    (int)q->k, q->x, 1, 0.0f, q->y, 1);
		return OCB_OK;
	}
	const char *wr = q->wr ? (const char *)q->wr + ((const char *)w - (const char *)q->w) /
							     q->wstride * q->wrstride
			       : NULL;
	if (gemm)
		return wr ? qgemm_r8(q->f, wr, q->m, q->k, q->xq, q->n, q->y, q->threads)
			  : qgemm(q->f, w, q->m, q->k, q->xq, q->n, q->y, q->threads);
	if (wr)
		return qgemv_r8(q->f, wr, q->m, q->k, q->xq, q->y, q->threads);
	return qgemv(q->f, w, q->m, q->k, q->xq, q->y, q->threads);
}

int qbench_check(struct qbench *q, int gemm, double *err)
{
	int rc;
	float *ref = malloc(sizeof(float) * (size_t)(q->n * q->pool));
	*err = NAN;
	if (!ref)
		return ocb_seterr(OCB_ENOMEM, "quant bench check");
	if (q->f) {
		rc = gemm ? qgemm_ref(q->f, q->w, q->pool, q->k, q->xq, q->n, ref, q->threads)
			  : qgemv_ref(q->f, q->w, q->pool, q->k, q->xq, ref, q->threads);
	} else {
		const float *w = q->w;
		for (int64_t j = 0; j < q->n; j++)
			for (int64_t r = 0; r < q->pool; r++) {
				double s = 0;
				for (int64_t i = 0; i < q->k; i++)
					s += (double)w[r * q->k + i] * q->x[j * q->k + i];
				ref[j * q->pool + r] = (float)s;
			}
		rc = OCB_OK;
	}
	if (!rc)
		rc = qbench_run(q, gemm);
	if (rc) {
		free(ref);
		return rc;
	}
	double maxd = 0, maxr = 0;
	for (int64_t j = 0; j < q->n; j++)
		for (int64_t r = 0; r < q->m; r++) {
			double a = q->y[j * q->m + r], b = ref[j * q->pool + r % q->pool];
			maxd = fmax(maxd, fabs(a - b));
			maxr = fmax(maxr, fabs(b));
		}
	free(ref);
	*err = maxr > 0 ? maxd / maxr : maxd;
	if (!(*err <= 1e-4))
		return ocb_seterr(OCB_ECHECK, "quant %s %s: max error %.3g of max |ref| vs the scalar "
				  "reference (limit 1e-4)", gemm ? "gemm" : "gemv",
				  q->f ? q->f->name : "f32", *err);
	return OCB_OK;
}

int qbench_work(const cJSON *params, int gemm, struct ocb_work *w)
{
	const char *fmt = ocb_pstr(params, "format");
	const struct qformat *f = qformat_find(fmt);
	double m = ocb_pint(params, "m"), k = ocb_pint(params, "k"), n = ocb_pint(params, "n");
	if (!f && strcmp(fmt, "f32") != 0)
		return ocb_seterr(OCB_EINVAL, "quant bench: unknown format \"%s\"", fmt);
	double wbytes = f ? m * (double)qformat_row_bytes(f, (int64_t)k) : m * k * 4;
	double abytes = f ? (double)qformat_act_bytes(f, (int64_t)n, (int64_t)k) : n * k * 4;
	/* One multiply-add per weight and activation row = 2 ops, in the unit of the
	 * compute roof: int8 ops for the quantized formats (their dot products are int8
	 * maddubs/madd chains), FLOPs for OpenBLAS fp32. */
	w->flops = 2 * n * m * k;
	w->bytes = wbytes + abytes + n * m * 4;
	/* A GEMV or GEMM on an interleaved layout streams that layout: TQ1_0's, in TQ2_0
	 * codes, is 1.22x its blocks (16384^2: 69.2 MB, not 56.6), which a last level of
	 * 54 MiB cannot hold however its blocks compare (seen stored as bw_l3 at 36-40%). */
	w->ws = 0;
	if (gemv_repacked(f))
		w->ws = w->bytes - wbytes + (double)qrepack_bytes(f, (int64_t)m, (int64_t)k);
	/* The roofline: the level bandwidth from the working set (ocb_work_ws) against this
	 * machine's caches, the compute roof of the datatype. */
	w->bound = NULL;
	w->compute = f ? "ops_int8" : gemm ? "flops_sgemm" : "flops_fp32";
	return OCB_OK;
}

/* DRAM-level cases (by the roofline module's level rule, on the same working set as the
 * bound) rotate over enough copies of W that their total exceeds ocb_roof_dram_cycle,
 * the working sets the DRAM ceiling itself is measured on, so that no call finds W in
 * the cache; at most a quarter of memory and MAX_COPIES. With twice the last level, on
 * the Zen 5 VM (victim L3, 43 MiB measured), Q8_0 4096 x 11008 (48 MB, 2 copies) streamed
 * at 109% (1 thread) and 133% (2) of the DRAM roof, and the 16384^2 GEMVs at 2 threads
 * (one copy) at 104-110% (3 Dec 2026). Other cases: one copy (warm in their level). */
int qbench_copies(const cJSON *params, const struct ocb_ctx *ctx, int gemm, double wbytes,
		  int *ncopies)
{
	struct ocb_work w = {.flops = NAN, .bytes = NAN};
	struct ocb_roof_caches mc;
	int rc = qbench_work(params, gemm, &w);
	*ncopies = 1;
	if (rc)
		return rc;
	ocb_machine_caches(ctx ? ctx->machine : NULL, &mc);
	int threads = ctx && ctx->threads > 0 ? ctx->threads : 1;
	if (ocb_roof_level(&mc, ocb_work_ws(&w), threads) != OCB_LEVEL_DRAM || !(wbytes > 0))
		return OCB_OK;
	double c = floor(ocb_roof_dram_cycle(&mc, threads) / wbytes) + 1; /* c W > the cycle */
	double mem = ctx && ctx->machine && ctx->machine->mem_bytes > 0
			     ? (double)ctx->machine->mem_bytes / 4 : INFINITY;
	if (c * wbytes > mem)
		c = floor(mem / wbytes);
	*ncopies = c < 1 ? 1 : c > MAX_COPIES ? MAX_COPIES : (int)c;
	return OCB_OK;
}

/* ---- the gemv bench ---- */

static const char *const all_formats[] = { "q8_0", "q4_0", "q4_1", "q3_g", "q2_g", "tq2_0", "tq1_0", "f32" };

static void add_case(cJSON *a, const char *fmt, int m, int k)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "format", fmt);
	cJSON_AddNumberToObject(c, "m", m);
	cJSON_AddNumberToObject(c, "k", k);
	cJSON_AddItemToArray(a, c);
}

/* full: every format at 4096x4096, 11008x4096 (LLaMA-7B MLP) and 16384x16384 (weights
 * larger than the L3 share: the DRAM-bound decode case); quick: 1024x1024. */
static cJSON *gemv_cases(const struct ocb_ctx *ctx)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < sizeof all_formats / sizeof *all_formats; i++) {
		if (ctx && ctx->quick) {
			add_case(a, all_formats[i], 1024, 1024);
			continue;
		}
		add_case(a, all_formats[i], 4096, 4096);
		add_case(a, all_formats[i], 11008, 4096);
		add_case(a, all_formats[i], 16384, 16384);
	}
	return a;
}

static int gemv_setup(const cJSON *params, const struct ocb_ctx *ctx, void **state)
{
	return qbench_setup(params, ctx, 0, state);
}
static int gemv_run(void *state) { return qbench_run(state, 0); }
static int gemv_check(void *state, double *err) { return qbench_check(state, 0, err); }
static int gemv_work(const cJSON *params, struct ocb_work *w) { return qbench_work(params, 0, w); }

/* The planner's median for the setting it kept (qbench_plan): the same GEMV on the same
 * rotation copies, timed in set-up; 0 where nothing was planned */
static double gemv_reference(void *state)
{
	const struct qbench *q = state;
	return q && q->f && q->wr ? qgemv_plan_median(q->f, q->m, q->k, q->threads) : 0.0;
}

/* Declared parameters (collect/params.h). */
static const char *const gemv_formats[] = {"q8_0", "q4_0", "q4_1", "q3_g", "q2_g", "tq2_0",
					   "tq1_0", "f32", NULL};
static const struct ocb_param gemv_params[] = {
	{"format", OCB_P_ENUM, "\"q4_0\"", 0, 0, gemv_formats, "", "weight format (f32: OpenBLAS sgemv)"},
	{"m", OCB_P_INT, "4096", 1, 1 << 20, NULL, "rows", "rows of W (outputs)"},
	{"k", OCB_P_INT, "4096", 1, 1 << 20, NULL, "columns", "columns of W (inputs); a multiple of the format's block"},
	{"n", OCB_P_INT, "1", 1, 1, NULL, "rows", "activation rows (GEMV: 1)"},
	{0},
};

const struct ocb_bench ocb_bench_quant_gemv = {
	.name = "quant_gemv",
	.doc = "batch-1 GEMV with Q8_0/Q4_0/Q4_1/Q3_G/Q2_G/TQ2_0/TQ1_0 weights (int8 activations); f32 = OpenBLAS sgemv",
	.kind = OCB_KERNEL,
	.params = gemv_params,
	.cases = gemv_cases,
	.setup = gemv_setup,
	.run = gemv_run,
	.check = gemv_check,
	.work = gemv_work,
	.variant = qbench_variant,
	.teardown = qbench_teardown,
	.sweep_threads = 1,
	.reference_s = gemv_reference,
	.team = qbench_team,
};
