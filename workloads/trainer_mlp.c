/* trainer_mlp: the MLP's ops of the trainer interface (see trainer_mlp.h). */
#include "trainer_mlp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"

struct mlp_state {
	struct ocb_mlp m;
	const struct ocb_idx_set *train, *test; /* borrowed */
	struct ocb_optim opt;
	struct ocb_rng rng;  /* shuffling */
	float *x;            /* [batch][dim] gathered inputs */
	int *y;              /* [batch] labels */
	int *perm;           /* [ntr] this epoch's order */
	int ntr, batch;
	long per_epoch;
	float grad_clip;
};

void ocb_mlp_train_defaults(struct ocb_train_cfg *cfg)
{
	ocb_train_cfg_defaults(cfg);
	cfg->epochs = 15;
	cfg->batch = 256;
	cfg->opt = OCB_OPTIM_ADAMW;
	cfg->lr = 1e-3f;
	cfg->min_lr = 1e-5f;
	cfg->warmup_epochs = 1.0f;
	cfg->weight_decay = 1e-4f;
	cfg->momentum = 0.9f;
	cfg->log_every = 20;
	cfg->eval_every = 1;
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

static int check_spec(const struct ocb_mlp_spec *sp, const struct ocb_train_cfg *c)
{
	const struct ocb_mlp_cfg *mc = &sp->model;
	const struct ocb_idx_set *tr = sp->train, *te = sp->test;
	if (!tr || c->batch < 1 || sp->max_train < 0)
		return ocb_seterr(OCB_EINVAL, "mlp train: need training data, batch %d >= 1, "
					      "max_train %d >= 0", c->batch, sp->max_train);
	if (mc->nlayers < 1 || mc->nlayers > OCB_MLP_MAXLAYERS)
		return ocb_seterr(OCB_EINVAL, "mlp train: %d layers", mc->nlayers);
	if (tr->dim != mc->dims[0] || (te && te->dim != mc->dims[0]))
		return ocb_seterr(OCB_EINVAL, "mlp train: data is %d-dim, model input %d", tr->dim,
				  mc->dims[0]);
	if (tr->nclasses > mc->dims[mc->nlayers])
		return ocb_seterr(OCB_EINVAL, "mlp train: %d classes, model has %d outputs",
				  tr->nclasses, mc->dims[mc->nlayers]);
	int ntr = sp->max_train > 0 && sp->max_train < tr->n ? sp->max_train : tr->n;
	if (ntr < c->batch)
		return ocb_seterr(OCB_EINVAL, "mlp train: %d examples, fewer than one batch of %d",
				  ntr, c->batch);
	return OCB_OK;
}

static void mlp_free(void *st)
{
	struct mlp_state *s = st;
	if (!s)
		return;
	ocb_mlp_release(&s->m);
	ocb_optim_release(&s->opt);
	ocb_free(s->x);
	free(s->y);
	free(s->perm);
	free(s);
}

/* Model (max batch = the training batch, which evaluation uses too), He init from the
 * seed, optimizer with biases exempt from decay, batch buffers, identity order. */
static int mlp_create(const void *spec, const struct ocb_train_cfg *cfg, void **out)
{
	const struct ocb_mlp_spec *sp = spec;
	struct ocb_optim_cfg oc;
	struct mlp_state *s = NULL;
	int rc;

	*out = NULL;
	if ((rc = check_spec(sp, cfg)))
		return rc;
	if (!(s = calloc(1, sizeof *s)))
		return ocb_seterr(OCB_ENOMEM, "mlp train: out of memory");
	s->train = sp->train;
	s->test = sp->test;
	s->batch = cfg->batch;
	s->ntr = sp->max_train > 0 && sp->max_train < sp->train->n ? sp->max_train : sp->train->n;
	s->per_epoch = s->ntr / s->batch;
	s->grad_clip = cfg->grad_clip;
	if ((rc = ocb_mlp_init(&s->m, &sp->model, cfg->batch)))
		goto out;
	ocb_mlp_init_weights(&s->m, cfg->seed);
	ocb_train_cfg_optim(cfg, &oc);
	if ((rc = ocb_optim_init(&s->opt, &oc, s->m.nparams)))
		goto out;
	/* biases are not decayed (common practice; they do not scale with the input) */
	for (int i = 0; i < s->m.cfg.nlayers && rc == OCB_OK; i++)
		rc = ocb_optim_no_decay(&s->opt, s->m.b_off[i], (size_t)s->m.cfg.dims[i + 1]);
	if (rc)
		goto out;
	s->x = ocb_alloc((size_t)s->batch * s->train->dim * sizeof(float));
	s->y = malloc((size_t)s->batch * sizeof(int));
	s->perm = malloc((size_t)s->ntr * sizeof(int));
	if (!s->x || !s->y || !s->perm) {
		rc = ocb_seterr(OCB_ENOMEM, "mlp train: out of memory");
		goto out;
	}
	for (int i = 0; i < s->ntr; i++)
		s->perm[i] = i;
	/* the shuffling stream is distinct from the weight-init stream of the same seed */
	ocb_rng_seed(&s->rng, cfg->seed ^ 0x5deece66dULL);
	*out = s;
	s = NULL;
out:
	mlp_free(s);
	return rc;
}

static void mlp_info(void *st, struct ocb_train_info *in)
{
	struct mlp_state *s = st;
	memset(in, 0, sizeof *in);
	in->steps_per_epoch = s->per_epoch;
	in->samples_per_step = s->batch;
	in->step_flops = ocb_mlp_step_flops(&s->m, s->batch);
	in->can_evaluate = s->test && s->test->n > 0;
	in->nparams = s->m.nparams;
	in->weight_bytes = ocb_mlp_weight_bytes(&s->m);
	in->grad_bytes = ocb_mlp_grad_bytes(&s->m);
	in->optimizer_bytes = ocb_optim_state_bytes(&s->opt);
	in->activation_bytes = s->m.act_bytes;
}

static int mlp_step(void *st, long step, float lr, double *loss)
{
	struct mlp_state *s = st;
	long b = step % s->per_epoch;
	if (b == 0) /* a new epoch: Fisher-Yates over the previous epoch's permutation */
		for (int i = s->ntr - 1; i > 0; i--) {
			int j = (int)ocb_rng_below(&s->rng, (uint64_t)i + 1);
			int t = s->perm[i];
			s->perm[i] = s->perm[j];
			s->perm[j] = t;
		}
	ocb_idx_gather(s->train, s->perm + b * s->batch, 0, s->batch, s->x, s->y);
	*loss = ocb_mlp_grad(&s->m, s->x, s->y, s->batch);
	if (s->grad_clip > 0.0f)
		ocb_optim_clip_grad_norm(s->m.grads, s->m.nparams, s->grad_clip);
	ocb_optim_step(&s->opt, s->m.params, s->m.grads, lr);
	return OCB_OK;
}

static int mlp_eval(void *st, int final, struct ocb_eval *ev)
{
	struct mlp_state *s = st;
	(void)final; /* the whole test set every time */
	ev->ppl = NAN;
	ev->scored = s->test->n;
	return ocb_mlp_evaluate(&s->m, s->test, &ev->accuracy, &ev->loss);
}

static int mlp_save(void *st, const char *path)
{
	struct mlp_state *s = st;
	return ocb_mlp_save(&s->m, path);
}

static int mlp_load(void *st, const char *path)
{
	struct mlp_state *s = st;
	struct ocb_mlp tmp;
	int rc = ocb_mlp_load(path, 1, &tmp);
	if (rc)
		return rc;
	int same = ocb_mlp_same_shape(&tmp, &s->m);
	if (same)
		memcpy(s->m.params, tmp.params, s->m.nparams * sizeof(float));
	else
		rc = ocb_seterr(OCB_EFORMAT, "%s: an MLP of %d layers %d -> %d, the trainer's has "
					     "%d layers %d -> %d", path, tmp.cfg.nlayers,
				tmp.cfg.dims[0], tmp.cfg.dims[tmp.cfg.nlayers], s->m.cfg.nlayers,
				s->m.cfg.dims[0], s->m.cfg.dims[s->m.cfg.nlayers]);
	ocb_mlp_release(&tmp);
	return rc;
}

const struct ocb_trainer ocb_trainer_mlp = {
	.name = "mlp",
	.create = mlp_create,
	.info = mlp_info,
	.step = mlp_step,
	.evaluate = mlp_eval,
	.save = mlp_save,
	.load = mlp_load,
	.free = mlp_free,
};
