/* coll: the collectives benchmark core (nccl-tests' measurement, on MPI).
 *
 * Five collectives on fp32 (allreduce with MPI_SUM, reduce_scatter, allgather, bcast from
 * rank 0, alltoall), out-of-place or in-place, over one pair of buffers allocated and
 * touched once for the largest size and reused for every size (fresh buffers of 64 MiB
 * spend most of a call in page faults on this kind of VM, REFERENCE.md §6).
 *
 * Sizes follow nccl-tests: `bytes` is the size of the larger of the send/receive buffers
 * (the whole vector of an allreduce or bcast; the full gathered vector of allgather; the
 * full input of reduce_scatter; the full send buffer of alltoall), so count = bytes / 4
 * and per-rank blocks are count / nranks. algbw = bytes / time; busbw = algbw * factor
 * with the nccl-tests factors (allreduce 2(n-1)/n; reduce_scatter, allgather, alltoall
 * (n-1)/n; bcast 1). Time of one call = the slowest rank's mean over a back-to-back loop
 * (MPI_MAX over ranks, as nccl-tests reports it), best of `trials` loops.
 *
 * Verification: before timing, buffers are filled with small integers (exact in fp32 for
 * any realistic rank count), the collective runs once and every element the rank
 * received is compared with its exact expected value: #wrong = mismatches summed over
 * ranks. Nothing here knows about the database. */
#ifndef OCB_COLL_H
#define OCB_COLL_H

#include <mpi.h>
#include <stddef.h>

enum ocb_coll_op {
	OCB_COLL_ALLREDUCE,
	OCB_COLL_REDUCE_SCATTER,
	OCB_COLL_ALLGATHER,
	OCB_COLL_BCAST,
	OCB_COLL_ALLTOALL,
	OCB_COLL_NOPS
};

/* "allreduce", "reduce_scatter", ... ; NULL for an out-of-range op. */
const char *ocb_coll_name(enum ocb_coll_op op);
/* The op of a name; OCB_EINVAL for an unknown one. */
int ocb_coll_parse(const char *name, enum ocb_coll_op *op);
/* nccl-tests' busbw / algbw for n ranks. */
double ocb_coll_busbw_factor(enum ocb_coll_op op, int nranks);
/* Largest size <= bytes that the op can run on n ranks (a multiple of 4 * n for the
 * blocked ops, of 4 otherwise); 0 if none. */
size_t ocb_coll_fit_bytes(enum ocb_coll_op op, int nranks, size_t bytes);

/* The reused buffers: send and recv, max_bytes each, 64-byte aligned, touched. */
struct ocb_coll_bufs {
	float *send, *recv;
	size_t max_bytes;
};

/* Allocates and touches both buffers. OCB_ENOMEM; on failure nothing to release. */
int ocb_coll_bufs_init(struct ocb_coll_bufs *b, size_t max_bytes);
void ocb_coll_bufs_release(struct ocb_coll_bufs *b);

/* One row of the nccl-tests table. */
struct ocb_coll_point {
	enum ocb_coll_op op;
	int nranks;
	int inplace;
	size_t bytes, count;  /* count: fp32 elements of `bytes` */
	int iters, trials;
	double time_s;        /* one call, slowest rank, best trial */
	double algbw, busbw;  /* bytes/s */
	long wrong;           /* elements that differed from the exact answer, all ranks */
};

/* Measures one (op, bytes, inplace) on comm: verification run, one warm-up loop, then
 * `trials` loops of `iters` calls. Collective: every rank of comm calls it with the same
 * arguments. bytes must be ocb_coll_fit_bytes-compatible and <= b->max_bytes
 * (OCB_EINVAL otherwise); an MPI error -> OCB_ERUNTIME. *pt is the same on all ranks. */
int ocb_coll_measure(MPI_Comm comm, struct ocb_coll_bufs *b, enum ocb_coll_op op, size_t bytes,
		     int inplace, int iters, int trials, struct ocb_coll_point *pt);

/* The same with the iteration count chosen from a timed warm-up call (slowest rank) so
 * that one loop of a trial lasts about target_s (1 to 1000 calls). pt->iters says. */
int ocb_coll_measure_for(MPI_Comm comm, struct ocb_coll_bufs *b, enum ocb_coll_op op,
			 size_t bytes, int inplace, double target_s, int trials,
			 struct ocb_coll_point *pt);

/* Iterations for a size so that a loop lasts about target_s given a rough bandwidth
 * guess: clamp(target_s * guess_bw / bytes, lo, hi). */
int ocb_coll_iters_for(size_t bytes, double target_s, double guess_bw, int lo, int hi);

/* One timed loop of `iters` calls of the core on the buffers as a measure left them (no
 * verification, no warm-up): the slowest rank's mean s/call. For interleaving the core
 * with another loop (collect/dist_sweep.c). Same argument rules as ocb_coll_measure. */
int ocb_coll_time(MPI_Comm comm, struct ocb_coll_bufs *b, enum ocb_coll_op op, size_t bytes,
		  int inplace, int iters, double *time_s);

/* The reference: a plain loop of out-of-place MPI_Allreduce (SUM, fp32) on its own two
 * buffers of `bytes` (allocated and touched once, one warm-up call), timed with
 * MPI_Wtime after a barrier, slowest rank. Nothing of the core above is used: it checks
 * that the core's numbers are MPI's. */
struct ocb_coll_plain {
	float *a, *s; /* send, receive */
	int count;    /* fp32 elements */
};

/* Allocates, touches and warms up (one call: collective). OCB_ENOMEM, OCB_ERUNTIME;
 * on failure nothing to release. */
int ocb_coll_plain_init(MPI_Comm comm, size_t bytes, struct ocb_coll_plain *p);
/* One timed loop of `iters` calls: the slowest rank's mean s/call. Collective. */
int ocb_coll_plain_time(MPI_Comm comm, const struct ocb_coll_plain *p, int iters,
			double *time_s);
void ocb_coll_plain_release(struct ocb_coll_plain *p);

/* init, best of `trials` loops, release. *time_s: one call. */
int ocb_coll_plain_allreduce(MPI_Comm comm, size_t bytes, int iters, int trials,
			     double *time_s);

#endif
