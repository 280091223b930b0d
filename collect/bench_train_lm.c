/* bench_train_lm: the fp32 byte-level LM baseline (workloads/model_lm, trainer_lm) as a
 * workload of suite `train` (issue 3).
 *
 * setup    : MLLOG file, data staging (the text corpus through workloads/data_text: the
 *            `corpus` parameter if given, else ctx->data_dir when it names a regular file
 *            or a fortunes-style directory (holding a file named `fortunes`), else the
 *            Debian `fortunes` package), the trainer (model init from the seed, optimizer).
 * workload : run_start .. run_stop around ocb_trainer_run (periodic validation on the
 *            first eval_windows windows, final validation on the whole split), metrics
 *            through ctx->metrics, then the fp32 checkpoint `lm_fp32.ckpt` in out_dir
 *            (artifact "lm_fp32": the quantization suites load it with lm_load).
 * Metrics (workload "train_lm"): train_loss per step (step = global step), val_loss per
 * periodic evaluation (step = steps done) and final (step -1), val_ppl, unigram_entropy
 * (train-split byte frequencies applied to the val split, add-one smoothed), eval_window,
 * eval_stride (tokens: the model is byte-level, one token = one byte), eval_bytes (tokens
 * scored), train_time, eval_time, data_load_time,
 * tokens_per_s, train_tokens, train_gflops (static FLOPs of the matrix products / time),
 * peak_rss (of this workload: VmHWM reset in setup), weight_bytes, grad_bytes,
 * optimizer_bytes, activation_bytes, param_count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_log.h"
#include "../common/ocb_time.h"
#include "../workloads/data_text.h"
#include "../workloads/model_lm.h"
#include "../workloads/trainer_lm.h"
#include "artifact.h"
#include "bench.h"
#include "mllog.h"

#define WORKLOAD "train_lm"
#define MLLOG_NAME "mllog_" WORKLOAD ".txt"

struct state {
	struct lm_train_spec spec; /* model config, corpus (text below), eval protocol */
	struct ocb_train_cfg tcfg;
	void *trainer;             /* lm_trainer state */
	struct ocb_text text;
	struct ocb_mllog *log;
	const struct ocb_ctx *ctx; /* during workload() only */
	double data_load_time;
	double train_t0;           /* ocb_now_s() when training began: elapsed_s per step */
	char corpus[4096];
};

/* Default: d 128, 4 layers, 4 heads, ctx 128, SwiGLU 344; 16 x 128 tokens a step.
 * --quick: d 64, 2 layers, ctx 64, 50 steps of 16 x 64, validation on 64 windows
 * (periodic) and 256 windows (final). */
static cJSON *cases(const struct ocb_ctx *ctx)
{
	struct lm_config m;
	struct lm_train_spec sp;
	struct ocb_train_cfg t;
	lm_config_default(&m);
	if (ctx->quick) {
		m.d_model = 64, m.n_layers = 2, m.n_heads = 2, m.ctx = 64;
		m.ffn = lm_ffn_width(64);
	}
	lm_train_spec_defaults(&sp, &m);
	lm_train_defaults(&t);
	if (ctx->quick) {
		t.batch = 16, t.steps = 50, t.warmup_steps = 5, t.lr = 5e-3f;
		t.eval_every = 25, sp.eval_windows = 64;
	}
	cJSON *a = cJSON_CreateArray(), *o = cJSON_CreateObject();
	if (!a || !o) {
		cJSON_Delete(a);
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddNumberToObject(o, "d_model", m.d_model);
	cJSON_AddNumberToObject(o, "n_layers", m.n_layers);
	cJSON_AddNumberToObject(o, "n_heads", m.n_heads);
	cJSON_AddNumberToObject(o, "ctx", m.ctx);
	cJSON_AddNumberToObject(o, "ffn", m.ffn);
	cJSON_AddNumberToObject(o, "batch", t.batch);
	cJSON_AddNumberToObject(o, "steps", (double)t.steps);
	cJSON_AddNumberToObject(o, "warmup", (double)t.warmup_steps);
	cJSON_AddNumberToObject(o, "lr", ocb_json_f32(t.lr));
	cJSON_AddNumberToObject(o, "min_lr", ocb_json_f32(t.min_lr));
	cJSON_AddNumberToObject(o, "weight_decay", ocb_json_f32(t.weight_decay));
	cJSON_AddNumberToObject(o, "eval_window", sp.eval_window);
	cJSON_AddNumberToObject(o, "eval_stride", sp.eval_stride);
	cJSON_AddNumberToObject(o, "eval_every", (double)t.eval_every);
	cJSON_AddNumberToObject(o, "eval_windows", (double)sp.eval_windows);
	if (ctx->quick) /* the final validation too: a CI-sized slice of the split */
		cJSON_AddNumberToObject(o, "final_eval_windows", 256);
	cJSON_AddItemToArray(a, o);
	return a;
}

/* Fills the spec (model, protocol; corpus left NULL) and the config from params (missing
 * keys: defaults). OCB_EINVAL on bad values. */
static int parse_params(const cJSON *p, struct lm_train_spec *sp, struct ocb_train_cfg *t)
{
	struct lm_config mc, *m = &mc;
	lm_config_default(m);
	m->d_model = (int)ocb_pfloat_or(p, "d_model", m->d_model);
	m->n_layers = (int)ocb_pfloat_or(p, "n_layers", m->n_layers);
	m->n_heads = (int)ocb_pfloat_or(p, "n_heads", m->n_heads);
	m->ctx = (int)ocb_pfloat_or(p, "ctx", m->ctx);
	m->ffn = (int)ocb_pfloat_or(p, "ffn", lm_ffn_width(m->d_model));
	int rc = lm_config_check(m);
	if (rc)
		return ocb_seterr(rc, WORKLOAD ": %s", ocb_lasterr());
	lm_train_spec_defaults(sp, m);
	lm_train_defaults(t);
	t->batch = (int)ocb_pfloat_or(p, "batch", t->batch);
	sp->seq = (int)ocb_pfloat_or(p, "seq", m->ctx);
	t->steps = (long)ocb_pfloat_or(p, "steps", (double)t->steps);
	t->warmup_steps = (long)ocb_pfloat_or(p, "warmup", (double)t->warmup_steps);
	t->lr = (float)ocb_pfloat_or(p, "lr", t->lr);
	t->min_lr = (float)ocb_pfloat_or(p, "min_lr", t->min_lr);
	t->weight_decay = (float)ocb_pfloat_or(p, "weight_decay", t->weight_decay);
	sp->eval_window = (int)ocb_pfloat_or(p, "eval_window", m->ctx);
	sp->eval_stride = (int)ocb_pfloat_or(p, "eval_stride", sp->eval_window);
	t->eval_every = (long)ocb_pfloat_or(p, "eval_every", (double)t->eval_every);
	sp->eval_windows = (long)ocb_pfloat_or(p, "eval_windows", (double)sp->eval_windows);
	sp->final_eval_windows = (long)ocb_pfloat_or(p, "final_eval_windows", 0);
	if (t->batch < 1 || sp->seq < 1 || sp->seq > m->ctx || t->steps < 1 ||
	    t->warmup_steps < 0 || !(t->lr > 0) || sp->eval_window < 1 ||
	    sp->eval_window > m->ctx || sp->eval_stride < 1 ||
	    sp->eval_stride > sp->eval_window || sp->final_eval_windows < 0)
		return ocb_seterr(OCB_EINVAL, WORKLOAD ": need batch, steps, lr > 0, seq and "
						      "eval_window in 1..ctx (%d), eval_stride in "
						      "1..eval_window",
				  m->ctx);
	return OCB_OK;
}

/* Static work: the training steps' matrix products (3x the forward) plus one forward per
 * periodic and final validation, the final one assuming ~257,000 validation bytes (the
 * fortunes split; the stored metric eval_bytes says what was scored). */
static int work(const cJSON *params, struct ocb_work *w)
{
	struct lm_train_spec sp;
	struct ocb_train_cfg t;
	int rc = parse_params(params, &sp, &t);
	if (rc)
		return rc;
	long fw = sp.final_eval_windows;
	double step = 3.0 * lm_forward_flops(&sp.model, t.batch, sp.seq);
	double per_window = lm_forward_flops(&sp.model, 1, sp.eval_window);
	double periodic = t.eval_every > 0 ? (double)(t.steps / t.eval_every) : 0.0;
	double final_windows = fw > 0 ? (double)fw : 257000.0 / sp.eval_stride;
	w->flops = (double)t.steps * step +
		   per_window * (periodic * (double)sp.eval_windows + final_windows);
	w->bytes = 0; /* compute-bound: the sgemm ceiling is the bound */
	w->bound = "flops_sgemm";
	return OCB_OK;
}

static void teardown(void *st)
{
	struct state *s = st;
	if (!s)
		return;
	lm_trainer.free(s->trainer);
	ocb_text_release(&s->text);
	ocb_mllog_close(s->log);
	free(s);
}

/* The corpus to load: params "corpus", else data_dir if it is a regular file or a
 * directory holding `fortunes`, else NULL (the Debian package). */
static const char *pick_corpus(const cJSON *p, const struct ocb_ctx *ctx, char *buf,
			       size_t len)
{
	const char *c = cJSON_GetObjectItemCaseSensitive(p, "corpus") ? ocb_pstr(p, "corpus") : NULL;
	if (c) {
		snprintf(buf, len, "%s", c);
		return buf;
	}
	struct stat sb;
	if (ctx->data_dir && stat(ctx->data_dir, &sb) == 0) {
		if (S_ISREG(sb.st_mode)) {
			snprintf(buf, len, "%s", ctx->data_dir);
			return buf;
		}
		char f[4200];
		snprintf(f, sizeof f, "%s/fortunes", ctx->data_dir);
		if (S_ISDIR(sb.st_mode) && stat(f, &sb) == 0 && S_ISREG(sb.st_mode)) {
			snprintf(buf, len, "%s", ctx->data_dir);
			return buf;
		}
	}
	return NULL;
}

/* Peak RSS of this workload, not of the process: Linux resets the high-water mark (VmHWM)
 * when "5" is written to /proc/self/clear_refs (proc(5)), so setup() resets it and
 * workload() reads VmHWM at the end. Elsewhere: getrusage's process-wide maximum. */
static void peak_rss_reset(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (f) {
		fputs("5", f);
		fclose(f);
	}
}

static double peak_rss_bytes(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double kb = NAN;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %lf kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	if (!isnan(kb))
		return kb * 1024.0;
	struct rusage ru;
	return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss * 1024.0 : NAN;
}

static cJSON *meta_status(int ok)
{
	cJSON *m = cJSON_CreateObject();
	if (m)
		cJSON_AddStringToObject(m, "status", ok ? "success" : "aborted");
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
	peak_rss_reset();
	snprintf(path, sizeof path, "%s/%s", ctx->out_dir ? ctx->out_dir : ".", MLLOG_NAME);
	rc = ocb_mllog_open(path, &s->log);
	if (rc)
		goto out;
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "submission_benchmark", cJSON_CreateString("lm_bytes"), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "submission_division", cJSON_CreateString("open"), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "submission_org", cJSON_CreateString("ocbench"), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "submission_platform", cJSON_CreateString("cpu"), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "submission_status", cJSON_CreateString("research"), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_START, "init_start", NULL, NULL);

	/* data staging, timed on its own (MLPerf HPC) */
	OCB_MLLOG(s->log, OCB_MLLOG_START, "staging_start", NULL, NULL);
	double t0 = ocb_now_s();
	const char *corpus = pick_corpus(params, ctx, s->corpus, sizeof s->corpus);
	rc = ocb_text_load(corpus, &s->text);
	if (rc == OCB_OK && s->text.ntrain < (size_t)s->spec.seq + 2)
		rc = ocb_seterr(OCB_EINVAL, "%s: train split of %zu bytes is shorter than one "
					    "window of %d", s->text.source, s->text.ntrain,
				s->spec.seq + 1);
	if (rc == OCB_OK && s->text.nval < 2)
		rc = ocb_seterr(OCB_EINVAL, "%s: validation split of %zu bytes", s->text.source,
				s->text.nval);
	OCB_MLLOG(s->log, OCB_MLLOG_END, "staging_stop", NULL, meta_status(rc == OCB_OK));
	if (rc)
		goto out;
	s->data_load_time = ocb_now_s() - t0;

	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "seed", cJSON_CreateNumber((double)ctx->seed), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "global_batch_size", cJSON_CreateNumber(s->tcfg.batch), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "max_sequence_length", cJSON_CreateNumber(s->spec.seq), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "opt_name", cJSON_CreateString("adamw"), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "opt_base_learning_rate", cJSON_CreateNumber(s->tcfg.lr), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "opt_learning_rate_warmup_steps",
		  cJSON_CreateNumber((double)s->tcfg.warmup_steps), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "opt_learning_rate_training_steps",
		  cJSON_CreateNumber((double)s->tcfg.steps), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "opt_adamw_weight_decay", cJSON_CreateNumber(s->tcfg.weight_decay), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "train_samples", cJSON_CreateNumber((double)s->text.ntrain), NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "eval_samples", cJSON_CreateNumber((double)s->text.nval), NULL);

	s->spec.train = s->text.train;
	s->spec.ntrain = s->text.ntrain;
	s->spec.val = s->text.val;
	s->spec.nval = s->text.nval;
	rc = lm_trainer.create(&s->spec, &s->tcfg, &s->trainer);
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

static cJSON *meta_step(long step, long tokens)
{
	cJSON *m = cJSON_CreateObject();
	if (m) {
		cJSON_AddNumberToObject(m, "step_num", (double)step);
		cJSON_AddNumberToObject(m, "samples_count", (double)tokens);
	}
	return m;
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

/* Step schedule: only the evaluation events come (no epochs). */
static int cb_event(void *c, enum ocb_train_event ev, long step, int epoch)
{
	struct state *s = c;
	long tok = step * s->tcfg.batch * s->spec.seq;
	(void)epoch;
	if (ev == OCB_TRAIN_EVAL_START)
		OCB_MLLOG(s->log, OCB_MLLOG_START, "eval_start", NULL, meta_step(step, tok));
	else if (ev == OCB_TRAIN_EVAL_STOP)
		OCB_MLLOG(s->log, OCB_MLLOG_END, "eval_stop", NULL, meta_step(step, tok));
	return OCB_OK;
}

static int cb_eval(void *c, const struct ocb_eval *ev)
{
	struct state *s = c;
	cJSON *m = meta_step(ev->step, ev->step * s->tcfg.batch * s->spec.seq);
	/* an LM has no accuracy: the MLPerf-style quality event is the loss (nats/byte) */
	if (m) {
		cJSON_AddNumberToObject(m, "eval_bytes", (double)ev->scored);
		cJSON_AddStringToObject(m, "unit", "nats/byte");
	}
	OCB_MLLOG(s->log, OCB_MLLOG_POINT, "eval_loss", cJSON_CreateNumber(ev->loss), m);
	if (!ev->final) /* the final one is stored as step -1 by workload() */
		return ocb_metric(&s->ctx->metrics, WORKLOAD, ev->step, "val_loss", ev->loss,
				  "nats");
	return OCB_OK;
}

static int workload(void *st, const struct ocb_ctx *ctx)
{
	struct state *s = st;
	struct ocb_train_result r;
	const struct ocb_metric_sink *ms = &ctx->metrics;
	char path[4200];
	int rc;

	s->ctx = ctx;
	if ((rc = ocb_artifact_path(ctx, OCB_ARTIFACT_LM_FP32, path, sizeof path)))
		goto out;
	struct ocb_train_cb cb = {.ctx = s, .on_event = cb_event, .on_step = cb_step,
				  .on_eval = cb_eval};
	ocb_info(WORKLOAD ": training the fp32 LM (%ld steps) for %s", s->tcfg.steps, path);
	OCB_MLLOG(s->log, OCB_MLLOG_START, "run_start", NULL, NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_START, "block_start", NULL, NULL);
	s->train_t0 = ocb_now_s();
	rc = ocb_trainer_run(&lm_trainer, s->trainer, &s->tcfg, &cb, &r);
	OCB_MLLOG(s->log, OCB_MLLOG_END, "block_stop", NULL, NULL);
	OCB_MLLOG(s->log, OCB_MLLOG_END, "run_stop", NULL, meta_status(rc == OCB_OK));
	if (rc)
		goto out;

	double uni = ocb_text_unigram_xent(s->text.train, s->text.ntrain, s->text.val,
					   s->text.nval);
	double rss = peak_rss_bytes();
	/* train_time is the optimizer steps only (evaluation excluded), as before the
	 * trainer interface; the tokens are r.samples */
	struct { const char *key; double v; const char *unit; } m[] = {
		{"val_loss", r.final_eval.loss, "nats"},
		{"val_ppl", r.final_eval.ppl, "ppl"},
		{"unigram_entropy", uni, "nats"},
		{"eval_window", s->spec.eval_window, "tokens"},
		{"eval_stride", s->spec.eval_stride, "tokens"},
		{"eval_bytes", (double)r.final_eval.scored, "tokens"},
		{"train_loss", r.final_train_loss, "nats"},
		{"train_time", r.step_time, "s"},
		{"eval_time", r.eval_time, "s"},
		{"data_load_time", s->data_load_time, "s"},
		{"train_steps", (double)r.steps, "steps"},
		{"train_tokens", (double)r.samples, "tokens"},
		{"tokens_per_s", r.samples_per_s, "tokens/s"},
		{"train_gflops", r.step_time > 0 ? r.flops / r.step_time * 1e-9 : NAN, "GFLOP/s"},
		{"peak_rss", rss, "bytes"},
		{"param_count", (double)r.info.nparams, "params"},
		{"weight_bytes", (double)r.info.weight_bytes, "bytes"},
		{"grad_bytes", (double)r.info.grad_bytes, "bytes"},
		{"optimizer_bytes", (double)r.info.optimizer_bytes, "bytes"},
		{"activation_bytes", (double)r.info.activation_bytes, "bytes"},
		/* for the MLPerf-style summary (REFERENCE.md §4): a sample is one window */
		{"threads", (double)(ctx->threads > 0 ? ctx->threads : 1), "threads"},
		{"global_batch_size", (double)s->tcfg.batch, "sequences"},
		{"train_samples", (double)r.steps * s->tcfg.batch, "sequences"},
	};
	for (size_t i = 0; i < sizeof m / sizeof m[0] && rc == OCB_OK; i++)
		if (!isnan(m[i].v))
			rc = ocb_metric(ms, WORKLOAD, -1, m[i].key, m[i].v, m[i].unit);
	if (rc == OCB_OK)
		rc = lm_trainer.save(s->trainer, path);
out:
	s->ctx = NULL;
	return rc;
}

/* Declared parameters (collect/params.h); the defaults are lm_config_default and
 * lm_train_defaults' (workloads/). */
static const struct ocb_param lm_params[] = {
	{"d_model", OCB_P_INT, "128", 8, 4096, NULL, "", "model width"},
	{"n_layers", OCB_P_INT, "4", 1, 64, NULL, "", "transformer blocks"},
	{"n_heads", OCB_P_INT, "4", 1, 64, NULL, "", "attention heads (divide d_model)"},
	{"ctx", OCB_P_INT, "128", 8, 4096, NULL, "tokens", "context length"},
	{"ffn", OCB_P_INT, NULL, 8, 65536, NULL, "", "SwiGLU hidden width (default: ~8/3 d_model, multiple of 8)"},
	{"batch", OCB_P_INT, "16", 1, 4096, NULL, "sequences", "sequences per step"},
	{"seq", OCB_P_INT, NULL, 1, 4096, NULL, "tokens", "training sequence length (default: ctx)"},
	{"steps", OCB_P_INT, "700", 1, 1e9, NULL, "steps", "optimizer steps"},
	{"warmup", OCB_P_INT, "70", 0, 1e9, NULL, "steps", "linear warm-up steps"},
	{"lr", OCB_P_FLOAT, "0.002", 1e-9, 10, NULL, "", "peak learning rate (AdamW)"},
	{"min_lr", OCB_P_FLOAT, "0.0001", 0, 10, NULL, "", "final learning rate (cosine)"},
	{"weight_decay", OCB_P_FLOAT, "0.1", 0, 10, NULL, "", "AdamW weight decay"},
	{"eval_window", OCB_P_INT, NULL, 1, 4096, NULL, "tokens", "validation window (default: ctx)"},
	{"eval_stride", OCB_P_INT, NULL, 1, 4096, NULL, "tokens", "validation stride (default: eval_window)"},
	{"eval_every", OCB_P_INT, "100", 1, 1e9, NULL, "steps", "periodic validation interval"},
	{"eval_windows", OCB_P_INT, "64", 1, 1e9, NULL, "windows", "windows of a periodic validation"},
	{"final_eval_windows", OCB_P_INT, "0", 0, 1e9, NULL, "windows", "windows of the final validation (0: the whole split)"},
	{"corpus", OCB_P_STRING, NULL, 0, 0, NULL, "", "text file to train on (default: --data-dir or the fortunes package)"},
	{0},
};

const struct ocb_bench ocb_bench_train_lm = {
	.name = WORKLOAD,
	.doc = "fp32 byte-level LLaMA-style LM (d 128, 4 layers, RoPE, SwiGLU) on fortunes: "
	       "AdamW, warm-up+cosine; val loss vs unigram, tokens/s, memory; saves "
	       "lm_fp32.ckpt",
	.kind = OCB_WORKLOAD,
	.params = lm_params,
	.cases = cases,
	.setup = setup,
	.work = work,
	.workload = workload,
	.teardown = teardown,
	.produces = (const char *const[]){OCB_ARTIFACT_LM_FP32, NULL},
};
