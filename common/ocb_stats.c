/* ocb_stats: robust statistics of a case's samples (REFERENCE.md §3 "Statistics for
 * comparisons"). Median, MAD and the median's confidence interval come from order
 * statistics, so they hold for any distribution of run times (skewed, heavy-tailed). */
#include "ocb_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ocb_error.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of an already sorted array s[0..n). */
static double sorted_median(const double *s, size_t n)
{
	if (n == 0)
		return NAN;
	return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* 1-based rank j of the lower end of a distribution-free 95% CI of the median: the
 * interval [x(j), x(n+1-j)] of the sorted sample covers the median with probability
 * 1 - 2 P(B < j), B ~ Binomial(n, 1/2) (the sign-test interval; REFERENCE.md §3).
 *   n < 6      : [min, max] (no pair of order statistics reaches 95% this small)
 *   6 <= n < 10: exact binomial: the largest j with P(B <= j-1) <= 0.025
 *   n >= 10    : normal approximation j = round(n/2 - 1.96 sqrt(n)/2), which gives the
 *                same ranks as the exact tables (n = 10: 2, n = 100: 40). */
size_t ocb_stats_ci_rank(size_t n)
{
	if (n < 6)
		return 1;
	if (n < 10) {
		/* cdf = P(B <= i) with B ~ Bin(n, 1/2); exact in doubles for n < 10. */
		double c = 1.0, cdf = 0.0, p = ldexp(1.0, -(int)n);
		size_t j = 1;
		for (size_t i = 0; i < n; i++) {
			cdf += c * p;          /* c = C(n, i) */
			if (cdf > 0.025)
				break;
			j = i + 1;             /* P(B <= j - 1) <= 0.025 */
			c = c * (double)(n - i) / (double)(i + 1);
		}
		return j;
	}
	double j = floor((double)n / 2.0 - 1.96 * sqrt((double)n) / 2.0 + 0.5);
	if (j < 1)
		j = 1;
	return (size_t)j;
}

void ocb_stats_ci_sorted(const double *s, size_t n, double *lo, double *hi)
{
	if (n == 0) {
		*lo = *hi = NAN;
		return;
	}
	size_t j = ocb_stats_ci_rank(n);
	*lo = s[j - 1];
	*hi = s[n - j]; /* rank n + 1 - j, 0-based n - j */
}

double ocb_median(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	double *s = malloc(n * sizeof *s);
	if (!s)
		return NAN;
	memcpy(s, x, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_double);
	double m = sorted_median(s, n);
	free(s);
	return m;
}

int ocb_stats_compute(const double *x, size_t n, struct ocb_stats *st)
{
	double *s = NULL;
	int rc = OCB_OK;

	st->n = (long)n;
	st->min = st->median = st->mean = st->stddev = st->mad = NAN;
	st->ci_low = st->ci_high = NAN;
	st->outliers = 0;
	if (n == 0)
		goto out;

	/* One buffer: n sorted samples, then n absolute deviations. */
	s = malloc(2 * n * sizeof *s);
	if (!s) {
		rc = ocb_seterr(OCB_ENOMEM, "statistics of %zu samples", n);
		goto out;
	}
	double *dev = s + n;
	memcpy(s, x, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_double);

	st->min = s[0];
	st->median = sorted_median(s, n);

	/* Mean and sample standard deviation (n - 1), two-pass for accuracy. */
	double sum = 0.0;
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	st->mean = sum / (double)n;
	if (n >= 2) {
		double ss = 0.0;
		for (size_t i = 0; i < n; i++)
			ss += (s[i] - st->mean) * (s[i] - st->mean);
		st->stddev = sqrt(ss / (double)(n - 1));
	}

	/* MAD: median of |x - median|, unscaled (no 1.4826 factor). */
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(s[i] - st->median);
	qsort(dev, n, sizeof *dev, cmp_double);
	st->mad = sorted_median(dev, n);

	ocb_stats_ci_sorted(s, n, &st->ci_low, &st->ci_high);

	/* Outliers by modified z-score (Iglewicz & Hoaglin; REFERENCE.md §3):
	 * |0.6745 (x - median) / MAD| > 3.5. MAD == 0: z undefined, no outliers. */
	if (st->mad > 0.0)
		for (size_t i = 0; i < n; i++)
			if (fabs(0.6745 * (x[i] - st->median) / st->mad) > 3.5)
				st->outliers++;
out:
	free(s);
	return rc;
}
