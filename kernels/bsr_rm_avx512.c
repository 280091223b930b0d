/* bsr_rm_avx512: AVX-512F bodies of the row-major block-sparse products (bsr.h, `_rm`),
 * square B x B blocks, B in {4, 8, 16, 32, 64}; chosen at run time (bsr_rm.c).
 *
 * Y[t][o] = sum_i W[o][i] X[t][i] (and dX, the same with W^T's blocks). The lanes hold
 * output features of one block row, so the weights must be read down a block's columns:
 * each call first packs every block (bsr_rm_pack_avx512) so that G = 16/B consecutive
 * inputs (G = 1 for B >= 16) of all B outputs fill one vector: element (o, i) at
 * (i/G)*16*NO + o*G + i%G. A tile of T batch rows x NO = B*G/16 vectors of accumulators
 * (T*NO <= 24 of the 32 registers) then takes, per group of G inputs, NO vector loads of
 * the packed block and per row one broadcast of G consecutive inputs X[t][i .. i+G)
 * (vbroadcastss / vbroadcastsd / vbroadcastf32x4), so every lane of every FMA is useful
 * work even for B = 4 or 8; the weight vectors of a block stay in registers while the
 * rows go by. With G > 1 a lane sums over inputs i % G == e only; the G
 * partial sums of an output are added at the end of the tile (in-lane permutes) and the
 * B outputs compressed and stored. Per output block row, the batch is walked in tiles;
 * the packed blocks of the row stay in L1 across them.
 *
 * dW[b][r][c] = sum_t dY[t][r] X[t][c] on the stored blocks of a block row: the lanes
 * hold columns of the blocks laid side by side (two 8-wide blocks or four 4-wide ones
 * per vector, one vector per 16 columns for B >= 16), R rows of dW x NV vectors in
 * registers (R*NV <= 24); per batch row t, NV vector loads (assembled from the blocks'
 * pieces of X[t]) and R broadcasts of dY[t][row] feed R*NV FMAs, the sum over t running
 * in the registers. Each dW element is one accumulator lane summed over t in order: the
 * same result for any thread split. */
#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#include "bsr_impl.h"

#define AVX512 __attribute__((target("avx512f")))
#define INLINE __attribute__((always_inline)) inline

/* ---- packing ---- */

/* B = 8 (G = 2), trans 0: dst qword (ip, o) = the input pair 2ip, 2ip+1 of output o, i.e.
 * blk's qword o*4 + ip: an 8 x 4 transpose of qwords in two rounds of permutes. */
static AVX512 void pack8_rows(const float *blk, float *dst)
{
	__m512d a[4], u[4];
	for (int k = 0; k < 4; k++) /* outputs 2k, 2k+1: qword (o - 2k)*4 + ip */
		a[k] = _mm512_loadu_pd((const double *)(blk + 16 * k));
	/* u[2h + s]: outputs 4h .. 4h+3 for the input pairs 2s, 2s+1 (4 qwords each) */
	const __m512i lo = _mm512_setr_epi64(0, 4, 8, 12, 1, 5, 9, 13);
	const __m512i hi = _mm512_setr_epi64(2, 6, 10, 14, 3, 7, 11, 15);
	for (int h = 0; h < 2; h++) {
		u[2 * h] = _mm512_permutex2var_pd(a[2 * h], lo, a[2 * h + 1]);
		u[2 * h + 1] = _mm512_permutex2var_pd(a[2 * h], hi, a[2 * h + 1]);
	}
	const __m512i first = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11);
	const __m512i second = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
	for (int s = 0; s < 2; s++) {
		_mm512_storeu_pd((double *)(dst + 32 * s),
				 _mm512_permutex2var_pd(u[s], first, u[2 + s]));
		_mm512_storeu_pd((double *)(dst + 32 * s + 16),
				 _mm512_permutex2var_pd(u[s], second, u[2 + s]));
	}
}

AVX512 void bsr_rm_pack_avx512(const float *blk, int B, int trans, float *dst)
{
	if (B == 8 && !trans) {
		pack8_rows(blk, dst);
	} else if (B == 8) { /* (ip, o, e) <- blk[(2ip + e)*8 + o]: interleave two rows */
		const __m512i idx = _mm512_setr_epi32(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6,
						      14, 7, 15);
		for (int ip = 0; ip < 4; ip++)
			_mm512_storeu_ps(dst + 16 * ip,
					 _mm512_permutexvar_ps(idx, _mm512_loadu_ps(blk + 16 * ip)));
	} else if (B == 4 && !trans) { /* G = 4: (o, i) at 4o + i, the block itself */
		_mm512_storeu_ps(dst, _mm512_loadu_ps(blk));
	} else if (B == 4) { /* a 4 x 4 transpose */
		const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3,
						      7, 11, 15);
		_mm512_storeu_ps(dst, _mm512_permutexvar_ps(idx, _mm512_loadu_ps(blk)));
	} else {
		bsr_rm_pack_g1(blk, B, trans, dst);
	}
}

/* ---- Y = X W^T, dX = dY W ---- */

/* G consecutive floats at p repeated over the 16 lanes. */
static AVX512 INLINE __m512 bcast(const float *p, const int G)
{
	if (G == 1)
		return _mm512_set1_ps(*p);
	if (G == 2) {
		double d;
		memcpy(&d, p, sizeof d);
		return _mm512_castpd_ps(_mm512_set1_pd(d));
	}
	return _mm512_broadcast_f32x4(_mm_loadu_ps(p));
}

/* One tile: rows out[0 .. T) (stride ldout), B outputs each, summed over the nb packed
 * blocks pk whose inputs start at in + pidx[q]*B (rows of stride ldin). Per block, IC
 * input groups at a time have their IC*NO weight vectors in registers while the T rows
 * go by, each row's inputs addressed from one pointer stepped by ldin (the empty asm
 * keeps GCC from precomputing T row offsets per block, which spilled them: 3 integer
 * instructions per FMA). */
static AVX512 INLINE void mm_tile(const float *pk, const int32_t *pidx, int nb, const float *in,
				  int ldin, float *out, int ldout, const int B, const int G,
				  const int NO, const int IC, const int T)
{
	__m512 acc[24];
#pragma GCC unroll 24
	for (int a = 0; a < T * NO; a++)
		acc[a] = _mm512_setzero_ps();
	for (int q = 0; q < nb; q++) {
		const float *wq = pk + (size_t)q * B * B, *xq = in + (size_t)pidx[q] * B;
		for (int c = 0; c < B / G; c += IC) {
			__m512 wv[16];
#pragma GCC unroll 16
			for (int j = 0; j < IC * NO; j++)
				wv[j] = _mm512_loadu_ps(wq + (size_t)c * 16 * NO + 16 * j);
			const float *xr = xq + c * G;
#pragma GCC unroll 24
			for (int t = 0; t < T; t++) {
#pragma GCC unroll 16
				for (int ig = 0; ig < IC; ig++) {
					__m512 xb = bcast(xr + ig * G, G);
#pragma GCC unroll 4
					for (int v = 0; v < NO; v++)
						acc[t * NO + v] = _mm512_fmadd_ps(wv[ig * NO + v], xb,
										  acc[t * NO + v]);
				}
				xr += ldin;
				__asm__("" : "+r"(xr));
			}
		}
	}
	/* lanes 0, G, 2G, ... to the front */
	const __m512i cidx = G == 2 ? _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 0, 0, 0, 0, 0,
						      0, 0, 0)
				    : _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
							0);
#pragma GCC unroll 24
	for (int t = 0; t < T; t++) {
		float *o = out + (size_t)t * ldout;
		if (G == 1) {
#pragma GCC unroll 4
			for (int v = 0; v < NO; v++)
				_mm512_storeu_ps(o + 16 * v, acc[t * NO + v]);
			continue;
		}
		__m512 s = _mm512_add_ps(acc[t], _mm512_permute_ps(acc[t], 0xb1)); /* pairs */
		if (G == 4)
			s = _mm512_add_ps(s, _mm512_permute_ps(s, 0x4e)); /* then quads */
		__m512 c = _mm512_permutexvar_ps(cidx, s);
		_mm512_mask_storeu_ps(o, (__mmask16)((1u << B) - 1), c);
	}
}

/* Every output block row of [lo, hi), the batch in tiles of TM rows, the rest in 8, 4
 * and 1 (T must be a constant for the accumulators to live in registers). */
static AVX512 INLINE void mm_rows(const float *pack, const int32_t *ptr, const int32_t *pidx,
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
		for (; TM > 8 && t + 8 <= n; t += 8)
			MM_TILE(TM > 8 ? 8 : 1);
		for (; TM > 4 && t + 4 <= n; t += 4)
			MM_TILE(TM > 4 ? 4 : 1);
		for (; t < n; t++)
			MM_TILE(1);
#undef MM_TILE
	}
}

/* Per block size: G inputs per vector group, NO vectors per group, IC groups' weights
 * in registers (IC*NO <= 16), TM rows per tile (TM*NO accumulators, with the weights
 * <= 29 of the 32 registers). */
AVX512 void bsr_rm_rows_avx512(const float *pack, const int32_t *ptr, const int32_t *pidx,
			       int B, const float *in, int ldin, int n, float *out, int ldout,
			       int lo, int hi)
{
	switch (B) {
	case 4:
		mm_rows(pack, ptr, pidx, in, ldin, n, out, ldout, lo, hi, 4, 4, 1, 1, 24);
		break;
	case 8:
		mm_rows(pack, ptr, pidx, in, ldin, n, out, ldout, lo, hi, 8, 2, 1, 4, 24);
		break;
	case 16:
		mm_rows(pack, ptr, pidx, in, ldin, n, out, ldout, lo, hi, 16, 1, 1, 16, 12);
		break;
	case 32:
		mm_rows(pack, ptr, pidx, in, ldin, n, out, ldout, lo, hi, 32, 1, 2, 8, 6);
		break;
	default: /* 64 */
		mm_rows(pack, ptr, pidx, in, ldin, n, out, ldout, lo, hi, 64, 1, 4, 4, 3);
	}
}

/* ---- dW on the stored blocks ---- */

/* R rows (r0 ..) of dW for nblk blocks of one block row side by side (their columns at
 * cols[b]*B in a row of X), NV vectors of 16 columns: P = 16/B blocks per vector for
 * B < 16, else VB = B/16 vectors per block. dyr: dY's column of row r0 of the block row.
 * Missing pieces of the last vector repeat its first block's and are not stored. */
static AVX512 INLINE void dw_tile(const float *dyr, int lddy, const float *x, int ldx, int n,
				  const int32_t *cols, int nblk, int r0, float *dw, int accumulate,
				  const int B, const int R, const int NV)
{
	const int P = B >= 16 ? 1 : 16 / B, VB = B >= 16 ? B / 16 : 1;
	int off[6][4];
#pragma GCC unroll 6
	for (int v = 0; v < NV; v++)
#pragma GCC unroll 4
		for (int pc = 0; pc < P; pc++) {
			int b = B >= 16 ? v / VB : v * P + pc;
			off[v][pc] = cols[b < nblk ? b : v * P] * B + (B >= 16 ? (v % VB) * 16 : 0);
		}
	__m512 acc[24];
#pragma GCC unroll 24
	for (int a = 0; a < R * NV; a++)
		acc[a] = _mm512_setzero_ps();
	for (int t = 0; t < n; t++) {
		const float *xr = x + (size_t)t * ldx, *dr = dyr + (size_t)t * lddy;
		__m512 xv[6];
#pragma GCC unroll 6
		for (int v = 0; v < NV; v++) {
			const int *o = off[v];
			if (P == 1) {
				xv[v] = _mm512_loadu_ps(xr + o[0]);
			} else if (P == 2) {
				__m512 lo = _mm512_castps256_ps512(_mm256_loadu_ps(xr + o[0]));
				__m256d hi = _mm256_castps_pd(_mm256_loadu_ps(xr + o[1]));
				xv[v] = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(lo), hi, 1));
			} else {
				__m512 q = _mm512_castps128_ps512(_mm_loadu_ps(xr + o[0]));
				q = _mm512_insertf32x4(q, _mm_loadu_ps(xr + o[1]), 1);
				q = _mm512_insertf32x4(q, _mm_loadu_ps(xr + o[2]), 2);
				xv[v] = _mm512_insertf32x4(q, _mm_loadu_ps(xr + o[3]), 3);
			}
		}
#pragma GCC unroll 8
		for (int r = 0; r < R; r++) {
			__m512 a = _mm512_set1_ps(dr[r]);
#pragma GCC unroll 6
			for (int v = 0; v < NV; v++)
				acc[r * NV + v] = _mm512_fmadd_ps(a, xv[v], acc[r * NV + v]);
		}
	}
	for (int r = 0; r < R; r++)
		for (int v = 0; v < NV; v++) {
			float lane[16];
			_mm512_storeu_ps(lane, acc[r * NV + v]);
			for (int pc = 0; pc < P; pc++) {
				int b = B >= 16 ? v / VB : v * P + pc, w = B >= 16 ? 16 : B;
				if (b >= nblk)
					break;
				float *d = dw + (size_t)b * B * B + (size_t)(r0 + r) * B +
					   (B >= 16 ? (v % VB) * 16 : 0);
				for (int c = 0; c < w; c++)
					d[c] = accumulate ? d[c] + lane[pc * w + c] : lane[pc * w + c];
			}
		}
}

/* The blocks of block rows [lo, hi) in passes of up to BP = NVMAX*P blocks (one block
 * per pass for B > 16), each pass R rows at a time; the last pass of a row takes fewer
 * vectors. */
static AVX512 INLINE void dw_rows(const struct ocb_bsr *w, const float *dy, int lddy,
				  const float *x, int ldx, int n, float *dw, int accumulate, int lo,
				  int hi, const int B, const int R, const int NVMAX)
{
	const int P = B >= 16 ? 1 : 16 / B, VB = B >= 16 ? B / 16 : 1;
	const int BP = B > 16 ? 1 : NVMAX * P;
	for (int i = lo; i < hi; i++)
		for (int p = w->row_ptr[i]; p < w->row_ptr[i + 1]; p += BP) {
			int nblk = w->row_ptr[i + 1] - p < BP ? w->row_ptr[i + 1] - p : BP;
			int nv = B > 16 ? VB : (nblk + P - 1) / P;
			const int32_t *cols = w->col_idx + p;
			float *d = dw + (size_t)p * B * B;
			for (int r0 = 0; r0 < B; r0 += R) {
				const float *dyr = dy + (size_t)i * B + r0;
#define DW_TILE(NV_)                                                                        \
	dw_tile(dyr, lddy, x, ldx, n, cols, nblk, r0, d, accumulate, B, R, (NV_) < NVMAX ? (NV_) : NVMAX)
				switch (nv) {
				case 1: DW_TILE(1); break;
				case 2: DW_TILE(2); break;
				case 3: DW_TILE(3); break;
				case 4: DW_TILE(4); break;
				case 5: DW_TILE(5); break;
				default: DW_TILE(6);
				}
#undef DW_TILE
			}
		}
}

AVX512 void bsr_rm_sddmm_rows_avx512(const struct ocb_bsr *w, const float *dy, int lddy,
				     const float *x, int ldx, int n, float *dw, int accumulate,
				     int lo, int hi)
{
	switch (w->br) {
	case 4: /* 4 blocks per vector, 6 vectors: 24 blocks per pass */
		dw_rows(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi, 4, 4, 6);
		break;
	case 8: /* 2 blocks per vector: 6 per pass, all 8 rows */
		dw_rows(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi, 8, 8, 3);
		break;
	case 16:
		dw_rows(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi, 16, 8, 3);
		break;
	case 32:
		dw_rows(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi, 32, 8, 2);
		break;
	default: /* 64 */
		dw_rows(w, dy, lddy, x, ldx, n, dw, accumulate, lo, hi, 64, 4, 4);
	}
}
