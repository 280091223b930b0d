/* bsr_rm_avx2: AVX2+FMA bodies of the row-major block-sparse products (bsr.h, `_rm`) for
 * CPUs without AVX-512 (Zen 3) and OCB_FORCE_AVX2; square B x B blocks, B in {4, 8, 16,
 * 32, 64}. The same scheme as bsr_rm_avx512.c (read its comment) on 8-lane vectors:
 *
 * Y = X W^T, dX = dY W: packed blocks with G = 8/B inputs per vector group (B = 4: pairs,
 * vbroadcastsd of X[t][i .. i+2); B >= 8: G = 1, columns of the block, vbroadcastss), a
 * tile of T batch rows x NO = B*G/8 vectors, T*NO <= 12 of the 16 registers.
 * dW on the stored blocks: the blocks' columns side by side (two 4-wide blocks per
 * vector, one vector per 8 columns for B >= 8), R rows x NV vectors (R*NV <= 12), per
 * batch row NV loads and R broadcasts feeding R*NV FMAs. */
#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#include "bsr_impl.h"

#define AVX2 __attribute__((target("avx2,fma")))
#define INLINE __attribute__((always_inline)) inline

void bsr_rm_pack_avx2(const float *blk, int B, int trans, float *dst)
{
	if (B == 4) /* G = 2: 16 values, not worth the shuffles */
		bsr_rm_pack_ref(blk, B, trans, 2, dst);
	else
		bsr_rm_pack_g1(blk, B, trans, dst);
}

/* G consecutive floats at p repeated over the 8 lanes. */
static AVX2 INLINE __m256 bcast(const float *p, const int G)
{
	if (G == 1)
		return _mm256_set1_ps(*p);
	double d;
	memcpy(&d, p, sizeof d);
	return _mm256_castpd_ps(_mm256_set1_pd(d));
}

/* One tile (see bsr_rm_avx512.c's mm_tile). */
static AVX2 INLINE void mm_tile(const float *pk, const int32_t *pidx, int nb, const float *in,
				int ldin, float *out, int ldout, const int B, const int G,
				const int NO, const int IC, const int T)
{
	__m256 acc[12];
#pragma GCC unroll 12
	for (int a = 0; a < T * NO; a++)
		acc[a] = _mm256_setzero_ps();
	for (int q = 0; q < nb; q++) {
		const float *wq = pk + (size_t)q * B * B, *xq = in + (size_t)pidx[q] * B;
		for (int c = 0; c < B / G; c += IC) {
			__m256 wv[8];
#pragma GCC unroll 8
			for (int j = 0; j < IC * NO; j++)
				wv[j] = _mm256_loadu_ps(wq + (size_t)c * 8 * NO + 8 * j);
			const float *xr = xq + c * G;
#pragma GCC unroll 12
			for (int t = 0; t < T; t++) {
#pragma GCC unroll 8
				for (int ig = 0; ig < IC; ig++) {
					__m256 xb = bcast(xr + ig * G, G);
#pragma GCC unroll 8
					for (int v = 0; v < NO; v++)
						acc[t * NO + v] = _mm256_fmadd_ps(wv[ig * NO + v], xb,
										  acc[t * NO + v]);
				}
				xr += ldin;
				__asm__("" : "+r"(xr)); /* see bsr_rm_avx512.c */
			}
		}
	}
	const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0);
#pragma GCC unroll 12
	for (int t = 0; t < T; t++) {
		float *o = out + (size_t)t * ldout;
		if (G == 1) {
#pragma GCC unroll 8
			for (int v = 0; v < NO; v++)
				_mm256_storeu_ps(o + 8 * v, acc[t * NO + v]);
			continue;
		}
		/* G = 2 (B = 4): lane 2o + e holds output o's inputs i % 2 == e */
		__m256 s = _mm256_add_ps(acc[t], _mm256_permute_ps(acc[t], 0xb1));
		_mm_storeu_ps(o, _mm256_castps256_ps128(_mm256_permutevar8x32_ps(s, even)));
	}
}

static AVX2 INLINE void mm_rows(const float *pack, const int32_t *ptr, const int32_t *pidx,
				const float *in, int ldin, int n, float *out, int ldout, int lo,
				int hi, const int B, const int G, const int NO, const int IC,
				const int TM)
{
	for (int ob = lo; ob < hi; ob++) {
		int p0 = ptr[ob], nb = ptr[ob + 1] - p0, t = 0;
		const float *pk = pack + (size_t)p0 * B * B;
		const int32_t *pi = pidx + p0;
		float *o = out + (size_t)ob * B;
#define MM_TILE(T_)                                                                         \
	mm_tile(pk, pi, nb, in + (size_t)t * ldin, ldin, o + (size_t)t * ldout, ldout, B, G, NO, IC, T_)
		for (; t + TM <= n; t += TM)
			MM_TILE(TM);
		for (; TM > 4 && t + 4 <= n; t += 4)
			MM_TILE(TM > 4 ? 4 : 1);
		for (; t < n; t++)
			MM_TILE(1);
#undef MM_TILE
	}
}

/* Per block size: G, NO, IC (weights in registers) and TM as in bsr_rm_avx512.c, for 16
 * registers. */
AVX2 void bsr_rm_rows_avx2(const float *pack, const int32_t *ptr, const int32_t *pidx, int B,
			   const float *in, int ldin, int n, float *out, int ldout, int lo, int hi)
{
	switch (B) {
	case 4:
		mm_rows(pack, ptr, pidx, in, ldin, n, out, ldout, lo, hi, 4, 2, 1, 1, 12);
		break;
	case 8:
		mm_rows(pack, ptr, pidx, in, ldin, n, out, ldout, lo, hi, 8, 1, 1, 2, 12);
		break;
	case 16:
		mm_rows(pack, ptr, pidx, in, ldin, n, out, ldout, lo, hi, 16, 1, 2, 1, 6);
		break;
	case 32:
		mm_rows(pack, ptr, pidx, in, ldin, n, out, ldout, lo, hi, 32, 1, 4, 1, 2);
		break;
	default: /* 64 */
		mm_rows(pack, ptr, pidx, in, ldin, n, out, ldout, lo, hi, 64, 1, 8, 1, 1);
	}
}

/* R x NV tile of dW (see bsr_rm_avx512.c's dw_tile): P = 8/B blocks per vector for
 * B < 8, else VB = B/8 vectors per block. */
static AVX2 INLINE void dw_tile(const float *dyr, int lddy, const float *x, int ldx, int n,
				const int32_t *cols, int nblk, int r0, float *dw, int accumulate,
				const int B, const int R, const int NV)
{
	const int P = B >= 8 ? 1 : 8 / B, VB = B >= 8 ? B / 8 : 1;
	int off[8][2];
#pragma GCC unroll 8
	for (int v = 0; v < NV; v++)
#pragma GCC unroll 2
		for (int pc = 0; pc < P; pc++) {
			int b = B >= 8 ? v / VB : v * P + pc;
			off[v][pc] = cols[b < nblk ? b : v * P] * B + (B >= 8 ? (v % VB) * 8 : 0);
		}
	__m256 acc[12];
#pragma GCC unroll 12
	for (int a = 0; a < R * NV; a++)
		acc[a] = _mm256_setzero_ps();
	for (int t = 0; t < n; t++) {
		const float *xr = x + (size_t)t * ldx, *dr = dyr + (size_t)t * lddy;
		__m256 xv[8];
#pragma GCC unroll 8
		for (int v = 0; v < NV; v++)
			xv[v] = P == 1 ? _mm256_loadu_ps(xr + off[v][0])
				       : _mm256_insertf128_ps(
						 _mm256_castps128_ps256(_mm_loadu_ps(xr + off[v][0])),
						 _mm_loadu_ps(xr + off[v][P - 1]), 1);
#pragma GCC unroll 4
		for (int r = 0; r < R; r++) {
			__m256 a = _mm256_set1_ps(dr[r]);
#pragma GCC unroll 8
			for (int v = 0; v < NV; v++)
				acc[r * NV + v] = _mm256_fmadd_ps(a, xv[v], acc[r * NV + v]);
		}
	}
	for (int r = 0; r < R; r++)
		for (int v = 0; v < NV; v++) {
			float lane[8];
			_mm256_storeu_ps(lane, acc[r * NV + v]);
			for (int pc = 0; pc < P; pc++) {
				int b = B >= 8 ? v / VB : v * P + pc, w = B >= 8 ? 8 : B;
				if (b >= nblk)
					break;
				float *d = dw + (size_t)b * B * B + (size_t)(r0 + r) * B +
					   (B >= 8 ? (v % VB) * 8 : 0);
				for (int c = 0; c < w; c++)
					d[c] = accumulate ? d[c] + lane[pc * w + c] : lane[pc * w + c];
			}
		}
}

static AVX2 INLINE void dw_rows(const struct ocb_bsr *w, const float *dy, int lddy,
				const float *x, int ldx, int n, float *dw, int accumulate, int lo,
				int hi, const int B, const int R, const int NVMAX)
{
	const int P = B >= 8 ? 1 : 8 / B, VB = B >= 8 ? B / 8 : 1;
	const int BP = B > 8 ? 1 : NVMAX * P;
	for (int i = lo; i < hi; i++)
		for (int p = w->row_ptr[i]; p < w->row_ptr[i + 1]; p += BP) {
			int nblk = w->row_ptr[i + 1] - p < BP ? w->row_ptr[i + 1] - p : BP;
			int nv = B > 8 ? VB : (nblk + P - 1) / P;
			const int32_t *cols = w->col_idx + p;
			float *d = dw + (size_t)p * B * B;
			for (int r0 = 0; r0 < B; r0 += R) {
				const float *dyr = dy + (size_t)i * B + r0;
				if (nv >= NVMAX)
					dw_tile(dyr, lddy, x, ldx, n, cols, nblk, r0, d, accumulate, B,
						R, NVMAX);
				else if (nv == 2 && NVMAX > 2)
					dw_tile(dyr, lddy, x, ldx, n, cols, nblk, r0, d, accumulate, B,
						R, 2);
				else
					dw_tile(dyr, lddy, x, ldx, n, cols, nblk, r0, d, accumulate, B,
						R, 1);
			}
		}
}

AVX2 void bsr_rm_sddmm_rows_avx2(const struct ocb_bsr *w, const float *dy, int lddy,
				 const float *x, int ldx, int n, float *dw, int accumulate, int lo,
				 int hi)
{
	switch (w->br) {
	case 4: /* 2 blocks per vector, 3 vectors: 6 blocks per pass */
		dw_rows(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi, 4, 4, 3);
		break;
	case 8: /* 3 blocks per pass, 4 rows at a time */
		dw_rows(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi, 8, 4, 3);
		break;
	case 16:
		dw_rows(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi, 16, 4, 2);
		break;
	case 32:
		dw_rows(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi, 32, 2, 4);
		break;
	default: /* 64 */
		dw_rows(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi, 64, 1, 8);
	}
}
