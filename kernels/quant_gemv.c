/* quant_gemv: the batch-1 GEMV driver over the per-format dot products of the format
 * table (the interleaved r8 kernels are quant_repack*.c). See quant_gemv.h. */
#include "quant_gemv.h"

#include <immintrin.h>
#include <omp.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "quant_args.h"

const char *qkernel_variant(void)
{
	return ocb_cpu_avx2() ? "avx2" : "ref";
}

typedef float (*vec_dot_fn)(int64_t k, const void *w, const void *a);

static void gemv_rows(vec_dot_fn dot, size_t rb, const void *w, int64_t m, int64_t k,
		      const void *xq, float *y, int threads)
{
	const char *wb = w;
	if (threads == 1) { /* no team: its end costs a system call (gemv_r8_run) */
		for (int64_t r = 0; r < m; r++)
			y[r] = dot(k, wb + (size_t)r * rb, xq);
		return;
	}
#pragma omp parallel for schedule(static) num_threads(threads)
	for (int64_t r = 0; r < m; r++)
		y[r] = dot(k, wb + (size_t)r * rb, xq);
}

int qgemv(const struct qformat *f, const void *w, int64_t m, int64_t k, const void *xq, float *y,
	  int threads)
{
	int rc = qk_check_args(f, w, m, k, xq, 1, y, "qgemv");
	if (rc)
		return rc;
	gemv_rows(ocb_cpu_avx2() ? f->vec_dot_avx2 : f->vec_dot_ref, qformat_row_bytes(f, k), w, m,
		  k, xq, y, qk_threads(threads));
	return OCB_OK;
}

int qgemv_ref(const struct qformat *f, const void *w, int64_t m, int64_t k, const void *xq,
	      float *y, int threads)
{
	int rc = qk_check_args(f, w, m, k, xq, 1, y, "qgemv_ref");
	if (rc)
		return rc;
	gemv_rows(f->vec_dot_ref, qformat_row_bytes(f, k), w, m, k, xq, y, qk_threads(threads));
	return OCB_OK;
}
