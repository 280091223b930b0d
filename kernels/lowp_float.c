/* lowp_float: e4m3 encode/decode (see lowp_float.h). */
#include "lowp_float.h"

#include <math.h>

float ocb_e4m3_to_f32(uint8_t b)
{
	int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
	float v;
	if (e == 15 && m == 7)
		return NAN;
	if (e == 0)
		v = ldexpf((float)m, -9); /* subnormal: m/8 * 2^-6 */
	else
		v = ldexpf((float)(8 + m), e - 10); /* (1 + m/8) * 2^(e-7) */
	return s ? -v : v;
}

uint8_t ocb_f32_to_e4m3(float f)
{
	if (isnan(f))
		return 0x7f;
	uint8_t sign = signbit(f) ? 0x80 : 0;
	float a = fabsf(f);
	if (a >= OCB_E4M3_MAX)
		return sign | 0x7e;
	if (a < 0x1p-6f) {
		/* subnormal steps of 2^-9; q == 8 is the smallest normal (code 0x08) */
		int q = (int)rintf(a * 512.0f);
		return sign | (uint8_t)q;
	}
	int ex;
	frexpf(a, &ex);                 /* a = mant * 2^ex, mant in [0.5, 1) */
	int e = ex - 1;                 /* floor(log2 a), -6..8 */
	int q = (int)rintf(ldexpf(a, 3 - e)); /* 8..16 */
	if (q == 16) {
		q = 8;
		e++;
	}
	int code = ((e + 7) << 3) | (q - 8);
	if (code > 0x7e)
		code = 0x7e;
	return sign | (uint8_t)code;
}
