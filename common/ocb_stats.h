/* ocb_stats: robust statistics of samples (REFERENCE.md §3). Pure functions. */
#ifndef OCB_STATS_H
#define OCB_STATS_H

#include <stddef.h>

/* Robust statistics of one case's samples (seconds unless the result's unit says). */
struct ocb_stats {
	long n;
	double min, median, mean, stddev, mad, ci_low, ci_high; /* ci: 95% CI of the median */
	long outliers;  /* modified z-score |0.6745 (x - median) / MAD| > 3.5 */
};

/* Computes n, min, median, mean, stddev (n-1), MAD (unscaled median absolute deviation),
 * a distribution-free 95% CI of the median (order statistics), and the number of
 * outliers by modified z-score |0.6745 (x - median) / MAD| > 3.5. x is not modified.
 * n == 0 gives NaNs. Returns OCB_OK or OCB_ENOMEM. */
int ocb_stats_compute(const double *x, size_t n, struct ocb_stats *st);

/* Median of x (copied, x untouched); NaN for n == 0. */
double ocb_median(const double *x, size_t n);

/* The 1-based rank j such that [x(j), x(n+1-j)] of the sorted sample is the
 * distribution-free 95% CI of the median (n >= 1): 1 for n < 6 ([min, max]), exact
 * binomial ranks for n < 10, the normal approximation n/2 - 1.96 sqrt(n)/2 above. */
size_t ocb_stats_ci_rank(size_t n);
/* That CI from an already sorted s[0..n) (no allocation; the harness's stopping rule).
 * n == 0 gives NaNs. */
void ocb_stats_ci_sorted(const double *s, size_t n, double *lo, double *hi);

#endif
