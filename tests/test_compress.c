/* compress: the progressive pipeline on a tiny trained LM and synthetic text. The pivot
 * is deployable (weights are exactly s (code - z) on the plan's grid); each refinement
 * stage lowers its own calibration objective; a stage that makes validation worse is
 * rejected and the previous weights come back bit for bit; checkpoints reload to the
 * same perplexity; bad plans are refused. Plans: JSON round trip, budgets, size alone. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../workloads/compress.h"
#include "../workloads/data_synth.h"
#include "../workloads/quant_rtn.h"
#include "../workloads/trainer_lm.h"
#include "cli_util.h"
#include "san.h"

static char dir[128], ckpt[256];
static unsigned char *buf;
static struct ocb_text text;

/* A d-32, 2-layer LM trained for 300 steps on synthetic text, saved to ckpt. */
static void setup(void)
{
	size_t len;
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb-compress")));
	snprintf(ckpt, sizeof ckpt, "%s/lm.ckpt", dir);
	cr_assert_eq(ocb_synth_text(3, 400, &buf, &len), OCB_OK);
	text.train = buf;
	text.ntrain = len * 4 / 5;
	text.val = buf + text.ntrain;
	text.nval = len - text.ntrain;
	struct lm_config mc;
	lm_config_default(&mc);
	mc.d_model = 32, mc.n_layers = 2, mc.n_heads = 2, mc.ctx = 32, mc.ffn = lm_ffn_width(32);
	struct lm_train_spec sp;
	lm_train_spec_defaults(&sp, &mc);
	sp.train = text.train, sp.ntrain = text.ntrain, sp.val = text.val, sp.nval = text.nval;
	sp.eval_windows = 8, sp.final_eval_windows = 8;
	struct ocb_train_cfg cfg;
	lm_train_defaults(&cfg);
	cfg.steps = 300, cfg.warmup_steps = 20, cfg.batch = 8, cfg.lr = 1e-2f, cfg.threads = 1;
	cfg.eval_every = 0;
	void *st = NULL;
	struct ocb_train_result res;
	cr_assert_eq(lm_trainer.create(&sp, &cfg, &st), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_trainer_run(&lm_trainer, st, &cfg, NULL, &res), OCB_OK, "%s",
		     ocb_lasterr());
	cr_assert_eq(lm_trainer.save(st, ckpt), OCB_OK);
	lm_trainer.free(st);
}

static void teardown(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	free(buf);
}

TestSuite(compress, .init = setup, .fini = teardown, .timeout = OCB_TIMEOUT(300));

static void uniform_plan(const struct lm_model *m, int bits, int group, struct compress_plan *p)
{
	cr_assert_eq(compress_plan_uniform(m, bits, group, p), OCB_OK);
}

static void opts(struct compress_opts *o)
{
	compress_opts_default(o);
	o->calib_windows = 16, o->window = 32, o->eval_stride = 16, o->eval_windows = 32;
	o->block_steps = 15, o->global_steps = 30, o->lr = 5e-3f;
}

Test(compress, pipeline_never_worse_than_pivot)
{
	struct lm_model *st = NULL, *te = NULL;
	struct compress_plan plan = {0};
	struct compress_stage s[CS_NSTAGES];
	struct compress_opts o;
	char prefix[256];
	cr_assert_eq(lm_load(ckpt, 1, &st), OCB_OK);
	cr_assert_eq(lm_load(ckpt, 0, &te), OCB_OK);
	uniform_plan(st, 2, 32, &plan);
	opts(&o);
	snprintf(prefix, sizeof prefix, "%s/c2", dir);
	o.out_prefix = prefix;
	cr_assert_eq(compress_run(st, te, &text, &plan, &o, s), OCB_OK, "%s", ocb_lasterr());
	for (int k = 0; k < CS_NSTAGES; k++)
		cr_log_info("%-6s ppl %.4f obj %.5g -> %.5g bpw %.3f %s", s[k].name, s[k].val_ppl,
			    s[k].calib_obj0, s[k].calib_obj, s[k].bpw,
			    s[k].accepted ? "accepted" : "rejected");
	cr_assert_gt(s[CS_PIVOT].val_ppl, s[CS_FP32].val_ppl); /* 2 bits costs quality */
	double bits = 0, nw = 0;
	for (int i = 0; i < lm_nlinears(st); i++) {
		const struct ocb_linear *l = lm_linear(st, i, NULL);
		struct quant_cfg q = {.bits = 2, .group = 32, .sym = 0};
		bits += (double)quant_cost_bits(&q, l->out, l->in);
		nw += (double)l->out * l->in;
	}
	cr_assert_float_eq(s[CS_PIVOT].bpw, bits / nw, 1e-12); /* >= 2 + 18 / 32: ragged ffn */
	cr_assert_eq((double)compress_plan_bits(st, &plan), bits);
	cr_assert_float_eq(s[CS_GLOBAL].bpw, bits / nw, 1e-12);
	cr_assert_lt(s[CS_PIVOT].bytes, s[CS_FP32].bytes);
	cr_assert_lt(s[CS_BLOCK].calib_obj, s[CS_BLOCK].calib_obj0);
	cr_assert_lt(s[CS_GLOBAL].calib_obj, s[CS_GLOBAL].calib_obj0);
	/* the model holds the best accepted stage, never worse than the pivot */
	double best = s[CS_PIVOT].val_ppl;
	for (int k = CS_BLOCK; k <= CS_GLOBAL; k++) {
		cr_assert_eq(s[k].accepted, s[k].val_ppl < best, "%s", s[k].name);
		if (s[k].accepted)
			best = s[k].val_ppl;
	}
	double ppl, loss;
	long ns;
	cr_assert_eq(lm_eval(st, text.val, text.nval, o.window, o.eval_stride, 16, o.eval_windows,
			     &loss, &ppl, &ns), OCB_OK);
	cr_assert_float_eq(ppl, best, best * 1e-6);
	/* the pivot checkpoint reloads to its perplexity */
	struct lm_model *pv = NULL;
	cr_assert_eq(lm_load(s[CS_PIVOT].ckpt, 0, &pv), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(lm_eval(pv, text.val, text.nval, o.window, o.eval_stride, 16, o.eval_windows,
			     &loss, &ppl, &ns), OCB_OK);
	cr_assert_float_eq(ppl, s[CS_PIVOT].val_ppl, s[CS_PIVOT].val_ppl * 1e-6);
	/* deployable: every row of the pivot's head takes at most 2^2 distinct values per
	 * group of 32 (codes 0..3 times one scale minus one zero) */
	const float *w = pv->head.w;
	for (int r = 0; r < pv->head.out; r++) {
		float seen[8];
		int ns2 = 0;
		for (int i = 0; i < 32; i++) {
			int j = 0;
			while (j < ns2 && seen[j] != w[(size_t)r * pv->head.in + i])
				j++;
			if (j == ns2) {
				cr_assert_lt(ns2, 4, "row %d has a 5th value", r);
				seen[ns2++] = w[(size_t)r * pv->head.in + i];
			}
		}
	}
	lm_free(pv);
	lm_free(st);
	lm_free(te);
	compress_plan_release(&plan);
}

Test(compress, bad_stage_is_rejected_and_undone)
{
	struct lm_model *st = NULL, *te = NULL;
	struct compress_plan plan = {0};
	struct compress_stage s[CS_NSTAGES];
	struct compress_opts o;
	cr_assert_eq(lm_load(ckpt, 1, &st), OCB_OK);
	cr_assert_eq(lm_load(ckpt, 0, &te), OCB_OK);
	uniform_plan(st, 3, 32, &plan);
	opts(&o);
	o.block_steps = 0;      /* skipped */
	o.global_steps = 20;
	o.lr = 3.0f;            /* scales x e^(+-3) per step: ruins the model */
	cr_assert_eq(compress_run(st, te, &text, &plan, &o, s), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(s[CS_BLOCK].ran, 0);
	cr_assert_eq(s[CS_GLOBAL].ran, 1);
	cr_log_info("ruined global stage: ppl %g (pivot %g)", s[CS_GLOBAL].val_ppl,
		    s[CS_PIVOT].val_ppl);
	cr_assert(!(s[CS_GLOBAL].val_ppl <= s[CS_PIVOT].val_ppl)); /* worse, or not finite */
	cr_assert_eq(s[CS_GLOBAL].accepted, 0);
	double ppl, loss;
	long ns;
	cr_assert_eq(lm_eval(st, text.val, text.nval, o.window, o.eval_stride, 16, o.eval_windows,
			     &loss, &ppl, &ns), OCB_OK);
	cr_assert_eq(ppl, s[CS_PIVOT].val_ppl); /* the pivot's weights, bit for bit */
	lm_free(st);
	lm_free(te);
	compress_plan_release(&plan);
}

Test(compress, bad_plans_refused)
{
	struct lm_model *st = NULL, *te = NULL;
	struct compress_plan plan = {0};
	struct compress_stage s[CS_NSTAGES];
	struct compress_opts o;
	cr_assert_eq(lm_load(ckpt, 1, &st), OCB_OK);
	cr_assert_eq(lm_load(ckpt, 0, &te), OCB_OK);
	opts(&o);
	uniform_plan(st, 3, 32, &plan);
	snprintf(plan.l[0].name, sizeof plan.l[0].name, "layers.9.wq");
	cr_assert_eq(compress_run(st, te, &text, &plan, &o, s), OCB_EINVAL);
	cr_assert(strstr(ocb_lasterr(), "layers.9.wq"), "%s", ocb_lasterr());
	compress_plan_release(&plan);
	uniform_plan(st, 3, 32, &plan);
	plan.n--;
	cr_assert_eq(compress_run(st, te, &text, &plan, &o, s), OCB_EINVAL);
	cr_assert(strstr(ocb_lasterr(), "no entry for linear 'head'"), "%s", ocb_lasterr());
	compress_plan_release(&plan);
	lm_free(st);
	lm_free(te);
}
