/* Criterion suite `bsr_rm`: the block-sparse products on row-major activations
 * (kernels/bsr.h, `_rm`): Y = X W^T, dX = dY W and dW = dY^T X on the stored blocks, each
 * SIMD path (AVX-512 where the CPU has it, AVX2 forced, scalar forced) and `_ref` against
 * dense OpenBLAS on random block masks, for every block size, batch tails of the row
 * tiles and leading dimensions wider than the rows; the thread split does not change a
 * bit; empty and full masks; bad arguments. */
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

/* W [m][k] (zeros outside the mask) as BSR; X [n][k] and dY [n][m] row-major with
 * leading dimensions ldx = k + pad, ldd = m + pad. */
struct rm_prob {
	int m, k, n, br, bc, ldx, ldd;
	float *w, *x, *dy;
	struct ocb_bsr s;
};

static void rm_init(struct rm_prob *p, int m, int k, int n, int br, int bc, double density,
		    int pad, uint64_t seed)
{
	struct ocb_rng r;
	ocb_rng_seed(&r, seed);
	*p = (struct rm_prob){.m = m, .k = k, .n = n, .br = br, .bc = bc, .ldx = k + pad,
			      .ldd = m + pad};
	int mb = m / br, kb = k / bc;
	uint8_t *mask = malloc((size_t)mb * kb);
	p->w = calloc((size_t)m * k, sizeof(float));
	p->x = malloc((size_t)n * p->ldx * sizeof(float));
	p->dy = malloc((size_t)n * p->ldd * sizeof(float));
	for (int i = 0; i < mb * kb; i++)
		mask[i] = ocb_rng_uniform(&r) < density;
	for (int i = 0; i < m; i++)
		for (int j = 0; j < k; j++)
			if (mask[(i / br) * kb + j / bc])
				p->w[(size_t)i * k + j] = ocb_rng_uniformf(&r) - 0.5f;
	for (size_t i = 0; i < (size_t)n * p->ldx; i++)
		p->x[i] = ocb_rng_uniformf(&r) - 0.5f;
	for (size_t i = 0; i < (size_t)n * p->ldd; i++)
		p->dy[i] = ocb_rng_uniformf(&r) - 0.5f;
	cr_assert_eq(ocb_bsr_from_mask(&p->s, mask, p->w, m, k, br, bc), OCB_OK, "%s",
		     ocb_lasterr());
	free(mask);
}

static void rm_free(struct rm_prob *p)
{
	ocb_bsr_release(&p->s);
	free(p->w), free(p->x), free(p->dy);
}

/* got[r][0..cols) against want (rows of ld floats each); the padding of got untouched. */
static void close_rows(const float *got, const float *want, int rows, int cols, int ld,
		       double tol, const char *what, int B, int n)
{
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < ld; c++) {
			float g = got[(size_t)r * ld + c], wv = want[(size_t)r * ld + c];
			if (c >= cols)
				cr_assert_eq(g, -7.0f, "%s B %d n %d: padding [%d][%d] written", what,
					     B, n, r, c);
			else
				cr_assert(fabs((double)g - wv) <= tol, "%s B %d n %d [%d][%d]: %g vs %g",
					  what, B, n, r, c, g, wv);
		}
}

typedef int (*rm_fwd)(const struct ocb_bsr *, const float *, int, int, float *, int, float *,
		      int);
typedef int (*rm_dw)(const struct ocb_bsr *, const float *, int, const float *, int, int,
		     float *, int, int);

/* Y and dX of one implementation against the dense products want_y, want_dx; with the
 * caller's scratch and with the one allocated per call. */
static void check_fwd(struct rm_prob *p, rm_fwd fy, rm_fwd fdx, const float *want_y,
		      const float *want_dx, float *buf, int threads, const char *what)
{
	size_t ny = (size_t)p->n * p->ldd, nx = (size_t)p->n * p->ldx;
	float *scratch = ocb_alloc(ocb_bsr_rm_scratch_floats(&p->s) * sizeof(float));
	for (int own = 0; own < 2; own++) {
		float *sc = own ? scratch : NULL;
		for (size_t i = 0; i < ny; i++)
			buf[i] = -7.0f;
		cr_assert_eq(fy(&p->s, p->x, p->ldx, p->n, buf, p->ldd, sc, threads), OCB_OK, "%s",
			     ocb_lasterr());
		close_rows(buf, want_y, p->n, p->m, p->ldd, 2e-4, what, p->br, p->n);
		for (size_t i = 0; i < nx; i++)
			buf[i] = -7.0f;
		cr_assert_eq(fdx(&p->s, p->dy, p->ldd, p->n, buf, p->ldx, sc, threads), OCB_OK,
			     "%s", ocb_lasterr());
		close_rows(buf, want_dx, p->n, p->k, p->ldx, 2e-4, what, p->br, p->n);
	}
	ocb_free(scratch);
}

/* dW (overwrite, then accumulate: doubled) against the dense dY^T X on the blocks. */
static void check_dw(struct rm_prob *p, rm_dw f, const float *want, int threads,
		     const char *what)
{
	size_t vals = (size_t)p->s.nnzb * p->br * p->bc;
	float *dw = malloc((vals + 1) * sizeof(float));
	cr_assert_eq(f(&p->s, p->dy, p->ldd, p->x, p->ldx, p->n, dw, 0, threads), OCB_OK);
	for (size_t i = 0; i < vals; i++)
		cr_assert(fabs((double)dw[i] - want[i]) <= 2e-4, "%s dW B %d n %d [%zu]: %g vs %g",
			  what, p->br, p->n, i, dw[i], want[i]);
	cr_assert_eq(f(&p->s, p->dy, p->ldd, p->x, p->ldx, p->n, dw, 1, threads), OCB_OK);
	for (size_t i = 0; i < vals; i++)
		cr_assert(fabs((double)dw[i] - 2.0 * want[i]) <= 4e-4, "%s dW accumulate [%zu]",
			  what, i);
	free(dw);
}

/* The optimized names and the `_ref` twins against OpenBLAS on the dense W. */
static void check_all(struct rm_prob *p, int threads)
{
	int m = p->m, k = p->k, n = p->n;
	size_t big = (size_t)n * (p->ldx > p->ldd ? p->ldx : p->ldd);
	float *want_y = calloc(big, sizeof(float)), *want_dx = calloc(big, sizeof(float));
	float *buf = malloc(big * sizeof(float)), *gw = malloc((size_t)m * k * sizeof(float));
	size_t vals = (size_t)p->s.nnzb * p->br * p->bc;
	float *want_dw = malloc((vals + 1) * sizeof(float));

	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, m, k, 1.0f, p->x, p->ldx, p->w,
		    k, 0.0f, want_y, p->ldd);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, k, m, 1.0f, p->dy, p->ldd,
		    p->w, k, 0.0f, want_dx, p->ldx);
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, k, n, 1.0f, p->dy, p->ldd, p->x,
		    p->ldx, 0.0f, gw, k);
	struct ocb_bsr view = p->s;
	view.val = want_dw;
	ocb_bsr_gather(&view, gw);

	check_fwd(p, ocb_bsr_spmm_rm, ocb_bsr_spmm_t_rm, want_y, want_dx, buf, threads, "simd");
	check_fwd(p, ocb_bsr_spmm_rm_ref, ocb_bsr_spmm_t_rm_ref, want_y, want_dx, buf, threads,
		  "ref");
	check_dw(p, ocb_bsr_sddmm_rm, want_dw, threads, "simd");
	check_dw(p, ocb_bsr_sddmm_rm_ref, want_dw, threads, "ref");
	free(want_y), free(want_dx), free(buf), free(gw), free(want_dw);
}

/* AVX-512 (where present), AVX2 forced, scalar forced: every block size, batch sizes
 * around the row tiles (24 / 12 rows, then 8, 4, 1) and padded leading dimensions.
 * Tolerance, not bit-equality: the paths sum in different orders. */
Test(bsr_rm, every_path_matches_dense_and_ref)
{
	static const struct { const char *env, *path; } modes[] = {
		{NULL, NULL}, {"OCB_FORCE_AVX2", "avx2"}, {"OCB_FORCE_SCALAR", "ref"}};
	static const int blocks[] = {4, 8, 16, 32, 64}, ns[] = {1, 3, 13, 24, 29, 50};
	for (size_t md = 0; md < sizeof modes / sizeof *modes; md++) {
		if (modes[md].env)
			setenv(modes[md].env, "1", 1);
		ocb_cpu_reset();
		for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++)
			for (size_t j = 0; j < sizeof ns / sizeof *ns; j++) {
				struct rm_prob p;
				rm_init(&p, 128, 192, ns[j], blocks[b], blocks[b], 0.35, (int)j % 3,
					2000 + md * 100 + b * 10 + j);
				const char *want = modes[md].path ? modes[md].path
						   : ocb_cpu_avx512f()	 ? "avx512"
						   : ocb_cpu_avx2()	 ? "avx2"
									 : "ref";
				cr_assert_str_eq(ocb_bsr_path(&p.s), want);
				check_all(&p, 2);
				rm_free(&p);
			}
		if (modes[md].env)
			unsetenv(modes[md].env);
		ocb_cpu_reset();
	}
}

/* The rectangular blocks (plain C only) and the MLP layer's shape at 90% sparsity. */
Test(bsr_rm, rectangular_blocks_and_the_mlp_layer)
{
	static const int sizes[][2] = {{1, 8}, {8, 1}, {1, 32}, {32, 1}};
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
		struct rm_prob p;
		rm_init(&p, 64, 96, 7, sizes[s][0], sizes[s][1], 0.3, 1, 300 + s);
		check_all(&p, 2);
		rm_free(&p);
	}
	struct rm_prob p;
	rm_init(&p, 256, 512, 61, 8, 8, 0.1, 0, 77);
	check_all(&p, 2);
	rm_free(&p);
}

Test(bsr_rm, empty_and_full_masks)
{
	for (int full = 0; full < 2; full++) {
		struct rm_prob p;
		rm_init(&p, 64, 128, 30, 8, 8, full ? 1.1 : -1.0, 2, 7);
		cr_assert_eq(p.s.nnzb, full ? (64 / 8) * (128 / 8) : 0);
		check_all(&p, 2);
		rm_free(&p);
	}
}

/* Each output element is summed by one thread in a fixed order whatever the split:
 * identical by construction, so bit-equal between 1 and 2 threads. */
Test(bsr_rm, thread_count_does_not_change_results)
{
	struct rm_prob p;
	rm_init(&p, 256, 320, 37, 8, 8, 0.2, 0, 11);
	size_t ny = (size_t)p.n * p.ldd, nx = (size_t)p.n * p.ldx;
	size_t nv = (size_t)p.s.nnzb * 64;
	size_t big = (ny > nx ? ny : nx) > nv ? (ny > nx ? ny : nx) : nv;
	float *a = malloc(big * sizeof(float)), *b = malloc(big * sizeof(float));
	ocb_bsr_spmm_rm(&p.s, p.x, p.ldx, p.n, a, p.ldd, NULL, 1);
	ocb_bsr_spmm_rm(&p.s, p.x, p.ldx, p.n, b, p.ldd, NULL, 2);
	cr_assert_eq(memcmp(a, b, ny * sizeof(float)), 0);
	ocb_bsr_spmm_t_rm(&p.s, p.dy, p.ldd, p.n, a, p.ldx, NULL, 1);
	ocb_bsr_spmm_t_rm(&p.s, p.dy, p.ldd, p.n, b, p.ldx, NULL, 2);
	cr_assert_eq(memcmp(a, b, nx * sizeof(float)), 0);
	ocb_bsr_sddmm_rm(&p.s, p.dy, p.ldd, p.x, p.ldx, p.n, a, 0, 1);
	ocb_bsr_sddmm_rm(&p.s, p.dy, p.ldd, p.x, p.ldx, p.n, b, 0, 2);
	cr_assert_eq(memcmp(a, b, nv * sizeof(float)), 0);
	free(a), free(b);
	rm_free(&p);
}

Test(bsr_rm, bad_arguments_are_refused)
{
	struct rm_prob p;
	rm_init(&p, 64, 64, 4, 8, 8, 0.5, 0, 3);
	float out[64 * 4], dw[64 * 64];
	cr_assert_eq(ocb_bsr_spmm_rm(&p.s, p.x, 63, 4, out, 64, NULL, 1), OCB_EINVAL);
	cr_assert_eq(ocb_bsr_spmm_rm(&p.s, p.x, 64, 0, out, 64, NULL, 1), OCB_EINVAL);
	cr_assert_eq(ocb_bsr_spmm_t_rm(&p.s, p.dy, 64, 4, out, 32, NULL, 1), OCB_EINVAL);
	cr_assert_eq(ocb_bsr_sddmm_rm(&p.s, p.dy, 64, p.x, 64, 4, NULL, 0, 1), OCB_EINVAL);
	cr_assert_eq(ocb_bsr_sddmm_rm_ref(NULL, p.dy, 64, p.x, 64, 4, dw, 0, 1), OCB_EINVAL);
	rm_free(&p);
}
