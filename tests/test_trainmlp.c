/* trainmlp: the MLP trainer through the trainer interface: training on the synthetic
 * 10-class set through the real IDX loader learns (accuracy far above chance); the same
 * seed gives a bit-identical loss sequence and weights; the callbacks arrive in MLPerf
 * order; a step schedule of the same length takes the same steps; save/load round trip;
 * bad configurations are refused. */
#include <criterion/criterion.h>

#include "../collect/registry.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../workloads/data_synth.h"
#include "../workloads/trainer_mlp.h"
#include "cli_util.h"

static char dir[128];
static struct ocb_idx_set tr, te;

static void setup(void)
{
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb-trainmlp")));
	cr_assert_eq(ocb_synth_fmnist_write(dir, 2000, 400, 21), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_fmnist_load(dir, 1, &tr), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_fmnist_load(dir, 0, &te), OCB_OK, "%s", ocb_lasterr());
}

static void teardown(void)
{
	char cmd[256];
	ocb_idx_release(&tr);
	ocb_idx_release(&te);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(trainmlp, .init = setup, .fini = teardown);

struct rec {
	double loss[256];
	long step[256];
	int nloss;
	char events[256];
	int nev;
	double acc[8];
	int nacc;
	int stop_at_step; /* >= 0: on_step returns an error there */
};

static int on_step(void *c, long step, double loss, double lr)
{
	struct rec *r = c;
	cr_assert(lr > 0);
	if (r->nloss < 256) {
		r->loss[r->nloss] = loss;
		r->step[r->nloss++] = step;
	}
	if (r->stop_at_step >= 0 && step >= r->stop_at_step)
		return ocb_seterr(OCB_ERUNTIME, "stopped by the test");
	return 0;
}

static int on_event(void *c, enum ocb_train_event ev, long step, int epoch)
{
	struct rec *r = c;
	static const char code[] = "SsEe"; /* epoch start/stop, eval start/stop */
	if (r->nev < 255)
		r->events[r->nev++] = code[ev];
	cr_assert(epoch >= 1);
	cr_assert_eq(step % 40, 0, "events fall on epoch boundaries (40 steps), not %ld", step);
	return 0;
}

static int on_eval(void *c, const struct ocb_eval *ev)
{
	struct rec *r = c;
	cr_assert(isfinite(ev->loss));
	cr_assert(isnan(ev->ppl));
	cr_assert_eq(ev->scored, te.n);
	if (r->nacc < 8)
		r->acc[r->nacc++] = ev->accuracy;
	cr_assert_eq(ev->epoch, r->nacc);
	cr_assert_eq(ev->final, ev->epoch == 2);
	return 0;
}

static void small_cfg(uint64_t seed, struct ocb_mlp_spec *sp, struct ocb_train_cfg *c)
{
	*sp = (struct ocb_mlp_spec){.model = {.nlayers = 2, .dims = {784, 64, 10}},
				    .train = &tr, .test = &te};
	ocb_mlp_train_defaults(c);
	c->epochs = 2;
	c->batch = 50;
	c->seed = seed;
	c->threads = 2;
	c->log_every = 1;
	c->warmup_epochs = 0.25f;
}

/* Trains the small model; saves it at `save` (NULL: not saved). */
static int train_small(uint64_t seed, struct rec *r, struct ocb_train_result *res,
		       const char *save)
{
	struct ocb_mlp_spec sp;
	struct ocb_train_cfg c;
	void *st = NULL;
	small_cfg(seed, &sp, &c);
	cr_assert_eq(ocb_trainer_mlp.create(&sp, &c, &st), OCB_OK, "%s", ocb_lasterr());
	struct ocb_train_cb cb = {.ctx = r, .on_step = on_step, .on_event = on_event,
				  .on_eval = on_eval};
	int rc = ocb_trainer_run(&ocb_trainer_mlp, st, &c, r ? &cb : NULL, res);
	if (rc == OCB_OK && save)
		cr_assert_eq(ocb_trainer_mlp.save(st, save), OCB_OK, "%s", ocb_lasterr());
	ocb_trainer_mlp.free(st);
	return rc;
}

/* The whole file at path (malloc'd), *n its size. */
static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	rewind(f);
	unsigned char *b = malloc(*n);
	cr_assert_eq(fread(b, 1, *n, f), *n);
	fclose(f);
	return b;
}

Test(trainmlp, learns_synthetic_classes)
{
	struct rec r = {.stop_at_step = -1};
	struct ocb_train_result res;
	cr_assert_eq(train_small(1, &r, &res, NULL), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(res.steps, 80); /* 2 epochs x 2000/50 */
	cr_assert_eq(res.epochs, 2);
	cr_assert_eq(res.samples, 4000);
	cr_assert(res.final_eval.accuracy > 0.9, "accuracy %g (chance 0.1)",
		  res.final_eval.accuracy);
	cr_assert(r.loss[r.nloss - 1] < 0.5 * r.loss[0], "loss %g -> %g", r.loss[0],
		  r.loss[r.nloss - 1]);
	cr_assert_eq(r.nloss, 80);
	cr_assert_eq(r.step[79], 79);
	cr_assert_eq(r.nacc, 2);
	cr_assert_eq(res.first_loss, r.loss[0]);
	r.events[r.nev] = '\0';
	cr_assert_str_eq(r.events, "SsEeSsEe");
	cr_assert(res.flops > 0 && res.gflops > 0 && res.samples_per_s > 0);
	cr_assert_eq(res.info.optimizer_bytes, (size_t)2 * 4 * (784 * 64 + 64 + 64 * 10 + 16));
	cr_assert_eq(res.info.weight_bytes, (784 * 64 + 64 + 64 * 10 + 10) * 4);
}

Test(trainmlp, same_seed_same_losses_and_weights_bitwise)
{
	struct rec a = {.stop_at_step = -1}, b = {.stop_at_step = -1}, c = {.stop_at_step = -1};
	struct ocb_train_result ra, rb, rc;
	char pa[256], pb[256];
	snprintf(pa, sizeof pa, "%s/a.ckpt", dir);
	snprintf(pb, sizeof pb, "%s/b.ckpt", dir);
	cr_assert_eq(train_small(7, &a, &ra, pa), OCB_OK);
	cr_assert_eq(train_small(7, &b, &rb, pb), OCB_OK);
	cr_assert_eq(a.nloss, b.nloss);
	cr_assert_eq(memcmp(a.loss, b.loss, sizeof(double) * a.nloss), 0,
		     "same seed, same threads: identical loss sequence");
	cr_assert_eq(memcmp(a.acc, b.acc, sizeof(double) * a.nacc), 0);
	cr_assert_eq(ra.final_eval.accuracy, rb.final_eval.accuracy);
	cr_assert_eq(ra.final_train_loss, rb.final_train_loss);
	size_t na, nb;
	unsigned char *fa = slurp(pa, &na), *fb = slurp(pb, &nb);
	cr_assert(na == nb && memcmp(fa, fb, na) == 0, "same seed: identical checkpoints");
	free(fa);
	free(fb);
	cr_assert_eq(train_small(8, &c, &rc, NULL), OCB_OK);
	cr_assert_neq(memcmp(a.loss, c.loss, sizeof(double) * a.nloss), 0,
		      "another seed, another run");
}

/* An epoch schedule and a step schedule of the same length and warm-up run the same
 * steps (same lr, same reshuffle at each pass): the same code, so bit-identical. */
Test(trainmlp, step_schedule_takes_the_same_steps)
{
	struct ocb_mlp_spec sp;
	struct ocb_train_cfg ce, cs;
	struct ocb_train_result re, rs;
	struct rec a = {.stop_at_step = -1}, b = {.stop_at_step = -1};
	void *st = NULL;
	small_cfg(5, &sp, &ce);
	cr_assert_eq(train_small(5, &a, &re, NULL), OCB_OK);
	cs = ce;
	cs.epochs = 0;
	cs.steps = 80;
	cs.warmup_steps = 10; /* 0.25 epochs of 40 steps */
	cs.eval_every = 0;
	cr_assert_eq(ocb_trainer_mlp.create(&sp, &cs, &st), OCB_OK);
	struct ocb_train_cb cb = {.ctx = &b, .on_step = on_step};
	cr_assert_eq(ocb_trainer_run(&ocb_trainer_mlp, st, &cs, &cb, &rs), OCB_OK);
	ocb_trainer_mlp.free(st);
	cr_assert_eq(rs.epochs, 0);
	cr_assert_eq(b.nloss, a.nloss);
	cr_assert_eq(memcmp(a.loss, b.loss, sizeof(double) * a.nloss), 0);
	cr_assert_eq(rs.final_eval.accuracy, re.final_eval.accuracy);
}

Test(trainmlp, callback_error_stops_training)
{
	struct rec r = {.stop_at_step = 5};
	struct ocb_train_result res;
	cr_assert_eq(train_small(1, &r, &res, NULL), OCB_ERUNTIME);
	cr_assert_eq(r.nloss, 6);
	cr_assert_str_eq(ocb_lasterr(), "stopped by the test");
}

Test(trainmlp, save_load_round_trip)
{
	struct ocb_mlp_spec sp;
	struct ocb_train_cfg c;
	struct ocb_train_result res;
	struct ocb_eval ev;
	void *st = NULL;
	char path[256];
	snprintf(path, sizeof path, "%s/rt.ckpt", dir);
	cr_assert_eq(train_small(2, NULL, &res, path), OCB_OK);
	small_cfg(99, &sp, &c);
	cr_assert_eq(ocb_trainer_mlp.create(&sp, &c, &st), OCB_OK);
	cr_assert_eq(ocb_trainer_mlp.evaluate(st, 1, &ev), OCB_OK);
	cr_assert(ev.accuracy < 0.5, "untrained: %g", ev.accuracy);
	cr_assert_eq(ocb_trainer_mlp.load(st, path), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_trainer_mlp.evaluate(st, 1, &ev), OCB_OK);
	cr_assert_eq(ev.accuracy, res.final_eval.accuracy);
	cr_assert_eq(ev.loss, res.final_eval.loss);
	ocb_trainer_mlp.free(st);

	/* a checkpoint of another shape is refused, naming the file */
	sp.model.dims[1] = 32;
	cr_assert_eq(ocb_trainer_mlp.create(&sp, &c, &st), OCB_OK);
	cr_assert_eq(ocb_trainer_mlp.load(st, path), OCB_EFORMAT);
	cr_assert(strstr(ocb_lasterr(), path), "%s", ocb_lasterr());
	ocb_trainer_mlp.free(st);
}

Test(trainmlp, bad_config_refused)
{
	struct ocb_mlp_spec sp = {.model = {.nlayers = 2, .dims = {784, 16, 10}},
				  .train = &tr, .test = &te, .max_train = 20};
	struct ocb_train_cfg c;
	struct ocb_train_result res;
	void *st = (void *)&sp;
	ocb_mlp_train_defaults(&c);
	c.batch = 32; /* > max_train */
	cr_assert_eq(ocb_trainer_mlp.create(&sp, &c, &st), OCB_EINVAL);
	cr_assert_null(st);
	cr_assert(strstr(ocb_lasterr(), "fewer than one batch"), "%s", ocb_lasterr());
	sp.max_train = 0;
	struct ocb_mlp_spec sp2 = {.model = {.nlayers = 2, .dims = {100, 16, 10}},
				   .train = &tr, .test = &te};
	cr_assert_eq(ocb_trainer_mlp.create(&sp2, &c, &st), OCB_EINVAL);
	cr_assert(strstr(ocb_lasterr(), "784-dim"), "%s", ocb_lasterr());
	cr_assert_eq(ocb_trainer_mlp.create(&sp, &c, &st), OCB_OK);
	c.epochs = 0; /* and no steps */
	cr_assert_eq(ocb_trainer_run(&ocb_trainer_mlp, st, &c, NULL, &res), OCB_EINVAL);
	ocb_trainer_mlp.free(st);
}

Test(trainmlp, evaluate_counts)
{
	/* an all-zero model predicts class 0 everywhere: accuracy = share of class 0 */
	struct ocb_mlp_cfg mc = {.nlayers = 1, .dims = {784, 10}};
	struct ocb_mlp m;
	cr_assert_eq(ocb_mlp_init(&m, &mc, 64), OCB_OK);
	double acc, loss;
	cr_assert_eq(ocb_mlp_evaluate(&m, &te, &acc, &loss), OCB_OK);
	int zeros = 0;
	for (int i = 0; i < te.n; i++)
		zeros += te.labels[i] == 0;
	cr_assert_float_eq(acc, (double)zeros / te.n, 1e-12);
	cr_assert_float_eq(loss, log(10.0), 1e-6);
	ocb_mlp_release(&m);
}

/* ---- the suite bench (collect/bench_train_mlp.c) end to end on the synthetic set ---- */

#include "../collect/bench.h"
#include "../collect/mllog_rules.h"
#include "../db/records.h"
#include "../workloads/checkpoint.h"

extern const struct ocb_bench ocb_bench_train_mlp;

struct msink {
	char key[512][32];
	long step[512];
	double v[512];
	int n;
};

static int sink_put(void *c, const char *workload, long step, const char *key, double value,
		    const char *unit)
{
	struct msink *s = c;
	cr_assert_str_eq(workload, "train_mlp");
	cr_assert(unit && *unit);
	if (s->n < 512) {
		snprintf(s->key[s->n], 32, "%s", key);
		s->step[s->n] = step;
		s->v[s->n++] = value;
	}
	return 0;
}

/* value of metric key at step, NAN if absent; *count = how many with that key */
static double find_metric(const struct msink *s, const char *key, long step, int *count)
{
	double v = NAN;
	int c = 0;
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->key[i], key) == 0) {
			c++;
			if (s->step[i] == step)
				v = s->v[i];
		}
	if (count)
		*count = c;
	return v;
}

Test(trainmlp, suite_bench_end_to_end)
{
	struct msink ms = {0};
	struct ocb_ceiling ceil = {.kind = "flops_sgemm", .threads = 1, .value = 50.0,
				   .unit = "GFLOP/s"};
	struct ocb_ctx ctx = {.threads = 1, .seed = 3, .data_dir = dir, .out_dir = dir,
			      .ceilings = &ceil, .nceilings = 1,
			      .metrics = {.ctx = &ms, .put = sink_put}};
	const struct ocb_bench *b = &ocb_bench_train_mlp;
	cr_assert_eq(b->kind, OCB_WORKLOAD);
	cr_assert_str_eq(ocb_bench_home(b), "train");

	cJSON *p = cJSON_Parse("{\"dims\":[784,32,10],\"epochs\":2,\"batch\":50,"
			       "\"max_train\":1000,\"lr\":0.002,\"warmup_epochs\":0.5}");
	struct ocb_work w;
	cr_assert_eq(b->work(p, &w), OCB_OK);
	cr_assert(w.flops > 0);
	cr_assert_str_eq(w.bound, "flops_sgemm");
	void *st = NULL;
	cr_assert_eq(b->setup(p, &ctx, &st), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(b->workload(st, &ctx), OCB_OK, "%s", ocb_lasterr());
	b->teardown(st);

	int n;
	find_metric(&ms, "train_loss", 0, &n);
	cr_assert(n >= 2, "loss curve: %d points", n);
	double a1 = find_metric(&ms, "test_accuracy", 1, NULL);
	double a2 = find_metric(&ms, "test_accuracy", 2, NULL);
	double af = find_metric(&ms, "test_accuracy", -1, NULL);
	cr_assert(a1 > 0.5 && a2 > 0.8, "accuracy per epoch %g %g", a1, a2);
	cr_assert_eq(af, a2);
	const char *must[] = {"train_time", "samples_per_s", "train_gflops", "sgemm_fraction",
			      "peak_rss", "weight_bytes", "grad_bytes", "optimizer_bytes",
			      "data_load_time", "test_loss"};
	for (size_t i = 0; i < sizeof must / sizeof must[0]; i++) {
		double v = find_metric(&ms, must[i], -1, NULL);
		cr_assert(isfinite(v) && v > 0, "metric %s = %g", must[i], v);
	}
	cr_assert_float_eq(find_metric(&ms, "sgemm_fraction", -1, NULL),
			   find_metric(&ms, "train_gflops", -1, NULL) / 50.0, 1e-12);
	cr_assert_eq(find_metric(&ms, "weight_bytes", -1, NULL), (784 * 32 + 32 + 32 * 10 + 10) * 4.0);
	cr_assert_eq(find_metric(&ms, "optimizer_bytes", -1, NULL),
		     2 * find_metric(&ms, "grad_bytes", -1, NULL));

	/* the MLLOG file: the MLPerf keys, in order, eval_accuracy with epoch_num */
	char path[256], line[2048];
	snprintf(path, sizeof path, "%s/mllog_train_mlp.txt", dir);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	char seq[1024] = "";
	int evals = 0;
	while (fgets(line, sizeof line, f)) {
		cr_assert(strncmp(line, ":::MLLOG {", 10) == 0, "%s", line);
		cJSON *j = cJSON_Parse(line + 9);
		cr_assert_not_null(j, "%s", line);
		const char *key = cJSON_GetObjectItem(j, "key")->valuestring;
		strncat(seq, key, sizeof seq - strlen(seq) - 2);
		strcat(seq, " ");
		if (strcmp(key, "eval_accuracy") == 0) {
			evals++;
			cJSON *md = cJSON_GetObjectItem(j, "metadata");
			cr_assert_eq(cJSON_GetObjectItem(md, "epoch_num")->valueint, evals);
		}
		if (strcmp(key, "run_stop") == 0) {
			cJSON *md = cJSON_GetObjectItem(j, "metadata");
			cr_assert_str_eq(cJSON_GetObjectItem(md, "status")->valuestring, "success");
		}
		cJSON_Delete(j);
	}
	fclose(f);
	cr_assert_eq(evals, 2);
	/* the file satisfies the MLPerf HPC 3.0 common rules (collect/mllog_rules.h) */
	struct ocb_mllog_verdict verdict;
	cr_assert_eq(ocb_mllog_check_file(path, &verdict), 0);
	cr_expect_gt(verdict.events, 10);
	cr_expect_eq(verdict.nviol, 0, "%d MLPerf HPC rule violations, first: %s", verdict.nviol,
		     verdict.viol[0]);
	const char *order[] = {"init_start", "staging_start", "staging_stop", "seed",
			       "global_batch_size", "opt_name", "opt_base_learning_rate",
			       "train_samples", "eval_samples", "init_stop", "run_start",
			       "epoch_start", "epoch_stop", "eval_start", "eval_stop",
			       "eval_accuracy", "run_stop"};
	const char *at = seq;
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		const char *q = strstr(at, order[i]);
		cr_assert_not_null(q, "MLLOG key %s missing or out of order in: %s", order[i], seq);
		at = q;
	}

	/* the checkpoint reloads and scores the same final accuracy */
	snprintf(path, sizeof path, "%s/mlp_fp32.ckpt", dir);
	struct ocb_mlp m;
	cr_assert_eq(ocb_mlp_load(path, 64, &m), OCB_OK, "%s", ocb_lasterr());
	double acc, loss;
	cr_assert_eq(ocb_mlp_evaluate(&m, &te, &acc, &loss), OCB_OK);
	cr_assert_eq(acc, af);
	ocb_mlp_release(&m);
	cJSON_Delete(p);
}

Test(trainmlp, suite_bench_bad_data)
{
	struct msink ms = {0};
	char sub[256];
	snprintf(sub, sizeof sub, "%s/empty", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
	struct ocb_ctx ctx = {.threads = 1, .seed = 3, .data_dir = sub, .out_dir = dir,
			      .metrics = {.ctx = &ms, .put = sink_put}};
	cJSON *p = cJSON_Parse("{\"epochs\":1}");
	void *st = NULL;
	cr_assert_eq(ocb_bench_train_mlp.setup(p, &ctx, &st), OCB_ENOENT);
	cr_assert_null(st);
	cr_assert(strstr(ocb_lasterr(), "train-images-idx3-ubyte.gz"), "%s", ocb_lasterr());
	/* a truncated labels file: OCB_EFORMAT naming it */
	uint8_t lab[5] = {0};
	uint32_t dl[1] = {2000};
	char lp[256];
	snprintf(lp, sizeof lp, "%s/train-labels-idx1-ubyte.gz", dir);
	cr_assert_eq(ocb_idx_write_gz(lp, OCB_IDX_MAGIC_LABELS, 1, dl, lab, 5), OCB_OK);
	ctx.data_dir = dir;
	cr_assert_eq(ocb_bench_train_mlp.setup(p, &ctx, &st), OCB_EFORMAT);
	cr_assert(strstr(ocb_lasterr(), "train-labels-idx1-ubyte.gz: truncated"), "%s",
		  ocb_lasterr());
	cJSON *bad = cJSON_Parse("{\"opt\":\"lamb\"}");
	cr_assert_eq(ocb_bench_train_mlp.setup(bad, &ctx, &st), OCB_EINVAL);
	cJSON_Delete(bad);
	cJSON_Delete(p);
	ms.n = 0;
}

Test(trainmlp, suite_cases)
{
	struct ocb_ctx q = {.quick = 1}, full = {.quick = 0};
	cJSON *a = ocb_bench_train_mlp.cases(&q), *b = ocb_bench_train_mlp.cases(&full);
	cr_assert_eq(cJSON_GetArraySize(a), 1);
	cr_assert_eq(ocb_json_num(cJSON_GetArrayItem(a, 0), "epochs", 0), 1);
	cr_assert_eq(ocb_json_num(cJSON_GetArrayItem(a, 0), "max_train", -1), 10000);
	cr_assert(ocb_json_num(cJSON_GetArrayItem(b, 0), "epochs", 0) > 1);
	cr_assert_eq(ocb_json_num(cJSON_GetArrayItem(b, 0), "max_train", -1), 0);
	cJSON_Delete(a);
	cJSON_Delete(b);
}
