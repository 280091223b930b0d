/* train_lm: training loop and evaluation of the byte LM (see train_lm.h). */
#include "train_lm.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_time.h"
#include "optim.h"
#include "schedule.h"

void lm_train_defaults(struct lm_train_cfg *c, const struct lm_config *mc)
{
	memset(c, 0, sizeof *c);
	c->batch = 16;
	c->seq = mc->ctx;
	c->steps = 700;
	c->warmup = 70;
	c->lr = 2e-3f;
	c->min_lr = 1e-4f;
	c->weight_decay = 0.1f;
	c->beta1 = 0.9f;
	c->beta2 = 0.95f;
	c->grad_clip = 1.0f;
	c->seed = 1;
	c->threads = 0;
	c->eval_every = 100;
	c->eval_windows = 64;
	c->eval_window = mc->ctx;
	c->eval_stride = mc->ctx;
	c->eval_batch = 16;
}

static int check_cfg(const struct lm_model *m, const struct lm_train_cfg *c, size_t ntrain,
		     size_t nval)
{
	if (!m->grads)
		return ocb_seterr(OCB_EINVAL, "lm train: the model has no gradient block");
	if (c->batch < 1 || c->seq < 1 || c->seq > m->cfg.ctx || c->steps < 1 ||
	    c->warmup < 0 || !(c->lr > 0.0f) || !(c->min_lr >= 0.0f))
		return ocb_seterr(OCB_EINVAL,
				  "lm train: batch %d, seq %d (ctx %d), steps %ld, warmup %ld, "
				  "lr %g, min_lr %g",
				  c->batch, c->seq, m->cfg.ctx, c->steps, c->warmup, c->lr,
				  c->min_lr);
	if (ntrain < (size_t)c->seq + 2)
		return ocb_seterr(OCB_EINVAL, "lm train: train split of %zu bytes is shorter "
					      "than one window of %d", ntrain, c->seq + 1);
	if (nval > 0 && (c->eval_window < 1 || c->eval_window > m->cfg.ctx ||
			 c->eval_stride < 1 || c->eval_stride > c->eval_window ||
			 c->eval_batch < 1))
		return ocb_seterr(OCB_EINVAL, "lm train: eval window %d (ctx %d), stride %d, "
					      "batch %d", c->eval_window, m->cfg.ctx,
				  c->eval_stride, c->eval_batch);
	return OCB_OK;
}

int lm_train(struct lm_model *m, const struct lm_train_cfg *cfg, const uint8_t *train,
	     size_t ntrain, const uint8_t *val, size_t nval, const struct lm_train_cb *cb,
	     struct lm_train_result *res)
{
	int rc = OCB_OK;
	uint8_t *in = NULL;
	int32_t *tgt = NULL;
	double *recent = NULL;
	struct ocb_optim opt;
	memset(&opt, 0, sizeof opt);
	memset(res, 0, sizeof *res);
	int old_blas = openblas_get_num_threads();
	if ((rc = check_cfg(m, cfg, ntrain, nval)) != OCB_OK)
		return rc;
	if (cfg->threads > 0) {
		openblas_set_num_threads(cfg->threads);
	}
	int B = cfg->batch, T = cfg->seq;
	in = malloc((size_t)B * T);
	tgt = malloc((size_t)B * T * sizeof *tgt);
	recent = calloc(50, sizeof *recent);
	if (!in || !tgt || !recent) {
		rc = ocb_seterr(OCB_ENOMEM, "lm train: out of memory for a batch");
		goto out;
	}
	if ((rc = lm_reserve(m, B, T)) != OCB_OK)
		goto out;

	struct ocb_optim_cfg oc;
	ocb_optim_defaults(&oc, OCB_OPTIM_ADAMW);
	oc.beta1 = cfg->beta1, oc.beta2 = cfg->beta2, oc.weight_decay = cfg->weight_decay;
	if ((rc = ocb_optim_init(&opt, &oc, m->nparams)) != OCB_OK)
		goto out;
	/* Norm gains are not decayed (decay would pull them to 0, not to their init 1). */
	for (int i = 0; i < lm_ntensors(&m->cfg); i++) {
		struct lm_tensor t;
		lm_tensor(m, i, &t);
		if (t.rows == 1 &&
		    (rc = ocb_optim_no_decay(&opt, (size_t)(t.data - m->params), (size_t)t.cols)))
			goto out;
	}
	struct ocb_schedule sch = {.base_lr = cfg->lr, .min_lr = cfg->min_lr,
				   .warmup_steps = cfg->warmup, .total_steps = cfg->steps};
	struct ocb_rng rng;
	ocb_rng_seed(&rng, cfg->seed);

	double t_train = 0.0, t_eval = 0.0;
	long nrecent = 0;
	for (long step = 0; step < cfg->steps; step++) {
		double t0 = ocb_now_s();
		/* B random windows of T+1 bytes from the train split */
		for (int b = 0; b < B; b++) {
			size_t s = (size_t)ocb_rng_below(&rng, ntrain - (size_t)T);
			memcpy(in + (size_t)b * T, train + s, (size_t)T);
			for (int t = 0; t < T; t++)
				tgt[(size_t)b * T + t] = train[s + (size_t)t + 1];
		}
		double lsum;
		long cnt;
		lm_zero_grad(m);
		if ((rc = lm_forward(m, in, tgt, B, T, &lsum, &cnt)) != OCB_OK ||
		    (rc = lm_backward(m)) != OCB_OK)
			goto out;
		if (cfg->grad_clip > 0.0f)
			ocb_optim_clip_grad_norm(m->grads, m->nparams, cfg->grad_clip);
		float lr = ocb_schedule_lr(&sch, step);
		ocb_optim_step(&opt, m->params, m->grads, lr);
		t_train += ocb_now_s() - t0;

		double loss = lsum / (double)cnt;
		if (!isfinite(loss)) {
			rc = ocb_seterr(OCB_ERUNTIME, "lm train: loss diverged (%g) at step %ld",
					loss, step);
			goto out;
		}
		if (step == 0)
			res->first_loss = loss;
		recent[step % 50] = loss;
		nrecent = step + 1 < 50 ? step + 1 : 50;
		res->steps = step + 1;
		res->tokens += (long)B * T;
		if (cb && cb->on_step && (rc = cb->on_step(cb->ctx, step, loss, lr)) != 0)
			goto out;
		if (nval > 0 && cfg->eval_every > 0 && (step + 1) % cfg->eval_every == 0 &&
		    step + 1 < cfg->steps) {
			double vl, vp, te = ocb_now_s();
			long sc;
			if (cb && cb->on_eval_start && (rc = cb->on_eval_start(cb->ctx, step + 1)))
				goto out;
			if ((rc = lm_eval(m, val, nval, cfg->eval_window, cfg->eval_stride,
					  cfg->eval_batch, cfg->eval_windows, &vl, &vp, &sc)))
				goto out;
			t_eval += ocb_now_s() - te;
			if (cb && cb->on_eval && (rc = cb->on_eval(cb->ctx, step + 1, vl, vp, sc)))
				goto out;
		}
	}
	double s = 0.0;
	for (long i = 0; i < nrecent; i++)
		s += recent[i];
	res->final_train_loss = s / (double)nrecent;
	res->val_loss = res->val_ppl = NAN;
	if (nval > 0) {
		if (cb && cb->on_eval_start && (rc = cb->on_eval_start(cb->ctx, cfg->steps)))
			goto out;
		double te = ocb_now_s();
		if ((rc = lm_eval(m, val, nval, cfg->eval_window, cfg->eval_stride,
				  cfg->eval_batch, cfg->final_eval_windows, &res->val_loss, &res->val_ppl,
				  &res->val_scored)))
			goto out;
		t_eval += ocb_now_s() - te;
		if (cb && cb->on_eval &&
		    (rc = cb->on_eval(cb->ctx, cfg->steps, res->val_loss, res->val_ppl,
				      res->val_scored)))
			goto out;
	}
	res->train_time = t_train;
	res->eval_time = t_eval;
	res->tokens_per_s = t_train > 0.0 ? (double)res->tokens / t_train : 0.0;
	res->weight_bytes = lm_weight_bytes(m);
	res->grad_bytes = m->nparams * sizeof(float);
	res->optimizer_bytes = ocb_optim_state_bytes(&opt);
	res->activation_bytes = m->arena_floats * sizeof(float);
out:
	m->in = NULL, m->tgt = NULL; /* they pointed into our batch buffers */
	ocb_optim_release(&opt);
	free(in);
	free(tgt);
	free(recent);
	if (cfg->threads > 0) {
		openblas_set_num_threads(old_blas);
	}
	return rc;
}
