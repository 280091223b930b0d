/* bench_train_mlp: the fp32 MLP baseline as a workload of suite `train` (issue 3).
 *
 * setup    : MLLOG file, data staging (Fashion-MNIST through workloads/data_idx; a bad or
 *            missing file fails the case with the loader's one-line error), the trainer
 *            (workloads/trainer_mlp: model init, optimizer).
 * workload : run_start .. run_stop around ocb_trainer_run (epochs, eval after each),
 *            metrics through ctx->metrics, then the fp32 checkpoint `mlp_fp32.ckpt` in
 *            out_dir (artifact "mlp_fp32": the quantized / sparse suites load it).
 * Metrics (workload "train_mlp"): train_loss per logged step (step = global step),
 * test_accuracy and test_loss per epoch (step = epoch) and final (step -1), train_time,
 * data_load_time, samples_per_s, train_gflops, sgemm_fraction (train_gflops over the
 * measured 'flops_sgemm' ceiling at the same thread count, when stored), peak_rss,
 * weight_bytes, grad_bytes, optimizer_bytes, activation_bytes. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_time.h"
#include "../common/ocb_log.h"
#include "../workloads/data_idx.h"
#include "../workloads/model_mlp.h"
#include "../workloads/trainer_mlp.h"
#include "artifact.h"
#include "bench.h"
#include "ceilings.h"
#include "mllog.h"

#define WORKLOAD "train_mlp"
#define MLLOG_NAME "mllog_" WORKLOAD ".txt"

struct state {
	struct ocb_mlp_spec spec; /* model config, data (train, test below), max_train */
	struct ocb_train_cfg tcfg;
	void *trainer;            /* ocb_trainer_mlp state */
	struct ocb_idx_set train, test;
	struct ocb_mllog *log;
	const struct ocb_ctx *ctx; /* during workload() only */
	double data_load_time;
	double train_t0;           /* ocb_now_s() when training began: elapsed_s per step */
};

/* Default: the settings that reach >= 0.885 on Fashion-MNIST (ocb_mlp_train_defaults).
 * --quick: one epoch on the first 10,000 training examples. */
static cJSON *cases(const struct ocb_ctx *ctx)
{
	struct ocb_train_cfg t;
	ocb_mlp_train_defaults(&t);
	cJSON *a = cJSON_CreateArray(), *o = cJSON_CreateObject();
	if (!a || !o) {
		cJSON_Delete(a);
		cJSON_Delete(o);
		return NULL;
	}
	int dims[4] = {784, 512, 256, 10};
	cJSON_AddItemToObject(o, "dims", cJSON_CreateIntArray(dims, 4));
	cJSON_AddNumberToObject(o, "epochs", ctx->quick ? 1 : t.epochs);
	cJSON_AddNumberToObject(o, "max_train", ctx->quick ? 10000 : 0);
	cJSON_AddNumberToObject(o, "batch", t.batch);
	cJSON_AddStringToObject(o, "opt", ocb_optim_name(t.opt));
	cJSON_AddNumberToObject(o, "lr", ocb_json_f32(t.lr));
	cJSON_AddNumberToObject(o, "min_lr", ocb_json_f32(t.min_lr));
	cJSON_AddNumberToObject(o, "warmup_epochs", ocb_json_f32(ctx->quick ? 0.2f : t.warmup_epochs));
	cJSON_AddNumberToObject(o, "weight_decay", ocb_json_f32(t.weight_decay));
	cJSON_AddItemToArray(a, o);
	return a;
}

/* Fills the spec's model and max_train and the config from params (missing keys:
 * defaults). OCB_EINVAL on bad values. */
static int parse_params(const cJSON *p, struct ocb_mlp_spec *sp, struct ocb_train_cfg *t)
{
	memset(sp, 0, sizeof *sp);
	ocb_mlp_default_cfg(&sp->model);
	ocb_mlp_train_defaults(t);
	if (cJSON_GetObjectItemCaseSensitive(p, "dims")) {
		int rc = ocb_mlp_cfg_from_json(p, &sp->model);
		if (rc)
			return rc;
	}
	t->epochs = (int)ocb_pfloat_or(p, "epochs", t->epochs);
	sp->max_train = (int)ocb_pfloat_or(p, "max_train", sp->max_train);
	t->batch = (int)ocb_pfloat_or(p, "batch", t->batch);
	t->lr = (float)ocb_pfloat_or(p, "lr", t->lr);
	t->min_lr = (float)ocb_pfloat_or(p, "min_lr", t->min_lr);
	t->warmup_epochs = (float)ocb_pfloat_or(p, "warmup_epochs", t->warmup_epochs);
	t->weight_decay = (float)ocb_pfloat_or(p, "weight_decay", t->weight_decay);
	t->momentum = (float)ocb_pfloat_or(p, "momentum", t->momentum);
	const char *opt = cJSON_GetObjectItemCaseSensitive(p, "opt") ? ocb_pstr(p, "opt") : "adamw";
	if (strcmp(opt, "adamw") == 0)
		t->opt = OCB_OPTIM_ADAMW;
	else if (strcmp(opt, "sgd") == 0)
		t->opt = OCB_OPTIM_SGD;
	else
		return ocb_seterr(OCB_EINVAL, WORKLOAD ": opt \"%s\" is not adamw or sgd", opt);
	if (t->epochs < 1 || t->batch < 1 || sp->max_train < 0 || !(t->lr > 0))
		return ocb_seterr(OCB_EINVAL, WORKLOAD ": epochs, batch, lr must be > 0");
	return OCB_OK;
}

/* Static work of the whole workload, assuming Fashion-MNIST's sizes (60,000 train or
 * max_train, 10,000 test): the training steps (ocb_mlp_step_flops) plus one forward pass
 * over the test set per epoch. */
static int work(const cJSON *params, struct ocb_work *w)
{
	struct ocb_mlp_spec sp;
	struct ocb_train_cfg t;
	int rc = parse_params(params, &sp, &t);
	if (rc)
		return rc;
	const struct ocb_mlp_cfg m = sp.model;
	double ntr = sp.max_train > 0 && sp.max_train < 60000 ? sp.max_train : 60000;
	double steps = floor(ntr / t.batch) * t.epochs, fwd = 0, step = 0;
	for (int i = 0; i < m.nlayers; i++) {
		double mm = 2.0 * m.dims[i] * m.dims[i + 1], b = m.dims[i + 1];
		fwd += mm + b;                        /* per row */
		step += 2 * mm + 2 * b + (i ? mm : 0); /* fwd + gW + gb (+ dx) per row */
	}
	w->flops = steps * t.batch * step + (double)t.epochs * 10000 * fwd;
	w->bytes = 0; /* compute-bound by design: the sgemm ceiling is the bound */
	w->bound = "flops_sgemm";
	return OCB_OK;
}

static void teardown(void *st)
{
	struct state *s = st;
	if (!s)
		return;
	ocb_trainer_mlp.free(s->trainer);
	ocb_idx_release(&s->train);
	ocb_idx_release(&s->test);
	ocb_mllog_close(s->log);
	free(s);
}

static cJSON *meta_epoch(int epoch)
{
	cJSON *m = cJSON_CreateObject();
	if (m)
		cJSON_AddNumberToObject(m, "epoch_num", epoch);
	return m;
}

static int setup(const cJSON *params, const struct ocb_ctx *ctx, void **out)
{
	struct state *s = calloc(1, sizeof *s);
	char path[4200];
	int rc;

	*out = NULL;
	if (!s)
		return ocb_seterr(OCB_ENOMEM, WORKLOAD ": state");
	rc = parse_params(params, &s->spec, &s->tcfg);
	if (rc)
		goto out;
	s->tcfg.seed = ctx->seed;
	s->tcfg.threads = ctx->threads;
	snprintf(path, sizeof path, "%s/%s", ctx->out_dir ? ctx->out_dir : ".", MLLOG_NAME);
	rc = ocb_mllog_open(path, &s->log);
	if (rc)
		goto out;
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "submission_benchmark", cJSON_CreateString("mlp_fmnist"), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "submission_division", cJSON_CreateString("open"), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "submission_org", cJSON_CreateString("ocbench"), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "submission_platform", cJSON_CreateString("cpu"), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "submission_status", cJSON_CreateString("research"), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_START, "init_start", NULL, NULL);

	/* data staging, timed on its own (MLPerf HPC) */
	OCB_MLLOG(s->log, OCB_MLLOG_START, "staging_start", NULL, NULL);
	double t0 = ocb_now_s();
	rc = ocb_fmnist_load(ctx->data_dir, 1, &s->train);
	if (rc == OCB_OK)
		rc = ocb_fmnist_load(ctx->data_dir, 0, &s->test);
	if (rc) {
		cJSON *meta = cJSON_CreateObject();
		if (meta)
			cJSON_AddStringToObject(meta, "status", "aborted");
		OCB_MLLOG(s->log, OCB_MLLOG_END, "staging_stop", NULL, meta);
		goto out;
	}
	s->data_load_time = ocb_now_s() - t0;
	OCB_MLLOG(s->log, OCB_MLLOG_END, "staging_stop", NULL, NULL);

	int mt = s->spec.max_train, ntr = mt > 0 && mt < s->train.n ? mt : s->train.n;
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "seed", cJSON_CreateNumber((double)ctx->seed), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "global_batch_size", cJSON_CreateNumber(s->tcfg.batch), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "opt_name", cJSON_CreateString(ocb_optim_name(s->tcfg.opt)), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "opt_base_learning_rate", cJSON_CreateNumber(s->tcfg.lr), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "opt_learning_rate_warmup_epochs",
		  cJSON_CreateNumber(s->tcfg.warmup_epochs), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "opt_weight_decay", cJSON_CreateNumber(s->tcfg.weight_decay), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "train_samples", cJSON_CreateNumber(ntr), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "eval_samples", cJSON_CreateNumber(s->test.n), NULL);

	s->spec.train = &s->train;
	s->spec.test = &s->test;
	rc = ocb_trainer_mlp.create(&s->spec, &s->tcfg, &s->trainer);
	if (rc)
		goto out;
	OCB_MLLOG(s->log, OCB_MLLOG_END, "init_stop", NULL, NULL);
	*out = s;
	s = NULL;
out:
	teardown(s);
	return rc;
}

/* ---- training callbacks -> metrics + MLLOG ---- */

static int cb_event(void *c, enum ocb_train_event ev, long step, int epoch)
{
	struct state *s = c;
	(void)step;
	switch (ev) {
	case OCB_TRAIN_EPOCH_START:
		OCB_MLLOG(s->log, OCB_MLLOG_START, "epoch_start", NULL, meta_epoch(epoch));
		break;
	case OCB_TRAIN_EPOCH_STOP:
		OCB_MLLOG(s->log, OCB_MLLOG_END, "epoch_stop", NULL, meta_epoch(epoch));
		break;
	case OCB_TRAIN_EVAL_START:
		OCB_MLLOG(s->log, OCB_MLLOG_START, "eval_start", NULL, meta_epoch(epoch));
		break;
	case OCB_TRAIN_EVAL_STOP:
		OCB_MLLOG(s->log, OCB_MLLOG_END, "eval_stop", NULL, meta_epoch(epoch));
		break;
	}
	return OCB_OK;
}

static int cb_step(void *c, long step, double loss, double lr)
{
	struct state *s = c;
	(void)lr;
	int rc = ocb_metric(&s->ctx->metrics, WORKLOAD, step, "train_loss", loss, "nats");
	/* wall seconds since training began (evaluations included): the report's x axis
	 * for loss vs time, measured rather than derived from a step count */
	if (rc == OCB_OK)
		rc = ocb_metric(&s->ctx->metrics, WORKLOAD, step, "elapsed_s",
				ocb_now_s() - s->train_t0, "s");
	return rc;
}

static int cb_eval(void *c, const struct ocb_eval *ev)
{
	struct state *s = c;
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "eval_accuracy", cJSON_CreateNumber(ev->accuracy),
		  meta_epoch(ev->epoch));
	int rc = ocb_metric(&s->ctx->metrics, WORKLOAD, ev->epoch, "test_accuracy",
			    ev->accuracy, "ratio");
	if (rc == OCB_OK)
		rc = ocb_metric(&s->ctx->metrics, WORKLOAD, ev->epoch, "test_loss", ev->loss,
				"nats");
	return rc;
}

static int workload(void *st, const struct ocb_ctx *ctx)
{
	struct state *s = st;
	struct ocb_train_result r;
	const struct ocb_metric_sink *ms = &ctx->metrics;
	char path[4200];
	int rc;

	s->ctx = ctx;
	if ((rc = ocb_artifact_path(ctx, OCB_ARTIFACT_MLP_FP32, path, sizeof path)))
		goto out;
	struct ocb_train_cb cb = {.ctx = s, .on_event = cb_event, .on_step = cb_step,
				  .on_eval = cb_eval};
	ocb_info(WORKLOAD ": training the fp32 MLP (%d epoch(s)) for %s", s->tcfg.epochs, path);
	OCB_MLLOG(s->log, OCB_MLLOG_START, "run_start", NULL, NULL);
	s->train_t0 = ocb_now_s();
	rc = ocb_trainer_run(&ocb_trainer_mlp, s->trainer, &s->tcfg, &cb, &r);
	cJSON *meta = cJSON_CreateObject();
	if (meta)
		cJSON_AddStringToObject(meta, "status", rc == OCB_OK ? "success" : "aborted");
	OCB_MLLOG(s->log, OCB_MLLOG_END, "run_stop", NULL, meta);
	if (rc)
		goto out;

	int threads = ctx->threads > 0 ? ctx->threads : openblas_get_num_threads();
	const struct ocb_ceiling *sg =
		ocb_ceiling_find(ctx->ceilings, ctx->nceilings, "flops_sgemm", threads);
	double ceil = sg ? sg->value : NAN; /* no ceiling stored: no fraction */
	struct rusage ru;
	double rss = getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss * 1024.0 : NAN;
	struct { const char *key; double v; const char *unit; } m[] = {
		{"test_accuracy", r.final_eval.accuracy, "ratio"},
		{"test_loss", r.final_eval.loss, "nats"},
		{"train_loss", r.final_train_loss, "nats"},
		{"train_time", r.wall_time, "s"},
		{"train_step_time", r.step_time, "s"},
		{"data_load_time", s->data_load_time, "s"},
		{"train_steps", (double)r.steps, "steps"},
		{"samples_per_s", r.samples_per_s, "samples/s"},
		{"train_gflops", r.gflops, "GFLOP/s"},
		{"sgemm_fraction", r.gflops / ceil, "ratio"},
		{"peak_rss", rss, "bytes"},
		{"weight_bytes", (double)r.info.weight_bytes, "bytes"},
		{"grad_bytes", (double)r.info.grad_bytes, "bytes"},
		{"optimizer_bytes", (double)r.info.optimizer_bytes, "bytes"},
		/* for the MLPerf-style summary (REFERENCE.md §4) */
		{"threads", (double)threads, "threads"},
		{"global_batch_size", (double)s->tcfg.batch, "samples"},
		{"train_samples", (double)r.steps * s->tcfg.batch, "samples"},
		{"activation_bytes", (double)r.info.activation_bytes, "bytes"},
	};
	for (size_t i = 0; i < sizeof m / sizeof m[0] && rc == OCB_OK; i++)
		if (!isnan(m[i].v)) /* no ceiling stored: no fraction, rather than a fake one */
			rc = ocb_metric(ms, WORKLOAD, -1, m[i].key, m[i].v, m[i].unit);
	if (rc == OCB_OK)
		rc = ocb_trainer_mlp.save(s->trainer, path);
out:
	s->ctx = NULL;
	return rc;
}

/* Declared parameters (collect/params.h); the defaults are ocb_mlp_default_cfg and
 * ocb_mlp_train_defaults' (workloads/). */
static const char *const mlp_opts[] = {"adamw", "sgd", NULL};
static const struct ocb_param mlp_params[] = {
	{"dims", OCB_P_INTLIST, "[784,512,256,10]", 1, 65536, NULL, "", "layer widths, input to classes"},
	{"epochs", OCB_P_INT, "15", 1, 1e6, NULL, "epochs", "passes over the training set"},
	{"max_train", OCB_P_INT, "0", 0, 1e9, NULL, "examples", "first N training examples (0: all)"},
	{"batch", OCB_P_INT, "256", 1, 65536, NULL, "examples", "mini-batch size"},
	{"opt", OCB_P_ENUM, "\"adamw\"", 0, 0, mlp_opts, "", "optimizer"},
	{"lr", OCB_P_FLOAT, "0.001", 1e-9, 10, NULL, "", "peak learning rate"},
	{"min_lr", OCB_P_FLOAT, "1e-05", 0, 10, NULL, "", "final learning rate (cosine)"},
	{"warmup_epochs", OCB_P_FLOAT, "1", 0, 1e6, NULL, "epochs", "linear warm-up"},
	{"weight_decay", OCB_P_FLOAT, "0.0001", 0, 10, NULL, "", "weight decay"},
	{"momentum", OCB_P_FLOAT, "0.9", 0, 1, NULL, "", "SGD momentum"},
	{0},
};

const struct ocb_bench ocb_bench_train_mlp = {
	.name = WORKLOAD,
	.doc = "fp32 MLP 784-512-256-10 on Fashion-MNIST: AdamW, warm-up+cosine; accuracy, "
	       "loss curve, GFLOP/s vs sgemm, memory; saves mlp_fp32.ckpt",
	.kind = OCB_WORKLOAD,
	.params = mlp_params,
	.cases = cases,
	.setup = setup,
	.work = work,
	.workload = workload,
	.teardown = teardown,
	.produces = (const char *const[]){OCB_ARTIFACT_MLP_FP32, NULL},
};
