/* model_spec + model_cost: the published parameter counts of Llama-3-8B (8,030,261,248)
 * and Llama-3.2-1B (1,235,814,400, tied), weight bytes = matrices x bpw / 8 + f32
 * vectors, the LM's and MLP's counts against their own modules, FLOPs against
 * lm_forward_flops, KV cache bytes, malformed specs refused, and the roofline prediction
 * (DRAM-bound decode = weight bytes / bandwidth; compute-bound prefill). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../kernels/quant_formats.h"
#include "../analysis/model_cost.h"
#include "../workloads/model_lm.h"
#include "../analysis/model_spec.h"
#include "../workloads/model_spec_load.h"

static void load(const char *path, struct ocb_model_spec *s)
{
	cr_assert_eq(ocb_spec_load(path, s), OCB_OK, "%s", ocb_lasterr());
}

Test(model_cost, llama3_8b_params_and_bytes)
{
	struct ocb_model_spec s;
	struct ocb_cost c;
	load("examples/models/llama-3-8b.json", &s);
	cr_assert_str_eq(s.name, "Llama-3-8B");
	cr_assert_eq(ocb_cost_compute(&s, 2048, 1, &c), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(c.nlayers, 34);
	cr_assert_eq((int64_t)c.total.params, 8030261248ll);
	double vec = c.total.params - c.total.mat_params;
	cr_assert_eq((int64_t)vec, (2 * 32 + 1) * 4096);
	for (int f = 0; f < WF_N; f++) {
		double want = c.total.mat_params * ocb_wfmt_bpw(f) / 8.0 + 4.0 * vec;
		cr_assert_eq(c.total.wbytes[f], want, "%s: %.0f vs %.0f", ocb_wfmt_name(f),
			     c.total.wbytes[f], want);
	}
	cr_assert_float_eq(ocb_wfmt_bpw(WF_Q4_0), 4.5, 1e-12);
	cr_assert_float_eq(ocb_wfmt_bpw(WF_TQ1_0), 1.6875, 1e-12);
	/* KV: 2 x 32 layers x 8 heads x 128 x 2048 x 2 bytes = 256 MiB */
	cr_assert_eq(c.total.kv_bytes, 2.0 * 32 * 8 * 128 * 2048 * 2);
	ocb_cost_release(&c);
}

Test(model_cost, llama32_1b_tied)
{
	struct ocb_model_spec s;
	struct ocb_cost c;
	load("examples/models/llama-3.2-1b.json", &s);
	cr_assert(s.tied);
	cr_assert_eq(ocb_cost_compute(&s, 1, 1, &c), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq((int64_t)c.total.params, 1235814400ll);
	/* the tied head stores only its norm but reads the whole embedding per step */
	const struct ocb_cost_layer *h = &c.layer[c.nlayers - 1];
	cr_assert_eq(h->params, 2048);
	cr_assert_eq(h->read_decode[WF_Q8_0], 128256.0 * 2048 / 32 * 34 + 4 * 2048);
	ocb_cost_release(&c);
}

Test(model_cost, mistral_7b)
{
	struct ocb_model_spec s;
	struct ocb_cost c;
	load("examples/models/mistral-7b.json", &s);
	cr_assert_eq(ocb_cost_compute(&s, 1, 1, &c), OCB_OK);
	cr_assert_eq((int64_t)c.total.params, 7241732096ll); /* the published 7.24 B */
	ocb_cost_release(&c);
}

Test(model_cost, lm_matches_model_lm)
{
	struct ocb_model_spec s;
	struct ocb_cost c;
	struct lm_config lc;
	lm_config_default(&lc);
	load("examples/models/lm.json", &s);
	cr_assert_eq(s.d_model, lc.d_model);
	cr_assert_eq(s.ffn, lc.ffn);
	cr_assert_eq(ocb_cost_compute(&s, lc.ctx, 1, &c), OCB_OK);
	cr_assert_eq((size_t)c.total.params, lm_param_count(&lc));
	/* decode at a KV length of T equals lm_forward's per-token count over T (full T x T) */
	double want = lm_forward_flops(&lc, 1, lc.ctx) / lc.ctx;
	cr_assert_float_eq(c.total.flops_decode, want, want * 1e-12);
	cr_assert_lt(c.total.flops_prefill, c.total.flops_decode); /* causal average */
	/* ffn 344 is not a multiple of 32: rows of down padded to 11 blocks of q4_0 */
	cr_assert_eq(ocb_wfmt_matrix_bytes(WF_Q4_0, 128, 344), 128.0 * 11 * 18);
	ocb_cost_release(&c);
}

Test(model_cost, mlp)
{
	struct ocb_model_spec s;
	struct ocb_cost c;
	load("examples/models/mlp.json", &s);
	cr_assert_eq(s.arch, OCB_ARCH_MLP);
	cr_assert_eq(ocb_cost_compute(&s, 1, 4, &c), OCB_OK);
	cr_assert_eq(c.nlayers, 3);
	double p = 784.0 * 512 + 512 + 512.0 * 256 + 256 + 256.0 * 10 + 10;
	cr_assert_eq(c.total.params, p);
	cr_assert_eq(c.total.flops_decode, 2.0 * (784.0 * 512 + 512.0 * 256 + 256.0 * 10));
	cr_assert_eq(c.total.kv_bytes, 0);
	ocb_cost_release(&c);
}

static int spec_err(const char *json)
{
	struct ocb_model_spec s;
	cJSON *o = cJSON_Parse(json);
	cr_assert_not_null(o, "test JSON: %s", json);
	int rc = ocb_spec_from_json(o, "x.json", &s);
	cJSON_Delete(o);
	if (rc)
		cr_assert_null(strchr(ocb_lasterr(), '\n'));
	return rc;
}

Test(model_cost, malformed_specs)
{
	const char *base = "\"arch\":\"llama\",\"vocab\":10,\"d_model\":8,\"n_layers\":1,"
			   "\"n_heads\":2,\"ffn\":16";
	char buf[256];
	snprintf(buf, sizeof buf, "{%s}", base);
	cr_assert_eq(spec_err(buf), OCB_OK, "%s", ocb_lasterr());
	const char *bad[] = {
		"[]", "{}", "{\"arch\":\"rnn\"}",
		"{\"arch\":\"llama\",\"vocab\":10}",
		"{\"arch\":\"mlp\",\"dims\":[4]}",
		"{\"arch\":\"mlp\",\"dims\":[4,-1]}",
		"{\"arch\":\"mlp\",\"dims\":[4,2.5]}",
		"{\"arch\":\"mlp\",\"dims\":\"4,2\"}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(spec_err(bad[i]), OCB_EFORMAT, "%s accepted", bad[i]);
	const char *extra[] = {",\"n_kv_heads\":3", ",\"d_model\":1e300",
			       ",\"tied_embeddings\":1", ",\"ffn\":0", ",\"vocab\":\"x\""};
	for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
		/* later duplicate keys: cJSON finds the first, so put the bad one first */
		snprintf(buf, sizeof buf, "{%s,%s}", extra[i] + 1, base);
		cr_assert_eq(spec_err(buf), OCB_EFORMAT, "%s accepted", buf);
		cr_assert_not_null(strstr(ocb_lasterr(), "x.json: "), "%s", ocb_lasterr());
	}
	struct ocb_model_spec s;
	cr_assert_eq(ocb_spec_load("/nonexistent/m.json", &s), OCB_ENOENT);
}

/* A machine: DRAM 20 GB/s, int8 500 GOP/s, fp32 100 GFLOP/s, sgemm 80; 32 MiB L3. */
static const struct ocb_roof_ceil ceil_tab[] = {
	{"bw_dram", 1, 20.0},     {"bw_l3", 1, 60.0},       {"ops_int8", 1, 500.0},
	{"flops_fp32", 1, 100.0}, {"flops_sgemm", 1, 80.0},
};
static const struct ocb_roof_caches caches = {32768, 1 << 20, 32 << 20, 1, 1, 0};

Test(model_cost, predict_decode_is_weight_bytes_over_bandwidth)
{
	struct ocb_model_spec s;
	struct ocb_cost c;
	struct ocb_pred p;
	load("examples/models/llama-3-8b.json", &s);
	cr_assert_eq(ocb_cost_compute(&s, 1, 1, &c), OCB_OK);
	cr_assert_eq(ocb_cost_predict(&c, WF_Q4_0, ceil_tab, 5, &caches, 1, &p), OCB_OK);
	cr_assert_str_eq(p.level, "bw_dram");
	double t = c.total.read_decode[WF_Q4_0] / 20e9;
	cr_assert_float_eq(p.decode_tok_s, 1.0 / t, 1e-9 / t);
	for (int i = 1; i < p.nlayers; i++)
		cr_assert_str_eq(p.layer[i].bound_decode, "bw_dram", "%d", i);
	/* prefill of one token is just a decode step's compute; of 2048 it is compute-bound */
	ocb_pred_release(&p);
	ocb_cost_release(&c);
	cr_assert_eq(ocb_cost_compute(&s, 2048, 1, &c), OCB_OK);
	cr_assert_eq(ocb_cost_predict(&c, WF_F16, ceil_tab, 5, &caches, 1, &p), OCB_OK);
	cr_assert_str_eq(p.layer[1].bound_prefill, "flops_sgemm");
	cr_assert_float_eq(p.layer[1].t_prefill, 2048 * c.layer[1].flops_prefill / 80e9, 1e-9);
	ocb_pred_release(&p);
	/* without an int8 ceiling the quantized prediction is NaN and says why */
	cr_assert_eq(ocb_cost_predict(&c, WF_Q8_0, ceil_tab, 2, &caches, 1, &p), OCB_OK);
	cr_assert(isnan(p.decode_tok_s));
	cr_assert_str_eq(p.layer[1].bound_decode, "no ops_int8");
	ocb_pred_release(&p);
	ocb_cost_release(&c);
}

/* Attention is fp32 in every weight format: its FLOPs go to the fp32 roofs while the
 * matrices of a quantized model go to the int8 one, and the two compute times add. By
 * hand for a Llama-3-8B block (d 4096, 32 heads x 128): attention 4 x 4096 FLOPs per
 * attended position, i.e. 33,554,432 per decode token at ctx 2048 and 4 x 4096 x 2049 / 2
 * = 16,785,408 per prefill token; a q4_0 prefill of 2048 tokens takes
 * 2048 (matrix ops / 500e9 + attention / 80e9) (int8 binds); at ctx 65536 the attention
 * (4 x 4096 x 65537 / 2 per token over sgemm's 80 GFLOP/s) outweighs the matrices (int8
 * at 500) and binds. */
Test(model_cost, attention_runs_at_the_fp32_roofs)
{
	struct ocb_model_spec s;
	struct ocb_cost c;
	struct ocb_pred p;
	load("examples/models/llama-3-8b.json", &s);
	cr_assert_eq(ocb_cost_compute(&s, 2048, 1, &c), OCB_OK);
	const struct ocb_cost_layer *l = &c.layer[1];
	cr_assert_eq(l->attn_decode, 33554432.0);
	cr_assert_eq(l->attn_prefill, 16785408.0);
	cr_assert_eq(l->flops_decode - l->attn_decode, 2.0 * l->mat_params);
	cr_assert_eq(ocb_cost_predict(&c, WF_Q4_0, ceil_tab, 5, &caches, 1, &p), OCB_OK);
	cr_assert_str_eq(p.attn_decode, "flops_fp32");
	cr_assert_str_eq(p.attn_prefill, "flops_sgemm");
	double want = 2048.0 * (2.0 * l->mat_params / 500e9 + 16785408.0 / 80e9);
	cr_assert_float_eq(p.layer[1].t_prefill, want, want * 1e-12);
	cr_assert_str_eq(p.layer[1].bound_prefill, "ops_int8");
	cr_assert_str_eq(p.layer[1].bound_decode, "bw_dram");
	ocb_pred_release(&p);
	ocb_cost_release(&c);
	cr_assert_eq(ocb_cost_compute(&s, 65536, 1, &c), OCB_OK);
	cr_assert_eq(ocb_cost_predict(&c, WF_Q4_0, ceil_tab, 5, &caches, 1, &p), OCB_OK);
	cr_assert_str_eq(p.layer[1].bound_prefill, "flops_sgemm");
	want = 65536.0 * (2.0 * c.layer[1].mat_params / 500e9 + 4.0 * 4096 * 65537 / 2 / 80e9);
	cr_assert_float_eq(p.layer[1].t_prefill, want, want * 1e-12);
	ocb_pred_release(&p);
	/* no fp32 roof: a quantized decode cannot be predicted and says why */
	static const struct ocb_roof_ceil no_fp32[] = {{"bw_dram", 1, 20.0}, {"ops_int8", 1, 500.0}};
	cr_assert_eq(ocb_cost_predict(&c, WF_Q4_0, no_fp32, 2, &caches, 1, &p), OCB_OK);
	cr_assert(isnan(p.decode_tok_s));
	cr_assert_str_eq(p.layer[1].bound_decode, "no flops_fp32");
	ocb_pred_release(&p);
	ocb_cost_release(&c);
}

Test(model_cost, small_model_sits_in_l3)
{
	struct ocb_model_spec s;
	struct ocb_cost c;
	struct ocb_pred p;
	load("examples/models/lm.json", &s);
	cr_assert_eq(ocb_cost_compute(&s, 1, 1, &c), OCB_OK);
	cr_assert_eq(ocb_cost_predict(&c, WF_F32, ceil_tab, 5, &caches, 1, &p), OCB_OK);
	cr_assert_str_eq(p.level, "bw_l3");
	cr_assert_gt(p.decode_tok_s, 1.0 / (c.total.read_decode[WF_F32] / 60e9) * 0.5);
	ocb_pred_release(&p);
	c.level = OCB_LEVEL_DRAM; /* forced: a VM's shared L3 */
	cr_assert_eq(ocb_cost_predict(&c, WF_F32, ceil_tab, 5, &caches, 1, &p), OCB_OK);
	cr_assert_str_eq(p.level, "bw_dram");
	cr_assert_str_eq(p.layer[1].bound_decode, "bw_dram");
	ocb_pred_release(&p);
	ocb_cost_release(&c);
}

Test(model_cost, builtin_shapes_equal_the_example_files)
{
	const char *stems[] = {"llama-3-8b", "llama-3.2-1b", "mistral-7b"};
	for (int i = 0; i < 3; i++) {
		char path[128];
		struct ocb_model_spec a, b;
		snprintf(path, sizeof path, "examples/models/%s.json", stems[i]);
		load(path, &a);
		cr_assert_eq(ocb_spec_builtin(stems[i], &b), OCB_OK);
		cr_assert_str_eq(a.name, b.name);
		cr_assert_eq(memcmp(&a.vocab, &b.vocab, (char *)&a.tied - (char *)&a.vocab +
						       sizeof a.tied), 0, "%s", stems[i]);
	}
	struct ocb_model_spec s;
	cr_assert_eq(ocb_spec_builtin("gpt-5", &s), OCB_EINVAL);
}
