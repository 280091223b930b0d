/* coll_model: alpha-beta-gamma cost model and its fit (see coll_model.h). */
#include "coll_model.h"

#include <math.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_time.h"

void ocb_coll_coef(enum ocb_coll_op op, int p, struct ocb_coll_coef *k)
{
	double q = p > 1 ? p - 1 : 0, f = p > 0 ? q / p : 0;
	switch (op) {
	case OCB_COLL_ALLREDUCE: *k = (struct ocb_coll_coef){2 * q, 2 * f, f}; break;
	case OCB_COLL_REDUCE_SCATTER: *k = (struct ocb_coll_coef){q, f, f}; break;
	case OCB_COLL_BCAST:
		*k = (struct ocb_coll_coef){p > 1 ? log2((double)p) + q : 0, 2 * f, 0};
		break;
	default: *k = (struct ocb_coll_coef){q, f, 0}; break;
	}
	if (p <= 1) /* one rank: overhead + local copy (see the header) */
		*k = (struct ocb_coll_coef){1, 1, 0};
}

double ocb_coll_model_time(const struct ocb_coll_model *m, enum ocb_coll_op op, int p,
			   double bytes)
{
	struct ocb_coll_coef k;
	ocb_coll_coef(op, p, &k);
	return k.a * m->alpha + bytes * (k.b * m->beta + k.c * m->gamma);
}

int ocb_coll_model_fit(enum ocb_coll_op op, int p, const double *bytes, const double *time_s,
		       int npts, double gamma, struct ocb_coll_model *m)
{
	/* weighted normal equations, w = 1/t^2: minimise sum ((c0 + c1 n - t) / t)^2 */
	double s00 = 0, s01 = 0, s11 = 0, r0 = 0, r1 = 0;
	memset(m, 0, sizeof *m);
	m->rms_rel_err = m->max_rel_err = NAN;
	if (npts < 2)
		return ocb_seterr(OCB_EINVAL, "collective fit: %d points, need 2", npts);
	for (int i = 0; i < npts; i++) {
		if (!(time_s[i] > 0.0) || !(bytes[i] >= 0.0))
			return ocb_seterr(OCB_EINVAL, "collective fit: point %d (%g B, %g s)", i,
					  bytes[i], time_s[i]);
		double w = 1.0 / (time_s[i] * time_s[i]), n = bytes[i];
		s00 += w;
		s01 += w * n;
		s11 += w * n * n;
		r0 += w * time_s[i];
		r1 += w * n * time_s[i];
	}
	double det = s00 * s11 - s01 * s01;
	if (!(fabs(det) > 1e-12 * s00 * s11))
		return ocb_seterr(OCB_EINVAL, "collective fit: all sizes equal");
	double c0 = (r0 * s11 - r1 * s01) / det, c1 = (s00 * r1 - s01 * r0) / det;
	struct ocb_coll_coef k;
	ocb_coll_coef(op, p, &k);
	m->gamma = k.c > 0 ? gamma : 0.0;
	m->alpha = c0 > 0 ? c0 / k.a : 0.0; /* a negative intercept is noise around 0 */
	m->beta = (c1 - k.c * m->gamma) / k.b;
	if (m->beta < 0)
		m->beta = 0;
	double ss = 0, mx = 0;
	for (int i = 0; i < npts; i++) {
		double e = fabs(ocb_coll_model_time(m, op, p, bytes[i]) - time_s[i]) / time_s[i];
		ss += e * e;
		if (e > mx)
			mx = e;
	}
	m->rms_rel_err = sqrt(ss / npts);
	m->max_rel_err = mx;
	m->npoints = npts;
	return OCB_OK;
}

int ocb_coll_measure_gamma(size_t bytes, int trials, double *gamma)
{
	size_t n = bytes / sizeof(float);
	float *x = ocb_alloc(n * sizeof(float)), *y = ocb_alloc(n * sizeof(float));
	int rc = OCB_OK;
	*gamma = NAN;
	if (!x || !y || n == 0) {
		rc = ocb_seterr(OCB_ENOMEM, "gamma: two buffers of %zu bytes", bytes);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		x[i] = 1.0f;
		y[i] = 0.0f;
	}
	double best = INFINITY;
	for (int t = 0; t < trials + 1; t++) { /* the first pass only warms */
		double t0 = ocb_now_s();
		for (size_t i = 0; i < n; i++)
			y[i] += x[i];
		double dt = ocb_now_s() - t0;
		if (t > 0 && dt < best)
			best = dt;
	}
	/* keep the loop from being optimised away: y is read once */
	if (y[n / 2] < 0.0f)
		best = INFINITY;
	*gamma = best / (double)bytes;
out:
	ocb_free(x);
	ocb_free(y);
	return rc;
}
