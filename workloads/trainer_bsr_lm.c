/* trainer_bsr_lm: the block-sparse LM trainer (see trainer_bsr_lm.h). The batch sampling
 * and the model calls follow trainer_lm.c's step, so at sparsity 0 the two runs see the
 * same windows. */
#include "trainer_bsr_lm.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"

#define MAX_SPARSE 3 /* gate, up, down of each layer */

struct slm_state {
	struct lm_model *m;
	struct lm_train_spec sp;
	struct ocb_optim opt;
	struct ocb_rng rng;
	uint8_t *in;
	int32_t *tgt;
	int batch;
	float grad_clip;
	struct ocb_prune_cfg pc;
	int nsparse;
	struct ocb_bsr_layer *L;   /* [nsparse] */
	struct ocb_linear **lin;   /* [nsparse] the model's linears they serve */
	long events, revived;
};

static void slm_free(void *st)
{
	struct slm_state *s = st;
	if (!s)
		return;
	for (int i = 0; s->L && i < s->nsparse; i++)
		ocb_bsr_layer_release(&s->L[i], s->lin[i]);
	free(s->L);
	free(s->lin);
	lm_free(s->m);
	ocb_optim_release(&s->opt);
	free(s->in);
	free(s->tgt);
	free(s);
}

/* The MLP linears (indices l*7 + 4, 5, 6) on the sparse kernels. */
static int slm_sparsify(struct slm_state *s, int threads)
{
	int nl = s->m->cfg.n_layers, B = s->pc.block;
	int rows = s->batch * s->sp.seq, erows = s->sp.eval_batch * s->sp.eval_window;
	s->L = calloc((size_t)nl * MAX_SPARSE, sizeof *s->L);
	s->lin = calloc((size_t)nl * MAX_SPARSE, sizeof *s->lin);
	if (!s->L || !s->lin)
		return ocb_seterr(OCB_ENOMEM, "bsr lm: out of memory");
	for (int l = 0; l < nl; l++)
		for (int j = 4; j < 7; j++) {
			struct ocb_linear *lin = lm_linear(s->m, l * LM_LIN_PER_LAYER + j, NULL);
			if (!ocb_bsr_layer_fits(lin, B))
				return ocb_seterr(OCB_EINVAL, "bsr lm: %dx%d MLP weights do not tile "
							      "into %dx%d blocks", lin->out, lin->in,
						  B, B);
			s->lin[s->nsparse] = lin;
			int rc = ocb_bsr_layer_init(&s->L[s->nsparse++], lin, B,
						    rows > erows ? rows : erows, threads);
			if (rc)
				return rc;
		}
	return OCB_OK;
}

static int slm_create(const void *spec, const struct ocb_train_cfg *cfg, void **out)
{
	const struct ocb_bsr_lm_spec *sp = spec;
	struct ocb_optim_cfg oc;
	struct slm_state *s = NULL;
	void *probe = NULL;
	int rc;

	*out = NULL;
	/* the LM trainer validates model, corpora and protocol */
	if ((rc = lm_trainer.create(&sp->lm, cfg, &probe)))
		return rc;
	lm_trainer.free(probe);
	if ((rc = ocb_prune_cfg_check(&sp->prune)))
		return rc;
	if (cfg->opt != OCB_OPTIM_ADAMW)
		return ocb_seterr(OCB_EINVAL, "bsr lm: only AdamW updates stored blocks only");
	if (!(s = calloc(1, sizeof *s)))
		return ocb_seterr(OCB_ENOMEM, "bsr lm: out of memory");
	s->sp = sp->lm;
	s->pc = sp->prune;
	s->batch = cfg->batch;
	s->grad_clip = cfg->grad_clip;
	if ((rc = lm_create(&sp->lm.model, 1, cfg->seed, &s->m)) ||
	    (rc = lm_reserve(s->m, s->batch, sp->lm.seq)))
		goto out;
	s->in = malloc((size_t)s->batch * sp->lm.seq);
	s->tgt = malloc((size_t)s->batch * sp->lm.seq * sizeof *s->tgt);
	if (!s->in || !s->tgt) {
		rc = ocb_seterr(OCB_ENOMEM, "bsr lm: out of memory for a batch");
		goto out;
	}
	ocb_train_cfg_optim(cfg, &oc);
	if ((rc = ocb_optim_init(&s->opt, &oc, s->m->nparams)))
		goto out;
	if ((rc = slm_sparsify(s, cfg->threads)))
		goto out;
	ocb_rng_seed(&s->rng, cfg->seed);
	*out = s;
	s = NULL;
out:
	slm_free(s);
	return rc;
}

static void slm_info(void *st, struct ocb_train_info *in)
{
	struct slm_state *s = st;
	memset(in, 0, sizeof *in);
	in->samples_per_step = (long)s->batch * s->sp.seq;
	in->step_flops = 3.0 * lm_forward_flops(&s->m->cfg, s->batch, s->sp.seq); /* dense eq. */
	in->can_evaluate = s->sp.nval > 0;
	in->nparams = s->m->nparams;
	in->weight_bytes = lm_weight_bytes(s->m);
	in->grad_bytes = s->m->nparams * sizeof(float);
	in->optimizer_bytes = ocb_optim_state_bytes(&s->opt);
	in->activation_bytes = s->m->arena_floats * sizeof(float);
}

/* Index of the sparse layer whose weights are `w`, or -1. */
static int sparse_of(const struct slm_state *s, const float *w)
{
	for (int i = 0; i < s->nsparse; i++)
		if (s->lin[i]->w == w)
			return i;
	return -1;
}

/* Sum of squares of the live gradients (dense tensors + stored blocks), each then scaled
 * by `scale`. */
static double live_ss(struct slm_state *s, float scale)
{
	double ss = 0.0;
	for (int i = 0; i < lm_ntensors(&s->m->cfg); i++) {
		struct lm_tensor t;
		lm_tensor(s->m, i, &t);
		int k = sparse_of(s, t.data);
		if (k >= 0) {
			ss += ocb_bsr_layer_grad_ss(&s->L[k], scale);
			continue;
		}
		for (size_t j = 0; j < (size_t)t.rows * t.cols; j++) {
			ss += (double)t.grad[j] * t.grad[j];
			t.grad[j] *= scale;
		}
	}
	return ss;
}

/* Clipping over the live gradients, then AdamW on them: vectors (norm gains) undecayed,
 * as the LM trainer. */
static void slm_update(struct slm_state *s, float lr)
{
	struct ocb_optim *o = &s->opt;
	const struct ocb_optim_cfg *c = &o->cfg;
	struct lm_model *m = s->m;
	int nt = lm_ntensors(&m->cfg);
	if (s->grad_clip > 0.0f) {
		double norm = sqrt(live_ss(s, 1.0f));
		if (norm > s->grad_clip)
			live_ss(s, (float)(s->grad_clip / norm));
	}
	o->t++;
	float c1 = (float)(1.0 / (1.0 - pow(c->beta1, (double)o->t)));
	float c2 = (float)(1.0 / (1.0 - pow(c->beta2, (double)o->t)));
	for (int i = 0; i < nt; i++) {
		struct lm_tensor t;
		lm_tensor(m, i, &t);
		size_t off = (size_t)(t.data - m->params);
		int k = sparse_of(s, t.data);
		float wd = t.rows == 1 ? 0.0f : c->weight_decay;
		if (k >= 0) /* in the layer's block order, its own moments */
			ocb_bsr_layer_adamw(&s->L[k], lr, wd, c->beta1, c->beta2, c->eps, c1, c2);
		else
			ocb_adamw_span(t.data, t.grad, o->m + off, o->v + off,
				       (size_t)t.rows * t.cols, lr, wd, c->beta1, c->beta2, c->eps,
				       c1, c2);
	}
}

static int slm_prune(struct slm_state *s, long t)
{
	double target = ocb_prune_sparsity(&s->pc, t);
	double *sp = malloc((size_t)s->nsparse * sizeof *sp);
	struct ocb_bsr_layer **L = malloc((size_t)s->nsparse * sizeof *L);
	int rc = sp && L ? OCB_OK : ocb_seterr(OCB_ENOMEM, "bsr lm: out of memory");
	for (int i = 0; rc == OCB_OK && i < s->nsparse; i++)
		L[i] = &s->L[i], sp[i] = target;
	if (rc == OCB_OK && s->pc.global)
		rc = ocb_bsr_layers_global(L, s->lin, s->nsparse, target, sp);
	for (int i = 0; rc == OCB_OK && i < s->nsparse; i++)
		rc = ocb_bsr_layer_prune(&s->L[i], s->lin[i], sp[i], s->pc.regrow, &s->revived);
	free(sp);
	free(L);
	if (rc == OCB_OK)
		s->events++;
	return rc;
}

/* OpenBLAS keeps the dense products on one thread so its pool does not spin against the
 * sparse kernels' OpenMP team (REFERENCE.md section 6). */
static void slm_blas_one(void)
{
	openblas_set_num_threads(1);
}

static int slm_step(void *st, long step, float lr, double *loss)
{
	struct slm_state *s = st;
	struct lm_model *m = s->m;
	const uint8_t *train = s->sp.train;
	int B = s->batch, T = s->sp.seq, rc;
	for (int b = 0; b < B; b++) { /* as trainer_lm.c: B random windows of T+1 bytes */
		size_t o = (size_t)ocb_rng_below(&s->rng, s->sp.ntrain - (size_t)T);
		memcpy(s->in + (size_t)b * T, train + o, (size_t)T);
		for (int t = 0; t < T; t++)
			s->tgt[(size_t)b * T + t] = train[o + (size_t)t + 1];
	}
	int due = ocb_prune_due(&s->pc, step);
	slm_blas_one();
	for (int i = 0; i < s->nsparse; i++)
		s->L[i].dense_grad = due && s->pc.regrow > 0 && step < s->pc.t1;
	double lsum;
	long cnt;
	lm_zero_grad(m);
	rc = lm_forward(m, s->in, s->tgt, B, T, &lsum, &cnt);
	if (rc == OCB_OK)
		rc = lm_backward(m);
	m->in = NULL, m->tgt = NULL;
	if (rc)
		return rc;
	slm_update(s, lr);
	*loss = lsum / (double)cnt;
	return due ? slm_prune(s, step) : OCB_OK;
}

static int slm_eval(void *st, int final, struct ocb_eval *ev)
{
	struct slm_state *s = st;
	const struct lm_train_spec *p = &s->sp;
	slm_blas_one();
	ev->accuracy = NAN;
	return lm_eval(s->m, p->val, p->nval, p->eval_window, p->eval_stride, p->eval_batch,
		       final ? p->final_eval_windows : p->eval_windows, &ev->loss, &ev->ppl,
		       &ev->scored);
}

static int slm_save(void *st, const char *path)
{
	struct slm_state *s = st;
	for (int i = 0; i < s->nsparse; i++) /* the params from the layers' stored blocks */
		ocb_bsr_layer_sync(&s->L[i], s->lin[i]);
	return lm_save(s->m, path);
}

/* Weights from an LM checkpoint of the same shape; masks from its non-zero blocks. */
static int slm_load(void *st, const char *path)
{
	struct slm_state *s = st;
	struct lm_model *tmp = NULL;
	int rc = lm_load(path, 0, &tmp);
	if (rc)
		return rc;
	if (tmp->nparams == s->m->nparams && tmp->cfg.d_model == s->m->cfg.d_model &&
	    tmp->cfg.n_layers == s->m->cfg.n_layers && tmp->cfg.ffn == s->m->cfg.ffn)
		memcpy(s->m->params, tmp->params, s->m->nparams * sizeof(float));
	else
		rc = ocb_seterr(OCB_EFORMAT, "%s: not the trainer's LM shape", path);
	lm_free(tmp);
	for (int i = 0; i < s->nsparse && rc == OCB_OK; i++)
		rc = ocb_bsr_layer_remask(&s->L[i], s->lin[i]);
	return rc;
}

const struct ocb_trainer ocb_trainer_bsr_lm = {
	.name = "bsr_lm",
	.create = slm_create,
	.info = slm_info,
	.step = slm_step,
	.evaluate = slm_eval,
	.save = slm_save,
	.load = slm_load,
	.free = slm_free,
};

void ocb_bsr_lm_stats(void *state, struct ocb_bsr_train_stats *st)
{
	struct slm_state *s = state;
	memset(st, 0, sizeof *st);
	for (int i = 0; i < s->nsparse; i++)
		ocb_bsr_layer_stats_add(&s->L[i], s->lin[i], st);
	st->events = s->events;
	st->revived = s->revived;
}
