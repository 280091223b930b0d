/* quant_impl: private to kernels/quant_*.c — the per-format functions the format table in
 * quant_formats.c points to, and small helpers shared by the scalar code. Not for callers
 * outside kernels/quant_*; they go through struct qformat (quant_formats.h). */
#ifndef OCB_QUANT_IMPL_H
#define OCB_QUANT_IMPL_H

#include <math.h>
#include <stdint.h>

#include "quant_formats.h"

/* Round to nearest, ties to even (default FP environment): the fp16-aware quantizers. */
static inline int qi_round(float x) { return (int)lrintf(x); }
static inline int qi_clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
static inline float qi_h2f(uint16_t h) { return ocb_fp16_to_fp32(h); }

/* 1/d, 0 if d is 0 (ggml's `d ? 1.0f/d : 0.0f`); infinite when d < ~2^-128. */
static inline float qi_inv(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

/* ---- ggml-exact arithmetic (the quantize_row_*_ref of ggml/src/ggml-quants.c) ----
 * ggml's reference quantizers are plain C on fp32 (SSE: every operation rounds to fp32).
 * These helpers reproduce its operations one by one, including the cases C leaves
 * undefined, as ggml compiles on x86-64 (gcc/clang, its Release build). */

/* largest |x[i]| of n values as ggml folds it: amax = MAX(amax, fabsf(v)) from 0 */
static inline float qi_amax(const float *x, int n)
{
	float amax = 0.0f;
	for (int i = 0; i < n; i++) {
		float a = fabsf(x[i]);
		amax = amax > a ? amax : a;
	}
	return amax;
}

/* fl(fl(a*b) + c): ggml's `x*id + 8.5f` with both roundings. With FMA enabled (e.g.
 * CFLAGS=-march=native) GCC's gnu11 default -ffp-contract=fast fuses a*b + c into one fma
 * even across statements (and narrows a double sum of two floats back to float first);
 * the fused result differs from ggml's in ~10% of the blocks with exact ties. The product
 * goes through a volatile, whose read the compiler cannot fuse with the multiply. */
static inline float qi_mul_add(float a, float b, float c)
{
	volatile float p = a * b;
	return p + c;
}

/* C's (int8_t)v for a float v as GCC compiles it on x86-64: cvttss2si (truncation toward
 * zero; NaN, +-inf and |v| >= 2^31 give 0x80000000), then the low byte. ggml converts x*id
 * (+ 8.5 / + 0.5) this way. The value leaves int8 range only as NaN or +-inf: when id = 1/d
 * is infinite (d < ~2^-128, so the stored fp16 d is 0 and every weight dequantizes to 0
 * anyway), when Q4_1's x - min overflows (|x| near FLT_MAX), or for infinite inputs. C
 * leaves that conversion undefined, so ggml's bytes there depend on its compiler: its GCC
 * build (-O0 and -O3 alike) writes code 0, reproduced here; a clang 14 -O3 build writes
 * -128 (0x80). Everywhere else the conversion is exact truncation. */
static inline int qi_cvt_i8(float v)
{
	int32_t t = (v >= -0x1p31f && v < 0x1p31f) ? (int32_t)v : INT32_MIN;
	int b = t & 0xff;
	return b < 128 ? b : b - 256;
}

/* ggml's TQ1_0/TQ2_0 code `int xi = lroundf(v) + 1` for v = x*id: halves away from zero,
 * so 0, 1, 2 for v in [-1-2^-23, 1+2^-23] (|x| <= amax = d), the only finite values that
 * occur. For NaN and +-inf (id infinite) lroundf is a domain error; glibc returns (long)v,
 * LONG_MIN on x86-64, and LONG_MIN + 1 truncated to int is 1. Other values follow the same
 * rules (long, + 1, low 32 bits) for completeness. */
static inline int qi_tq_code(float v)
{
	int64_t l = (v >= -0x1p63f && v < 0x1p63f) ? (int64_t)roundf(v) : INT64_MIN;
	return (int)(uint32_t)((uint64_t)l + 1u);
}

/* Q3_G's plain bit layout (quant_formats.h; quant_qg.c): the 3-bit code of element i
 * (0..31) of a block's qs[8] and qh[4], and the 32 codes q (0..7) written into them. */
int q3_g_code(const uint8_t *qs, const uint8_t *qh, int i);
void q3_g_pack_codes(const uint8_t *q, uint8_t *qs, uint8_t *qh);

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

/* ggml's Q4 byte of the codes of elements j and j+16: `uint8_t xi = MIN(15, c)`, then
 * `qs = xi0; qs |= xi1 << 4` (c an int8 code, see qi_cvt_i8; 0..16 in practice). */
static inline uint8_t qi_q4_byte(int lo, int hi)
{
	uint8_t a = (uint8_t)(lo < 15 ? lo : 15), b = (uint8_t)(hi < 15 ? hi : 15);
	return (uint8_t)(a | b << 4);
}

/* TQ packers (quant_tq.c), shared by both roundings: code[256] in element order, each
 * 0, 1, 2 for weight -1, 0, +1, into the block's qs (and qh) with ggml's 8-bit arithmetic. */
void qi_tq2_0_pack(const int *code, block_tq2_0 *y);
void qi_tq1_0_pack(const int *code, block_tq1_0 *y);

/* The fp16-aware variants of the ggml formats (quant_fp16aware.c): the scale (and min)
 * rounded to fp16 first, codes against the stored values, halves to even. */
void q8_0_quantize_row_fp16aware(const float *x, void *y, int64_t k);
void q4_0_quantize_row_fp16aware(const float *x, void *y, int64_t k);
void q4_1_quantize_row_fp16aware(const float *x, void *y, int64_t k);
void tq2_0_quantize_row_fp16aware(const float *x, void *y, int64_t k);
void tq1_0_quantize_row_fp16aware(const float *x, void *y, int64_t k);

/* Asymmetric min/max RTN of one group of n values to codes 0..qmax: writes fp16 d, m
 * and q[n]; used by Q4_1, Q3_G, Q2_G. */
void qi_quantize_minmax(const float *x, int n, int qmax, uint16_t *d, uint16_t *m,
			uint8_t *q);

#endif
