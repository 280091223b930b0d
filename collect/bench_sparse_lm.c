/* sparse_lm: BLaST-style block sparsification of the byte LM's SwiGLU MLP weights (gate,
 * up, down of every layer; workloads/trainer_bsr_lm.h) during training, at one target
 * sparsity per case: validation perplexity and loss, block sparsity reached, inference
 * bytes of the sparse weights (BSR values + indices, also with Q8_0 / Q4_0 block values)
 * against dense fp32, and the mean training step time. Target 0 is the same trainer at
 * density 1 (the dense reference of the table). Corpus: fortunes (or --data-dir), as
 * train_lm. The schedule, block and rule are stored as the metric identity (JSON, kind
 * "sparse_lm"). Schedule: the ramp over [10%, 40%] of the steps, 20 events, fine-tuning
 * after (ocb_bsr_mlp_default_prune, the MLP's). */
#include <stdio.h>
#include <stdlib.h>

#include "../common/ocb_error.h"
#include "../workloads/data_text.h"
#include "../workloads/trainer_bsr_lm.h"
#include "../workloads/trainer_bsr_mlp.h"
#include "bench.h"

struct slm_bench {
	struct ocb_text text;
	struct ocb_bsr_lm_spec spec;
	struct ocb_train_cfg cfg;
	char name[64];
};

static const struct ocb_param sparse_lm_params[] = {
	{"target", OCB_P_FLOAT, "90", 0, 99, NULL, "%", "final block sparsity of the SwiGLU weights"},
	{"block", OCB_P_INT, "8", 4, 64, NULL, "elements", "square block side (must tile d_model and ffn)"},
	{"steps", OCB_P_INT, "300", 1, 1e9, NULL, "steps", "optimizer steps (the ramp ends at 40%)"},
	{"d_model", OCB_P_INT, "64", 8, 1024, NULL, "", "model width (ffn: lm_ffn_width)"},
	{"n_layers", OCB_P_INT, "2", 1, 64, NULL, "layers", "transformer blocks"},
	{"ctx", OCB_P_INT, "64", 8, 4096, NULL, "tokens", "context = training sequence = eval window"},
	{"final_eval_windows", OCB_P_INT, "128", 0, 1e9, NULL, "windows", "windows in the final validation (0: the whole split)"},
	{0},
};

/* full: 0, 50, 70, 80, 90, 95% of 8x8 blocks, d 64, 2 layers (ffn 176), 300 steps of
 * 16 x 64 bytes (the d 128 / 4-layer LM took ~0.5 s a step here: 6 runs would not fit
 * the suite's 10 minutes); quick: 0 and 90%, 30 steps. */
static cJSON *sparse_lm_cases(const struct ocb_ctx *ctx)
{
	static const int full[] = {0, 50, 70, 80, 90, 95}, quick[] = {0, 90};
	const int *t = ctx->quick ? quick : full;
	int n = ctx->quick ? 2 : 6;
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; a && i < n; i++) {
		char buf[192];
		if (ctx->quick)
			snprintf(buf, sizeof buf, "{\"target\":%d,\"block\":8,\"steps\":30,"
				 "\"final_eval_windows\":16}", t[i]);
		else
			snprintf(buf, sizeof buf, "{\"target\":%d,\"block\":8,\"steps\":300}", t[i]);
		cJSON *o = cJSON_Parse(buf);
		if (!o) {
			cJSON_Delete(a);
			return NULL;
		}
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static void sparse_lm_teardown(void *st)
{
	struct slm_bench *s = st;
	if (!s)
		return;
	ocb_text_release(&s->text);
	free(s);
}

static int sparse_lm_setup(const cJSON *params, const struct ocb_ctx *ctx, void **out)
{
	struct slm_bench *s = calloc(1, sizeof *s);
	struct lm_config mc;
	int rc;
	*out = NULL;
	if (!s)
		return ocb_seterr(OCB_ENOMEM, "sparse_lm: no memory");
	if ((rc = ocb_text_load(ctx->data_dir, &s->text)))
		goto out;
	lm_config_default(&mc);
	mc.d_model = (int)ocb_pint(params, "d_model");
	mc.n_layers = (int)ocb_pint(params, "n_layers");
	mc.ctx = (int)ocb_pint(params, "ctx");
	mc.n_heads = mc.d_model >= 128 ? 4 : 2;
	mc.ffn = lm_ffn_width(mc.d_model);
	if ((rc = lm_config_check(&mc)))
		goto out;
	lm_train_spec_defaults(&s->spec.lm, &mc);
	s->spec.lm.train = s->text.train, s->spec.lm.ntrain = s->text.ntrain;
	s->spec.lm.val = s->text.val, s->spec.lm.nval = s->text.nval;
	s->spec.lm.final_eval_windows = ocb_pint(params, "final_eval_windows");
	lm_train_defaults(&s->cfg);
	s->cfg.steps = ocb_pint(params, "steps");
	s->cfg.warmup_steps = s->cfg.steps / 10;
	s->cfg.threads = ctx->threads;
	s->cfg.seed = ctx->seed;
	s->cfg.eval_every = 0;
	int block = (int)ocb_pint(params, "block");
	double target = ocb_pfloat(params, "target");
	ocb_bsr_mlp_default_prune(&s->spec.prune, s->cfg.steps, block, target / 100.0);
	snprintf(s->name, sizeof s->name, "sparse_lm_b%d_s%g", block, target);
	*out = s;
	s = NULL;
out:
	sparse_lm_teardown(s);
	return rc;
}

/* The identity: the pruning configuration plus the model and run length. */
static int sparse_lm_ident(const struct slm_bench *s, const struct ocb_ctx *ctx)
{
	cJSON *id = ocb_prune_cfg_to_json(&s->spec.prune);
	const struct lm_config *mc = &s->spec.lm.model;
	int ok = id && cJSON_AddStringToObject(id, "kind", "sparse_lm") &&
		 cJSON_AddNumberToObject(id, "d_model", mc->d_model) &&
		 cJSON_AddNumberToObject(id, "n_layers", mc->n_layers) &&
		 cJSON_AddNumberToObject(id, "ffn", mc->ffn) &&
		 cJSON_AddNumberToObject(id, "steps", (double)s->cfg.steps);
	char *txt = ok ? cJSON_PrintUnformatted(id) : NULL;
	int rc = txt ? ocb_metric_ident(&ctx->metrics, s->name, txt) : OCB_OK;
	cJSON_free(txt);
	cJSON_Delete(id);
	return rc;
}

static int sparse_lm_workload(void *st, const struct ocb_ctx *ctx)
{
	struct slm_bench *s = st;
	const struct ocb_trainer *t = &ocb_trainer_bsr_lm;
	struct ocb_train_result res;
	struct ocb_bsr_train_stats bs;
	void *tr = NULL;
	int rc = t->create(&s->spec, &s->cfg, &tr);
	if (!rc)
		rc = ocb_trainer_run(t, tr, &s->cfg, NULL, &res);
	if (rc) {
		t->free(tr);
		return rc;
	}
	ocb_bsr_lm_stats(tr, &bs);
	t->free(tr);
	if ((rc = sparse_lm_ident(s, ctx)))
		return rc;
	const struct { const char *key; double v; const char *unit; } m[] = {
		{"val_ppl", res.final_eval.ppl, "ppl"},
		{"val_loss", res.final_eval.loss, "nats"},
		{"block_sparsity", bs.sparsity, "1"},
		{"step_time", res.step_time / (double)res.steps, "s"},
		{"train_time", res.step_time, "s"},
		{"sparse_bytes", (double)bs.bsr_bytes, "bytes"},
		{"dense_bytes", (double)bs.dense_bytes, "bytes"},
		{"sparse_bytes_q8_0", bs.bytes_q8_0, "bytes"},
		{"sparse_bytes_q4_0", bs.bytes_q4_0, "bytes"},
		{"prune_events", (double)bs.events, "1"},
	};
	for (size_t i = 0; rc == OCB_OK && i < sizeof m / sizeof *m; i++)
		rc = ocb_metric(&ctx->metrics, s->name, -1, m[i].key, m[i].v, m[i].unit);
	return rc;
}

const struct ocb_bench ocb_bench_sparse_lm = {
	.name = "sparse_lm",
	.doc = "byte LM trained while its SwiGLU MLP weights are pruned into blocks (cubic "
	       "schedule): perplexity, step time and inference bytes vs sparsity",
	.kind = OCB_WORKLOAD,
	.params = sparse_lm_params,
	.cases = sparse_lm_cases,
	.setup = sparse_lm_setup,
	.workload = sparse_lm_workload,
	.teardown = sparse_lm_teardown,
};
