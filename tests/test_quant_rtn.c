/* Tests for workloads/quant_rtn: grid, error bound, storage cost. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "../common/ocb_rng.h"
#include "../workloads/quant_rtn.h"

static void fill_normal(float *w, size_t n, uint64_t seed, float mean, float sd)
{
	struct ocb_rng r;
	ocb_rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++)
		w[i] = mean + sd * (float)ocb_rng_normal(&r);
}

Test(rtn, error_within_half_scale_and_on_grid)
{
	enum { OUT = 7, IN = 100 }; /* IN not a multiple of the group: a short last group */
	float w[OUT * IN], q[OUT * IN], s[OUT * 4];
	uint8_t z[OUT * 4];
	fill_normal(w, OUT * IN, 1, 0.3f, 1.0f);
	const int groups[] = {32, 0};
	for (int bits = 2; bits <= 8; bits++)
		for (int sym = 0; sym <= 1; sym++)
			for (int gi = 0; gi < 2; gi++) {
				struct quant_cfg c = {bits, groups[gi], sym};
				int g = quant_group_len(&c, IN), ng = quant_ngroups(&c, IN);
				cr_assert_eq(quant_rtn(w, OUT, IN, &c, q, s, z), 0);
				for (int r = 0; r < OUT; r++)
					for (int i = 0; i < IN; i++) {
						float sc = s[r * ng + i / g], zz = z[r * ng + i / g];
						float d = fabsf(w[r * IN + i] - q[r * IN + i]);
						cr_assert_leq(d, sc / 2 * (1 + 1e-5f),
							      "b%d sym%d g%d: |w-q| %g > s/2 %g", bits,
							      sym, g, d, sc / 2);
						float code = q[r * IN + i] / sc + zz;
						cr_assert_float_eq(code, nearbyintf(code), 1e-3);
						cr_assert(code > -0.01f && code < (1 << bits) - 0.99f);
						if (sym)
							cr_assert_eq(zz, 1 << (bits - 1));
					}
			}
}

Test(rtn, in_place_equals_out_of_place)
{
	enum { OUT = 5, IN = 64 };
	float w[OUT * IN], q[OUT * IN], w2[OUT * IN];
	fill_normal(w, OUT * IN, 2, 0.0f, 1.0f);
	for (int i = 0; i < OUT * IN; i++)
		w2[i] = w[i];
	struct quant_cfg c = {3, 16, 0};
	cr_assert_eq(quant_rtn(w, OUT, IN, &c, q, NULL, NULL), 0);
	cr_assert_eq(quant_rtn(w2, OUT, IN, &c, w2, NULL, NULL), 0);
	for (int i = 0; i < OUT * IN; i++)
		cr_assert_eq(q[i], w2[i]);
}

static double sq_err(const float *a, const float *b, size_t n)
{
	double e = 0;
	for (size_t i = 0; i < n; i++)
		e += (double)(a[i] - b[i]) * (a[i] - b[i]);
	return e;
}

Test(rtn, asym_beats_sym_on_one_sided_weights_and_bits_help)
{
	enum { OUT = 16, IN = 128 };
	float w[OUT * IN], q[OUT * IN];
	fill_normal(w, OUT * IN, 3, 2.0f, 0.5f); /* mostly positive: sym wastes half its grid */
	double e_sym[9], e_asym[9];
	for (int bits = 2; bits <= 8; bits++) {
		struct quant_cfg cs = {bits, 32, 1}, ca = {bits, 32, 0};
		cr_assert_eq(quant_rtn(w, OUT, IN, &cs, q, NULL, NULL), 0);
		e_sym[bits] = sq_err(w, q, OUT * IN);
		cr_assert_eq(quant_rtn(w, OUT, IN, &ca, q, NULL, NULL), 0);
		e_asym[bits] = sq_err(w, q, OUT * IN);
		cr_assert_lt(e_asym[bits], e_sym[bits], "bits %d", bits);
		if (bits > 2) {
			cr_assert_lt(e_sym[bits], e_sym[bits - 1]);
			cr_assert_lt(e_asym[bits], e_asym[bits - 1]);
		}
	}
	/* 8-bit: relative error tiny */
	double norm = 0;
	for (int i = 0; i < OUT * IN; i++)
		norm += (double)w[i] * w[i];
	cr_assert_lt(e_asym[8] / norm, 1e-4);
}

Test(rtn, smaller_groups_lower_error)
{
	enum { OUT = 8, IN = 256 };
	float w[OUT * IN], q[OUT * IN];
	fill_normal(w, OUT * IN, 4, 0.0f, 1.0f);
	for (int i = 0; i < OUT * IN; i += 37)
		w[i] *= 8.0f; /* outliers: per-channel scales suffer */
	struct quant_cfg pc = {3, 0, 0}, g32 = {3, 32, 0};
	cr_assert_eq(quant_rtn(w, OUT, IN, &pc, q, NULL, NULL), 0);
	double e_pc = sq_err(w, q, OUT * IN);
	cr_assert_eq(quant_rtn(w, OUT, IN, &g32, q, NULL, NULL), 0);
	cr_assert_lt(sq_err(w, q, OUT * IN), e_pc);
}

Test(rtn, effective_bits_per_weight)
{
	struct quant_cfg a4 = {4, 128, 0}, s4 = {4, 128, 1}, a3pc = {3, 0, 0};
	/* OneComp: 4b g128 -> 4 + (16 + 4) / 128 = 4.15625 */
	cr_assert_float_eq(quant_bpw(&a4, 64, 1024), 4.15625, 1e-12);
	cr_assert_float_eq(quant_bpw(&s4, 64, 1024), 4.125, 1e-12);
	cr_assert_eq(quant_cost_bits(&a3pc, 10, 100), 10 * (300 + 19));
	/* short last group still pays a scale */
	struct quant_cfg a2 = {2, 32, 0};
	cr_assert_eq(quant_ngroups(&a2, 100), 4);
	cr_assert_eq(quant_cost_bits(&a2, 1, 100), 200 + 4 * 18);
}

Test(rtn, fp16_ceil_and_bad_input)
{
	float xs[] = {1e-3f, 0.1f, 0.3333333f, 1.0f, 7.77f, 1000.1f};
	for (unsigned i = 0; i < sizeof xs / sizeof xs[0]; i++) {
		float h = quant_f16_ceil(xs[i]);
		cr_assert_geq(h, xs[i]);
		cr_assert_eq((float)(_Float16)h, h);
		cr_assert_lt(h - xs[i], xs[i] * 1e-3f);
	}
	float w[4] = {0}, q[4];
	struct quant_cfg bad = {9, 0, 0}, one = {1, 0, 1};
	cr_assert_lt(quant_rtn(w, 1, 4, &bad, q, NULL, NULL), 0);
	cr_assert_lt(quant_rtn(w, 1, 4, &one, q, NULL, NULL), 0);
	struct quant_cfg ok = {4, 0, 0};
	cr_assert_eq(quant_rtn(w, 1, 4, &ok, q, NULL, NULL), 0); /* all zero: stays zero */
	for (int i = 0; i < 4; i++)
		cr_assert_eq(q[i], 0.0f);
}
