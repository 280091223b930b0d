/* trainer_dp: data-parallel training of the MLP over MPI ranks, behind the trainer
 * interface (trainer.h), in the large-mini-batch recipe of Goyal et al. 2017 and Yamazaki
 * et al. 2019 (REFERENCE.md §1):
 *   - cfg->batch is the GLOBAL batch; each of the p ranks takes a shard of batch/p
 *     examples per step (same shuffled order on every rank: one stream from the seed);
 *   - a shard larger than micro_batch is processed in accumulation micro-batches
 *     (gradients summed), so a global batch of 8,192 and beyond runs on few ranks;
 *   - gradients of the last micro-batch are all-reduced in buckets with MPI_Iallreduce
 *     started during backward (dp_buckets.h), overlap measured; MPI is polled between
 *     slices of the backward GEMMs unless the node is oversubscribed;
 *   - optimizer: LARS (optim_lars.h; eta lars_eta, cfg momentum and weight_decay; biases
 *     exempt) or cfg->opt (SGD momentum / AdamW as optim.h, biases not decayed);
 *   - softmax cross-entropy with label smoothing eps: target (1-eps) onehot + eps/K
 *     (Szegedy et al., "Rethinking the Inception Architecture", CVPR 2016).
 * Learning-rate warm-up and decay are the driver's (cfg warmup_*, decay_power).
 * step and evaluate return global values (reduced over ranks). Deterministic for a given
 * rank count: same seed -> same losses (MPI's sum order is fixed for a rank count). */
#ifndef OCB_TRAINER_DP_H
#define OCB_TRAINER_DP_H

#include <mpi.h>

#include "trainer.h"
#include "trainer_mlp.h"

struct ocb_dp_spec {
	struct ocb_mlp_spec mlp;
	MPI_Comm comm;
	int micro_batch;         /* rows per forward/backward on a rank; 0: 1024 */
	float label_smoothing;   /* 0..1 */
	int lars;                /* 1: LARS instead of cfg->opt */
	float lars_eta;          /* trust coefficient; 0: 0.001 */
	size_t bucket_bytes;     /* 0: 64 KiB (small last buckets: little left exposed) */
};

/* Communication and overlap of the steps so far (all ranks agree on the step counts;
 * times are this rank's). */
struct ocb_dp_stats {
	int nranks, accum, micro, nbuckets;
	long steps;
	double blocking_s;    /* blocking MPI_Allreduce of all buckets (best of 3, slowest rank) */
	double nonblocking_s; /* Iallreduce + Waitall of all buckets, nothing to overlap
				 (median of 5, slowest rank): the cost to hide */
	double exposed_s;     /* median over steps: time inside MPI during and after backward,
				 without the wait for slower ranks (median: a rank descheduled
				 by the OS on a shared machine stalls single steps) */
	double exposed_mean_s;
	double wait_s;        /* mean per step: the part of exposed in the final wait (the rest
				 is the polls' own time) */
	double polls;         /* mean per step */
	int oversubscribed;   /* more ranks than CPUs on a node: no polls during backward */
	double skew_s;        /* mean per step: wait for the slowest rank (load imbalance) */
	double hidden_share;  /* 1 - exposed / nonblocking, clamped to [0, 1]; NaN on one rank */
	double hidden_work;   /* share of the all-reduced floats whose all-reduce completed
				 before backward ended (progress-based; NaN on one rank) */
	double opt_s;         /* mean per step: the optimizer update (every rank does all) */
	double compute_s;     /* mean per step: step time minus exposed comm, skew, optimizer:
				 data gathering, forward, backward of this rank's shard */
	size_t grad_bytes;
};

extern const struct ocb_trainer ocb_trainer_mlp_dp;

/* Stats of a state made by ocb_trainer_mlp_dp.create. */
void ocb_dp_stats(void *state, struct ocb_dp_stats *st);

#endif
