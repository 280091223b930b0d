/* bench_ternary_lm: the byte LM (d_model 64, 2 layers, ctx 64; workloads/qt_recipe.h) on
 * fortunes trained by one method of the ternary suite (workloads/qtrain.h). One case per
 * grid row; metrics, MLLOG, memory and checkpoint: ternary_train.h. Validation with
 * lm_eval's sliding windows (window = stride = ctx): every byte predicted once. */
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../workloads/data_text.h"
#include "../workloads/qt_recipe.h"
#include "../workloads/trainer_ternary.h"
#include "ternary_train.h"

struct lstate {
	struct qlm_spec spec;
	struct ocb_text text;
	struct tt_job job;
};

static cJSON *cases(const struct ocb_ctx *ctx)
{
	int n, quick = ctx && ctx->quick;
	struct lm_config mc;
	struct lm_train_spec sp;
	struct ocb_train_cfg t;
	const struct qt_cfg *g = qt_suite_grid(quick, &n);
	qt_lm_recipe(quick, &mc, &sp, &t);
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < n && a; i++) {
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "method", qt_method_name(g[i].method));
		cJSON_AddNumberToObject(c, "bits", g[i].bits);
		cJSON_AddStringToObject(c, "moments", dqt_mfmt_name(g[i].moments));
		cJSON_AddNumberToObject(c, "steps", t.steps);
		cJSON_AddNumberToObject(c, "final_eval_windows", sp.final_eval_windows);
		cJSON_AddItemToArray(a, c);
	}
	return a;
}

static void teardown(void *st)
{
	struct lstate *s = st;
	if (!s)
		return;
	tt_end(&s->job);
	ocb_text_release(&s->text);
	free(s);
}

static int setup(const cJSON *p, const struct ocb_ctx *ctx, void **out)
{
	struct lstate *s = calloc(1, sizeof *s);
	struct lm_config mc;
	int rc;
	*out = NULL;
	if (!s)
		return ocb_seterr(OCB_ENOMEM, "ternary_lm: out of memory");
	struct tt_job *j = &s->job;
	j->model = "lm";
	j->t = &ocb_trainer_qlm;
	j->ctx = ctx;
	if ((rc = tt_parse_q(p, &j->q)))
		goto out;
	qt_lm_recipe(0, &mc, &s->spec.lm, &j->cfg);
	j->cfg.steps = ocb_pint(p, "steps");
	j->cfg.warmup_steps = j->cfg.steps / 10;
	j->cfg.lr = (float)ocb_pfloat(p, "lr");
	j->cfg.seed = ctx->seed;
	j->cfg.threads = ctx->threads;
	j->cfg.eval_every = j->cfg.steps >= 200 ? 100 : 50;
	j->mem_steps = ocb_pint(p, "mem_steps");
	s->spec.lm.final_eval_windows = ocb_pint(p, "final_eval_windows");
	s->spec.q = j->q;
	const char *corpus = ocb_pstr(p, "corpus");
	if ((rc = ocb_text_load(*corpus ? corpus : ctx->data_dir, &s->text)))
		goto out;
	s->spec.lm.train = s->text.train;
	s->spec.lm.ntrain = s->text.ntrain;
	s->spec.lm.val = s->text.val;
	s->spec.lm.nval = s->text.nval;
	j->spec = &s->spec;
	if ((rc = tt_begin(j, ctx, (long)j->cfg.steps * j->cfg.batch * s->spec.lm.seq,
			   (long)s->text.nval)))
		goto out;
	*out = s;
	s = NULL;
out:
	teardown(s);
	return rc;
}

static int workload(void *st, const struct ocb_ctx *ctx)
{
	struct lstate *s = st;
	s->job.ctx = ctx;
	return tt_run(&s->job);
}

static const struct ocb_param params[] = {
	{"method", OCB_P_ENUM, "\"dqt\"", 0, 0, tt_methods, "", "fp32, BitNet b1.58 STE or DQT"},
	{"bits", OCB_P_INT, "8", 2, 8, NULL, "bits", "DQT weight bits: 8, 4, 3 or 2 (= ternary); STE: 2"},
	{"moments", OCB_P_ENUM, "\"fp32\"", 0, 0, tt_moments, "", "DQT AdamW moment storage"},
	{"steps", OCB_P_INT, "600", 1, 1e9, NULL, "steps", "optimizer steps (warm-up: 10%)"},
	{"lr", OCB_P_FLOAT, "0.003", 1e-9, 10, NULL, "", "peak learning rate (AdamW)"},
	{"final_eval_windows", OCB_P_INT, "128", 0, 1e9, NULL, "windows", "windows of 64 bytes in the final validation (0: the whole split)"},
	{"mem_steps", OCB_P_INT, "3", 1, 1000, NULL, "steps", "steps of the forked memory measurement"},
	{"corpus", OCB_P_STRING, "\"\"", 0, 0, NULL, "", "text file or fortunes-style directory (\"\": --data-dir or the fortunes package)"},
	{0},
};

const struct ocb_bench ocb_bench_ternary_lm = {
	.name = "ternary_lm",
	.doc = "byte LM on fortunes: fp32 / BitNet STE / DQT (8,4,3,ternary; fp32/bf16/fp8 "
	       "moments): val loss/ppl, curves, bytes/param",
	.kind = OCB_WORKLOAD,
	.params = params,
	.cases = cases,
	.setup = setup,
	.workload = workload,
	.teardown = teardown,
};
