/* bench_quant_accuracy: the accuracy half of the `quant` suite (issue 4): post-training
 * quantization of every linear layer of the fp32 MLP (Fashion-MNIST) and of the fp32
 * byte-level LM (fortunes), method x bits x group -> test accuracy / validation
 * perplexity, effective bits per weight, model bytes, quantization time, errors.
 *
 * This file is the driver only: setup loads the data and the fp32 checkpoint (or trains
 * it through the trainer interface), run calls the workloads/ modules, and every number
 * is recorded under the identities and keys of common/workload_id.h.
 *   1. Checkpoint from ctx->out_dir (artifacts mlp_fp32, lm_fp32: the train suite's
 *      train_mlp / train_lm write them and the runner runs those first; with --quick:
 *      mlp_fp32_quick.ckpt); if missing, trained here with the run's seed and saved.
 *   2. Calibration (workloads/calibrate.h) on data from the TRAINING set: MLP `calib`
 *      random images (workloads/ptq_mlp.h), LM `calib_windows` random windows of `window`
 *      bytes (workloads/ptq_lm.h): H = 2 X^T X of every linear, the diagonal Fisher.
 *   3. The sweep (workloads/ptq_sweep.h: the configurations and their run, mixed
 *      precision in workloads/mixed_plan_run.h): Q(W) from the saved fp32 copy into every
 *      linear, evaluate, next; fp32 restored at the end. Embeddings, norms and biases stay
 *      fp32 and are counted as fp32 in model_bytes. Plan JSON of mixed_*:
 *      <out_dir>/quant_plan_<model>_<method>.json.
 *   4. Acceptance checks (workloads/ptq_checks.h) under workload "quant_acc_check".
 *
 * Params: model (mlp | lm), calib / calib_windows, window, stride, eval_windows (the first
 * N validation windows; 0 = all), fuse (1: q,k,v and gate,up share bits in plans),
 * plan_err (fisher | output | probe, workloads/mixed_plan_run.h), methods (comma list of
 * method or method:bits:group to run; fp32 always runs).
 *
 * Metrics: one row per (configuration, key), step -1, workload ocb_quant_id_name() of the
 * configuration, its struct stored beside as JSON (ocb_metric_ident); keys and units in
 * common/workload_id.h. fp32 row also: calib_rows, calib_time, load_time, trained (1 if
 * the checkpoint was trained in this run), nweights, and the LM's eval protocol. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_log.h"
#include "../common/ocb_time.h"
#include "../common/workload_id.h"
#include "../workloads/calibrate.h"
#include "../workloads/ptq_checks.h"
#include "../workloads/ptq_lm.h"
#include "../workloads/ptq_mlp.h"
#include "../workloads/ptq_sweep.h"
#include "../workloads/trainer_lm.h"
#include "../workloads/trainer_mlp.h"
#include "artifact.h"

struct qa_state {
	int is_lm, quick, trained;
	uint64_t seed;
	char out_dir[512];
	char methods[256];        /* "" or the `methods` filter */
	struct ptq_mixed_opts mixed;
	double calib_time, load_time;
	/* MLP */
	struct ocb_mlp mlp;
	int have_mlp, calib;
	struct ocb_idx_set train, test;
	struct ptq_mlp pmlp;
	/* LM */
	struct lm_model *lm;
	struct ocb_text text;
	struct ptq_lm_proto proto;
	struct ptq_lm plm;
	/* the model under PTQ (views into the MLP or the LM) */
	struct ptq_model pm;
};

static cJSON *qa_cases(const struct ocb_ctx *ctx)
{
	cJSON *a = cJSON_CreateArray(), *o;
	if (!a)
		return NULL;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "model", "mlp");
	cJSON_AddNumberToObject(o, "calib", ctx->quick ? 256 : 1024);
	cJSON_AddItemToArray(a, o);
	if (!ctx->quick) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "model", "lm");
		cJSON_AddNumberToObject(o, "calib_windows", 32);
		cJSON_AddNumberToObject(o, "window", 128);
		cJSON_AddNumberToObject(o, "stride", 128);
		cJSON_AddNumberToObject(o, "eval_windows", 256);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* ---------------------------------------------------------------- models */

/* Trains a model through the trainer interface (no callbacks) and saves it at path. */
static int qa_train(const struct ocb_trainer *t, const void *spec,
		    const struct ocb_train_cfg *cfg, const char *path)
{
	struct ocb_train_result res;
	void *tr = NULL;
	int rc = t->create(spec, cfg, &tr);
	if (rc == OCB_OK)
		rc = ocb_trainer_run(t, tr, cfg, NULL, &res);
	if (rc == OCB_OK)
		rc = t->save(tr, path);
	t->free(tr);
	return rc;
}

/* The fp32 MLP baseline when its checkpoint is missing (the default recipe, the run's
 * seed, evaluation after the last epoch only; --quick: 2 epochs on 10,000 images). */
static int qa_train_mlp(struct qa_state *st, const char *path, const struct ocb_ctx *ctx)
{
	struct ocb_mlp_spec sp = {.train = &st->train, .test = &st->test};
	struct ocb_train_cfg tc;
	ocb_mlp_default_cfg(&sp.model);
	ocb_mlp_train_defaults(&tc);
	tc.seed = st->seed;
	tc.threads = ctx->threads;
	tc.eval_every = 0;
	if (st->quick) {
		tc.epochs = 2;
		sp.max_train = 10000;
	}
	ocb_info("quant_accuracy: %s missing: training the fp32 MLP (%d epochs)", path,
		 tc.epochs);
	return qa_train(&ocb_trainer_mlp, &sp, &tc, path);
}

/* The fp32 LM baseline when its checkpoint is missing: the default recipe
 * (lm_train_defaults) and the run's seed, no validation passes (the sweep evaluates). */
static int qa_train_lm(struct qa_state *st, const char *path, const struct ocb_ctx *ctx)
{
	struct lm_config mc;
	struct lm_train_spec sp;
	struct ocb_train_cfg tc;
	lm_config_default(&mc);
	lm_train_spec_defaults(&sp, &mc);
	sp.train = st->text.train;
	sp.ntrain = st->text.ntrain;
	lm_train_defaults(&tc);
	tc.seed = st->seed;
	tc.threads = ctx->threads;
	tc.eval_every = 0;
	ocb_info("quant_accuracy: %s missing: training the fp32 LM (%ld steps)", path, tc.steps);
	return qa_train(&lm_trainer, &sp, &tc, path);
}

static int file_exists(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0;
}

static int qa_setup_mlp(struct qa_state *st, const struct ocb_ctx *ctx)
{
	char path[600];
	int rc;
	if ((rc = ocb_artifact_path(ctx, OCB_ARTIFACT_MLP_FP32, path, sizeof path)))
		return rc;
	if ((rc = ocb_fmnist_load(ctx->data_dir, 1, &st->train)) ||
	    (rc = ocb_fmnist_load(ctx->data_dir, 0, &st->test)))
		return rc;
	double t0 = ocb_now_s();
	if (!file_exists(path)) {
		if ((rc = qa_train_mlp(st, path, ctx)))
			return rc;
		st->trained = 1;
	}
	if ((rc = ocb_mlp_load(path, PTQ_MLP_BATCH, &st->mlp)))
		return rc;
	st->have_mlp = 1;
	st->load_time = ocb_now_s() - t0;
	return ptq_mlp_init(&st->pmlp, &st->mlp, &st->train, &st->test, st->calib, st->seed,
			    &st->pm);
}

static int qa_setup_lm(struct qa_state *st, const struct ocb_ctx *ctx)
{
	char path[600];
	int rc;
	if ((rc = ocb_artifact_path(ctx, OCB_ARTIFACT_LM_FP32, path, sizeof path)))
		return rc;
	if ((rc = ocb_text_load(NULL, &st->text))) /* fortunes (data_dir is for images) */
		return rc;
	double t0 = ocb_now_s();
	if (!file_exists(path)) {
		if ((rc = qa_train_lm(st, path, ctx)))
			return rc;
		st->trained = 1;
	}
	if ((rc = lm_load(path, 1, &st->lm))) /* gradients: the planner's Fisher pass */
		return rc;
	st->load_time = ocb_now_s() - t0;
	return ptq_lm_init(&st->plm, st->lm, &st->text, &st->proto, st->seed, &st->pm);
}

static void qa_teardown(void *state)
{
	struct qa_state *st = state;
	if (!st)
		return;
	if (st->is_lm)
		ptq_lm_release(&st->plm, &st->pm);
	else
		ptq_mlp_release(&st->pmlp, &st->pm);
	if (st->have_mlp)
		ocb_mlp_release(&st->mlp);
	ocb_idx_release(&st->train);
	ocb_idx_release(&st->test);
	lm_free(st->lm);
	ocb_text_release(&st->text);
	free(st);
}

/* Reads the case's params into st; OCB_EINVAL naming a bad one. */
static int qa_params(struct qa_state *st, const cJSON *params)
{
	const char *model = ocb_pstr(params, "model");
	st->calib = (int)ocb_pint(params, "calib");
	st->proto.calib_windows = (int)ocb_pint(params, "calib_windows");
	st->proto.window = (int)ocb_pint(params, "window");
	st->proto.stride = (int)ocb_pint(params, "stride");
	st->proto.eval_windows = ocb_pint(params, "eval_windows");
	st->proto.eval_batch = 8;
	st->mixed.fuse = ocb_pint(params, "fuse") != 0;
	snprintf(st->methods, sizeof st->methods, "%s", ocb_pstr(params, "methods"));
	int rc = ptq_plan_err_parse(ocb_pstr(params, "plan_err"), &st->mixed.err);
	if (rc)
		return rc;
	if (strcmp(model, "mlp") && strcmp(model, "lm"))
		return ocb_seterr(OCB_EINVAL, "quant_accuracy: unknown model \"%s\" (mlp or lm)",
				  model);
	st->is_lm = strcmp(model, "lm") == 0;
	return OCB_OK;
}

static int qa_setup(const cJSON *params, const struct ocb_ctx *ctx, void **state)
{
	struct qa_state *st = calloc(1, sizeof *st);
	if (!st)
		return ocb_seterr(OCB_ENOMEM, "quant_accuracy: state");
	st->quick = ctx->quick;
	st->seed = ctx->seed;
	snprintf(st->out_dir, sizeof st->out_dir, "%s", ctx->out_dir ? ctx->out_dir : ".");
	int rc = qa_params(st, params);
	if (rc == OCB_OK)
		rc = st->is_lm ? qa_setup_lm(st, ctx) : qa_setup_mlp(st, ctx);
	if (rc == OCB_OK) {
		double t0 = ocb_now_s();
		rc = ptq_calibrate(&st->pm);
		st->calib_time = ocb_now_s() - t0;
	}
	if (rc) {
		qa_teardown(st);
		return rc;
	}
	*state = st;
	return OCB_OK;
}

/* ---------------------------------------------------------------- run */

/* The metric rows of one configuration (first: the fp32 baseline, base its metric). */
static void qa_record(const struct qa_state *st, const struct ocb_metric_sink *s,
		      const struct ptq_conf *c, const struct ptq_outcome *o, int first, double base)
{
	char wl[128];
	char *ident = ocb_quant_id_to_json(&c->id);
	if (ocb_quant_id_name(&c->id, wl, sizeof wl) != OCB_OK) {
		free(ident);
		return;
	}
	if (ident)
		ocb_metric_ident(s, wl, ident);
	free(ident);
	double m = o->metric;
	if (st->is_lm) {
		ocb_metric(s, wl, -1, OCB_QK_VAL_PPL, m, "ppl");
		ocb_metric(s, wl, -1, OCB_QK_VAL_LOSS, o->loss, "nats");
	} else {
		ocb_metric(s, wl, -1, OCB_QK_TEST_ACCURACY, m, "ratio");
		ocb_metric(s, wl, -1, OCB_QK_ACC_DROP, 100.0 * (base - m), "points");
	}
	ocb_metric(s, wl, -1, OCB_QK_REL_ERR, (m - base) / base, "ratio");
	ocb_metric(s, wl, -1, OCB_QK_BPW, o->bpw, "bits");
	ocb_metric(s, wl, -1, OCB_QK_MODEL_BYTES, o->model_bytes, "bytes");
	ocb_metric(s, wl, -1, OCB_QK_QUANT_TIME, o->quant_s, "s");
	ocb_metric(s, wl, -1, OCB_QK_EVAL_TIME, o->eval_s, "s");
	ocb_metric(s, wl, -1, OCB_QK_WEIGHT_REL_ERR, o->weight_rel_err, "ratio");
	ocb_metric(s, wl, -1, OCB_QK_OUTPUT_REL_ERR, o->output_rel_err, "ratio");
	if (c->mixed) {
		ocb_metric(s, wl, -1, OCB_QK_PRED_ERR, o->pred, "sq");
		ocb_metric(s, wl, -1, OCB_QK_UNI_PRED_ERR, o->uni_pred, "sq");
	}
	if (!first)
		return;
	ocb_metric(s, wl, -1, OCB_QK_CALIB_ROWS, (double)st->pm.calib_rows, "rows");
	ocb_metric(s, wl, -1, OCB_QK_CALIB_TIME, st->calib_time, "s");
	ocb_metric(s, wl, -1, OCB_QK_LOAD_TIME, st->load_time, "s");
	ocb_metric(s, wl, -1, OCB_QK_TRAINED, st->trained, "bool");
	ocb_metric(s, wl, -1, OCB_QK_NWEIGHTS, (double)st->pm.nweights, "weights");
	if (st->is_lm) {
		ocb_metric(s, wl, -1, OCB_QK_EVAL_WINDOW, st->proto.window, "tokens");
		ocb_metric(s, wl, -1, OCB_QK_EVAL_STRIDE, st->proto.stride, "tokens");
		ocb_metric(s, wl, -1, OCB_QK_EVAL_WINDOWS, (double)st->proto.eval_windows, "windows");
	}
}

static int qa_workload(void *state, const struct ocb_ctx *ctx)
{
	struct qa_state *st = state;
	const struct ocb_metric_sink *s = &ctx->metrics;
	const char *model = st->is_lm ? "lm" : "mlp";
	struct ptq_conf conf[PTQ_MAXCONF];
	struct ptq_check checks[PTQ_MAXCHECK];
	double metric[PTQ_MAXCONF], base = NAN;
	int nc = ptq_confs(model, st->quick, st->methods, conf), rc = OCB_OK;

	for (int ci = 0; ci < nc && rc == OCB_OK; ci++) {
		const struct ptq_conf *c = &conf[ci];
		struct ptq_outcome o;
		char path[700], label[48];
		ocb_quant_id_label(&c->id, label, sizeof label);
		snprintf(path, sizeof path, "%s/quant_plan_%s_%s.json", st->out_dir, model, label);
		if ((rc = ptq_run_conf(&st->pm, c, &st->mixed, path, &o)))
			break;
		metric[ci] = o.metric;
		if (ci == 0)
			base = o.metric;
		qa_record(st, s, c, &o, ci == 0, base);
		ocb_info("quant_acc %-4s %-10s b%-4s g%-6s %s %.4f  bpw %.3f  quant %.2fs", model,
			 label, c->id.bits, c->id.group, st->is_lm ? "ppl" : "acc", o.metric, o.bpw,
			 o.quant_s);
	}
	ptq_model_restore(&st->pm);
	if (rc)
		return rc;
	int nk = ptq_checks(model, st->is_lm, conf, metric, nc, checks);
	for (int k = 0; k < nk; k++)
		ocb_metric(s, OCB_QACC_CHECK, -1, checks[k].key, checks[k].value, checks[k].unit);
	return OCB_OK;
}

/* Declared parameters (collect/params.h). */
static const char *const qa_models[] = {"mlp", "lm", NULL};
static const char *const qa_plan_errs[] = {"fisher", "output", "probe", NULL};
static const struct ocb_param qa_params_decl[] = {
	{"model", OCB_P_ENUM, "\"mlp\"", 0, 0, qa_models, "", "the fp32 model to quantize"},
	{"calib", OCB_P_INT, "1024", 1, 1e6, NULL, "examples", "MLP calibration examples"},
	{"calib_windows", OCB_P_INT, "32", 1, 1e6, NULL, "windows", "LM calibration windows"},
	{"window", OCB_P_INT, "128", 1, 4096, NULL, "tokens", "LM evaluation window"},
	{"stride", OCB_P_INT, "128", 1, 4096, NULL, "tokens", "LM evaluation stride"},
	{"eval_windows", OCB_P_INT, "256", 1, 1e9, NULL, "windows", "LM evaluation windows"},
	{"fuse", OCB_P_INT, "0", 0, 1, NULL, "", "mixed precision: fuse layers sharing an input"},
	{"methods", OCB_P_STRING, "\"\"", 0, 0, NULL, "", "comma list of methods to run (empty: all)"},
	{"plan_err", OCB_P_ENUM, "\"fisher\"", 0, 0, qa_plan_errs, "", "mixed precision: error estimate of the plan"},
	{0},
};

const struct ocb_bench ocb_bench_quant_accuracy = {
	.name = "quant_accuracy",
	.doc = "PTQ of the fp32 MLP and LM: RTN/GPTQ/block formats/ternary/mixed precision -> "
	       "accuracy, perplexity, bpw, bytes",
	.kind = OCB_WORKLOAD,
	.params = qa_params_decl,
	.cases = qa_cases,
	.setup = qa_setup,
	.workload = qa_workload,
	.teardown = qa_teardown,
	.consumes = (const char *const[]){OCB_ARTIFACT_MLP_FP32, OCB_ARTIFACT_LM_FP32, NULL},
};
