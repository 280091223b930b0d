/* Criterion suite `bsr_lm`: the block-sparse LM trainer (workloads/trainer_bsr_lm.h) on a
 * tiny LM and synthetic text: unpruned it follows the dense LM trainer (same windows,
 * other kernels: close, not bit-equal); pruned to 75% its SwiGLU weights reach the
 * sparsity, training still lowers the loss, the checkpoint keeps the mask; bad block
 * sizes are refused. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../workloads/trainer_bsr_lm.h"
#include "cli_util.h"

static uint8_t *text(size_t n, uint64_t seed)
{
	static const char *const words[] = {"the ", "cat ", "sat ", "on ", "a ", "mat ", "dog "};
	uint8_t *t = malloc(n);
	struct ocb_rng r;
	ocb_rng_seed(&r, seed);
	for (size_t i = 0; i < n;) {
		const char *w = words[ocb_rng_below(&r, 7)];
		for (size_t k = 0; w[k] && i < n; k++)
			t[i++] = (uint8_t)w[k];
	}
	return t;
}

struct trace { double loss[128]; int n; };

static int rec(void *c, long step, double loss, double lr)
{
	struct trace *t = c;
	(void)lr;
	if (step < 128)
		t->loss[step] = loss, t->n = (int)step + 1;
	return 0;
}

/* d 32, 1 layer, ffn 64: gate/up 64x32, down 32x64 tile into 8x8 blocks. */
static void setup_spec(struct ocb_bsr_lm_spec *sp, struct ocb_train_cfg *cfg, uint8_t *tr,
		       uint8_t *va, double target)
{
	struct lm_config mc;
	lm_config_default(&mc);
	mc.d_model = 32, mc.n_layers = 1, mc.n_heads = 2, mc.ctx = 32, mc.ffn = 64;
	memset(sp, 0, sizeof *sp);
	lm_train_spec_defaults(&sp->lm, &mc);
	sp->lm.train = tr, sp->lm.ntrain = 20000, sp->lm.val = va, sp->lm.nval = 4000;
	sp->lm.eval_windows = 8, sp->lm.final_eval_windows = 16;
	lm_train_defaults(cfg);
	cfg->steps = 80, cfg->warmup_steps = 8, cfg->batch = 8, cfg->threads = 2;
	cfg->eval_every = 0;
	sp->prune = (struct ocb_prune_cfg){.block = 8, .target = target, .t0 = 10, .t1 = 50,
					   .every = 5};
}

static double run(const struct ocb_trainer *t, const void *spec, struct ocb_train_cfg *cfg,
		  struct trace *tr, struct ocb_bsr_train_stats *st, const char *save)
{
	void *s = NULL;
	struct ocb_train_result res;
	struct ocb_train_cb cb = {.ctx = tr, .on_step = rec};
	cr_assert_eq(t->create(spec, cfg, &s), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_trainer_run(t, s, cfg, &cb, &res), OCB_OK, "%s", ocb_lasterr());
	if (st)
		ocb_bsr_lm_stats(s, st);
	if (save)
		cr_assert_eq(t->save(s, save), OCB_OK, "%s", ocb_lasterr());
	t->free(s);
	return res.final_eval.ppl;
}

Test(bsr_lm, unpruned_follows_the_dense_trainer)
{
	uint8_t *tr = text(20000, 1), *va = text(4000, 2);
	struct ocb_bsr_lm_spec sp;
	struct ocb_train_cfg cfg;
	struct trace a = {0}, b = {0};
	struct ocb_bsr_train_stats st;
	setup_spec(&sp, &cfg, tr, va, 0.0);
	cfg.steps = 20;
	double pd = run(&lm_trainer, &sp.lm, &cfg, &a, NULL, NULL);
	double ps = run(&ocb_trainer_bsr_lm, &sp, &cfg, &b, &st, NULL);
	cr_assert_eq(st.sparse_layers, 3);
	cr_assert_eq(st.sparsity, 0.0);
	cr_assert_eq(a.n, b.n);
	for (int i = 0; i < a.n; i++)
		cr_assert(fabs(a.loss[i] - b.loss[i]) <= 1e-3 * (1 + a.loss[i]), "step %d: %g vs %g",
			  i, a.loss[i], b.loss[i]);
	cr_assert(fabs(pd - ps) <= 0.01 * pd, "ppl %g vs %g", pd, ps);
	free(tr), free(va);
}

Test(bsr_lm, pruned_swiglu_learns_and_keeps_its_mask)
{
	uint8_t *tr = text(20000, 1), *va = text(4000, 2);
	struct ocb_bsr_lm_spec sp;
	struct ocb_train_cfg cfg;
	struct trace a = {0};
	struct ocb_bsr_train_stats st, st2;
	char path[128];
	int fd = mkstemp(cli_tmpname(path, sizeof path, "ocb-bsrlm"));
	cr_assert_geq(fd, 0);
	close(fd);
	setup_spec(&sp, &cfg, tr, va, 0.75);
	double ppl = run(&ocb_trainer_bsr_lm, &sp, &cfg, &a, &st, path);
	cr_assert_float_eq(st.sparsity, 0.75, 0.01);
	cr_assert_eq(st.events, 9); /* 10, 15, ..., 50 */
	cr_assert_lt(a.loss[a.n - 1], a.loss[0] - 0.5, "loss %g -> %g", a.loss[0], a.loss[a.n - 1]);
	cr_assert(isfinite(ppl) && ppl < 256.0, "ppl %g", ppl);
	void *s = NULL;
	cr_assert_eq(ocb_trainer_bsr_lm.create(&sp, &cfg, &s), OCB_OK);
	cr_assert_eq(ocb_trainer_bsr_lm.load(s, path), OCB_OK, "%s", ocb_lasterr());
	ocb_bsr_lm_stats(s, &st2);
	cr_assert_eq(st2.zero_blocks, st.zero_blocks);
	ocb_trainer_bsr_lm.free(s);
	unlink(path);
	free(tr), free(va);
}

Test(bsr_lm, block_that_does_not_tile_is_refused)
{
	uint8_t *tr = text(20000, 1), *va = text(4000, 2);
	struct ocb_bsr_lm_spec sp;
	struct ocb_train_cfg cfg;
	void *s = NULL;
	setup_spec(&sp, &cfg, tr, va, 0.5);
	sp.prune.block = 64; /* d_model 32 */
	cr_assert_eq(ocb_trainer_bsr_lm.create(&sp, &cfg, &s), OCB_EINVAL);
	cr_assert_null(s);
	free(tr), free(va);
}
