/* Tests of reference/train_lm: determinism, that training learns, the unigram baseline,
 * refusal of bad configurations. Corpora are generated here (no packages needed). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../reference/data_text.h"
#include "../reference/train_lm.h"

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
};

static int rec_step(void *ctx, long step, double loss, float lr)
{
	struct trace *t = ctx;
	(void)lr;
	if (step < 64)
		t->loss[step] = loss;
	t->n = step + 1;
	return 0;
}

static int rec_eval(void *ctx, long step, double vl, double vp, long scored)
{
	struct trace *t = ctx;
	(void)step, (void)vp, (void)scored;
	if (t->nval < 8)
		t->val[t->nval++] = vl;
	return 0;
}

static void run(uint64_t seed, int threads, long steps, struct trace *tr,
		struct lm_train_result *res, float **params, size_t *np)
{
	enum { N = 20000 };
	uint8_t *text = synth_text(N, 5);
	struct lm_config mc;
	tiny(&mc);
	struct lm_model *m = NULL;
	cr_assert(lm_create(&mc, 1, 3, &m) == OCB_OK, "%s", ocb_lasterr());
	struct lm_train_cfg tc;
	lm_train_defaults(&tc, &mc);
	tc.batch = 8, tc.steps = steps, tc.warmup = 5, tc.seed = seed, tc.threads = threads;
	tc.lr = 5e-3f, tc.eval_every = 10, tc.eval_windows = 8;
	memset(tr, 0, sizeof *tr);
	struct lm_train_cb cb = {tr, rec_step, NULL, rec_eval};
	int rc = lm_train(m, &tc, text, N * 9 / 10, text + N * 9 / 10, N / 10, &cb, res);
	cr_assert(rc == OCB_OK, "%s", ocb_lasterr());
	if (params) {
		*np = m->nparams;
		*params = malloc(m->nparams * sizeof(float));
		memcpy(*params, m->params, m->nparams * sizeof(float));
	}
	lm_free(m);
	free(text);
}

Test(lm_train, deterministic_for_seed_and_threads)
{
	struct trace a, b, c;
	struct lm_train_result ra, rb, rc;
	float *pa, *pb;
	size_t na, nb;
	for (int threads = 1; threads <= 2; threads++) {
		run(11, threads, 12, &a, &ra, &pa, &na);
		run(11, threads, 12, &b, &rb, &pb, &nb);
		cr_assert_eq(a.n, 12);
		cr_expect(memcmp(a.loss, b.loss, sizeof a.loss) == 0,
			  "losses differ between two runs with %d threads", threads);
		cr_expect(memcmp(a.val, b.val, sizeof a.val) == 0);
		cr_expect(ra.val_loss == rb.val_loss);
		cr_assert_eq(na, nb);
		cr_expect(memcmp(pa, pb, na * sizeof(float)) == 0, "weights differ");
		free(pa), free(pb);
	}
	/* another seed draws other batches */
	run(12, 1, 12, &c, &rc, NULL, NULL);
	cr_expect(memcmp(a.loss, c.loss, sizeof a.loss) != 0);
}

Test(lm_train, learns_below_unigram)
{
	struct trace t;
	struct lm_train_result r;
	run(1, 1, 60, &t, &r, NULL, NULL);
	uint8_t *text = synth_text(20000, 5);
	double uni = ocb_text_unigram_xent(text, 18000, text + 18000, 2000);
	free(text);
	/* 9 equally likely words: ~3.1 bits of choice per ~4 bytes, ~0.55 nats/byte at best;
	 * the unigram baseline is ~2.2 nats/byte */
	cr_expect(uni > 1.8 && uni < 2.6, "unigram %g", uni);
	cr_expect(r.first_loss > 5.0, "first loss %g (log 256 = 5.55)", r.first_loss);
	cr_expect(r.val_loss < 0.75 * uni, "val loss %g not clearly below unigram %g",
		  r.val_loss, uni);
	cr_expect(r.val_scored == 1999);
	cr_expect(fabs(r.val_ppl - exp(r.val_loss)) < 1e-9 * r.val_ppl);
	cr_expect_eq(r.tokens, 60L * 8 * 32);
	cr_expect(r.tokens_per_s > 0.0 && r.train_time > 0.0);
	cr_expect(r.optimizer_bytes >= 2 * r.grad_bytes);
	cr_expect(r.weight_bytes == r.grad_bytes);
	cr_expect_eq(t.nval, 6); /* 5 periodic + the final */
}

static int stop_at_3(void *ctx, long step, double loss, float lr)
{
	(void)ctx, (void)loss, (void)lr;
	return step == 3 ? OCB_ERUNTIME : 0;
}

Test(lm_train, callback_stops_training)
{
	struct lm_config mc;
	tiny(&mc);
	struct lm_model *m = NULL;
	cr_assert(lm_create(&mc, 1, 1, &m) == OCB_OK);
	uint8_t *text = synth_text(2000, 1);
	struct lm_train_cfg tc;
	struct lm_train_result r;
	lm_train_defaults(&tc, &mc);
	tc.steps = 10, tc.batch = 2, tc.threads = 1;
	struct lm_train_cb cb = {NULL, stop_at_3, NULL, NULL};
	cr_expect(lm_train(m, &tc, text, 2000, NULL, 0, &cb, &r) == OCB_ERUNTIME);
	cr_expect_null(m->in, "no dangling batch pointer left in the model");
	free(text);
	lm_free(m);
}

Test(lm_train, refuses_bad_config)
{
	struct lm_config mc;
	tiny(&mc);
	struct lm_model *m = NULL, *inf = NULL;
	cr_assert(lm_create(&mc, 1, 1, &m) == OCB_OK);
	cr_assert(lm_create(&mc, 0, 1, &inf) == OCB_OK);
	uint8_t *text = synth_text(1000, 1);
	struct lm_train_cfg tc;
	struct lm_train_result r;
	lm_train_defaults(&tc, &mc);
	tc.steps = 1;
	cr_expect(lm_train(inf, &tc, text, 900, NULL, 0, NULL, &r) == OCB_EINVAL);
	tc.seq = 33;
	cr_expect(lm_train(m, &tc, text, 900, NULL, 0, NULL, &r) == OCB_EINVAL);
	tc.seq = 32;
	cr_expect(lm_train(m, &tc, text, 20, NULL, 0, NULL, &r) == OCB_EINVAL);
	tc.eval_stride = 40;
	cr_expect(lm_train(m, &tc, text, 900, text + 900, 100, NULL, &r) == OCB_EINVAL);
	free(text);
	lm_free(m);
	lm_free(inf);
}
