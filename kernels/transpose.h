/* transpose: dst[c][r] = src[r][c] for a row-major fp32 matrix src [rows][cols] (dst is
 * [cols][rows]). The block-sparse layers (workloads/bsr_layer.h) need it around every
 * product: the kernels take feature-major operands, the models give row-major ones, and a
 * plain scalar transpose cost more than the sparse products themselves at 90% sparsity
 * (MLP layers, batch 256: ~0.4 ms vs ~0.15 ms per layer forward, Intel Xeon, loaded).
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
