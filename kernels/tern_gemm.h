/* tern_gemm: the matrix products of ternary / low-bit training (the `ternary` suite):
 * int8 weight codes x int8 activations for the forward pass, and the two backward
 * products through the low-bit weights.
 *
 * Layouts. Weights: int8 codes W[m][ldk] (ldk = tg_ldk(k): k rounded up to 64, zero
 * padded), value = sw * W (one fp32 scale per tensor; codes in [-127, 127]).
 * Activations: int8 Xq[n][ldk] with one fp32 scale per row and block of TG_ABLK = 256
 * values along k (xd[n][tg_nblk(k)]): d = max|x| / 127, q = clamp(lrintf(x * (1/d)),
 * -127, 127) — exactly the quant suite's block_qa256 arithmetic (quant_formats.c), so a
 * ternary layer exported to TQ2_0/TQ1_0 and run through qgemm sees the same integers. For
 * k <= 256 this is BitNet's per-token absmax (REFERENCE.md §1).
 *
 *   tg_gemm:   Y[n][m] = sum_b (sw * xd[i][b]) * (int32) dot_b(Xq[i], W[j])   (forward)
 *   tg_gemm_dx: dX[n][k] = sw * dY[n][m] W[m][k]                     (backward, input)
 *   tg_gemm_dw: G[r][k]  = dY[n][j0:j0+r]^T X[n][k]         (backward, one weight tile)
 *
 * tg_gemm and tg_gemm_lowbit are blocked register-tile GEMMs (tern_tile.h: packed weight
 * panels in the layout of the dot instruction, activation rows broadcast 4 bytes at a time,
 * OpenMP over (panel, row chunk) tiles), chosen at run time: AVX-512 VNNI (vpdpbusd zmm),
 * AVX-VNNI (vpdpbusd ymm), plain AVX2 (vpmaddwd on int16 pairs; tg_gemm_lowbit:
 * vpmaddubsw for |w| <= 7), else _ref. Integer dots are exact, so every path equals _ref up
 * to fp32 rounding of the dequantizing epilogue (exactly, when the scales are 1 and the
 * sums below 2^24), and each y element is computed by one tile in one order whatever the
 * thread count. dx and dw dequantize a tile of weight
 * rows and call OpenBLAS sgemm in thread-independent tiles (sgemm_det.h: the same bits at
 * any thread count; the caller's OpenBLAS thread count). threads <= 0:
 * OpenMP's default. Everything is the caller's memory; dx allocates one tile buffer. */
#ifndef OCB_TERN_GEMM_H
#define OCB_TERN_GEMM_H

#include <stddef.h>
#include <stdint.h>

#define TG_ABLK 256

static inline int tg_ldk(int k) { return (k + 63) & ~63; }
static inline int tg_nblk(int k) { return (k + TG_ABLK - 1) / TG_ABLK; }

/* x[n][k] fp32 -> xq[n][ldk] (padding zeroed), xd[n][nblk]. */
void tg_quant_act(const float *x, int n, int k, int8_t *xq, float *xd);

void tg_gemm(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m, int k,
	     float *y, int threads);
void tg_gemm_ref(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m,
		 int k, float *y, int threads);

/* The same product for low-bit weights, |W| <= 7 (ternary, 3 and 4 bits): the plain-AVX2
 * path uses the unsigned idiom (x + 128 as u8, vpmaddubsw + vpmaddwd, minus 128 x the
 * weight block sums), the integer-dot roof's own instructions; VNNI paths as tg_gemm. */
void tg_gemm_lowbit(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m,
		    int k, float *y, int threads);

/* The paths by name (tests and benches call each one the CPU has). OCB_ENOMEM if the
 * packed copies (n x ldk activations, m x ldk weights, block sums) cannot be allocated.
 * _vnni512 needs tg_have_vnni512() (AVX-512 F/BW/VNNI, OCB_FORCE_AVX2 unset), _avxvnni
 * ocb_cpu_avxvnni(), _avx2 and _lowbit_avx2 (|w| <= 7 only) ocb_cpu_avx2(). */
int tg_have_vnni512(void);
int tg_gemm_vnni512(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m,
		    int k, float *y, int threads);
int tg_gemm_avxvnni(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m,
		    int k, float *y, int threads);
int tg_gemm_avx2(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m,
		 int k, float *y, int threads);
int tg_gemm_lowbit_avx2(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw,
			int m, int k, float *y, int threads);
/* Name of the path tg_gemm (lowbit 0) / tg_gemm_lowbit (1) takes on this CPU:
 * "avx512vnni", "avxvnni", "avx2", "avx2-lowbit" or "ref". */
const char *tg_gemm_path(int lowbit);

/* Threads tg_gemm (lowbit 0) / tg_gemm_lowbit (1) runs a call of this shape on with
 * `threads` asked (<= 0: OpenMP's default) on this CPU: fewer for a small product (the
 * tiled kernels' work rule, tern_tile.h); the _ref path uses them all. */
int tg_gemm_team(int lowbit, int n, int m, int k, int threads);

/* The transient bytes tg_gemm (lowbit 0) / tg_gemm_lowbit (1) allocates during a call on
 * this CPU with `threads` threads: *wbytes the packed weight panels (+ column sums), one
 * per thread, *abytes the prepared activation rows (+ row sums), per thread; 0 on the
 * _ref path. */
void tg_gemm_workspace(int lowbit, int n, int m, int k, int threads, size_t *wbytes,
		       size_t *abytes);

/* dx[n][k] = sw * dy[n][m] W. tg_gemm_dx: tiles of 64 weight rows dequantized to fp32 and
 * sgemm (OCB_ENOMEM if the tile cannot be allocated); _ref: plain loops. */
int tg_gemm_dx(const float *dy, int n, const int8_t *w, float sw, int m, int k, float *dx);
void tg_gemm_dx_ref(const float *dy, int n, const int8_t *w, float sw, int m, int k, float *dx);

/* g[r][k] = dy[:, j0:j0+r]^T x (dy [n][m], x [n][k]), one tile of the weight gradient,
 * overwritten. sgemm; _ref plain loops. */
void tg_gemm_dw(const float *dy, int n, int m, int j0, int r, const float *x, int k, float *g);
void tg_gemm_dw_ref(const float *dy, int n, int m, int j0, int r, const float *x, int k,
		    float *g);

/* Static work: 2 n m k int8 ops for the forward. */
static inline double tg_gemm_ops(int n, int m, int k) { return 2.0 * n * m * (double)k; }

#endif
