/* quant_gemv: matrix products with quantized weights (quant_formats.h) and int8
 * activations, batch 1 (GEMV, decode) and batch n (GEMM, prefill). Every entry point has a
 * scalar `_ref` twin; the plain names take the AVX2 path when ocb_cpu_avx2() says so.
 *
 * Shapes: W is m rows of k weights (row-major, m * qformat_row_bytes(f, k) bytes; a row
 * per output feature, as workloads/linear.h); xq is n rows of quantized activations from
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
#include "quant_gemm.h" /* the batch-n products share this header's shapes and rules */

/* y[m] = W xq */
int qgemv(const struct qformat *f, const void *w, int64_t m, int64_t k, const void *xq, float *y,
	  int threads);
int qgemv_ref(const struct qformat *f, const void *w, int64_t m, int64_t k, const void *xq,
	      float *y, int threads);

/* Name of the path qgemv/qgemm take now: "avx2" or "ref". */
const char *qkernel_variant(void);

#endif
