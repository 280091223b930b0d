/* bsr_impl: what bsr.c and bsr_avx2.c share (not a public header). */
#ifndef OCB_BSR_IMPL_H
#define OCB_BSR_IMPL_H

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

#endif
