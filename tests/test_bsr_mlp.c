/* Criterion suite `bsr_mlp`: the block-sparse MLP trainer (workloads/trainer_bsr_mlp.h)
 * on the synthetic 10-class set: without pruning it follows the dense trainer (same data
 * order and AdamW, products on other kernels: close, not bit-equal); pruned to 75% it
 * reaches the sparsity, keeps the pruned blocks zero in its checkpoint, still learns, and
 * its inference bytes shrink; regrowth revives blocks; same seed -> same losses;
 * bad configurations are refused. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../workloads/block_prune.h"
#include "../workloads/data_synth.h"
#include "../workloads/trainer_bsr_mlp.h"
#include "cli_util.h"

static char dir[128];
static struct ocb_idx_set tr, te;

static void setup(void)
{
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb-bsrmlp")));
	cr_assert_eq(ocb_synth_fmnist_write(dir, 2000, 400, 23), OCB_OK, "%s", ocb_lasterr());
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

TestSuite(bsr_mlp, .init = setup, .fini = teardown);

struct losses { double v[64]; int n; };

static int on_step(void *c, long step, double loss, double lr)
{
	struct losses *l = c;
	(void)step, (void)lr;
	if (l->n < 64)
		l->v[l->n++] = loss;
	return 0;
}

/* 784-64-32-10: both hidden layers tile into 16x16 blocks (784 = 49 * 16). */
static void spec_cfg(struct ocb_bsr_mlp_spec *sp, struct ocb_train_cfg *cfg, double target)
{
	memset(sp, 0, sizeof *sp);
	sp->mlp.model = (struct ocb_mlp_cfg){.nlayers = 3, .dims = {784, 64, 32, 10}};
	sp->mlp.train = &tr, sp->mlp.test = &te;
	ocb_mlp_train_defaults(cfg);
	cfg->epochs = 4, cfg->batch = 50, cfg->threads = 2, cfg->log_every = 1;
	cfg->eval_every = 0, cfg->warmup_epochs = 0.5f;
	long steps = 4L * (2000 / 50);
	ocb_bsr_mlp_default_prune(&sp->prune, steps, 16, target);
}

static double train(const struct ocb_trainer *t, const void *spec, struct ocb_train_cfg *cfg,
		    struct losses *ls, struct ocb_bsr_train_stats *st, const char *save)
{
	void *s = NULL;
	struct ocb_train_result res;
	struct ocb_train_cb cb = {.ctx = ls, .on_step = on_step};
	cr_assert_eq(t->create(spec, cfg, &s), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_trainer_run(t, s, cfg, &cb, &res), OCB_OK, "%s", ocb_lasterr());
	if (st)
		ocb_bsr_mlp_stats(s, st);
	if (save)
		cr_assert_eq(t->save(s, save), OCB_OK, "%s", ocb_lasterr());
	t->free(s);
	return res.final_eval.accuracy;
}

Test(bsr_mlp, unpruned_follows_the_dense_trainer)
{
	struct ocb_bsr_mlp_spec sp;
	struct ocb_train_cfg cfg;
	struct losses a = {0}, b = {0};
	struct ocb_bsr_train_stats st;
	spec_cfg(&sp, &cfg, 0.0);
	cfg.epochs = 1;
	double acc_d = train(&ocb_trainer_mlp, &sp.mlp, &cfg, &a, NULL, NULL);
	double acc_s = train(&ocb_trainer_bsr_mlp, &sp, &cfg, &b, &st, NULL);
	cr_assert_eq(st.sparse_layers, 2);
	cr_assert_eq(st.sparsity, 0.0);
	cr_assert_eq(a.n, b.n);
	for (int i = 0; i < a.n; i++)
		cr_assert(fabs(a.v[i] - b.v[i]) <= 1e-3 * (1 + fabs(a.v[i])), "step %d: %g vs %g", i,
			  a.v[i], b.v[i]);
	cr_assert(fabs(acc_d - acc_s) <= 0.02, "%g vs %g", acc_d, acc_s);
}

Test(bsr_mlp, pruned_to_target_learns_and_shrinks)
{
	struct ocb_bsr_mlp_spec sp;
	struct ocb_train_cfg cfg;
	struct losses a = {0}, b = {0};
	struct ocb_bsr_train_stats st;
	char path[256];
	snprintf(path, sizeof path, "%s/sparse.ckpt", dir);
	spec_cfg(&sp, &cfg, 0.75);
	double acc = train(&ocb_trainer_bsr_mlp, &sp, &cfg, &a, &st, path);
	/* (4*16 + 2*4 blocks) * 0.25 kept, rounded per layer */
	cr_assert_float_eq(st.sparsity, 0.75, 0.02);
	cr_assert_gt(st.events, 10);
	cr_assert_gt(acc, 0.5, "accuracy %g (chance 0.1)", acc);
	cr_assert_lt(st.bsr_bytes * 3, st.dense_bytes);
	cr_assert_lt(st.bytes_q4_0, st.bytes_q8_0);
	cr_assert_lt(st.bytes_q8_0, (double)st.bsr_bytes);
	/* the checkpoint holds zeros in the pruned blocks: loading it gives the same mask */
	void *s = NULL;
	struct ocb_bsr_train_stats st2;
	cr_assert_eq(ocb_trainer_bsr_mlp.create(&sp, &cfg, &s), OCB_OK);
	cr_assert_eq(ocb_trainer_bsr_mlp.load(s, path), OCB_OK, "%s", ocb_lasterr());
	ocb_bsr_mlp_stats(s, &st2);
	cr_assert_eq(st2.sparsity, st.sparsity);
	struct ocb_eval ev;
	cr_assert_eq(ocb_trainer_bsr_mlp.evaluate(s, 1, &ev), OCB_OK);
	cr_assert_float_eq(ev.accuracy, acc, 1e-9);
	ocb_trainer_bsr_mlp.free(s);
	/* same seed, same threads: the same losses (identical code path) */
	train(&ocb_trainer_bsr_mlp, &sp, &cfg, &b, NULL, NULL);
	cr_assert_eq(a.n, b.n);
	cr_assert_eq(memcmp(a.v, b.v, sizeof(double) * a.n), 0);
}

Test(bsr_mlp, regrowth_revives_blocks)
{
	struct ocb_bsr_mlp_spec sp;
	struct ocb_train_cfg cfg;
	struct losses a = {0};
	struct ocb_bsr_train_stats st;
	spec_cfg(&sp, &cfg, 0.5);
	sp.prune.regrow = 0.2;
	cfg.epochs = 2;
	sp.prune.t0 = 5, sp.prune.t1 = 60, sp.prune.every = 5;
	double acc = train(&ocb_trainer_bsr_mlp, &sp, &cfg, &a, &st, NULL);
	cr_assert_gt(st.revived, 0);
	cr_assert_float_eq(st.sparsity, 0.5, 0.02);
	cr_assert_gt(acc, 0.3, "accuracy %g", acc);
}

Test(bsr_mlp, bad_configurations_refused)
{
	struct ocb_bsr_mlp_spec sp;
	struct ocb_train_cfg cfg;
	void *s = (void *)1;
	spec_cfg(&sp, &cfg, 0.5);
	cfg.opt = OCB_OPTIM_SGD;
	cr_assert_eq(ocb_trainer_bsr_mlp.create(&sp, &cfg, &s), OCB_EINVAL);
	cr_assert_null(s);
	spec_cfg(&sp, &cfg, 1.0);
	cr_assert_eq(ocb_trainer_bsr_mlp.create(&sp, &cfg, &s), OCB_EINVAL);
	spec_cfg(&sp, &cfg, 0.5);
	sp.mlp.train = NULL;
	cr_assert_eq(ocb_trainer_bsr_mlp.create(&sp, &cfg, &s), OCB_EINVAL);
	ocb_trainer_bsr_mlp.free(NULL);
}

/* One ranking over both layers: the total reaches the target, the layers differ, and the
 * scope is recorded. */
Test(bsr_mlp, global_scope_reaches_the_total)
{
	struct ocb_bsr_mlp_spec sp;
	struct ocb_train_cfg cfg;
	struct losses a = {0};
	struct ocb_bsr_train_stats st;
	spec_cfg(&sp, &cfg, 0.8);
	sp.prune.global = 1;
	cfg.epochs = 2;
	double acc = train(&ocb_trainer_bsr_mlp, &sp, &cfg, &a, &st, NULL);
	cr_assert_eq(st.blocks, 4 * 49 + 2 * 4);
	/* the total to the target, less at most one block per layer (each keeps >= 1) */
	long want = llround(0.8 * st.blocks);
	cr_assert(st.zero_blocks <= want && st.zero_blocks >= want - 2, "%ld zero of %ld",
		  st.zero_blocks, st.blocks);
	cr_assert_gt(acc, 0.3, "accuracy %g", acc);
	cJSON *j = ocb_prune_cfg_to_json(&sp.prune);
	char *txt = cJSON_PrintUnformatted(j);
	cr_assert(strstr(txt, "\"scope\":\"global\""), "%s", txt);
	cJSON_free(txt);
	cJSON_Delete(j);
}
