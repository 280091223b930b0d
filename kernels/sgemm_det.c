/* sgemm_det: thread-count-independent fp32 GEMM on single-threaded OpenBLAS tiles (see
 * sgemm_det.h). */
#include "sgemm_det.h"

#include <omp.h>
#include <stddef.h>

/* Single-threaded OpenBLAS loses speed mostly with fewer tile ROWS (measured on the
 * suites' shapes, Xeon AVX-512: 256-row tiles 150-200 GFLOP/s, 64-row 110-160, 32-row
 * 85-150), and every tile packs its own operands: so tiles start large, columns are split
 * first, and only into 2 (a 4-tile plan cost the MLP step 13% more CPU than
 * multi-threaded OpenBLAS at 1 and 2 threads, the 2-tile plan 0-7%: build/perf/tern_step). */
#define SD_TM 256
#define SD_TN 512
#define SD_MIN_TM 32
#define SD_MIN_TN 64
#define SD_MIN_TILES 2
#define SD_MIN_TILE_FLOPS (2.0 * 1024 * 1024)

static int bypass; /* ocb_sgemm_det_bypass */

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

void sd_plan(int m, int n, int k, struct sd_plan *p)
{
	int tm = SD_TM, tn = SD_TN;
	for (;;) {
		int tiles = ceil_div(m, tm) * ceil_div(n, tn);
		/* a halving must split something (half < extent) and keep the tile's work */
		int can_m = tm / 2 >= SD_MIN_TM && tm / 2 < m &&
			    2.0 * (tm / 2) * (tn < n ? tn : n) * k >= SD_MIN_TILE_FLOPS;
		int can_n = tn / 2 >= SD_MIN_TN && tn / 2 < n &&
			    2.0 * (tm < m ? tm : m) * (tn / 2) * k >= SD_MIN_TILE_FLOPS;
		if (tiles >= SD_MIN_TILES || (!can_m && !can_n))
			break;
		if (can_n)
			tn /= 2;
		else
			tm /= 2;
	}
	p->m = m, p->n = n;
	p->tm = tm < m ? tm : m, p->tn = tn < n ? tn : n;
	p->ntm = m > 0 ? ceil_div(m, p->tm) : 0;
	p->ntn = n > 0 ? ceil_div(n, p->tn) : 0;
}

void sd_for_tiles(const struct sd_plan *p, sd_tile_fn fn, void *ctx, int threads)
{
	int nt = p->ntm * p->ntn;
	if (threads > nt)
		threads = nt;
	/* tile t -> (row block t / ntn, column block t % ntn); which thread runs it is free */
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
	for (int t = 0; t < nt; t++) {
		int bi = t / p->ntn, bj = t % p->ntn;
		int i0 = bi * p->tm, j0 = bj * p->tn;
		int tm = p->m - i0 < p->tm ? p->m - i0 : p->tm;
		int tn = p->n - j0 < p->tn ? p->n - j0 : p->tn;
		fn(ctx, i0, j0, tm, tn);
	}
}

struct gemm_args {
	enum CBLAS_TRANSPOSE ta, tb;
	int k, lda, ldb, ldc;
	float alpha, beta;
	const float *a, *b;
	float *c;
};

/* C[i0:i0+tm][j0:j0+tn] from rows i0.. of op(A) and columns j0.. of op(B), all of k. */
static void gemm_tile(void *ctx, int i0, int j0, int tm, int tn)
{
	const struct gemm_args *g = ctx;
	/* op(A) row i: A[i][:] (NoTrans) or A[:][i] (Trans); op(B) column j likewise */
	const float *a = g->a + (g->ta == CblasNoTrans ? (size_t)i0 * g->lda : (size_t)i0);
	const float *b = g->b + (g->tb == CblasNoTrans ? (size_t)j0 : (size_t)j0 * g->ldb);
	cblas_sgemm(CblasRowMajor, g->ta, g->tb, tm, tn, g->k, g->alpha, a, g->lda, b, g->ldb,
		    g->beta, g->c + (size_t)i0 * g->ldc + j0, g->ldc);
}

void ocb_sgemm_det(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k,
		   float alpha, const float *a, int lda, const float *b, int ldb, float beta,
		   float *c, int ldc, int threads)
{
	struct gemm_args g = {ta, tb, k, lda, ldb, ldc, alpha, beta, a, b, c};
	struct sd_plan p;
	if (m <= 0 || n <= 0)
		return;
	if (bypass) {
		cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
		return;
	}
	sd_plan(m, n, k, &p);
	if (omp_in_parallel()) { /* another thread may be inside OpenBLAS: leave its global */
		sd_for_tiles(&p, gemm_tile, &g, 1);
		return;
	}
	int ob = openblas_get_num_threads();
	if (threads <= 0)
		threads = ob;
	if (ob != 1)
		openblas_set_num_threads(1);
	sd_for_tiles(&p, gemm_tile, &g, threads);
	if (ob != 1)
		openblas_set_num_threads(ob);
}

int ocb_sgemm_det_bypass(int on)
{
	int old = bypass;
	bypass = on;
	return old;
}

void ocb_sgemm_det_ref(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k,
		       float alpha, const float *a, int lda, const float *b, int ldb, float beta,
		       float *c, int ldc)
{
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++) {
			double s = 0.0;
			for (int t = 0; t < k; t++) {
				float av = ta == CblasNoTrans ? a[(size_t)i * lda + t]
							      : a[(size_t)t * lda + i];
				float bv = tb == CblasNoTrans ? b[(size_t)t * ldb + j]
							      : b[(size_t)j * ldb + t];
				s += (double)av * bv;
			}
			float *cij = c + (size_t)i * ldc + j;
			/* beta == 0 overwrites (as BLAS: C may hold garbage) */
			*cij = (float)(alpha * s) + (beta == 0.0f ? 0.0f : beta * *cij);
		}
}
