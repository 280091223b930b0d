/* Tests for workloads/quant_ternary (BitNet b1.58 absmean). */
#include <criterion/criterion.h>
#include <math.h>

#include "../common/ocb_rng.h"
#include "../workloads/quant_ternary.h"

Test(ternary, values_are_minus_zero_plus_times_absmean)
{
	enum { OUT = 6, IN = 50 };
	float w[OUT * IN], q[OUT * IN], g[OUT];
	int8_t codes[OUT * IN];
	struct ocb_rng r;
	ocb_rng_seed(&r, 7);
	double mean_abs = 0;
	for (int i = 0; i < OUT * IN; i++) {
		w[i] = (float)ocb_rng_normal(&r) * (1 + i / IN);
		mean_abs += fabsf(w[i]);
	}
	mean_abs /= OUT * IN;
	cr_assert_eq(quant_ternary(w, OUT, IN, 0, q, g, codes), 0);
	cr_assert_float_eq(g[0], mean_abs, 1e-5 * mean_abs);
	int seen[3] = {0};
	for (int i = 0; i < OUT * IN; i++) {
		cr_assert(codes[i] >= -1 && codes[i] <= 1);
		seen[codes[i] + 1]++;
		cr_assert_eq(q[i], g[0] * codes[i]);
		/* round(w / g) clamped: code 0 iff |w| < g/2 (ties aside) */
		if (fabsf(w[i]) < 0.49f * g[0])
			cr_assert_eq(codes[i], 0);
		if (fabsf(w[i]) > 0.51f * g[0])
			cr_assert_eq(codes[i], w[i] > 0 ? 1 : -1);
	}
	cr_assert(seen[0] && seen[1] && seen[2]);

	/* per row: each row its own g (rows have different magnitudes here) */
	cr_assert_eq(quant_ternary(w, OUT, IN, 1, q, g, codes), 0);
	for (int rr = 0; rr < OUT; rr++) {
		double m = 0;
		for (int i = 0; i < IN; i++)
			m += fabsf(w[rr * IN + i]);
		m /= IN;
		cr_assert_float_eq(g[rr], m, 2e-3 * m); /* fp16-stored scale */
		for (int i = 0; i < IN; i++)
			cr_assert_eq(q[rr * IN + i], g[rr] * codes[rr * IN + i]);
	}
	cr_assert_gt(g[OUT - 1], 3 * g[0]);
	cr_assert_eq(quant_ternary_cost_bits(OUT, IN, 0), 2 * OUT * IN + 32);
	cr_assert_eq(quant_ternary_cost_bits(OUT, IN, 1), 2 * OUT * IN + 16 * OUT);
	cr_assert_lt(quant_ternary(w, 0, IN, 0, q, g, codes), 0);
}
