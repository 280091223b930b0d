#include "changepoint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"

void ocb_cp_defaults(struct ocb_cp_opts *o)
{
	o->alpha = 0.05;
	o->permutations = 199;
	o->min_size = 2;
	o->seed = 1;
}

/* Best split of z[0..n) (a contiguous copy): *best_t in [ms, n - ms], returns its Q,
 * or -INFINITY if the segment is too short. O(n^2) with running sums:
 *   W(t) = sum_{i<k<t} d, B(t) = sum_{i<t<=j} d, total T = sum_{i<k} d,
 *   within-right = T - W(t) - B(t). */
static double best_split(const double *z, size_t n, size_t ms, size_t *best_t)
{
	if (n < 2 * ms)
		return -INFINITY;
	double total = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++)
			total += fabs(z[i] - z[k]);
	double W = 0, B = 0, best = -INFINITY;
	/* Move element t-1 from the right part to the left part for t = 1..n-1. */
	for (size_t t = 1; t < n; t++) {
		size_t e = t - 1;
		double to_left = 0, to_right = 0;
		for (size_t i = 0; i < e; i++)
			to_left += fabs(z[i] - z[e]);
		for (size_t j = e + 1; j < n; j++)
			to_right += fabs(z[e] - z[j]);
		B += to_right - to_left;
		W += to_left;
		if (t < ms || n - t < ms)
			continue;
		double nl = (double)t, nr = (double)(n - t);
		double wr = total - W - B;
		double between = 2.0 * B / (nl * nr);
		double within_l = nl > 1 ? W / (nl * (nl - 1) / 2) : 0;
		double within_r = nr > 1 ? wr / (nr * (nr - 1) / 2) : 0;
		double q = nl * nr / (nl + nr) * (between - within_l - within_r);
		if (q > best) {
			best = q;
			*best_t = t;
		}
	}
	return best;
}

int ocb_cp_edivisive(const double *z, size_t n, const struct ocb_cp_opts *o, size_t *cp,
		     double *p, size_t *ncp)
{
	struct ocb_cp_opts d;
	double *buf = NULL;
	int rc = OCB_OK;
	struct ocb_rng rng;

	*ncp = 0;
	if (!o) {
		ocb_cp_defaults(&d);
		o = &d;
	}
	size_t ms = o->min_size < 2 ? 2 : o->min_size;
	for (size_t i = 0; i < n; i++)
		if (isnan(z[i]))
			return ocb_seterr(OCB_EINVAL, "change points: NaN at %zu", i);
	if (n < 2 * ms)
		return OCB_OK;
	buf = malloc(n * sizeof *buf);
	if (!buf) {
		rc = ocb_seterr(OCB_ENOMEM, "change points: %zu values", n);
		goto out;
	}
	ocb_rng_seed(&rng, o->seed);
	for (;;) {
		/* Segments are [0, cp[0]), [cp[0], cp[1]), ... [cp[last], n). */
		double best_q = -INFINITY;
		size_t best_t = 0, seg_a = 0, seg_b = 0;
		for (size_t s = 0; s <= *ncp; s++) {
			size_t a = s == 0 ? 0 : cp[s - 1], b = s == *ncp ? n : cp[s];
			size_t t = 0;
			double q = best_split(z + a, b - a, ms, &t);
			if (q > best_q) {
				best_q = q;
				best_t = a + t;
				seg_a = a;
				seg_b = b;
			}
		}
		if (!(best_q > 0))
			break;
		/* Permutation test on the chosen segment. */
		size_t len = seg_b - seg_a;
		int exceed = 0;
		memcpy(buf, z + seg_a, len * sizeof *buf);
		for (int r = 0; r < o->permutations; r++) {
			for (size_t i = len - 1; i > 0; i--) { /* Fisher-Yates */
				size_t j = (size_t)ocb_rng_below(&rng, i + 1);
				double tmp = buf[i];
				buf[i] = buf[j];
				buf[j] = tmp;
			}
			size_t t;
			if (best_split(buf, len, ms, &t) >= best_q)
				exceed++;
		}
		double pv = (1.0 + exceed) / (1.0 + o->permutations);
		if (pv >= o->alpha)
			break;
		cp[*ncp] = best_t;
		if (p)
			p[*ncp] = pv;
		(*ncp)++;
		/* keep cp sorted, p alongside */
		for (size_t i = *ncp - 1; i > 0 && cp[i] < cp[i - 1]; i--) {
			size_t tc = cp[i];
			cp[i] = cp[i - 1];
			cp[i - 1] = tc;
			if (p) {
				double tp = p[i];
				p[i] = p[i - 1];
				p[i - 1] = tp;
			}
		}
	}
out:
	free(buf);
	return rc;
}
