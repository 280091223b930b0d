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
	double compute_share; /* process CPU / wall time of the compute phases (data,
				 forward, backward with its polls; not the final wait):
				 the share of a core this rank got while it computed (below 1
				 when other processes or ranks share the core; unlike CPU / wall
				 of the whole run it leaves out MPI's busy waits) */
	double compute_cv;    /* standard deviation / mean of the compute phase's wall time
				 over steps (NaN: fewer than 2 steps): how much one step's
				 compute varies, so how long the others wait for the slowest */
	size_t grad_bytes;
};

extern const struct ocb_trainer ocb_trainer_mlp_dp;

/* Stats of a state made by ocb_trainer_mlp_dp.create. */
void ocb_dp_stats(void *state, struct ocb_dp_stats *st);

/* The overlap measured by time (issue 12): per round, on one micro-batch of the training
 * set (forward once, untimed; the weights are not updated, the data order is untouched,
 * so training stays deterministic), three timings after a barrier, slowest rank:
 *   bwd      backward with no communication
 *   alone    blocking MPI_Allreduce of the same buckets, nothing else
 *   bwd_comm backward with MPI_Iallreduce started per bucket as it completes and
 *            MPI_Testsome polls between GEMM slices (Open MPI progresses inside MPI
 *            calls), plus the wait for what is still in flight once every rank has ended
 *            backward (the barrier between is load imbalance and is not counted)
 * The order of bwd and bwd_comm alternates between rounds (drift). The all-reduce's
 * exposed time is the extra step time it adds: exposed = bwd_comm - bwd, per round
 * (paired); hidden share = 1 - median(exposed) / median(alone), with the 95% CI of the
 * median of exposed (order statistics) carried into a CI of the share. The minima over
 * rounds give a second estimate (the noise of a shared machine mostly adds time). On an
 * oversubscribed node the polls are off, as in training. */
struct ocb_dp_overlap {
	int rounds;
	double bwd_s, bwd_comm_s, alone_s;  /* medians over rounds, slowest rank */
	double exposed_s;                   /* median of the paired bwd_comm - bwd */
	double exposed_lo_s, exposed_hi_s;  /* its 95% CI */
	double hidden;                      /* 1 - exposed / alone, clamped to [0, 1] */
	double hidden_lo, hidden_hi;        /* from the CI of exposed, clamped */
	double hidden_min;                  /* 1 - (min bwd_comm - min bwd) / min alone */
};

/* Measures it (collective over the trainer's comm; rounds 3..64). OCB_EINVAL on one rank
 * (nothing to hide), OCB_ERUNTIME (MPI), OCB_ENOMEM. The training's own counters
 * (ocb_dp_stats) are left as they were. */
int ocb_dp_overlap_measure(void *state, int rounds, struct ocb_dp_overlap *o);

#endif
