/* quant_q4: the 4-bit ggml formats. Scalar reference code; AVX2 kernels in quant_avx2.c.
 *   Q4_0: 32 weights, fp16 d + 16 bytes of nibbles, x = d*(q-8); 4.5 bpw.
 *   Q4_1: 32 weights, fp16 d + fp16 m + 16 bytes of nibbles, x = d*q + m; 5.0 bpw.
 * Nibbles: byte j holds element j (low nibble) and element j+16 (high nibble). */
#include <math.h>

#include "quant_impl.h"

static inline int nib(const uint8_t *qs, int i)
{
	return i < 16 ? qs[i] & 0x0f : qs[i - 16] >> 4;
}

/* ---- Q4_0 ---- */

void q4_0_quantize_row_ref(const float *x, void *vy, int64_t k)
{
	block_q4_0 *y = vy;
	for (int64_t b = 0; b < k / QK4_0; b++, x += QK4_0) {
		/* the value of largest magnitude, with its sign, maps to q = 0 (-8) */
		float mx = 0.0f;
		for (int i = 0; i < QK4_0; i++)
			if (fabsf(x[i]) > fabsf(mx))
				mx = x[i];
		y[b].d = ocb_fp32_to_fp16(mx / -8.0f);
		float id = qi_inv(qi_h2f(y[b].d));
		for (int j = 0; j < 16; j++) {
			int lo = qi_clamp(qi_round(x[j] * id) + 8, 0, 15);
			int hi = qi_clamp(qi_round(x[j + 16] * id) + 8, 0, 15);
			y[b].qs[j] = (uint8_t)(lo | hi << 4);
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

void q4_1_quantize_row_ref(const float *x, void *vy, int64_t k)
{
	block_q4_1 *y = vy;
	uint8_t q[QK4_1];
	for (int64_t b = 0; b < k / QK4_1; b++, x += QK4_1) {
		qi_quantize_minmax(x, QK4_1, 15, &y[b].d, &y[b].m, q);
		for (int j = 0; j < 16; j++)
			y[b].qs[j] = (uint8_t)(q[j] | q[j + 16] << 4);
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
