/* Criterion suite `qformat`: the block layouts, the format table, fp16 conversion, and
 * quantize/dequantize round trips of kernels/quant_formats.h. */
#include <criterion/criterion.h>
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../kernels/quant_formats.h"

Test(qformat, table_sizes_and_bpw)
{
	static const struct { const char *name; int block; size_t bytes; double bpw; } want[] = {
		{ "q8_0", 32, 34, 8.5 },    { "q4_0", 32, 18, 4.5 },   { "q4_1", 32, 20, 5.0 },
		{ "q3_g", 32, 16, 4.0 },    { "q2_g", 32, 12, 3.0 },   { "tq2_0", 256, 66, 2.0625 },
		{ "tq1_0", 256, 54, 1.6875 },
	};
	cr_assert_eq(qformat_count(), (int)(sizeof want / sizeof want[0]));
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const struct qformat *f = qformat_find(want[i].name);
		cr_assert_not_null(f, "%s", want[i].name);
		cr_assert_eq(f, qformat_get(f->type));
		cr_assert_eq(f->block, want[i].block, "%s", want[i].name);
		cr_assert_eq(f->block_bytes, want[i].bytes, "%s", want[i].name);
		cr_assert_eq(f->bpw, want[i].bpw, "%s", want[i].name);
		cr_assert_eq(qformat_row_bytes(f, 4096), 4096 / want[i].block * want[i].bytes);
		cr_assert_eq(qformat_row_bytes(f, want[i].block + 1), 0);
	}
	cr_assert_not_null(qformat_find("Q4_0"));
	cr_assert_null(qformat_find("q5_0"));
	cr_assert_null(qformat_find(NULL));
	cr_assert_null(qformat_get(QF_COUNT));
}

Test(qformat, bad_shapes_are_einval)
{
	const struct qformat *f = qformat_find("q4_0");
	float x[48] = { 0 };
	unsigned char q[64];
	cr_assert_eq(qformat_quantize(f, x, q, 1, 48), OCB_EINVAL);
	cr_assert(strstr(ocb_lasterr(), "q4_0") != NULL);
	cr_assert_eq(qformat_dequantize(f, q, x, 1, 0), OCB_EINVAL);
	cr_assert_eq(qformat_quantize(NULL, x, q, 1, 32), OCB_EINVAL);
	cr_assert_eq(qformat_quantize_act(qformat_find("tq2_0"), x, q, 1, 32), OCB_EINVAL);
}

/* ---- fp16 ---- */

Test(qformat, fp16_every_half_round_trips)
{
	for (uint32_t h = 0; h < 65536; h++) {
		float f = ocb_fp16_to_fp32((uint16_t)h);
		if (isnan(f))
			cr_assert_eq(ocb_fp32_to_fp16(f) & 0x7e00, 0x7e00, "NaN stays NaN");
		else
			cr_assert_eq(ocb_fp32_to_fp16(f), h, "h=0x%04x f=%g", h, f);
	}
	cr_assert_eq(ocb_fp32_to_fp16(1.0f), 0x3c00);
	cr_assert_eq(ocb_fp32_to_fp16(65504.0f), 0x7bff);
	cr_assert_eq(ocb_fp32_to_fp16(65520.0f), 0x7c00);
	cr_assert_eq(ocb_fp32_to_fp16(-2.0f), 0xc000);
	/* 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even -> 1 */
	cr_assert_eq(ocb_fp32_to_fp16(1.0f + 0x1p-11f), 0x3c00);
	cr_assert_eq(ocb_fp32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3c02);
	cr_assert_eq(ocb_fp32_to_fp16(0x1p-24f), 0x0001);
	cr_assert_eq(ocb_fp32_to_fp16(0x1p-25f), 0x0000);
	cr_assert_eq(ocb_fp32_to_fp16(0x1.8p-25f), 0x0001);
}

__attribute__((target("f16c"))) static uint16_t f16c_to_half(float f)
{
	return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
}
__attribute__((target("f16c"))) static float f16c_to_float(uint16_t h)
{
	return _cvtsh_ss(h);
}

Test(qformat, fp16_matches_f16c)
{
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("f16c"))
		cr_skip_test("no F16C on this CPU");
	for (uint32_t h = 0; h < 65536; h++) {
		float a = ocb_fp16_to_fp32((uint16_t)h), b = f16c_to_float((uint16_t)h);
		if (!isnan(b))
			cr_assert_eq(memcmp(&a, &b, 4), 0, "h=0x%04x", h);
	}
	struct ocb_rng r;
	ocb_rng_seed(&r, 7);
	for (int i = 0; i < 200000; i++) {
		uint32_t bits = (uint32_t)ocb_rng_u64(&r);
		/* mostly exponents around the half range, some anywhere */
		if (i % 4)
			bits = (bits & 0x80ffffffu) | ((uint32_t)(100 + ocb_rng_below(&r, 45)) << 23);
		float f;
		memcpy(&f, &bits, 4);
		if (isnan(f))
			continue;
		cr_assert_eq(ocb_fp32_to_fp16(f), f16c_to_half(f), "bits=0x%08x", bits);
	}
}

/* ---- round trips ---- */

/* Fills x with N(0,1) times a per-block magnitude that varies over 1e-3..1e2. */
static void fill_weights(float *x, int64_t k, uint64_t seed)
{
	struct ocb_rng r;
	ocb_rng_seed(&r, seed);
	for (int64_t i = 0; i < k; i += 32) {
		double mag = pow(10.0, -3.0 + 5.0 * ocb_rng_uniform(&r));
		for (int j = 0; j < 32; j++)
			x[i + j] = (float)(mag * ocb_rng_normal(&r));
	}
}

/* max |x - deq| per weight block must stay within `steps` quantization steps of that
 * block's dequantized grid (step = d, measured from the dequantized values themselves),
 * plus 2e-3 amax for fp16 rounding: of the offset (Q4_1/Q3_G/Q2_G) and, since the
 * quantizers are ggml's (codes chosen against the fp32 scale, the fp16 scale stored after),
 * of the scale, which moves each value by |q| |d32 - d16| <= 2^-11 amax. (Before the
 * ggml-exact quantizers the fp16 scale came first and only the offset term was needed.) */
static void check_round_trip(const char *name, double steps, double max_rel_rmse)
{
	const struct qformat *f = qformat_find(name);
	const int64_t k = 256 * 12;
	float *x = malloc(k * sizeof *x), *y = malloc(k * sizeof *y);
	void *q = malloc(qformat_row_bytes(f, k));
	fill_weights(x, k, 11);
	cr_assert_eq(qformat_quantize(f, x, q, 1, k), OCB_OK);
	cr_assert_eq(qformat_dequantize(f, q, y, 1, k), OCB_OK);
	double se = 0, sx = 0;
	for (int64_t b = 0; b < k; b += f->block) {
		float lo = y[b], hi = y[b], amax = 0;
		for (int i = 0; i < f->block; i++) {
			lo = fminf(lo, y[b + i]);
			hi = fmaxf(hi, y[b + i]);
			amax = fmaxf(amax, fabsf(x[b + i]));
		}
		/* grid step of this block: the smallest positive gap between dequantized values */
		float step = INFINITY;
		for (int i = 0; i < f->block; i++)
			for (int j = 0; j < f->block; j++) {
				float g = fabsf(y[b + i] - y[b + j]);
				if (g > 0 && g < step)
					step = g;
			}
		if (!isfinite(step))
			step = amax;
		for (int i = 0; i < f->block; i++) {
			double e = fabs((double)x[b + i] - y[b + i]);
			cr_assert_leq(e, steps * step + 2e-3 * amax, "%s block %lld elem %d: x=%g y=%g step=%g",
				      name, (long long)(b / f->block), i, x[b + i], y[b + i], step);
			se += e * e / ((double)amax * amax);
			sx += (double)x[b + i] * x[b + i] / ((double)amax * amax);
		}
	}
	double rel = sqrt(se / sx);
	cr_assert_leq(rel, max_rel_rmse, "%s: relative RMSE %g", name, rel);
	free(x);
	free(y);
	free(q);
}

Test(qformat, round_trip_q8_0) { check_round_trip("q8_0", 0.5, 0.01); }
/* Q4_0 maps the largest-magnitude value to -8 so its mirror clamps at +7: up to one step */
Test(qformat, round_trip_q4_0) { check_round_trip("q4_0", 1.0, 0.15); }
Test(qformat, round_trip_q4_1) { check_round_trip("q4_1", 0.5, 0.12); }
Test(qformat, round_trip_q3_g) { check_round_trip("q3_g", 0.5, 0.25); }
Test(qformat, round_trip_q2_g) { check_round_trip("q2_g", 0.5, 0.55); }
/* ternary of Gaussian data is coarse: |err| <= d/2 with d = max|x| still holds */
Test(qformat, round_trip_tq2_0) { check_round_trip("tq2_0", 0.5, 0.95); }
Test(qformat, round_trip_tq1_0) { check_round_trip("tq1_0", 0.5, 0.95); }

/* Ternary inputs (d * {-1,0,1}, d an fp16 value) survive both ternary formats exactly. */
Test(qformat, ternary_exact)
{
	const int64_t k = 256 * 4;
	float x[256 * 4], y[256 * 4];
	unsigned char q[66 * 4];
	struct ocb_rng r;
	ocb_rng_seed(&r, 3);
	for (int64_t i = 0; i < k; i++)
		x[i] = 0.375f * (float)((int)ocb_rng_below(&r, 3) - 1);
	x[0] = 0.375f;
	for (int f = QF_TQ2_0; f <= QF_TQ1_0; f++) {
		const struct qformat *fm = qformat_get((enum qformat_type)f);
		cr_assert_eq(qformat_quantize(fm, x, q, 1, k), OCB_OK);
		cr_assert_eq(qformat_dequantize(fm, q, y, 1, k), OCB_OK);
		cr_assert_eq(memcmp(x, y, sizeof x), 0, "%s", fm->name);
	}
}

/* ---- known bytes ---- */

Test(qformat, q4_0_known_block)
{
	/* x_i = 2 * (i%16 - 8): largest magnitude -16 -> d = 2, q_i = i%16 */
	float x[32], y[32];
	block_q4_0 b;
	for (int i = 0; i < 32; i++)
		x[i] = 2.0f * (float)(i % 16 - 8);
	cr_assert_eq(qformat_quantize(qformat_find("q4_0"), x, &b, 1, 32), OCB_OK);
	cr_assert_eq(b.d, 0x4000); /* 2.0 */
	for (int j = 0; j < 16; j++)
		cr_assert_eq(b.qs[j], (uint8_t)(j | j << 4), "byte %d = 0x%02x", j, b.qs[j]);
	qformat_dequantize(qformat_find("q4_0"), &b, y, 1, 32);
	cr_assert_eq(memcmp(x, y, sizeof x), 0);
}

Test(qformat, q8_0_and_q4_1_known_block)
{
	float x[32];
	block_q8_0 b8;
	block_q4_1 b41;
	for (int i = 0; i < 32; i++)
		x[i] = (float)(i - 16) * 0.5f; /* -8 .. 7.5 */
	qformat_quantize(qformat_find("q8_0"), x, &b8, 1, 32);
	cr_assert_eq(b8.d, ocb_fp32_to_fp16(8.0f / 127.0f));
	cr_assert_eq(b8.qs[0], -127);
	cr_assert_eq(b8.qs[16], 0);
	qformat_quantize(qformat_find("q4_1"), x, &b41, 1, 32);
	cr_assert_eq(b41.m, ocb_fp32_to_fp16(-8.0f));
	cr_assert_eq(b41.d, ocb_fp32_to_fp16(15.5f / 15.0f)); /* (7.5 - -8) / 15 */
	cr_assert_eq(b41.qs[0] & 0x0f, 0);  /* -8 -> code 0 */
	cr_assert_eq(b41.qs[15] >> 4, 15);  /* element 31 = 7.5 -> code 15 */
}

Test(qformat, q3_g_q2_g_layout)
{
	float x[32];
	block_q3_g b3;
	block_q2_g b2;
	for (int i = 0; i < 32; i++)
		x[i] = (float)((i * 5) % 8); /* codes 0..7 with d = 1, m = 0 */
	qformat_quantize(qformat_find("q3_g"), x, &b3, 1, 32);
	cr_assert_eq(b3.d, 0x3c00);
	cr_assert_eq(b3.m, 0x0000);
	uint32_t qh = 0;
	for (int i = 0; i < 32; i++) {
		int q = (i * 5) % 8;
		cr_assert_eq((b3.qs[i % 8] >> (2 * (i / 8))) & 3, q & 3, "elem %d", i);
		qh |= (uint32_t)(q >> 2) << i;
	}
	uint32_t got;
	memcpy(&got, b3.qh, 4);
	cr_assert_eq(got, qh);
	for (int i = 0; i < 32; i++)
		x[i] = (float)((i * 3) % 4);
	qformat_quantize(qformat_find("q2_g"), x, &b2, 1, 32);
	for (int i = 0; i < 32; i++)
		cr_assert_eq((b2.qs[i % 8] >> (2 * (i / 8))) & 3, (i * 3) % 4, "elem %d", i);
}

Test(qformat, tq2_0_layout)
{
	float x[256];
	block_tq2_0 b;
	for (int i = 0; i < 256; i++)
		x[i] = (float)((i * 7) % 3 - 1);
	qformat_quantize(qformat_find("tq2_0"), x, &b, 1, 256);
	cr_assert_eq(b.d, 0x3c00);
	for (int i = 0; i < 256; i++) {
		int byte = 32 * (i / 128) + i % 32, shift = 2 * ((i / 32) % 4);
		cr_assert_eq((b.qs[byte] >> shift) & 3, (i * 7) % 3, "elem %d", i);
	}
}

/* Every 5-trit pattern in the qs bytes and every 4-trit pattern in the qh bytes: the
 * packed byte is ceil(256 * v / 243) (documented layout), and it decodes back. */
Test(qformat, tq1_0_all_trit_patterns)
{
	enum { NB = 21 }; /* 21*48 >= 243 qs patterns, 21*4 >= 81 qh patterns */
	static float x[NB * 256], y[NB * 256];
	static block_tq1_0 q[NB];
	static int want[NB][52];
	for (int b = 0; b < NB; b++) {
		for (int j = 0; j < 52; j++) {
			int v = j < 48 ? (48 * b + j) % 243 : ((4 * b + j - 48) % 81) * 3;
			int t[5];
			for (int n = 4, u = v; n >= 0; n--, u /= 3)
				t[n] = u % 3; /* t[0] most significant */
			want[b][j] = (v * 256 + 242) / 243;
			for (int n = 0; n < (j < 48 ? 5 : 4); n++) {
				int e = j < 32 ? j + 32 * n : j < 48 ? 160 + (j - 32) + 16 * n
								: 240 + (j - 48) + 4 * n;
				x[b * 256 + e] = (float)(t[n] - 1);
			}
		}
		x[b * 256 + 255] = 1.0f; /* every block has d = 1 (also reaches qh pattern ...2) */
	}
	/* restore the pattern that the forced element overwrote in the expected bytes */
	for (int b = 0; b < NB; b++) {
		int j = 48 + 3, u = ((4 * b + 3) % 81), t[4];
		for (int n = 3; n >= 0; n--, u /= 3)
			t[n] = u % 3;
		t[3] = 2;
		want[b][j] = ((((t[0] * 3 + t[1]) * 3 + t[2]) * 3 + t[3]) * 3 * 256 + 242) / 243;
	}
	const struct qformat *f = qformat_find("tq1_0");
	cr_assert_eq(qformat_quantize(f, x, q, 1, NB * 256), OCB_OK);
	for (int b = 0; b < NB; b++) {
		cr_assert_eq(q[b].d, 0x3c00);
		for (int j = 0; j < 52; j++) {
			int got = j < 48 ? q[b].qs[j] : q[b].qh[j - 48];
			cr_assert_eq(got, want[b][j], "block %d byte %d", b, j);
		}
	}
	cr_assert_eq(qformat_dequantize(f, q, y, 1, NB * 256), OCB_OK);
	cr_assert_eq(memcmp(x, y, sizeof x), 0);
}

/* ---- activations ---- */

Test(qformat, activation_blocks)
{
	const int64_t n = 3, k = 512;
	float x[3 * 512];
	fill_weights(x, n * k, 5);
	for (int fi = 0; fi < qformat_count(); fi++) {
		const struct qformat *f = qformat_get((enum qformat_type)fi);
		size_t bytes = qformat_act_bytes(f, n, k);
		cr_assert_eq(bytes, (size_t)(n * k / f->act_block) *
					    (f->act_block == 256 ? sizeof(block_qa256) : sizeof(block_qa32)));
		unsigned char *a = malloc(bytes);
		cr_assert_eq(qformat_quantize_act(f, x, a, n, k), OCB_OK);
		size_t bb = f->act_block == 256 ? sizeof(block_qa256) : sizeof(block_qa32);
		for (int64_t b = 0; b < n * k / f->act_block; b++) {
			const unsigned char *p = a + b * bb;
			float d, ds;
			int32_t s, sum = 0;
			memcpy(&d, p, 4);
			memcpy(&s, p + 4, 4);
			memcpy(&ds, p + 4, 4);
			const int8_t *qs = (const int8_t *)(p + 8);
			for (int i = 0; i < f->act_block; i++) {
				float xv = x[b * f->act_block + i];
				cr_assert_leq(fabsf(xv - d * qs[i]), 0.5f * d * 1.0001f + 1e-30f);
				cr_assert(qs[i] >= -127 && qs[i] <= 127);
				sum += qs[i];
			}
			if (f->act_block == 256)
				cr_assert_eq(s, sum);
			else
				cr_assert_eq(ds, d * (float)sum);
		}
		free(a);
	}
}
