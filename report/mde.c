#include "mde.h"

#include <math.h>
#include <stdlib.h>

#include "../common/ocb_stats.h"

/* Acklam's coefficients (P. J. Acklam, "An algorithm for computing the inverse normal
 * cumulative distribution function", 2003; the published constants). */
static const double A[] = {-3.969683028665376e+01, 2.209460984245205e+02,
			   -2.759285104469687e+02, 1.383577518672690e+02,
			   -3.066479806614716e+01, 2.506628277459239e+00};
static const double B[] = {-5.447609879822406e+01, 1.615858368580409e+02,
			   -1.556989798598866e+02, 6.680131188771972e+01,
			   -1.328068155288572e+01};
static const double C[] = {-7.784894002430293e-03, -3.223964580411365e-01,
			   -2.400758277161838e+00, -2.549732539343734e+00,
			   4.374664141464968e+00,  2.938163982698783e+00};
static const double D[] = {7.784695709041462e-03, 3.224671290700398e-01,
			   2.445134137142996e+00, 3.754408661907416e+00};

double ocb_norm_quantile(double p)
{
	if (!(p > 0 && p < 1))
		return NAN;
	const double plow = 0.02425;
	double x, q, r;
	if (p < plow) {
		q = sqrt(-2 * log(p));
		x = (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) /
		    ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1);
	} else if (p <= 1 - plow) {
		q = p - 0.5;
		r = q * q;
		x = (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q /
		    (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1);
	} else {
		q = sqrt(-2 * log(1 - p));
		x = -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) /
		    ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1);
	}
	/* One Halley step: e = Phi(x) - p, Phi(x) = erfc(-x / sqrt 2) / 2. */
	double e = 0.5 * erfc(-x / sqrt(2.0)) - p;
	double u = e * sqrt(2 * M_PI) * exp(x * x / 2);
	return x - u / (1 + x * u / 2);
}

double ocb_mde_zsum(double alpha, double power)
{
	return ocb_norm_quantile(1 - alpha / 2) + ocb_norm_quantile(power);
}

double ocb_mde_rel(double se_log, double alpha, double power)
{
	if (!(se_log >= 0))
		return NAN;
	return expm1(ocb_mde_zsum(alpha, power) * se_log);
}

double ocb_mde_se_sequential(double var_w, size_t reps_base, size_t reps_cand, double var_b)
{
	if (reps_base == 0 || reps_cand == 0 || !(var_w >= 0))
		return NAN;
	double vb = var_b >= 0 ? var_b : 0;
	return sqrt(2 * vb + var_w * (1.0 / (double)reps_base + 1.0 / (double)reps_cand));
}

double ocb_mde_se_paired(double var_d, size_t rounds)
{
	if (rounds == 0 || !(var_d >= 0))
		return NAN;
	return sqrt(var_d / (double)rounds / OCB_MDE_SIGNRANK_ARE);
}

size_t ocb_mde_min_rounds(double alpha)
{
	size_t n = OCB_MDE_MIN_ROUNDS;
	while (n < 64 && ldexp(2.0, -(int)n) >= alpha)
		n++;
	return n;
}

size_t ocb_mde_rounds(double target_rel, double var_d, double alpha, double power)
{
	if (!(target_rel > 0) || !(var_d >= 0))
		return 0;
	/* R >= zsum^2 var_d / (ARE log(1+t)^2), then the check below absorbs rounding. */
	double m = log1p(target_rel) / ocb_mde_zsum(alpha, power);
	double r = ceil(var_d / OCB_MDE_SIGNRANK_ARE / (m * m));
	size_t least = ocb_mde_min_rounds(alpha);
	size_t rounds = r < (double)least ? least : (size_t)r;
	while (ocb_mde_rel(ocb_mde_se_paired(var_d, rounds), alpha, power) > target_rel)
		rounds++;
	return rounds;
}

double ocb_mde_var_robust(const double *d, size_t n)
{
	if (n < 2)
		return NAN;
	double *dev = malloc(n * sizeof *dev);
	if (!dev)
		return NAN;
	double med = ocb_median(d, n);
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(d[i] - med);
	double s = 1.4826 * ocb_median(dev, n);
	free(dev);
	return s * s;
}

double ocb_mde_var_log(const double *x, size_t n)
{
	if (n < 2)
		return NAN;
	double *l = malloc(n * sizeof *l);
	if (!l)
		return NAN;
	double v = NAN;
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] > 0))
			goto out;
		l[i] = log(x[i]);
	}
	v = ocb_mde_var_robust(l, n);
out:
	free(l);
	return v;
}

/* Plain sample variance (n - 1) of f(i) for i < n. */
static double sample_var(const double *lb, const double *lc, size_t n, int diff)
{
	double mean = 0, ss = 0;
	for (size_t i = 0; i < n; i++)
		mean += diff ? lc[i] - lb[i] : 0.5 * (lb[i] + lc[i]);
	mean /= (double)n;
	for (size_t i = 0; i < n; i++) {
		double v = (diff ? lc[i] - lb[i] : 0.5 * (lb[i] + lc[i])) - mean;
		ss += v * v;
	}
	return ss / (double)(n - 1);
}

void ocb_mde_split(const double *lb, const double *lc, size_t n, double *var_w, double *var_b)
{
	*var_w = *var_b = NAN;
	if (n < 3)
		return;
	*var_w = sample_var(lb, lc, n, 1) / 2;
	double vb = sample_var(lb, lc, n, 0) - *var_w / 2;
	*var_b = vb > 0 ? vb : 0;
}
