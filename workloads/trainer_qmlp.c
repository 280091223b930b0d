/* trainer_qmlp: the MLP under fp32 / STE / DQT training (see trainer_ternary.h). Batches,
 * shuffling and evaluation follow trainer_mlp.c (same seed -> same order). */
#include "trainer_ternary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"

struct qmlp_state {
	struct ocb_mlp m;
	struct qt_set set;
	const struct ocb_idx_set *train, *test; /* borrowed */
	struct ocb_optim opt; /* fp32 / ste: the whole block */
	struct ocb_rng rng;
	float *x;
	int *y, *perm;
	int ntr, batch;
	long per_epoch;
	float grad_clip;
};

struct qt_set *qmlp_set(void *st) { return &((struct qmlp_state *)st)->set; }
struct ocb_mlp *qmlp_model(void *st) { return &((struct qmlp_state *)st)->m; }

static void qmlp_free(void *st)
{
	struct qmlp_state *s = st;
	if (!s)
		return;
	qt_set_release(&s->set);
	ocb_mlp_release(&s->m);
	ocb_optim_release(&s->opt);
	ocb_free(s->x);
	free(s->y);
	free(s->perm);
	free(s);
}

/* Registers the hidden linears with the set; DQT: the rest as fp32 ranges. */
static int setup_set(struct qmlp_state *s, const struct qmlp_spec *sp,
		     const struct ocb_train_cfg *cfg)
{
	struct ocb_optim_cfg oc;
	int L = s->m.cfg.nlayers, rc;
	ocb_train_cfg_optim(cfg, &oc);
	if ((rc = qt_set_init(&s->set, &sp->q, &oc, cfg->seed, cfg->threads, s->batch)))
		return rc;
	for (int i = 0; i < L && rc == OCB_OK; i++) {
		struct ocb_linear *l = &s->m.layer[i];
		if (i + 1 < L) /* the classifier stays fp32 */
			rc = qt_set_add_linear(&s->set, l);
		else
			rc = qt_set_add_fp32(&s->set, l->w, l->gw, (size_t)l->in * l->out, 1);
		if (rc == OCB_OK)
			rc = qt_set_add_fp32(&s->set, l->b, l->gb, (size_t)l->out, 0);
	}
	if (rc == OCB_OK)
		rc = qt_set_finish(&s->set);
	if (rc || sp->q.method == QT_DQT)
		return rc;
	if ((rc = ocb_optim_init(&s->opt, &oc, s->m.nparams)))
		return rc;
	for (int i = 0; i < L && rc == OCB_OK; i++)
		rc = ocb_optim_no_decay(&s->opt, s->m.b_off[i], (size_t)s->m.cfg.dims[i + 1]);
	return rc;
}

static int qmlp_create(const void *spec, const struct ocb_train_cfg *cfg, void **out)
{
	const struct qmlp_spec *sp = spec;
	const struct ocb_mlp_spec *ms = &sp->mlp;
	struct qmlp_state *s = NULL;
	int rc;

	*out = NULL;
	if (!ms->train || cfg->batch < 1 || ms->max_train < 0 || ms->model.nlayers < 1 ||
	    ms->train->dim != ms->model.dims[0])
		return ocb_seterr(OCB_EINVAL, "qmlp train: need training data matching the model "
					      "input and batch >= 1");
	if ((rc = qt_cfg_check(&sp->q)))
		return rc;
	if (!(s = calloc(1, sizeof *s)))
		return ocb_seterr(OCB_ENOMEM, "qmlp train: out of memory");
	s->train = ms->train;
	s->test = ms->test;
	s->batch = cfg->batch;
	s->ntr = ms->max_train > 0 && ms->max_train < ms->train->n ? ms->max_train : ms->train->n;
	if (s->ntr < s->batch) {
		rc = ocb_seterr(OCB_EINVAL, "qmlp train: %d examples, fewer than one batch of %d",
				s->ntr, s->batch);
		goto out;
	}
	s->per_epoch = s->ntr / s->batch;
	s->grad_clip = cfg->grad_clip;
	if ((rc = ocb_mlp_init(&s->m, &ms->model, cfg->batch)))
		goto out;
	ocb_mlp_init_weights(&s->m, cfg->seed);
	if ((rc = setup_set(s, sp, cfg)))
		goto out;
	s->x = ocb_alloc((size_t)s->batch * s->train->dim * sizeof(float));
	s->y = malloc((size_t)s->batch * sizeof(int));
	s->perm = malloc((size_t)s->ntr * sizeof(int));
	if (!s->x || !s->y || !s->perm) {
		rc = ocb_seterr(OCB_ENOMEM, "qmlp train: out of memory");
		goto out;
	}
	for (int i = 0; i < s->ntr; i++)
		s->perm[i] = i;
	ocb_rng_seed(&s->rng, cfg->seed ^ 0x5deece66dULL); /* as trainer_mlp.c */
	*out = s;
	s = NULL;
out:
	qmlp_free(s);
	return rc;
}

static void qmlp_info(void *st, struct ocb_train_info *in)
{
	struct qmlp_state *s = st;
	struct qt_bytes qb;
	qt_set_bytes(&s->set, &qb);
	memset(in, 0, sizeof *in);
	in->steps_per_epoch = s->per_epoch;
	in->samples_per_step = s->batch;
	in->step_flops = ocb_mlp_step_flops(&s->m, s->batch);
	in->can_evaluate = s->test && s->test->n > 0;
	in->nparams = s->m.nparams;
	/* batch inputs and labels, the epoch's permutation */
	size_t batch_bytes = (size_t)s->batch * (s->train->dim * sizeof(float) + sizeof(int)) +
			     (size_t)s->ntr * sizeof(int);
	in->activation_bytes = s->m.act_bytes + qb.activations + batch_bytes;
	if (s->set.cfg.method == QT_DQT) {
		/* resident fp32: the ranges only; the linears' regions are released */
		size_t f32 = qt_set_fp32_params(&s->set) * sizeof(float);
		in->weight_bytes = f32 + qb.weights;
		in->grad_bytes = f32 + qb.grads;
		in->optimizer_bytes = qb.optimizer;
	} else {
		in->weight_bytes = s->m.nparams * sizeof(float) + qb.weights;
		in->grad_bytes = s->m.nparams * sizeof(float);
		in->optimizer_bytes = ocb_optim_state_bytes(&s->opt);
	}
}

static void relu_backward(float *d, const float *h, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = h[i] > 0.0f ? d[i] : 0.0f;
}

/* ocb_mlp_grad without its memset of the whole gradient block (the caller zeroes what
 * exists): forward, loss, backward through ocb_linear (DQT updates inside). */
static double grad_pass(struct ocb_mlp *m, const float *x, const int *y, int n)
{
	int L = m->cfg.nlayers;
	const float *logits = ocb_mlp_forward(m, x, n);
	float *dcur = m->d[0], *dnext = m->d[1];
	double loss = ocb_softmax_xent(logits, y, n, m->cfg.dims[L], m->probs, dcur);
	for (int i = L - 1; i >= 0; i--) {
		const float *xin = i == 0 ? x : m->act[i];
		ocb_linear_backward(&m->layer[i], xin, dcur, n, i == 0 ? NULL : dnext);
		if (i > 0) {
			relu_backward(dnext, m->act[i], (size_t)n * m->cfg.dims[i]);
			float *t = dcur;
			dcur = dnext;
			dnext = t;
		}
	}
	return loss;
}

static int qmlp_step(void *st, long step, float lr, double *loss)
{
	struct qmlp_state *s = st;
	long b = step % s->per_epoch;
	if (b == 0)
		for (int i = s->ntr - 1; i > 0; i--) {
			int j = (int)ocb_rng_below(&s->rng, (uint64_t)i + 1);
			int t = s->perm[i];
			s->perm[i] = s->perm[j];
			s->perm[j] = t;
		}
	ocb_idx_gather(s->train, s->perm + b * s->batch, 0, s->batch, s->x, s->y);
	qt_set_begin_step(&s->set, step, lr);
	if (s->set.cfg.method == QT_DQT) {
		qt_set_zero_grads(&s->set);
		*loss = grad_pass(&s->m, s->x, s->y, s->batch);
		qt_set_end_step(&s->set);
		return OCB_OK;
	}
	memset(s->m.grads, 0, s->m.nparams * sizeof(float));
	*loss = grad_pass(&s->m, s->x, s->y, s->batch);
	if (s->grad_clip > 0.0f)
		ocb_optim_clip_grad_norm(s->m.grads, s->m.nparams, s->grad_clip);
	ocb_optim_step(&s->opt, s->m.params, s->m.grads, lr);
	return OCB_OK;
}

static int qmlp_eval(void *st, int final, struct ocb_eval *ev)
{
	struct qmlp_state *s = st;
	(void)final;
	ev->ppl = NAN;
	ev->scored = s->test->n;
	return ocb_mlp_evaluate(&s->m, s->test, &ev->accuracy, &ev->loss);
}

static int qmlp_save(void *st, const char *path)
{
	struct qmlp_state *s = st;
	qt_set_materialize(&s->set);
	int rc = ocb_mlp_save(&s->m, path);
	qt_set_unmaterialize(&s->set);
	return rc;
}

static int qmlp_load(void *st, const char *path)
{
	struct qmlp_state *s = st;
	struct ocb_mlp tmp;
	int rc = ocb_mlp_load(path, 1, &tmp);
	if (rc)
		return rc;
	int same = ocb_mlp_same_shape(&tmp, &s->m);
	if (same) {
		memcpy(s->m.params, tmp.params, s->m.nparams * sizeof(float));
		qt_set_requantize(&s->set);
		qt_set_unmaterialize(&s->set);
	} else {
		rc = ocb_seterr(OCB_EFORMAT, "%s: not an MLP of the trainer's shape", path);
	}
	ocb_mlp_release(&tmp);
	return rc;
}

const struct ocb_trainer ocb_trainer_qmlp = {
	.name = "qmlp",
	.create = qmlp_create,
	.info = qmlp_info,
	.step = qmlp_step,
	.evaluate = qmlp_eval,
	.save = qmlp_save,
	.load = qmlp_load,
	.free = qmlp_free,
};
