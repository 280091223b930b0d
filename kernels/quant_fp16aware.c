/* quant_fp16aware: the fp16-aware rounding of the five ggml formats (QF_ROUND_FP16_AWARE in
 * quant_formats.h), ocbench's original quantizers. The scale (and Q4_1's min) is rounded to
 * fp16 first and the codes are chosen against the value the block stores, halves to even,
 * so dequantize(quantize(x)) is the nearest point of the stored grid (clamped to the code
 * range). Same layouts as ggml, other bytes: ggml (quant_q8_0.c, quant_q4.c, quant_tq.c)
 * picks codes against the fp32 scale. A scale that underflows fp16 stores d = 0 and, here,
 * all-zero weights (codes of 0). */
#include <math.h>

#include "quant_impl.h"

/* d = fp16(v) at *dh; returns 1 / (the stored d), 0 if it is 0 */
static float stored_inv(float v, uint16_t *dh)
{
	*dh = ocb_fp32_to_fp16(v);
	return qi_inv(qi_h2f(*dh));
}

void q8_0_quantize_row_fp16aware(const float *x, void *vy, int64_t k)
{
	block_q8_0 *y = vy;
	for (int64_t b = 0; b < k / QK8_0; b++, x += QK8_0) {
		float id = stored_inv(qi_amax(x, QK8_0) / 127.0f, &y[b].d);
		for (int i = 0; i < QK8_0; i++)
			y[b].qs[i] = (int8_t)qi_clamp(qi_round(x[i] * id), -127, 127);
	}
}

void q4_0_quantize_row_fp16aware(const float *x, void *vy, int64_t k)
{
	block_q4_0 *y = vy;
	for (int64_t b = 0; b < k / QK4_0; b++, x += QK4_0) {
		/* the value of largest magnitude, with its sign, maps to q = 0 (-8) */
		float mx = 0.0f;
		for (int i = 0; i < QK4_0; i++)
			if (fabsf(x[i]) > fabsf(mx))
				mx = x[i];
		float id = stored_inv(mx / -8.0f, &y[b].d);
		for (int j = 0; j < 16; j++)
			y[b].qs[j] = qi_q4_byte(qi_clamp(qi_round(x[j] * id) + 8, 0, 15),
						qi_clamp(qi_round(x[j + 16] * id) + 8, 0, 15));
	}
}

void q4_1_quantize_row_fp16aware(const float *x, void *vy, int64_t k)
{
	block_q4_1 *y = vy;
	uint8_t q[QK4_1];
	for (int64_t b = 0; b < k / QK4_1; b++, x += QK4_1) {
		qi_quantize_minmax(x, QK4_1, 15, &y[b].d, &y[b].m, q);
		for (int j = 0; j < 16; j++)
			y[b].qs[j] = qi_q4_byte(q[j], q[j + 16]);
	}
}

/* codes of one 256 block against the stored d = fp16(max|x|) */
static void tq_codes_fp16aware(const float *x, uint16_t *dh, int *code)
{
	float id = stored_inv(qi_amax(x, QK_TQ), dh);
	for (int i = 0; i < QK_TQ; i++)
		code[i] = qi_clamp(qi_round(x[i] * id), -1, 1) + 1;
}

void tq2_0_quantize_row_fp16aware(const float *x, void *vy, int64_t k)
{
	block_tq2_0 *y = vy;
	int code[QK_TQ];
	for (int64_t b = 0; b < k / QK_TQ; b++, x += QK_TQ) {
		tq_codes_fp16aware(x, &y[b].d, code);
		qi_tq2_0_pack(code, &y[b]);
	}
}

void tq1_0_quantize_row_fp16aware(const float *x, void *vy, int64_t k)
{
	block_tq1_0 *y = vy;
	int code[QK_TQ];
	for (int64_t b = 0; b < k / QK_TQ; b++, x += QK_TQ) {
		tq_codes_fp16aware(x, &y[b].d, code);
		qi_tq1_0_pack(code, &y[b]);
	}
}
