/* Criterion suite `qgemm_r8`: the batched GEMM on the repacked layouts
 * (kernels/quant_repack.h qgemm_r8): every format, against the plain-layout reference
 * qgemm_ref row by row within the fp32 summation-order bound, on every kernel kind this
 * CPU has (AVX2 r8, AVX-VNNI r8, AVX-512 VNNI r8 and r16), batches that do and do not fill
 * the 4-row kernels (r8 and r16), column panels, rows past the last group, 1-3 threads; its
 * plain-C twin equal to qgemm_ref by construction; bad arguments refused. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../kernels/quant_gemm.h"
#include "../kernels/quant_gemv.h"
#include "../kernels/quant_repack.h"
#include "qrepack_prob.h"

static const char *const all_fmts[] = { "q8_0", "q4_0", "q4_1", "q3_g", "q2_g", "tq2_0", "tq1_0" };
#define NALL (sizeof all_fmts / sizeof all_fmts[0])

/* n activation rows of k (each of its own scale), quantized for f; caller frees */
static char *act_rows(const struct qformat *f, int64_t n, int64_t k, uint64_t seed)
{
	struct ocb_rng r;
	ocb_rng_seed(&r, seed);
	float *a = malloc(sizeof(float) * (size_t)(n * k));
	char *xq = malloc(qformat_act_bytes(f, n, k));
	cr_assert(a && xq);
	for (int64_t i = 0; i < n * k; i++)
		a[i] = (float)ocb_rng_normal(&r) * (float)(1 + (i / k) % 3);
	cr_assert_eq(qformat_quantize_act(f, a, xq, n, k), OCB_OK);
	free(a);
	return xq;
}

/* qgemm_r8 (threads) against qgemm_ref on the plain blocks, every output within the
 * bound of its row (order_bound with that activation row) */
static void check_gemm(const struct qformat *f, int64_t m, int64_t k, int64_t n, int threads)
{
	struct rprob p;
	rprob_init(&p, f, m, k, (uint64_t)(m * 7 + k + n * 131 + threads));
	char *xq = act_rows(f, n, k, (uint64_t)(n + k));
	float *y0 = malloc(sizeof(float) * (size_t)(n * m)), *y1 = malloc(sizeof(float) * (size_t)(n * m));
	cr_assert(y0 && y1);
	cr_assert_eq(qrepack_pack(f, p.w, m, k, p.wr, threads), OCB_OK);
	cr_assert_eq(qgemm_ref(f, p.w, m, k, xq, n, y0, 1), OCB_OK);
	for (int64_t i = 0; i < n * m; i++)
		y1[i] = NAN; /* every output must be written */
	cr_assert_eq(qgemm_r8(f, p.wr, m, k, xq, n, y1, threads), OCB_OK);
	const size_t arow = qformat_act_bytes(f, 1, k);
	char *xq1 = p.xq;
	for (int64_t j = 0; j < n; j++) {
		p.xq = xq + (size_t)j * arow; /* the bound of activation row j */
		for (int64_t r = 0; r < m; r++) {
			const double a = y0[j * m + r], b = y1[j * m + r], tol = order_bound(&p, r);
			cr_assert_leq(fabs(a - b), tol, "%s m=%lld k=%lld n=%lld T=%d: y[%lld][%lld] ref "
				      "%.9g r8 %.9g (bound %.3g)", f->name, (long long)m, (long long)k,
				      (long long)n, threads, (long long)j, (long long)r, a, b, tol);
			cr_assert(fabs(a) > 0, "degenerate problem: zero output");
		}
	}
	p.xq = xq1;
	free(y0), free(y1), free(xq);
	rprob_free(&p);
}

/* Every format under OCB_QGEMV=env (the kernel kind want): shapes with one group and one
 * block, odd block counts, rows past the groups, several column panels (r16's 32-block
 * formats: qrepack_panel_blocks() each, cut into tiles of 64), batches 1, 3, 4, 5 and 9 */
static void check_kind(const char *env, enum qgemv_kind want)
{
	setenv("OCB_QGEMV", env, 1);
	cr_assert_eq(qgemv_choose(qformat_find("q4_0")), want, "%s", env);
	const int64_t ns[] = { 1, 3, 4, 5, 9 };
	for (size_t i = 0; i < NALL; i++) {
		const struct qformat *f = qformat_find(all_fmts[i]);
		for (size_t b = 0; b < sizeof ns / sizeof *ns; b++) {
			const int t = 1 + (int)(b % 3);
			if (f->block == 32) {
				check_gemm(f, 16, 32, ns[b], t);
				check_gemm(f, 21, 96, ns[b], t);
				/* 3 panels, the last of 3 blocks; 2, the last of 41 (a tile of
				 * 41: odd, not 64) */
				check_gemm(f, 37, 32 * (2 * qrepack_panel_blocks() + 3), ns[b], t);
				check_gemm(f, 21, 32 * (qrepack_panel_blocks() + 41), ns[b], t);
			}
			check_gemm(f, 19, 256, ns[b], t);
			check_gemm(f, 48, 768, ns[b], t);
		}
	}
	unsetenv("OCB_QGEMV");
}

Test(qgemm_r8, avx2_r8)
{
	if (!ocb_cpu_avx2())
		cr_skip_test("no AVX2 on this CPU (or OCB_FORCE_SCALAR set)");
	check_kind("r8", QGEMV_AVX2_R8);
}

Test(qgemm_r8, vnni_r8)
{
	if (!ocb_cpu_avxvnni())
		cr_skip_test("no AVX-VNNI on this CPU (or OCB_FORCE_SCALAR / OCB_FORCE_AVX2 set)");
	check_kind("r8-vnni", QGEMV_VNNI_R8);
}

Test(qgemm_r8, vnni512_r8)
{
	if (!ocb_cpu_avx512vnni())
		cr_skip_test("no AVX-512 VNNI on this CPU (or OCB_FORCE_SCALAR / OCB_FORCE_AVX2 set)");
	check_kind("r8-vnni512", QGEMV_VNNI512_R8);
}

/* the zmm kernels: 4 activation rows per call (qr_zmm_rows_kernel), the rest one by one
 * (the r8 kinds above: qr_avx2_rows_kernel, likewise) */
Test(qgemm_r8, vnni512_r16_four_rows)
{
	if (!ocb_cpu_avx512vnni())
		cr_skip_test("no AVX-512 VNNI on this CPU (or OCB_FORCE_SCALAR / OCB_FORCE_AVX2 set)");
	check_kind("r16", QGEMV_VNNI512_R16);
}

/* The plain-C twin is qgemv_r8_ref row by row, which equals qgemv_ref bit for bit: so
 * qgemm_r8_ref equals qgemm_ref (vec_dot_ref per output) exactly, on either layout. */
Test(qgemm_r8, ref_equals_plain_ref)
{
	for (int layout = 0; layout < 2; layout++) {
		setenv("OCB_QGEMV", layout ? "r16" : "r8", 1);
		for (size_t i = 0; i < NALL; i++) {
			const struct qformat *f = qformat_find(all_fmts[i]);
			struct rprob p;
			const int64_t m = 37, k = f->block == 32 ? 32 * 67 : 512, n = 5;
			rprob_init(&p, f, m, k, 3 + i);
			char *xq = act_rows(f, n, k, 11 + i);
			float y0[5 * 37], y1[5 * 37];
			cr_assert_eq(qrepack_pack(f, p.w, m, k, p.wr, 2), OCB_OK);
			cr_assert_eq(qgemm_ref(f, p.w, m, k, xq, n, y0, 2), OCB_OK);
			cr_assert_eq(qgemm_r8_ref(f, p.wr, m, k, xq, n, y1, 3), OCB_OK);
			cr_assert_eq(memcmp(y0, y1, sizeof y0), 0, "%s (%s)", f->name,
				     layout ? "r16" : "r8");
			free(xq);
			rprob_free(&p);
		}
	}
	unsetenv("OCB_QGEMV");
}

Test(qgemm_r8, bad_arguments_refused)
{
	const struct qformat *f = qformat_find("q4_0");
	struct rprob p;
	rprob_init(&p, f, 16, 64, 1);
	float y[16];
	cr_assert_eq(qrepack_pack(f, p.w, 16, 64, p.wr, 1), OCB_OK);
	cr_assert_eq(qgemm_r8(f, p.wr, 16, 64, p.xq, 0, y, 1), OCB_EINVAL);
	cr_assert_eq(qgemm_r8(f, p.wr, 16, 64, p.xq, 1, NULL, 1), OCB_EINVAL);
	cr_assert_eq(qgemm_r8(f, p.wr, 16, 48, p.xq, 1, y, 1), OCB_EINVAL); /* k % 32 */
	cr_assert_eq(qgemm_r8(NULL, p.wr, 16, 64, p.xq, 1, y, 1), OCB_EINVAL);
	cr_assert_eq(qgemm_r8_ref(f, p.wr, 16, 64, p.xq, -1, y, 1), OCB_EINVAL);
	cr_assert_eq(qgemm_r8(f, p.wr, 16, 64, p.xq, 1, y, 1), OCB_OK);
	rprob_free(&p);
}
