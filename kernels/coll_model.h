/* coll_model: the latency-bandwidth(-computation) cost model of a collective and its
 * least-squares fit to measured times.
 *
 *   t(op, p, n bytes) = A(op,p) alpha + B(op,p) n beta + C(op,p) n gamma
 *
 * alpha: s per message (latency), beta: s per byte moved, gamma: s per byte reduced.
 * Coefficients (Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication
 * Operations in MPICH", IJHPCA 2005; REFERENCE.md §3 for the ring all-reduce):
 *   allreduce (ring)            A = 2(p-1)       B = 2(p-1)/p  C = (p-1)/p
 *   reduce_scatter (ring)       A = p-1          B = (p-1)/p   C = (p-1)/p
 *   allgather (ring)            A = p-1          B = (p-1)/p   C = 0
 *   bcast (scatter + allgather) A = log2 p + p-1 B = 2(p-1)/p  C = 0
 *   alltoall (pairwise)         A = p-1          B = (p-1)/p   C = 0
 * With p = 1 every coefficient is 0: the fit then reports the per-call overhead as alpha
 * and the local copy cost as beta (A = B = 1), so one rank still has a model.
 *
 * The fit: t = c0 + c1 n by least squares on the RELATIVE residuals (weights 1/t_i), so
 * that 8 B and 256 MiB points count alike; gamma is measured apart (a local fp32 add
 * loop), alpha = c0 / A, beta = (c1 - C gamma) / B. The error is the RMS and the max of
 * |model - measured| / measured over the points used. Pure math: no MPI here. */
#ifndef OCB_COLL_MODEL_H
#define OCB_COLL_MODEL_H

#include <stddef.h>

#include "coll.h"

struct ocb_coll_coef { double a, b, c; };

/* The coefficients above for op on p ranks (p >= 1). */
void ocb_coll_coef(enum ocb_coll_op op, int p, struct ocb_coll_coef *k);

struct ocb_coll_model {
	double alpha;       /* s */
	double beta;        /* s/byte (1/beta: link bandwidth in bytes/s) */
	double gamma;       /* s/byte reduced */
	double rms_rel_err; /* of the fit, 0..; NaN if no fit */
	double max_rel_err;
	int npoints;
};

/* Predicted time of one op of `bytes` on p ranks. */
double ocb_coll_model_time(const struct ocb_coll_model *m, enum ocb_coll_op op, int p,
			   double bytes);

/* Fits alpha, beta (gamma given) to npts measured (bytes[i], time_s[i]) of op on p ranks.
 * OCB_EINVAL if fewer than 2 points, a non-positive time, or all sizes equal. A negative
 * beta (gamma larger than the slope) is clamped to 0 and shows in the error. */
int ocb_coll_model_fit(enum ocb_coll_op op, int p, const double *bytes, const double *time_s,
		       int npts, double gamma, struct ocb_coll_model *m);

/* gamma of this core: best of `trials` timings of y[i] += x[i] over `bytes` of fp32 each
 * (s per byte of one operand). OCB_ENOMEM. */
int ocb_coll_measure_gamma(size_t bytes, int trials, double *gamma);

#endif
