/* bench_ternary_lm_width: where the ternary LM's training bytes go as the model widens,
 * memory only (no training to convergence). The suite's LM (d_model 64) holds ~121 B/param
 * of activations at its batch of 16 x 64 bytes, the same for every method, against the
 * 5.8 B/param of state DQT-8 saves over BitNet STE: in total DQT-8 is 0.96x STE there.
 * Activations grow with d per token, parameters with d^2, so at the same batch the state
 * becomes the larger part as d grows; this bench measures at which width the methods'
 * totals part, with the same recipe (qt_lm_recipe, widened by qt_lm_widen: 2 layers,
 * context 64, heads of 64).
 *
 * Per case (d_model x method): the memory of tt_measure_memory (forked children: footprint
 * at batch 16 and at batch 1 -> state) and the computed parts, as the metrics of
 * tt_memory_metrics under workload "ternary_lm_d<d>:<label>:<moments>", identity
 * {"kind":"ternary","model":"lm_d<d>","d_model",...}. Cases: d 64, 256, 512, 1024 (quick:
 * 64, 256) x fp32, STE, DQT-8 with fp32 and bf16 moments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../workloads/data_text.h"
#include "../workloads/qt_recipe.h"
#include "../workloads/trainer_ternary.h"
#include "ternary_train.h"

static const struct qt_cfg methods[] = {
	{QT_FP32, 2, DQT_M_F32}, {QT_STE, 2, DQT_M_F32}, {QT_DQT, 8, DQT_M_F32},
	{QT_DQT, 8, DQT_M_BF16}};

struct wstate {
	struct qlm_spec spec;
	struct ocb_text text;
	struct tt_job job;
	char model[16]; /* "lm_d<d>": workloads "ternary_lm_d<d>:..." apart from the suite LM's */
};

static cJSON *cases(const struct ocb_ctx *ctx)
{
	static const int full[] = {64, 256, 512, 1024}, quick[] = {64, 256};
	int q = ctx && ctx->quick, nw = q ? 2 : 4;
	cJSON *a = cJSON_CreateArray();
	for (int w = 0; w < nw && a; w++)
		for (size_t i = 0; i < sizeof methods / sizeof *methods; i++) {
			cJSON *c = cJSON_CreateObject();
			cJSON_AddNumberToObject(c, "d_model", q ? quick[w] : full[w]);
			cJSON_AddStringToObject(c, "method", qt_method_name(methods[i].method));
			cJSON_AddNumberToObject(c, "bits", methods[i].bits);
			cJSON_AddStringToObject(c, "moments", dqt_mfmt_name(methods[i].moments));
			cJSON_AddItemToArray(a, c);
		}
	return a;
}

static void teardown(void *st)
{
	struct wstate *s = st;
	if (!s)
		return;
	ocb_text_release(&s->text);
	free(s);
}

static int setup(const cJSON *p, const struct ocb_ctx *ctx, void **out)
{
	struct wstate *s = calloc(1, sizeof *s);
	int rc;
	*out = NULL;
	if (!s)
		return ocb_seterr(OCB_ENOMEM, "ternary_lm_width: out of memory");
	struct tt_job *j = &s->job;
	struct lm_config mc;
	if ((rc = tt_job_init(j, p, ctx, "lm", &ocb_trainer_qlm)))
		goto out;
	qt_lm_recipe(0, &mc, &s->spec.lm, &j->cfg);
	int d = (int)ocb_pint(p, "d_model");
	qt_lm_widen(&s->spec.lm.model, d);
	if ((rc = lm_config_check(&s->spec.lm.model)))
		goto out;
	tt_job_params(j, p, ctx);
	s->spec.q = j->q;
	if ((rc = tt_lm_corpus(p, ctx, &s->text, &s->spec.lm)))
		goto out;
	j->spec = &s->spec;
	snprintf(s->model, sizeof s->model, "lm_d%d", d);
	j->model = s->model;
	tt_name(j, ctx, d);
	*out = s;
	s = NULL;
out:
	teardown(s);
	return rc;
}

static int workload(void *st, const struct ocb_ctx *ctx)
{
	struct wstate *s = st;
	struct ocb_train_mem mem;
	double state;
	s->job.ctx = ctx;
	int rc = tt_measure_memory(&s->job, &mem, &state);
	if (rc == OCB_OK)
		rc = tt_memory_metrics(&ctx->metrics, s->job.wl, &mem, state);
	if (rc == OCB_OK)
		rc = ocb_metric(&ctx->metrics, s->job.wl, -1, "global_batch_size", s->job.cfg.batch,
				"samples");
	return rc;
}

static const struct ocb_param params[] = {
	TT_PARAMS_METHOD,
	{"d_model", OCB_P_INT, "1024", 64, 4096, NULL, "", "model width (a multiple of 64 from 128: heads of 64)"},
	{"lr", OCB_P_FLOAT, "0.003", 1e-9, 10, NULL, "", "learning rate of the measured steps"},
	{"mem_steps", OCB_P_INT, "1", 1, 1000, NULL, "steps",
	 "steps of the forked memory measurement (after a warm-up step: a step's peak is "
	 "reached in the first)"},
	TT_PARAM_CORPUS,
	{0},
};

const struct ocb_bench ocb_bench_ternary_lm_width = {
	.name = "ternary_lm_width",
	.doc = "byte LM training bytes/param of fp32 / BitNet STE / DQT-8 as the model widens "
	       "(d 64-1024; memory only): weights, gradients, optimizer, activations",
	.kind = OCB_WORKLOAD,
	.params = params,
	.cases = cases,
	.setup = setup,
	.workload = workload,
	.teardown = teardown,
};
