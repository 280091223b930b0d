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

/* steps and final_eval_windows of the (quick) recipe in every case */
static void lm_keys(cJSON *c, void *arg)
{
	const int *q = arg; /* {steps, final_eval_windows} */
	cJSON_AddNumberToObject(c, "steps", q[0]);
	cJSON_AddNumberToObject(c, "final_eval_windows", q[1]);
}

static cJSON *cases(const struct ocb_ctx *ctx)
{
	int quick = ctx && ctx->quick;
	struct lm_config mc;
	struct lm_train_spec sp;
	struct ocb_train_cfg t;
	qt_lm_recipe(quick, &mc, &sp, &t);
	int keys[2] = {(int)t.steps, sp.final_eval_windows};
	return tt_grid_cases(quick, lm_keys, keys);
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
	if ((rc = tt_job_init(j, p, ctx, "lm", &ocb_trainer_qlm)))
		goto out;
	qt_lm_recipe(0, &mc, &s->spec.lm, &j->cfg);
	tt_job_params(j, p, ctx);
	j->cfg.steps = ocb_pint(p, "steps");
	j->cfg.warmup_steps = j->cfg.steps / QT_LM_WARMUP_DIV;
	j->cfg.eval_every = j->cfg.steps >= 200 ? 100 : 50;
	s->spec.lm.final_eval_windows = ocb_pint(p, "final_eval_windows");
	s->spec.q = j->q;
	if ((rc = tt_lm_corpus(p, ctx, &s->text, &s->spec.lm)))
		goto out;
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
	TT_PARAMS_METHOD,
	{"steps", OCB_P_INT, "600", 1, 1e9, NULL, "steps", "optimizer steps (warm-up: 25%)"},
	{"lr", OCB_P_FLOAT, "0.003", 1e-9, 10, NULL, "", "peak learning rate (AdamW)"},
	{"final_eval_windows", OCB_P_INT, "128", 0, 1e9, NULL, "windows", "windows of 64 bytes in the final validation (0: the whole split)"},
	TT_PARAM_MEM_STEPS,
	TT_PARAM_CORPUS,
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
