/* changepoint: change points in a series of medians over time, by E-Divisive means
 * (Matteson & James 2014, "A nonparametric approach for multiple change point analysis
 * of multivariate data", JASA; the variant without the kappa search that Apache Otava
 * and MongoDB's signal processing use).
 *
 * For a split of Z[a..b) at t, with X = Z[a..t), Y = Z[t..b), |.| the absolute difference:
 *   Q(t) = (n m / (n + m)) * ( 2/(n m) sum|X_i - Y_j| - 1/C(n,2) sum_{i<k}|X_i - X_k|
 *                              - 1/C(m,2) sum_{j<l}|Y_j - Y_l| )
 * The best split of the most promising segment is tested by permutation: the segment is
 * shuffled `permutations` times (fixed seed, so the answer is reproducible) and the
 * split is kept when p = (1 + #{max Q of a shuffle >= Q}) / (1 + permutations) < alpha;
 * then the segments are searched again (hierarchical bisection), until no split is
 * significant. Cost O(len^2) per evaluation; fine for the hundreds of runs a case has. */
#ifndef OCB_CHANGEPOINT_H
#define OCB_CHANGEPOINT_H

#include <stddef.h>
#include <stdint.h>

struct ocb_cp_opts {
	double alpha;      /* significance of each split (default 0.05) */
	int permutations;  /* default 199 */
	size_t min_size;   /* smallest segment (default 2, at least 2) */
	uint64_t seed;     /* permutation RNG seed (default 1) */
};

/* Fills the defaults above into *o. */
void ocb_cp_defaults(struct ocb_cp_opts *o);

/* Finds change points of z[0..n). cp[0..*ncp) receives the indices t (ascending) where
 * a new segment starts; cp must hold n entries. p[0..*ncp) (may be NULL) the permutation
 * p-value of each. Returns OCB_OK, OCB_EINVAL (NaN in z), or OCB_ENOMEM. */
int ocb_cp_edivisive(const double *z, size_t n, const struct ocb_cp_opts *o, size_t *cp,
		     double *p, size_t *ncp);

#endif
