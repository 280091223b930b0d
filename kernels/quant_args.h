/* quant_args: argument checks and thread count shared by the quantized GEMV
 * (quant_gemv.c) and GEMM (quant_gemm.c) drivers. Internal to kernels/. */
#ifndef OCB_QUANT_ARGS_H
#define OCB_QUANT_ARGS_H

#include <omp.h>
#include <stdint.h>

#include "../common/ocb_error.h"
#include "quant_formats.h"

/* OCB_OK, or OCB_EINVAL naming `what` for a NULL buffer or a shape whose k is not a
 * positive multiple of the format's block. */
static inline int qk_check_args(const struct qformat *f, const void *w, int64_t m, int64_t k,
		      const void *xq, int64_t n, const float *y, const char *what)
{
	if (!f || !w || !xq || !y)
		return ocb_seterr(OCB_EINVAL, "%s: NULL format or buffer", what);
	if (m <= 0 || n <= 0 || k <= 0 || k % f->block)
		return ocb_seterr(OCB_EINVAL, "%s %s: bad shape m=%lld n=%lld k=%lld (k must be a "
				  "positive multiple of %d)", what, f->name, (long long)m, (long long)n,
				  (long long)k, f->block);
	return OCB_OK;
}

/* threads <= 0: OpenMP's default. */
static inline int qk_threads(int threads)
{
	return threads > 0 ? threads : omp_get_max_threads();
}

#endif
