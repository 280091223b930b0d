/* tern_tile: the blocked forward GEMM of tern_gemm.h, shared by its four ISA paths.
 *
 * One register tile = MR activation rows x NR weight columns of int32 accumulators. Per
 * k step every tile kernel loads NR columns of packed weights (NR x 4 bytes, the layout its
 * dot instruction wants) and broadcasts 4 bytes of each activation row (read straight
 * from the row, 4 bytes further per step), so no horizontal sum is ever needed:
 *
 *   kernel       MR x NR  A rows (4 B/step)     W packed per step, per column   op
 *   vnni512      6 x 64   s8 codes (xq itself)  u8 w+128, 4 k                   vpdpbusd zmm
 *   avxvnni      6 x 16   s8 codes              u8 w+128, 4 k                   vpdpbusd ymm
 *   avx2 (int16) 6 x 16   s16 pairs (widened)   s16 pair, 2 k                   vpmaddwd
 *   avx2 lowbit  4 x 16   u8 x+128              s8 w (|w| <= 7), 4 k            vpmaddubsw+vpmaddwd
 *
 * u8 x s8 products need one operand biased by 128; the bias is taken off per 256-block in
 * the epilogue: - 128 sum_b(x_row) (rc, w biased) or - 128 sum_b(w_col) (cc, x biased).
 * The epilogue, in registers, adds (sw * xd[row][b]) * float(int dot) to y (blocks in
 * order, first block stores), so every y element is computed by one tile in one order:
 * results do not depend on the thread count. Integer dots are exact (vpdpbusd does not
 * saturate; int16 pairs <= 2 * 127^2; maddubs pairs <= 2 * 255 * 7), so y differs from
 * tg_gemm_ref only by fp32 rounding (FMA in the epilogue).
 *
 * Blocking: the packed weight panel of one 256-block (NR x 256 bytes, 16 KiB at NR = 64)
 * stays in L1 while the row tiles stream past from L2 (A is n x ldk bytes); OpenMP over
 * (panel, chunk of row tiles) items, dynamic, with no barrier: each thread packs the
 * panels it is given and prepares the rows it needs in its own buffers. */
#ifndef OCB_TERN_TILE_H
#define OCB_TERN_TILE_H

#include <stddef.h>
#include <stdint.h>

#define TG_MR_MAX 8

/* How the activation rows are handed to the kernel. */
enum tg_arows { TG_A_S8, TG_A_U8, TG_A_S16 };
/* How the weight panel is packed: 4 bytes per column per step. */
enum tg_wpack { TG_W_U8, TG_W_S8, TG_W_S16 };

/* One tile and one 256-block of k. */
struct tg_tile {
	const uint8_t *a[TG_MR_MAX]; /* row r at this block's first step (rows past n repeat) */
	const uint8_t *b;            /* packed panel at this block's first step */
	int steps;                   /* k steps in this block (4 or 2 k each) */
	float *y;                    /* y[row 0][col 0] of the tile */
	size_t ldy;                  /* floats per y row (m) */
	int rows, cols;              /* valid rows (<= MR) and columns (<= NR) */
	int first;                   /* first block: store, else add */
	float s[TG_MR_MAX];          /* sw * xd[row][block] */
	int32_t rc[TG_MR_MAX];       /* per-row bias correction (0 when none) */
	const int32_t *cc;           /* per-column bias correction [NR] or NULL */
};

struct tg_tile_kernel {
	const char *name;
	int mr, nr;
	enum tg_arows arows;
	enum tg_wpack wpack;
	void (*run)(const struct tg_tile *t);
};

extern const struct tg_tile_kernel tg_tk_vnni512, tg_tk_avxvnni, tg_tk_avx2, tg_tk_lowbit_avx2;

/* y[n][m] = sum_b (sw xd[i][b]) dot_b(xq[i], w[j]) through kernel kk (tern_gemm.h layouts).
 * OCB_ENOMEM if the packed buffers cannot be allocated. */
int tg_gemm_tiled(const struct tg_tile_kernel *kk, const int8_t *xq, const float *xd, int n,
		  const int8_t *w, float sw, int m, int k, float *y, int threads);

/* Bytes tg_gemm_tiled(kk, ..., threads) allocates for the call, over its team: packed
 * weight panels (+ column sums; one panel per thread), and prepared activations (+ row
 * sums; per thread, room for all n rows, pages touched only for the chunks it works on). */
void tg_tiled_workspace(const struct tg_tile_kernel *kk, int n, int m, int k, int threads,
			size_t *wbytes, size_t *abytes);

/* Threads tg_gemm_tiled(kk, ..., threads) runs a call of this shape on: at most one per
 * 3.2e7 int8 ops and one per item (panel x row chunk), at least 1. */
int tg_tiled_team(const struct tg_tile_kernel *kk, int n, int m, int k, int threads);

/* sums[b] = sum of v[b * 256 .. b * 256 + 255] (int8, len a multiple of 32). AVX2. */
void tg_block_sums_avx2(const int8_t *v, int len, int32_t *sums);

/* wp[s][c] = (4 bytes of weight row c at byte 4 s) ^ flip for a full panel (nr rows, nr a
 * multiple of 8, all rows valid). AVX2 gathers. */
void tg_pack_panel_avx2(const int8_t *w, int ldk, int nr, int steps, uint32_t flip,
			uint32_t *wp);

#endif
