/* quant_ternary: BitNet b1.58 absmean ternary quantization (see header). */
#include "quant_ternary.h"

#include "../common/ocb_error.h"

#include <math.h>
#include <stddef.h>

/* Ternarises n values with scale g. */
static void ternarise(const float *w, size_t n, float g, float *wq, int8_t *codes)
{
	float inv = 1.0f / (g + QUANT_TERNARY_EPS);
	for (size_t i = 0; i < n; i++) {
		float t = nearbyintf(w[i] * inv);
		t = t < -1.0f ? -1.0f : (t > 1.0f ? 1.0f : t);
		wq[i] = g * t;
		if (codes)
			codes[i] = (int8_t)t;
	}
}

static float absmean(const float *w, size_t n)
{
	double s = 0.0;
	for (size_t i = 0; i < n; i++)
		s += fabsf(w[i]);
	return n ? (float)(s / (double)n) : 0.0f;
}

int quant_ternary(const float *w, int out, int in, int per_row, float *wq, float *scales,
		  int8_t *codes)
{
	if (!w || !wq || out <= 0 || in <= 0)
		return ocb_seterr(OCB_EINVAL, "quant_ternary: bad arguments (%dx%d)", out, in);
	if (!per_row) {
		size_t n = (size_t)out * in;
		float g = absmean(w, n);
		ternarise(w, n, g, wq, codes);
		if (scales)
			scales[0] = g;
		return OCB_OK;
	}
	for (int r = 0; r < out; r++) {
		size_t o = (size_t)r * in;
		float g = (float)(_Float16)absmean(w + o, (size_t)in); /* stored as fp16 */
		ternarise(w + o, (size_t)in, g, wq + o, codes ? codes + o : NULL);
		if (scales)
			scales[r] = g;
	}
	return OCB_OK;
}

int64_t quant_ternary_cost_bits(int out, int in, int per_row)
{
	return (int64_t)out * in * 2 + (per_row ? (int64_t)out * 16 : 32);
}
