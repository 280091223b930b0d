/* dist_train: data-parallel MLP training to a target, MLPerf HPC timing and logs (see
 * dist_train.h). */
#include "dist_train.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_time.h"
#include "../workloads/data_idx.h"
#include "mllog.h"

#define STOP_REACHED 1 /* on_eval's "target reached" (positive: not an error) */

void ocb_dist_train_defaults(struct ocb_dist_train_cfg *c)
{
	memset(c, 0, sizeof *c);
	c->lars = 1;
	c->global_batch = 8192;
	c->epochs = 20;
	c->lr = 10.0f;
	c->warmup_epochs = 2.0f;
	c->weight_decay = 5e-4f;
	c->label_smoothing = 0.1f;
	c->target = 0.88f;
	c->threads = 1;
	c->seed = 1;
	c->overlap_rounds = 32;
}

struct run {
	MPI_Comm comm;
	int rank, nranks;
	const struct ocb_dist_train_cfg *cfg;
	struct ocb_dist_train_result *res;
	struct ocb_mllog *log; /* NULL: no MLLOG */
};

static cJSON *meta_num(const char *k, double v)
{
	cJSON *m = cJSON_CreateObject();
	if (m)
		cJSON_AddNumberToObject(m, k, v);
	return m;
}

/* An event when this rank logs; otherwise value and meta are freed. */
#define LOG(r, type, key, value, meta)                                \
	((r)->log ? OCB_MLLOG((r)->log, type, key, value, meta)       \
		  : (cJSON_Delete(value), cJSON_Delete(meta), OCB_OK))

static int on_event(void *c, enum ocb_train_event ev, long step, int epoch)
{
	struct run *r = c;
	static const char *const keys[] = {"epoch_start", "epoch_stop", "eval_start", "eval_stop"};
	static const enum ocb_mllog_type types[] = {OCB_MLLOG_START, OCB_MLLOG_END,
						    OCB_MLLOG_START, OCB_MLLOG_END};
	(void)step;
	return LOG(r, types[ev], keys[ev], NULL, meta_num("epoch_num", epoch));
}

static int on_eval(void *c, const struct ocb_eval *ev)
{
	struct run *r = c;
	int rc = LOG(r, OCB_MLLOG_POINT, "eval_accuracy", cJSON_CreateNumber(ev->accuracy),
		     meta_num("epoch_num", ev->epoch));
	r->res->accuracy = ev->accuracy;
	r->res->epochs = ev->epoch;
	if (ev->accuracy > r->res->best_accuracy)
		r->res->best_accuracy = ev->accuracy;
	/* every rank holds the same (all-reduced) accuracy: all stop together */
	if (!rc && ev->accuracy >= r->cfg->target) {
		r->res->reached = 1;
		return STOP_REACHED;
	}
	return rc;
}

/* Nodes: distinct processor names over comm (rank 0 counts, then broadcasts). */
static int count_nodes(MPI_Comm comm, int rank, int n)
{
	char name[MPI_MAX_PROCESSOR_NAME] = "", *all = NULL;
	int len, nodes = 1;
	MPI_Get_processor_name(name, &len);
	if (rank == 0)
		all = calloc((size_t)n, MPI_MAX_PROCESSOR_NAME);
	MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
		   0, comm);
	if (rank == 0 && all) {
		nodes = 0;
		for (int i = 0; i < n; i++) {
			int seen = 0;
			for (int j = 0; j < i && !seen; j++)
				seen = !strcmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME,
					       all + (size_t)j * MPI_MAX_PROCESSOR_NAME);
			nodes += !seen;
		}
	}
	free(all);
	MPI_Bcast(&nodes, 1, MPI_INT, 0, comm);
	return nodes;
}

/* The submission and hyper-parameter events (before init_stop). */
static void log_config(struct run *r, const struct ocb_idx_set *tr, const struct ocb_idx_set *te)
{
	const struct ocb_dist_train_cfg *c = r->cfg;
	int nodes = count_nodes(r->comm, r->rank, r->nranks);
	LOG(r, OCB_MLLOG_POINT, "seed", cJSON_CreateNumber((double)c->seed), NULL);
	LOG(r, OCB_MLLOG_POINT, "global_batch_size", cJSON_CreateNumber(c->global_batch), NULL);
	LOG(r, OCB_MLLOG_POINT, "opt_name", cJSON_CreateString(c->lars ? "lars" : "sgd"), NULL);
	LOG(r, OCB_MLLOG_POINT, "opt_base_learning_rate", cJSON_CreateNumber(c->lr), NULL);
	LOG(r, OCB_MLLOG_POINT, "opt_learning_rate_warmup_epochs",
	    cJSON_CreateNumber(c->warmup_epochs), NULL);
	LOG(r, OCB_MLLOG_POINT, c->lars ? "lars_opt_weight_decay" : "opt_weight_decay",
	    cJSON_CreateNumber(c->weight_decay), NULL);
	LOG(r, OCB_MLLOG_POINT, "number_of_nodes", cJSON_CreateNumber(nodes), NULL);
	/* CPU ranks stand for accelerators: ranks per node */
	LOG(r, OCB_MLLOG_POINT, "accelerators_per_node",
	    cJSON_CreateNumber((r->nranks + nodes - 1) / nodes), NULL);
	int ntr = c->max_train > 0 && c->max_train < tr->n ? c->max_train : tr->n;
	LOG(r, OCB_MLLOG_POINT, "train_samples", cJSON_CreateNumber(ntr), NULL);
	LOG(r, OCB_MLLOG_POINT, "eval_samples", cJSON_CreateNumber(te->n), NULL);
}

static int open_log(struct run *r)
{
	char path[4200];
	const char *sub[][2] = {{"submission_benchmark", "mlp_fmnist_dp"},
				{"submission_division", "open"},
				{"submission_org", "ocbench"},
				{"submission_platform", "cpu"},
				{"submission_status", "research"}};
	if (!r->cfg->out_dir)
		return OCB_OK;
	snprintf(path, sizeof path, "%s/mllog_dist_mlp_rank%d.txt", r->cfg->out_dir, r->rank);
	int rc = ocb_mllog_open(path, &r->log);
	for (size_t i = 0; !rc && i < sizeof sub / sizeof *sub; i++)
		rc = OCB_MLLOG(r->log, OCB_MLLOG_POINT, sub[i][0], cJSON_CreateString(sub[i][1]),
			       NULL);
	return rc;
}

/* The slowest rank's value of t. */
static double slowest(MPI_Comm comm, double t)
{
	MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
	return t;
}

/* staging: both splits read, standardised with the training set's statistics */
static int stage(struct run *r, struct ocb_idx_set *tr, struct ocb_idx_set *te)
{
	double t0 = ocb_now_s();
	LOG(r, OCB_MLLOG_START, "staging_start", NULL, NULL);
	int rc = ocb_fmnist_load(r->cfg->data_dir, 1, tr);
	if (!rc)
		rc = ocb_fmnist_load(r->cfg->data_dir, 0, te);
	if (!rc) {
		ocb_idx_standardize(tr);
		te->mean = tr->mean;
		te->std = tr->std;
		if (r->cfg->max_test > 0 && r->cfg->max_test < te->n)
			te->n = r->cfg->max_test;
	}
	LOG(r, OCB_MLLOG_END, "staging_stop", NULL, NULL);
	r->res->staging_s = slowest(r->comm, ocb_now_s() - t0);
	/* all ranks go on or none: a rank alone in a collective would wait forever */
	int bad = rc != OCB_OK;
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, r->comm);
	return rc ? rc : bad ? ocb_seterr(OCB_ERUNTIME, "dist train: another rank could not "
							 "read the dataset") : OCB_OK;
}

static void fill_cfg(const struct ocb_dist_train_cfg *c, struct ocb_train_cfg *t)
{
	ocb_train_cfg_defaults(t);
	t->opt = OCB_OPTIM_SGD;
	t->momentum = 0.9f;
	t->weight_decay = c->weight_decay;
	t->batch = c->global_batch;
	t->epochs = c->epochs;
	t->lr = c->lr;
	t->min_lr = 0.0f;
	t->warmup_epochs = c->warmup_epochs;
	t->decay_power = 2.0f;
	t->threads = c->threads;
	t->seed = c->seed;
	t->log_every = 1 << 30;
	t->eval_every = 1;
}

/* run_start .. run_stop; results from the driver and the trainer's stats. */
static int train(struct run *r, void *st, const struct ocb_train_cfg *tc)
{
	struct ocb_train_cb cb = {.ctx = r, .on_event = on_event, .on_eval = on_eval};
	struct ocb_train_result tr;
	struct ocb_dist_train_result *res = r->res;
	MPI_Barrier(r->comm);
	double t0 = ocb_now_s(), cpu0 = ocb_process_cpu_s();
	LOG(r, OCB_MLLOG_START, "run_start", NULL, NULL);
	int rc = ocb_trainer_run(&ocb_trainer_mlp_dp, st, tc, &cb, &tr);
	if (rc == STOP_REACHED)
		rc = OCB_OK;
	cJSON *m = cJSON_CreateObject();
	if (m)
		cJSON_AddStringToObject(m, "status", !rc && res->reached ? "success" : "aborted");
	LOG(r, OCB_MLLOG_END, "run_stop", NULL, m);
	double wall = ocb_now_s() - t0, share = wall > 0 ? (ocb_process_cpu_s() - cpu0) / wall
							 : NAN;
	res->run_s = slowest(r->comm, wall);
	MPI_Allreduce(MPI_IN_PLACE, &share, 1, MPI_DOUBLE, MPI_MIN, r->comm);
	res->cpu_share = share;
	if (rc)
		return rc;
	res->time_to_train_s = res->reached ? res->run_s : NAN;
	res->steps = tr.steps;
	res->step_rank_s = tr.steps ? tr.step_time / tr.steps : NAN;
	res->step_s = slowest(r->comm, res->step_rank_s);
	res->samples_per_s = res->step_s > 0 ? tc->batch / res->step_s : NAN;
	res->step_flops = tr.info.step_flops;
	ocb_dp_stats(st, &res->dp);
	/* means over ranks: the step waits for the slowest rank of each step, which the
	 * projection models from the spread (compute_cv), not from the slowest mean */
	double cs[2] = {isfinite(res->dp.compute_share) ? res->dp.compute_share : 0.0,
			isfinite(res->dp.compute_cv) ? res->dp.compute_cv : 0.0};
	MPI_Allreduce(MPI_IN_PLACE, cs, 2, MPI_DOUBLE, MPI_SUM, r->comm);
	res->compute_share = cs[0] / r->nranks;
	res->compute_cv = cs[1] / r->nranks;
	res->compute_per_sample_s =
		slowest(r->comm, res->dp.compute_s / ((double)tc->batch / r->nranks));
	return OCB_OK;
}

int ocb_dist_train(MPI_Comm comm, const struct ocb_dist_train_cfg *c,
		   struct ocb_dist_train_result *res)
{
	struct ocb_idx_set tr = {0}, te = {0};
	struct ocb_dp_spec sp = {0};
	struct ocb_train_cfg tc;
	struct run r = {.comm = comm, .cfg = c, .res = res};
	void *st = NULL;
	int rc;

	memset(res, 0, sizeof *res);
	res->time_to_train_s = NAN;
	MPI_Comm_rank(comm, &r.rank);
	MPI_Comm_size(comm, &r.nranks);
	res->nranks = r.nranks;
	if ((rc = open_log(&r)))
		goto out;
	double t0 = ocb_now_s();
	LOG(&r, OCB_MLLOG_START, "init_start", NULL, NULL);
	if (r.log)
		OCB_MLLOG_CACHE_CLEAR(r.log);
	if ((rc = stage(&r, &tr, &te)))
		goto out;
	log_config(&r, &tr, &te);
	ocb_mlp_default_cfg(&sp.mlp.model);
	sp.mlp.train = &tr;
	sp.mlp.test = &te;
	sp.mlp.max_train = c->max_train;
	sp.comm = comm;
	sp.lars = c->lars;
	sp.label_smoothing = c->label_smoothing;
	fill_cfg(c, &tc);
	if ((rc = ocb_trainer_mlp_dp.create(&sp, &tc, &st)))
		goto out;
	LOG(&r, OCB_MLLOG_END, "init_stop", NULL, NULL);
	/* init excludes staging (MLPerf HPC 3.0 times staging apart) */
	res->init_s = slowest(comm, ocb_now_s() - t0) - res->staging_s;
	rc = train(&r, st, &tc);
	/* after run_stop: the time-based overlap is a measurement, not part of the score */
	if (!rc && r.nranks > 1 && c->overlap_rounds > 0) {
		/* the backward of the training, so its BLAS threads (the driver restored the
		 * library's default, all cores, when the run ended) */
		int old = openblas_get_num_threads();
		openblas_set_num_threads(c->threads > 0 ? c->threads : 1);
		rc = ocb_dp_overlap_measure(st, c->overlap_rounds, &res->overlap);
		openblas_set_num_threads(old);
	}
out:
	ocb_trainer_mlp_dp.free(st);
	ocb_idx_release(&tr);
	ocb_idx_release(&te);
	ocb_mllog_close(r.log);
	return rc;
}
