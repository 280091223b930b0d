/* rsb_peer: librsb (Debian librsb-dev, the Recursive Sparse Blocks library) as the tuned
 * sparse peer of the block-sparse kernels (bsr.h): the same matrix, its own autotuning
 * (timed apart from the products), its SpMM on the same row-major operands.
 *
 * The library is process-global: ocb_rsb_init() before anything else (idempotent,
 * paired with ocb_rsb_finalize(); the library itself is finalised once, at exit). Threads:
 * librsb's own OpenMP team, set per call through RSB_IO_WANT_EXECUTING_THREADS.
 * Errors: OCB_ERUNTIME with librsb's message (rsb_strerror_r), OCB_EINVAL, OCB_ENOMEM. */
#ifndef OCB_RSB_PEER_H
#define OCB_RSB_PEER_H

#include "bsr.h"

struct ocb_rsb {
	void *mtx;          /* struct rsb_mtx_t * */
	int m, k;
	long nnz;           /* scalar nonzeros given to librsb */
	double build_time;  /* s, COO -> RSB assembly */
	double tune_time;   /* s, rsb_tune_spmm (0 until ocb_rsb_tune) */
	double tune_speedup; /* librsb's own estimate of the tuning gain (1: unchanged) */
};

int ocb_rsb_init(void);
void ocb_rsb_finalize(void);

/* The same matrix as w (every stored entry of every stored block, zeros included, so
 * both sides do the same useful work). *r initialised here. */
int ocb_rsb_from_bsr(struct ocb_rsb *r, const struct ocb_bsr *w);
void ocb_rsb_release(struct ocb_rsb *r);

/* librsb's autotuning of the matrix (structure, not the thread count: threads stays
 * fixed so the comparison is at equal threads) for Y = W X with X [k][n] row-major.
 * max_time: the tuner's budget in seconds (0: librsb's default). Timed into tune_time. */
int ocb_rsb_tune(struct ocb_rsb *r, const float *x, float *y, int n, int threads,
		 double max_time);

/* Y[m][n] = W X[k][n] (row-major, ld = n), overwriting Y. */
int ocb_rsb_spmm(const struct ocb_rsb *r, const float *x, float *y, int n, int threads);

#endif
