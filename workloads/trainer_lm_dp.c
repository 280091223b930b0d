/* trainer_lm_dp: the data-parallel byte LM (see trainer_lm_dp.h). */
#include "trainer_lm_dp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"

struct lmdp_state {
	struct lm_model *m;
	struct ocb_lm_dp_spec sp;
	struct ocb_optim opt;
	struct ocb_rng rng;  /* window offsets: the same stream on every rank */
	size_t *off;         /* [global] this step's window offsets */
	uint8_t *in;         /* [local][seq] */
	int32_t *tgt;        /* [local][seq] */
	MPI_Request *req;
	int rank, nranks, global, local, nbuckets;
	size_t bucket;       /* floats per bucket */
	float grad_clip;
	long steps;
	double comm_sum;
};

static void lmdp_free(void *st)
{
	struct lmdp_state *s = st;
	if (!s)
		return;
	lm_free(s->m);
	ocb_optim_release(&s->opt);
	free(s->off);
	free(s->in);
	free(s->tgt);
	free(s->req);
	free(s);
}

static int lmdp_alloc(struct lmdp_state *s, const struct ocb_train_cfg *cfg)
{
	int T = s->sp.lm.seq, rc;
	size_t bb = s->sp.bucket_bytes ? s->sp.bucket_bytes : (size_t)1 << 20;
	s->bucket = bb / sizeof(float) ? bb / sizeof(float) : 1;
	s->nbuckets = (int)((s->m->nparams + s->bucket - 1) / s->bucket);
	s->off = malloc((size_t)s->global * sizeof *s->off);
	s->in = malloc((size_t)s->local * T);
	s->tgt = malloc((size_t)s->local * T * sizeof *s->tgt);
	s->req = malloc((size_t)s->nbuckets * sizeof *s->req);
	if (!s->off || !s->in || !s->tgt || !s->req)
		return ocb_seterr(OCB_ENOMEM, "lm dp train: out of memory");
	if ((rc = lm_reserve(s->m, s->local, T)))
		return rc;
	struct ocb_optim_cfg oc;
	ocb_train_cfg_optim(cfg, &oc);
	if ((rc = ocb_optim_init(&s->opt, &oc, s->m->nparams)))
		return rc;
	for (int i = 0; i < lm_ntensors(&s->m->cfg) && !rc; i++) {
		struct lm_tensor t;
		lm_tensor(s->m, i, &t);
		if (t.rows == 1) /* norm gains: not decayed */
			rc = ocb_optim_no_decay(&s->opt, (size_t)(t.data - s->m->params),
						(size_t)t.cols);
	}
	return rc;
}

static int lmdp_create(const void *spec, const struct ocb_train_cfg *cfg, void **out)
{
	const struct ocb_lm_dp_spec *sp = spec;
	struct lmdp_state *s = NULL;
	int rc;
	*out = NULL;
	if (!(s = calloc(1, sizeof *s)))
		return ocb_seterr(OCB_ENOMEM, "lm dp train: out of memory");
	s->sp = *sp;
	MPI_Comm_rank(sp->comm, &s->rank);
	MPI_Comm_size(sp->comm, &s->nranks);
	s->global = cfg->batch;
	s->grad_clip = cfg->grad_clip;
	if (cfg->batch < 1 || cfg->batch % s->nranks || sp->lm.seq < 1 || !sp->lm.train ||
	    sp->lm.ntrain < (size_t)sp->lm.seq + 2) {
		rc = ocb_seterr(OCB_EINVAL, "lm dp train: batch %d over %d ranks, seq %d, %zu "
					    "training bytes", cfg->batch, s->nranks, sp->lm.seq,
				sp->lm.ntrain);
		goto out;
	}
	s->local = cfg->batch / s->nranks;
	if ((rc = lm_create(&sp->lm.model, 1, cfg->seed, &s->m)) || (rc = lmdp_alloc(s, cfg)))
		goto out;
	ocb_rng_seed(&s->rng, cfg->seed);
	*out = s;
	s = NULL;
out:
	lmdp_free(s);
	return rc;
}

static void lmdp_info(void *st, struct ocb_train_info *in)
{
	struct lmdp_state *s = st;
	memset(in, 0, sizeof *in);
	in->samples_per_step = (long)s->global * s->sp.lm.seq;
	in->step_flops = 3.0 * lm_forward_flops(&s->m->cfg, s->global, s->sp.lm.seq);
	in->can_evaluate = s->sp.lm.nval > 0;
	in->nparams = s->m->nparams;
	in->weight_bytes = lm_weight_bytes(s->m);
	in->grad_bytes = s->m->nparams * sizeof(float);
	in->optimizer_bytes = ocb_optim_state_bytes(&s->opt);
	in->activation_bytes = s->m->arena_floats * sizeof(float);
}

/* Sum of the gradient block over ranks in buckets, then / p (mean of the rank means). */
static int allreduce_grads(struct lmdp_state *s)
{
	float *g = s->m->grads;
	size_t n = s->m->nparams;
	double t0 = MPI_Wtime();
	for (int b = 0; b < s->nbuckets; b++) {
		size_t o = (size_t)b * s->bucket, len = n - o < s->bucket ? n - o : s->bucket;
		if (MPI_Iallreduce(MPI_IN_PLACE, g + o, (int)len, MPI_FLOAT, MPI_SUM, s->sp.comm,
				   &s->req[b]) != MPI_SUCCESS)
			return ocb_seterr(OCB_ERUNTIME, "lm dp: MPI_Iallreduce failed");
	}
	if (MPI_Waitall(s->nbuckets, s->req, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
		return ocb_seterr(OCB_ERUNTIME, "lm dp: MPI_Waitall failed");
	float inv = 1.0f / (float)s->nranks;
	for (size_t i = 0; i < n; i++)
		g[i] *= inv;
	s->comm_sum += MPI_Wtime() - t0;
	return OCB_OK;
}

static int lmdp_step(void *st, long step, float lr, double *loss)
{
	struct lmdp_state *s = st;
	struct lm_model *m = s->m;
	const uint8_t *train = s->sp.lm.train;
	int T = s->sp.lm.seq, rc;
	(void)step;
	for (int b = 0; b < s->global; b++) /* all offsets: the same stream on every rank */
		s->off[b] = (size_t)ocb_rng_below(&s->rng, s->sp.lm.ntrain - (size_t)T);
	for (int b = 0; b < s->local; b++) {
		size_t o = s->off[(size_t)s->rank * s->local + b];
		memcpy(s->in + (size_t)b * T, train + o, (size_t)T);
		for (int t = 0; t < T; t++)
			s->tgt[(size_t)b * T + t] = train[o + (size_t)t + 1];
	}
	double acc[2] = {0, 0}; /* loss sum, scored tokens */
	long cnt;
	lm_zero_grad(m);
	rc = lm_forward(m, s->in, s->tgt, s->local, T, &acc[0], &cnt);
	if (rc == OCB_OK)
		rc = lm_backward(m);
	m->in = NULL, m->tgt = NULL;
	acc[1] = (double)cnt;
	if (!rc && s->nranks > 1) {
		rc = allreduce_grads(s);
		if (!rc && MPI_Allreduce(MPI_IN_PLACE, acc, 2, MPI_DOUBLE, MPI_SUM, s->sp.comm))
			rc = ocb_seterr(OCB_ERUNTIME, "lm dp: loss all-reduce failed");
	}
	if (rc)
		return rc;
	if (s->grad_clip > 0.0f)
		ocb_optim_clip_grad_norm(m->grads, m->nparams, s->grad_clip);
	ocb_optim_step(&s->opt, m->params, m->grads, lr);
	s->steps++;
	*loss = acc[0] / acc[1];
	return OCB_OK;
}

static int lmdp_eval(void *st, int final, struct ocb_eval *ev)
{
	struct lmdp_state *s = st;
	const struct lm_train_spec *p = &s->sp.lm;
	ev->accuracy = NAN;
	return lm_eval(s->m, p->val, p->nval, p->eval_window, p->eval_stride, p->eval_batch,
		       final ? p->final_eval_windows : p->eval_windows, &ev->loss, &ev->ppl,
		       &ev->scored);
}

static int lmdp_save(void *st, const char *path)
{
	struct lmdp_state *s = st;
	return s->rank == 0 ? lm_save(s->m, path) : OCB_OK;
}

/* Loads the weights of a checkpoint of the same config on every rank. */
static int lmdp_load(void *st, const char *path)
{
	struct lmdp_state *s = st;
	struct lm_model *tmp = NULL;
	int rc = lm_load(path, 0, &tmp);
	if (rc)
		return rc;
	if (tmp->nparams == s->m->nparams)
		memcpy(s->m->params, tmp->params, s->m->nparams * sizeof(float));
	else
		rc = ocb_seterr(OCB_EFORMAT, "%s: %zu parameters, the trainer's LM has %zu", path,
				tmp->nparams, s->m->nparams);
	lm_free(tmp);
	return rc;
}

double ocb_lm_dp_comm_s(void *st)
{
	struct lmdp_state *s = st;
	return s->steps ? s->comm_sum / s->steps : 0.0;
}

const struct ocb_trainer ocb_trainer_lm_dp = {
	.name = "lm_dp",
	.create = lmdp_create,
	.info = lmdp_info,
	.step = lmdp_step,
	.evaluate = lmdp_eval,
	.save = lmdp_save,
	.load = lmdp_load,
	.free = lmdp_free,
};
