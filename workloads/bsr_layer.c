/* bsr_layer: a linear layer on the block-sparse kernels (see bsr_layer.h). */
#include "bsr_layer.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "block_prune.h"
#include "optim.h"

/* ---- the linear impl ---- */

static void sp_forward(const void *st, const struct ocb_linear *l, const float *x, int n,
		       float *y)
{
	struct ocb_bsr_layer *L = (struct ocb_bsr_layer *)st; /* scratch is ours to write */
	ocb_bsr_spmm_rm(&L->s, x, l->in, n, y, l->out, L->scratch, L->threads);
}

static void sp_backward_weight(const void *st, const struct ocb_linear *l, const float *x,
			       const float *dy, int n)
{
	struct ocb_bsr_layer *L = (struct ocb_bsr_layer *)st;
	ocb_bsr_sddmm_rm(&L->s, dy, l->out, x, l->in, n, L->dw, 0, L->threads);
	if (L->dense_grad) /* every block's gradient, for regrowth scores */
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, l->out, l->in, n, 1.0f, dy,
			    l->out, x, l->in, 1.0f, l->gw, l->in);
}

static void sp_backward_input(const void *st, const struct ocb_linear *l, const float *dy,
			      int n, float *dx)
{
	struct ocb_bsr_layer *L = (struct ocb_bsr_layer *)st;
	ocb_bsr_spmm_t_rm(&L->s, dy, l->out, n, dx, l->in, L->scratch, L->threads);
}

static size_t sp_bytes(const void *st, const struct ocb_linear *l)
{
	(void)l;
	return ocb_bsr_bytes(&((const struct ocb_bsr_layer *)st)->s);
}

static const struct ocb_linear_impl sp_impl = {
	.name = "bsr",
	.forward = sp_forward,
	.backward_input = sp_backward_input,
	.weight_bytes = sp_bytes,
	.backward_weight = sp_backward_weight,
};

/* ---- lifecycle ---- */

int ocb_bsr_layer_fits(const struct ocb_linear *l, int B)
{
	return ocb_bsr_shape_ok(l->out, l->in, B, B) && B % 4 == 0;
}

int ocb_bsr_layer_init(struct ocb_bsr_layer *L, struct ocb_linear *l, int B, int max_rows,
		       int threads)
{
	memset(L, 0, sizeof *L);
	if (!ocb_bsr_layer_fits(l, B) || max_rows < 1)
		return ocb_seterr(OCB_EINVAL, "bsr layer: %dx%d weights do not tile into %dx%d "
					      "blocks", l->out, l->in, B, B);
	L->B = B, L->mb = l->out / B, L->kb = l->in / B;
	L->threads = threads, L->max_rows = max_rows;
	size_t nb = (size_t)L->mb * L->kb, vals = (nb + 1) * B * B;
	L->mask = malloc(nb);
	L->wscore = malloc(nb * sizeof(float));
	L->gscore = malloc(nb * sizeof(float));
	L->dw = ocb_alloc(vals * sizeof(float));
	L->m = ocb_alloc(vals * sizeof(float)); /* zeroed: fresh moments */
	L->v = ocb_alloc(vals * sizeof(float));
	L->scratch = ocb_alloc(vals * sizeof(float));
	if (!L->mask || !L->wscore || !L->gscore || !L->dw || !L->m || !L->v || !L->scratch)
		return ocb_seterr(OCB_ENOMEM, "bsr layer: out of memory");
	memset(L->mask, 1, nb);
	int rc = ocb_bsr_from_mask(&L->s, L->mask, l->w, l->out, l->in, B, B);
	if (rc)
		return rc;
	l->impl = &sp_impl;
	l->impl_state = L;
	return OCB_OK;
}

void ocb_bsr_layer_release(struct ocb_bsr_layer *L, struct ocb_linear *l)
{
	if (!L)
		return;
	if (l && l->impl == &sp_impl) {
		l->impl = NULL;
		l->impl_state = NULL;
	}
	ocb_bsr_release(&L->s);
	free(L->mask), free(L->wscore), free(L->gscore);
	ocb_free(L->dw), ocb_free(L->m), ocb_free(L->v), ocb_free(L->scratch);
	memset(L, 0, sizeof *L);
}

void ocb_bsr_layer_gather(struct ocb_bsr_layer *L, const struct ocb_linear *l)
{
	ocb_bsr_gather(&L->s, l->w);
	L->w_stale = 0;
}

void ocb_bsr_layer_sync(struct ocb_bsr_layer *L, const struct ocb_linear *l)
{
	if (!L->w_stale)
		return;
	ocb_bsr_scatter(&L->s, L->s.val, l->w, 0); /* the dead blocks are zero already */
	L->w_stale = 0;
}

/* ---- training ---- */

/* Zeroes the dead blocks of l->w. */
static void zero_dead(const struct ocb_bsr_layer *L, struct ocb_linear *l)
{
	int B = L->B;
	for (int bi = 0; bi < L->mb; bi++)
		for (int bj = 0; bj < L->kb; bj++) {
			if (L->mask[(size_t)bi * L->kb + bj])
				continue;
			for (int r = 0; r < B; r++)
				memset(l->w + (size_t)(bi * B + r) * l->in + (size_t)bj * B, 0,
				       B * sizeof(float));
		}
}

/* mom[new block] = mom[the same block in old], or zeros for a block old did not store;
 * old's values staged in tmp (a block may move to a higher index when others revive). */
static void carry_over(const struct ocb_bsr *old, const int32_t *slot, const struct ocb_bsr *s,
		       float *mom, float *tmp)
{
	size_t bb = (size_t)s->br * s->bc;
	memcpy(tmp, mom, (size_t)old->nnzb * bb * sizeof(float));
	for (int i = 0; i < s->mb; i++)
		for (int p = s->row_ptr[i]; p < s->row_ptr[i + 1]; p++) {
			int q = slot[(size_t)i * s->kb + s->col_idx[p]];
			if (q >= 0)
				memcpy(mom + p * bb, tmp + q * bb, bb * sizeof(float));
			else
				memset(mom + p * bb, 0, bb * sizeof(float));
		}
}

/* The BSR rebuilt from L->mask and l->w; the moments of blocks kept carried over
 * (keep_moments), else zero. */
static int rebuild(struct ocb_bsr_layer *L, struct ocb_linear *l, int keep_moments)
{
	struct ocb_bsr old = L->s, s;
	int rc = ocb_bsr_from_mask(&s, L->mask, l->w, l->out, l->in, L->B, L->B);
	if (rc)
		return rc;
	size_t nb = (size_t)L->mb * L->kb, bb = (size_t)L->B * L->B;
	int32_t *slot = keep_moments ? malloc(nb * sizeof *slot) : NULL;
	if (keep_moments && !slot) {
		ocb_bsr_release(&s);
		return ocb_seterr(OCB_ENOMEM, "bsr layer: out of memory");
	}
	if (keep_moments) {
		for (size_t j = 0; j < nb; j++)
			slot[j] = -1;
		for (int i = 0; i < old.mb; i++)
			for (int p = old.row_ptr[i]; p < old.row_ptr[i + 1]; p++)
				slot[(size_t)i * old.kb + old.col_idx[p]] = p;
		carry_over(&old, slot, &s, L->m, L->scratch);
		carry_over(&old, slot, &s, L->v, L->scratch);
	} else {
		memset(L->m, 0, (size_t)s.nnzb * bb * sizeof(float));
		memset(L->v, 0, (size_t)s.nnzb * bb * sizeof(float));
	}
	free(slot);
	ocb_bsr_release(&L->s);
	L->s = s;
	L->w_stale = 0;
	return OCB_OK;
}

int ocb_bsr_layer_prune(struct ocb_bsr_layer *L, struct ocb_linear *l, double sparsity,
			double regrow, long *revived)
{
	int nb = L->mb * L->kb, back = 0;
	int keep = nb - (int)llround(sparsity * nb);
	keep = keep < 1 ? 1 : keep;
	int nswap = L->dense_grad && regrow > 0 ? (int)llround(regrow * keep) : 0;
	ocb_bsr_layer_sync(L, l);
	ocb_block_norms(l->w, l->out, l->in, L->B, L->wscore);
	if (nswap > 0)
		ocb_block_norms(l->gw, l->out, l->in, L->B, L->gscore);
	int rc = ocb_block_prune_event(L->wscore, nswap > 0 ? L->gscore : NULL, nb, keep, nswap,
				       L->mask, &back);
	if (rc)
		return rc;
	if (revived)
		*revived += back;
	zero_dead(L, l);
	return rebuild(L, l, 1);
}

int ocb_bsr_layers_global(struct ocb_bsr_layer *const *L, struct ocb_linear *const *l, int n,
			  double target, double *sp)
{
	long all = 0, pos = 0;
	for (int i = 0; i < n; i++) {
		ocb_bsr_layer_sync(L[i], l[i]);
		all += ocb_bsr_layer_blocks(L[i]);
	}
	if (n <= 0 || all <= 0)
		return OCB_OK;
	float *sc = calloc((size_t)all, sizeof *sc);
	if (!sc)
		return ocb_seterr(OCB_ENOMEM, "bsr layer: out of memory");
	for (int i = 0; i < n; i++) {
		ocb_block_norms(l[i]->w, l[i]->out, l[i]->in, L[i]->B, sc + pos);
		pos += ocb_bsr_layer_blocks(L[i]);
	}
	long keep = all - llround(target * all), left = keep;
	float thr = ocb_block_kth_score(sc, all, keep);
	long *above = calloc((size_t)n, sizeof(long)), *ties = calloc((size_t)n, sizeof(long));
	if (!above || !ties || isnan(thr)) {
		free(sc), free(above), free(ties);
		return ocb_seterr(OCB_ENOMEM, "bsr layer: out of memory");
	}
	pos = 0;
	for (int i = 0; i < n; i++)
		for (long j = 0; j < ocb_bsr_layer_blocks(L[i]); j++, pos++) {
			above[i] += sc[pos] > thr;
			ties[i] += sc[pos] == thr;
		}
	for (int i = 0; i < n; i++)
		left -= above[i];
	for (int i = 0; i < n; i++) {
		long k = above[i] + (ties[i] < left ? ties[i] : left);
		left -= k - above[i];
		sp[i] = 1.0 - (double)k / ocb_bsr_layer_blocks(L[i]);
	}
	free(sc), free(above), free(ties);
	return OCB_OK;
}

int ocb_bsr_layer_remask(struct ocb_bsr_layer *L, struct ocb_linear *l)
{
	ocb_block_norms(l->w, l->out, l->in, L->B, L->wscore);
	for (int j = 0; j < L->mb * L->kb; j++)
		L->mask[j] = L->wscore[j] > 0.0f;
	return rebuild(L, l, 0);
}

void ocb_bsr_layer_adamw(struct ocb_bsr_layer *L, float lr, float wd, float b1, float b2,
			 float eps, float c1, float c2)
{
	size_t nv = (size_t)L->s.nnzb * L->B * L->B;
	/* one thread when a parallel region costs more than the pass */
	int nt = nv < 16384 ? 1 : L->threads > 0 ? L->threads : omp_get_max_threads();
#pragma omp parallel num_threads(nt)
	{
		int t = omp_get_thread_num(), T = omp_get_num_threads();
		size_t lo = nv * t / T / 16 * 16, hi = t == T - 1 ? nv : nv * (t + 1) / T / 16 * 16;
		ocb_adamw_span(L->s.val + lo, L->dw + lo, L->m + lo, L->v + lo, hi - lo, lr, wd, b1,
			       b2, eps, c1, c2);
	}
	L->w_stale = 1;
}

double ocb_bsr_layer_grad_ss(struct ocb_bsr_layer *L, float scale)
{
	double ss = 0.0;
	size_t nv = (size_t)L->s.nnzb * L->B * L->B;
	for (size_t j = 0; j < nv; j++) {
		ss += (double)L->dw[j] * L->dw[j];
		L->dw[j] *= scale;
	}
	return ss;
}

long ocb_bsr_layer_blocks(const struct ocb_bsr_layer *L)
{
	return (long)L->mb * L->kb;
}

void ocb_bsr_layer_stats_add(const struct ocb_bsr_layer *L, const struct ocb_linear *l,
			     struct ocb_bsr_train_stats *st)
{
	st->sparse_layers++;
	st->blocks += ocb_bsr_layer_blocks(L);
	st->zero_blocks += ocb_bsr_layer_blocks(L) - L->s.nnzb;
	st->sparsity = st->blocks ? (double)st->zero_blocks / st->blocks : 0.0;
	st->bsr_bytes += ocb_bsr_bytes(&L->s);
	st->dense_bytes += (size_t)l->in * l->out * sizeof(float);
	/* ggml Q8_0: 34 bytes per 32 weights, Q4_0: 18 (REFERENCE.md section 2) */
	st->bytes_q8_0 += ocb_bsr_bytes_quant(&L->s, 8.5);
	st->bytes_q4_0 += ocb_bsr_bytes_quant(&L->s, 4.5);
}
