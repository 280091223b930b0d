/* bsr_avx2: AVX2+FMA bodies of the block-sparse products (bsr.h), square B x B blocks,
 * B % 4 == 0.
 *
 * Y = W X and dX = W^T dY share one micro-kernel: a tile of 4 output rows x 8*NV columns
 * (NV = 3: 12 accumulators + 3 panel registers + 1 broadcast = all 16 ymm registers) stays
 * in registers while the kernel walks every block of the block row (block column for W^T)
 * and every inner index of the block: per inner index, NV loads of the X panel row and 4
 * broadcasts of W feed 4*NV FMAs, so it is FMA-bound, not load-bound. The tile loop runs
 * n outermost, then the B/4 row groups, so the X panel columns of one n-tile (blocks x B
 * rows x 96 bytes) stay in L1 across the row groups. The next block's panel rows are
 * prefetched. W^T reads the block transposed (element (o, i) at o + i*B instead of
 * o*B + i), nothing is copied. The n tail (< 8) uses masked loads/stores.
 *
 * dW = dY X^T on stored blocks: dot products over n, 4 rows x 2 columns of the block per
 * register tile (8 accumulators), reduced with hadd at the end of the row. */
#include <immintrin.h>
#include <stddef.h>

#include "bsr_impl.h"

#define AVX2 __attribute__((target("avx2,fma")))
#define INLINE __attribute__((always_inline)) inline

/* Lane mask with the first `rem` (0..8) lanes set. */
static AVX2 INLINE __m256i tail_mask(int rem)
{
	const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	return _mm256_cmpgt_epi32(_mm256_set1_epi32(rem), idx);
}

/* One 4 x (8*NV) tile: out[o][t0 ..] for o in 4 rows starting at out (add: plus its
 * current value), summed over the blocks list. Block q's values: val + blk[q]*B*B (blk
 * NULL: blocks b0, b0+1, ...), its element for tile row o and inner i at o*os + i*is; its
 * panel: pan + pidx[q] * B * ldp (B rows of ldp floats). The last vector uses `mask` when
 * `masked`. */
static AVX2 INLINE void tile4(const float *val, const int32_t *blk, int b0, const int32_t *pidx,
			      int nb, int B, int os, int is, const float *pan, int ldp, int t0,
			      float *out, int ldo, const int NV, const int masked, __m256i mask,
			      int add)
{
	__m256 acc[4][3];
#pragma GCC unroll 8
	for (int o = 0; o < 4; o++)
#pragma GCC unroll 8
		for (int v = 0; v < NV; v++) {
			const float *yr = out + (size_t)o * ldo + t0 + 8 * v;
			if (!add)
				acc[o][v] = _mm256_setzero_ps();
			else if (masked && v == NV - 1)
				acc[o][v] = _mm256_maskload_ps(yr, mask);
			else
				acc[o][v] = _mm256_loadu_ps(yr);
		}
	for (int q = 0; q < nb; q++) {
		const float *wb = val + (size_t)(blk ? blk[q] : b0 + q) * B * B;
		const float *xb = pan + (size_t)pidx[q] * B * ldp + t0;
		if (q + 1 < nb) /* the next block's first panel rows */
			_mm_prefetch((const char *)(pan + (size_t)pidx[q + 1] * B * ldp + t0),
				     _MM_HINT_T0);
		for (int i = 0; i < B; i++) {
			const float *xr = xb + (size_t)i * ldp;
			__m256 xv[3];
			#pragma GCC unroll 8
			for (int v = 0; v < NV; v++)
				xv[v] = masked && v == NV - 1 ? _mm256_maskload_ps(xr + 8 * v, mask)
							      : _mm256_loadu_ps(xr + 8 * v);
			#pragma GCC unroll 8
			for (int o = 0; o < 4; o++) {
				__m256 a = _mm256_broadcast_ss(wb + o * os + i * is);
				#pragma GCC unroll 8
				for (int v = 0; v < NV; v++)
					acc[o][v] = _mm256_fmadd_ps(a, xv[v], acc[o][v]);
			}
		}
	}
	#pragma GCC unroll 8
	for (int o = 0; o < 4; o++) {
		float *yr = out + (size_t)o * ldo + t0;
		#pragma GCC unroll 8
		for (int v = 0; v < NV; v++) {
			if (masked && v == NV - 1)
				_mm256_maskstore_ps(yr + 8 * v, mask, acc[o][v]);
			else
				_mm256_storeu_ps(yr + 8 * v, acc[o][v]);
		}
	}
}

/* All tiles of one output block row: rows out[0 .. B), n columns; row group g (rows g ..
 * g+3) reads its blocks from val shifted by g*os. The blocks are taken in chunks of
 * 256/B (a chunk's panel rows, 256 x 96 bytes per n-tile, stay in L1 across the row
 * groups; its values, 256*B*4 bytes, in L2 across the n-tiles); the first chunk writes
 * the tile, the next ones add to it. An empty row is written as zeros. */
static AVX2 void block_row(const float *val, const int32_t *blk, int b0, const int32_t *pidx,
			   int nb, int B, int os, int is, const float *pan, int ldp, int n,
			   float *out, int ldo)
{
	const __m256i full = _mm256_set1_epi32(-1);
	const int chunk = 256 / B;
	int q0 = 0;
	do {
		int nq = nb - q0 < chunk ? nb - q0 : chunk, add = q0 > 0;
		const int32_t *bq = blk ? blk + q0 : NULL, *pq = pidx + q0;
		int t0 = 0;
		for (; t0 + 24 <= n; t0 += 24)
			for (int g = 0; g < B; g += 4)
				tile4(val + (size_t)g * os, bq, b0 + q0, pq, nq, B, os, is, pan, ldp,
				      t0, out + (size_t)g * ldo, ldo, 3, 0, full, add);
		for (; t0 + 8 <= n; t0 += 8)
			for (int g = 0; g < B; g += 4)
				tile4(val + (size_t)g * os, bq, b0 + q0, pq, nq, B, os, is, pan, ldp,
				      t0, out + (size_t)g * ldo, ldo, 1, 0, full, add);
		if (t0 < n) {
			__m256i mask = tail_mask(n - t0);
			for (int g = 0; g < B; g += 4)
				tile4(val + (size_t)g * os, bq, b0 + q0, pq, nq, B, os, is, pan, ldp,
				      t0, out + (size_t)g * ldo, ldo, 1, 1, mask, add);
		}
		q0 += nq;
	} while (q0 < nb);
}

AVX2 void bsr_spmm_rows_avx2(const struct ocb_bsr *w, const float *x, int ldx, int n, float *y,
			int ldy, int lo, int hi)
{
	int B = w->br;
	for (int i = lo; i < hi; i++) {
		int p0 = w->row_ptr[i], nb = w->row_ptr[i + 1] - p0;
		block_row(w->val, NULL, p0, w->col_idx + p0, nb, B, B, 1, x, ldx, n,
			  y + (size_t)i * B * ldy, ldy);
	}
}

AVX2 void bsr_spmm_t_cols_avx2(const struct ocb_bsr *w, const float *dy, int lddy, int n,
			  float *dx, int lddx, int lo, int hi)
{
	int B = w->br;
	for (int j = lo; j < hi; j++) {
		int q0 = w->col_ptr[j], nb = w->col_ptr[j + 1] - q0;
		block_row(w->val, w->t_blk + q0, 0, w->t_row + q0, nb, B, 1, B, dy, lddy, n,
			  dx + (size_t)j * B * lddx, lddx);
	}
}

/* d[r][c] (+)= dY row r . X row c over n, for a 4 x 2 tile of one block (r, c relative:
 * dyr rows at dyr + r*lddy, xr rows at xr + c*ldx). */
static AVX2 INLINE void dot_tile42(const float *dyr, int lddy, const float *xr, int ldx, int n,
				   float *d, int ldd, int accumulate)
{
	__m256 acc[8];
	#pragma GCC unroll 8
	for (int a = 0; a < 8; a++)
		acc[a] = _mm256_setzero_ps();
	int t = 0;
	for (; t + 8 <= n; t += 8) {
		__m256 x0 = _mm256_loadu_ps(xr + t), x1 = _mm256_loadu_ps(xr + ldx + t);
		#pragma GCC unroll 8
		for (int r = 0; r < 4; r++) {
			__m256 dv = _mm256_loadu_ps(dyr + (size_t)r * lddy + t);
			acc[2 * r] = _mm256_fmadd_ps(dv, x0, acc[2 * r]);
			acc[2 * r + 1] = _mm256_fmadd_ps(dv, x1, acc[2 * r + 1]);
		}
	}
	if (t < n) {
		__m256i m = tail_mask(n - t);
		__m256 x0 = _mm256_maskload_ps(xr + t, m), x1 = _mm256_maskload_ps(xr + ldx + t, m);
		#pragma GCC unroll 8
		for (int r = 0; r < 4; r++) {
			__m256 dv = _mm256_maskload_ps(dyr + (size_t)r * lddy + t, m);
			acc[2 * r] = _mm256_fmadd_ps(dv, x0, acc[2 * r]);
			acc[2 * r + 1] = _mm256_fmadd_ps(dv, x1, acc[2 * r + 1]);
		}
	}
	float s[8];
	_mm256_storeu_ps(s, bsr_hsum8(acc));
	#pragma GCC unroll 8
	for (int r = 0; r < 4; r++)
		#pragma GCC unroll 8
		for (int c = 0; c < 2; c++) {
			float *o = d + (size_t)r * ldd + c;
			*o = accumulate ? *o + s[2 * r + c] : s[2 * r + c];
		}
}

AVX2 void bsr_sddmm_rows_avx2(const struct ocb_bsr *w, const float *dy, int lddy, const float *x,
			 int ldx, int n, float *dw, int accumulate, int lo, int hi)
{
	int B = w->br;
	for (int i = lo; i < hi; i++)
		for (int p = w->row_ptr[i]; p < w->row_ptr[i + 1]; p++) {
			float *d = dw + (size_t)p * B * B;
			const float *xb = x + (size_t)w->col_idx[p] * B * ldx;
			for (int r = 0; r < B; r += 4)
				for (int c = 0; c < B; c += 2)
					dot_tile42(dy + (size_t)(i * B + r) * lddy, lddy,
						   xb + (size_t)c * ldx, ldx, n, d + (size_t)r * B + c,
						   B, accumulate);
		}
}
