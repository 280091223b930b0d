/* quant_gemm: batch-n products with quantized weights (prefill), the GEMM side of
 * quant_gemv.h, whose shapes, threading and error rules apply: W m x k in format f, Xq n
 * rows of quantized activations, Y[n][m] = Xq[n][k] W^T. */
#ifndef OCB_QUANT_GEMM_H
#define OCB_QUANT_GEMM_H

#include <stdint.h>

#include "quant_formats.h"

/* Y[n][m] = Xq[n][k] W^T. Each weight row is decoded once to int8 and reused for all n
 * activation rows (4 at a time in registers), so the product is compute-bound for n >= ~32.
 * On weights repacked for the GEMV, qgemm_r8 (quant_repack.h) ran 3.9-6.1x faster at one
 * thread on the Zen 5 VM (4096^2, n = 8-128; README). */
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

#endif
