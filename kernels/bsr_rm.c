/* bsr_rm: the block-sparse products on row-major activations (bsr.h, the `_rm` names):
 * plain-C `_ref` bodies, the OpenMP split (block rows for Y and dW, block columns for dX,
 * balanced by stored blocks as in bsr_spmm.c) and the run-time choice of the AVX-512F
 * (bsr_rm_avx512.c) or AVX2+FMA (bsr_rm_avx2.c) bodies.
 *
 * Why: a layer's activations are [batch][features]; the feature-major kernels of
 * bsr_spmm.c needed three transposes per layer and step around them, which at 90%
 * sparsity cost more than the products (README, block-sparse suite). */
#include "bsr.h"

#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "bsr_impl.h"
#include "transpose.h"

static int rm_args(const struct ocb_bsr *w, const void *in, int ldin, int in_cols,
		   const void *out, int ldout, int out_cols, int n, const char *what)
{
	if (!w || !w->block || !in || !out || n < 1 || ldin < in_cols || ldout < out_cols)
		return ocb_seterr(OCB_EINVAL, "bsr %s: bad arguments (n %d, ld %d, %d)", what, n,
				  ldin, ldout);
	return OCB_OK;
}

/* Block rows [lo, hi) of Y[t][:] = W X[t][:] for every row t. */
static void spmm_rm_ref(const struct ocb_bsr *w, const float *x, int ldx, int n, float *y,
			int ldy, int lo, int hi)
{
	int br = w->br, bc = w->bc;
	for (int t = 0; t < n; t++) {
		const float *xt = x + (size_t)t * ldx;
		float *yt = y + (size_t)t * ldy;
		for (int i = lo; i < hi; i++)
			for (int r = 0; r < br; r++) {
				float s = 0.0f;
				for (int p = w->row_ptr[i]; p < w->row_ptr[i + 1]; p++) {
					const float *wr = w->val + ((size_t)p * br + r) * bc;
					const float *xb = xt + (size_t)w->col_idx[p] * bc;
					for (int c = 0; c < bc; c++)
						s += wr[c] * xb[c];
				}
				yt[i * br + r] = s;
			}
	}
}

/* Block columns [lo, hi) of dX[t][:] = W^T dY[t][:] for every row t. */
static void spmm_t_rm_ref(const struct ocb_bsr *w, const float *dy, int lddy, int n, float *dx,
			  int lddx, int lo, int hi)
{
	int br = w->br, bc = w->bc;
	for (int t = 0; t < n; t++) {
		const float *dyt = dy + (size_t)t * lddy;
		float *dxt = dx + (size_t)t * lddx;
		for (int j = lo; j < hi; j++)
			for (int c = 0; c < bc; c++) {
				float s = 0.0f;
				for (int q = w->col_ptr[j]; q < w->col_ptr[j + 1]; q++) {
					const float *wb = w->val + (size_t)w->t_blk[q] * br * bc + c;
					const float *db = dyt + (size_t)w->t_row[q] * br;
					for (int r = 0; r < br; r++)
						s += wb[(size_t)r * bc] * db[r];
				}
				dxt[j * bc + c] = s;
			}
	}
}

/* The stored blocks of block rows [lo, hi): dW[r][c] (+)= sum_t dY[t][row r] X[t][col c]. */
static void sddmm_rm_ref(const struct ocb_bsr *w, const float *dy, int lddy, const float *x,
			 int ldx, int n, float *dw, int accumulate, int lo, int hi)
{
	int br = w->br, bc = w->bc;
	for (int i = lo; i < hi; i++)
		for (int p = w->row_ptr[i]; p < w->row_ptr[i + 1]; p++) {
			float *d = dw + (size_t)p * br * bc;
			const float *dyb = dy + (size_t)i * br, *xb = x + (size_t)w->col_idx[p] * bc;
			for (int r = 0; r < br; r++)
				for (int c = 0; c < bc; c++) {
					float s = 0.0f;
					for (int t = 0; t < n; t++)
						s += dyb[(size_t)t * lddy + r] * xb[(size_t)t * ldx + c];
					d[r * bc + c] = accumulate ? d[r * bc + c] + s : s;
				}
		}
}

void bsr_rm_pack_ref(const float *blk, int B, int trans, int G, float *dst)
{
	for (int o = 0; o < B; o++)
		for (int i = 0; i < B; i++)
			dst[(size_t)(i / G) * B * G + o * G + i % G] =
				blk[trans ? (size_t)i * B + o : (size_t)o * B + i];
}

size_t ocb_bsr_rm_scratch_floats(const struct ocb_bsr *w)
{
	return ((size_t)w->nnzb + 1) * w->br * w->bc;
}

int ocb_bsr_spmm_rm_ref(const struct ocb_bsr *w, const float *x, int ldx, int n, float *y,
			int ldy, float *scratch, int threads)
{
	(void)scratch; /* nothing to pack */
	int rc = rm_args(w, x, ldx, w ? w->k : 0, y, ldy, w ? w->m : 0, n, "spmm_rm");
	if (rc)
		return rc;
#pragma omp parallel num_threads(bsr_nthreads(threads))
	{
		int lo, hi;
		bsr_split(w->row_ptr, w->mb, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
		spmm_rm_ref(w, x, ldx, n, y, ldy, lo, hi);
	}
	return OCB_OK;
}

int ocb_bsr_spmm_t_rm_ref(const struct ocb_bsr *w, const float *dy, int lddy, int n,
			  float *dx, int lddx, float *scratch, int threads)
{
	(void)scratch;
	int rc = rm_args(w, dy, lddy, w ? w->m : 0, dx, lddx, w ? w->k : 0, n, "spmm_t_rm");
	if (rc)
		return rc;
#pragma omp parallel num_threads(bsr_nthreads(threads))
	{
		int lo, hi;
		bsr_split(w->col_ptr, w->kb, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
		spmm_t_rm_ref(w, dy, lddy, n, dx, lddx, lo, hi);
	}
	return OCB_OK;
}

int ocb_bsr_sddmm_rm_ref(const struct ocb_bsr *w, const float *dy, int lddy, const float *x,
			 int ldx, int n, float *dw, int accumulate, int threads)
{
	int rc = rm_args(w, dy, lddy, w ? w->m : 0, x, ldx, w ? w->k : 0, n, "sddmm_rm");
	if (rc || !dw)
		return rc ? rc : ocb_seterr(OCB_EINVAL, "bsr sddmm_rm: no output");
#pragma omp parallel num_threads(bsr_nthreads(threads))
	{
		int lo, hi;
		bsr_split(w->row_ptr, w->mb, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
		sddmm_rm_ref(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi);
	}
	return OCB_OK;
}

/* The SIMD path of Y = X W^T (trans 0) and dX = dY W (trans 1): each thread packs the
 * blocks of its own output block rows (W's block rows, or block columns through the
 * transpose index) into the scratch, then runs the body over them. */
static int rm_packed(const struct ocb_bsr *w, int trans, const float *in, int ldin, int n,
		     float *out, int ldout, float *scratch, int threads)
{
	int B = w->br, wide = bsr_use_avx512(w), nout = trans ? w->kb : w->mb;
	size_t bb = (size_t)B * B;
	const int32_t *ptr = trans ? w->col_ptr : w->row_ptr, *pidx = trans ? w->t_row : w->col_idx;
	float *pack = scratch ? scratch
			      : ocb_alloc_untouched(ocb_bsr_rm_scratch_floats(w) * sizeof(float));
	if (!pack)
		return ocb_seterr(OCB_ENOMEM, "bsr %s: out of memory for the packed blocks",
				  trans ? "spmm_t_rm" : "spmm_rm");
#pragma omp parallel num_threads(bsr_nthreads(threads))
	{
		int lo, hi;
		bsr_split(ptr, nout, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
		for (int q = ptr[lo]; q < ptr[hi]; q++) {
			const float *blk = w->val + (size_t)(trans ? w->t_blk[q] : q) * bb;
			if (wide)
				bsr_rm_pack_avx512(blk, B, trans, pack + (size_t)q * bb);
			else
				bsr_rm_pack_avx2(blk, B, trans, pack + (size_t)q * bb);
		}
		if (wide)
			bsr_rm_rows_avx512(pack, ptr, pidx, B, in, ldin, n, out, ldout, lo, hi);
		else
			bsr_rm_rows_avx2(pack, ptr, pidx, B, in, ldin, n, out, ldout, lo, hi);
	}
	if (pack != scratch)
		ocb_free(pack);
	return OCB_OK;
}

int ocb_bsr_spmm_rm(const struct ocb_bsr *w, const float *x, int ldx, int n, float *y, int ldy,
		    float *scratch, int threads)
{
	int rc = rm_args(w, x, ldx, w ? w->k : 0, y, ldy, w ? w->m : 0, n, "spmm_rm");
	if (rc)
		return rc;
	if (!bsr_use_avx2(w))
		return ocb_bsr_spmm_rm_ref(w, x, ldx, n, y, ldy, scratch, threads);
	return rm_packed(w, 0, x, ldx, n, y, ldy, scratch, threads);
}

int ocb_bsr_spmm_t_rm(const struct ocb_bsr *w, const float *dy, int lddy, int n, float *dx,
		      int lddx, float *scratch, int threads)
{
	int rc = rm_args(w, dy, lddy, w ? w->m : 0, dx, lddx, w ? w->k : 0, n, "spmm_t_rm");
	if (rc)
		return rc;
	if (!bsr_use_avx2(w))
		return ocb_bsr_spmm_t_rm_ref(w, dy, lddy, n, dx, lddx, scratch, threads);
	return rm_packed(w, 1, dy, lddy, n, dx, lddx, scratch, threads);
}

int ocb_bsr_sddmm_rm(const struct ocb_bsr *w, const float *dy, int lddy, const float *x,
		     int ldx, int n, float *dw, int accumulate, int threads)
{
	int rc = rm_args(w, dy, lddy, w ? w->m : 0, x, ldx, w ? w->k : 0, n, "sddmm_rm");
	if (rc || !dw)
		return rc ? rc : ocb_seterr(OCB_EINVAL, "bsr sddmm_rm: no output");
	if (!bsr_use_avx2(w))
		return ocb_bsr_sddmm_rm_ref(w, dy, lddy, x, ldx, n, dw, accumulate, threads);
	int wide = bsr_use_avx512(w);
#pragma omp parallel num_threads(bsr_nthreads(threads))
	{
		int lo, hi;
		bsr_split(w->row_ptr, w->mb, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
		if (wide)
			bsr_rm_sddmm_rows_avx512(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi);
		else
			bsr_rm_sddmm_rows_avx2(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi);
	}
	return OCB_OK;
}

void bsr_rm_pack_g1(const float *blk, int B, int trans, float *dst)
{
	if (trans) { /* element (o, i) at i*B + o already: the block as it is */
		memcpy(dst, blk, (size_t)B * B * sizeof(float));
		return;
	}
	for (int r = 0; r < B; r += 8) /* dst[i*B + o] = blk[o*B + i], 8 x 8 tiles */
		for (int c = 0; c < B; c += 8)
			ocb_transpose_8x8(blk + (size_t)r * B + c, B, dst + (size_t)c * B + r, B);
}
