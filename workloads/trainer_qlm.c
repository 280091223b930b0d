/* trainer_qlm: the byte LM under fp32 / STE / DQT training (see trainer_ternary.h).
 * Window sampling, evaluation and checkpoints follow trainer_lm.c (same seed -> same
 * batches). Quantized: the 7 linears of every block; the embedding, norms and the head
 * stay fp32. */
#include "trainer_ternary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"

struct qlm_state {
	struct lm_model *m;
	struct qt_set set;
	struct lm_train_spec sp;
	struct ocb_optim opt; /* fp32 / ste */
	struct ocb_rng rng;
	uint8_t *in;
	int32_t *tgt;
	int batch;
	float grad_clip;
};

struct qt_set *qlm_set(void *st) { return &((struct qlm_state *)st)->set; }
struct lm_model *qlm_model(void *st) { return ((struct qlm_state *)st)->m; }

static void qlm_free(void *st)
{
	struct qlm_state *s = st;
	if (!s)
		return;
	qt_set_release(&s->set);
	lm_free(s->m);
	ocb_optim_release(&s->opt);
	free(s->in);
	free(s->tgt);
	free(s);
}

/* 1 if tensor data `p` is the weight of one of the block linears (quantized ones). */
static int is_block_linear(struct lm_model *m, const float *p)
{
	for (int i = 0; i < m->cfg.n_layers * LM_LIN_PER_LAYER; i++)
		if (lm_linear(m, i, NULL)->w == p)
			return 1;
	return 0;
}

static int setup(struct qlm_state *s, const struct qlm_spec *sp, const struct ocb_train_cfg *cfg)
{
	struct ocb_optim_cfg oc;
	struct lm_model *m = s->m;
	int rc;
	ocb_train_cfg_optim(cfg, &oc);
	/* scratch for the training batch's rows, as the model's arena (lm_reserve); an
	 * evaluation with more rows grows both. Sized for the larger of the two, the scratch
	 * would be batch-independent at small batches and the measured state fit
	 * (collect/ternary_train.c) would count it as state. */
	if ((rc = qt_set_init(&s->set, &sp->q, &oc, cfg->seed, cfg->threads,
			      s->batch * sp->lm.seq)))
		return rc;
	/* the fp32 remainder first (while the linears still point at their regions) */
	for (int i = 0; i < lm_ntensors(&m->cfg) && rc == OCB_OK; i++) {
		struct lm_tensor t;
		lm_tensor(m, i, &t);
		if (!is_block_linear(m, t.data))
			rc = qt_set_add_fp32(&s->set, t.data, t.grad, (size_t)t.rows * t.cols,
					     t.rows > 1);
	}
	for (int i = 0; i < m->cfg.n_layers * LM_LIN_PER_LAYER && rc == OCB_OK; i++)
		rc = qt_set_add_linear(&s->set, lm_linear(m, i, NULL));
	if (rc == OCB_OK)
		rc = qt_set_finish(&s->set);
	if (rc || sp->q.method == QT_DQT)
		return rc;
	if ((rc = ocb_optim_init(&s->opt, &oc, m->nparams)))
		return rc;
	for (int i = 0; i < lm_ntensors(&m->cfg) && rc == OCB_OK; i++) {
		struct lm_tensor t;
		lm_tensor(m, i, &t);
		if (t.rows == 1)
			rc = ocb_optim_no_decay(&s->opt, (size_t)(t.data - m->params), (size_t)t.cols);
	}
	return rc;
}

static int qlm_create(const void *spec, const struct ocb_train_cfg *cfg, void **out)
{
	const struct qlm_spec *sp = spec;
	struct qlm_state *s = NULL;
	int rc;

	*out = NULL;
	if ((rc = lm_config_check(&sp->lm.model)) || (rc = qt_cfg_check(&sp->q)))
		return rc;
	if (cfg->batch < 1 || sp->lm.seq < 1 || sp->lm.seq > sp->lm.model.ctx || !sp->lm.train ||
	    sp->lm.ntrain < (size_t)sp->lm.seq + 2 || (sp->lm.nval > 0 && !sp->lm.val) ||
	    sp->lm.eval_window > sp->lm.model.ctx || sp->lm.eval_batch < 1)
		return ocb_seterr(OCB_EINVAL, "qlm train: bad batch %d / seq %d / corpus / eval "
					      "settings", cfg->batch, sp->lm.seq);
	if (!(s = calloc(1, sizeof *s)))
		return ocb_seterr(OCB_ENOMEM, "qlm train: out of memory");
	s->sp = sp->lm;
	s->batch = cfg->batch;
	s->grad_clip = cfg->grad_clip;
	if ((rc = lm_create(&sp->lm.model, 1, cfg->seed, &s->m)))
		goto out;
	s->in = malloc((size_t)s->batch * sp->lm.seq);
	s->tgt = malloc((size_t)s->batch * sp->lm.seq * sizeof *s->tgt);
	if (!s->in || !s->tgt) {
		rc = ocb_seterr(OCB_ENOMEM, "qlm train: out of memory for a batch");
		goto out;
	}
	if ((rc = lm_reserve(s->m, s->batch, sp->lm.seq)))
		goto out;
	if ((rc = setup(s, sp, cfg)))
		goto out;
	ocb_rng_seed(&s->rng, cfg->seed); /* as trainer_lm.c */
	*out = s;
	s = NULL;
out:
	qlm_free(s);
	return rc;
}

static void qlm_info(void *st, struct ocb_train_info *in)
{
	struct qlm_state *s = st;
	struct qt_bytes qb;
	qt_set_bytes(&s->set, &qb);
	memset(in, 0, sizeof *in);
	in->samples_per_step = (long)s->batch * s->sp.seq;
	in->step_flops = 3.0 * lm_forward_flops(&s->m->cfg, s->batch, s->sp.seq);
	in->can_evaluate = s->sp.nval > 0;
	in->nparams = s->m->nparams;
	size_t batch_bytes = (size_t)s->batch * s->sp.seq * (1 + sizeof(int32_t));
	in->activation_bytes = s->m->arena_floats * sizeof(float) + qb.activations + batch_bytes;
	if (s->set.cfg.method == QT_DQT) {
		size_t f32 = qt_set_fp32_params(&s->set) * sizeof(float);
		in->weight_bytes = f32 + qb.weights;
		in->grad_bytes = f32 + qb.grads;
		in->optimizer_bytes = qb.optimizer;
	} else {
		in->weight_bytes = s->m->nparams * sizeof(float) + qb.weights;
		in->grad_bytes = s->m->nparams * sizeof(float);
		in->optimizer_bytes = ocb_optim_state_bytes(&s->opt);
	}
}

static int qlm_step(void *st, long step, float lr, double *loss)
{
	struct qlm_state *s = st;
	struct lm_model *m = s->m;
	const uint8_t *train = s->sp.train;
	int B = s->batch, T = s->sp.seq, rc;
	for (int b = 0; b < B; b++) {
		size_t o = (size_t)ocb_rng_below(&s->rng, s->sp.ntrain - (size_t)T);
		memcpy(s->in + (size_t)b * T, train + o, (size_t)T);
		for (int t = 0; t < T; t++)
			s->tgt[(size_t)b * T + t] = train[o + (size_t)t + 1];
	}
	double lsum;
	long cnt;
	int dqt = s->set.cfg.method == QT_DQT;
	qt_set_begin_step(&s->set, step, lr);
	if (dqt)
		qt_set_zero_grads(&s->set);
	else
		lm_zero_grad(m);
	rc = lm_forward(m, s->in, s->tgt, B, T, &lsum, &cnt);
	if (rc == OCB_OK)
		rc = lm_backward(m); /* DQT: the linears update inside */
	m->in = NULL, m->tgt = NULL;
	if (rc)
		return rc;
	if (dqt) {
		qt_set_end_step(&s->set);
	} else {
		if (s->grad_clip > 0.0f)
			ocb_optim_clip_grad_norm(m->grads, m->nparams, s->grad_clip);
		ocb_optim_step(&s->opt, m->params, m->grads, lr);
	}
	*loss = lsum / (double)cnt;
	return OCB_OK;
}

static int qlm_eval(void *st, int final, struct ocb_eval *ev)
{
	struct qlm_state *s = st;
	const struct lm_train_spec *p = &s->sp;
	ev->accuracy = NAN;
	return lm_eval(s->m, p->val, p->nval, p->eval_window, p->eval_stride, p->eval_batch,
		       final ? p->final_eval_windows : p->eval_windows, &ev->loss, &ev->ppl,
		       &ev->scored);
}

static int qlm_save(void *st, const char *path)
{
	struct qlm_state *s = st;
	qt_set_materialize(&s->set);
	int rc = lm_save(s->m, path);
	qt_set_unmaterialize(&s->set);
	return rc;
}

static int qlm_load(void *st, const char *path)
{
	struct qlm_state *s = st;
	struct lm_model *tmp = NULL;
	int rc = lm_load(path, 0, &tmp);
	if (rc)
		return rc;
	const struct lm_config *a = &tmp->cfg, *b = &s->m->cfg;
	if (a->vocab == b->vocab && a->d_model == b->d_model && a->n_layers == b->n_layers &&
	    a->n_heads == b->n_heads && a->ctx == b->ctx && a->ffn == b->ffn) {
		memcpy(s->m->params, tmp->params, s->m->nparams * sizeof(float));
		qt_set_requantize(&s->set);
		qt_set_unmaterialize(&s->set);
	} else {
		rc = ocb_seterr(OCB_EFORMAT, "%s: not an LM of the trainer's config", path);
	}
	lm_free(tmp);
	return rc;
}

const struct ocb_trainer ocb_trainer_qlm = {
	.name = "qlm",
	.create = qlm_create,
	.info = qlm_info,
	.step = qlm_step,
	.evaluate = qlm_eval,
	.save = qlm_save,
	.load = qlm_load,
	.free = qlm_free,
};
