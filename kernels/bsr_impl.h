/* bsr_impl: what bsr.c and bsr_avx2.c share (not a public header). */
#ifndef OCB_BSR_IMPL_H
#define OCB_BSR_IMPL_H

#include <immintrin.h>

#include "bsr.h"

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

#endif
