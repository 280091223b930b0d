/* decode_pass: a decode step of a small llama spec in q8_0 / q4_0 gives finite logits,
 * the same with 1 and 2 threads (rows are split, each dot product is the same code);
 * the bytes it reads are what model_cost predicts for the same spec (KV in fp32 here,
 * f16 there; the new position is read too); specs it cannot run are refused. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
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

/* The r8 path (weights repacked at init, the kernel qgemv_choose picks on an AVX2 CPU)
 * against the plain-layout path (OCB_QGEMV=plain): the same logits within rounding (the
 * kernels sum in a different order), tied and untied, for a token inside an 8-row group
 * and one among the remainder rows (vocab 515 = 64 groups + 3). */
Test(decode_pass, r8_layout_agrees_with_plain)
{
	for (int t = 0; t < 2; t++) {
		struct ocb_model_spec s = small(t);
		s.vocab = 515;
		const struct qformat *f = qformat_find("q4_0");
		struct decode_pass a, b;
		setenv("OCB_QGEMV", "plain", 1);
		cr_assert_eq(decode_pass_init(&a, &s, f, 16, 1, 7), OCB_OK, "%s", ocb_lasterr());
		unsetenv("OCB_QGEMV");
		cr_assert_eq(decode_pass_init(&b, &s, f, 16, 1, 7), OCB_OK, "%s", ocb_lasterr());
		cr_assert_str_neq(decode_pass_variant(&a), "avx2-r8");
		const int toks[2] = {13, 513};
		for (int i = 0; i < 2; i++) {
			cr_assert_eq(decode_pass_step(&a, toks[i]), OCB_OK, "%s", ocb_lasterr());
			cr_assert_eq(decode_pass_step(&b, toks[i]), OCB_OK, "%s", ocb_lasterr());
			for (int j = 0; j < s.vocab; j++)
				cr_assert_float_eq(a.logits[j], b.logits[j],
						   1e-4f * (1 + fabsf(a.logits[j])),
						   "%s tied %d tok %d logit %d: %g vs %g",
						   decode_pass_variant(&b), t, toks[i], j,
						   a.logits[j], b.logits[j]);
		}
		decode_pass_release(&a);
		decode_pass_release(&b);
	}
}

/* Attention of one new token, by hand: one cached position gives that position's V row
 * (softmax of one score is 1); two positions whose K rows give q equal scores give the
 * mean of their V rows; and, on random data with head_dim 12 (not a multiple of the
 * 8 partial sums), 4 heads on 2 KV heads over 37 positions agree with a double-precision
 * softmax(q K^T / sqrt(hd)) V, the same at 1 and 2 threads. */
Test(decode_pass, attention_by_hand_and_against_double)
{
	struct ocb_model_spec s = small(0);
	s.head_dim = 12;
	enum { N = 37, HD = 12, H = 4, KVD = 2 * HD };
	float q[H * HD], K[N * KVD], V[N * KVD], out[H * HD], out2[H * HD], sc[2 * N];
	for (int i = 0; i < H * HD; i++)
		q[i] = 0.1f * (float)((i * 7) % 11) - 0.5f;
	for (int i = 0; i < N * KVD; i++) {
		K[i] = 0.05f * (float)((i * 13) % 17) - 0.4f;
		V[i] = 0.1f * (float)((i * 5) % 19) - 0.9f;
	}
	decode_pass_attend(&s, q, K, V, 1, out, sc, 1);
	for (int h = 0; h < H; h++)
		for (int j = 0; j < HD; j++) /* heads 0, 1 read KV head 0; 2, 3 head 1 */
			cr_assert_float_eq(out[h * HD + j], V[(h / 2) * HD + j], 1e-6f);
	float K2[2 * KVD], V2[2 * KVD];
	for (int i = 0; i < KVD; i++)
		K2[i] = K2[KVD + i] = K[i], V2[i] = (float)i, V2[KVD + i] = (float)(3 * i);
	decode_pass_attend(&s, q, K2, V2, 2, out, sc, 1);
	for (int h = 0; h < H; h++)
		for (int j = 0; j < HD; j++) /* (i + 3 i) / 2 */
			cr_assert_float_eq(out[h * HD + j], 2.0f * (float)((h / 2) * HD + j), 1e-5f);
	decode_pass_attend(&s, q, K, V, N, out, sc, 1);
	decode_pass_attend(&s, q, K, V, N, out2, sc, 2);
	for (int h = 0; h < H; h++) {
		double p[N], mx = -1e300, sum = 0;
		for (int t = 0; t < N; t++) {
			p[t] = 0;
			for (int j = 0; j < HD; j++)
				p[t] += (double)q[h * HD + j] * K[t * KVD + (h / 2) * HD + j];
			p[t] /= sqrt((double)HD);
			mx = fmax(mx, p[t]);
		}
		for (int t = 0; t < N; t++)
			sum += (p[t] = exp(p[t] - mx));
		for (int j = 0; j < HD; j++) {
			double o = 0;
			for (int t = 0; t < N; t++)
				o += p[t] / sum * V[t * KVD + (h / 2) * HD + j];
			cr_assert_float_eq(out[h * HD + j], o, 1e-5, "head %d dim %d", h, j);
			cr_assert_eq(out2[h * HD + j], out[h * HD + j]); /* same code per head */
		}
	}
}
