/* bsr_avx512: AVX-512F bodies of Y = W X, dX = W^T dY and dW on the stored blocks (bsr.h),
 * square B x B blocks, B % 4 == 0; chosen at run time when ocb_cpu_avx512f() (bsr_spmm.c), the AVX2 bodies
 * (bsr_avx2.c) stay for CPUs without AVX-512 (Zen 3) and OCB_FORCE_AVX2.
 *
 * Why: on the AVX-512 Xeon the AVX2 tile ran at about the ymm FMA peak of a core while
 * OpenBLAS's dense sgemm ran its zmm kernel, so the speedup at 10% density was capped
 * near 10 x (ymm peak / zmm sgemm rate) ~ 5.5x. The zmm tile doubles the work per FMA.
 *
 * Tile: R output rows (8, or 4 when B == 4) x 16*NV columns (NV <= 3) in registers:
 * 24 zmm accumulators + 3 panel vectors of the 32 registers; per inner index, NV loads of
 * the X panel row and R broadcasts of W (folded into the FMA as {1to16} memory operands
 * by the compiler) feed R*NV FMAs, so it is FMA-bound. The last panel vector of a tile is
 * loaded/stored under a lane mask (all ones except at the n tail): one code path for
 * every n. Loop order per output block row: chunks of blocks whose panel rows (128 rows
 * x 16*NV floats <= 24 KiB) stay in L1 across the B/R row groups, then the n tiles, then
 * the row groups; the first chunk writes the tile, later ones add to it. W^T reads each
 * block transposed in place (element (o, i) at o + i*B). Same summation order per output
 * element for any thread split, as the other bodies.
 *
 * dW = dY X^T on the stored blocks: dot products over n, a 4 x 4 tile of the block in 16
 * zmm accumulators (8 loads feed 16 FMAs), reduced once per tile. */
#include <immintrin.h>
#include <stddef.h>

#include "bsr_impl.h"

#define AVX512 __attribute__((target("avx512f")))
#define INLINE __attribute__((always_inline)) inline

/* Lanes 0 .. rem-1 set (rem 1..16). */
static INLINE __mmask16 lanes(int rem)
{
	return (__mmask16)(rem >= 16 ? 0xffff : (1u << rem) - 1u);
}

/* One R x (16*NV) tile: out[o][t0 ..] (plus its current value when add) summed over the
 * nb blocks listed (values val + blk[q]*B*B, or b0 + q when blk is NULL; element (o, i)
 * at o*os + i*is; panel pan + pidx[q]*B*ldp, B rows of ldp floats). The last vector is
 * masked by `last`. */
static AVX512 INLINE void tile(const float *val, const int32_t *blk, int b0,
			       const int32_t *pidx, int nb, int B, int os, int is,
			       const float *pan, int ldp, int t0, float *out, int ldo,
			       const int R, const int NV, __mmask16 last, int add)
{
	__m512 acc[8][3];
#pragma GCC unroll 8
	for (int o = 0; o < R; o++)
#pragma GCC unroll 3
		for (int v = 0; v < NV; v++) {
			const float *yr = out + (size_t)o * ldo + t0 + 16 * v;
			__mmask16 k = v == NV - 1 ? last : 0xffff;
			acc[o][v] = add ? _mm512_maskz_loadu_ps(k, yr) : _mm512_setzero_ps();
		}
	for (int q = 0; q < nb; q++) {
		const float *wb = val + (size_t)(blk ? blk[q] : b0 + q) * B * B;
		const float *xb = pan + (size_t)pidx[q] * B * ldp + t0;
		if (q + 1 < nb) /* the next block's first panel row */
			_mm_prefetch((const char *)(pan + (size_t)pidx[q + 1] * B * ldp + t0),
				     _MM_HINT_T0);
		for (int i = 0; i < B; i++) {
			const float *xr = xb + (size_t)i * ldp;
			__m512 xv[3];
#pragma GCC unroll 3
			for (int v = 0; v < NV; v++)
				xv[v] = _mm512_maskz_loadu_ps(v == NV - 1 ? last : 0xffff,
							      xr + 16 * v);
#pragma GCC unroll 8
			for (int o = 0; o < R; o++) {
				__m512 a = _mm512_set1_ps(wb[o * os + i * is]);
#pragma GCC unroll 3
				for (int v = 0; v < NV; v++)
					acc[o][v] = _mm512_fmadd_ps(a, xv[v], acc[o][v]);
			}
		}
	}
#pragma GCC unroll 8
	for (int o = 0; o < R; o++)
#pragma GCC unroll 3
		for (int v = 0; v < NV; v++)
			_mm512_mask_storeu_ps(out + (size_t)o * ldo + t0 + 16 * v,
					      v == NV - 1 ? last : 0xffff, acc[o][v]);
}

/* The row groups of one n tile of NV vectors (the last masked by `last`). */
static AVX512 INLINE void tile_rows(const float *val, const int32_t *bq, int b0,
				    const int32_t *pq, int nq, int B, int os, int is,
				    const float *pan, int ldp, int t0, float *out, int ldo,
				    const int NV, __mmask16 last, int add)
{
	if (B % 8 == 0)
		for (int g = 0; g < B; g += 8)
			tile(val + (size_t)g * os, bq, b0, pq, nq, B, os, is, pan, ldp, t0,
			     out + (size_t)g * ldo, ldo, 8, NV, last, add);
	else
		for (int g = 0; g < B; g += 4)
			tile(val + (size_t)g * os, bq, b0, pq, nq, B, os, is, pan, ldp, t0,
			     out + (size_t)g * ldo, ldo, 4, NV, last, add);
}

/* All tiles of one output block row: rows out[0 .. B), n columns. An empty list writes
 * zeros (one pass with nq = 0). */
static AVX512 void block_row(const float *val, const int32_t *blk, int b0, const int32_t *pidx,
			     int nb, int B, int os, int is, const float *pan, int ldp, int n,
			     float *out, int ldo)
{
	const int chunk = B >= 128 ? 1 : 128 / B;
	int q0 = 0;
	do {
		int nq = nb - q0 < chunk ? nb - q0 : chunk, add = q0 > 0;
		const int32_t *bq = blk ? blk + q0 : NULL, *pq = pidx + q0;
		for (int t0 = 0; t0 < n;) {
			int rem = n - t0;
			if (rem > 32) {
				tile_rows(val, bq, b0 + q0, pq, nq, B, os, is, pan, ldp, t0, out,
					  ldo, 3, lanes(rem - 32), add);
				t0 += 48;
			} else if (rem > 16) {
				tile_rows(val, bq, b0 + q0, pq, nq, B, os, is, pan, ldp, t0, out,
					  ldo, 2, lanes(rem - 16), add);
				t0 += 32;
			} else {
				tile_rows(val, bq, b0 + q0, pq, nq, B, os, is, pan, ldp, t0, out,
					  ldo, 1, lanes(rem), add);
				t0 += 16;
			}
		}
		q0 += nq;
	} while (q0 < nb);
}

AVX512 void bsr_spmm_rows_avx512(const struct ocb_bsr *w, const float *x, int ldx, int n,
				 float *y, int ldy, int lo, int hi)
{
	int B = w->br;
	for (int i = lo; i < hi; i++) {
		int p0 = w->row_ptr[i], nb = w->row_ptr[i + 1] - p0;
		block_row(w->val, NULL, p0, w->col_idx + p0, nb, B, B, 1, x, ldx, n,
			  y + (size_t)i * B * ldy, ldy);
	}
}

AVX512 void bsr_spmm_t_cols_avx512(const struct ocb_bsr *w, const float *dy, int lddy, int n,
				   float *dx, int lddx, int lo, int hi)
{
	int B = w->br;
	for (int j = lo; j < hi; j++) {
		int q0 = w->col_ptr[j], nb = w->col_ptr[j + 1] - q0;
		block_row(w->val, w->t_blk + q0, 0, w->t_row + q0, nb, B, 1, B, dy, lddy, n,
			  dx + (size_t)j * B * lddx, lddx);
	}
}

/* The two 256-bit halves of v added: lane l = v[l] + v[l + 8]. */
static AVX512 INLINE __m256 fold(__m512 v)
{
	return _mm256_add_ps(_mm512_castps512_ps256(v),
			     _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

/* d[r][c] (+)= dY row r . X row c over n for a 4 x 4 tile of one block (dyr rows at
 * dyr + r*lddy, xr rows at xr + c*ldx): 16 zmm accumulators over n in steps of 16 (the
 * tail masked), folded to ymm and summed across lanes 8 at a time. */
static AVX512 INLINE void dot_tile44(const float *dyr, int lddy, const float *xr, int ldx,
				     int n, float *d, int ldd, int accumulate)
{
	__m512 acc[16];
#pragma GCC unroll 16
	for (int a = 0; a < 16; a++)
		acc[a] = _mm512_setzero_ps();
	for (int t = 0; t < n; t += 16) {
		__mmask16 k = lanes(n - t);
		__m512 xv[4];
#pragma GCC unroll 4
		for (int c = 0; c < 4; c++)
			xv[c] = _mm512_maskz_loadu_ps(k, xr + (size_t)c * ldx + t);
#pragma GCC unroll 4
		for (int r = 0; r < 4; r++) {
			__m512 dv = _mm512_maskz_loadu_ps(k, dyr + (size_t)r * lddy + t);
#pragma GCC unroll 4
			for (int c = 0; c < 4; c++)
				acc[4 * r + c] = _mm512_fmadd_ps(dv, xv[c], acc[4 * r + c]);
		}
	}
	__m256 f[16];
#pragma GCC unroll 16
	for (int a = 0; a < 16; a++)
		f[a] = fold(acc[a]);
	float s[16];
	_mm256_storeu_ps(s, bsr_hsum8(f));
	_mm256_storeu_ps(s + 8, bsr_hsum8(f + 8));
#pragma GCC unroll 4
	for (int r = 0; r < 4; r++)
#pragma GCC unroll 4
		for (int c = 0; c < 4; c++) {
			float *o = d + (size_t)r * ldd + c;
			*o = accumulate ? *o + s[4 * r + c] : s[4 * r + c];
		}
}

AVX512 void bsr_sddmm_rows_avx512(const struct ocb_bsr *w, const float *dy, int lddy,
				  const float *x, int ldx, int n, float *dw, int accumulate,
				  int lo, int hi)
{
	int B = w->br;
	for (int i = lo; i < hi; i++)
		for (int p = w->row_ptr[i]; p < w->row_ptr[i + 1]; p++) {
			float *d = dw + (size_t)p * B * B;
			const float *xb = x + (size_t)w->col_idx[p] * B * ldx;
			for (int r = 0; r < B; r += 4)
				for (int c = 0; c < B; c += 4)
					dot_tile44(dy + (size_t)(i * B + r) * lddy, lddy,
						   xb + (size_t)c * ldx, ldx, n, d + (size_t)r * B + c,
						   B, accumulate);
		}
}
