/* dist_train: the MLPerf-HPC-style data-parallel training run of the distributed suite:
 * the MLP on Fashion-MNIST with workloads/trainer_dp.h on every rank of comm, until the
 * test accuracy reaches `target` or the epoch budget ends. Time-to-train is split as
 * MLPerf HPC does: staging (reading the dataset), init (model, optimizer, buffers, the
 * all-reduce calibration), run (run_start .. run_stop: training + evaluations). Every
 * rank writes its own MLLOG file (out_dir/mllog_dist_mlp_rank<R>.txt) that follows the
 * MLPerf HPC 3.0 common rules (collect/mllog_rules.h); rank 0's is authoritative.
 * Collective over comm; the result is rank 0's view (global values are the same on
 * every rank; times are the slowest rank's). */
#ifndef OCB_DIST_TRAIN_H
#define OCB_DIST_TRAIN_H

#include <mpi.h>
#include <stdint.h>

#include "../workloads/trainer_dp.h"

struct ocb_dist_train_cfg {
	const char *data_dir;    /* Fashion-MNIST files (NULL: the Debian package's) */
	const char *out_dir;     /* MLLOG files; NULL: no MLLOG */
	int lars;                /* 1: LARS, 0: SGD with momentum */
	int global_batch;        /* 8192 */
	int epochs;              /* budget */
	float lr;                /* peak, after warm-up */
	float warmup_epochs;
	float weight_decay;
	float label_smoothing;
	float target;            /* test accuracy that ends the run (0.88) */
	int max_train, max_test; /* 0: all */
	int threads;             /* OpenBLAS threads per rank */
	uint64_t seed;
	int overlap_rounds;      /* after training, on more than one rank: rounds of
				    ocb_dp_overlap_measure (0: none) */
};

/* LARS (eta 0.001, lr 10, momentum 0.9, wd 5e-4), global batch 8192, 20 epochs, 2 warm-up
 * epochs then polynomial decay (power 2), label smoothing 0.1, target 0.88, 1 thread,
 * 32 overlap rounds. */
void ocb_dist_train_defaults(struct ocb_dist_train_cfg *c);

struct ocb_dist_train_result {
	int nranks;
	int reached;            /* the target was reached */
	int epochs;             /* epochs run */
	double accuracy;        /* last evaluation */
	double best_accuracy;
	double staging_s, init_s, run_s; /* slowest rank */
	double time_to_train_s; /* run_s when reached, NaN otherwise (MLPerf: no score) */
	long steps;
	double step_s;          /* mean optimizer step (forward + backward + comm + update),
				   slowest rank */
	double step_rank_s;     /* the same on this rank */
	double samples_per_s;   /* global samples / step time */
	double compute_per_sample_s; /* rank compute / local samples (for the projection) */
	double cpu_share;       /* CPU time / wall time of this job's ranks over run_start ..
				   run_stop, the lowest over ranks: the share of a core the
				   slowest rank got (below 1 when other processes or more ranks
				   than cores share the CPUs; a dedicated node gives
				   min(1, cores / ranks)) */
	double compute_share;   /* the mean over ranks of ocb_dp_stats.compute_share: the
				   share of a core a rank got while computing */
	double compute_cv;      /* the mean over ranks of ocb_dp_stats.compute_cv */
	struct ocb_dp_stats dp; /* rank 0's */
	struct ocb_dp_overlap overlap; /* time-based overlap (rounds 0: not measured) */
	double step_flops;      /* all ranks */
};

/* Runs it. Errors: the dataset's (OCB_ENOENT ...), the trainer's, OCB_EIO for an MLLOG
 * file. A rank that fails makes the others fail at their next collective (MPI aborts the
 * job: Open MPI's default error handler). */
int ocb_dist_train(MPI_Comm comm, const struct ocb_dist_train_cfg *cfg,
		   struct ocb_dist_train_result *res);

#endif
