/* mwu: the Mann-Whitney U test (Mann & Whitney 1947; Wilcoxon rank-sum) on two
 * independent samples, two-sided. It is the test LNT, asv and Google Benchmark's
 * compare.py use for "did this benchmark change" (REFERENCE.md §3).
 *
 * U is the U statistic of x: the number of pairs (x_i, y_j) with x_i > y_j, ties
 * counting one half (= R_x - n_x (n_x + 1) / 2 with mid-ranks).
 * p-value:
 *   - exact (the null distribution of U counted by the recurrence
 *     N(u; m, n) = N(u - n; m - 1, n) + N(u; m, n - 1)) when there are no ties and
 *     n_x, n_y <= OCB_MWU_EXACT_MAX;
 *   - otherwise the normal approximation with tie correction,
 *     sigma^2 = n_x n_y / 12 * ((N + 1) - sum(t^3 - t) / (N (N - 1))), and a continuity
 *     correction of 1/2. Pure functions, no allocation escapes. */
#ifndef OCB_MWU_H
#define OCB_MWU_H

#include <stddef.h>

#define OCB_MWU_EXACT_MAX 20

struct ocb_mwu {
	double u;     /* U of x */
	double z;     /* normal score (0 when exact) */
	double p;     /* two-sided p-value in [0, 1]; NaN if a sample is empty */
	int exact;    /* 1 if p is exact */
};

/* Tests x[0..nx) against y[0..ny). NaN samples are not allowed (OCB_EINVAL).
 * Returns OCB_OK, OCB_EINVAL, or OCB_ENOMEM. An empty sample gives p = NaN and OCB_OK. */
int ocb_mwu_test(const double *x, size_t nx, const double *y, size_t ny, struct ocb_mwu *out);

#endif
