/* bench_compress: the compression suite's workload (issue 13): the progressive pipeline of
 * workloads/compress.h on the fp32 LM (artifact lm_fp32, trained here if missing) under
 * a uniform GPTQ plan of `bits` (group `group`), or under the measured-sensitivity plan
 * ("plan": "mixed") at the storage of uniform `bits`. Metrics per stage (step 0 fp32,
 * 1 pivot, 2 block, 3 global): val_ppl, val_loss, bpw, model_bytes, stage_time, peak_rss,
 * accepted (1 kept, 0 rejected), calib_obj0 / calib_obj (the stage's objective at its
 * first and last step); checkpoints <out_dir>/compress_<workload>_<stage>.ckpt. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_log.h"
#include "../workloads/compress.h"
#include "../workloads/trainer_lm.h"
#include "artifact.h"
#include "bench.h"
#include "params.h"

struct cb_state {
	int bits, group, mixed, quick;
	struct ocb_text text;
	struct lm_model *student, *teacher;
	char name[64];
};

static int file_exists(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0;
}

/* The fp32 LM when the train suite did not leave one (its recipe, the run's seed; quick:
 * the train suite's quick model). */
static int cb_train(const char *path, const struct ocb_text *text, const struct ocb_ctx *ctx)
{
	struct lm_config mc;
	struct lm_train_spec sp;
	struct ocb_train_cfg tc;
	struct ocb_train_result res;
	void *tr = NULL;
	lm_config_default(&mc);
	lm_train_defaults(&tc);
	if (ctx->quick) { /* as bench_train_lm's --quick */
		mc.d_model = 64, mc.n_layers = 2, mc.n_heads = 2, mc.ctx = 64;
		mc.ffn = lm_ffn_width(64);
		tc.batch = 16, tc.steps = 50, tc.warmup_steps = 5, tc.lr = 5e-3f;
	}
	lm_train_spec_defaults(&sp, &mc);
	sp.train = text->train;
	sp.ntrain = text->ntrain;
	tc.seed = ctx->seed;
	tc.threads = ctx->threads;
	tc.eval_every = 0;
	ocb_info("compress: %s missing: training the fp32 LM (%ld steps)", path, tc.steps);
	int rc = lm_trainer.create(&sp, &tc, &tr);
	if (!rc)
		rc = ocb_trainer_run(&lm_trainer, tr, &tc, NULL, &res);
	if (!rc)
		rc = lm_trainer.save(tr, path);
	lm_trainer.free(tr);
	return rc;
}

static void cb_teardown(void *state)
{
	struct cb_state *st = state;
	if (!st)
		return;
	ocb_text_release(&st->text);
	lm_free(st->student);
	lm_free(st->teacher);
	free(st);
}

static int cb_setup(const cJSON *params, const struct ocb_ctx *ctx, void **state)
{
	struct cb_state *st = calloc(1, sizeof *st);
	char path[600];
	int rc;
	*state = NULL;
	if (!st)
		return ocb_seterr(OCB_ENOMEM, "compress state");
	st->bits = (int)ocb_pint(params, "bits");
	st->group = (int)ocb_pint(params, "group");
	st->mixed = strcmp(ocb_pstr(params, "plan"), "mixed") == 0;
	st->quick = ctx->quick;
	snprintf(st->name, sizeof st->name, "compress_%s%d_g%d", st->mixed ? "mixed" : "b",
		 st->bits, st->group);
	if (st->bits < 2 || st->bits > 8 || st->group < 1) {
		rc = ocb_seterr(OCB_EINVAL, "compress: bits %d, group %d", st->bits, st->group);
		goto fail;
	}
	if ((rc = ocb_artifact_path(ctx, OCB_ARTIFACT_LM_FP32, path, sizeof path)) ||
	    (rc = ocb_text_load(NULL, &st->text)))
		goto fail;
	if (!file_exists(path) && (rc = cb_train(path, &st->text, ctx)))
		goto fail;
	if ((rc = lm_load(path, 1, &st->student)) || (rc = lm_load(path, 0, &st->teacher)))
		goto fail;
	*state = st;
	return OCB_OK;
fail:
	cb_teardown(st);
	return rc;
}

/* The plan of the case: uniform, or measured at uniform's storage. */
static int cb_plan(struct cb_state *st, const struct ocb_ctx *ctx, struct compress_plan *p)
{
	int rc = compress_plan_uniform(st->student, st->bits, st->group, p);
	if (rc || !st->mixed)
		return rc;
	int64_t budget = compress_plan_bits(st->student, p);
	cJSON *j = NULL;
	compress_plan_release(p);
	rc = compress_plan_measured(st->student, &st->text, st->group, 0, budget,
				    st->quick ? 8 : 32, ctx->seed, &j, NULL, NULL);
	if (!rc)
		rc = compress_plan_from_json(j, st->name, p);
	cJSON_Delete(j);
	/* the planner left its candidates' weights in the student: back to fp32 */
	memcpy(st->student->params, st->teacher->params, st->student->nparams * sizeof(float));
	return rc;
}

static int cb_metrics(const struct cb_state *st, const struct ocb_ctx *ctx,
		      const struct compress_stage *s)
{
	const struct ocb_metric_sink *m = &ctx->metrics;
	int rc = 0;
	for (int k = 0; k < CS_NSTAGES && !rc; k++) {
		if (!s[k].ran)
			continue;
		const struct {
			const char *key, *unit;
			double v;
		} f[] = {{"val_ppl", "ppl", s[k].val_ppl},   {"val_loss", "nats", s[k].val_loss},
			 {"bpw", "bits", s[k].bpw},          {"model_bytes", "bytes", s[k].bytes},
			 {"stage_time", "s", s[k].seconds},  {"peak_rss", "bytes", s[k].peak_rss},
			 {"accepted", "", s[k].accepted},    {"calib_obj0", "", s[k].calib_obj0},
			 {"calib_obj", "", s[k].calib_obj}};
		for (size_t i = 0; i < sizeof f / sizeof f[0] && !rc; i++)
			if (isfinite(f[i].v))
				rc = ocb_metric(m, st->name, k, f[i].key, f[i].v, f[i].unit);
	}
	char ident[160];
	snprintf(ident, sizeof ident, "{\"kind\":\"compress\",\"plan\":\"%s\",\"bits\":%d,"
		 "\"group\":%d}", st->mixed ? "mixed" : "uniform", st->bits, st->group);
	return rc ? rc : ocb_metric_ident(m, st->name, ident);
}

static int cb_workload(void *state, const struct ocb_ctx *ctx)
{
	struct cb_state *st = state;
	struct compress_plan plan = {0};
	struct compress_stage s[CS_NSTAGES];
	struct compress_opts o;
	char prefix[700];
	int rc = cb_plan(st, ctx, &plan);
	if (rc)
		goto out;
	compress_opts_default(&o);
	o.seed = ctx->seed;
	if (st->student->cfg.ctx < o.window)
		o.window = st->student->cfg.ctx, o.eval_stride = o.window / 2;
	if (st->quick)
		o.calib_windows = 8, o.eval_windows = 32, o.block_steps = 5, o.global_steps = 10;
	snprintf(prefix, sizeof prefix, "%s/%s", ctx->out_dir ? ctx->out_dir : ".", st->name);
	o.out_prefix = prefix;
	if (!(rc = compress_run(st->student, st->teacher, &st->text, &plan, &o, s)))
		rc = cb_metrics(st, ctx, s);
out:
	compress_plan_release(&plan);
	return rc;
}

static void add_case(cJSON *a, const char *plan, int bits)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "plan", plan);
	cJSON_AddNumberToObject(c, "bits", bits);
	cJSON_AddNumberToObject(c, "group", 128);
	cJSON_AddItemToArray(a, c);
}

/* full: uniform 4, 3, 2 bits and the measured plan at uniform 3 bits' storage; quick:
 * uniform 3 bits and that plan, on the quick LM. */
static cJSON *cb_cases(const struct ocb_ctx *ctx)
{
	cJSON *a = cJSON_CreateArray();
	if (!(ctx && ctx->quick))
		add_case(a, "uniform", 4);
	add_case(a, "uniform", 3);
	if (!(ctx && ctx->quick))
		add_case(a, "uniform", 2);
	add_case(a, "mixed", 3);
	return a;
}

static const char *const consumes[] = {OCB_ARTIFACT_LM_FP32, NULL};
static const char *const cb_plans[] = {"uniform", "mixed", NULL};
static const struct ocb_param cb_decl[] = {
	{"plan", OCB_P_ENUM, "\"uniform\"", 0, 0, cb_plans, "",
	 "uniform GPTQ bits, or the measured plan at uniform's storage"},
	{"bits", OCB_P_INT, "3", 2, 8, NULL, "bits", "GPTQ bits (the budget of a mixed plan)"},
	{"group", OCB_P_INT, "128", 1, 1 << 20, NULL, "weights", "columns per fp16 scale"},
	{0},
};

const struct ocb_bench ocb_bench_compress = {
	.name = "compress",
	.doc = "progressive compression of the fp32 LM: GPTQ pivot, block-wise and global scale "
	       "refinement at 4/3/2 bits and a measured mixed plan; per-stage perplexity",
	.kind = OCB_WORKLOAD,
	.params = cb_decl,
	.cases = cb_cases,
	.setup = cb_setup,
	.workload = cb_workload,
	.teardown = cb_teardown,
	.consumes = consumes,
};
