/* quant_q4: the 4-bit ggml formats. Scalar reference code; AVX2 kernels in quant_avx2.c.
 *   Q4_0: 32 weights, fp16 d + 16 bytes of nibbles, x = d*(q-8); 4.5 bpw.
 *   Q4_1: 32 weights, fp16 d + fp16 m + 16 bytes of nibbles, x = d*q + m; 5.0 bpw.
 * Nibbles: byte j holds element j (low nibble) and element j+16 (high nibble). */
#include <float.h>
#include <math.h>

#include "quant_impl.h"

static inline int nib(const uint8_t *qs, int i)
{
	return i < 16 ? qs[i] & 0x0f : qs[i - 16] >> 4;
}

/* ---- Q4_0 ---- */

/* ggml's quantize_row_q4_0_ref (ggml/src/ggml-quants.c), byte for byte: the first value of
 * largest magnitude, with its sign, is `max`; d = max / -8 (so max maps to q = 0), id = 1/d
 * in fp32, q = min(15, (int8)(x*id + 8.5f)) — truncation of x*id + 8.5 rounded to fp32,
 * i.e. halves round up (toward +inf), not away from zero — then d stored as fp16. |x*id|
 * <= 8 (1 + 2^-21) while id is finite, so x*id + 8.5 is in [0.5, 16.5]: only +8 needs the
 * min. */
void q4_0_quantize_row_ref(const float *x, void *vy, int64_t k)
{
	block_q4_0 *y = vy;
	for (int64_t b = 0; b < k / QK4_0; b++, x += QK4_0) {
		float amax = 0.0f, max = 0.0f;
		for (int i = 0; i < QK4_0; i++)
			if (amax < fabsf(x[i])) {
				amax = fabsf(x[i]);
				max = x[i];
			}
		float d = max / -8.0f;
		float id = qi_inv(d);
		y[b].d = ocb_fp32_to_fp16(d);
		for (int j = 0; j < 16; j++) {
			int lo = qi_cvt_i8(qi_mul_add(x[j], id, 8.5f));
			int hi = qi_cvt_i8(qi_mul_add(x[j + 16], id, 8.5f));
			y[b].qs[j] = qi_q4_byte(lo, hi);
		}
	}
}

void q4_0_dequantize_row(const void *vx, float *y, int64_t k)
{
	const block_q4_0 *x = vx;
	for (int64_t b = 0; b < k / QK4_0; b++) {
		float d = qi_h2f(x[b].d);
		for (int i = 0; i < QK4_0; i++)
			*y++ = d * (float)(nib(x[b].qs, i) - 8);
	}
}

float q4_0_vec_dot_ref(int64_t k, const void *vw, const void *va)
{
	const block_q4_0 *w = vw;
	const block_qa32 *a = va;
	float sum = 0.0f;
	for (int64_t b = 0; b < k / QK4_0; b++) {
		int32_t is = 0;
		for (int i = 0; i < QK4_0; i++)
			is += (nib(w[b].qs, i) - 8) * a[b].qs[i];
		sum += qi_h2f(w[b].d) * a[b].d * (float)is;
	}
	return sum;
}

void q4_0_decode_row_ref(int64_t k, const void *vw, float *d, float *m, int8_t *q)
{
	const block_q4_0 *w = vw;
	for (int64_t b = 0; b < k / QK4_0; b++) {
		d[b] = qi_h2f(w[b].d);
		m[b] = 0.0f;
		for (int i = 0; i < QK4_0; i++)
			q[b * QK4_0 + i] = (int8_t)(nib(w[b].qs, i) - 8);
	}
}

/* ---- Q4_1 ---- */

/* ggml's quantize_row_q4_1_ref (ggml/src/ggml-quants.c), byte for byte: min and max from
 * FLT_MAX / -FLT_MAX, d = (max - min) / 15 and id = 1/d in fp32, q = min(15, (int8)((x -
 * min)*id + 0.5f)) (truncation: halves round up), then d and m = min stored as fp16. The
 * codes are chosen against the fp32 min, so the stored m (rounded) shifts every value by
 * the same < 2^-11 |min|. */
void q4_1_quantize_row_ref(const float *x, void *vy, int64_t k)
{
	block_q4_1 *y = vy;
	for (int64_t b = 0; b < k / QK4_1; b++, x += QK4_1) {
		float min = FLT_MAX, max = -FLT_MAX;
		for (int i = 0; i < QK4_1; i++) {
			if (x[i] < min)
				min = x[i];
			if (x[i] > max)
				max = x[i];
		}
		float d = (max - min) / 15.0f;
		float id = qi_inv(d);
		y[b].d = ocb_fp32_to_fp16(d);
		y[b].m = ocb_fp32_to_fp16(min);
		for (int j = 0; j < 16; j++) {
			int lo = qi_cvt_i8(qi_mul_add(x[j] - min, id, 0.5f));
			int hi = qi_cvt_i8(qi_mul_add(x[j + 16] - min, id, 0.5f));
			y[b].qs[j] = qi_q4_byte(lo, hi);
		}
	}
}

void q4_1_dequantize_row(const void *vx, float *y, int64_t k)
{
	const block_q4_1 *x = vx;
	for (int64_t b = 0; b < k / QK4_1; b++) {
		float d = qi_h2f(x[b].d), m = qi_h2f(x[b].m);
		for (int i = 0; i < QK4_1; i++)
			*y++ = d * (float)nib(x[b].qs, i) + m;
	}
}

/* sum_i (d q_i + m) d_a a_i = d d_a sum(q a) + m d_a sum(a) */
float q4_1_vec_dot_ref(int64_t k, const void *vw, const void *va)
{
	const block_q4_1 *w = vw;
	const block_qa32 *a = va;
	float sum = 0.0f;
	for (int64_t b = 0; b < k / QK4_1; b++) {
		int32_t is = 0;
		for (int i = 0; i < QK4_1; i++)
			is += nib(w[b].qs, i) * a[b].qs[i];
		sum += qi_h2f(w[b].d) * a[b].d * (float)is + qi_h2f(w[b].m) * a[b].ds;
	}
	return sum;
}

void q4_1_decode_row_ref(int64_t k, const void *vw, float *d, float *m, int8_t *q)
{
	const block_q4_1 *w = vw;
	for (int64_t b = 0; b < k / QK4_1; b++) {
		d[b] = qi_h2f(w[b].d);
		m[b] = qi_h2f(w[b].m);
		for (int i = 0; i < QK4_1; i++)
			q[b * QK4_1 + i] = (int8_t)nib(w[b].qs, i);
	}
}
