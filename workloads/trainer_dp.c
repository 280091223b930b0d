/* trainer_dp: the data-parallel MLP trainer (see trainer_dp.h). */
#include "trainer_dp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/sgemm_det.h"
#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_stats.h"
#include "../common/ocb_time.h"
#include "dp_buckets.h"
#include "optim_lars.h"

/* Rows of a weight-gradient slice between two progress polls (~8 x in x n x 2 FLOPs). */
#define POLL_ROWS 8
/* Batch rows of an input-gradient slice between two polls. */
#define DX_ROWS 128

struct dp_state {
	struct ocb_mlp m;
	const struct ocb_idx_set *train, *test;
	MPI_Comm comm;
	int rank, nranks;
	int global, local, micro, accum; /* examples per step: all ranks, this rank, pass */
	int ntr;
	long per_epoch;
	float smooth;
	int use_lars;
	struct ocb_lars lars;
	struct ocb_optim opt;
	struct ocb_dp_buckets bk;
	struct ocb_rng rng;
	float *x;       /* [micro][dim] */
	int *y;         /* [micro] */
	float *dlogits; /* [micro][classes] */
	int *perm;      /* [ntr] */
	long steps;
	double exposed_sum, skew_sum, step_sum, opt_sum, blocking, nonblocking;
	double comp_wall, comp_cpu; /* summed over steps: the compute phase (data, forward,
				       backward with its polls), wall and process CPU s */
	double comp_sq;             /* sum over steps of the compute phase's wall squared */
	double *exposed; /* [cap_exposed] per step (the median needs them all) */
	long cap_exposed;
};

/* Smoothed softmax cross-entropy of z[n][k]: returns the SUM of the losses over rows;
 * d[n][k] = (softmax - target) * scale. */
static double xent_smooth(const float *z, const int *y, int n, int k, float eps, float scale,
			  float *d)
{
	double sum = 0.0;
	for (int i = 0; i < n; i++) {
		const float *zi = z + (size_t)i * k;
		float *di = d + (size_t)i * k, mx = zi[0];
		for (int j = 1; j < k; j++)
			mx = zi[j] > mx ? zi[j] : mx;
		double se = 0.0;
		for (int j = 0; j < k; j++)
			se += exp((double)(zi[j] - mx));
		double lse = log(se) + mx;
		for (int j = 0; j < k; j++) {
			double q = eps / k + (j == y[i] ? 1.0 - eps : 0.0);
			double p = exp(zi[j] - lse);
			sum -= q * (zi[j] - lse);
			di[j] = (float)((p - q) * scale);
		}
	}
	return sum;
}

/* Backward of the micro-batch in s->x (forward done, dlogits in s->dlogits); last: the
 * micro-batch whose gradients are final, so buckets start as they complete. */
static int backward(struct dp_state *s, int n, int last)
{
	struct ocb_mlp *m = &s->m;
	float *dcur = s->dlogits, *dnext = m->d[1] == dcur ? m->d[0] : m->d[1];
	int bi = 0, rc = OCB_OK, comm = last && s->nranks > 1;
	for (int i = m->cfg.nlayers - 1; i >= 0 && !rc; i--) {
		const struct ocb_linear *l = &m->layer[i];
		const float *xin = i == 0 ? s->x : m->act[i];
		for (int r = 0; r < n; r++)
			for (int o = 0; o < l->out; o++)
				l->gb[o] += dcur[(size_t)r * l->out + o];
		/* weight gradient first, bucket by bucket: gW[r0:r1] += dy[:, r0:r1]^T x, so
		 * its all-reduce overlaps this layer's dx and every layer below */
		for (; bi < s->bk.n && s->bk.b[bi].layer == i && !rc; bi++) {
			const struct ocb_dp_bucket *b = &s->bk.b[bi];
			/* in slices of POLL_ROWS rows, polling in between: MPI progresses the
			 * buckets already in flight only inside MPI calls */
			for (int r0 = b->row0; r0 < b->row1 && !rc; r0 += POLL_ROWS) {
				int r1 = r0 + POLL_ROWS < b->row1 ? r0 + POLL_ROWS : b->row1;
				ocb_sgemm_det(CblasTrans, CblasNoTrans, r1 - r0, l->in, n,
					      1.0f, dcur + r0, l->out, xin, l->in, 1.0f,
					      l->gw + (size_t)r0 * l->in, l->in, 0);
				if (comm)
					rc = ocb_dp_buckets_poll(&s->bk);
			}
			if (comm && !rc)
				rc = ocb_dp_buckets_start(&s->bk, bi, m->grads);
		}
		if (i == 0 || rc)
			break;
		/* dx[n][in] = dy W through the ReLU that made act[i], in row slices with polls */
		for (int r0 = 0; r0 < n && !rc; r0 += DX_ROWS) {
			int r1 = r0 + DX_ROWS < n ? r0 + DX_ROWS : n;
			ocb_sgemm_det(CblasNoTrans, CblasNoTrans, r1 - r0, l->in, l->out,
				      1.0f, dcur + (size_t)r0 * l->out, l->out, l->w, l->in, 0.0f,
				      dnext + (size_t)r0 * l->in, l->in, 0);
			if (comm)
				rc = ocb_dp_buckets_poll(&s->bk);
		}
		const float *a = m->act[i];
		for (size_t j = 0; j < (size_t)n * l->in; j++)
			dnext[j] = a[j] > 0.0f ? dnext[j] : 0.0f;
		float *t = dcur == s->dlogits ? m->d[0] : dcur;
		dcur = dnext;
		dnext = t;
	}
	return rc;
}

static int dp_step(void *st, long step, float lr, double *loss)
{
	struct dp_state *s = st;
	long b = step % s->per_epoch;
	int k = s->m.cfg.dims[s->m.cfg.nlayers], rc = OCB_OK;
	double t0 = MPI_Wtime(), exposed0 = s->bk.exposed_s, skew0 = s->bk.skew_s;
	double cpu0 = ocb_process_cpu_s();
	if (b == 0) /* new epoch: the same permutation on every rank (same stream) */
		for (int i = s->ntr - 1; i > 0; i--) {
			int j = (int)ocb_rng_below(&s->rng, (uint64_t)i + 1), t = s->perm[i];
			s->perm[i] = s->perm[j];
			s->perm[j] = t;
		}
	memset(s->m.grads, 0, s->m.nparams * sizeof(float));
	const int *mine = s->perm + b * s->global + (long)s->rank * s->local;
	double lsum = 0.0;
	for (int a = 0; a < s->accum && !rc; a++) {
		ocb_idx_gather(s->train, mine + (long)a * s->micro, 0, s->micro, s->x, s->y);
		const float *z = ocb_mlp_forward(&s->m, s->x, s->micro);
		/* 1/global: the all-reduced sum is the gradient of the global mean loss */
		lsum += xent_smooth(z, s->y, s->micro, k, s->smooth, 1.0f / s->global, s->dlogits);
		rc = backward(s, s->micro, a == s->accum - 1);
	}
	/* the compute phase ends here (the rest is the wait for MPI and the update); its
	 * polls stay in: a poll may yield the core (Open MPI on an oversubscribed node), so
	 * its wall time is not its CPU time and cannot be taken out of both */
	double comp = MPI_Wtime() - t0;
	s->comp_wall += comp;
	s->comp_sq += comp * comp;
	s->comp_cpu += ocb_process_cpu_s() - cpu0;
	if (!rc && s->nranks > 1) {
		rc = ocb_dp_buckets_wait(&s->bk);
		if (!rc && MPI_Allreduce(MPI_IN_PLACE, &lsum, 1, MPI_DOUBLE, MPI_SUM, s->comm))
			rc = ocb_seterr(OCB_ERUNTIME, "dp: loss all-reduce failed");
	}
	if (rc)
		return rc;
	*loss = lsum / s->global;
	double t_opt = MPI_Wtime();
	if (s->use_lars)
		ocb_lars_step(&s->lars, s->m.params, s->m.grads, lr);
	else
		ocb_optim_step(&s->opt, s->m.params, s->m.grads, lr);
	s->opt_sum += MPI_Wtime() - t_opt;
	if (s->steps == s->cap_exposed) {
		long cap = s->cap_exposed ? 2 * s->cap_exposed : 256;
		double *p = realloc(s->exposed, (size_t)cap * sizeof *p);
		if (!p)
			return ocb_seterr(OCB_ENOMEM, "dp train: out of memory");
		s->exposed = p;
		s->cap_exposed = cap;
	}
	s->exposed[s->steps++] = s->bk.exposed_s - exposed0;
	s->exposed_sum += s->bk.exposed_s - exposed0;
	s->skew_sum += s->bk.skew_s - skew0;
	s->step_sum += MPI_Wtime() - t0;
	return OCB_OK;
}

/* This rank's share of the test set, counts summed over ranks. */
static int dp_eval(void *st, int final, struct ocb_eval *ev)
{
	struct dp_state *s = st;
	const struct ocb_idx_set *te = s->test;
	int k = s->m.cfg.dims[s->m.cfg.nlayers];
	int lo = (int)((long)te->n * s->rank / s->nranks);
	int hi = (int)((long)te->n * (s->rank + 1) / s->nranks);
	double acc[2] = {0.0, 0.0}; /* correct, loss sum */
	(void)final;
	for (int first = lo; first < hi; first += s->micro) {
		int n = hi - first < s->micro ? hi - first : s->micro;
		ocb_idx_gather(te, NULL, first, n, s->x, s->y);
		const float *z = ocb_mlp_forward(&s->m, s->x, n);
		acc[1] += xent_smooth(z, s->y, n, k, 0.0f, 1.0f, s->dlogits);
		for (int i = 0; i < n; i++) {
			const float *zi = z + (size_t)i * k;
			int best = 0;
			for (int j = 1; j < k; j++)
				best = zi[j] > zi[best] ? j : best;
			acc[0] += best == s->y[i];
		}
	}
	if (s->nranks > 1 &&
	    MPI_Allreduce(MPI_IN_PLACE, acc, 2, MPI_DOUBLE, MPI_SUM, s->comm) != MPI_SUCCESS)
		return ocb_seterr(OCB_ERUNTIME, "dp: evaluation all-reduce failed");
	ev->accuracy = te->n ? acc[0] / te->n : NAN;
	ev->loss = te->n ? acc[1] / te->n : NAN;
	ev->ppl = NAN;
	ev->scored = te->n;
	return OCB_OK;
}

static void dp_free(void *st)
{
	struct dp_state *s = st;
	if (!s)
		return;
	ocb_mlp_release(&s->m);
	ocb_lars_release(&s->lars);
	ocb_optim_release(&s->opt);
	ocb_dp_buckets_release(&s->bk);
	ocb_free(s->x);
	ocb_free(s->dlogits);
	free(s->y);
	free(s->perm);
	free(s->exposed);
	free(s);
}

/* Shard and micro-batch sizes: local = global / p; accum = the fewest passes of at most
 * `micro` rows that divide local evenly. */
static int plan_batch(struct dp_state *s, const struct ocb_dp_spec *sp, int global)
{
	int mb = sp->micro_batch > 0 ? sp->micro_batch : 1024;
	if (global < 1 || global % s->nranks)
		return ocb_seterr(OCB_EINVAL, "dp train: global batch %d is not a multiple of %d "
					      "ranks", global, s->nranks);
	s->global = global;
	s->local = global / s->nranks;
	for (s->accum = (s->local + mb - 1) / mb; s->local % s->accum; s->accum++)
		;
	s->micro = s->local / s->accum;
	return OCB_OK;
}

/* The optimizer: LARS with one layer per weight matrix and exempt biases, or optim.h. */
static int make_optimizer(struct dp_state *s, const struct ocb_dp_spec *sp,
			  const struct ocb_train_cfg *cfg)
{
	int rc = OCB_OK;
	s->use_lars = sp->lars;
	if (sp->lars) {
		float eta = sp->lars_eta > 0.0f ? sp->lars_eta : 0.001f;
		rc = ocb_lars_init(&s->lars, s->m.nparams, eta, cfg->momentum, cfg->weight_decay);
		for (int i = 0; i < s->m.cfg.nlayers && !rc; i++) {
			size_t in = (size_t)s->m.cfg.dims[i], out = (size_t)s->m.cfg.dims[i + 1];
			rc = ocb_lars_add_layer(&s->lars, s->m.w_off[i], in * out, 0);
			if (!rc)
				rc = ocb_lars_add_layer(&s->lars, s->m.b_off[i], out, 1);
		}
		return rc;
	}
	struct ocb_optim_cfg oc;
	ocb_train_cfg_optim(cfg, &oc);
	if ((rc = ocb_optim_init(&s->opt, &oc, s->m.nparams)))
		return rc;
	for (int i = 0; i < s->m.cfg.nlayers && !rc; i++)
		rc = ocb_optim_no_decay(&s->opt, s->m.b_off[i], (size_t)s->m.cfg.dims[i + 1]);
	return rc;
}

static int alloc_buffers(struct dp_state *s)
{
	int dim = s->train->dim, k = s->m.cfg.dims[s->m.cfg.nlayers];
	s->x = ocb_alloc((size_t)s->micro * dim * sizeof(float));
	s->dlogits = ocb_alloc((size_t)s->micro * k * sizeof(float));
	s->y = malloc((size_t)s->micro * sizeof(int));
	s->perm = malloc((size_t)s->ntr * sizeof(int));
	if (!s->x || !s->dlogits || !s->y || !s->perm)
		return ocb_seterr(OCB_ENOMEM, "dp train: out of memory");
	for (int i = 0; i < s->ntr; i++)
		s->perm[i] = i;
	return OCB_OK;
}

/* More ranks on this node than online CPUs (MPI-3 shared-memory split: ranks per node). */
static int oversubscribed(MPI_Comm comm)
{
	MPI_Comm node;
	int local = 1, over;
	if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
	    MPI_SUCCESS) {
		MPI_Comm_size(node, &local);
		MPI_Comm_free(&node);
	}
	over = local > sysconf(_SC_NPROCESSORS_ONLN);
	MPI_Allreduce(MPI_IN_PLACE, &over, 1, MPI_INT, MPI_MAX, comm); /* all ranks alike */
	return over;
}

static int dp_create(const void *spec, const struct ocb_train_cfg *cfg, void **out)
{
	const struct ocb_dp_spec *sp = spec;
	const struct ocb_idx_set *tr = sp->mlp.train;
	struct dp_state *s = NULL;
	int rc;

	*out = NULL;
	if (!tr || !sp->mlp.test || tr->dim != sp->mlp.model.dims[0] ||
	    !(sp->label_smoothing >= 0.0f && sp->label_smoothing < 1.0f))
		return ocb_seterr(OCB_EINVAL, "dp train: need train and test sets of the model's "
					      "input size, label smoothing in [0, 1)");
	if (!(s = calloc(1, sizeof *s)))
		return ocb_seterr(OCB_ENOMEM, "dp train: out of memory");
	s->comm = sp->comm;
	MPI_Comm_rank(s->comm, &s->rank);
	MPI_Comm_size(s->comm, &s->nranks);
	s->train = tr;
	s->test = sp->mlp.test;
	s->smooth = sp->label_smoothing;
	s->ntr = sp->mlp.max_train > 0 && sp->mlp.max_train < tr->n ? sp->mlp.max_train : tr->n;
	if ((rc = plan_batch(s, sp, cfg->batch)))
		goto out;
	if ((s->per_epoch = s->ntr / s->global) < 1) {
		rc = ocb_seterr(OCB_EINVAL, "dp train: %d examples, fewer than one global batch "
					    "of %d", s->ntr, s->global);
		goto out;
	}
	if ((rc = ocb_mlp_init(&s->m, &sp->mlp.model, s->micro)))
		goto out;
	ocb_mlp_init_weights(&s->m, cfg->seed); /* same seed: same weights on every rank */
	if ((rc = make_optimizer(s, sp, cfg)) || (rc = alloc_buffers(s)) ||
	    (rc = ocb_dp_buckets_init(&s->bk, &s->m, s->comm,
				      sp->bucket_bytes ? sp->bucket_bytes : 64 << 10)))
		goto out;
	s->bk.quiet = oversubscribed(s->comm);
	if (s->nranks > 1 &&
	    ((rc = ocb_dp_buckets_blocking_time(&s->bk, s->m.grads, 3, &s->blocking)) ||
	     (rc = ocb_dp_buckets_nonblocking_time(&s->bk, s->m.grads, 5, &s->nonblocking))))
		goto out;
	ocb_rng_seed(&s->rng, cfg->seed ^ 0x5deece66dULL);
	*out = s;
	s = NULL;
out:
	dp_free(s);
	return rc;
}

static void dp_info(void *st, struct ocb_train_info *in)
{
	struct dp_state *s = st;
	memset(in, 0, sizeof *in);
	in->steps_per_epoch = s->per_epoch;
	in->samples_per_step = s->global;
	in->step_flops = ocb_mlp_step_flops(&s->m, s->global); /* all ranks together */
	in->can_evaluate = 1;
	in->nparams = s->m.nparams;
	in->weight_bytes = ocb_mlp_weight_bytes(&s->m);
	in->grad_bytes = ocb_mlp_grad_bytes(&s->m);
	in->optimizer_bytes = s->use_lars ? s->m.nparams * sizeof(float)
					  : ocb_optim_state_bytes(&s->opt);
	in->activation_bytes = s->m.act_bytes;
}

void ocb_dp_stats(void *st, struct ocb_dp_stats *o)
{
	struct dp_state *s = st;
	memset(o, 0, sizeof *o);
	o->nranks = s->nranks;
	o->accum = s->accum;
	o->micro = s->micro;
	o->nbuckets = s->bk.n;
	o->steps = s->steps;
	o->blocking_s = s->blocking;
	o->grad_bytes = s->m.nparams * sizeof(float);
	o->nonblocking_s = s->nonblocking;
	o->exposed_s = s->steps ? ocb_median(s->exposed, (size_t)s->steps) : 0.0;
	o->exposed_mean_s = s->steps ? s->exposed_sum / s->steps : 0.0;
	o->wait_s = s->steps ? s->bk.wait_s / s->steps : 0.0;
	o->oversubscribed = s->bk.quiet;
	o->polls = s->steps ? (double)s->bk.polls / s->steps : 0.0;
	o->skew_s = s->steps ? s->skew_sum / s->steps : 0.0;
	o->opt_s = s->steps ? s->opt_sum / s->steps : 0.0;
	o->compute_s = s->steps ? (s->step_sum - s->exposed_sum - s->skew_sum - s->opt_sum) /
					  s->steps
				: 0.0;
	double h = s->nonblocking > 0.0 ? 1.0 - o->exposed_s / s->nonblocking : NAN;
	o->hidden_share = s->nranks > 1 && s->steps ? (h < 0.0 ? 0.0 : h > 1.0 ? 1.0 : h) : NAN;
	o->hidden_work = s->bk.all_floats > 0 ? s->bk.done_floats / s->bk.all_floats : NAN;
	o->compute_share = s->comp_wall > 0.0 ? s->comp_cpu / s->comp_wall : NAN;
	o->compute_cv = NAN;
	if (s->steps > 1 && s->comp_wall > 0.0) {
		double mean = s->comp_wall / s->steps;
		double var = (s->comp_sq - s->steps * mean * mean) / (s->steps - 1);
		o->compute_cv = var > 0.0 ? sqrt(var) / mean : 0.0;
	}
}

/* The slowest rank's t (collective). */
static double slowest_of(MPI_Comm comm, double t)
{
	MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
	return t;
}

/* One timed backward of the micro-batch whose forward is in s (dlogits ready): with
 * comm, the buckets start during backward (polls between GEMM slices) and what is still
 * in flight once every rank has finished is waited for. This rank's time is its backward
 * plus that final wait, without the barrier between them (the wait for a slower rank is
 * load imbalance, not communication); *dt is the slowest rank's. */
static int timed_backward(struct dp_state *s, int comm, double *dt)
{
	int rc;
	memset(s->m.grads, 0, s->m.nparams * sizeof(float));
	if (MPI_Barrier(s->comm) != MPI_SUCCESS)
		return ocb_seterr(OCB_ERUNTIME, "dp overlap: MPI_Barrier failed");
	double t0 = MPI_Wtime();
	if ((rc = backward(s, s->micro, comm)))
		return rc;
	double t1 = MPI_Wtime();
	if (MPI_Barrier(s->comm) != MPI_SUCCESS)
		return ocb_seterr(OCB_ERUNTIME, "dp overlap: MPI_Barrier failed");
	double t2 = MPI_Wtime();
	if (comm && MPI_Waitall(s->bk.n, s->bk.req, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
		return ocb_seterr(OCB_ERUNTIME, "dp overlap: MPI_Waitall failed");
	s->bk.started = 0;
	*dt = slowest_of(s->comm, (t1 - t0) + (MPI_Wtime() - t2));
	return OCB_OK;
}

/* The blocking all-reduce of every bucket of the gradient block, alone. */
static int timed_alone(struct dp_state *s, double *dt)
{
	if (MPI_Barrier(s->comm) != MPI_SUCCESS)
		return ocb_seterr(OCB_ERUNTIME, "dp overlap: MPI_Barrier failed");
	double t0 = MPI_Wtime();
	for (int i = 0; i < s->bk.n; i++)
		if (MPI_Allreduce(MPI_IN_PLACE, s->m.grads + s->bk.b[i].off, (int)s->bk.b[i].len,
				  MPI_FLOAT, MPI_SUM, s->comm) != MPI_SUCCESS)
			return ocb_seterr(OCB_ERUNTIME, "dp overlap: MPI_Allreduce failed");
	*dt = slowest_of(s->comm, MPI_Wtime() - t0);
	return OCB_OK;
}

static double min_of(const double *x, int n)
{
	double m = x[0];
	for (int i = 1; i < n; i++)
		m = x[i] < m ? x[i] : m;
	return m;
}

static double clamp01(double x)
{
	return x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
}

int ocb_dp_overlap_measure(void *st, int rounds, struct ocb_dp_overlap *o)
{
	struct dp_state *s = st;
	struct ocb_dp_buckets saved = s->bk; /* the training's counters stay as they were */
	double *t = NULL;
	int rc = OCB_OK, k = s->m.cfg.dims[s->m.cfg.nlayers];
	memset(o, 0, sizeof *o);
	if (s->nranks < 2)
		return ocb_seterr(OCB_EINVAL, "dp overlap: one rank has nothing to hide");
	rounds = rounds < 3 ? 3 : rounds > 64 ? 64 : rounds;
	if (!(t = malloc((size_t)rounds * 4 * sizeof *t)))
		return ocb_seterr(OCB_ENOMEM, "dp overlap: out of memory");
	double *bwd = t, *bwc = t + rounds, *alone = t + 2 * rounds, *diff = t + 3 * rounds;
	/* this rank's first shard of the current order: forward once, backward many times */
	ocb_idx_gather(s->train, s->perm + (long)s->rank * s->local, 0, s->micro, s->x, s->y);
	const float *z = ocb_mlp_forward(&s->m, s->x, s->micro);
	xent_smooth(z, s->y, s->micro, k, s->smooth, 1.0f / s->global,
		    s->dlogits);
	for (int r = 0; r < rounds && !rc; r++) {
		int first = r & 1; /* alternate which mode goes first */
		rc = timed_backward(s, first, first ? &bwc[r] : &bwd[r]);
		if (!rc)
			rc = timed_alone(s, &alone[r]);
		if (!rc)
			rc = timed_backward(s, !first, first ? &bwd[r] : &bwc[r]);
		diff[r] = bwc[r] - bwd[r];
	}
	if (rc)
		goto out;
	struct ocb_stats ds;
	if ((rc = ocb_stats_compute(diff, (size_t)rounds, &ds)))
		goto out;
	o->rounds = rounds;
	o->bwd_s = ocb_median(bwd, (size_t)rounds);
	o->bwd_comm_s = ocb_median(bwc, (size_t)rounds);
	o->alone_s = ocb_median(alone, (size_t)rounds);
	o->exposed_s = ds.median;
	o->exposed_lo_s = ds.ci_low;
	o->exposed_hi_s = ds.ci_high;
	o->hidden = clamp01(1.0 - o->exposed_s / o->alone_s);
	o->hidden_lo = clamp01(1.0 - o->exposed_hi_s / o->alone_s);
	o->hidden_hi = clamp01(1.0 - o->exposed_lo_s / o->alone_s);
	o->hidden_min = clamp01(1.0 - (min_of(bwc, rounds) - min_of(bwd, rounds)) /
					  min_of(alone, rounds));
out:
	s->bk = saved;
	free(t);
	return rc;
}

/* Checkpoints: rank 0's model (every rank holds the same weights). */
static int dp_save(void *st, const char *path)
{
	struct dp_state *s = st;
	return s->rank == 0 ? ocb_mlp_save(&s->m, path) : OCB_OK;
}

static int dp_load(void *st, const char *path)
{
	struct dp_state *s = st;
	struct ocb_mlp tmp;
	int rc = ocb_mlp_load(path, 1, &tmp);
	if (rc)
		return rc;
	if (tmp.nparams == s->m.nparams)
		memcpy(s->m.params, tmp.params, s->m.nparams * sizeof(float));
	else
		rc = ocb_seterr(OCB_EFORMAT, "%s: %zu parameters, the trainer's model has %zu",
				path, tmp.nparams, s->m.nparams);
	ocb_mlp_release(&tmp);
	return rc;
}

const struct ocb_trainer ocb_trainer_mlp_dp = {
	.name = "mlp_dp",
	.create = dp_create,
	.info = dp_info,
	.step = dp_step,
	.evaluate = dp_eval,
	.save = dp_save,
	.load = dp_load,
	.free = dp_free,
};
