#include "train_mlp.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_time.h"
#include "schedule.h"

void ocb_mlp_train_defaults(struct ocb_mlp_train_cfg *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->epochs = 15;
	cfg->batch = 256;
	cfg->opt = OCB_OPTIM_ADAMW;
	cfg->lr = 1e-3f;
	cfg->min_lr = 1e-5f;
	cfg->warmup_epochs = 1.0f;
	cfg->weight_decay = 1e-4f;
	cfg->momentum = 0.9f;
	cfg->seed = 1;
	cfg->threads = 0;
	cfg->log_every = 20;
	cfg->max_train = 0;
	cfg->eval_every_epoch = 1;
}

int ocb_mlp_evaluate(struct ocb_mlp *m, const struct ocb_idx_set *s, double *accuracy,
		     double *loss)
{
	int k = m->cfg.dims[m->cfg.nlayers], bs = m->max_batch, rc = OCB_OK;
	float *x = NULL;
	int *y = NULL;
	if (s->dim != m->cfg.dims[0] || s->nclasses > k)
		return ocb_seterr(OCB_EINVAL, "evaluate: data is %d-dim with %d classes, model "
					      "%d -> %d", s->dim, s->nclasses, m->cfg.dims[0], k);
	x = ocb_alloc((size_t)bs * s->dim * sizeof(float));
	y = malloc((size_t)bs * sizeof(int));
	if (!x || !y) {
		rc = ocb_seterr(OCB_ENOMEM, "evaluate: out of memory");
		goto out;
	}
	long correct = 0;
	double lsum = 0.0;
	for (int first = 0; first < s->n; first += bs) {
		int n = s->n - first < bs ? s->n - first : bs;
		ocb_idx_gather(s, NULL, first, n, x, y);
		const float *z = ocb_mlp_forward(m, x, n);
		lsum += ocb_softmax_xent(z, y, n, k, m->probs, NULL) * n;
		for (int i = 0; i < n; i++) {
			const float *zi = z + (size_t)i * k;
			int best = 0;
			for (int j = 1; j < k; j++)
				if (zi[j] > zi[best])
					best = j;
			correct += best == y[i];
		}
	}
	*accuracy = s->n ? (double)correct / s->n : NAN;
	*loss = s->n ? lsum / s->n : NAN;
out:
	ocb_free(x);
	free(y);
	return rc;
}

static int check_cfg(const struct ocb_mlp *m, const struct ocb_idx_set *train,
		     const struct ocb_idx_set *test, const struct ocb_mlp_train_cfg *c)
{
	if (c->epochs < 1 || c->batch < 1 || c->log_every < 1)
		return ocb_seterr(OCB_EINVAL, "train: epochs %d, batch %d, log_every %d must be >= 1",
				  c->epochs, c->batch, c->log_every);
	if (c->batch > m->max_batch)
		return ocb_seterr(OCB_EINVAL, "train: batch %d > the model's max batch %d", c->batch,
				  m->max_batch);
	if (!(c->lr > 0.0f) || c->min_lr < 0.0f || c->warmup_epochs < 0.0f)
		return ocb_seterr(OCB_EINVAL, "train: bad learning-rate schedule");
	if (train->dim != m->cfg.dims[0] || test->dim != m->cfg.dims[0])
		return ocb_seterr(OCB_EINVAL, "train: data is %d-dim, model input %d", train->dim,
				  m->cfg.dims[0]);
	if (train->nclasses > m->cfg.dims[m->cfg.nlayers])
		return ocb_seterr(OCB_EINVAL, "train: %d classes, model has %d outputs",
				  train->nclasses, m->cfg.dims[m->cfg.nlayers]);
	int ntr = c->max_train > 0 && c->max_train < train->n ? c->max_train : train->n;
	if (ntr < c->batch)
		return ocb_seterr(OCB_EINVAL, "train: %d examples, fewer than one batch of %d", ntr,
				  c->batch);
	return OCB_OK;
}

int ocb_mlp_train(struct ocb_mlp *m, const struct ocb_idx_set *train,
		  const struct ocb_idx_set *test, const struct ocb_mlp_train_cfg *cfg,
		  const struct ocb_train_cb *cb, struct ocb_mlp_train_result *res)
{
	struct ocb_optim opt = {0};
	struct ocb_optim_cfg ocfg;
	struct ocb_rng rng;
	float *x = NULL;
	int *y = NULL, *perm = NULL;
	int rc;
	double t0 = ocb_now_s();
	static const struct ocb_train_cb none = {0};

	memset(res, 0, sizeof *res);
	if (!cb)
		cb = &none;
	rc = check_cfg(m, train, test, cfg);
	if (rc)
		return rc;
	if (cfg->threads > 0)
		openblas_set_num_threads(cfg->threads);

	int ntr = cfg->max_train > 0 && cfg->max_train < train->n ? cfg->max_train : train->n;
	long per_epoch = ntr / cfg->batch;
	long total = per_epoch * cfg->epochs;
	struct ocb_schedule sched = {
		.base_lr = cfg->lr,
		.min_lr = cfg->min_lr,
		.warmup_steps = (long)(cfg->warmup_epochs * per_epoch + 0.5f),
		.total_steps = total,
	};

	ocb_optim_defaults(&ocfg, cfg->opt);
	ocfg.weight_decay = cfg->weight_decay;
	ocfg.momentum = cfg->momentum;
	rc = ocb_optim_init(&opt, &ocfg, m->nparams);
	if (rc)
		goto out;
	/* biases are not decayed (common practice; they do not scale with the input) */
	for (int i = 0; i < m->cfg.nlayers && rc == OCB_OK; i++)
		rc = ocb_optim_no_decay(&opt, m->b_off[i], (size_t)m->cfg.dims[i + 1]);
	if (rc)
		goto out;
	res->optimizer_bytes = ocb_optim_state_bytes(&opt);

	x = ocb_alloc((size_t)cfg->batch * train->dim * sizeof(float));
	y = malloc((size_t)cfg->batch * sizeof(int));
	perm = malloc((size_t)ntr * sizeof(int));
	if (!x || !y || !perm) {
		rc = ocb_seterr(OCB_ENOMEM, "train: out of memory");
		goto out;
	}
	for (int i = 0; i < ntr; i++)
		perm[i] = i;
	/* the shuffling stream is distinct from the weight-init stream of the same seed */
	ocb_rng_seed(&rng, cfg->seed ^ 0x5deece66dULL);

	const double step_flops = ocb_mlp_step_flops(m, cfg->batch);
	long step = 0;
	double lsum = 0.0;
	int lcount = 0;
	for (int ep = 1; ep <= cfg->epochs; ep++) {
		if (cb->on_event && (rc = cb->on_event(cb->ctx, OCB_TRAIN_EPOCH_START, ep)))
			goto out;
		/* Fisher-Yates over the (previous epoch's) permutation */
		for (int i = ntr - 1; i > 0; i--) {
			int j = (int)ocb_rng_below(&rng, (uint64_t)i + 1);
			int t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		double ep_loss = 0.0;
		for (long b = 0; b < per_epoch; b++, step++) {
			float lr = ocb_schedule_lr(&sched, step);
			double ts = ocb_now_s();
			ocb_idx_gather(train, perm + b * cfg->batch, 0, cfg->batch, x, y);
			double loss = ocb_mlp_grad(m, x, y, cfg->batch);
			ocb_optim_step(&opt, m->params, m->grads, lr);
			res->step_time += ocb_now_s() - ts;
			if (!isfinite(loss)) {
				rc = ocb_seterr(OCB_ERUNTIME, "train: loss is %g at step %ld (diverged)",
						loss, step);
				goto out;
			}
			ep_loss += loss;
			lsum += loss;
			lcount++;
			if (lcount == cfg->log_every || step + 1 == total) {
				if (cb->on_step && (rc = cb->on_step(cb->ctx, step, lsum / lcount, lr)))
					goto out;
				lsum = 0.0;
				lcount = 0;
			}
		}
		res->final_train_loss = ep_loss / per_epoch;
		if (cb->on_event && (rc = cb->on_event(cb->ctx, OCB_TRAIN_EPOCH_STOP, ep)))
			goto out;
		if (cfg->eval_every_epoch || ep == cfg->epochs) {
			if (cb->on_event && (rc = cb->on_event(cb->ctx, OCB_TRAIN_EVAL_START, ep)))
				goto out;
			rc = ocb_mlp_evaluate(m, test, &res->final_accuracy, &res->final_test_loss);
			if (rc)
				goto out;
			if (cb->on_event && (rc = cb->on_event(cb->ctx, OCB_TRAIN_EVAL_STOP, ep)))
				goto out;
			if (cb->on_eval &&
			    (rc = cb->on_eval(cb->ctx, ep, res->final_accuracy, res->final_test_loss)))
				goto out;
		}
	}
	res->steps = step;
	res->samples = step * cfg->batch;
	res->step_flops = step_flops * (double)step;
	if (res->step_time > 0) {
		res->samples_per_s = res->samples / res->step_time;
		res->gflops = res->step_flops / res->step_time / 1e9;
	}
out:
	res->train_time = ocb_now_s() - t0;
	ocb_optim_release(&opt);
	ocb_free(x);
	free(y);
	free(perm);
	return rc;
}
