/* sgemm_det: fp32 GEMM (row-major, the cblas_sgemm arguments) whose result does not
 * depend on the thread count, by construction.
 *
 * Multi-threaded OpenBLAS splits a product over its threads and picks kernels and edge
 * handling per slice, so at 2 threads it may sum in another order than at 1 (the fp32 MLP
 * of the `ternary` suite differed in the 9th digit). Here the output C[m][n] is cut into
 * tiles whose shape is a function of (m, n, k) only (sd_plan); each tile is ONE
 * single-threaded cblas_sgemm call over the whole k, and OpenMP hands the tiles to the
 * threads (dynamic: a descheduled thread does not hold the others). The same calls with
 * the same operands happen at any thread count, so C is the same bit for bit.
 *
 * OpenBLAS's thread count is process-global: ocb_sgemm_det sets it to 1 for the tiles and
 * restores the caller's value before returning. threads <= 0: the caller's OpenBLAS
 * thread count (openblas_get_num_threads), so code that used to say "OpenBLAS threads
 * each product" keeps its meaning. Called inside an OpenMP parallel region, the tiles run
 * on the calling thread (the global is not touched: another thread may be in OpenBLAS). */
#ifndef OCB_SGEMM_DET_H
#define OCB_SGEMM_DET_H

#include <cblas.h>

/* Output tiles: tm x tn (edges smaller), ntm x ntn of them. */
struct sd_plan {
	int m, n, tm, tn, ntm, ntn;
};

/* The tiling of an m x n output over a k-long reduction. Starts from 256 x 512 and halves
 * (tn first, down to 64, then tm down to 32) until there are >= 2 tiles, never below
 * ~2 MFLOP per tile (smaller products stay one tile: an OpenMP region costs more). */
void sd_plan(int m, int n, int k, struct sd_plan *p);

/* fn(ctx, i0, j0, tm, tn) once per tile of p, tiles spread over `threads` OpenMP threads
 * (<= 1: in order on the calling thread). */
typedef void (*sd_tile_fn)(void *ctx, int i0, int j0, int tm, int tn);
void sd_for_tiles(const struct sd_plan *p, sd_tile_fn fn, void *ctx, int threads);

/* C = alpha op(A) op(B) + beta C; op(A) m x k, op(B) k x n, row-major. */
void ocb_sgemm_det(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k,
		   float alpha, const float *a, int lda, const float *b, int ldb, float beta,
		   float *c, int ldc, int threads);
/* Benches only (build/perf/tern_step): on != 0 makes ocb_sgemm_det one plain cblas_sgemm
 * on the caller's OpenBLAS threads (NOT thread-independent), the reference the tiles are
 * timed against; returns the previous setting. Process-wide; not for library code. */
int ocb_sgemm_det_bypass(int on);

/* Plain loops, double accumulation (the test's yardstick). */
void ocb_sgemm_det_ref(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k,
		       float alpha, const float *a, int lda, const float *b, int ldb, float beta,
		       float *c, int ldc);

#endif
