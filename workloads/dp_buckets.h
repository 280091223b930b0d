/* dp_buckets: gradient buckets of a data-parallel step, all-reduced with non-blocking
 * MPI_Iallreduce (sum, in place) as soon as the backward pass has finished each one, and
 * polled (MPI_Testall) between the chunks of backward work so that MPI makes progress
 * while the next chunk computes (Open MPI progresses non-blocking collectives inside MPI
 * calls). Time spent inside MPI (polls + the final wait, after a barrier that absorbs
 * the other ranks' lateness) is the EXPOSED communication; the same non-blocking
 * all-reduce of the same buckets with nothing to overlap, timed apart, is the whole cost;
 * the time-hidden share is 1 - exposed / whole. Because a shared machine's scheduler
 * stalls single MPI calls by milliseconds, the progress-based share is kept too: the
 * floats whose all-reduce was complete when the slowest rank ended backward (a poll
 * right after the barrier), over all floats
 * (a bucket's cost grows with its size, so this is the share of the work hidden)
 * (Goyal et al. 2017 and Yamazaki et al. 2019 overlap the
 * all-reduce with backward the same way).
 *
 * A bucket is a contiguous range of the flat gradient block: a chunk of rows of one
 * layer's weight gradient; the layer's last chunk also holds its bias (W_i then b_i are
 * adjacent in model_mlp's layout). */
#ifndef OCB_DP_BUCKETS_H
#define OCB_DP_BUCKETS_H

#include <mpi.h>
#include <stddef.h>

#include "model_mlp.h"

struct ocb_dp_bucket {
	int layer;
	int row0, row1;     /* weight rows [row0, row1) of the layer */
	size_t off, len;    /* range of the gradient block (floats) */
};

struct ocb_dp_buckets {
	MPI_Comm comm;
	int nranks;
	struct ocb_dp_bucket *b;
	MPI_Request *req;
	int n, started;
	int quiet;          /* 1: no progress polls during backward (oversubscribed node: Open
			       MPI then yields the core on every idle poll, a whole time slice) */
	int *idx;           /* [n] scratch of MPI_Testsome */
	double done_floats; /* accumulated: floats of buckets whose all-reduce completed
			       before backward ended (seen done by a poll) */
	double all_floats;  /* accumulated: floats all-reduced */
	double exposed_s;   /* accumulated time inside MPI (polls + final wait) */
	double wait_s;      /* the part of exposed_s in the final wait */
	long polls;
	double skew_s;      /* accumulated wait for the slowest rank to finish backward */
};

/* Plans the buckets of m: about bucket_bytes each, never crossing a layer, in backward
 * order (last layer first). OCB_ENOMEM / OCB_EINVAL (bias not adjacent to its weights). */
int ocb_dp_buckets_init(struct ocb_dp_buckets *bk, const struct ocb_mlp *m, MPI_Comm comm,
			size_t bucket_bytes);
void ocb_dp_buckets_release(struct ocb_dp_buckets *bk);

/* Starts the all-reduce of bucket i (grads must be final for its range); then polls. */
int ocb_dp_buckets_start(struct ocb_dp_buckets *bk, int i, float *grads);
/* Tests the started requests once (progress); time counts as exposed. */
int ocb_dp_buckets_poll(struct ocb_dp_buckets *bk);
/* Waits for every started bucket; resets for the next step. A barrier first separates
 * the wait for slower ranks (load imbalance, skew_s) from communication still in flight
 * once every rank has finished backward (exposed_s). */
int ocb_dp_buckets_wait(struct ocb_dp_buckets *bk);
/* The same buckets all-reduced with MPI_Iallreduce + MPI_Waitall and nothing to
 * overlap: the cost the overlapped step hides (libnbc's non-blocking algorithms are not
 * the blocking ones). Median of `reps` rounds of the slowest rank. Collective. */
int ocb_dp_buckets_nonblocking_time(struct ocb_dp_buckets *bk, float *scratch, int reps,
				    double *time_s);
/* The blocking cost: best of `reps` rounds of MPI_Allreduce over every bucket of
 * scratch (a gradient-sized block), slowest rank. Collective. */
int ocb_dp_buckets_blocking_time(struct ocb_dp_buckets *bk, float *scratch, int reps,
				 double *time_s);

#endif
