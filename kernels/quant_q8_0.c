/* quant_q8_0: Q8_0 (ggml): 32 weights, fp16 scale d + 32 int8, x = d*q; 8.5 bpw.
 * Scalar reference code; the AVX2 kernels live in quant_avx2.c. */
#include <math.h>

#include "quant_impl.h"

/* ggml's quantize_row_q8_0_ref (ggml/src/ggml-quants.c), byte for byte: d = amax/127 in
 * fp32, codes roundf(x * (1/d)) (halves away from zero) against that fp32 d, and only then d
 * stored as fp16 (RNE; >= 65520 gives inf, < 2^-25 gives 0 — the codes are written anyway).
 * |x*id| <= 127 * (1 + 2^-21) whenever id is finite, so no clamp is needed. */
void q8_0_quantize_row_ref(const float *x, void *vy, int64_t k)
{
	block_q8_0 *y = vy;
	for (int64_t b = 0; b < k / QK8_0; b++, x += QK8_0) {
		float d = qi_amax(x, QK8_0) / 127.0f;
		float id = qi_inv(d);
		y[b].d = ocb_fp32_to_fp16(d);
		for (int i = 0; i < QK8_0; i++)
			y[b].qs[i] = (int8_t)qi_cvt_i8(roundf(x[i] * id));
	}
}

void q8_0_dequantize_row(const void *vx, float *y, int64_t k)
{
	const block_q8_0 *x = vx;
	for (int64_t b = 0; b < k / QK8_0; b++) {
		float d = qi_h2f(x[b].d);
		for (int i = 0; i < QK8_0; i++)
			*y++ = d * (float)x[b].qs[i];
	}
}

/* sum over blocks of d_w * d_a * (sum_i q_i a_i) with the integer sum exact. */
float q8_0_vec_dot_ref(int64_t k, const void *vw, const void *va)
{
	const block_q8_0 *w = vw;
	const block_qa32 *a = va;
	float sum = 0.0f;
	for (int64_t b = 0; b < k / QK8_0; b++) {
		int32_t is = 0;
		for (int i = 0; i < QK8_0; i++)
			is += (int32_t)w[b].qs[i] * a[b].qs[i];
		sum += qi_h2f(w[b].d) * a[b].d * (float)is;
	}
	return sum;
}

void q8_0_decode_row_ref(int64_t k, const void *vw, float *d, float *m, int8_t *q)
{
	const block_q8_0 *w = vw;
	for (int64_t b = 0; b < k / QK8_0; b++) {
		d[b] = qi_h2f(w[b].d);
		m[b] = 0.0f;
		for (int i = 0; i < QK8_0; i++)
			q[b * QK8_0 + i] = w[b].qs[i];
	}
}
