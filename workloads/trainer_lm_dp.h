/* trainer_lm_dp: data-parallel training of the byte LM (trainer_lm.h) over MPI ranks,
 * behind the trainer interface. cfg->batch is the GLOBAL number of sequences per step;
 * every rank draws the same B window offsets from one stream of the seed and takes its
 * slice of B/p windows, so 1 and p ranks train on the same data. After the local
 * backward, the gradient (mean over the rank's tokens) is all-reduced in buckets of
 * bucket_bytes with MPI_Iallreduce and averaged (every rank scores the same number of
 * tokens). The LM's backward is one call (model_lm.c), so its all-reduce is NOT
 * overlapped with backward: only the MLP trainer (trainer_dp.h) overlaps. Gradient
 * clipping and the optimizer (AdamW / SGD, norm gains not decayed) run on the reduced
 * gradient, identically on every rank. Evaluation runs on every rank on the same
 * windows (identical weights: identical results). Deterministic for a given rank count. */
#ifndef OCB_TRAINER_LM_DP_H
#define OCB_TRAINER_LM_DP_H

#include <mpi.h>

#include "trainer.h"
#include "trainer_lm.h"

struct ocb_lm_dp_spec {
	struct lm_train_spec lm;
	MPI_Comm comm;
	size_t bucket_bytes; /* 0: 1 MiB */
};

extern const struct ocb_trainer ocb_trainer_lm_dp;

/* Mean seconds per step spent in the gradient all-reduce (this rank). */
double ocb_lm_dp_comm_s(void *state);

#endif
