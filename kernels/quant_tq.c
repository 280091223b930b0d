/* quant_tq: the ternary formats of llama.cpp (TQ2_0, TQ1_0; compilade, llama.cpp PR #8151),
 * written from the layout description in quant_formats.h. Scalar reference code; AVX2
 * kernels in quant_avx2.c. Weights are d * {-1, 0, 1} with one fp16 d per 256 weights.
 *   TQ2_0: 64 B of 2-bit codes {0,1,2} + fp16 d = 66 B, 2.0625 bpw.
 *   TQ1_0: 48 B of 5 trits + 4 B of 4 trits + fp16 d = 54 B, 1.6875 bpw.
 * quantize_row_ref is ggml's quantize_row_tq2_0_ref / quantize_row_tq1_0_ref
 * (ggml/src/ggml-quants.c) byte for byte: d = max|x| per block and id = 1/d in fp32, code
 * lroundf(x*id) + 1 (halves away from zero) against that fp32 d, then d stored as fp16.
 * Exact for inputs that are already ternary times an fp16 scale (BitNet absmean weights:
 * REFERENCE.md §1). */
#include <math.h>

#include "quant_impl.h"

/* ggml's codes of one 256 block: d = amax (stored as fp16 at *dh), code[i] = lroundf(x[i] /
 * d) + 1 with the fp32 1/d. */
static void tq_codes_ggml(const float *x, uint16_t *dh, int *code)
{
	float d = qi_amax(x, QK_TQ);
	float id = qi_inv(d);
	*dh = ocb_fp32_to_fp16(d);
	for (int i = 0; i < QK_TQ; i++)
		code[i] = qi_tq_code(x[i] * id);
}

/* ---- TQ2_0 ---- */

static inline int tq2_code(const block_tq2_0 *b, int i)
{
	int h = i >> 7, n = (i >> 5) & 3, m = i & 31;
	return (b->qs[32 * h + m] >> (2 * n)) & 3;
}

/* code[256] (element order) -> qs: byte 32h + m gets code[128h + 32n + m] & 3 at bits 2n,
 * as ggml's `q += (xi & 3) << (2*n)`. */
void qi_tq2_0_pack(const int *code, block_tq2_0 *y)
{
	for (int h = 0; h < 2; h++)
		for (int m = 0; m < 32; m++) {
			unsigned v = 0;
			for (int n = 0; n < 4; n++)
				v += (unsigned)(code[128 * h + 32 * n + m] & 3) << (2 * n);
			y->qs[32 * h + m] = (uint8_t)v;
		}
}

void tq2_0_quantize_row_ref(const float *x, void *vy, int64_t k)
{
	block_tq2_0 *y = vy;
	int code[QK_TQ];
	for (int64_t b = 0; b < k / QK_TQ; b++, x += QK_TQ) {
		tq_codes_ggml(x, &y[b].d, code);
		qi_tq2_0_pack(code, &y[b]);
	}
}

void tq2_0_dequantize_row(const void *vx, float *y, int64_t k)
{
	const block_tq2_0 *x = vx;
	for (int64_t b = 0; b < k / QK_TQ; b++) {
		float d = qi_h2f(x[b].d);
		for (int i = 0; i < QK_TQ; i++)
			*y++ = d * (float)(tq2_code(&x[b], i) - 1);
	}
}

float tq2_0_vec_dot_ref(int64_t k, const void *vw, const void *va)
{
	const block_tq2_0 *w = vw;
	const block_qa256 *a = va;
	float sum = 0.0f;
	for (int64_t b = 0; b < k / QK_TQ; b++) {
		int32_t is = 0;
		for (int i = 0; i < QK_TQ; i++)
			is += (tq2_code(&w[b], i) - 1) * a[b].qs[i];
		sum += qi_h2f(w[b].d) * a[b].d * (float)is;
	}
	return sum;
}

void tq2_0_decode_row_ref(int64_t k, const void *vw, float *d, float *m, int8_t *q)
{
	const block_tq2_0 *w = vw;
	for (int64_t b = 0; b < k / QK_TQ; b++) {
		d[b] = qi_h2f(w[b].d);
		m[b] = 0.0f;
		for (int i = 0; i < QK_TQ; i++)
			q[b * QK_TQ + i] = (int8_t)(tq2_code(&w[b], i) - 1);
	}
}

/* ---- TQ1_0 ---- */

/* Byte of trits t[0..5) (t[0] most significant): ceil(256 * value / 243), value < 243, so
 * the base-3 number sits in the top bits and multiplying by 3 (mod 256) shifts out one trit.
 * The value accumulates in 8 bits (q = q*3 + t) as ggml's uint8_t q does. */
static inline uint8_t tq1_pack(const int *t)
{
	uint8_t v = 0;
	for (int n = 0; n < 5; n++)
		v = (uint8_t)(v * 3 + t[n]);
	return (uint8_t)(((unsigned)v * 256 + 242) / 243);
}

/* trit n (0 = most significant) of a packed byte */
static inline int tq1_trit(uint8_t s, int n)
{
	static const uint8_t pow3[5] = { 1, 3, 9, 27, 81 };
	uint8_t u = (uint8_t)(s * pow3[n]);
	return (u * 3) >> 8;
}

/* element i -> (byte index into the 52 packed bytes qs[0..48) qh[0..4), trit n) */
static inline void tq1_where(int i, int *byte, int *n)
{
	if (i < 160) {
		*byte = i & 31;
		*n = i >> 5;
	} else if (i < 240) {
		*byte = 32 + ((i - 160) & 15);
		*n = (i - 160) >> 4;
	} else {
		*byte = 48 + ((i - 240) & 3);
		*n = (i - 240) >> 2;
	}
}

static inline int tq1_code(const block_tq1_0 *b, int i)
{
	int byte, n;
	tq1_where(i, &byte, &n);
	return tq1_trit(byte < 48 ? b->qs[byte] : b->qh[byte - 48], n);
}

/* code[256] (element order) -> qs, qh (layout in quant_formats.h); qh bytes hold 4 trits
 * and a fifth 0 (ggml's final `q *= 3`). */
void qi_tq1_0_pack(const int *code, block_tq1_0 *y)
{
	int t[52][5] = { { 0 } }; /* trits per packed byte */
	for (int i = 0; i < QK_TQ; i++) {
		int byte, n;
		tq1_where(i, &byte, &n);
		t[byte][n] = code[i];
	}
	for (int j = 0; j < 48; j++)
		y->qs[j] = tq1_pack(t[j]);
	for (int j = 0; j < 4; j++)
		y->qh[j] = tq1_pack(t[48 + j]);
}

void tq1_0_quantize_row_ref(const float *x, void *vy, int64_t k)
{
	block_tq1_0 *y = vy;
	int code[QK_TQ];
	for (int64_t b = 0; b < k / QK_TQ; b++, x += QK_TQ) {
		tq_codes_ggml(x, &y[b].d, code);
		qi_tq1_0_pack(code, &y[b]);
	}
}

void tq1_0_dequantize_row(const void *vx, float *y, int64_t k)
{
	const block_tq1_0 *x = vx;
	for (int64_t b = 0; b < k / QK_TQ; b++) {
		float d = qi_h2f(x[b].d);
		for (int i = 0; i < QK_TQ; i++)
			*y++ = d * (float)(tq1_code(&x[b], i) - 1);
	}
}

float tq1_0_vec_dot_ref(int64_t k, const void *vw, const void *va)
{
	const block_tq1_0 *w = vw;
	const block_qa256 *a = va;
	float sum = 0.0f;
	for (int64_t b = 0; b < k / QK_TQ; b++) {
		int32_t is = 0;
		for (int i = 0; i < QK_TQ; i++)
			is += (tq1_code(&w[b], i) - 1) * a[b].qs[i];
		sum += qi_h2f(w[b].d) * a[b].d * (float)is;
	}
	return sum;
}

void tq1_0_decode_row_ref(int64_t k, const void *vw, float *d, float *m, int8_t *q)
{
	const block_tq1_0 *w = vw;
	for (int64_t b = 0; b < k / QK_TQ; b++) {
		d[b] = qi_h2f(w[b].d);
		m[b] = 0.0f;
		for (int i = 0; i < QK_TQ; i++)
			q[b * QK_TQ + i] = (int8_t)(tq1_code(&w[b], i) - 1);
	}
}
