/* decode_pass: a decode step of a small llama spec in q8_0 / q4_0 gives finite logits,
 * the same with 1 and 2 threads (rows are split, each dot product is the same code);
 * the bytes it reads are what model_cost predicts for the same spec (KV in fp32 here,
 * f16 there; the new position is read too); specs it cannot run are refused. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../workloads/decode_pass.h"
#include "../analysis/model_cost.h"

static struct ocb_model_spec small(int tied)
{
	struct ocb_model_spec s = {.arch = OCB_ARCH_LLAMA, .vocab = 512, .d_model = 256,
				   .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .head_dim = 64,
				   .ffn = 768, .ctx = 64, .tied = tied};
	strcpy(s.name, "small");
	return s;
}

Test(decode_pass, threads_agree_and_bytes_match_the_cost_model)
{
	const char *fmts[] = {"q8_0", "q4_0"};
	for (int t = 0; t < 2; t++)
		for (int fi = 0; fi < 2; fi++) {
			struct ocb_model_spec s = small(t);
			const struct qformat *f = qformat_find(fmts[fi]);
			struct decode_pass a, b;
			cr_assert_eq(decode_pass_init(&a, &s, f, 16, 1, 7), OCB_OK, "%s",
				     ocb_lasterr());
			cr_assert_eq(decode_pass_init(&b, &s, f, 16, 2, 7), OCB_OK);
			cr_assert_eq(decode_pass_step(&a, 3), OCB_OK, "%s", ocb_lasterr());
			cr_assert_eq(decode_pass_step(&b, 3), OCB_OK);
			for (int i = 0; i < s.vocab; i++) {
				cr_assert(isfinite(a.logits[i]));
				cr_assert_float_eq(a.logits[i], b.logits[i], 1e-5f);
			}
			struct ocb_cost c;
			cr_assert_eq(ocb_cost_compute(&s, 16, 1, &c), OCB_OK);
			int wf = ocb_wfmt_find(fmts[fi]);
			double kvd = 2 * 64, kv32 = 2 * 2.0 * 17 * kvd * 4, kv16 = c.total.kv_bytes;
			/* model_cost: f32 norms are read too (none here: gains are 1) */
			double norms = 4.0 * (2 * 2 + 1) * 256;
			cr_assert_float_eq(decode_pass_bytes(&a),
					   c.total.read_decode[wf] - kv16 + kv32 - norms, 1.0,
					   "%s tied %d", fmts[fi], t);
			cr_assert_eq(decode_pass_static_bytes(&s, f, 16), decode_pass_bytes(&a));
			ocb_cost_release(&c);
			decode_pass_release(&a);
			decode_pass_release(&b);
		}
}

Test(decode_pass, refuses)
{
	struct decode_pass p;
	struct ocb_model_spec s = small(0);
	cr_assert_eq(decode_pass_init(&p, &s, qformat_find("q8_0"), 0, 1, 1), OCB_EINVAL);
	s.arch = OCB_ARCH_MLP;
	cr_assert_eq(decode_pass_init(&p, &s, qformat_find("q8_0"), 8, 1, 1), OCB_EINVAL);
	s = small(0);
	cr_assert_eq(decode_pass_init(&p, &s, qformat_find("q8_0"), 8, 1, 1), OCB_OK);
	cr_assert_eq(decode_pass_step(&p, 512), OCB_EINVAL);
	decode_pass_release(&p);
}
