/* transpose: dst[c][r] = src[r][c] for a row-major fp32 matrix src [rows][cols] (dst is
 * [cols][rows]). Written for the block-sparse layers, which once transposed around every
 * product (feature-major kernels, row-major models; a plain scalar transpose cost more
 * than the sparse products at 90% sparsity); they now use the row-major kernels
 * (kernels/bsr_rm.c), whose block packing uses the 8 x 8 register tile below.
 *
 * ocb_transpose: 8 x 8 tiles transposed in AVX registers (when ocb_cpu_avx2()), the
 * edges element by element, OpenMP over strips of 32 source rows when the matrix is big
 * enough to pay for a parallel region (threads <= 0: OpenMP's default). A transpose only
 * moves values, so every path gives the same bits. ocb_transpose_ref: the plain loop. */
#ifndef OCB_TRANSPOSE_H
#define OCB_TRANSPOSE_H

void ocb_transpose(const float *src, int rows, int cols, float *dst, int threads);
void ocb_transpose_ref(const float *src, int rows, int cols, float *dst);
/* One 8 x 8 tile in AVX registers: dst[c*ldd + r] = src[r*lds + c] for r, c < 8. Only
 * where ocb_cpu_avx2() (the block-sparse kernels' packing, kernels/bsr_rm.c). */
void ocb_transpose_8x8(const float *src, int lds, float *dst, int ldd);

#endif
