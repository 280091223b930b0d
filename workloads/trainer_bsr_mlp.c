/* trainer_bsr_mlp: the block-sparse MLP trainer (see trainer_bsr_mlp.h). */
#include "trainer_bsr_mlp.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "bsr_layer.h"

struct smlp_state {
	struct ocb_mlp m;
	const struct ocb_idx_set *train, *test;
	struct ocb_optim opt;
	struct ocb_rng rng;
	float *x;
	int *y, *perm;
	int ntr, batch;
	long per_epoch;
	float grad_clip;
	struct ocb_prune_cfg pc;
	struct ocb_bsr_layer L[OCB_MLP_MAXLAYERS]; /* used where is_sparse[i] */
	int is_sparse[OCB_MLP_MAXLAYERS];
	long events, revived;
};

static void smlp_free(void *st)
{
	struct smlp_state *s = st;
	if (!s)
		return;
	for (int i = 0; i < OCB_MLP_MAXLAYERS; i++)
		if (s->is_sparse[i])
			ocb_bsr_layer_release(&s->L[i], &s->m.layer[i]);
	ocb_mlp_release(&s->m);
	ocb_optim_release(&s->opt);
	ocb_free(s->x);
	free(s->y);
	free(s->perm);
	free(s);
}

static int smlp_setup(struct smlp_state *s, const struct ocb_bsr_mlp_spec *sp,
		      const struct ocb_train_cfg *cfg)
{
	struct ocb_optim_cfg oc;
	int rc, nl = sp->mlp.model.nlayers, B = sp->prune.block;
	if ((rc = ocb_mlp_init(&s->m, &sp->mlp.model, cfg->batch)))
		return rc;
	ocb_mlp_init_weights(&s->m, cfg->seed);
	ocb_train_cfg_optim(cfg, &oc);
	if ((rc = ocb_optim_init(&s->opt, &oc, s->m.nparams)))
		return rc;
	for (int i = 0; i < nl && rc == OCB_OK; i++)
		rc = ocb_optim_no_decay(&s->opt, s->m.b_off[i], (size_t)s->m.cfg.dims[i + 1]);
	for (int i = 0; i + 1 < nl && rc == OCB_OK; i++) /* hidden layers only */
		if (ocb_bsr_layer_fits(&s->m.layer[i], B)) {
			s->is_sparse[i] = 1; /* released by smlp_free from here on */
			rc = ocb_bsr_layer_init(&s->L[i], &s->m.layer[i], B, cfg->batch,
						cfg->threads);
		}
	if (rc)
		return rc;
	s->x = ocb_alloc((size_t)s->batch * s->train->dim * sizeof(float));
	s->y = malloc((size_t)s->batch * sizeof(int));
	s->perm = malloc((size_t)s->ntr * sizeof(int));
	if (!s->x || !s->y || !s->perm)
		return ocb_seterr(OCB_ENOMEM, "bsr mlp: out of memory");
	for (int i = 0; i < s->ntr; i++)
		s->perm[i] = i;
	/* the same shuffling stream as the dense trainer: same data order */
	ocb_rng_seed(&s->rng, cfg->seed ^ 0x5deece66dULL);
	return OCB_OK;
}

static int smlp_create(const void *spec, const struct ocb_train_cfg *cfg, void **out)
{
	const struct ocb_bsr_mlp_spec *sp = spec;
	struct smlp_state *s = NULL;
	void *probe = NULL;
	int rc;

	*out = NULL;
	/* the dense trainer validates model, data and batch */
	if ((rc = ocb_trainer_mlp.create(&sp->mlp, cfg, &probe)))
		return rc;
	ocb_trainer_mlp.free(probe);
	if ((rc = ocb_prune_cfg_check(&sp->prune)))
		return rc;
	if (cfg->opt != OCB_OPTIM_ADAMW)
		return ocb_seterr(OCB_EINVAL, "bsr mlp: only AdamW updates stored blocks only");
	if (!(s = calloc(1, sizeof *s)))
		return ocb_seterr(OCB_ENOMEM, "bsr mlp: out of memory");
	s->train = sp->mlp.train;
	s->test = sp->mlp.test;
	s->batch = cfg->batch;
	s->ntr = sp->mlp.max_train > 0 && sp->mlp.max_train < s->train->n ? sp->mlp.max_train
									   : s->train->n;
	s->per_epoch = s->ntr / s->batch;
	s->grad_clip = cfg->grad_clip;
	s->pc = sp->prune;
	if ((rc = smlp_setup(s, sp, cfg)))
		goto out;
	*out = s;
	s = NULL;
out:
	smlp_free(s);
	return rc;
}

static void smlp_info(void *st, struct ocb_train_info *in)
{
	struct smlp_state *s = st;
	memset(in, 0, sizeof *in);
	in->steps_per_epoch = s->per_epoch;
	in->samples_per_step = s->batch;
	in->step_flops = ocb_mlp_step_flops(&s->m, s->batch); /* dense equivalent */
	in->can_evaluate = s->test && s->test->n > 0;
	in->nparams = s->m.nparams;
	in->weight_bytes = ocb_mlp_weight_bytes(&s->m);
	in->grad_bytes = ocb_mlp_grad_bytes(&s->m);
	in->optimizer_bytes = ocb_optim_state_bytes(&s->opt);
	in->activation_bytes = s->m.act_bytes;
}

/* AdamW on what is live: every dense parameter (biases undecayed, as in the dense
 * trainer), and of the sparse layers' weights only the stored blocks, in the layer's
 * block order (its values, dw and moments; the optimizer's own moments for those weights
 * stay unused). Same arithmetic as ocb_optim_step. */
static void smlp_optim(struct smlp_state *s, float lr)
{
	struct ocb_optim *o = &s->opt;
	const struct ocb_optim_cfg *c = &o->cfg;
	o->t++;
	float c1 = (float)(1.0 / (1.0 - pow(c->beta1, (double)o->t)));
	float c2 = (float)(1.0 / (1.0 - pow(c->beta2, (double)o->t)));
	float *p = s->m.params, *g = s->m.grads;
	for (int i = 0; i < s->m.cfg.nlayers; i++) {
		const struct ocb_linear *l = &s->m.layer[i];
		size_t wo = s->m.w_off[i], bo = s->m.b_off[i];
		ocb_adamw_span(p + bo, g + bo, o->m + bo, o->v + bo, (size_t)l->out, lr, 0.0f,
			       c->beta1, c->beta2, c->eps, c1, c2);
		if (!s->is_sparse[i]) {
			ocb_adamw_span(p + wo, g + wo, o->m + wo, o->v + wo, (size_t)l->in * l->out,
				       lr, c->weight_decay, c->beta1, c->beta2, c->eps, c1, c2);
			continue;
		}
		ocb_bsr_layer_adamw(&s->L[i], lr, c->weight_decay, c->beta1, c->beta2, c->eps, c1,
				    c2);
	}
}

/* Global gradient-norm clipping over the live gradients: biases and dense weights from
 * grads, the sparse layers' weights from their stored dW. */
static double live_grad_ss(struct smlp_state *s, float scale)
{
	double ss = 0.0;
	for (int i = 0; i < s->m.cfg.nlayers; i++) {
		const struct ocb_linear *l = &s->m.layer[i];
		float *parts[2] = {s->m.grads + s->m.b_off[i], s->m.grads + s->m.w_off[i]};
		size_t lens[2] = {(size_t)l->out, s->is_sparse[i] ? 0 : (size_t)l->in * l->out};
		for (int k = 0; k < 2; k++)
			for (size_t j = 0; j < lens[k]; j++) {
				ss += (double)parts[k][j] * parts[k][j];
				parts[k][j] *= scale;
			}
		if (s->is_sparse[i])
			ss += ocb_bsr_layer_grad_ss(&s->L[i], scale);
	}
	return ss;
}

static void smlp_clip(struct smlp_state *s)
{
	double norm = sqrt(live_grad_ss(s, 1.0f));
	if (norm > s->grad_clip)
		live_grad_ss(s, (float)(s->grad_clip / norm));
}

/* A pruning event at step t: every sparse layer to the scheduled sparsity, regrowth
 * before t1 if configured (bsr_layer.h). */
static int smlp_prune(struct smlp_state *s, long t)
{
	double target = ocb_prune_sparsity(&s->pc, t), sp[OCB_MLP_MAXLAYERS];
	struct ocb_bsr_layer *L[OCB_MLP_MAXLAYERS];
	struct ocb_linear *lin[OCB_MLP_MAXLAYERS];
	int n = 0, rc;
	for (int i = 0; i < s->m.cfg.nlayers; i++)
		if (s->is_sparse[i])
			L[n] = &s->L[i], lin[n] = &s->m.layer[i], sp[n++] = target;
	if (s->pc.global && (rc = ocb_bsr_layers_global(L, lin, n, target, sp)))
		return rc;
	for (int i = 0, k = 0; i < s->m.cfg.nlayers; i++) {
		if (!s->is_sparse[i])
			continue;
		if ((rc = ocb_bsr_layer_prune(&s->L[i], &s->m.layer[i], sp[k++], s->pc.regrow,
					      &s->revived)))
			return rc;
	}
	s->events++;
	return OCB_OK;
}

/* The model's weights up to date with the sparse layers' stored blocks (bsr_layer.h). */
static void sync_all(struct smlp_state *s)
{
	for (int i = 0; i < s->m.cfg.nlayers; i++)
		if (s->is_sparse[i])
			ocb_bsr_layer_sync(&s->L[i], &s->m.layer[i]);
}

static int smlp_step(void *st, long step, float lr, double *loss)
{
	struct smlp_state *s = st;
	long b = step % s->per_epoch;
	if (b == 0) /* a new epoch: Fisher-Yates, as the dense trainer */
		for (int i = s->ntr - 1; i > 0; i--) {
			int j = (int)ocb_rng_below(&s->rng, (uint64_t)i + 1);
			int t = s->perm[i];
			s->perm[i] = s->perm[j];
			s->perm[j] = t;
		}
	ocb_idx_gather(s->train, s->perm + b * s->batch, 0, s->batch, s->x, s->y);
	int due = ocb_prune_due(&s->pc, step);
	/* OpenBLAS keeps only the small dense products (output layer, regrowth scores): one
	 * thread, so its pool does not spin against the sparse kernels' OpenMP team
	 * (REFERENCE.md section 6 pitfall; it cost 3-8x per step here) */
	openblas_set_num_threads(1);
	for (int i = 0; i < s->m.cfg.nlayers; i++)
		s->L[i].dense_grad = s->is_sparse[i] && due && s->pc.regrow > 0 && step < s->pc.t1;
	*loss = ocb_mlp_grad(&s->m, s->x, s->y, s->batch);
	if (s->grad_clip > 0.0f)
		smlp_clip(s);
	smlp_optim(s, lr);
	return due ? smlp_prune(s, step) : OCB_OK;
}

static int smlp_eval(void *st, int final, struct ocb_eval *ev)
{
	struct smlp_state *s = st;
	(void)final;
	openblas_set_num_threads(1);
	ev->ppl = NAN;
	ev->scored = s->test->n;
	return ocb_mlp_evaluate(&s->m, s->test, &ev->accuracy, &ev->loss);
}

static int smlp_save(void *st, const char *path)
{
	struct smlp_state *s = st;
	sync_all(s);
	return ocb_mlp_save(&s->m, path);
}

/* Weights from a checkpoint of the same MLP; each sparse layer's mask becomes its
 * non-zero blocks. */
static int smlp_load(void *st, const char *path)
{
	struct smlp_state *s = st;
	struct ocb_mlp tmp;
	int rc = ocb_mlp_load(path, 1, &tmp);
	if (rc)
		return rc;
	int same = ocb_mlp_same_shape(&tmp, &s->m);
	if (!same)
		rc = ocb_seterr(OCB_EFORMAT, "%s: not the trainer's MLP shape", path);
	else
		memcpy(s->m.params, tmp.params, s->m.nparams * sizeof(float));
	ocb_mlp_release(&tmp);
	for (int i = 0; i < s->m.cfg.nlayers && rc == OCB_OK; i++)
		if (s->is_sparse[i])
			rc = ocb_bsr_layer_remask(&s->L[i], &s->m.layer[i]);
	return rc;
}

const struct ocb_trainer ocb_trainer_bsr_mlp = {
	.name = "bsr_mlp",
	.create = smlp_create,
	.info = smlp_info,
	.step = smlp_step,
	.evaluate = smlp_eval,
	.save = smlp_save,
	.load = smlp_load,
	.free = smlp_free,
};

void ocb_bsr_mlp_default_prune(struct ocb_prune_cfg *p, long steps, int block, double target)
{
	memset(p, 0, sizeof *p);
	p->block = block;
	p->target = target;
	p->t0 = steps / 10;
	p->t1 = steps * 4 / 10;
	p->every = (p->t1 - p->t0) / 20 > 0 ? (p->t1 - p->t0) / 20 : 1;
}

int ocb_bsr_mlp_time_layers(void *state, int threads, int reps, double *sparse_s,
			    double *dense_s)
{
	struct smlp_state *s = state;
	int rc = OCB_OK;
	*sparse_s = *dense_s = 0.0;
	for (int i = 0; i < s->m.cfg.nlayers && rc == OCB_OK; i++) {
		double sp, dn;
		if (!s->is_sparse[i])
			continue;
		rc = ocb_bsr_layer_time_step(&s->L[i], &s->m.layer[i], s->batch, i > 0, threads,
					     reps, NULL, &sp, &dn);
		*sparse_s += sp, *dense_s += dn;
	}
	return rc;
}

void ocb_bsr_mlp_stats(void *state, struct ocb_bsr_train_stats *st)
{
	struct smlp_state *s = state;
	memset(st, 0, sizeof *st);
	for (int i = 0; i < s->m.cfg.nlayers; i++)
		if (s->is_sparse[i])
			ocb_bsr_layer_stats_add(&s->L[i], &s->m.layer[i], st);
	st->events = s->events;
	st->revived = s->revived;
}
