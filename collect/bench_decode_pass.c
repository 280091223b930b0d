/* bench_decode_pass: one decode step of a llama shape in a quantized format
 * (workloads/decode_pass.h), timed, with the work model `inspect` uses: FLOPs per decode
 * token (model_cost) and the bytes the step reads (decode_pass_static_bytes), so the
 * stored result carries its roofline prediction beside the measurement (issue 13,
 * "predicted vs measured"). Params: model (a built-in shape: llama-3.2-1b, llama-3-8b,
 * mistral-7b), layers and vocab (truncations that keep a case in memory), format, ctx. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../workloads/decode_pass.h"
#include "../analysis/model_cost.h"
#include "bench.h"
#include "params.h"

struct dp_state {
	struct decode_pass p;
	int tok;
};

/* The spec, format and ctx of a case. */
static int dp_params(const cJSON *params, struct ocb_model_spec *s, const struct qformat **f,
		     int *ctx)
{
	int rc = ocb_spec_builtin(ocb_pstr(params, "model"), s);
	if (rc)
		return rc;
	double layers = (double)ocb_pint_or(params, "layers", (long)s->n_layers);
	double vocab = (double)ocb_pint_or(params, "vocab", (long)s->vocab);
	*ctx = (int)ocb_pint(params, "ctx");
	*f = qformat_find(ocb_pstr(params, "format"));
	if (!*f || layers < 1 || layers > s->n_layers || vocab < 1 || vocab > s->vocab ||
	    *ctx < 1 || *ctx > (1 << 20))
		return ocb_seterr(OCB_EINVAL, "decode_pass: bad format, layers, vocab or ctx");
	s->n_layers = (int64_t)layers;
	s->vocab = (int64_t)vocab;
	return ocb_spec_check(s, "decode_pass");
}

static int dp_work(const cJSON *params, struct ocb_work *w)
{
	struct ocb_model_spec s;
	const struct qformat *f;
	struct ocb_cost c;
	int ctx, rc = dp_params(params, &s, &f, &ctx);
	if (rc || (rc = ocb_cost_compute(&s, ctx, 1, &c)))
		return rc;
	/* a step attends over ctx + 1 positions */
	w->flops = c.total.flops_decode + 4.0 * (double)(s.n_heads * s.head_dim) *
		   (double)s.n_layers;
	w->bytes = decode_pass_static_bytes(&s, f, ctx);
	w->bound = NULL;
	w->compute = "ops_int8";
	ocb_cost_release(&c);
	return OCB_OK;
}

static int dp_setup(const cJSON *params, const struct ocb_ctx *ctx, void **state)
{
	struct dp_state *st = calloc(1, sizeof *st);
	struct ocb_model_spec s;
	const struct qformat *f;
	int kvlen, rc;
	*state = NULL;
	if (!st)
		return ocb_seterr(OCB_ENOMEM, "decode_pass state");
	if ((rc = dp_params(params, &s, &f, &kvlen)) ||
	    (rc = decode_pass_init(&st->p, &s, f, kvlen, ctx->threads, ctx->seed))) {
		decode_pass_release(&st->p);
		free(st);
		return rc;
	}
	st->tok = (int)(ctx->seed % (uint64_t)s.vocab);
	*state = st;
	return OCB_OK;
}

static int dp_run(void *state)
{
	struct dp_state *st = state;
	return decode_pass_step(&st->p, st->tok);
}

/* The logits are finite (the kernels are checked against their _ref twins in the quant
 * suite and tests/test_qkernel.c; here the composition must not blow up). */
static int dp_check(void *state, double *err)
{
	struct dp_state *st = state;
	int rc = decode_pass_step(&st->p, st->tok);
	*err = 0;
	for (int64_t i = 0; rc == OCB_OK && i < st->p.s.vocab; i++)
		if (!isfinite(st->p.logits[i]))
			rc = ocb_seterr(OCB_ECHECK, "decode_pass: logit %lld not finite",
					(long long)i);
	return rc;
}

static void dp_teardown(void *state)
{
	struct dp_state *st = state;
	if (!st)
		return;
	decode_pass_release(&st->p);
	free(st);
}

static void add_case(cJSON *a, const char *fmt, int layers, int vocab, int ctx)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "model", "llama-3.2-1b");
	cJSON_AddStringToObject(c, "format", fmt);
	cJSON_AddNumberToObject(c, "layers", layers);
	cJSON_AddNumberToObject(c, "vocab", vocab);
	cJSON_AddNumberToObject(c, "ctx", ctx);
	cJSON_AddItemToArray(a, c);
}

/* full: the whole Llama-3.2-1B (16 blocks, tied 128256-token embedding: 0.73 GB in q4_0,
 * above any L3 the level rule may be shown, so DRAM-bound; building its random weights
 * takes most of the case's ~1 min); quick: 1 block, vocab 4096, q4_0. */
static cJSON *dp_cases(const struct ocb_ctx *ctx)
{
	cJSON *a = cJSON_CreateArray();
	if (ctx && ctx->quick) {
		add_case(a, "q4_0", 1, 4096, 64);
		return a;
	}
	add_case(a, "q4_0", 16, 128256, 128);
	return a;
}

static const char *dp_variant(void *state)
{
	return decode_pass_variant(&((struct dp_state *)state)->p);
}

static const char *const dp_models[] = {"llama-3.2-1b", "llama-3-8b", "mistral-7b", NULL};
static const char *const dp_formats[] = {"q8_0", "q4_0", "q4_1", "q3_g", "q2_g", "tq2_0",
					 "tq1_0", NULL};
static const struct ocb_param dp_decl[] = {
	{"model", OCB_P_ENUM, "\"llama-3.2-1b\"", 0, 0, dp_models, "", "a built-in real shape"},
	{"format", OCB_P_ENUM, "\"q4_0\"", 0, 0, dp_formats, "", "weight format"},
	{"layers", OCB_P_INT, NULL, 1, 128, NULL, "", "blocks (default: the model's)"},
	{"vocab", OCB_P_INT, NULL, 1, 1 << 20, NULL, "tokens", "vocabulary (default: the model's)"},
	{"ctx", OCB_P_INT, "128", 1, 1 << 20, NULL, "tokens", "KV-cache positions before the step"},
	{0},
};

const struct ocb_bench ocb_bench_decode_pass = {
	.name = "decode_pass",
	.doc = "one KV-cached decode step of Llama-3.2-1B in q4_0 (random weights): "
	       "measured vs the roofline prediction of `inspect`",
	.kind = OCB_KERNEL,
	.params = dp_decl,
	.cases = dp_cases,
	.setup = dp_setup,
	.run = dp_run,
	.check = dp_check,
	.work = dp_work,
	.variant = dp_variant,
	.teardown = dp_teardown,
};
