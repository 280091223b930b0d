/* Tests of workloads/trainer_lm through the trainer interface: determinism (losses and
 * weights), that training learns, the unigram baseline, save/load, refusal of bad
 * configurations. Corpora are generated here (no packages needed). */
#include <cblas.h>
#include <criterion/criterion.h>

#include "../collect/registry.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collect/bench.h"
#include "../collect/mllog_rules.h"
#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_rng.h"
#include "../workloads/data_text.h"
#include "../workloads/trainer_lm.h"
#include "cli_util.h"

/* Text of words drawn from a small vocabulary: predictable within words, random across. */
static uint8_t *synth_text(size_t n, uint64_t seed)
{
	static const char *const words[] = {"the ", "cat ", "sat ", "on ", "a ", "mat ",
					    "and ", "dog ", "ran. "};
	uint8_t *t = malloc(n);
	struct ocb_rng r;
	ocb_rng_seed(&r, seed);
	size_t i = 0;
	while (i < n) {
		const char *w = words[ocb_rng_below(&r, 9)];
		for (size_t k = 0; w[k] && i < n; k++)
			t[i++] = (uint8_t)w[k];
	}
	return t;
}

static void tiny(struct lm_config *c)
{
	lm_config_default(c);
	c->d_model = 32, c->n_layers = 2, c->n_heads = 2, c->ctx = 32;
	c->ffn = lm_ffn_width(32);
}

struct trace {
	double loss[64];
	long n;
	double val[8];
	long nval;
	char events[32]; /* E/e eval start/stop */
	int nev;
};

static int rec_step(void *ctx, long step, double loss, double lr)
{
	struct trace *t = ctx;
	(void)lr;
	if (step < 64)
		t->loss[step] = loss;
	t->n = step + 1;
	return 0;
}

static int rec_event(void *ctx, enum ocb_train_event ev, long step, int epoch)
{
	struct trace *t = ctx;
	cr_assert(ev == OCB_TRAIN_EVAL_START || ev == OCB_TRAIN_EVAL_STOP, "no epochs");
	cr_assert_eq(epoch, 0);
	cr_assert(step > 0);
	if (t->nev < 31)
		t->events[t->nev++] = ev == OCB_TRAIN_EVAL_START ? 'E' : 'e';
	return 0;
}

static int rec_eval(void *ctx, const struct ocb_eval *ev)
{
	struct trace *t = ctx;
	cr_assert(isnan(ev->accuracy));
	cr_assert(fabs(ev->ppl - exp(ev->loss)) < 1e-9 * ev->ppl);
	if (t->nval < 8)
		t->val[t->nval++] = ev->loss;
	return 0;
}

enum { N = 20000 };

static void tiny_spec(struct lm_train_spec *sp, const uint8_t *text)
{
	struct lm_config mc;
	tiny(&mc);
	lm_train_spec_defaults(sp, &mc);
	sp->train = text, sp->ntrain = N * 9 / 10;
	sp->val = text + N * 9 / 10, sp->nval = N / 10;
	sp->eval_windows = 8;
}

/* Trains the tiny model on the synthetic text; saves it at `save` if not NULL. */
static void run(uint64_t seed, int threads, long steps, struct trace *tr,
		struct ocb_train_result *res, const char *save)
{
	uint8_t *text = synth_text(N, 5);
	struct lm_train_spec sp;
	struct ocb_train_cfg tc;
	void *st = NULL;
	tiny_spec(&sp, text);
	lm_train_defaults(&tc);
	tc.batch = 8, tc.steps = steps, tc.warmup_steps = 5, tc.seed = seed;
	tc.threads = threads, tc.lr = 5e-3f, tc.eval_every = 10;
	cr_assert(lm_trainer.create(&sp, &tc, &st) == OCB_OK, "%s", ocb_lasterr());
	memset(tr, 0, sizeof *tr);
	struct ocb_train_cb cb = {tr, rec_event, rec_step, rec_eval};
	int rc = ocb_trainer_run(&lm_trainer, st, &tc, &cb, res);
	cr_assert(rc == OCB_OK, "%s", ocb_lasterr());
	if (save)
		cr_assert_eq(lm_trainer.save(st, save), OCB_OK, "%s", ocb_lasterr());
	lm_trainer.free(st);
	free(text);
}

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

Test(lm_train, deterministic_for_seed_and_threads)
{
	struct trace a, b, c;
	struct ocb_train_result ra, rb, rc;
	char pa[128], pb[128];
	close(mkstemp(cli_tmpname(pa, sizeof pa, "ocb_lmdet_a")));
	close(mkstemp(cli_tmpname(pb, sizeof pb, "ocb_lmdet_b")));
	for (int threads = 1; threads <= 2; threads++) {
		run(11, threads, 12, &a, &ra, pa);
		run(11, threads, 12, &b, &rb, pb);
		cr_assert_eq(a.n, 12);
		cr_expect(memcmp(a.loss, b.loss, sizeof a.loss) == 0,
			  "losses differ between two runs with %d threads", threads);
		cr_expect(memcmp(a.val, b.val, sizeof a.val) == 0);
		cr_expect(ra.final_eval.loss == rb.final_eval.loss);
		size_t na, nb;
		unsigned char *fa = slurp(pa, &na), *fb = slurp(pb, &nb);
		cr_expect(na == nb && memcmp(fa, fb, na) == 0, "weights differ");
		free(fa), free(fb);
	}
	/* another seed draws other batches */
	run(12, 1, 12, &c, &rc, NULL);
	cr_expect(memcmp(a.loss, c.loss, sizeof a.loss) != 0);
	unlink(pa), unlink(pb);
}

Test(lm_train, learns_below_unigram)
{
	struct trace t;
	struct ocb_train_result r;
	run(1, 1, 60, &t, &r, NULL);
	uint8_t *text = synth_text(20000, 5);
	double uni = ocb_text_unigram_xent(text, 18000, text + 18000, 2000);
	free(text);
	/* 9 equally likely words: ~3.1 bits of choice per ~4 bytes, ~0.55 nats/byte at best;
	 * the unigram baseline is ~2.2 nats/byte */
	cr_expect(uni > 1.8 && uni < 2.6, "unigram %g", uni);
	cr_expect(r.first_loss > 5.0, "first loss %g (log 256 = 5.55)", r.first_loss);
	cr_expect(r.final_eval.loss < 0.75 * uni, "val loss %g not clearly below unigram %g",
		  r.final_eval.loss, uni);
	cr_expect(r.final_eval.scored == 1999);
	cr_expect(r.final_eval.final && r.final_eval.step == 60);
	cr_expect(fabs(r.final_eval.ppl - exp(r.final_eval.loss)) < 1e-9 * r.final_eval.ppl);
	cr_expect_eq(r.samples, 60L * 8 * 32);
	cr_expect(r.samples_per_s > 0.0 && r.step_time > 0.0);
	cr_expect(r.info.optimizer_bytes >= 2 * r.info.grad_bytes);
	cr_expect(r.info.weight_bytes == r.info.grad_bytes);
	cr_expect_eq(t.nval, 6); /* 5 periodic + the final */
	t.events[t.nev] = '\0';
	cr_expect_str_eq(t.events, "EeEeEeEeEeEe");
}

Test(lm_train, save_load_round_trip)
{
	char path[128];
	close(mkstemp(cli_tmpname(path, sizeof path, "ocb_lmrt")));
	struct trace t;
	struct ocb_train_result r;
	run(4, 1, 20, &t, &r, path);
	uint8_t *text = synth_text(N, 5);
	struct lm_train_spec sp;
	struct ocb_train_cfg tc;
	struct ocb_eval ev;
	void *st = NULL;
	tiny_spec(&sp, text);
	lm_train_defaults(&tc);
	tc.batch = 8, tc.seed = 77;
	cr_assert_eq(lm_trainer.create(&sp, &tc, &st), OCB_OK);
	cr_assert_eq(lm_trainer.load(st, path), OCB_OK, "%s", ocb_lasterr());
	/* the final protocol of the same code on the same weights and thread count: the run
	 * trained at 1 thread (ocb_trainer_run sets OpenBLAS to it), so evaluate at 1 too; at
	 * another count OpenBLAS's Haswell/Zen sgemm sums in another order */
	int old_threads = openblas_get_num_threads();
	openblas_set_num_threads(1);
	int erc = lm_trainer.evaluate(st, 1, &ev);
	openblas_set_num_threads(old_threads);
	cr_assert_eq(erc, OCB_OK);
	cr_expect_eq(ev.loss, r.final_eval.loss);
	cr_expect_eq(ev.scored, r.final_eval.scored);
	lm_trainer.free(st);
	sp.model.n_layers = 1; /* another shape: refused, naming the file */
	cr_assert_eq(lm_trainer.create(&sp, &tc, &st), OCB_OK);
	cr_expect_eq(lm_trainer.load(st, path), OCB_EFORMAT);
	cr_expect(strstr(ocb_lasterr(), path) != NULL, "%s", ocb_lasterr());
	lm_trainer.free(st);
	free(text);
	unlink(path);
}

static int stop_at_3(void *ctx, long step, double loss, double lr)
{
	(void)ctx, (void)loss, (void)lr;
	return step == 3 ? OCB_ERUNTIME : 0;
}

Test(lm_train, callback_stops_training)
{
	struct lm_config mc;
	struct lm_train_spec sp;
	struct ocb_train_cfg tc;
	struct ocb_train_result r;
	void *st = NULL;
	tiny(&mc);
	uint8_t *text = synth_text(2000, 1);
	lm_train_spec_defaults(&sp, &mc);
	sp.train = text, sp.ntrain = 2000;
	lm_train_defaults(&tc);
	tc.steps = 10, tc.batch = 2, tc.threads = 1;
	cr_assert_eq(lm_trainer.create(&sp, &tc, &st), OCB_OK);
	struct ocb_train_cb cb = {NULL, NULL, stop_at_3, NULL};
	cr_expect(ocb_trainer_run(&lm_trainer, st, &tc, &cb, &r) == OCB_ERUNTIME);
	cr_expect_eq(r.steps, 4);
	lm_trainer.free(st);
	free(text);
}

Test(lm_train, refuses_bad_config)
{
	struct lm_config mc;
	struct lm_train_spec sp;
	struct ocb_train_cfg tc;
	struct ocb_train_result r;
	void *st = NULL;
	tiny(&mc);
	uint8_t *text = synth_text(1000, 1);
	lm_train_spec_defaults(&sp, &mc);
	sp.train = text, sp.ntrain = 900;
	lm_train_defaults(&tc);
	tc.steps = 1;
	sp.seq = 33; /* > ctx */
	cr_expect(lm_trainer.create(&sp, &tc, &st) == OCB_EINVAL);
	sp.seq = 32;
	sp.ntrain = 20; /* shorter than a window */
	cr_expect(lm_trainer.create(&sp, &tc, &st) == OCB_EINVAL);
	sp.ntrain = 900;
	sp.val = text + 900, sp.nval = 100, sp.eval_stride = 40; /* > window */
	cr_expect(lm_trainer.create(&sp, &tc, &st) == OCB_EINVAL);
	cr_expect_null(st);
	sp.eval_stride = 32;
	cr_assert_eq(lm_trainer.create(&sp, &tc, &st), OCB_OK);
	tc.steps = 0, tc.epochs = 1; /* the LM has no epochs */
	cr_expect(ocb_trainer_run(&lm_trainer, st, &tc, NULL, &r) == OCB_EINVAL);
	cr_expect(strstr(ocb_lasterr(), "no epochs") != NULL, "%s", ocb_lasterr());
	lm_trainer.free(st);
	free(text);
}

/* ---- the suite bench train_lm, end to end on a generated corpus ---- */

extern const struct ocb_bench ocb_bench_train_lm;

struct lsink {
	char key[256][32];
	long step[256];
	double v[256];
	int n;
};

static int lsink_put(void *c, const char *workload, long step, const char *key, double value,
		     const char *unit)
{
	struct lsink *s = c;
	cr_assert_str_eq(workload, "train_lm");
	cr_assert(unit && *unit, "metric %s without a unit", key);
	if (s->n < 256) {
		snprintf(s->key[s->n], 32, "%s", key);
		s->step[s->n] = step;
		s->v[s->n++] = value;
	}
	return 0;
}

static double lfind(const struct lsink *s, const char *key, long step, int *count)
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

Test(lm_train, suite_bench_end_to_end)
{
	char dir[128], corpus[256], path[256], line[2048];
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb_lmb")));
	snprintf(corpus, sizeof corpus, "%s/corpus.txt", dir);
	/* a %-record corpus like fortunes: 200 records of generated words */
	uint8_t *words = synth_text(30000, 4);
	FILE *f = fopen(corpus, "wb");
	for (int r = 0; r < 200; r++) {
		fwrite(words + r * 150, 1, 140, f);
		fputs("\n%\n", f);
	}
	fclose(f);
	free(words);

	struct lsink ms = {0};
	struct ocb_ctx ctx = {.threads = 1, .seed = 5, .data_dir = corpus, .out_dir = dir,
			      .metrics = {.ctx = &ms, .put = lsink_put}};
	const struct ocb_bench *b = &ocb_bench_train_lm;
	cr_assert_eq(b->kind, OCB_WORKLOAD);
	cr_assert_str_eq(ocb_bench_home(b), "train");
	cJSON *p = cJSON_Parse("{\"d_model\":32,\"n_layers\":1,\"n_heads\":2,\"ctx\":32,"
			       "\"batch\":8,\"steps\":40,\"warmup\":4,\"lr\":0.005,"
			       "\"eval_every\":20,\"eval_windows\":4,\"eval_window\":32,"
			       "\"eval_stride\":16}");
	struct ocb_work w;
	cr_assert_eq(b->work(p, &w), OCB_OK);
	cr_assert(w.flops > 40 * 3 * lm_forward_flops(&(struct lm_config){.vocab = 256,
		  .d_model = 32, .n_layers = 1, .n_heads = 2, .ctx = 32, .ffn = 88}, 8, 32) * 0.99);
	void *st = NULL;
	cr_assert_eq(b->setup(p, &ctx, &st), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(b->workload(st, &ctx), OCB_OK, "%s", ocb_lasterr());
	b->teardown(st);

	int n;
	lfind(&ms, "train_loss", 0, &n);
	cr_expect_eq(n, 40 + 1, "loss curve: %d points (40 steps + the final mean)", n);
	double v20 = lfind(&ms, "val_loss", 20, NULL), vf = lfind(&ms, "val_loss", -1, NULL);
	double uni = lfind(&ms, "unigram_entropy", -1, NULL);
	cr_expect(isfinite(v20) && vf < uni, "val %g (periodic %g), unigram %g", vf, v20, uni);
	cr_expect_eq(lfind(&ms, "eval_window", -1, NULL), 32);
	cr_expect_eq(lfind(&ms, "eval_stride", -1, NULL), 16);
	cr_expect(fabs(lfind(&ms, "val_ppl", -1, NULL) - exp(vf)) < 1e-9 * exp(vf));
	const char *must[] = {"train_time", "tokens_per_s", "train_gflops", "peak_rss",
			      "weight_bytes", "grad_bytes", "optimizer_bytes", "activation_bytes",
			      "data_load_time", "eval_bytes", "train_tokens", "param_count"};
	for (size_t i = 0; i < sizeof must / sizeof must[0]; i++) {
		double v = lfind(&ms, must[i], -1, NULL);
		cr_expect(isfinite(v) && v > 0, "metric %s = %g", must[i], v);
	}
	cr_expect_eq(lfind(&ms, "train_tokens", -1, NULL), 40 * 8 * 32);
	cr_expect_eq(lfind(&ms, "optimizer_bytes", -1, NULL),
		     2 * lfind(&ms, "grad_bytes", -1, NULL));

	/* MLLOG: the keys in order, run_stop success, eval_loss events with step_num */
	snprintf(path, sizeof path, "%s/mllog_train_lm.txt", dir);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	char seq[2048] = "";
	int evals = 0;
	while (fgets(line, sizeof line, f)) {
		cr_assert(strncmp(line, ":::MLLOG {", 10) == 0, "%s", line);
		cJSON *j = cJSON_Parse(line + 9);
		cr_assert_not_null(j, "%s", line);
		const char *key = cJSON_GetObjectItem(j, "key")->valuestring;
		strncat(seq, key, sizeof seq - strlen(seq) - 2);
		strcat(seq, " ");
		cJSON *md = cJSON_GetObjectItem(j, "metadata");
		if (strcmp(key, "eval_loss") == 0)
			cr_expect_eq(cJSON_GetObjectItem(md, "step_num")->valueint, 20 * ++evals);
		if (strcmp(key, "run_stop") == 0)
			cr_expect_str_eq(cJSON_GetObjectItem(md, "status")->valuestring, "success");
		cJSON_Delete(j);
	}
	fclose(f);
	cr_expect_eq(evals, 2);
	/* the file satisfies the MLPerf HPC 3.0 common rules (collect/mllog_rules.h) */
	struct ocb_mllog_verdict verdict;
	cr_assert_eq(ocb_mllog_check_file(path, &verdict), 0);
	cr_expect_gt(verdict.events, 10);
	cr_expect_eq(verdict.nviol, 0, "%d MLPerf HPC rule violations, first: %s", verdict.nviol,
		     verdict.viol[0]);
	const char *order[] = {"submission_benchmark", "init_start", "staging_start",
			       "staging_stop", "seed", "global_batch_size", "opt_name",
			       "opt_base_learning_rate", "train_samples", "eval_samples",
			       "init_stop", "run_start", "eval_start", "eval_stop", "eval_loss",
			       "eval_start", "eval_stop", "eval_loss", "run_stop"};
	const char *at = seq;
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		const char *q = strstr(at, order[i]);
		cr_assert_not_null(q, "MLLOG key %s missing or out of order in: %s", order[i], seq);
		at = q + 1;
	}

	/* the checkpoint reloads and scores the same validation loss with the same protocol */
	snprintf(path, sizeof path, "%s/lm_fp32.ckpt", dir);
	struct lm_model *m = NULL;
	cr_assert_eq(lm_load(path, 0, &m), OCB_OK, "%s", ocb_lasterr());
	struct ocb_text t;
	cr_assert_eq(ocb_text_load(corpus, &t), OCB_OK);
	double vl;
	cr_assert_eq(lm_eval(m, t.val, t.nval, 32, 16, 16, 0, &vl, NULL, NULL), OCB_OK);
	/* Not bit-equal: the run evaluated with its own thread count, and OpenBLAS picks its
	 * sgemm kernel and split per CPU and thread count, so the fp32 sums are added in
	 * another order. Each logit is an fp32 dot of d_model terms (relative error below
	 * ~d u, u = 2^-24), the loss a double mean of their log-softmax: 1e-5 relative is
	 * ~170 u, far above what reordering gives and far below any real change of model. */
	cr_expect(fabs(vl - vf) <= 1e-5 * fabs(vf),
		  "reloaded model scores %.17g, the run stored %.17g", vl, vf);
	ocb_text_release(&t);
	lm_free(m);

	/* a missing corpus: one clear error naming it */
	cJSON *bad = cJSON_Parse("{\"corpus\":\"/nonexistent/text.txt\",\"steps\":1}");
	cr_expect_eq(b->setup(bad, &ctx, &st), OCB_ENOENT);
	cr_expect_null(st);
	cr_expect(strstr(ocb_lasterr(), "/nonexistent/text.txt") != NULL, "%s", ocb_lasterr());
	cJSON_Delete(bad);
	bad = cJSON_Parse("{\"eval_stride\":200}");
	cr_expect_eq(b->setup(bad, &ctx, &st), OCB_EINVAL);
	cJSON_Delete(bad);
	cJSON_Delete(p);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

Test(lm_train, suite_cases)
{
	struct ocb_ctx q = {.quick = 1}, full = {.quick = 0};
	cJSON *a = ocb_bench_train_lm.cases(&q), *b = ocb_bench_train_lm.cases(&full);
	cr_assert_eq(cJSON_GetArraySize(a), 1);
	cr_assert_eq(cJSON_GetArraySize(b), 1);
	const cJSON *qa = cJSON_GetArrayItem(a, 0), *fb = cJSON_GetArrayItem(b, 0);
	cr_expect(ocb_json_num(qa, "steps", 0) <= 50);
	cr_expect_eq(ocb_json_num(fb, "d_model", 0), 128);
	cr_expect_eq(ocb_json_num(fb, "n_layers", 0), 4);
	cr_expect_eq(ocb_json_num(fb, "ctx", 0), 128);
	struct ocb_work w;
	cr_expect_eq(ocb_bench_train_lm.work(qa, &w), OCB_OK);
	cr_expect_eq(ocb_bench_train_lm.work(fb, &w), OCB_OK);
	cJSON_Delete(a);
	cJSON_Delete(b);
}
