/* dist_sweep: the collectives table of the distributed suite (nccl-tests layout): every op
 * of kernels/coll.h, sizes min_bytes .. max_bytes in steps of `factor`, out-of-place and
 * in-place, then one alpha-beta(-gamma) fit per op (kernels/coll_model.h) on the
 * out-of-place times, and the plain MPI_Allreduce loop at `plain_bytes` beside the core's
 * own allreduce of that size. Iterations per size shrink with the size so a sweep costs
 * about `budget_s` per op and mode. Collective over comm; results are the same on every
 * rank. The plain loop and the core alternate in `plain_rounds` paired rounds (one loop
 * each, the order swapped every round): a shared machine's load drifts and stalls single
 * loops by more than the 10% to be seen, so the comparison is the median of the
 * per-round ratios with its 95% CI (both loops of a round see the same load), beside the
 * best of each. */
#ifndef OCB_DIST_SWEEP_H
#define OCB_DIST_SWEEP_H

#include <mpi.h>

#include "../kernels/coll.h"
#include "../kernels/coll_model.h"

struct ocb_dist_sweep_cfg {
	size_t min_bytes, max_bytes; /* 8 .. 256 MiB by default */
	int factor;                  /* size step (nccl-tests -f); 4 */
	double budget_s;             /* per op and mode, roughly */
	int trials;                  /* best of */
	size_t plain_bytes;          /* 64 MiB; 0: no plain loop */
	int plain_rounds;            /* paired rounds of core and plain loop; 16 */
};

void ocb_dist_sweep_defaults(struct ocb_dist_sweep_cfg *c);

struct ocb_dist_sweep {
	struct ocb_coll_point *pt; /* [npt] in op, size, mode order (malloc'd) */
	int npt;
	struct ocb_coll_model fit[OCB_COLL_NOPS];
	int fit_ok[OCB_COLL_NOPS];
	double gamma;              /* s/byte of a local fp32 add on this rank */
	double core_s, plain_s;    /* allreduce at plain_bytes: the core's and the plain loop's
				      best s/call over the rounds */
	double plain_ratio;        /* median over rounds of plain / core time of the round
				      (= core busbw / plain busbw); NaN: no plain loop */
	double plain_ratio_lo, plain_ratio_hi; /* its 95% CI */
	int plain_rounds;
	long wrong;                /* sum of #wrong over every point */
};

/* Runs the sweep. OCB_ENOMEM (buffers of max_bytes), OCB_ERUNTIME (MPI), OCB_EINVAL. On
 * failure *out holds nothing to release. */
int ocb_dist_sweep_run(MPI_Comm comm, const struct ocb_dist_sweep_cfg *cfg,
		       struct ocb_dist_sweep *out);
void ocb_dist_sweep_release(struct ocb_dist_sweep *s);

#endif
