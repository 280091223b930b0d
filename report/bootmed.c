#include "bootmed.h"

#include <math.h>
#include <stdlib.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of s[0..n) sorted in place. */
static double sorted_median(double *s, size_t n)
{
	qsort(s, n, sizeof *s, cmp_double);
	return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static size_t quantile_index(double q, size_t b)
{
	double k = floor(q * (double)b);
	if (k < 0)
		k = 0;
	if (k > (double)(b - 1))
		k = (double)(b - 1);
	return (size_t)k;
}

int ocb_bootmed_ci(const double *x, size_t n, size_t resamples, double level, uint64_t seed,
		   double *lo, double *hi)
{
	double *draw = NULL, *med = NULL;
	int rc = OCB_OK;

	*lo = *hi = NAN;
	if (!(level > 0 && level < 1) || resamples == 0)
		return ocb_seterr(OCB_EINVAL, "bootstrap: level %g, %zu resamples", level,
				  resamples);
	for (size_t i = 0; i < n; i++)
		if (isnan(x[i]))
			return ocb_seterr(OCB_EINVAL, "bootstrap: NaN value");
	if (n == 0)
		return OCB_OK;
	draw = malloc(n * sizeof *draw);
	med = malloc(resamples * sizeof *med);
	if (!draw || !med) {
		rc = ocb_seterr(OCB_ENOMEM, "bootstrap: %zu x %zu", resamples, n);
		goto out;
	}
	struct ocb_rng rng;
	ocb_rng_seed(&rng, seed);
	for (size_t b = 0; b < resamples; b++) {
		for (size_t i = 0; i < n; i++)
			draw[i] = x[ocb_rng_below(&rng, n)];
		med[b] = sorted_median(draw, n);
	}
	qsort(med, resamples, sizeof *med, cmp_double);
	*lo = med[quantile_index((1 - level) / 2, resamples)];
	*hi = med[quantile_index((1 + level) / 2, resamples)];
out:
	free(draw);
	free(med);
	return rc;
}

int ocb_bootmed_ratio_ci(const double *d, size_t n, size_t resamples, double level,
			 uint64_t seed, double *median, double *lo, double *hi)
{
	double l, h;
	*median = NAN;
	int rc = ocb_bootmed_ci(d, n, resamples, level, seed, &l, &h);
	*lo = exp(l);
	*hi = exp(h);
	if (rc == OCB_OK && n > 0)
		*median = exp(ocb_median(d, n));
	return rc;
}
