#include "signrank.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"

static int cmp_abs(const void *a, const void *b)
{
	double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
	return (x > y) - (x < y);
}

/* Exact two-sided p from doubled ranks r2[0..n) (integers) and the observed doubled W+:
 * cnt[s] = number of sign assignments whose positive ranks sum to s (subset-sum DP),
 * p = 2 min(P(W+ <= w), P(W+ >= w)), capped at 1. */
static int exact_p(const long *r2, size_t n, long w2, double *p)
{
	long total = 0;
	for (size_t i = 0; i < n; i++)
		total += r2[i];
	double *cnt = calloc((size_t)total + 1, sizeof *cnt);
	if (!cnt)
		return ocb_seterr(OCB_ENOMEM, "signed-rank: exact table of %ld", total);
	cnt[0] = 1;
	long top = 0;
	for (size_t i = 0; i < n; i++) {
		top += r2[i];
		for (long s = top; s >= r2[i]; s--)
			cnt[s] += cnt[s - r2[i]];
	}
	double all = ldexp(1.0, (int)n), lo = 0, hi = 0;
	for (long s = 0; s <= total; s++) {
		if (s <= w2)
			lo += cnt[s];
		if (s >= w2)
			hi += cnt[s];
	}
	free(cnt);
	*p = fmin(1.0, 2.0 * fmin(lo, hi) / all);
	return OCB_OK;
}

int ocb_signrank_test(const double *d, size_t nd, struct ocb_signrank *out)
{
	double *a = NULL;
	long *r2 = NULL;
	int rc = OCB_OK;

	memset(out, 0, sizeof *out);
	out->p = NAN;
	for (size_t i = 0; i < nd; i++)
		if (isnan(d[i]))
			return ocb_seterr(OCB_EINVAL, "signed-rank: NaN difference");
	a = malloc((nd ? nd : 1) * sizeof *a);
	r2 = malloc((nd ? nd : 1) * sizeof *r2);
	if (!a || !r2) {
		rc = ocb_seterr(OCB_ENOMEM, "signed-rank: %zu differences", nd);
		goto out;
	}
	size_t n = 0;
	for (size_t i = 0; i < nd; i++) {
		if (d[i] == 0)
			out->zeros++;
		else
			a[n++] = d[i];
	}
	out->n = n;
	if (n == 0)
		goto out;
	qsort(a, n, sizeof *a, cmp_abs);

	/* Doubled mid-ranks (1-based ranks i+1..j+1 -> i + j + 2) and sum(t^3 - t). */
	long w2 = 0, wm2 = 0;
	double ties = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && fabs(a[j + 1]) == fabs(a[i]))
			j++;
		double t = (double)(j - i + 1);
		ties += t * t * t - t;
		for (size_t k = i; k <= j; k++) {
			r2[k] = (long)(i + j + 2);
			if (a[k] > 0)
				w2 += r2[k];
			else
				wm2 += r2[k];
		}
		i = j + 1;
	}
	out->w_plus = 0.5 * (double)w2;
	out->w_minus = 0.5 * (double)wm2;
	if (n <= OCB_SIGNRANK_EXACT_MAX) {
		out->exact = 1;
		rc = exact_p(r2, n, w2, &out->p);
		goto out;
	}
	double N = (double)n;
	double mu = N * (N + 1) / 4;
	double var = N * (N + 1) * (2 * N + 1) / 24 - ties / 48;
	double dev = fabs(out->w_plus - mu) - 0.5;
	if (dev < 0)
		dev = 0;
	out->z = (out->w_plus > mu ? dev : -dev) / sqrt(var);
	out->p = fmin(1.0, erfc(fabs(out->z) / sqrt(2.0)));
out:
	free(a);
	free(r2);
	if (rc != OCB_OK)
		out->p = NAN;
	return rc;
}
