/* Criterion suite `qgolden`: golden blocks of the ggml formats, whose bytes are derived by
 * hand (in the comments) from ggml's published reference quantizers, quantize_row_*_ref in
 * ggml/src/ggml-quants.c (REFERENCE.md §2):
 *   Q8_0  d = amax/127, id = 1/d (fp32), q = roundf(x*id), then d -> fp16
 *   Q4_0  max = first value of largest |x|, d = max/-8, q = min(15, (int8)(x*id + 8.5f))
 *   Q4_1  d = (max-min)/15, m = min, q = min(15, (int8)((x-min)*id + 0.5f))
 *   TQ*   d = amax, t = lroundf(x*id) + 1
 * (id = 0 if d == 0; roundf/lroundf: halves away from zero; +8.5/+0.5 truncation: halves
 * up), and of the fp16-aware rounding (QF_ROUND_FP16_AWARE: fp16 scale first, codes
 * against it, halves to even). Inputs are chosen so that every product x*id is exact or
 * far from a rounding boundary, so the bytes follow from the formulas on paper.
 * fp16: 1.0 = 0x3c00, 2.0 = 0x4000, 3.0 = 0x4200, 4.0 = 0x4400, 0.5 = 0x3800, >= 65520 ->
 * 0x7c00 (inf), < 2^-25 -> 0 (keeping the sign). Blocks are little-endian.
 * Then property tests: dequantization error bounds of both roundings on random data. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../kernels/quant_formats.h"

/* quantizes x (one block of f) with rounding r and compares to want[] byte by byte */
static void expect_block(const char *fmt, enum qformat_rounding r, const float *x,
			 const uint8_t *want, const char *what)
{
	const struct qformat *f = qformat_find(fmt);
	uint8_t got[80]; /* the largest block is TQ2_0, 66 bytes */
	memset(got, 0xA5, sizeof got);
	cr_assert_eq(qformat_quantize_as(f, r, x, got, 1, f->block), OCB_OK);
	for (size_t i = 0; i < f->block_bytes; i++)
		cr_assert_eq(got[i], want[i], "%s %s (%s): byte %zu is 0x%02x, want 0x%02x", fmt,
			     qformat_rounding_name(r), what, i, got[i], want[i]);
}

static void put_d(uint8_t *b, uint16_t d)
{
	b[0] = (uint8_t)(d & 0xff);
	b[1] = (uint8_t)(d >> 8);
}

/* ---- Q8_0 ---- */

/* amax = 127 -> d = 1 exactly (0x3c00), id = 1: every x*id is x. Ties 2.5, -2.5, 0.5,
 * -0.5, 126.5 go away from zero in ggml (3, -3, 1, -1, 127) and to even fp16-aware
 * (2, -2, 0, -0, 126); 1.5 -> 2 in both; -0.0 -> 0. */
Test(qgolden, q8_0_ties)
{
	float x[32] = { 127, 2.5f, -2.5f, 0.5f, -0.5f, 126.5f, 1.5f, -0.0f };
	uint8_t g[34] = { 0 }, a[34] = { 0 };
	put_d(g, 0x3c00);
	put_d(a, 0x3c00);
	const int8_t qg[8] = { 127, 3, -3, 1, -1, 127, 2, 0 }, qa[8] = { 127, 2, -2, 0, 0, 126, 2, 0 };
	for (int i = 0; i < 8; i++) {
		g[2 + i] = (uint8_t)qg[i];
		a[2 + i] = (uint8_t)qa[i];
	}
	expect_block("q8_0", QF_ROUND_GGML, x, g, "ties");
	expect_block("q8_0", QF_ROUND_FP16_AWARE, x, a, "ties");
}

/* amax = 100: d32 = 100/127 = 0.787401..., id = 1.27; d16 = round(0.787401 * 2^11) =
 * round(1612.6) = 1613 units of 2^-11 = 0.787598, exponent -1 (biased 14), mantissa
 * 1613 - 1024 = 589 = 0x24d -> 0x3a4d. x = 94.9: ggml 94.9 * 1.27 = 120.523 -> 121;
 * fp16-aware 94.9 / 0.787598 = 120.493 -> 120 (the code the issue saw differ). */
Test(qgolden, q8_0_fp32_scale_vs_fp16_scale)
{
	float x[32] = { 100.0f, 94.9f, -100.0f };
	uint8_t g[34] = { 0 }, a[34] = { 0 };
	put_d(g, 0x3a4d);
	put_d(a, 0x3a4d);
	g[2] = 127, g[3] = 121, g[4] = (uint8_t)-127;
	a[2] = 127, a[3] = 120, a[4] = (uint8_t)-127;
	expect_block("q8_0", QF_ROUND_GGML, x, g, "scale");
	expect_block("q8_0", QF_ROUND_FP16_AWARE, x, a, "scale");
}

/* amax = 1e-6: d32 = 7.87e-9 < 2^-25, so the stored d is 0. ggml still writes the codes
 * against id = 1.27e8: 1e-6 -> 127, -4e-7 -> -50.8 -> -51, 1e-7 -> 12.7 -> 13;
 * fp16-aware quantizes against the stored 0: all codes 0. Both dequantize to 0. */
Test(qgolden, q8_0_scale_underflows_fp16)
{
	float x[32] = { 1e-6f, -4e-7f, 1e-7f };
	uint8_t g[34] = { 0 }, a[34] = { 0 };
	g[2] = 127, g[3] = (uint8_t)-51, g[4] = 13;
	expect_block("q8_0", QF_ROUND_GGML, x, g, "underflow");
	expect_block("q8_0", QF_ROUND_FP16_AWARE, x, a, "underflow");
}

/* amax = 1e-38: d32 = 7.9e-41 (fp32 subnormal) and 1/d32 = 1.27e40 overflows to inf, so
 * x*id is +-inf (x != 0) or NaN (x = 0). C leaves (int8_t) of those undefined; ggml's GCC
 * x86-64 build (cvttss2si) yields 0x80000000, low byte 0: all codes 0, and d -> fp16 0.
 * (A clang build of ggml writes -128 here; either way every weight dequantizes to 0.) */
Test(qgolden, q8_0_inverse_scale_overflows)
{
	float x[32] = { 1e-38f, -5e-39f };
	uint8_t z[34] = { 0 };
	expect_block("q8_0", QF_ROUND_GGML, x, z, "1/d = inf");
	expect_block("q8_0", QF_ROUND_FP16_AWARE, x, z, "1/d = inf");
}

/* amax = 1e7: d32 = 78740.2 >= 65520 -> stored d = inf (0x7c00). ggml's codes use the fp32
 * id = 1.27e-5: -1e7 -> -127, 2e6 -> 25.4 -> 25, 3.3e6 -> 41.91 -> 42. fp16-aware: id =
 * 1/inf = 0, all codes 0. */
Test(qgolden, q8_0_beyond_fp16_range)
{
	float x[32] = { -1e7f, 2e6f, 3.3e6f };
	uint8_t g[34] = { 0 }, a[34] = { 0 };
	put_d(g, 0x7c00);
	put_d(a, 0x7c00);
	g[2] = (uint8_t)-127, g[3] = 25, g[4] = 42;
	expect_block("q8_0", QF_ROUND_GGML, x, g, "d = inf");
	expect_block("q8_0", QF_ROUND_FP16_AWARE, x, a, "d = inf");
}

/* constant 0.3: d32 = 0.3/127 = 0.00236220 = 1.20945 * 2^-9 -> exponent biased 6,
 * mantissa round(0.20945 * 1024) = round(214.37) = 214 = 0xd6 -> 0x18d6; x*id = 127 (to
 * 1e-5) -> 127 everywhere. fp16-aware: 0.3 / (1238 * 2^-19 = 0.0023613) = 127.05 -> 127. */
Test(qgolden, q8_0_constant_and_zero)
{
	float x[32];
	uint8_t want[34];
	for (int i = 0; i < 32; i++)
		x[i] = 0.3f;
	put_d(want, 0x18d6);
	memset(want + 2, 127, 32);
	expect_block("q8_0", QF_ROUND_GGML, x, want, "constant");
	expect_block("q8_0", QF_ROUND_FP16_AWARE, x, want, "constant");
	/* zeros: d = 0, id = 0, roundf(0) = 0 */
	memset(x, 0, sizeof x);
	memset(want, 0, sizeof want);
	expect_block("q8_0", QF_ROUND_GGML, x, want, "zero");
	expect_block("q8_0", QF_ROUND_FP16_AWARE, x, want, "zero");
}

/* ---- Q4_0 ---- */

/* Builds a Q4_0 block: d and codes q[32] (byte j = q[j] | q[j+16] << 4). */
static void q4_block(uint8_t *b, uint16_t d, const int *q, int hdr)
{
	put_d(b, d);
	for (int j = 0; j < 16; j++)
		b[hdr + j] = (uint8_t)(q[j] | q[j + 16] << 4);
}

/* Negative-dominant: max = -16 -> d = -16/-8 = 2 (0x4000), id = 0.5; code = trunc(x/2 +
 * 8.5). ggml: -16 -> 0.5 -> 0; 5 -> 11; -5 -> 6; 15 -> 16 -> min 15; 1 -> 9; -1 -> 8;
 * 3 -> 10; 0 -> 8. fp16-aware, round(x/2) + 8 halves to even: 5 -> 2+8 = 10; -5 -> -2+8
 * = 6; 15 -> 8+8 -> clamp 15; 1 -> 0+8 = 8; -1 -> 8; 3 -> 2+8 = 10. Elements 16..31 are
 * the mirrored signs to fill the high nibbles. */
Test(qgolden, q4_0_negative_dominant_ties)
{
	float x[32] = { -16, 5, -5, 15, 1, -1, 3, 0 };
	int qg[32], qa[32];
	const int g8[8] = { 0, 11, 6, 15, 9, 8, 10, 8 }, a8[8] = { 0, 10, 6, 15, 8, 8, 10, 8 };
	/* high half: x = 7, -7, 13, -13 -> 3.5/-3.5/6.5/-6.5 + 8.5: ggml 12, 5, 15, 2;
	 * fp16-aware: round half even 4, -4, 6, -6 -> 12, 4, 14, 2 */
	const float hx[4] = { 7, -7, 13, -13 };
	const int hg[4] = { 12, 5, 15, 2 }, ha[4] = { 12, 4, 14, 2 };
	for (int i = 0; i < 32; i++) {
		qg[i] = qa[i] = 8;
		if (i < 8) {
			qg[i] = g8[i];
			qa[i] = a8[i];
		} else if (i >= 16 && i < 20) {
			x[i] = hx[i - 16];
			qg[i] = hg[i - 16];
			qa[i] = ha[i - 16];
		}
	}
	uint8_t g[18], a[18];
	q4_block(g, 0x4000, qg, 2);
	q4_block(a, 0x4000, qa, 2);
	expect_block("q4_0", QF_ROUND_GGML, x, g, "negative max");
	expect_block("q4_0", QF_ROUND_FP16_AWARE, x, a, "negative max");
}

/* Positive-dominant: max = 16 -> d = -2 (0xc000), id = -0.5. ggml: 16 -> -8+8.5 -> 0;
 * 5 -> -2.5+8.5 = 6; -5 -> 11; -15 -> 16 -> 15; 1 -> 8; -1 -> 9. fp16-aware: round(-2.5)
 * = -2 -> 6; round(2.5) = 2 -> 10; -15 -> 8 -> 16 -> 15; 1 -> 8; -1 -> 8. */
Test(qgolden, q4_0_positive_dominant_ties)
{
	float x[32] = { 16, 5, -5, -15, 1, -1 };
	int qg[32], qa[32];
	const int g6[6] = { 0, 6, 11, 15, 8, 9 }, a6[6] = { 0, 6, 10, 15, 8, 8 };
	for (int i = 0; i < 32; i++) {
		qg[i] = i < 6 ? g6[i] : 8;
		qa[i] = i < 6 ? a6[i] : 8;
	}
	uint8_t g[18], a[18];
	q4_block(g, 0xc000, qg, 2);
	q4_block(a, 0xc000, qa, 2);
	expect_block("q4_0", QF_ROUND_GGML, x, g, "positive max");
	expect_block("q4_0", QF_ROUND_FP16_AWARE, x, a, "positive max");
}

/* All zeros: no |x| > 0, so max stays 0 and d = 0 / -8 = -0.0 -> fp16 0x8000; id = 0, so
 * every code is trunc(0 + 8.5) = 8: bytes 0x88. Constant -0.75: d = 0.09375 = 1.5 * 2^-4
 * -> 0x2e00, x*id = -8 (to 1 ulp) + 8.5 -> 0.5 -> 0: bytes 0x00; constant +0.75: d =
 * -0.09375 -> 0xae00, same codes. fp16-aware: the same bytes (round(-8) + 8 = 0). */
Test(qgolden, q4_0_zero_and_constant)
{
	float x[32] = { 0 };
	int q[32];
	uint8_t want[18];
	for (int i = 0; i < 32; i++)
		q[i] = 8;
	q4_block(want, 0x8000, q, 2);
	expect_block("q4_0", QF_ROUND_GGML, x, want, "zero");
	expect_block("q4_0", QF_ROUND_FP16_AWARE, x, want, "zero");
	for (int s = -1; s <= 1; s += 2) {
		for (int i = 0; i < 32; i++) {
			x[i] = 0.75f * (float)s;
			q[i] = 0;
		}
		q4_block(want, s < 0 ? 0x2e00 : 0xae00, q, 2);
		expect_block("q4_0", QF_ROUND_GGML, x, want, "constant");
		expect_block("q4_0", QF_ROUND_FP16_AWARE, x, want, "constant");
	}
}

/* ---- Q4_1 ---- */

/* min = -3, max = 12: d = 15/15 = 1 (0x3c00), m = -3 = -1.5 * 2^1 (0xc200), id = 1; code
 * = trunc(x + 3 + 0.5). ggml: 0.5 -> 4; 1.5 -> 5; -2.5 -> 1; 11.5 -> 15; 2 -> 5.
 * fp16-aware round(x + 3) halves to even: 3.5 -> 4; 4.5 -> 4; 0.5 -> 0; 14.5 -> 14; 5. */
Test(qgolden, q4_1_ties)
{
	float x[32] = { -3, 12, 0.5f, 1.5f, -2.5f, 11.5f, 2 };
	int qg[32], qa[32];
	const int g7[7] = { 0, 15, 4, 5, 1, 15, 5 }, a7[7] = { 0, 15, 4, 4, 0, 14, 5 };
	for (int i = 0; i < 32; i++) {
		if (i >= 7)
			x[i] = -3;
		qg[i] = i < 7 ? g7[i] : 0;
		qa[i] = i < 7 ? a7[i] : 0;
	}
	uint8_t g[20], a[20];
	q4_block(g, 0x3c00, qg, 4);
	q4_block(a, 0x3c00, qa, 4);
	g[2] = a[2] = 0x00, g[3] = a[3] = 0xc2; /* m = 0xc200 */
	expect_block("q4_1", QF_ROUND_GGML, x, g, "ties");
	expect_block("q4_1", QF_ROUND_FP16_AWARE, x, a, "ties");
}

/* Values beyond the fp16 range: min = 100000 (fp16 inf, 0x7c00), max = min + 15 * 4096 =
 * 161440: d = 4096 = 2^12 (0x6c00), id = 2^-12, all exact. ggml: min + 2.5 * 4096 ->
 * 2.5 + 0.5 -> 3; max -> 15; min -> 0. fp16-aware quantizes against the stored m = inf:
 * span = max - inf < 0 -> 0, d = 0, every code 0. */
Test(qgolden, q4_1_beyond_fp16_range)
{
	float x[32];
	for (int i = 0; i < 32; i++)
		x[i] = 100000.0f;
	x[1] = 161440.0f;
	x[17] = 100000.0f + 2.5f * 4096.0f;
	uint8_t g[20] = { 0 }, a[20] = { 0 };
	put_d(g, 0x6c00);
	g[2] = 0x00, g[3] = 0x7c;
	g[4 + 1] = 0x3f; /* element 1 (low nibble 15) and element 17 (high nibble 3) */
	a[2] = 0x00, a[3] = 0x7c;
	expect_block("q4_1", QF_ROUND_GGML, x, g, "min beyond fp16");
	expect_block("q4_1", QF_ROUND_FP16_AWARE, x, a, "min beyond fp16");
}

/* |x| near FLT_MAX: min = -3e38, max = 3e38, max - min overflows to inf, d = inf
 * (0x7c00), m = -3e38 -> -inf (0xfc00), id = 1/inf = 0. Codes: (x - min) * 0 + 0.5 = 0.5
 * -> 0 for finite x - min; for x = max, x - min = inf and inf * 0 = NaN, whose conversion
 * is undefined in C and 0 in ggml's GCC x86-64 build (cvttss2si). All codes 0. */
Test(qgolden, q4_1_span_overflows)
{
	float x[32] = { -3e38f, 3e38f };
	uint8_t g[20] = { 0 };
	put_d(g, 0x7c00);
	g[2] = 0x00, g[3] = 0xfc;
	expect_block("q4_1", QF_ROUND_GGML, x, g, "inf span");
}

/* Constant 2: min = max = 2, d = 0, id = 0, m = 0x4000, codes trunc(0 + 0.5) = 0. All
 * -0.0: min = max = -0.0 (-0 < FLT_MAX), d = (-0 - -0)/15 = +0, m = 0x8000. */
Test(qgolden, q4_1_constant_and_negative_zero)
{
	float x[32];
	uint8_t want[20] = { 0 };
	for (int i = 0; i < 32; i++)
		x[i] = 2.0f;
	want[3] = 0x40;
	expect_block("q4_1", QF_ROUND_GGML, x, want, "constant");
	expect_block("q4_1", QF_ROUND_FP16_AWARE, x, want, "constant");
	for (int i = 0; i < 32; i++)
		x[i] = -0.0f;
	want[3] = 0x80;
	expect_block("q4_1", QF_ROUND_GGML, x, want, "-0");
}

/* ---- TQ2_0, TQ1_0 ---- */

/* TQ1_0 byte of trits t0..t4 (t0 most significant): ceil(256 v / 243). */
static uint8_t tq1_byte(int t0, int t1, int t2, int t3, int t4)
{
	int v = (((t0 * 3 + t1) * 3 + t2) * 3 + t3) * 3 + t4;
	return (uint8_t)((v * 256 + 242) / 243);
}

/* amax = 4 -> d = 4 (0x4400), id = 0.25. ggml lroundf(x/4) + 1: 4 -> 2; 2 -> 0.5 -> 1 -> 2;
 * -2 -> 0; 0 -> 1; 1.99 -> 1. fp16-aware halves to even: 2 -> 0 -> 1; -2 -> 1.
 * TQ2_0 byte 0 holds elements 0, 32, 64, 96 at bits 0, 2, 4, 6; the rest of the block is 0
 * (code 1): 0x55. ggml byte 0 = 2 | 2<<2 | 0<<4 | 1<<6 = 0x4a; fp16-aware 2 | 1<<2 | 1<<4
 * | 1<<6 = 0x56. TQ1_0 qs byte 0 holds elements 0, 32, 64, 96, 128 as t0..t4: ggml
 * (2,2,0,1,1): v = 162+54+0+3+1 = 220 -> ceil(231.8) = 232 = 0xe8; fp16-aware (2,1,1,1,1):
 * v = 202 -> ceil(212.8) = 213 = 0xd5. All-1 bytes: v = 121 -> ceil(127.5) = 128 = 0x80;
 * qh (4 trits 1, then x3): v = 120 -> ceil(126.4) = 127 = 0x7f. */
Test(qgolden, tq_ties)
{
	float x[256] = { 0 };
	x[0] = 4, x[32] = 2, x[64] = -2, x[96] = 0, x[128] = 1.99f;
	uint8_t g2[66], a2[66], g1[54], a1[54];
	memset(g2, 0x55, 64);
	memset(a2, 0x55, 64);
	g2[0] = 0x4a;
	a2[0] = 0x56;
	put_d(g2 + 64, 0x4400);
	put_d(a2 + 64, 0x4400);
	memset(g1, 0x80, 48);
	memset(g1 + 48, 0x7f, 4);
	memcpy(a1, g1, 52);
	cr_assert_eq(tq1_byte(2, 2, 0, 1, 1), 0xe8);
	cr_assert_eq(tq1_byte(2, 1, 1, 1, 1), 0xd5);
	g1[0] = 0xe8;
	a1[0] = 0xd5;
	put_d(g1 + 52, 0x4400);
	put_d(a1 + 52, 0x4400);
	expect_block("tq2_0", QF_ROUND_GGML, x, g2, "ties");
	expect_block("tq2_0", QF_ROUND_FP16_AWARE, x, a2, "ties");
	expect_block("tq1_0", QF_ROUND_GGML, x, g1, "ties");
	expect_block("tq1_0", QF_ROUND_FP16_AWARE, x, a1, "ties");
}

/* Zeros: d = 0, id = 0, codes lroundf(0) + 1 = 1: TQ2_0 bytes 0x55, TQ1_0 qs 0x80, qh
 * 0x7f. Constant -3: d = 3 (0x4200), x*id = -1 -> code 0: TQ2_0 0x00, TQ1_0 v = 0 -> 0x00.
 * Constant 0.5: d = 0.5 (0x3800), code 2: TQ2_0 0xaa, TQ1_0 v = 242 -> ceil(254.9) = 255,
 * qh v = 80 * 3 = 240 -> ceil(252.8) = 253 = 0xfd. */
Test(qgolden, tq_zero_and_constant)
{
	static const struct { float c; uint16_t d; uint8_t b2, qs1, qh1; } cs[] = {
		{ 0.0f, 0x0000, 0x55, 0x80, 0x7f },
		{ -3.0f, 0x4200, 0x00, 0x00, 0x00 },
		{ 0.5f, 0x3800, 0xaa, 0xff, 0xfd },
	};
	for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
		float x[256];
		uint8_t w2[66], w1[54];
		for (int i = 0; i < 256; i++)
			x[i] = cs[c].c;
		memset(w2, cs[c].b2, 64);
		put_d(w2 + 64, cs[c].d);
		memset(w1, cs[c].qs1, 48);
		memset(w1 + 48, cs[c].qh1, 4);
		put_d(w1 + 52, cs[c].d);
		for (int r = QF_ROUND_GGML; r <= QF_ROUND_FP16_AWARE; r++) {
			expect_block("tq2_0", (enum qformat_rounding)r, x, w2, "constant");
			expect_block("tq1_0", (enum qformat_rounding)r, x, w1, "constant");
		}
	}
}

/* amax = 1e-39 (fp32 subnormal): 1/d overflows to inf, x*id is +-inf or NaN, lroundf's
 * domain error returns LONG_MIN on x86-64 glibc and LONG_MIN + 1 truncated to int is 1:
 * every code 1 (as zeros), d -> fp16 0. */
Test(qgolden, tq_inverse_scale_overflows)
{
	float x[256] = { 0 };
	x[0] = 1e-39f, x[1] = -1e-39f;
	uint8_t w2[66] = { 0 };
	memset(w2, 0x55, 64);
	expect_block("tq2_0", QF_ROUND_GGML, x, w2, "1/d = inf");
}

/* ---- the rounding switch ---- */

Test(qgolden, rounding_table)
{
	for (int i = 0; i < qformat_count(); i++) {
		const struct qformat *f = qformat_get((enum qformat_type)i);
		int ggml = f->type != QF_Q3_G && f->type != QF_Q2_G;
		cr_assert_eq(qformat_has_fp16aware(f), ggml, "%s", f->name);
		cr_assert_not_null(f->quantize_row_fp16aware, "%s", f->name);
	}
	cr_assert_str_eq(qformat_rounding_name(QF_ROUND_GGML), "ggml");
	cr_assert_str_eq(qformat_rounding_name(QF_ROUND_FP16_AWARE), "fp16-aware");
	cr_assert_null(qformat_rounding_name((enum qformat_rounding)7));
	float x[32] = { 0 };
	uint8_t q[34];
	cr_assert_eq(qformat_quantize_as(qformat_find("q8_0"), (enum qformat_rounding)7, x, q, 1,
					 32), OCB_EINVAL);
	/* qformat_quantize is the ggml rounding: amax 127, 2.5 -> 3 (fp16-aware: 2) */
	x[0] = 127, x[1] = 2.5f;
	cr_assert_eq(qformat_quantize(qformat_find("q8_0"), x, q, 1, 32), OCB_OK);
	cr_assert_eq(q[3], 3);
}

/* ---- properties on random data ---- */

/* Random blocks (Gaussian or uniform, magnitudes 1e-6..1e4, so some fp16 scales are
 * subnormal or 0): with d32 the fp32 scale recomputed here (the formulas above), d16 and
 * m16 the stored scale and min, every element of both roundings satisfies
 *   |x - dequant| <= s * max(d32, d16) + qmax * |d32 - d16| + 2 |min - m16| (Q4_1)
 * (ggml: the code is within s*d32 of x/d32, then the stored d16 moves it by |q| |d32 -
 * d16|; fp16-aware: within s*d16 of the stored grid, except codes clamped because d16 <
 * d32 or m16 > min), s = 1/2 except for Q4_0's code 15, the clamped mirror of -8: s = 1.
 * Relative slack 1e-5 for the fp32 arithmetic. */
static double block_d32(const struct qformat *f, const float *x, float *min)
{
	float amax = 0, mx = 0, lo = x[0], hi = x[0];
	for (int i = 0; i < f->block; i++) {
		if (fabsf(x[i]) > amax) {
			amax = fabsf(x[i]);
			mx = x[i];
		}
		lo = fminf(lo, x[i]);
		hi = fmaxf(hi, x[i]);
	}
	*min = lo;
	switch (f->type) {
	case QF_Q8_0:
		return amax / 127.0f;
	case QF_Q4_0:
		return fabsf(mx / -8.0f);
	case QF_Q4_1:
		return (hi - lo) / 15.0f;
	default:
		return amax;
	}
}

static void check_bounds(const char *fmt, double qmax)
{
	const struct qformat *f = qformat_find(fmt);
	const int64_t k = 256 * 64;
	float *x = malloc(k * sizeof *x), *y = malloc(k * sizeof *y);
	uint8_t *q = malloc(qformat_row_bytes(f, k));
	struct ocb_rng r;
	ocb_rng_seed(&r, 99);
	for (int64_t i = 0; i < k; i += f->block) {
		double mag = pow(10.0, -6.0 + 10.0 * ocb_rng_uniform(&r));
		int uni = (int)ocb_rng_below(&r, 2);
		for (int j = 0; j < f->block; j++)
			x[i + j] = (float)(mag * (uni ? 2 * ocb_rng_uniform(&r) - 1 : ocb_rng_normal(&r)));
	}
	for (int rnd = QF_ROUND_GGML; rnd <= QF_ROUND_FP16_AWARE; rnd++) {
		cr_assert_eq(qformat_quantize_as(f, (enum qformat_rounding)rnd, x, q, 1, k), OCB_OK);
		cr_assert_eq(qformat_dequantize(f, q, y, 1, k), OCB_OK);
		for (int64_t b = 0; b < k / f->block; b++) {
			const float *xb = x + b * f->block, *yb = y + b * f->block;
			const uint8_t *blk = q + b * f->block_bytes;
			uint16_t dh, mh = 0;
			memcpy(&dh, f->block == 256 ? blk + f->block_bytes - 2 : blk, 2);
			if (f->type == QF_Q4_1)
				memcpy(&mh, blk + 2, 2);
			float min;
			double d32 = block_d32(f, xb, &min), d16 = fabs(ocb_fp16_to_fp32(dh));
			double dm = f->type == QF_Q4_1 ? fabs((double)min - ocb_fp16_to_fp32(mh)) : 0;
			for (int i = 0; i < f->block; i++) {
				double e = fabs((double)xb[i] - yb[i]), s = 0.5;
				if (f->type == QF_Q4_0 &&
				    (i < 16 ? blk[2 + i] & 15 : blk[2 + i - 16] >> 4) == 15)
					s = 1.0;
				double bound = s * fmax(d32, d16) + qmax * fabs(d32 - d16) + 2 * dm;
				cr_assert_leq(e, bound * (1 + 1e-5) + 1e-30,
					      "%s %s block %lld elem %d: x=%a y=%a d32=%g d16=%g", fmt,
					      qformat_rounding_name((enum qformat_rounding)rnd),
					      (long long)b, i, xb[i], yb[i], d32, d16);
			}
		}
	}
	free(x);
	free(y);
	free(q);
}

Test(qgolden, bounds_q8_0) { check_bounds("q8_0", 127); }
Test(qgolden, bounds_q4_0) { check_bounds("q4_0", 8); }
Test(qgolden, bounds_q4_1) { check_bounds("q4_1", 15); }
Test(qgolden, bounds_tq2_0) { check_bounds("tq2_0", 1); }
Test(qgolden, bounds_tq1_0) { check_bounds("tq1_0", 1); }
