/* quant_gptq: GPTQ (Frantar et al. 2022), see the header for the algorithm.
 *
 * Numerics: H is copied to double and factorised there (dpotrf, dpotri, dpotrf). The
 * Hessians of real layers are badly conditioned (correlated features, few calibration rows
 * relative to `in`); computing H^-1 and then its Cholesky factor squares the condition
 * number's effect, and in single precision the second factorisation can fail or lose
 * U_ii accuracy, which directly scales every error-compensation step. At in <= a few
 * thousand the O(in^3) double work is negligible next to the O(out in^2) column loop, so
 * only the factor U is converted to float for the sgemm updates. */
#include "quant_gptq.h"

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void quant_hessian_add(float *h, int in, const float *x, int n)
{
	if (n <= 0)
		return;
	cblas_ssyrk(CblasRowMajor, CblasUpper, CblasTrans, in, n, 2.0f, x, in, 1.0f, h, in);
	for (int i = 0; i < in; i++)
		for (int j = 0; j < i; j++)
			h[(size_t)i * in + j] = h[(size_t)j * in + i];
}

double quant_output_err_rows(const float *w, const float *q, int out, int in, const float *h,
			     double *rows)
{
	size_t n = (size_t)out * in;
	float *d = ocb_alloc(2 * n * sizeof *d);
	if (!d)
		return NAN;
	float *t = d + n;
	for (size_t i = 0; i < n; i++)
		d[i] = w[i] - q[i];
	/* t [out][in] = d [out][in] h [in][in] */
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, out, in, in, 1.0f, d, in, h, in,
		    0.0f, t, in);
	double s = 0.0;
	for (int r = 0; r < out; r++) {
		double sr = 0.0;
		for (size_t i = (size_t)r * in; i < (size_t)(r + 1) * in; i++)
			sr += (double)d[i] * t[i];
		if (rows)
			rows[r] = sr / 2.0;
		s += sr;
	}
	ocb_free(d);
	return s / 2.0;
}

double quant_output_err(const float *w, const float *q, int out, int in, const float *h)
{
	return quant_output_err_rows(w, q, out, in, h, NULL);
}

/* Act-order sort key: descending diag H, ties by column index (deterministic). */
struct diag_key {
	double d;
	int i;
};
static int cmp_desc_diag(const void *a, const void *b)
{
	const struct diag_key *x = a, *y = b;
	if (x->d != y->d)
		return x->d > y->d ? -1 : 1;
	return x->i - y->i;
}

int quant_gptq(const float *w, int out, int in, const float *h, const struct quant_gptq_cfg *c,
	       float *wq, float *scales, uint8_t *zeros, double *loss)
{
	int st = c ? quant_cfg_check(&c->q, out, in) : ocb_seterr(OCB_EINVAL, "gptq: NULL cfg");
	if (st)
		return st;
	if (!w || !h || !wq)
		return ocb_seterr(OCB_EINVAL, "gptq: NULL weights or Hessian");

	const int bits = c->q.bits, sym = c->q.sym, maxq = (1 << bits) - 1;
	const int B = c->block > 0 ? c->block : 128;
	const double damp = c->damp > 0 ? c->damp : 0.01;
	const int g = quant_group_len(&c->q, in), ng = quant_ngroups(&c->q, in);
	const int grouped = g < in, static_groups = grouped && c->act_order;
	const size_t nw = (size_t)out * in, nh = (size_t)in * in;

	/* One allocation, views carved from it (each view 64-byte aligned). */
	size_t off_wp = 0;
	size_t off_u = off_wp + ocb_round_up(nw * sizeof(float), OCB_ALIGN);
	size_t off_hd = off_u + ocb_round_up(nh * sizeof(float), OCB_ALIGN);
	size_t off_err = off_hd + ocb_round_up(nh * sizeof(double), OCB_ALIGN);
	size_t off_gs = off_err + ocb_round_up((size_t)out * B * sizeof(float), OCB_ALIGN);
	size_t off_gz = off_gs + ocb_round_up((size_t)out * ng * sizeof(float), OCB_ALIGN);
	size_t off_perm = off_gz + ocb_round_up((size_t)out * ng * sizeof(float), OCB_ALIGN);
	size_t off_diag = off_perm + ocb_round_up((size_t)in * sizeof(int), OCB_ALIGN);
	size_t off_cur = off_diag + ocb_round_up((size_t)in * sizeof(double), OCB_ALIGN);
	size_t total = off_cur + ocb_round_up((size_t)out * 2 * sizeof(float), OCB_ALIGN);
	char *mem = ocb_alloc(total);
	if (!mem)
		return OCB_ENOMEM;
	float *wp = (float *)(mem + off_wp);     /* [out][in] working W, permuted order */
	float *u = (float *)(mem + off_u);       /* [in][in] upper Cholesky factor of H^-1 */
	double *hd = (double *)(mem + off_hd);   /* [in][in] damped H, permuted, double */
	float *err = (float *)(mem + off_err);   /* [out][B] scaled errors of one block */
	float *gs = (float *)(mem + off_gs);     /* [out][ng] scales, natural group order */
	float *gz = (float *)(mem + off_gz);     /* [out][ng] zeros */
	int *perm = (int *)(mem + off_perm);     /* processing position -> column */
	double *diag = (double *)(mem + off_diag);
	float *cur = (float *)(mem + off_cur);   /* [out][2] current (scale, zero) per row */
	double total_loss = 0.0;

	/* Dead columns: an input that never fires carries no information; GPTQ sets its
	 * diagonal to 1 (keeps H invertible) and its weights to 0 (they never matter). */
	for (int j = 0; j < in; j++) {
		diag[j] = h[(size_t)j * in + j];
		perm[j] = j;
	}
	memcpy(wp, w, nw * sizeof *wp);
	for (int j = 0; j < in; j++)
		if (diag[j] == 0.0) {
			diag[j] = 1.0;
			for (int r = 0; r < out; r++)
				wp[(size_t)r * in + j] = 0.0f;
		}

	/* Static group scales (act-order with groups) and per-channel scales are fitted on
	 * the weights before any update, in natural column order. */
	if (static_groups || !grouped) {
#pragma omp parallel for schedule(static)
		for (int r = 0; r < out; r++)
			for (int k = 0; k < ng; k++) {
				int c0 = k * g, n = in - c0 < g ? in - c0 : g;
				quant_fit(wp + (size_t)r * in + c0, n, bits, sym, &gs[(size_t)r * ng + k],
					  &gz[(size_t)r * ng + k]);
			}
	}

	if (c->act_order) {
		/* hd is free until H is copied into it: use it for the sort keys */
		struct diag_key *key = (struct diag_key *)hd;
		for (int j = 0; j < in; j++)
			key[j] = (struct diag_key){diag[j], j};
		qsort(key, (size_t)in, sizeof *key, cmp_desc_diag);
		for (int j = 0; j < in; j++)
			perm[j] = key[j].i;
		/* permute W's columns in place, row by row, through the err buffer rows */
		float *tmp = u; /* u is free until the factorisation: use it as a row buffer */
		for (int r = 0; r < out; r++) {
			float *row = wp + (size_t)r * in;
			for (int i = 0; i < in; i++)
				tmp[i] = row[perm[i]];
			memcpy(row, tmp, (size_t)in * sizeof *row);
		}
	}

	/* hd = H[perm][perm] in double, dead diagonals set to 1, then damped. */
	double mean_diag = 0.0;
	for (int i = 0; i < in; i++) {
		const float *hrow = h + (size_t)perm[i] * in;
		double *drow = hd + (size_t)i * in;
		for (int j = 0; j < in; j++)
			drow[j] = hrow[perm[j]];
		drow[i] = diag[perm[i]];
		mean_diag += drow[i];
	}
	mean_diag /= in;
	for (int i = 0; i < in; i++)
		hd[(size_t)i * in + i] += damp * mean_diag;

	/* H = R^T R; H^-1 from R; H^-1 = U^T U (upper, row-major). LAPACK reads and writes
	 * only the upper triangle. */
	lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', in, hd, in);
	if (info == 0)
		info = LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'U', in, hd, in);
	if (info == 0)
		info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', in, hd, in);
	if (info != 0) {
		st = ocb_seterr(OCB_ERUNTIME, "gptq: Cholesky of the damped Hessian failed "
				"(LAPACK info %d, in=%d)", (int)info, in);
		goto out;
	}
	for (int i = 0; i < in; i++)
		for (int j = 0; j < in; j++)
			u[(size_t)i * in + j] = j >= i ? (float)hd[(size_t)i * in + j] : 0.0f;

	for (int r = 0; r < out; r++) { /* per-channel: the one fitted scale */
		cur[2 * r] = gs[(size_t)r * ng];
		cur[2 * r + 1] = gz[(size_t)r * ng];
	}

	for (int i1 = 0; i1 < in; i1 += B) {
		int i2 = i1 + B < in ? i1 + B : in;
#pragma omp parallel for schedule(static) reduction(+ : total_loss)
		for (int r = 0; r < out; r++) {
			float *wr = wp + (size_t)r * in, *er = err + (size_t)r * B;
			float s = cur[2 * r], z = cur[2 * r + 1];
			for (int i = i1; i < i2; i++) {
				if (static_groups) {
					int k = perm[i] / g;
					s = gs[(size_t)r * ng + k];
					z = gz[(size_t)r * ng + k];
				} else if (grouped && i % g == 0) {
					int n = in - i < g ? in - i : g;
					quant_fit(wr + i, n, bits, sym, &s, &z);
					gs[(size_t)r * ng + i / g] = s;
					gz[(size_t)r * ng + i / g] = z;
				}
				const float *ui = u + (size_t)i * in;
				float q = quant_grid(wr[i], s, z, maxq);
				float e = (wr[i] - q) / ui[i];
				total_loss += (double)e * e / 2.0;
				wr[i] = q;
				for (int j = i + 1; j < i2; j++)
					wr[j] -= e * ui[j];
				er[i - i1] = e;
			}
			cur[2 * r] = s;
			cur[2 * r + 1] = z;
		}
		/* Lazy batch update: W[:, i2:] -= Err [out][i2-i1] U[i1:i2, i2:] */
		if (i2 < in)
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, out, in - i2, i2 - i1,
				    -1.0f, err, B, u + (size_t)i1 * in + i2, in, 1.0f, wp + i2, in);
	}

	/* Undo the permutation into wq. */
	for (int r = 0; r < out; r++) {
		const float *src = wp + (size_t)r * in;
		float *dst = wq + (size_t)r * in;
		for (int i = 0; i < in; i++)
			dst[perm[i]] = src[i];
	}
	if (scales)
		memcpy(scales, gs, (size_t)out * ng * sizeof *scales);
	if (zeros)
		for (size_t i = 0; i < (size_t)out * ng; i++)
			zeros[i] = (uint8_t)gz[i];
	if (loss)
		*loss = total_loss;
	st = OCB_OK;
out:
	ocb_free(mem);
	return st;
}
