/* quant_rtn: round-to-nearest quantization on the shared b-bit group grid (see header). */
#include "quant_rtn.h"

#include "../common/ocb_error.h"

#include <math.h>
#include <string.h>

int quant_group_len(const struct quant_cfg *c, int in)
{
	return (c->group <= 0 || c->group >= in) ? in : c->group;
}

int quant_ngroups(const struct quant_cfg *c, int in)
{
	int g = quant_group_len(c, in);
	return (in + g - 1) / g;
}

int quant_cfg_check(const struct quant_cfg *c, int out, int in)
{
	if (!c || c->bits < 2 || c->bits > 8)
		return ocb_seterr(OCB_EINVAL, "quant: bits %d outside 2..8", c ? c->bits : -1);
	if (out <= 0 || in <= 0)
		return ocb_seterr(OCB_EINVAL, "quant: bad shape %dx%d", out, in);
	return OCB_OK;
}

int64_t quant_cost_bits(const struct quant_cfg *c, int out, int in)
{
	int64_t per_group_meta = 16 + (c->sym ? 0 : c->bits); /* fp16 scale (+ b-bit zero) */
	return (int64_t)out * ((int64_t)in * c->bits + quant_ngroups(c, in) * per_group_meta);
}

double quant_bpw(const struct quant_cfg *c, int out, int in)
{
	return (double)quant_cost_bits(c, out, in) / ((double)out * in);
}

float quant_f16_ceil(float x)
{
	if (!(x > 0.0f))
		return x;
	if (x >= 65504.0f)
		return 65504.0f;
	_Float16 h = (_Float16)x; /* round to nearest */
	if ((float)h < x) {
		uint16_t u;
		memcpy(&u, &h, sizeof u);
		u++; /* next representable positive fp16 */
		memcpy(&h, &u, sizeof u);
	}
	return (float)h;
}

void quant_fit(const float *w, int n, int bits, int sym, float *scale, float *zero)
{
	int maxq = (1 << bits) - 1;
	float lo = 0.0f, hi = 0.0f; /* the range always includes 0 (GPTQ's quantizer) */
	for (int i = 0; i < n; i++) {
		lo = w[i] < lo ? w[i] : lo;
		hi = w[i] > hi ? w[i] : hi;
	}
	if (sym) {
		float amax = fmaxf(-lo, hi);
		if (amax == 0.0f) {
			*scale = 1.0f;
			*zero = (float)(1 << (bits - 1));
			return;
		}
		*scale = quant_f16_ceil(2.0f * amax / (float)maxq);
		*zero = (float)(1 << (bits - 1));
		return;
	}
	if (hi == lo) {
		*scale = 1.0f;
		*zero = 0.0f;
		return;
	}
	float s = quant_f16_ceil((hi - lo) / (float)maxq);
	float z = nearbyintf(-lo / s);
	*scale = s;
	*zero = z < 0.0f ? 0.0f : (z > (float)maxq ? (float)maxq : z);
}

int quant_rtn(const float *w, int out, int in, const struct quant_cfg *c, float *wq,
	      float *scales, uint8_t *zeros)
{
	int st = quant_cfg_check(c, out, in);
	if (st)
		return st;
	if (!w || !wq)
		return ocb_seterr(OCB_EINVAL, "quant_rtn: NULL weights");
	int g = quant_group_len(c, in), ng = quant_ngroups(c, in), maxq = (1 << c->bits) - 1;
#pragma omp parallel for schedule(static)
	for (int r = 0; r < out; r++) {
		for (int k = 0; k < ng; k++) {
			int c0 = k * g, n = in - c0 < g ? in - c0 : g;
			const float *src = w + (size_t)r * in + c0;
			float *dst = wq + (size_t)r * in + c0;
			float s, z;
			quant_fit(src, n, c->bits, c->sym, &s, &z);
			for (int i = 0; i < n; i++)
				dst[i] = quant_grid(src[i], s, z, maxq);
			if (scales)
				scales[(size_t)r * ng + k] = s;
			if (zeros)
				zeros[(size_t)r * ng + k] = (uint8_t)z;
		}
	}
	return OCB_OK;
}
