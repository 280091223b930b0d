/* quant_qg: our 3-bit and 2-bit group formats (layouts in quant_formats.h). Scalar
 * reference code; AVX2 kernels in quant_avx2.c.
 *   Q3_G: 32 weights, fp16 d + fp16 m + 8 B low bits + 4 B high-bit plane = 16 B, 4.0 bpw.
 *   Q2_G: 32 weights, fp16 d + fp16 m + 8 B of 2-bit codes = 12 B, 3.0 bpw.
 * Both asymmetric min/max RTN: x = d*q + m. The fp16 min costs 0.5 bpw at group 32; it
 * keeps one-sided groups (post-ReLU inputs, biases of the grid) representable, and any
 * quantizer group size that is a multiple of 32 fits by repeating (d, m). */
#include "quant_impl.h"

/* 2-bit code of element i (0..31) in an 8-byte plane: byte i%8, bits 2*(i/8). */
static inline int lo2(const uint8_t *qs, int i) { return (qs[i & 7] >> (2 * (i >> 3))) & 3; }
/* bit 2 of element i from the 32-bit high plane */
static inline int hi1(const uint8_t *qh, int i) { return (qh[i >> 3] >> (i & 7)) & 1; }

static void pack2(const uint8_t *q, uint8_t *qs)
{
	for (int j = 0; j < 8; j++)
		qs[j] = (uint8_t)((q[j] & 3) | (q[j + 8] & 3) << 2 | (q[j + 16] & 3) << 4 |
				  (q[j + 24] & 3) << 6);
}

/* ---- Q3_G ---- */

void q3_g_quantize_row_ref(const float *x, void *vy, int64_t k)
{
	block_q3_g *y = vy;
	uint8_t q[QK3_G];
	for (int64_t b = 0; b < k / QK3_G; b++, x += QK3_G) {
		qi_quantize_minmax(x, QK3_G, 7, &y[b].d, &y[b].m, q);
		q3_g_pack_codes(q, y[b].qs, y[b].qh);
	}
}

void q3_g_pack_codes(const uint8_t *q, uint8_t *qs, uint8_t *qh)
{
	pack2(q, qs);
	for (int j = 0; j < 4; j++) {
		uint8_t h = 0;
		for (int t = 0; t < 8; t++)
			h |= (uint8_t)(((q[8 * j + t] >> 2) & 1) << t);
		qh[j] = h;
	}
}

int q3_g_code(const uint8_t *qs, const uint8_t *qh, int i)
{
	return lo2(qs, i) | hi1(qh, i) << 2;
}

static inline int q3(const block_q3_g *b, int i) { return q3_g_code(b->qs, b->qh, i); }

void q3_g_dequantize_row(const void *vx, float *y, int64_t k)
{
	const block_q3_g *x = vx;
	for (int64_t b = 0; b < k / QK3_G; b++) {
		float d = qi_h2f(x[b].d), m = qi_h2f(x[b].m);
		for (int i = 0; i < QK3_G; i++)
			*y++ = d * (float)q3(&x[b], i) + m;
	}
}

float q3_g_vec_dot_ref(int64_t k, const void *vw, const void *va)
{
	const block_q3_g *w = vw;
	const block_qa32 *a = va;
	float sum = 0.0f;
	for (int64_t b = 0; b < k / QK3_G; b++) {
		int32_t is = 0;
		for (int i = 0; i < QK3_G; i++)
			is += q3(&w[b], i) * a[b].qs[i];
		sum += qi_h2f(w[b].d) * a[b].d * (float)is + qi_h2f(w[b].m) * a[b].ds;
	}
	return sum;
}

void q3_g_decode_row_ref(int64_t k, const void *vw, float *d, float *m, int8_t *q)
{
	const block_q3_g *w = vw;
	for (int64_t b = 0; b < k / QK3_G; b++) {
		d[b] = qi_h2f(w[b].d);
		m[b] = qi_h2f(w[b].m);
		for (int i = 0; i < QK3_G; i++)
			q[b * QK3_G + i] = (int8_t)q3(&w[b], i);
	}
}

/* ---- Q2_G ---- */

void q2_g_quantize_row_ref(const float *x, void *vy, int64_t k)
{
	block_q2_g *y = vy;
	uint8_t q[QK2_G];
	for (int64_t b = 0; b < k / QK2_G; b++, x += QK2_G) {
		qi_quantize_minmax(x, QK2_G, 3, &y[b].d, &y[b].m, q);
		pack2(q, y[b].qs);
	}
}

void q2_g_dequantize_row(const void *vx, float *y, int64_t k)
{
	const block_q2_g *x = vx;
	for (int64_t b = 0; b < k / QK2_G; b++) {
		float d = qi_h2f(x[b].d), m = qi_h2f(x[b].m);
		for (int i = 0; i < QK2_G; i++)
			*y++ = d * (float)lo2(x[b].qs, i) + m;
	}
}

float q2_g_vec_dot_ref(int64_t k, const void *vw, const void *va)
{
	const block_q2_g *w = vw;
	const block_qa32 *a = va;
	float sum = 0.0f;
	for (int64_t b = 0; b < k / QK2_G; b++) {
		int32_t is = 0;
		for (int i = 0; i < QK2_G; i++)
			is += lo2(w[b].qs, i) * a[b].qs[i];
		sum += qi_h2f(w[b].d) * a[b].d * (float)is + qi_h2f(w[b].m) * a[b].ds;
	}
	return sum;
}

void q2_g_decode_row_ref(int64_t k, const void *vw, float *d, float *m, int8_t *q)
{
	const block_q2_g *w = vw;
	for (int64_t b = 0; b < k / QK2_G; b++) {
		d[b] = qi_h2f(w[b].d);
		m[b] = qi_h2f(w[b].m);
		for (int i = 0; i < QK2_G; i++)
			q[b * QK2_G + i] = (int8_t)lo2(w[b].qs, i);
	}
}
