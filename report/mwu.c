#include "mwu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"

struct tagged {
	double v;
	int from_x;
};

static int cmp_tagged(const void *a, const void *b)
{
	double x = ((const struct tagged *)a)->v, y = ((const struct tagged *)b)->v;
	return (x > y) - (x < y);
}

/* Two-sided exact p of U for sizes m, n without ties: P(U <= min(u, mn - u)) * 2.
 * count[u] over sizes grows by the recurrence in the header, in O(m n^2 m) small. */
static int exact_p(double u, size_t m, size_t n, double *p)
{
	size_t umax = m * n;
	/* f[i][j][u]: ways for sizes i, j; we keep a (m+1) x (n+1) grid of vectors. */
	double *f = calloc((m + 1) * (n + 1) * (umax + 1), sizeof *f);
	if (!f)
		return ocb_seterr(OCB_ENOMEM, "mann-whitney: exact table %zux%zu", m, n);
#define F(i, j, k) f[(((i) * (n + 1)) + (j)) * (umax + 1) + (k)]
	for (size_t i = 0; i <= m; i++)
		for (size_t j = 0; j <= n; j++) {
			if (i == 0 || j == 0) {
				F(i, j, 0) = 1;
				continue;
			}
			for (size_t k = 0; k <= i * j; k++) {
				/* the largest value is an x (it beats all j y's) or a y */
				double a = k >= j ? F(i - 1, j, k - j) : 0;
				F(i, j, k) = a + F(i, j - 1, k);
			}
		}
	double total = 0, tail = 0;
	double lo = fmin(u, (double)umax - u);
	for (size_t k = 0; k <= umax; k++) {
		total += F(m, n, k);
		if ((double)k <= lo + 1e-9)
			tail += F(m, n, k);
	}
#undef F
	free(f);
	*p = fmin(1.0, 2.0 * tail / total);
	return OCB_OK;
}

int ocb_mwu_test(const double *x, size_t nx, const double *y, size_t ny, struct ocb_mwu *out)
{
	struct tagged *all = NULL;
	int rc = OCB_OK;
	size_t n = nx + ny;

	memset(out, 0, sizeof *out);
	out->p = NAN;
	out->u = NAN;
	if (nx == 0 || ny == 0)
		return OCB_OK;
	all = malloc(n * sizeof *all);
	if (!all) {
		rc = ocb_seterr(OCB_ENOMEM, "mann-whitney: %zu samples", n);
		goto out;
	}
	for (size_t i = 0; i < nx; i++) {
		if (isnan(x[i])) {
			rc = ocb_seterr(OCB_EINVAL, "mann-whitney: NaN sample");
			goto out;
		}
		all[i] = (struct tagged){x[i], 1};
	}
	for (size_t j = 0; j < ny; j++) {
		if (isnan(y[j])) {
			rc = ocb_seterr(OCB_EINVAL, "mann-whitney: NaN sample");
			goto out;
		}
		all[nx + j] = (struct tagged){y[j], 0};
	}
	qsort(all, n, sizeof *all, cmp_tagged);

	/* Mid-ranks (1-based) and the tie term sum(t^3 - t). */
	double rx = 0, ties = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && all[j + 1].v == all[i].v)
			j++;
		double rank = 0.5 * ((double)(i + 1) + (double)(j + 1));
		double t = (double)(j - i + 1);
		ties += t * t * t - t;
		for (size_t k = i; k <= j; k++)
			if (all[k].from_x)
				rx += rank;
		i = j + 1;
	}
	double m = (double)nx, k = (double)ny, N = (double)n;
	out->u = rx - m * (m + 1) / 2;
	if (ties == 0 && nx <= OCB_MWU_EXACT_MAX && ny <= OCB_MWU_EXACT_MAX) {
		out->exact = 1;
		rc = exact_p(out->u, nx, ny, &out->p);
		goto out;
	}
	double mu = m * k / 2;
	double var = m * k / 12 * ((N + 1) - ties / (N * (N - 1)));
	if (var <= 0) { /* every value equal: no evidence of a difference */
		out->p = 1;
		goto out;
	}
	double d = fabs(out->u - mu) - 0.5;
	if (d < 0)
		d = 0;
	out->z = (out->u > mu ? d : -d) / sqrt(var);
	out->p = fmin(1.0, erfc(fabs(out->z) / sqrt(2.0)));
out:
	free(all);
	return rc;
}
