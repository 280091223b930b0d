/* bsr_impl: what bsr.c and bsr_avx2.c share (not a public header). */
#ifndef OCB_BSR_IMPL_H
#define OCB_BSR_IMPL_H

#include <immintrin.h>
#include <omp.h>

#include "../common/ocb_cpu.h"
#include "bsr.h"

/* The SIMD bodies take square blocks with B a multiple of 4: AVX-512F where
 * ocb_cpu_avx512f() (not under OCB_FORCE_AVX2), else AVX2+FMA, else plain C. */
static inline int bsr_use_avx2(const struct ocb_bsr *w)
{
	return w->br == w->bc && w->br % 4 == 0 && ocb_cpu_avx2();
}

static inline int bsr_use_avx512(const struct ocb_bsr *w)
{
	return bsr_use_avx2(w) && ocb_cpu_avx512f();
}

/* The team size of a call: threads <= 0 means OpenMP's default. */
static inline int bsr_nthreads(int threads)
{
	return threads > 0 ? threads : omp_get_max_threads();
}

/* Range [*lo, *hi) of the `nitems` rows (block rows or block columns) whose prefix count
 * of nonzero blocks is ptr[] that thread `t` of `nt` owns: about the same number of blocks
 * (plus one per row, so empty rows that still need zeroing are spread too) each. */
void bsr_split(const int32_t *ptr, int nitems, int t, int nt, int *lo, int *hi);

/* AVX2+FMA bodies (square blocks, B % 4 == 0): rows [lo, hi) of the output. */
void bsr_spmm_rows_avx2(const struct ocb_bsr *w, const float *x, int ldx, int n, float *y,
			int ldy, int lo, int hi);
void bsr_spmm_t_cols_avx2(const struct ocb_bsr *w, const float *dy, int lddy, int n,
			  float *dx, int lddx, int lo, int hi);
void bsr_sddmm_rows_avx2(const struct ocb_bsr *w, const float *dy, int lddy, const float *x,
			   int ldx, int n, float *dw, int accumulate, int lo, int hi);

/* AVX-512F bodies (bsr_avx512.c; square blocks, B % 4 == 0) of the two SpMMs. */
void bsr_spmm_rows_avx512(const struct ocb_bsr *w, const float *x, int ldx, int n, float *y,
			  int ldy, int lo, int hi);
void bsr_spmm_t_cols_avx512(const struct ocb_bsr *w, const float *dy, int lddy, int n,
			    float *dx, int lddx, int lo, int hi);

/* Sum of each of 8 vectors into the 8 lanes of one: lane l = sum of a[l]. */
static __attribute__((target("avx2"), always_inline)) inline __m256 bsr_hsum8(const __m256 a[8])
{
	__m256 h01 = _mm256_hadd_ps(a[0], a[1]), h23 = _mm256_hadd_ps(a[2], a[3]);
	__m256 h45 = _mm256_hadd_ps(a[4], a[5]), h67 = _mm256_hadd_ps(a[6], a[7]);
	__m256 q0 = _mm256_hadd_ps(h01, h23), q1 = _mm256_hadd_ps(h45, h67);
	/* q0 lanes 0-3: a0..a3 over the low halves, 4-7: over the high halves */
	__m256 lo = _mm256_permute2f128_ps(q0, q1, 0x20), hi = _mm256_permute2f128_ps(q0, q1, 0x31);
	return _mm256_add_ps(lo, hi);
}

/* AVX-512F body of dW on the stored blocks (square blocks, B % 4 == 0). */
void bsr_sddmm_rows_avx512(const struct ocb_bsr *w, const float *dy, int lddy, const float *x,
			   int ldx, int n, float *dw, int accumulate, int lo, int hi);

/* Row-major products (bsr_rm.c). Y[n][m] = X W^T and dX[n][k] = dY W share one body over
 * "output block rows" ob in [lo, hi): out[t][ob*B .. +B) = sum over the blocks
 * ptr[ob] .. ptr[ob+1]-1 of their packed values times in[t][pidx[q]*B .. +B). `pack` holds
 * each block (position q) in the body's layout, written by the matching pack function
 * from a block whose element (o, i) (output o, input i) sits at o*B + i (trans 0: W's own
 * block) or i*B + o (trans 1: W^T's block, i.e. W's block read transposed). */
void bsr_rm_pack_avx512(const float *blk, int B, int trans, float *dst);
void bsr_rm_rows_avx512(const float *pack, const int32_t *ptr, const int32_t *pidx, int B,
			const float *in, int ldin, int n, float *out, int ldout, int lo, int hi);
void bsr_rm_pack_avx2(const float *blk, int B, int trans, float *dst);
void bsr_rm_rows_avx2(const float *pack, const int32_t *ptr, const int32_t *pidx, int B,
		      const float *in, int ldin, int n, float *out, int ldout, int lo, int hi);
/* The layout both pack functions write, in plain C: G inputs per group (G = V/B for
 * B < V lanes, else 1), element (o, i) at (i/G)*B*G + o*G + i%G. */
void bsr_rm_pack_ref(const float *blk, int B, int trans, int G, float *dst);
/* The G = 1 layout (element (o, i) at i*B + o) for B % 8 == 0, AVX2 8 x 8 transposes. */
void bsr_rm_pack_g1(const float *blk, int B, int trans, float *dst);
/* dW[b] (+)= dY[:, rows of b]^T X[:, cols of b] on the stored blocks of block rows
 * [lo, hi), row-major dY [n][m] and X [n][k]. */
void bsr_rm_sddmm_rows_avx512(const struct ocb_bsr *w, const float *dy, int lddy,
			      const float *x, int ldx, int n, float *dw, int accumulate, int lo,
			      int hi);
void bsr_rm_sddmm_rows_avx2(const struct ocb_bsr *w, const float *dy, int lddy, const float *x,
			    int ldx, int n, float *dw, int accumulate, int lo, int hi);

#endif
