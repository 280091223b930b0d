/* quant_impl: private to kernels/quant_*.c — the per-format functions the format table in
 * quant_formats.c points to, and small helpers shared by the scalar code. Not for callers
 * outside kernels/quant_*; they go through struct qformat (quant_formats.h). */
#ifndef OCB_QUANT_IMPL_H
#define OCB_QUANT_IMPL_H

#include <math.h>
#include <stdint.h>

#include "quant_formats.h"

/* Round to nearest, ties to even (default FP environment). */
static inline int qi_round(float x) { return (int)lrintf(x); }
static inline int qi_clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
static inline float qi_h2f(uint16_t h) { return ocb_fp16_to_fp32(h); }

/* Symmetric/asymmetric helpers: fp16-rounded scale and its inverse (0 if the scale is 0). */
static inline float qi_inv(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

#define QI_DECLARE(fmt)                                                                   \
	void fmt##_quantize_row_ref(const float *x, void *y, int64_t k);                  \
	void fmt##_dequantize_row(const void *x, float *y, int64_t k);                    \
	float fmt##_vec_dot_ref(int64_t k, const void *w, const void *a);                 \
	float fmt##_vec_dot_avx2(int64_t k, const void *w, const void *a);                \
	void fmt##_decode_row_ref(int64_t k, const void *w, float *d, float *m, int8_t *q); \
	void fmt##_decode_row_avx2(int64_t k, const void *w, float *d, float *m, int8_t *q);

QI_DECLARE(q8_0)
QI_DECLARE(q4_0)
QI_DECLARE(q4_1)
QI_DECLARE(q3_g)
QI_DECLARE(q2_g)
QI_DECLARE(tq2_0)
QI_DECLARE(tq1_0)

/* Asymmetric min/max RTN of one group of n values to codes 0..qmax: writes fp16 d, m
 * and q[n]; used by Q4_1, Q3_G, Q2_G. */
void qi_quantize_minmax(const float *x, int n, int qmax, uint16_t *d, uint16_t *m,
			uint8_t *q);

#endif
