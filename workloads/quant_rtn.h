/* quant_rtn: round-to-nearest (RTN) weight quantization on a b-bit integer grid with a
 * scale (and zero point) per group of `group` consecutive input columns of each output
 * row. This module owns the quantizer grid that GPTQ (quant_gptq) reuses, so both
 * methods are compared on exactly the same grid and the same storage cost.
 *
 * Shapes: W [out][in] row-major (a row per output channel), groups run along `in`.
 * A group is per-channel when group <= 0 or group >= in.
 *
 * Grid (the GPTQ reference implementation's quantizer, Frantar et al. 2022):
 *   maxq = 2^b - 1, integer codes q in [0, maxq], dequantized value = s * (q - z).
 *   asymmetric: lo = min(w, 0), hi = max(w, 0), s = (hi - lo) / maxq, z = round(-lo / s)
 *   symmetric:  s = 2 max|w| / maxq, z = 2^(b-1) fixed (not stored).
 * The scale is stored as fp16 (rounded up, so the grid still covers the group's range
 * and |w - Q(w)| <= s/2 holds), the zero as a b-bit integer.
 * Effective bits per weight (OneComp, REFERENCE.md §1):
 *   asymmetric b + (16 + b) / group, symmetric b + 16 / group  (4b g128 asym -> 4.156). */
#ifndef QUANT_RTN_H
#define QUANT_RTN_H

#include <stddef.h>
#include <stdint.h>

struct quant_cfg {
	int bits;  /* 2..8 */
	int group; /* columns per scale; <= 0 or >= in: per output channel */
	int sym;   /* 1: symmetric (no stored zero), 0: asymmetric */
};

/* Group size actually used for a row of `in` columns (per-channel -> in). */
int quant_group_len(const struct quant_cfg *c, int in);
/* Number of groups per row: ceil(in / group_len). */
int quant_ngroups(const struct quant_cfg *c, int in);

/* OCB_OK if bits in 2..8, in > 0, out > 0; else OCB_EINVAL with a detail. */
int quant_cfg_check(const struct quant_cfg *c, int out, int in);

/* Exact storage of an [out][in] matrix in this format, in bits: codes + fp16 scales +
 * b-bit zeros (asymmetric). Integral by construction (mixed_precision relies on it). */
int64_t quant_cost_bits(const struct quant_cfg *c, int out, int in);
/* quant_cost_bits / (out * in). */
double quant_bpw(const struct quant_cfg *c, int out, int in);

/* Fits the grid to the n values w[0..n) of one group: *scale (> 0, fp16-representable)
 * and *zero (integer in [0, maxq], as float). All-zero groups get scale 1. */
void quant_fit(const float *w, int n, int bits, int sym, float *scale, float *zero);

/* The dequantized grid point nearest to w: s * (clamp(round(w / s) + z, 0, maxq) - z). */
static inline float quant_grid(float w, float scale, float zero, int maxq)
{
	float q = __builtin_nearbyintf(w / scale) + zero;
	q = q < 0.0f ? 0.0f : (q > (float)maxq ? (float)maxq : q);
	return scale * (q - zero);
}

/* RTN: wq [out][in] = Q(w) (dequantized fp32; wq may equal w). scales and zeros, when
 * not NULL, receive [out][ngroups] values (zeros as integers 0..maxq). Returns OCB_OK or
 * OCB_EINVAL. Caller owns all buffers. */
int quant_rtn(const float *w, int out, int in, const struct quant_cfg *c, float *wq,
	      float *scales, uint8_t *zeros);

/* Rounds a positive float up to the nearest fp16-representable value >= x (saturating at
 * 65504). Used for stored scales. */
float quant_f16_ceil(float x);

#endif
