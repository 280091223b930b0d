/* lowp_float: the 16- and 8-bit float storage formats of the optimizer moments in the
 * ternary suite (DQT's "FP32 -> BF16/FP8 environments", REFERENCE.md §1).
 *   bf16: the top 16 bits of an IEEE binary32, encoded with round-to-nearest-even.
 *   e4m3: OCP FP8 E4M3FN (Micikevicius et al., "FP8 Formats for Deep Learning", 2022):
 *         sign, 4 exponent bits (bias 7), 3 mantissa bits, no infinities, 0x7f/0xff NaN,
 *         largest finite 448, smallest subnormal 2^-9. Encoding rounds to nearest even and
 *         saturates to +-448 (the moments carry a per-tensor scale so that they fit).
 * Pure functions, no state (the decode table is a constant built on first use). */
#ifndef OCB_LOWP_FLOAT_H
#define OCB_LOWP_FLOAT_H

#include <stdint.h>
#include <string.h>

#define OCB_E4M3_MAX 448.0f

static inline float ocb_bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* Round to nearest even on the dropped 16 bits (NaN stays NaN: quiet bit forced). */
static inline uint16_t ocb_f32_to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

/* e4m3 byte -> float (exact). */
float ocb_e4m3_to_f32(uint8_t b);
/* float -> e4m3 byte, round to nearest even, saturating to +-448; NaN -> 0x7f. */
uint8_t ocb_f32_to_e4m3(float f);

#endif
