/* lowp_float: e4m3 encode/decode (see lowp_float.h). */
#include "lowp_float.h"

#include <math.h>

static float e4m3_lut[256];

/* The 256 values, exact (computed once at load time). */
__attribute__((constructor)) static void e4m3_lut_init(void)
{
	for (int b = 0; b < 256; b++) {
		int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
		float v;
		if (e == 15 && m == 7)
			v = NAN;
		else if (e == 0)
			v = ldexpf((float)m, -9); /* subnormal: m/8 * 2^-6 */
		else
			v = ldexpf((float)(8 + m), e - 10); /* (1 + m/8) * 2^(e-7) */
		e4m3_lut[b] = s ? -v : v;
	}
}

float ocb_e4m3_to_f32(uint8_t b)
{
	return e4m3_lut[b];
}

uint8_t ocb_f32_to_e4m3(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	uint8_t sign = (u >> 24) & 0x80;
	u &= 0x7fffffffu;
	if (u > 0x7f800000u)
		return 0x7f; /* NaN */
	if (u >= 0x43e00000u) /* >= 448 (and inf): saturate */
		return sign | 0x7e;
	if (u < 0x3c800000u) { /* < 2^-6: subnormal steps of 2^-9 (q == 8: smallest normal) */
		float a;
		memcpy(&a, &u, 4);
		return sign | (uint8_t)(int)rintf(a * 512.0f);
	}
	/* normal: round exponent+mantissa to 3 mantissa bits, to nearest even (a carry moves
	 * into the exponent), then rebias 127 -> 7 */
	u = (u + 0x7ffffu + ((u >> 20) & 1u)) >> 20;
	uint32_t code = u - ((127u - 7u) << 3);
	return sign | (uint8_t)(code > 0x7e ? 0x7e : code);
}
