/* bsr_spmm: the three block-sparse products (bsr.h): plain-C `_ref` bodies, the OpenMP
 * split over block rows / block columns balanced by nonzero blocks, and the run-time
 * choice of the bodies: AVX-512F (bsr_avx512.c) when ocb_cpu_avx512f(), else AVX2+FMA
 * (bsr_avx2.c), else plain C. */
#include "bsr.h"

#include <omp.h>
#include <string.h>

#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "bsr_impl.h"

static int check_args(const struct ocb_bsr *w, const void *a, int lda, const void *b, int ldb,
		      int n, const char *what)
{
	if (!w || !w->block || !a || !b || n < 1 || lda < n || ldb < n)
		return ocb_seterr(OCB_EINVAL, "bsr %s: bad arguments (n %d, ld %d, %d)", what, n,
				  lda, ldb);
	return OCB_OK;
}

const char *ocb_bsr_path(const struct ocb_bsr *w)
{
	return bsr_use_avx512(w) ? "avx512" : bsr_use_avx2(w) ? "avx2" : "ref";
}

/* y[r][0..n) += a * x[0..n) */
static void axpy_ref(float *restrict y, float a, const float *restrict x, int n)
{
	for (int t = 0; t < n; t++)
		y[t] += a * x[t];
}

/* Rows [lo, hi) (block rows) of Y = W X. */
static void spmm_rows_ref(const struct ocb_bsr *w, const float *x, int ldx, int n, float *y,
			  int ldy, int lo, int hi)
{
	int br = w->br, bc = w->bc;
	for (int i = lo; i < hi; i++)
		for (int r = 0; r < br; r++) {
			float *yr = y + (size_t)(i * br + r) * ldy;
			memset(yr, 0, (size_t)n * sizeof(float));
			for (int p = w->row_ptr[i]; p < w->row_ptr[i + 1]; p++) {
				const float *wr = w->val + ((size_t)p * br + r) * bc;
				const float *xb = x + (size_t)w->col_idx[p] * bc * ldx;
				for (int c = 0; c < bc; c++)
					axpy_ref(yr, wr[c], xb + (size_t)c * ldx, n);
			}
		}
}

/* Block columns [lo, hi) of dX = W^T dY: rows j*bc + c of dX. */
static void spmm_t_cols_ref(const struct ocb_bsr *w, const float *dy, int lddy, int n,
			    float *dx, int lddx, int lo, int hi)
{
	int br = w->br, bc = w->bc;
	for (int j = lo; j < hi; j++)
		for (int c = 0; c < bc; c++) {
			float *dxr = dx + (size_t)(j * bc + c) * lddx;
			memset(dxr, 0, (size_t)n * sizeof(float));
			for (int q = w->col_ptr[j]; q < w->col_ptr[j + 1]; q++) {
				const float *wb = w->val + (size_t)w->t_blk[q] * br * bc;
				const float *dyb = dy + (size_t)w->t_row[q] * br * lddy;
				for (int r = 0; r < br; r++)
					axpy_ref(dxr, wb[r * bc + c], dyb + (size_t)r * lddy, n);
			}
		}
}

/* Blocks of block rows [lo, hi) of dW = dY X^T. */
static void sddmm_rows_ref(const struct ocb_bsr *w, const float *dy, int lddy, const float *x,
			   int ldx, int n, float *dw, int accumulate, int lo, int hi)
{
	int br = w->br, bc = w->bc;
	for (int i = lo; i < hi; i++)
		for (int p = w->row_ptr[i]; p < w->row_ptr[i + 1]; p++) {
			float *d = dw + (size_t)p * br * bc;
			for (int r = 0; r < br; r++) {
				const float *dyr = dy + (size_t)(i * br + r) * lddy;
				for (int c = 0; c < bc; c++) {
					const float *xr = x + (size_t)(w->col_idx[p] * bc + c) * ldx;
					float s = 0.0f;
					for (int t = 0; t < n; t++)
						s += dyr[t] * xr[t];
					d[r * bc + c] = accumulate ? d[r * bc + c] + s : s;
				}
			}
		}
}

/* One parallel region per call: thread t takes its balanced range (bsr_split) and runs
 * the reference body; the plain names run the AVX2 body when bsr_use_avx2(). */
int ocb_bsr_spmm_ref(const struct ocb_bsr *w, const float *x, int ldx, int n, float *y,
		     int ldy, int threads)
{
	int rc = check_args(w, x, ldx, y, ldy, n, "spmm");
	if (rc)
		return rc;
#pragma omp parallel num_threads(bsr_nthreads(threads))
	{
		int lo, hi;
		bsr_split(w->row_ptr, w->mb, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
		spmm_rows_ref(w, x, ldx, n, y, ldy, lo, hi);
	}
	return OCB_OK;
}

int ocb_bsr_spmm(const struct ocb_bsr *w, const float *x, int ldx, int n, float *y, int ldy,
		 int threads)
{
	int rc = check_args(w, x, ldx, y, ldy, n, "spmm");
	if (rc)
		return rc;
	if (!bsr_use_avx2(w))
		return ocb_bsr_spmm_ref(w, x, ldx, n, y, ldy, threads);
	int wide = bsr_use_avx512(w);
#pragma omp parallel num_threads(bsr_nthreads(threads))
	{
		int lo, hi;
		bsr_split(w->row_ptr, w->mb, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
		if (wide)
			bsr_spmm_rows_avx512(w, x, ldx, n, y, ldy, lo, hi);
		else
			bsr_spmm_rows_avx2(w, x, ldx, n, y, ldy, lo, hi);
	}
	return OCB_OK;
}

int ocb_bsr_spmm_t_ref(const struct ocb_bsr *w, const float *dy, int lddy, int n, float *dx,
		       int lddx, int threads)
{
	int rc = check_args(w, dy, lddy, dx, lddx, n, "spmm_t");
	if (rc)
		return rc;
#pragma omp parallel num_threads(bsr_nthreads(threads))
	{
		int lo, hi;
		bsr_split(w->col_ptr, w->kb, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
		spmm_t_cols_ref(w, dy, lddy, n, dx, lddx, lo, hi);
	}
	return OCB_OK;
}

int ocb_bsr_spmm_t(const struct ocb_bsr *w, const float *dy, int lddy, int n, float *dx,
		   int lddx, int threads)
{
	int rc = check_args(w, dy, lddy, dx, lddx, n, "spmm_t");
	if (rc)
		return rc;
	if (!bsr_use_avx2(w))
		return ocb_bsr_spmm_t_ref(w, dy, lddy, n, dx, lddx, threads);
	int wide = bsr_use_avx512(w);
#pragma omp parallel num_threads(bsr_nthreads(threads))
	{
		int lo, hi;
		bsr_split(w->col_ptr, w->kb, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
		if (wide)
			bsr_spmm_t_cols_avx512(w, dy, lddy, n, dx, lddx, lo, hi);
		else
			bsr_spmm_t_cols_avx2(w, dy, lddy, n, dx, lddx, lo, hi);
	}
	return OCB_OK;
}

int ocb_bsr_sddmm_ref(const struct ocb_bsr *w, const float *dy, int lddy, const float *x,
		      int ldx, int n, float *dw, int accumulate, int threads)
{
	int rc = check_args(w, dy, lddy, x, ldx, n, "sddmm");
	if (rc || !dw)
		return rc ? rc : ocb_seterr(OCB_EINVAL, "bsr sddmm: no output");
#pragma omp parallel num_threads(bsr_nthreads(threads))
	{
		int lo, hi;
		bsr_split(w->row_ptr, w->mb, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
		sddmm_rows_ref(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi);
	}
	return OCB_OK;
}

int ocb_bsr_sddmm(const struct ocb_bsr *w, const float *dy, int lddy, const float *x, int ldx,
		  int n, float *dw, int accumulate, int threads)
{
	int rc = check_args(w, dy, lddy, x, ldx, n, "sddmm");
	if (rc || !dw)
		return rc ? rc : ocb_seterr(OCB_EINVAL, "bsr sddmm: no output");
	if (!bsr_use_avx2(w))
		return ocb_bsr_sddmm_ref(w, dy, lddy, x, ldx, n, dw, accumulate, threads);
	int wide = bsr_use_avx512(w);
#pragma omp parallel num_threads(bsr_nthreads(threads))
	{
		int lo, hi;
		bsr_split(w->row_ptr, w->mb, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
		if (wide)
			bsr_sddmm_rows_avx512(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi);
		else
			bsr_sddmm_rows_avx2(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi);
	}
	return OCB_OK;
}
