/* Criterion suite `qkernel`: the quantized GEMV/GEMM kernels (kernels/quant_gemv.h):
 * AVX2 vs scalar _ref (decoders bit-exact, products exact when scales are 1, otherwise
 * within fp32 reassociation), both vs fp32 on the dequantized weights (activation
 * quantization error within a per-format limit), odd shapes, the OCB_FORCE_SCALAR path. */
#include <criterion/criterion.h>

#include "../collect/bench_quant.h"
#include "../collect/harness.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../kernels/qgemv_plan.h"
#include "../kernels/quant_gemv.h"
#include "../kernels/quant_repack.h"

struct prob {
	const struct qformat *f;
	int64_t m, k, n;
	void *w, *xq;
	float *wd, *x; /* dequantized weights [m][k], fp32 activations [n][k] */
};

static void prob_init(struct prob *p, const char *fmt, int64_t m, int64_t k, int64_t n,
		      uint64_t seed)
{
	struct ocb_rng r;
	ocb_rng_seed(&r, seed);
	p->f = qformat_find(fmt);
	cr_assert_not_null(p->f);
	p->m = m, p->k = k, p->n = n;
	float *w = malloc(sizeof(float) * m * k);
	p->wd = malloc(sizeof(float) * m * k);
	p->x = malloc(sizeof(float) * n * k);
	p->w = malloc(qformat_row_bytes(p->f, k) * m);
	p->xq = malloc(qformat_act_bytes(p->f, n, k));
	for (int64_t i = 0; i < m * k; i++)
		w[i] = (float)ocb_rng_normal(&r) * 0.05f;
	for (int64_t i = 0; i < n * k; i++)
		p->x[i] = (float)ocb_rng_normal(&r);
	cr_assert_eq(qformat_quantize(p->f, w, p->w, m, k), OCB_OK);
	cr_assert_eq(qformat_dequantize(p->f, p->w, p->wd, m, k), OCB_OK);
	cr_assert_eq(qformat_quantize_act(p->f, p->x, p->xq, n, k), OCB_OK);
	free(w);
}

static void prob_free(struct prob *p)
{
	free(p->w), free(p->xq), free(p->wd), free(p->x);
}

/* sum_i |w_i x_i| per output: the scale fp32 reassociation error is relative to */
static double abs_dot(const struct prob *p, int64_t j, int64_t r)
{
	double s = 0;
	for (int64_t i = 0; i < p->k; i++)
		s += fabs((double)p->wd[r * p->k + i] * p->x[j * p->k + i]);
	return s;
}

static double fp32_dot(const struct prob *p, int64_t j, int64_t r)
{
	double s = 0;
	for (int64_t i = 0; i < p->k; i++)
		s += (double)p->wd[r * p->k + i] * p->x[j * p->k + i];
	return s;
}

static void need_avx2(void)
{
	if (!ocb_cpu_avx2())
		cr_skip_test("no AVX2 on this CPU (or OCB_FORCE_SCALAR set)");
}

static const char *const fmts[] = { "q8_0", "q4_0", "q4_1", "q3_g", "q2_g", "tq2_0", "tq1_0" };
#define NFMT (sizeof fmts / sizeof fmts[0])

/* ||y - y_fp32|| / ||y_fp32|| allowed from int8 activation rounding (per-block absmax:
 * ~0.4% per element for blocks of 32, coarser for the 256 blocks of the ternary formats) */
static double fp32_limit(const struct qformat *f) { return f->act_block == 256 ? 0.015 : 0.012; }

Test(qkernel, decode_rows_bit_exact)
{
	need_avx2();
	for (size_t i = 0; i < NFMT; i++) {
		struct prob p;
		prob_init(&p, fmts[i], 3, 768, 1, 100 + i);
		int64_t nbA = p.k / p.f->act_block;
		int8_t q0[768], q1[768];
		float d0[24], d1[24], m0[24], m1[24];
		size_t rb = qformat_row_bytes(p.f, p.k);
		for (int64_t r = 0; r < p.m; r++) {
			p.f->decode_row_ref(p.k, (char *)p.w + r * rb, d0, m0, q0);
			p.f->decode_row_avx2(p.k, (char *)p.w + r * rb, d1, m1, q1);
			cr_assert_eq(memcmp(q0, q1, sizeof q0), 0, "%s row %lld", fmts[i], (long long)r);
			cr_assert_eq(memcmp(d0, d1, nbA * sizeof(float)), 0, "%s", fmts[i]);
			cr_assert_eq(memcmp(m0, m1, nbA * sizeof(float)), 0, "%s", fmts[i]);
			/* and the decoded form reproduces dequantize_row exactly */
			for (int64_t e = 0; e < p.k; e++) {
				int64_t b = e / p.f->act_block;
				cr_assert_eq(d0[b] * q0[e] + m0[b], p.wd[r * p.k + e], "%s elem %lld",
					     fmts[i], (long long)e);
			}
		}
		prob_free(&p);
	}
}

/* With weight scale 1, min 0 and activation scale 1 the products are small integers, so
 * the AVX2 and scalar dot products must agree exactly. */
Test(qkernel, integer_dots_exact)
{
	need_avx2();
	struct ocb_rng r;
	ocb_rng_seed(&r, 9);
	const int64_t k = 512;
	for (size_t i = 0; i < NFMT; i++) {
		const struct qformat *f = qformat_find(fmts[i]);
		float w[512], x[512];
		int lo = 0, hi = 0; /* code range of the format as integer weights */
		switch (f->type) {
		case QF_Q8_0: lo = -127, hi = 127; break;
		case QF_Q4_0: lo = -8, hi = 7; break;
		case QF_Q4_1: lo = 0, hi = 15; break;
		case QF_Q3_G: lo = 0, hi = 7; break;
		case QF_Q2_G: lo = 0, hi = 3; break;
		default: lo = -1, hi = 1; break;
		}
		for (int64_t e = 0; e < k; e++) {
			w[e] = (float)(lo + (int)ocb_rng_below(&r, (uint64_t)(hi - lo + 1)));
			x[e] = (float)((int)ocb_rng_below(&r, 255) - 127);
		}
		/* pin every block's range so d = 1 (and m = 0 / Q4_0's -8 anchor) exactly */
		for (int64_t b = 0; b < k; b += f->block) {
			w[b] = (float)(f->type == QF_Q8_0 ? 127 : lo);
			w[b + 1] = (float)hi;
			if (f->type == QF_Q4_0)
				w[b] = -8.0f;
		}
		for (int64_t b = 0; b < k; b += f->act_block)
			x[b] = 127.0f;
		unsigned char wq[512 * 2], xq[512 * 2];
		qformat_quantize(f, w, wq, 1, k);
		qformat_quantize_act(f, x, xq, 1, k);
		float y[512];
		qformat_dequantize(f, wq, y, 1, k);
		cr_assert_eq(memcmp(w, y, sizeof w), 0, "%s: integer weights not exact", fmts[i]);
		double want = 0;
		for (int64_t e = 0; e < k; e++)
			want += (double)w[e] * x[e];
		float a = f->vec_dot_ref(k, wq, xq), b = f->vec_dot_avx2(k, wq, xq);
		cr_assert_eq(a, (float)want, "%s ref %g want %g", fmts[i], a, want);
		cr_assert_eq(b, (float)want, "%s avx2 %g want %g", fmts[i], b, want);
	}
}

static void check_gemv(const char *fmt, int64_t m, int64_t k, int threads)
{
	struct prob p;
	prob_init(&p, fmt, m, k, 1, 7);
	float *y0 = malloc(sizeof(float) * m), *y1 = malloc(sizeof(float) * m);
	cr_assert_eq(qgemv_ref(p.f, p.w, m, k, p.xq, y0, threads), OCB_OK);
	cr_assert_eq(qgemv(p.f, p.w, m, k, p.xq, y1, threads), OCB_OK);
	double se = 0, sy = 0;
	for (int64_t r = 0; r < m; r++) {
		double tol = 1e-5 * abs_dot(&p, 0, r) + 1e-30;
		cr_assert_leq(fabs((double)y0[r] - y1[r]), tol, "%s row %lld: ref %g avx2 %g", fmt,
			      (long long)r, y0[r], y1[r]);
		double e = fp32_dot(&p, 0, r);
		se += (y1[r] - e) * (y1[r] - e);
		sy += e * e;
	}
	double rel = sqrt(se / sy);
	cr_assert_leq(rel, fp32_limit(p.f), "%s vs fp32: relative error %g", fmt, rel);
	free(y0), free(y1);
	prob_free(&p);
}

Test(qkernel, gemv_avx2_vs_ref_vs_fp32)
{
	need_avx2();
	for (size_t i = 0; i < NFMT; i++) {
		check_gemv(fmts[i], 37, 768, 2);  /* m not a multiple of the threads */
		check_gemv(fmts[i], 5, 256, 3);
		if (qformat_find(fmts[i])->block == 32)
			check_gemv(fmts[i], 9, 96, 2); /* odd number of blocks: the tail path */
	}
}

static void check_gemm(const char *fmt, int64_t m, int64_t k, int64_t n, int threads)
{
	struct prob p;
	prob_init(&p, fmt, m, k, n, 21);
	float *y0 = malloc(sizeof(float) * m * n), *y1 = malloc(sizeof(float) * m * n);
	float *yv = malloc(sizeof(float) * m);
	cr_assert_eq(qgemm_ref(p.f, p.w, m, k, p.xq, n, y0, threads), OCB_OK);
	cr_assert_eq(qgemm(p.f, p.w, m, k, p.xq, n, y1, threads), OCB_OK);
	double se = 0, sy = 0;
	for (int64_t j = 0; j < n; j++) {
		/* column j of the GEMM is the GEMV of activation row j */
		size_t ab = qformat_act_bytes(p.f, 1, k);
		cr_assert_eq(qgemv_ref(p.f, p.w, m, k, (char *)p.xq + j * ab, yv, 1), OCB_OK);
		for (int64_t r = 0; r < m; r++) {
			double tol = 1e-5 * abs_dot(&p, j, r) + 1e-30;
			cr_assert_eq(y0[j * m + r], yv[r], "%s ref gemm != ref gemv", fmt);
			cr_assert_leq(fabs((double)y0[j * m + r] - y1[j * m + r]), tol,
				      "%s n=%lld row %lld: ref %g avx2 %g", fmt, (long long)j,
				      (long long)r, y0[j * m + r], y1[j * m + r]);
			double e = fp32_dot(&p, j, r);
			se += (y1[j * m + r] - e) * (y1[j * m + r] - e);
			sy += e * e;
		}
	}
	double rel = sqrt(se / sy);
	cr_assert_leq(rel, fp32_limit(p.f), "%s gemm vs fp32: relative error %g", fmt, rel);
	free(y0), free(y1), free(yv);
	prob_free(&p);
}

Test(qkernel, gemm_avx2_vs_ref_vs_fp32)
{
	need_avx2();
	for (size_t i = 0; i < NFMT; i++) {
		check_gemm(fmts[i], 19, 512, 9, 2); /* 2 tiles of 4 + 1 tail row */
		check_gemm(fmts[i], 6, 256, 3, 4);  /* tail only; more threads than ... */
	}
}

/* The scalar path, as on a CPU without AVX2: OCB_FORCE_SCALAR=1 + ocb_cpu_reset(). */
Test(qkernel, forced_scalar_path)
{
	setenv("OCB_FORCE_SCALAR", "1", 1);
	ocb_cpu_reset();
	cr_assert_eq(ocb_cpu_avx2(), 0);
	cr_assert_str_eq(qkernel_variant(), "ref");
	for (size_t i = 0; i < NFMT; i++) {
		struct prob p;
		prob_init(&p, fmts[i], 13, 512, 5, 33);
		float y0[13 * 5], y1[13 * 5], y2[13 * 5];
		cr_assert_eq(qgemm(p.f, p.w, p.m, p.k, p.xq, p.n, y0, 2), OCB_OK);
		cr_assert_eq(qgemm_ref(p.f, p.w, p.m, p.k, p.xq, p.n, y1, 1), OCB_OK);
		cr_assert_eq(memcmp(y0, y1, sizeof y0), 0, "%s", fmts[i]);
		cr_assert_eq(qgemv(p.f, p.w, p.m, p.k, p.xq, y2, 2), OCB_OK);
		cr_assert_eq(memcmp(y2, y1, 13 * sizeof(float)), 0, "%s", fmts[i]);
		/* fp32 through qmatmul (quantizes the activations itself) */
		void *act = malloc(qformat_act_bytes(p.f, p.n, p.k));
		cr_assert_eq(qmatmul(p.f, p.w, p.m, p.k, p.x, p.n, y2, act, 2), OCB_OK);
		cr_assert_eq(memcmp(y2, y1, sizeof y1), 0, "%s qmatmul", fmts[i]);
		free(act);
		prob_free(&p);
	}
	unsetenv("OCB_FORCE_SCALAR");
	ocb_cpu_reset();
}

Test(qkernel, bad_arguments)
{
	const struct qformat *f = qformat_find("tq2_0");
	char w[66], xq[264];
	float y[4];
	cr_assert_eq(qgemv(f, w, 1, 128, xq, y, 1), OCB_EINVAL);
	cr_assert(strstr(ocb_lasterr(), "tq2_0") != NULL);
	cr_assert_eq(qgemm(f, w, 1, 256, xq, 0, y, 1), OCB_EINVAL);
	cr_assert_eq(qgemv(NULL, w, 1, 256, xq, y, 1), OCB_EINVAL);
	cr_assert_eq(qgemv_ref(f, NULL, 1, 256, xq, y, 1), OCB_EINVAL);
}

/* ---- the `quant` suite's kernel benches (collect/bench_quant_*.c) ---- */

#include "../collect/registry.h"

/* The case as the runner hands it to the bench: checked, defaults filled. */
static cJSON *filled(const struct ocb_bench *b, const cJSON *raw)
{
	cJSON *full = NULL;
	cr_assert_eq(ocb_params_check(b->params, b->name, "test", raw, &full), OCB_OK, "%s",
		     ocb_lasterr());
	return full;
}

static cJSON *filled_text(const struct ocb_bench *b, const char *json)
{
	cJSON *raw = cJSON_Parse(json), *full = filled(b, raw);
	cJSON_Delete(raw);
	return full;
}

/* Every quick case runs through setup -> check -> run -> work -> teardown without the
 * harness; the full case list has the shapes the issue asks for. */
Test(qkernel, suite_quick_cases)
{
	struct ocb_ctx ctx = { .threads = 2, .seed = 5, .quick = 1 };
	int nkernel = 0;
	for (size_t bi = 0; bi < ocb_nbenches; bi++) {
		const struct ocb_bench *b = ocb_benches[bi].bench;
		if (strcmp(ocb_benches[bi].suite, "quant") || b->kind != OCB_KERNEL ||
		    strncmp(b->name, "quant_gem", 9))
			continue;
		nkernel++;
		cJSON *cases = b->cases(&ctx), *c;
		cr_assert_geq(cJSON_GetArraySize(cases), 8, "%s: every format + f32", b->name);
		cJSON *raw;
		cJSON_ArrayForEach(raw, cases) {
			void *st = NULL;
			double err = -1;
			struct ocb_work w = { 0 };
			c = filled(b, raw);
			cr_assert_eq(b->setup(c, &ctx, &st), OCB_OK, "%s: %s", b->name, ocb_lasterr());
			cr_assert_eq(b->check(st, &err), OCB_OK, "%s: %s", b->name, ocb_lasterr());
			cr_assert(err >= 0 && err <= 1e-4);
			cr_assert_eq(b->run(st), OCB_OK);
			cr_assert_eq(b->work(c, &w), OCB_OK);
			const char *fmt = cJSON_GetObjectItem(c, "format")->valuestring;
			double m = cJSON_GetObjectItem(c, "m")->valuedouble;
			double k = cJSON_GetObjectItem(c, "k")->valuedouble;
			const struct qformat *f = qformat_find(fmt);
			cr_assert_geq(w.bytes, m * (f ? (double)qformat_row_bytes(f, (int64_t)k) : 4 * k));
			cr_assert_gt(w.flops, 0);
			cr_assert_null(w.bound); /* the roofline */
			cr_assert_str_eq(w.compute, f ? "ops_int8" : !strcmp(b->name, "quant_gemm")
									 ? "flops_sgemm"
									 : "flops_fp32");
			/* GEMV: the kernel quant_repack chose for this CPU, with the streams its
			 * set-up planned for this shape (e.g. "avx2-r8", "avx512vnni-r16x4"; on
			 * a CPU with the r16 kernels a plan must exist). GEMM: that kernel's kind
			 * on the repacked layout (qgemm_r8), or the plain GEMM's ("avx2"). */
			struct qgemv_setting plan;
			const int planned = f && qgemv_plan_find(f, (int64_t)m, (int64_t)k, 2, &plan);
			cr_assert(!f || strcmp(b->name, "quant_gemv") ||
				  planned == (qgemv_choose(f) == QGEMV_VNNI512_R16),
				  "%s: planned %d", fmt, planned);
			const char *want = !f ? "openblas"
				: strcmp(b->name, "quant_gemv")
					? (qgemv_kind_r8(qgemv_choose(f)) ? qgemv_kind_name(qgemv_choose(f))
									  : qkernel_variant())
				: planned ? qgemv_plan_variant(f, &plan)
				: qgemv_variant(f);
			cr_assert_str_eq(b->variant(st), want);
			b->teardown(st);
			cJSON_Delete(c);
		}
		cJSON_Delete(cases);
		ctx.quick = 0;
		cases = b->cases(&ctx);
		char *s = cJSON_PrintUnformatted(cases);
		if (!strcmp(b->name, "quant_gemv")) {
			cr_assert(strstr(s, "{\"format\":\"tq2_0\",\"m\":16384,\"k\":16384}") != NULL, "%s", s);
			cr_assert(strstr(s, "{\"format\":\"q4_1\",\"m\":11008,\"k\":4096}") != NULL, "%s", s);
		} else {
			cr_assert(strstr(s, "{\"format\":\"q3_g\",\"m\":4096,\"k\":4096,\"n\":128}") != NULL, "%s", s);
		}
		free(s);
		cJSON_Delete(cases);
		ctx.quick = 1;
	}
	cr_assert_eq(nkernel, 2);
}

Test(qkernel, suite_work_bounds_and_bad_params)
{
	const struct ocb_bench *gemv = NULL;
	gemv = ocb_bench_find("quant_gemv");
	cr_assert_not_null(gemv);
	struct ocb_work w;
	cJSON *p = filled_text(gemv, "{\"format\":\"q8_0\",\"m\":16384,\"k\":16384}");
	cr_assert_eq(gemv->work(p, &w), OCB_OK);
	cr_assert_null(w.bound);
	cr_assert_str_eq(w.compute, "ops_int8"); /* int8 dot products: the int8 roof */
	cr_assert_eq(w.flops, 2.0 * 16384 * 16384);
	cr_assert_geq(w.bytes, 16384.0 * 16384 * 34 / 32);
	cJSON_Delete(p);

	/* Level and rotation from the machine record, no size constant: TQ1_0 16384^2 (56.6
	 * MB, "bw_l3" before) is DRAM on a 32 MiB-L3 machine and rotates copies above twice
	 * the L3; on a 480 MiB-L3 machine it is an L3 case with one copy. */
	struct ocb_machine zen3 = {.cores = 2, .threads = 2, .l1d_bytes = 32 << 10,
				   .l2_bytes = 512 << 10, .l3_bytes = 32 << 20,
				   .mem_bytes = 8LL << 30};
	struct ocb_machine xeon = zen3;
	xeon.l1d_bytes = 48 << 10;
	xeon.l2_bytes = 2 << 20;
	xeon.l3_bytes = 480LL << 20;
	p = filled_text(gemv, "{\"format\":\"tq1_0\",\"m\":16384,\"k\":16384}");
	cr_assert_eq(gemv->work(p, &w), OCB_OK);
	struct ocb_roof_caches mc;
	char bound[32];
	ocb_machine_caches(&zen3, &mc);
	cr_assert_eq(ocb_roof_bound(&mc, w.bound, w.compute, w.bytes, 0, 1, bound, sizeof bound), 0);
	cr_expect_str_eq(bound, "roofline:ops_int8,bw_dram");
	ocb_machine_caches(&xeon, &mc);
	cr_assert_eq(ocb_roof_bound(&mc, w.bound, w.compute, w.bytes, 0, 2, bound, sizeof bound), 0);
	cr_expect_str_eq(bound, "roofline:ops_int8,bw_l3");
	double wb = 16384.0 * (double)qformat_row_bytes(qformat_find("tq1_0"), 16384);
	int nc = 0;
	struct ocb_ctx zc = {.threads = 1, .machine = &zen3};
	cr_assert_eq(qbench_copies(p, &zc, 0, wb, &nc), OCB_OK);
	cr_expect_eq(nc, 3, "floor(4 x 32 MiB / 56.6 MB) + 1");
	cr_expect_gt(nc * wb, 4.0 * (32 << 20));
	struct ocb_ctx xc = {.threads = 2, .machine = &xeon};
	cr_assert_eq(qbench_copies(p, &xc, 0, wb, &nc), OCB_OK);
	cr_expect_eq(nc, 1);
	/* The level from the layout the GEMV streams: where the CPU's kernel runs on the
	 * interleaved layout, TQ1_0 is TQ2_0 codes (69.2 MB at 16384^2, not its blocks'
	 * 56.6), which the Zen 5 VM's measured last level (54 MiB; its reported L3 508 MiB)
	 * cannot hold: DRAM, where its blocks alone said L3 (stored as bw_l3 at 36-40%). */
	const struct qformat *t1 = qformat_find("tq1_0");
	const int r8 = qgemv_kind_r8(qgemv_choose(t1));
	const double rb = (double)qrepack_bytes(t1, 16384, 16384);
	cr_expect(r8 ? fabs(w.ws - (w.bytes - wb + rb)) < 1 && rb > 1.2 * wb : w.ws == 0,
		  "r8 %d: ws %g bytes %g", r8, w.ws, w.bytes);
	cr_expect_eq(ocb_work_ws(&w), r8 ? w.ws : w.bytes);
	struct ocb_machine zen5 = {.cores = 2, .threads = 2, .l1d_bytes = 48 << 10,
				   .l2_bytes = 1 << 20, .l3_bytes = 508LL << 20,
				   .llc_bytes = 54LL << 20, .mem_bytes = 24LL << 30};
	ocb_machine_caches(&zen5, &mc);
	cr_assert_eq(ocb_roof_bound(&mc, w.bound, w.compute, w.bytes, 0, 1, bound, sizeof bound), 0);
	cr_expect_str_eq(bound, "roofline:ops_int8,bw_l3"); /* its blocks alone */
	struct ocb_ctx z5 = {.threads = 1, .machine = &zen5};
	struct ocb_result res = {.threads = 1};
	res.st.median = 2e-3;
	ocb_harness_bound(&res, &w, 1, &z5); /* what the harness stores */
	cr_expect_str_eq(res.bound, r8 ? "roofline:ops_int8,bw_dram" : "roofline:ops_int8,bw_l3");
	cr_assert_eq(qbench_copies(p, &z5, 0, wb, &nc), OCB_OK);
	cr_expect(r8 ? nc > 1 : nc == 1, "copies %d", nc); /* rotated as a DRAM case */
	cJSON_Delete(p);
	/* f32 16384^2 (1 GiB) on the 32 MiB machine: one copy already exceeds 4 LLC */
	p = filled_text(gemv, "{\"format\":\"f32\",\"m\":16384,\"k\":16384}");
	cr_assert_eq(qbench_copies(p, &zc, 0, 16384.0 * 16384 * 4, &nc), OCB_OK);
	cr_expect_eq(nc, 1);
	cJSON_Delete(p);
	p = filled_text(gemv, "{\"format\":\"tq1_0\",\"m\":512,\"k\":512}");
	cr_assert_eq(gemv->work(p, &w), OCB_OK);
	ocb_machine_caches(&zen3, &mc);
	cr_assert_eq(ocb_roof_bound(&mc, w.bound, w.compute, w.bytes, 0, 1, bound, sizeof bound), 0);
	/* 55 KB of weights: over L1d, under the L2 ceiling's band (from 2 l1d), so partly in
	 * L1d on every call (ocb_roof_level_cycle) */
	cr_expect_str_eq(bound, "roofline:ops_int8,bw_l1");
	cJSON_Delete(p);
	p = filled_text(gemv, "{\"format\":\"tq1_0\",\"m\":1024,\"k\":512}");
	cr_assert_eq(gemv->work(p, &w), OCB_OK);
	cr_assert_eq(ocb_roof_bound(&mc, w.bound, w.compute, w.bytes, 0, 1, bound, sizeof bound), 0);
	cr_expect_str_eq(bound, "roofline:ops_int8,bw_l2"); /* 110 KB */
	cJSON_Delete(p);
	struct ocb_ctx ctx = { .threads = 1, .seed = 1 };
	void *st = NULL;
	p = cJSON_Parse("{\"format\":\"q5_k\",\"m\":64,\"k\":64}");
	cr_assert_eq(gemv->setup(p, &ctx, &st), OCB_EINVAL);
	cr_assert(strstr(ocb_lasterr(), "q5_k") != NULL);
	cr_assert_null(st);
	cJSON_Delete(p);
	p = cJSON_Parse("{\"format\":\"tq2_0\",\"m\":64,\"k\":96}");
	cr_assert_eq(gemv->setup(p, &ctx, &st), OCB_EINVAL);
	cJSON_Delete(p);
}

/* The quant_gemv set-up plans a shape once per process (kernels/qgemv_plan.h): a second
 * set-up of the same case (the harness's next pass) keeps the first plan, stores no
 * second plan_time, and names the same variant; both give the harness the plan's median
 * as their set-up timing (reference_s: positive where planned, else 0). */
static int plan_times;
static int count_plan_time(void *c, const char *workload, long step, const char *key,
			   double value, const char *unit)
{
	(void)c, (void)workload, (void)step, (void)value, (void)unit;
	plan_times += strncmp(key, "plan_time_", 10) == 0;
	return 0;
}

Test(qkernel, gemv_plan_once_per_process)
{
	const struct ocb_bench *b = ocb_bench_find("quant_gemv");
	cr_assert_not_null(b);
	struct ocb_ctx ctx = { .threads = 2, .seed = 5, .quick = 1 };
	ctx.metrics.put = count_plan_time;
	cJSON *c = filled_text(b, "{\"format\":\"q4_0\",\"m\":256,\"k\":1024}");
	const int r16 = qgemv_choose(qformat_find("q4_0")) == QGEMV_VNNI512_R16;
	const char *names[2];
	double ref[2];
	cr_assert_not_null(b->reference_s);
	for (int pass = 0; pass < 2; pass++) {
		void *st = NULL;
		cr_assert_eq(b->setup(c, &ctx, &st), OCB_OK, "%s", ocb_lasterr());
		cr_assert_eq(plan_times, r16, "pass %d: %d plan(s) timed", pass, plan_times);
		names[pass] = b->variant(st);
		ref[pass] = b->reference_s(st);
		cr_assert(r16 ? ref[pass] > 0 && isfinite(ref[pass]) : ref[pass] == 0, "pass %d: %g",
			  pass, ref[pass]);
		cr_assert_eq(b->run(st), OCB_OK);
		b->teardown(st);
	}
	cr_assert_str_eq(names[0], names[1]);
	cr_assert_float_eq(ref[0], ref[1], 0, "the kept plan's median");
	cJSON_Delete(c);
}
