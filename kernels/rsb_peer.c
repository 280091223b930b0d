/* rsb_peer: librsb wrapper (see rsb_peer.h). API facts from librsb 1.3's rsb.h and its
 * autotune.c example (rsb_tune_spmm with &mtx tunes the matrix in place, NULL Bp/Cp let
 * the tuner use its own operands). */
#include "rsb_peer.h"

#include <rsb.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_time.h"

static int rsb_users; /* init/finalize reference count (callers are single-threaded) */

static int rsb_fail(rsb_err_t e, const char *what)
{
	char msg[256];
	rsb_strerror_r(e, msg, sizeof msg);
	return ocb_seterr(OCB_ERUNTIME, "librsb %s: %s", what, msg);
}

/* librsb is initialised once per process and finalised at exit: a second rsb_lib_init
 * after rsb_lib_exit ran its SpMM ~1000x slower here (2026-12, librsb 1.3.0.2). */
static void rsb_at_exit(void)
{
	rsb_lib_exit(RSB_NULL_EXIT_OPTIONS);
}

int ocb_rsb_init(void)
{
	static int started;
	rsb_users++;
	if (started)
		return OCB_OK;
	rsb_err_t e = rsb_lib_init(RSB_NULL_INIT_OPTIONS);
	if (e != RSB_ERR_NO_ERROR) {
		rsb_users = 0;
		return rsb_fail(e, "init");
	}
	started = 1;
	atexit(rsb_at_exit);
	return OCB_OK;
}

void ocb_rsb_finalize(void)
{
	if (rsb_users > 0)
		rsb_users--;
}

static int set_threads(int threads)
{
	rsb_int_t t = threads > 0 ? threads : 0; /* 0: librsb's default */
	rsb_err_t e = rsb_lib_set_opt(RSB_IO_WANT_EXECUTING_THREADS, &t);
	return e == RSB_ERR_NO_ERROR ? OCB_OK : rsb_fail(e, "set threads");
}

int ocb_rsb_from_bsr(struct ocb_rsb *r, const struct ocb_bsr *w)
{
	int rc = OCB_OK;
	long nnz = (long)w->nnzb * w->br * w->bc, q = 0;
	rsb_coo_idx_t *ia = NULL, *ja = NULL;
	memset(r, 0, sizeof *r);
	if (!rsb_users)
		return ocb_seterr(OCB_EINVAL, "librsb: ocb_rsb_init was not called");
	ia = malloc((size_t)nnz * sizeof *ia);
	ja = malloc((size_t)nnz * sizeof *ja);
	if (!ia || !ja) {
		rc = ocb_seterr(OCB_ENOMEM, "librsb: out of memory for %ld entries", nnz);
		goto out;
	}
	for (int i = 0; i < w->mb; i++)
		for (int p = w->row_ptr[i]; p < w->row_ptr[i + 1]; p++)
			for (int a = 0; a < w->br; a++)
				for (int c = 0; c < w->bc; c++, q++) {
					ia[q] = i * w->br + a;
					ja[q] = w->col_idx[p] * w->bc + c;
				}
	double t0 = ocb_now_s();
	rsb_err_t e = RSB_ERR_NO_ERROR;
	/* val is in the same order as (ia, ja): block by block, row-major inside */
	r->mtx = rsb_mtx_alloc_from_coo_const(w->val, ia, ja, (rsb_nnz_idx_t)nnz,
					      RSB_NUMERICAL_TYPE_FLOAT, w->m, w->k, 1, 1,
					      RSB_FLAG_NOFLAGS, &e);
	r->build_time = ocb_now_s() - t0;
	if (!r->mtx || e != RSB_ERR_NO_ERROR) {
		rc = rsb_fail(e, "matrix assembly");
		goto out;
	}
	r->m = w->m, r->k = w->k, r->nnz = nnz;
	r->tune_speedup = 1.0;
out:
	free(ia);
	free(ja);
	return rc;
}

void ocb_rsb_release(struct ocb_rsb *r)
{
	if (!r)
		return;
	if (r->mtx)
		rsb_mtx_free(r->mtx);
	memset(r, 0, sizeof *r);
}

int ocb_rsb_tune(struct ocb_rsb *r, const float *x, float *y, int n, int threads,
		 double max_time)
{
	const float one = 1.0f, zero = 0.0f;
	rsb_real_t sf = 0.0;
	struct rsb_mtx_t *m = r->mtx;
	int rc = set_threads(threads);
	if (rc)
		return rc;
	double t0 = ocb_now_s();
	rsb_err_t e = rsb_tune_spmm(&m, &sf, NULL, 0, max_time, RSB_TRANSPOSITION_N, &one, NULL,
				    n, RSB_FLAG_WANT_ROW_MAJOR_ORDER, x, n, &zero, y, n);
	r->tune_time = ocb_now_s() - t0;
	if (e != RSB_ERR_NO_ERROR)
		return rsb_fail(e, "tune_spmm");
	r->mtx = m; /* the tuner may have replaced (and freed) the matrix */
	r->tune_speedup = sf > 0 ? sf : 1.0;
	return OCB_OK;
}

int ocb_rsb_spmm(const struct ocb_rsb *r, const float *x, float *y, int n, int threads)
{
	const float one = 1.0f, zero = 0.0f;
	int rc = set_threads(threads);
	if (rc)
		return rc;
	rsb_err_t e = rsb_spmm(RSB_TRANSPOSITION_N, &one, r->mtx, n, RSB_FLAG_WANT_ROW_MAJOR_ORDER,
			       x, n, &zero, y, n);
	return e == RSB_ERR_NO_ERROR ? OCB_OK : rsb_fail(e, "spmm");
}
