/* ternary_train: shared glue of the ternary suite's training workloads (see
 * ternary_train.h). */
#include "ternary_train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_log.h"
#include "../common/ocb_time.h"
#include "../kernels/quant_formats.h"
#include "../workloads/qt_export.h"
#include "../workloads/qt_recipe.h"
#include "../workloads/train_memory.h"
#include "../workloads/trainer_ternary.h"

const char *const tt_methods[] = {"fp32", "ste", "dqt", NULL};
const char *const tt_moments[] = {"fp32", "bf16", "fp8", NULL};

int tt_parse_q(const cJSON *p, struct qt_cfg *q)
{
	q->method = (enum qt_method)qt_method_parse(ocb_pstr(p, "method"));
	q->bits = (int)ocb_pint(p, "bits");
	q->moments = (enum dqt_mfmt)dqt_mfmt_parse(ocb_pstr(p, "moments"));
	if ((int)q->method < 0 || (int)q->moments < 0)
		return ocb_seterr(OCB_EINVAL, "ternary: unknown method or moments");
	if (q->method != QT_DQT) /* fp32 and STE keep fp32 AdamW; STE is ternary */
		q->moments = DQT_M_F32;
	if (q->method == QT_FP32)
		q->bits = 2;
	return qt_cfg_check(q);
}

cJSON *tt_grid_cases(int quick, void (*extra)(cJSON *c, void *arg), void *arg)
{
	int n;
	const struct qt_cfg *g = qt_suite_grid(quick, &n);
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < n && a; i++) {
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "method", qt_method_name(g[i].method));
		cJSON_AddNumberToObject(c, "bits", g[i].bits);
		cJSON_AddStringToObject(c, "moments", dqt_mfmt_name(g[i].moments));
		extra(c, arg);
		cJSON_AddItemToArray(a, c);
	}
	return a;
}

int tt_job_init(struct tt_job *j, const cJSON *p, const struct ocb_ctx *ctx, const char *model,
		const struct ocb_trainer *t)
{
	j->model = model;
	j->t = t;
	j->ctx = ctx;
	return tt_parse_q(p, &j->q);
}

void tt_job_params(struct tt_job *j, const cJSON *p, const struct ocb_ctx *ctx)
{
	j->cfg.lr = (float)ocb_pfloat(p, "lr");
	j->cfg.seed = ctx->seed;
	j->cfg.threads = ctx->threads;
	j->mem_steps = ocb_pint(p, "mem_steps");
}

int tt_lm_corpus(const cJSON *p, const struct ocb_ctx *ctx, struct ocb_text *text,
		 struct lm_train_spec *sp)
{
	const char *corpus = ocb_pstr(p, "corpus");
	int rc = ocb_text_load(*corpus ? corpus : ctx->data_dir, text);
	if (rc)
		return rc;
	sp->train = text->train;
	sp->ntrain = text->ntrain;
	sp->val = text->val;
	sp->nval = text->nval;
	return OCB_OK;
}

static cJSON *meta_num(const char *k, double v)
{
	cJSON *m = cJSON_CreateObject();
	if (m)
		cJSON_AddNumberToObject(m, k, v);
	return m;
}

void tt_name(struct tt_job *j, const struct ocb_ctx *ctx, int d_model)
{
	char label[32];
	qt_cfg_label(&j->q, label, sizeof label);
	snprintf(j->wl, sizeof j->wl, "ternary_%s:%s:%s", j->model, label,
		 dqt_mfmt_name(j->q.moments));
	cJSON *id = cJSON_CreateObject();
	if (!id)
		return;
	cJSON_AddStringToObject(id, "kind", "ternary");
	cJSON_AddStringToObject(id, "model", j->model);
	if (d_model > 0)
		cJSON_AddNumberToObject(id, "d_model", d_model);
	cJSON_AddStringToObject(id, "method", qt_method_name(j->q.method));
	cJSON_AddNumberToObject(id, "bits", j->q.method == QT_FP32 ? 32 : j->q.bits);
	cJSON_AddStringToObject(id, "moments", dqt_mfmt_name(j->q.moments));
	cJSON_AddStringToObject(id, "label", label);
	cJSON_AddStringToObject(id, "scale_rule", qt_scale_rule(&j->q));
	char *s = cJSON_PrintUnformatted(id);
	if (s)
		ocb_metric_ident(&ctx->metrics, j->wl, s);
	free(s);
	cJSON_Delete(id);
}

int tt_begin(struct tt_job *j, const struct ocb_ctx *ctx, long train_samples, long eval_samples)
{
	char path[4300], file[128];
	tt_name(j, ctx, 0);
	snprintf(file, sizeof file, "mllog_%s.txt", j->wl);
	for (char *c = file; *c; c++)
		if (*c == ':')
			*c = '_';
	snprintf(path, sizeof path, "%s/%s", ctx->out_dir ? ctx->out_dir : ".", file);
	int rc = ocb_mllog_open(path, &j->log);
	if (rc)
		return rc;
	OCB_MLLOG(j->log, OCB_MLLOG_POINT, "submission_benchmark", cJSON_CreateString(j->wl), NULL);
	OCB_MLLOG(j->log, OCB_MLLOG_POINT, "submission_division", cJSON_CreateString("open"), NULL);
	OCB_MLLOG(j->log, OCB_MLLOG_POINT, "submission_org", cJSON_CreateString("ocbench"), NULL);
	OCB_MLLOG(j->log, OCB_MLLOG_POINT, "submission_platform", cJSON_CreateString("cpu"), NULL);
	OCB_MLLOG(j->log, OCB_MLLOG_POINT, "submission_status", cJSON_CreateString("research"), NULL);
	OCB_MLLOG(j->log, OCB_MLLOG_POINT, "cache_clear", cJSON_CreateBool(0), NULL);
	OCB_MLLOG(j->log, OCB_MLLOG_START, "init_start", NULL, NULL);
	OCB_MLLOG(j->log, OCB_MLLOG_POINT, "seed", cJSON_CreateNumber((double)ctx->seed), NULL);
	OCB_MLLOG(j->log, OCB_MLLOG_POINT, "global_batch_size", cJSON_CreateNumber(j->cfg.batch), NULL);
	OCB_MLLOG(j->log, OCB_MLLOG_POINT, "opt_name", cJSON_CreateString("adamw"), NULL);
	OCB_MLLOG(j->log, OCB_MLLOG_POINT, "opt_base_learning_rate", cJSON_CreateNumber(j->cfg.lr), NULL);
	OCB_MLLOG(j->log, OCB_MLLOG_POINT, "train_samples", cJSON_CreateNumber((double)train_samples), NULL);
	OCB_MLLOG(j->log, OCB_MLLOG_POINT, "eval_samples", cJSON_CreateNumber((double)eval_samples), NULL);
	return OCB_OK;
}

void tt_end(struct tt_job *j)
{
	if (j->state)
		j->t->free(j->state);
	j->state = NULL;
	ocb_mllog_close(j->log);
	j->log = NULL;
}

static int cb_event(void *c, enum ocb_train_event ev, long step, int epoch)
{
	struct tt_job *j = c;
	cJSON *meta = epoch > 0 ? meta_num("epoch_num", epoch) : meta_num("step", (double)step);
	static const char *const keys[] = {"epoch_start", "epoch_stop", "eval_start", "eval_stop"};
	static const enum ocb_mllog_type types[] = {OCB_MLLOG_START, OCB_MLLOG_END, OCB_MLLOG_START,
						    OCB_MLLOG_END};
	OCB_MLLOG(j->log, types[ev], keys[ev], NULL, meta);
	return OCB_OK;
}

static int cb_step(void *c, long step, double loss, double lr)
{
	struct tt_job *j = c;
	(void)lr;
	int rc = ocb_metric(&j->ctx->metrics, j->wl, step, "train_loss", loss, "nats");
	if (rc == OCB_OK)
		rc = ocb_metric(&j->ctx->metrics, j->wl, step, "elapsed_s", ocb_now_s() - j->t0, "s");
	return rc;
}

static int cb_eval(void *c, const struct ocb_eval *ev)
{
	struct tt_job *j = c;
	const struct ocb_metric_sink *ms = &j->ctx->metrics;
	int rc;
	if (!strcmp(j->model, "mlp")) {
		OCB_MLLOG(j->log, OCB_MLLOG_POINT, "eval_accuracy", cJSON_CreateNumber(ev->accuracy),
			  meta_num("epoch_num", ev->epoch));
		rc = ocb_metric(ms, j->wl, ev->epoch, "test_accuracy", ev->accuracy, "ratio");
		if (rc == OCB_OK)
			rc = ocb_metric(ms, j->wl, ev->epoch, "test_loss", ev->loss, "nats");
	} else {
		OCB_MLLOG(j->log, OCB_MLLOG_POINT, "eval_accuracy", cJSON_CreateNumber(ev->loss),
			  meta_num("step", (double)ev->step));
		rc = ocb_metric(ms, j->wl, ev->step, "val_loss", ev->loss, "nats");
		if (rc == OCB_OK)
			rc = ocb_metric(ms, j->wl, ev->step, "val_ppl", ev->ppl, "ppl");
	}
	return rc;
}

/* The TQ2_0 / TQ1_0 evaluations of a DQT-ternary MLP. */
static int export_metrics(struct tt_job *j, double train_acc)
{
	const char *fmts[] = {"tq2_0", "tq1_0"};
	const struct ocb_metric_sink *ms = &j->ctx->metrics;
	int rc = OCB_OK, equal = 1;
	long mism = 0;
	for (int i = 0; i < 2 && rc == OCB_OK; i++) {
		struct qt_export_result x;
		char k[32];
		rc = qt_mlp_export_eval(qmlp_model(j->state), qmlp_set(j->state),
					qformat_find(fmts[i]), j->test, j->cfg.threads, &x);
		if (rc)
			break;
		equal &= x.accuracy == train_acc;
		mism += x.mismatched;
		snprintf(k, sizeof k, "%s_accuracy", fmts[i]);
		rc = ocb_metric(ms, j->wl, -1, k, x.accuracy, "ratio");
		snprintf(k, sizeof k, "%s_loss", fmts[i]);
		if (rc == OCB_OK)
			rc = ocb_metric(ms, j->wl, -1, k, x.loss, "nats");
		snprintf(k, sizeof k, "%s_bytes", fmts[i]);
		if (rc == OCB_OK)
			rc = ocb_metric(ms, j->wl, -1, k, (double)x.weight_bytes, "bytes");
	}
	if (rc == OCB_OK)
		rc = ocb_metric(ms, j->wl, -1, "export_mismatched", (double)mism, "weights");
	if (rc == OCB_OK)
		rc = ocb_metric(ms, j->wl, -1, "export_equal", equal, "bool");
	return rc;
}

int tt_memory_metrics(const struct ocb_metric_sink *ms, const char *wl,
		      const struct ocb_train_mem *m, double state_meas)
{
	double np = (double)m->nparams;
	struct { const char *key; double v; const char *unit; } t[] = {
		{"nparams", np, "params"},
		{"weight_bytes", (double)m->weights, "bytes"},
		{"grad_bytes", (double)m->grads, "bytes"},
		{"optimizer_bytes", (double)m->optimizer, "bytes"},
		{"activation_bytes", (double)m->activations, "bytes"},
		{"train_bytes_computed", (double)m->computed, "bytes"},
		{"train_bytes_measured", (double)m->measured, "bytes"},
		{"bytes_per_param_computed", (double)m->computed / np, "bytes/param"},
		{"bytes_per_param_measured", (double)m->measured / np, "bytes/param"},
		{"state_bytes_per_param", (double)(m->weights + m->grads + m->optimizer) / np,
		 "bytes/param"},
		{"state_bytes_per_param_measured", state_meas / np, "bytes/param"},
	};
	int rc = OCB_OK;
	for (size_t i = 0; i < sizeof t / sizeof t[0] && rc == OCB_OK; i++)
		if (!isnan(t[i].v))
			rc = ocb_metric(ms, wl, -1, t[i].key, t[i].v, t[i].unit);
	return rc;
}

/* The final metrics of a training; then those of its memory (tt_memory_metrics). */
static int final_metrics(struct tt_job *j, const struct ocb_train_result *r,
			 const struct ocb_train_mem *m, double state_meas)
{
	const struct ocb_metric_sink *ms = &j->ctx->metrics;
	int lm = !strcmp(j->model, "lm");
	double wbits = j->q.method == QT_FP32 ? 32 : j->q.bits == 2 ? log2(3.0) : j->q.bits;
	double mbits = 8.0 * (double)dqt_mfmt_bytes(j->q.method == QT_DQT ? j->q.moments
									   : DQT_M_F32);
	struct { const char *key; double v; const char *unit; } t[] = {
		{lm ? "val_loss" : "test_loss", r->final_eval.loss, "nats"},
		{lm ? "val_ppl" : "test_accuracy", lm ? r->final_eval.ppl : r->final_eval.accuracy,
		 lm ? "ppl" : "ratio"},
		{"train_loss", r->final_train_loss, "nats"},
		{"train_time", r->wall_time, "s"},
		{"train_step_time", r->step_time, "s"},
		{"step_time", r->steps ? r->step_time / (double)r->steps : NAN, "s"},
		{"train_steps", (double)r->steps, "steps"},
		{lm ? "tokens_per_s" : "samples_per_s", r->samples_per_s, lm ? "tokens/s" : "samples/s"},
		{"weight_bits", wbits, "bits"},
		{"moment_bits", mbits, "bits"},
		{"threads", (double)j->cfg.threads, "threads"},
		{"global_batch_size", (double)j->cfg.batch, "samples"},
		{"train_samples", (double)r->samples, lm ? "tokens" : "samples"},
	};
	int rc = OCB_OK;
	for (size_t i = 0; i < sizeof t / sizeof t[0] && rc == OCB_OK; i++)
		if (!isnan(t[i].v))
			rc = ocb_metric(ms, j->wl, -1, t[i].key, t[i].v, t[i].unit);
	return rc == OCB_OK ? tt_memory_metrics(ms, j->wl, m, state_meas) : rc;
}

/* The measured state (weights + gradients + optimizer): the footprint of a training is
 * M(b) = S + b a (activations, batch buffers and scratch grow linearly with the batch b),
 * so from the measurement at the job's batch B (*mb) and one more at batch 1,
 * S = (B M(1) - M(B)) / (B - 1). At this size the LM's activations (~120 B/param at batch
 * 16) hide what the methods hold per parameter; S is that part, measured. NAN at B = 1. */
static int measure_state(const struct tt_job *j, const struct ocb_train_mem *mb, double *state)
{
	struct ocb_train_cfg c1 = j->cfg;
	struct ocb_train_mem m1;
	double b = j->cfg.batch;
	*state = NAN;
	if (j->cfg.batch < 2)
		return OCB_OK;
	c1.batch = 1;
	int rc = ocb_train_measure_memory(j->t, j->spec, &c1, j->mem_steps, &m1);
	if (rc == OCB_OK)
		*state = (b * (double)m1.measured - (double)mb->measured) / (b - 1.0);
	return rc;
}

int tt_measure_memory(const struct tt_job *j, struct ocb_train_mem *mem, double *state)
{
	int rc = ocb_train_measure_memory(j->t, j->spec, &j->cfg, j->mem_steps, mem);
	return rc ? rc : measure_state(j, mem, state);
}

int tt_run(struct tt_job *j)
{
	struct ocb_train_result r;
	struct ocb_train_mem mem;
	char label[32], path[4300];
	int rc;

	if ((rc = j->t->create(j->spec, &j->cfg, &j->state)))
		return rc;
	OCB_MLLOG(j->log, OCB_MLLOG_END, "init_stop", NULL, NULL);
	struct ocb_train_cb cb = {.ctx = j, .on_event = cb_event, .on_step = cb_step,
				  .on_eval = cb_eval};
	OCB_MLLOG(j->log, OCB_MLLOG_START, "run_start", NULL, NULL);
	j->t0 = ocb_now_s();
	rc = ocb_trainer_run(j->t, j->state, &j->cfg, &cb, &r);
	cJSON *meta = cJSON_CreateObject();
	if (meta)
		cJSON_AddStringToObject(meta, "status", rc == OCB_OK ? "success" : "aborted");
	OCB_MLLOG(j->log, OCB_MLLOG_END, "run_stop", NULL, meta);
	if (rc)
		return rc;
	/* memory: a forked child creates the same trainer and takes mem_steps steps */
	double state;
	if ((rc = tt_measure_memory(j, &mem, &state)))
		return rc;
	if ((rc = final_metrics(j, &r, &mem, state)))
		return rc;
	if (!strcmp(j->model, "mlp") && j->q.method == QT_DQT && j->q.bits == 2 &&
	    (rc = export_metrics(j, r.final_eval.accuracy)))
		return rc;
	qt_cfg_label(&j->q, label, sizeof label);
	snprintf(path, sizeof path, "%s/ternary_%s_%s_%s.ckpt",
		 j->ctx->out_dir ? j->ctx->out_dir : ".", j->model, label,
		 dqt_mfmt_name(j->q.moments));
	ocb_info("%s: %ld steps, saving %s", j->wl, r.steps, path);
	return j->t->save(j->state, path);
}
