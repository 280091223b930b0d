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

/* One call's shape, options and work buffers (views of one allocation). */
struct gptq_ws {
	int out, in, bits, sym, maxq, B, g, ng, grouped, static_groups, act_order;
	double damp;
	float *wp;    /* [out][in] working W, permuted order */
	float *u;     /* [in][in] upper Cholesky factor of H^-1 */
	double *hd;   /* [in][in] damped H, permuted, double */
	float *err;   /* [out][B] scaled errors of one block */
	float *gs;    /* [out][ng] scales, natural group order */
	float *gz;    /* [out][ng] zeros */
	int *perm;    /* processing position -> column */
	double *diag; /* [in] diag H, dead columns set to 1 */
	float *cur;   /* [out][2] current (scale, zero) per row */
};

/* One allocation, views carved from it (each view 64-byte aligned). Returns the block
 * to ocb_free, NULL when out of memory. */
static char *gptq_ws_alloc(struct gptq_ws *x)
{
	const size_t out = (size_t)x->out, in = (size_t)x->in, ng = (size_t)x->ng;
	size_t off_wp = 0;
	size_t off_u = off_wp + ocb_round_up(out * in * sizeof(float), OCB_ALIGN);
	size_t off_hd = off_u + ocb_round_up(in * in * sizeof(float), OCB_ALIGN);
	size_t off_err = off_hd + ocb_round_up(in * in * sizeof(double), OCB_ALIGN);
	size_t off_gs = off_err + ocb_round_up(out * (size_t)x->B * sizeof(float), OCB_ALIGN);
	size_t off_gz = off_gs + ocb_round_up(out * ng * sizeof(float), OCB_ALIGN);
	size_t off_perm = off_gz + ocb_round_up(out * ng * sizeof(float), OCB_ALIGN);
	size_t off_diag = off_perm + ocb_round_up(in * sizeof(int), OCB_ALIGN);
	size_t off_cur = off_diag + ocb_round_up(in * sizeof(double), OCB_ALIGN);
	size_t total = off_cur + ocb_round_up(out * 2 * sizeof(float), OCB_ALIGN);
	char *mem = ocb_alloc(total);
	if (!mem)
		return NULL;
	x->wp = (float *)(mem + off_wp);
	x->u = (float *)(mem + off_u);
	x->hd = (double *)(mem + off_hd);
	x->err = (float *)(mem + off_err);
	x->gs = (float *)(mem + off_gs);
	x->gz = (float *)(mem + off_gz);
	x->perm = (int *)(mem + off_perm);
	x->diag = (double *)(mem + off_diag);
	x->cur = (float *)(mem + off_cur);
	return mem;
}

/* wp = w with dead columns zeroed; static scales fitted; with act-order, perm sorted and
 * wp's columns permuted. */
static void gptq_prepare(struct gptq_ws *x, const float *w, const float *h)
{
	const int out = x->out, in = x->in, g = x->g, ng = x->ng;
	float *wp = x->wp;
	double *diag = x->diag;
	/* Dead columns: an input that never fires carries no information; GPTQ sets its
	 * diagonal to 1 (keeps H invertible) and its weights to 0 (they never matter). */
	for (int j = 0; j < in; j++) {
		diag[j] = h[(size_t)j * in + j];
		x->perm[j] = j;
	}
	memcpy(wp, w, (size_t)out * in * sizeof *wp);
	for (int j = 0; j < in; j++)
		if (diag[j] == 0.0) {
			diag[j] = 1.0;
			for (int r = 0; r < out; r++)
				wp[(size_t)r * in + j] = 0.0f;
		}

	/* Static group scales (act-order with groups) and per-channel scales are fitted on
	 * the weights before any update, in natural column order. */
	if (x->static_groups || !x->grouped) {
#pragma omp parallel for schedule(static)
		for (int r = 0; r < out; r++)
			for (int k = 0; k < ng; k++) {
				int c0 = k * g, n = in - c0 < g ? in - c0 : g;
				quant_fit(wp + (size_t)r * in + c0, n, x->bits, x->sym,
					  &x->gs[(size_t)r * ng + k], &x->gz[(size_t)r * ng + k]);
			}
	}

	if (x->act_order) {
		/* hd is free until H is copied into it: use it for the sort keys */
		struct diag_key *key = (struct diag_key *)x->hd;
		for (int j = 0; j < in; j++)
			key[j] = (struct diag_key){diag[j], j};
		qsort(key, (size_t)in, sizeof *key, cmp_desc_diag);
		for (int j = 0; j < in; j++)
			x->perm[j] = key[j].i;
		/* permute W's columns in place, row by row, through a row buffer */
		float *tmp = x->u; /* u is free until the factorisation: use it as a row buffer */
		for (int r = 0; r < out; r++) {
			float *row = wp + (size_t)r * in;
			for (int i = 0; i < in; i++)
				tmp[i] = row[x->perm[i]];
			memcpy(row, tmp, (size_t)in * sizeof *row);
		}
	}
}

/* u = the upper Cholesky factor of (H[perm][perm] + damp mean(diag) I)^-1, in float. */
static int gptq_hinv_factor(struct gptq_ws *x, const float *h)
{
	const int in = x->in;
	double *hd = x->hd;
	/* hd = H[perm][perm] in double, dead diagonals set to 1, then damped. */
	double mean_diag = 0.0;
	for (int i = 0; i < in; i++) {
		const float *hrow = h + (size_t)x->perm[i] * in;
		double *drow = hd + (size_t)i * in;
		for (int j = 0; j < in; j++)
			drow[j] = hrow[x->perm[j]];
		drow[i] = x->diag[x->perm[i]];
		mean_diag += drow[i];
	}
	mean_diag /= in;
	for (int i = 0; i < in; i++)
		hd[(size_t)i * in + i] += x->damp * mean_diag;

	/* H = R^T R; H^-1 from R; H^-1 = U^T U (upper, row-major). LAPACK reads and writes
	 * only the upper triangle. */
	lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', in, hd, in);
	if (info == 0)
		info = LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'U', in, hd, in);
	if (info == 0)
		info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', in, hd, in);
	if (info != 0)
		return ocb_seterr(OCB_ERUNTIME, "gptq: Cholesky of the damped Hessian failed "
				  "(LAPACK info %d, in=%d)", (int)info, in);
	for (int i = 0; i < in; i++)
		for (int j = 0; j < in; j++)
			x->u[(size_t)i * in + j] = j >= i ? (float)hd[(size_t)i * in + j] : 0.0f;
	return OCB_OK;
}

/* The column sweep: blocks of B columns, each column quantized, its error spread over
 * the block's later columns, then the lazy update of the columns after the block.
 * Returns the summed loss (err^2 / 2). */
static double gptq_sweep(struct gptq_ws *x)
{
	const int out = x->out, in = x->in, B = x->B, g = x->g, ng = x->ng;
	const int grouped = x->grouped, static_groups = x->static_groups;
	float *wp = x->wp, *u = x->u, *err = x->err, *gs = x->gs, *gz = x->gz, *cur = x->cur;
	double total_loss = 0.0;

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
					int k = x->perm[i] / g;
					s = gs[(size_t)r * ng + k];
					z = gz[(size_t)r * ng + k];
				} else if (grouped && i % g == 0) {
					int n = in - i < g ? in - i : g;
					quant_fit(wr + i, n, x->bits, x->sym, &s, &z);
					gs[(size_t)r * ng + i / g] = s;
					gz[(size_t)r * ng + i / g] = z;
				}
				const float *ui = u + (size_t)i * in;
				float q = quant_grid(wr[i], s, z, x->maxq);
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
	return total_loss;
}

int quant_gptq(const float *w, int out, int in, const float *h, const struct quant_gptq_cfg *c,
	       float *wq, float *scales, uint8_t *zeros, double *loss)
{
	int st = c ? quant_cfg_check(&c->q, out, in) : ocb_seterr(OCB_EINVAL, "gptq: NULL cfg");
	if (st)
		return st;
	if (!w || !h || !wq)
		return ocb_seterr(OCB_EINVAL, "gptq: NULL weights or Hessian");

	struct gptq_ws x = {.out = out, .in = in, .bits = c->q.bits, .sym = c->q.sym,
			    .B = c->block > 0 ? c->block : 128,
			    .damp = c->damp > 0 ? c->damp : 0.01,
			    .g = quant_group_len(&c->q, in), .ng = quant_ngroups(&c->q, in),
			    .act_order = c->act_order};
	x.maxq = (1 << x.bits) - 1;
	x.grouped = x.g < in;
	x.static_groups = x.grouped && c->act_order;
	char *mem = gptq_ws_alloc(&x);
	if (!mem)
		return OCB_ENOMEM;

	gptq_prepare(&x, w, h);
	if ((st = gptq_hinv_factor(&x, h)))
		goto out;
	double total_loss = gptq_sweep(&x);

	/* Undo the permutation into wq. */
	for (int r = 0; r < out; r++) {
		const float *src = x.wp + (size_t)r * in;
		float *dst = wq + (size_t)r * in;
		for (int i = 0; i < in; i++)
			dst[x.perm[i]] = src[i];
	}
	if (scales)
		memcpy(scales, x.gs, (size_t)out * x.ng * sizeof *scales);
	if (zeros)
		for (size_t i = 0; i < (size_t)out * x.ng; i++)
			zeros[i] = (uint8_t)x.gz[i];
	if (loss)
		*loss = total_loss;
	st = OCB_OK;
out:
	ocb_free(mem);
	return st;
}
