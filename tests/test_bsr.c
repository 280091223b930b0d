/* Criterion suite `bsr`: block-sparse storage and products (kernels/bsr.h): conversion
 * round trip and transpose index, each product (the SIMD path and `_ref`) against dense
 * OpenBLAS on random block masks for every block size and odd n, each SIMD path forced
 * in turn (AVX-512, AVX2, scalar) against dense and `_ref`, thread-count independence,
 * the scalar-forced path, bad shapes, inference bytes, the librsb peer. */
#include <criterion/criterion.h>

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../kernels/bsr.h"
#include "../kernels/rsb_peer.h"

struct prob {
	int m, k, n, br, bc;
	float *w, *x, *dy;  /* W [m][k] (zeros outside the mask), X [k][n], dY [m][n] */
	uint8_t *mask;      /* [m/br][k/bc] */
	struct ocb_bsr s;
};

static void prob_init(struct prob *p, int m, int k, int n, int br, int bc, double density,
		      uint64_t seed)
{
	struct ocb_rng r;
	ocb_rng_seed(&r, seed);
	*p = (struct prob){.m = m, .k = k, .n = n, .br = br, .bc = bc};
	int mb = m / br, kb = k / bc;
	p->w = calloc((size_t)m * k, sizeof(float));
	p->x = malloc((size_t)k * n * sizeof(float));
	p->dy = malloc((size_t)m * n * sizeof(float));
	p->mask = malloc((size_t)mb * kb);
	for (int i = 0; i < mb * kb; i++)
		p->mask[i] = ocb_rng_uniform(&r) < density;
	for (int i = 0; i < m; i++)
		for (int j = 0; j < k; j++)
			if (p->mask[(i / br) * kb + j / bc])
				p->w[(size_t)i * k + j] = ocb_rng_uniformf(&r) - 0.5f;
	for (int i = 0; i < k * n; i++)
		p->x[i] = ocb_rng_uniformf(&r) - 0.5f;
	for (int i = 0; i < m * n; i++)
		p->dy[i] = ocb_rng_uniformf(&r) - 0.5f;
	cr_assert_eq(ocb_bsr_from_mask(&p->s, p->mask, p->w, m, k, br, bc), OCB_OK, "%s",
		     ocb_lasterr());
}

static void prob_free(struct prob *p)
{
	ocb_bsr_release(&p->s);
	free(p->w), free(p->x), free(p->dy), free(p->mask);
}

static void assert_close(const float *a, const float *b, size_t n, double tol, const char *what)
{
	for (size_t i = 0; i < n; i++)
		cr_assert(fabs((double)a[i] - b[i]) <= tol, "%s [%zu]: %g vs %g", what, i, a[i], b[i]);
}

/* Each product, optimized and _ref, against OpenBLAS on the dense W. Values are in
 * [-0.5, 0.5], sums of <= 512 terms: 2e-4 absolute covers fp32 reassociation. */
static void check_products(struct prob *p, int threads)
{
	int m = p->m, k = p->k, n = p->n;
	float *want = malloc((size_t)(m > k ? m : k) * n * sizeof(float));
	float *got = malloc((size_t)(m > k ? m : k) * n * sizeof(float));
	size_t vals = (size_t)p->s.nnzb * p->br * p->bc;
	float *dw = malloc((vals + 1) * sizeof(float)), *dwr = malloc((vals + 1) * sizeof(float));
	float *gw = malloc((size_t)m * k * sizeof(float));

	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, p->w, k, p->x, n,
		    0.0f, want, n);
	cr_assert_eq(ocb_bsr_spmm(&p->s, p->x, n, n, got, n, threads), OCB_OK);
	assert_close(got, want, (size_t)m * n, 2e-4, "spmm");
	cr_assert_eq(ocb_bsr_spmm_ref(&p->s, p->x, n, n, got, n, threads), OCB_OK);
	assert_close(got, want, (size_t)m * n, 2e-4, "spmm_ref");

	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k, n, m, 1.0f, p->w, k, p->dy, n,
		    0.0f, want, n);
	cr_assert_eq(ocb_bsr_spmm_t(&p->s, p->dy, n, n, got, n, threads), OCB_OK);
	assert_close(got, want, (size_t)k * n, 2e-4, "spmm_t");
	cr_assert_eq(ocb_bsr_spmm_t_ref(&p->s, p->dy, n, n, got, n, threads), OCB_OK);
	assert_close(got, want, (size_t)k * n, 2e-4, "spmm_t_ref");

	/* dW = dY X^T densely, then compared on the stored blocks; accumulate doubles it */
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, k, n, 1.0f, p->dy, n, p->x, n,
		    0.0f, gw, k);
	cr_assert_eq(ocb_bsr_sddmm(&p->s, p->dy, n, p->x, n, n, dw, 0, threads), OCB_OK);
	cr_assert_eq(ocb_bsr_sddmm_ref(&p->s, p->dy, n, p->x, n, n, dwr, 0, threads), OCB_OK);
	float *dense_on_blocks = malloc((vals + 1) * sizeof(float));
	struct ocb_bsr view = p->s;
	view.val = dense_on_blocks;
	ocb_bsr_gather(&view, gw);
	assert_close(dw, dense_on_blocks, vals, 2e-4, "sddmm");
	assert_close(dwr, dense_on_blocks, vals, 2e-4, "sddmm_ref");
	cr_assert_eq(ocb_bsr_sddmm(&p->s, p->dy, n, p->x, n, n, dw, 1, threads), OCB_OK);
	for (size_t i = 0; i < vals; i++)
		dense_on_blocks[i] *= 2.0f;
	assert_close(dw, dense_on_blocks, vals, 4e-4, "sddmm accumulate");
	free(dense_on_blocks), free(want), free(got), free(dw), free(dwr), free(gw);
}

Test(bsr, products_match_dense_every_block_size)
{
	static const int sizes[][2] = {{4, 4}, {8, 8}, {16, 16}, {32, 32}, {64, 64}, {1, 8}, {8, 1},
				       {1, 32}, {32, 1}};
	static const int ns[] = {1, 7, 24, 37, 128};
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
		for (size_t j = 0; j < sizeof ns / sizeof *ns; j++) {
			struct prob p;
			prob_init(&p, 128, 192, ns[j], sizes[s][0], sizes[s][1], 0.3,
				  100 + s * 10 + j);
			check_products(&p, 2);
			prob_free(&p);
		}
}

Test(bsr, empty_and_full_masks)
{
	for (int full = 0; full < 2; full++) {
		struct prob p;
		prob_init(&p, 64, 128, 40, 16, 16, full ? 1.1 : -1.0, 7);
		cr_assert_eq(p.s.nnzb, full ? (64 / 16) * (128 / 16) : 0);
		check_products(&p, 2);
		prob_free(&p);
	}
}

Test(bsr, conversion_round_trip_and_transpose_index)
{
	struct prob p;
	prob_init(&p, 96, 160, 8, 8, 8, 0.25, 3);
	struct ocb_bsr d;
	cr_assert_eq(ocb_bsr_from_dense(&d, p.w, p.m, p.k, 8, 8), OCB_OK);
	/* random values are never exactly 0 in this generator's range except by chance:
	 * from_dense finds at least the mask's blocks that hold a non-zero */
	cr_assert_leq(d.nnzb, p.s.nnzb);
	float *back = malloc((size_t)p.m * p.k * sizeof(float));
	ocb_bsr_scatter(&p.s, p.s.val, back, 1);
	cr_assert_eq(memcmp(back, p.w, (size_t)p.m * p.k * sizeof(float)), 0);
	ocb_bsr_scatter(&d, d.val, back, 1);
	cr_assert_eq(memcmp(back, p.w, (size_t)p.m * p.k * sizeof(float)), 0);
	/* every block appears once in the transpose index, at its column, in row order */
	int *seen = calloc((size_t)p.s.nnzb + 1, sizeof(int));
	for (int j = 0; j < p.s.kb; j++)
		for (int q = p.s.col_ptr[j]; q < p.s.col_ptr[j + 1]; q++) {
			int b = p.s.t_blk[q];
			cr_assert_eq(p.s.col_idx[b], j);
			cr_assert(b >= p.s.row_ptr[p.s.t_row[q]] && b < p.s.row_ptr[p.s.t_row[q] + 1]);
			if (q > p.s.col_ptr[j])
				cr_assert_gt(p.s.t_row[q], p.s.t_row[q - 1]);
			seen[b]++;
		}
	for (int b = 0; b < p.s.nnzb; b++)
		cr_assert_eq(seen[b], 1);
	free(seen), free(back);
	ocb_bsr_release(&d);
	prob_free(&p);
}

/* Each output element is computed by one thread in a fixed order, whatever the split:
 * identical by construction, so bit-equal. */
Test(bsr, thread_count_does_not_change_results)
{
	struct prob p;
	prob_init(&p, 256, 256, 48, 32, 32, 0.2, 11);
	size_t sz = (size_t)p.m * p.n * sizeof(float);
	float *a = malloc(sz), *b = malloc(sz);
	ocb_bsr_spmm(&p.s, p.x, p.n, p.n, a, p.n, 1);
	ocb_bsr_spmm(&p.s, p.x, p.n, p.n, b, p.n, 2);
	cr_assert_eq(memcmp(a, b, sz), 0);
	ocb_bsr_spmm_t(&p.s, p.dy, p.n, p.n, a, p.n, 1);
	ocb_bsr_spmm_t(&p.s, p.dy, p.n, p.n, b, p.n, 2);
	cr_assert_eq(memcmp(a, b, sz), 0);
	free(a), free(b);
	prob_free(&p);
}

Test(bsr, optimized_agrees_with_ref_and_scalar_forced)
{
	struct prob p;
	prob_init(&p, 128, 128, 33, 16, 16, 0.4, 5);
	size_t sz = (size_t)p.m * p.n * sizeof(float);
	float *a = malloc(sz), *b = malloc(sz);
	ocb_bsr_spmm(&p.s, p.x, p.n, p.n, a, p.n, 2);
	ocb_bsr_spmm_ref(&p.s, p.x, p.n, p.n, b, p.n, 2);
	assert_close(a, b, (size_t)p.m * p.n, 2e-5 * 16, "simd vs ref");
	setenv("OCB_FORCE_SCALAR", "1", 1);
	ocb_cpu_reset();
	cr_assert_str_eq(ocb_bsr_path(&p.s), "ref");
	ocb_bsr_spmm(&p.s, p.x, p.n, p.n, a, p.n, 2);
	unsetenv("OCB_FORCE_SCALAR");
	ocb_cpu_reset();
	cr_assert_eq(memcmp(a, b, sz), 0, "forced scalar is the ref path");
	free(a), free(b);
	prob_free(&p);
}

/* The AVX-512 body (where the CPU has it), the AVX2 body (OCB_FORCE_AVX2) and the plain-C
 * one (OCB_FORCE_SCALAR) each against dense OpenBLAS and `_ref` (check_products), over
 * the n tails of the zmm tile (1..3 vectors of 16, masked last vector) and the 4- and
 * 8-row tiles. Tolerance, not bit-equality: the paths are not identical by construction. */
Test(bsr, every_simd_path_matches_dense_and_ref)
{
	static const struct { const char *env, *path; } modes[] = {
		{NULL, NULL}, {"OCB_FORCE_AVX2", "avx2"}, {"OCB_FORCE_SCALAR", "ref"}};
	static const int blocks[] = {4, 8, 16, 32, 64}, ns[] = {1, 16, 17, 33, 48, 50, 200};
	for (size_t md = 0; md < sizeof modes / sizeof *modes; md++) {
		if (modes[md].env)
			setenv(modes[md].env, "1", 1);
		ocb_cpu_reset();
		for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++)
			for (size_t j = 0; j < sizeof ns / sizeof *ns; j++) {
				struct prob p;
				prob_init(&p, 128, 192, ns[j], blocks[b], blocks[b], 0.35,
					  900 + md * 100 + b * 10 + j);
				const char *want = modes[md].path ? modes[md].path
						   : ocb_cpu_avx512f()	 ? "avx512"
						   : ocb_cpu_avx2()	 ? "avx2"
									 : "ref";
				cr_assert_str_eq(ocb_bsr_path(&p.s), want);
				check_products(&p, 2);
				prob_free(&p);
			}
		if (modes[md].env)
			unsetenv(modes[md].env);
		ocb_cpu_reset();
	}
}

Test(bsr, bad_shapes_are_refused)
{
	struct ocb_bsr s;
	uint8_t mask[4] = {1, 1, 1, 1};
	float w[64 * 64] = {0};
	cr_assert_eq(ocb_bsr_from_mask(&s, mask, w, 60, 64, 32, 32), OCB_EINVAL);
	cr_assert_eq(ocb_bsr_from_mask(&s, mask, w, 64, 64, 12, 12), OCB_EINVAL);
	cr_assert_eq(ocb_bsr_from_mask(&s, mask, w, 64, 64, 8, 16), OCB_EINVAL);
	cr_assert_eq(ocb_bsr_from_dense(&s, w, 64, 64, 1, 1), OCB_EINVAL);
	cr_assert_eq(ocb_bsr_from_mask(&s, mask, w, 64, 64, 32, 32), OCB_OK);
	float y[64];
	cr_assert_eq(ocb_bsr_spmm(&s, w, 0, 0, y, 1, 1), OCB_EINVAL);
	ocb_bsr_release(&s);
	ocb_bsr_release(NULL);
}

Test(bsr, inference_bytes)
{
	struct prob p;
	prob_init(&p, 512, 512, 1, 32, 32, 0.05, 9);
	size_t dense = (size_t)512 * 512 * 4;
	size_t want = (size_t)p.s.nnzb * 32 * 32 * 4 + ((size_t)16 + 1 + p.s.nnzb) * 4;
	cr_assert_eq(ocb_bsr_bytes(&p.s), want);
	cr_assert_lt(ocb_bsr_bytes(&p.s) * 4, dense);
	cr_assert_float_eq(ocb_bsr_bytes_quant(&p.s, 32.0), (double)want, 1e-6);
	cr_assert_lt(ocb_bsr_bytes_quant(&p.s, 4.5), ocb_bsr_bytes(&p.s) / 6.0);
	prob_free(&p);
}

Test(bsr, librsb_peer_agrees)
{
	struct prob p;
	prob_init(&p, 256, 256, 24, 32, 32, 0.2, 13);
	struct ocb_rsb r;
	cr_assert_eq(ocb_rsb_init(), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_rsb_from_bsr(&r, &p.s), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(r.nnz, (long)p.s.nnzb * 32 * 32);
	float *want = malloc((size_t)p.m * p.n * sizeof(float));
	float *got = malloc((size_t)p.m * p.n * sizeof(float));
	cr_assert_eq(ocb_rsb_tune(&r, p.x, got, p.n, 1, 0.2), OCB_OK, "%s", ocb_lasterr());
	cr_assert_gt(r.tune_time, 0.0);
	cr_assert_eq(ocb_rsb_spmm(&r, p.x, got, p.n, 2), OCB_OK, "%s", ocb_lasterr());
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, p.m, p.n, p.k, 1.0f, p.w, p.k, p.x,
		    p.n, 0.0f, want, p.n);
	assert_close(got, want, (size_t)p.m * p.n, 2e-4, "librsb");
	ocb_rsb_release(&r);
	ocb_rsb_finalize();
	free(want), free(got);
	prob_free(&p);
}
