/* trainer_lm: the byte LM's ops of the trainer interface (see trainer_lm.h). */
#include "trainer_lm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"

struct lm_state {
	struct lm_model *m;
	struct lm_train_spec sp; /* corpora borrowed */
	struct ocb_optim opt;
	struct ocb_rng rng;      /* window sampling */
	uint8_t *in;             /* [batch][seq] inputs */
	int32_t *tgt;            /* [batch][seq] next bytes */
	int batch;
	float grad_clip;
};

void lm_train_spec_defaults(struct lm_train_spec *s, const struct lm_config *mc)
{
	memset(s, 0, sizeof *s);
	s->model = *mc;
	s->seq = mc->ctx;
	s->eval_window = mc->ctx;
	s->eval_stride = mc->ctx;
	s->eval_batch = 16;
	s->eval_windows = 64;
	s->final_eval_windows = 0;
}

void lm_train_defaults(struct ocb_train_cfg *c)
{
	ocb_train_cfg_defaults(c);
	c->batch = 16;
	c->steps = 700;
	c->warmup_steps = 70;
	c->lr = 2e-3f;
	c->min_lr = 1e-4f;
	c->weight_decay = 0.1f;
	c->beta1 = 0.9f;
	c->beta2 = 0.95f;
	c->grad_clip = 1.0f;
	c->log_every = 1;
	c->eval_every = 100;
}

static int check_spec(const struct lm_train_spec *s, const struct ocb_train_cfg *c)
{
	const struct lm_config *mc = &s->model;
	int rc = lm_config_check(mc);
	if (rc)
		return rc;
	if (c->batch < 1 || s->seq < 1 || s->seq > mc->ctx)
		return ocb_seterr(OCB_EINVAL, "lm train: batch %d, seq %d (ctx %d)", c->batch,
				  s->seq, mc->ctx);
	if (!s->train || s->ntrain < (size_t)s->seq + 2)
		return ocb_seterr(OCB_EINVAL, "lm train: train split of %zu bytes is shorter "
					      "than one window of %d", s->ntrain, s->seq + 1);
	if (s->nval > 0 && (!s->val || s->eval_window < 1 || s->eval_window > mc->ctx ||
			    s->eval_stride < 1 || s->eval_stride > s->eval_window ||
			    s->eval_batch < 1 || s->eval_windows < 0 || s->final_eval_windows < 0))
		return ocb_seterr(OCB_EINVAL, "lm train: eval window %d (ctx %d), stride %d, "
					      "batch %d", s->eval_window, mc->ctx, s->eval_stride,
				  s->eval_batch);
	return OCB_OK;
}

static void lm_state_free(void *st)
{
	struct lm_state *s = st;
	if (!s)
		return;
	lm_free(s->m);
	ocb_optim_release(&s->opt);
	free(s->in);
	free(s->tgt);
	free(s);
}

/* Model (weights from the seed, with gradients), its arena for one batch, optimizer with
 * the norm gains exempt from decay, batch buffers, sampling stream. */
static int lm_state_create(const void *spec, const struct ocb_train_cfg *cfg, void **out)
{
	const struct lm_train_spec *sp = spec;
	struct ocb_optim_cfg oc;
	struct lm_state *s = NULL;
	int rc;

	*out = NULL;
	if ((rc = check_spec(sp, cfg)))
		return rc;
	if (!(s = calloc(1, sizeof *s)))
		return ocb_seterr(OCB_ENOMEM, "lm train: out of memory");
	s->sp = *sp;
	s->batch = cfg->batch;
	s->grad_clip = cfg->grad_clip;
	if ((rc = lm_create(&sp->model, 1, cfg->seed, &s->m)))
		goto out;
	s->in = malloc((size_t)s->batch * sp->seq);
	s->tgt = malloc((size_t)s->batch * sp->seq * sizeof *s->tgt);
	if (!s->in || !s->tgt) {
		rc = ocb_seterr(OCB_ENOMEM, "lm train: out of memory for a batch");
		goto out;
	}
	if ((rc = lm_reserve(s->m, s->batch, sp->seq)))
		goto out;
	ocb_train_cfg_optim(cfg, &oc);
	if ((rc = ocb_optim_init(&s->opt, &oc, s->m->nparams)))
		goto out;
	/* Norm gains are not decayed (decay would pull them to 0, not to their init 1). */
	for (int i = 0; i < lm_ntensors(&s->m->cfg); i++) {
		struct lm_tensor t;
		lm_tensor(s->m, i, &t);
		if (t.rows == 1 && (rc = ocb_optim_no_decay(&s->opt, (size_t)(t.data - s->m->params),
							   (size_t)t.cols)))
			goto out;
	}
	ocb_rng_seed(&s->rng, cfg->seed);
	*out = s;
	s = NULL;
out:
	lm_state_free(s);
	return rc;
}

static void lm_state_info(void *st, struct ocb_train_info *in)
{
	struct lm_state *s = st;
	memset(in, 0, sizeof *in);
	in->steps_per_epoch = 0;
	in->samples_per_step = (long)s->batch * s->sp.seq;
	/* the products of a training step are 3x the forward's (lm_forward_flops) */
	in->step_flops = 3.0 * lm_forward_flops(&s->m->cfg, s->batch, s->sp.seq);
	in->can_evaluate = s->sp.nval > 0;
	in->nparams = s->m->nparams;
	in->weight_bytes = lm_weight_bytes(s->m);
	in->grad_bytes = s->m->nparams * sizeof(float);
	in->optimizer_bytes = ocb_optim_state_bytes(&s->opt);
	in->activation_bytes = s->m->arena_floats * sizeof(float);
}

static int lm_state_step(void *st, long step, float lr, double *loss)
{
	struct lm_state *s = st;
	struct lm_model *m = s->m;
	const uint8_t *train = s->sp.train;
	int B = s->batch, T = s->sp.seq, rc;
	(void)step;
	/* B random windows of T+1 bytes from the train split */
	for (int b = 0; b < B; b++) {
		size_t o = (size_t)ocb_rng_below(&s->rng, s->sp.ntrain - (size_t)T);
		memcpy(s->in + (size_t)b * T, train + o, (size_t)T);
		for (int t = 0; t < T; t++)
			s->tgt[(size_t)b * T + t] = train[o + (size_t)t + 1];
	}
	double lsum;
	long cnt;
	lm_zero_grad(m);
	rc = lm_forward(m, s->in, s->tgt, B, T, &lsum, &cnt);
	if (rc == OCB_OK)
		rc = lm_backward(m);
	m->in = NULL, m->tgt = NULL; /* they pointed into our batch buffers */
	if (rc)
		return rc;
	if (s->grad_clip > 0.0f)
		ocb_optim_clip_grad_norm(m->grads, m->nparams, s->grad_clip);
	ocb_optim_step(&s->opt, m->params, m->grads, lr);
	*loss = lsum / (double)cnt;
	return OCB_OK;
}

static int lm_state_eval(void *st, int final, struct ocb_eval *ev)
{
	struct lm_state *s = st;
	const struct lm_train_spec *p = &s->sp;
	ev->accuracy = NAN;
	return lm_eval(s->m, p->val, p->nval, p->eval_window, p->eval_stride, p->eval_batch,
		       final ? p->final_eval_windows : p->eval_windows, &ev->loss, &ev->ppl,
		       &ev->scored);
}

static int lm_state_save(void *st, const char *path)
{
	struct lm_state *s = st;
	return lm_save(s->m, path);
}

static int same_config(const struct lm_config *a, const struct lm_config *b)
{
	return a->vocab == b->vocab && a->d_model == b->d_model && a->n_layers == b->n_layers &&
	       a->n_heads == b->n_heads && a->ctx == b->ctx && a->ffn == b->ffn &&
	       a->rope_theta == b->rope_theta && a->norm_eps == b->norm_eps;
}

static int lm_state_load(void *st, const char *path)
{
	struct lm_state *s = st;
	struct lm_model *tmp = NULL;
	int rc = lm_load(path, 0, &tmp);
	if (rc)
		return rc;
	if (same_config(&tmp->cfg, &s->m->cfg))
		memcpy(s->m->params, tmp->params, s->m->nparams * sizeof(float));
	else
		rc = ocb_seterr(OCB_EFORMAT, "%s: an LM of d_model %d, %d layers, ctx %d; the "
					     "trainer's has %d, %d, %d (or other settings differ)",
				path, tmp->cfg.d_model, tmp->cfg.n_layers, tmp->cfg.ctx,
				s->m->cfg.d_model, s->m->cfg.n_layers, s->m->cfg.ctx);
	lm_free(tmp);
	return rc;
}

const struct ocb_trainer lm_trainer = {
	.name = "lm",
	.create = lm_state_create,
	.info = lm_state_info,
	.step = lm_state_step,
	.evaluate = lm_state_eval,
	.save = lm_state_save,
	.load = lm_state_load,
	.free = lm_state_free,
};
