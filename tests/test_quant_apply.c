/* Tests for workloads/quant_apply: every method through one call, costs, padding. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "../common/ocb_rng.h"
#include "../workloads/quant_apply.h"

enum { OUT = 6, IN = 80 }; /* 80: not a multiple of 32 or 256 -> padded block formats */

Test(quantapply, every_method_and_exact_costs)
{
	float w[OUT * IN], q[OUT * IN], h[IN * IN] = {0};
	struct ocb_rng r;
	ocb_rng_seed(&r, 9);
	for (int i = 0; i < OUT * IN; i++)
		w[i] = (float)ocb_rng_normal(&r);
	for (int j = 0; j < IN; j++)
		h[j * IN + j] = 1.0f;
	int64_t bits;
	struct quant_method m = {.kind = QA_FP32};
	cr_assert_eq(quant_apply(&m, w, OUT, IN, NULL, q, &bits, NULL), 0);
	cr_assert_eq(bits, 32LL * OUT * IN);
	cr_assert_eq(q[7], w[7]);

	m = (struct quant_method){.kind = QA_RTN, .q = {4, 32, 0}};
	cr_assert_eq(quant_apply(&m, w, OUT, IN, NULL, q, &bits, NULL), 0);
	cr_assert_eq(bits, OUT * (4LL * IN + 3 * 20));
	cr_assert_str_eq(quant_method_name(&m), "rtn");

	m.kind = QA_GPTQ;
	cr_assert_lt(quant_apply(&m, w, OUT, IN, NULL, q, &bits, NULL), 0); /* needs H */
	cr_assert_eq(quant_apply(&m, w, OUT, IN, h, q, &bits, NULL), 0);

	/* every block format: error bounded by the format's resolution, padded cost */
	for (int f = 0; f < qformat_count(); f++) {
		m = (struct quant_method){.kind = QA_FORMAT, .fmt = qformat_get(f)};
		cr_assert_eq(quant_apply(&m, w, OUT, IN, NULL, q, &bits, NULL), 0, "%s",
			     m.fmt->name);
		int blocks = (IN + m.fmt->block - 1) / m.fmt->block;
		cr_assert_eq(bits, (int64_t)OUT * blocks * (int64_t)m.fmt->block_bytes * 8);
		double e = 0, n = 0;
		for (int i = 0; i < OUT * IN; i++) {
			e += (double)(w[i] - q[i]) * (w[i] - q[i]);
			n += (double)w[i] * w[i];
		}
		/* ternary formats scale by max|w|: every |w - q| <= |w|, Gaussian rows lose ~half */
		double lim = m.fmt->bpw > 8 ? 1e-3 : m.fmt->bpw > 4 ? 0.02 : m.fmt->bpw > 2.5 ? 0.3 : 0.9;
		cr_assert_lt(e / n, lim, "%s: rel err %g", m.fmt->name, e / n);
	}

	m = (struct quant_method){.kind = QA_TERNARY, .per_row = 1};
	cr_assert_eq(quant_apply(&m, w, OUT, IN, NULL, q, &bits, NULL), 0);
	cr_assert_eq(bits, 2LL * OUT * IN + 16 * OUT);
	cr_assert_str_eq(quant_method_name(&m), "ternary_row");
	for (int rr = 0; rr < OUT; rr++) {
		float g = 0;
		for (int i = 0; i < IN; i++)
			g = fmaxf(g, fabsf(q[rr * IN + i]));
		for (int i = 0; i < IN; i++)
			cr_assert(q[rr * IN + i] == 0 || fabsf(q[rr * IN + i]) == g);
	}
}

/* A block format's rounding reaches the quantizer: on a tie (amax 127 -> d = 1, x = 2.5)
 * the default is ggml's roundf (3), QF_ROUND_FP16_AWARE rounds half to even (2). */
Test(quantapply, format_rounding_is_applied)
{
	float w[32] = { 127, 2.5f }, q[32];
	struct quant_method m = {.kind = QA_FORMAT, .fmt = qformat_find("q8_0")};
	cr_assert_eq(quant_apply(&m, w, 1, 32, NULL, q, NULL, NULL), 0);
	cr_assert_eq(q[1], 3.0f);
	m.rounding = QF_ROUND_FP16_AWARE;
	cr_assert_eq(quant_apply(&m, w, 1, 32, NULL, q, NULL, NULL), 0);
	cr_assert_eq(q[1], 2.0f);
}
