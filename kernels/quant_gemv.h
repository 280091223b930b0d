/* quant_gemv: matrix products with quantized weights (quant_formats.h) and int8
 * activations, batch 1 (GEMV, decode) and batch n (GEMM, prefill). Every entry point has a
 * scalar `_ref` twin; the plain names take the AVX2 path when ocb_cpu_avx2() says so.
 *
 * Shapes: W is m rows of k weights (row-major, m * qformat_row_bytes(f, k) bytes; a row
 * per output feature, as reference/linear.h); xq is n rows of quantized activations from
 * qformat_quantize_act(f, ...); y is y[m] (GEMV) or Y[n][m] = X[n][k] W^T (GEMM).
 * k must be a multiple of f->block (and so of f->act_block). threads <= 0: OpenMP's
 * default. Work is split over output rows (OpenMP static schedule: contiguous chunks).
 * All buffers belong to the caller; GEMM allocates a per-thread decode row (k bytes +
 * scales) and frees it before returning. Errors: OCB_EINVAL (bad shape/NULL),
 * OCB_ENOMEM. */
#ifndef OCB_QUANT_GEMV_H
#define OCB_QUANT_GEMV_H

#include <stdint.h>

#include "quant_formats.h"

/* y[m] = W xq */
int qgemv(const struct qformat *f, const void *w, int64_t m, int64_t k, const void *xq, float *y,
	  int threads);
int qgemv_ref(const struct qformat *f, const void *w, int64_t m, int64_t k, const void *xq,
	      float *y, int threads);

/* Y[n][m] = Xq[n][k] W^T. Each weight row is decoded once to int8 and reused for all n
 * activation rows (4 at a time in registers), so the product is compute-bound for n >= ~32. */
int qgemm(const struct qformat *f, const void *w, int64_t m, int64_t k, const void *xq,
	  int64_t n, float *y, int threads);
/* Reference: n x m scalar dot products (vec_dot_ref), no weight reuse. */
int qgemm_ref(const struct qformat *f, const void *w, int64_t m, int64_t k, const void *xq,
	      int64_t n, float *y, int threads);

/* Y[n][m] = X[n][k] W^T from fp32 activations: quantizes X into `act` (caller's buffer of
 * qformat_act_bytes(f, n, k) bytes) and runs qgemv (n == 1) or qgemm. The forward of a
 * quantized linear layer. */
int qmatmul(const struct qformat *f, const void *w, int64_t m, int64_t k, const float *x,
	    int64_t n, float *y, void *act, int threads);

/* Name of the path qgemv/qgemm take now: "avx2" or "ref". */
const char *qkernel_variant(void);

#endif
