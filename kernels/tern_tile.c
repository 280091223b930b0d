/* tern_tile: packing and blocking of the int8 forward GEMM (tern_tile.h); the register
 * tiles themselves are in tern_tile_kernels.c. */
#include "tern_tile.h"

#include <omp.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "tern_gemm.h"

/* The 4 packed bytes of weight row wr for step s (4 k, or 2 k widened to int16). */
static inline uint32_t w_unit(const int8_t *wr, int s, enum tg_wpack p)
{
	uint32_t v;
	if (p == TG_W_S16)
		return (uint16_t)(int16_t)wr[2 * s] | (uint32_t)(uint16_t)(int16_t)wr[2 * s + 1] << 16;
	memcpy(&v, wr + 4 * (size_t)s, 4);
	return p == TG_W_U8 ? v ^ 0x80808080u : v; /* w + 128 as u8 = w ^ 0x80 */
}

/* Panel p of NR weight rows -> wp[s][NR] units (rows past m: zero codes), and, when the
 * activations carry the bias, cc[b][NR] = 128 sum_b(w row). */
static void pack_panel(const struct tg_tile_kernel *kk, const int8_t *w, int m, int ldk,
		       int steps, int p, uint32_t *wp, int32_t *cc)
{
	int nr = kk->nr, nb = tg_nblk(ldk);
	int full = (p + 1) * nr <= m && kk->wpack != TG_W_S16;
	if (full) /* vpgatherdd transpose; else unit by unit below */
		tg_pack_panel_avx2(w + (size_t)p * nr * ldk, ldk, nr, steps,
				   kk->wpack == TG_W_U8 ? 0x80808080u : 0, wp);
	for (int c = 0; c < nr; c++) {
		int j = p * nr + c;
		const int8_t *wr = w + (size_t)j * ldk;
		if (j >= m) {
			for (int s = 0; s < steps; s++)
				wp[(size_t)s * nr + c] = 0;
			for (int b = 0; cc && b < nb; b++)
				cc[(size_t)b * nr + c] = 0;
			continue;
		}
		for (int s = 0; !full && s < steps; s++)
			wp[(size_t)s * nr + c] = w_unit(wr, s, kk->wpack);
		if (cc) {
			int32_t sums[nb];
			tg_block_sums_avx2(wr, ldk, sums);
			for (int b = 0; b < nb; b++)
				cc[(size_t)b * nr + c] = 128 * sums[b];
		}
	}
}

/* Activation row i as the kernel reads it (S8: xq itself, rc = 128 sum_b(x); U8: x ^ 0x80;
 * S16: widened). */
static void prep_row(const struct tg_tile_kernel *kk, const int8_t *xr, int ldk, uint8_t *dst,
		     int32_t *rc)
{
	if (kk->arows == TG_A_U8) {
#pragma omp simd
		for (int t = 0; t < ldk; t++)
			dst[t] = (uint8_t)xr[t] ^ 0x80;
	} else if (kk->arows == TG_A_S16) {
		int16_t *d16 = (int16_t *)(void *)dst;
#pragma omp simd
		for (int t = 0; t < ldk; t++)
			d16[t] = xr[t];
	}
	if (rc) {
		tg_block_sums_avx2(xr, ldk, rc);
		for (int b = 0; b < tg_nblk(ldk); b++)
			rc[b] *= 128;
	}
}

#define TG_OPS_PER_THREAD 3.2e7 /* ~50 us of the VNNI path */

struct plan {
	const struct tg_tile_kernel *kk;
	int n, m, nb, steps, bsteps, ntile, npan, nchunk;
	size_t arow; /* bytes per prepared activation row */
	const uint8_t *a;
	const uint32_t *wp;
	const int32_t *rc, *cc;
	const float *xd;
	float sw, *y;
};

/* Row tiles [t0, t1) x panel p, blocks of 256 in order (the panel block stays in L1). */
static void run_item(const struct plan *pl, int p, int t0, int t1)
{
	const struct tg_tile_kernel *kk = pl->kk;
	int mr = kk->mr, nr = kk->nr;
	struct tg_tile tl;
	tl.ldy = (size_t)pl->m;
	tl.cols = pl->m - p * nr < nr ? pl->m - p * nr : nr;
	for (int b = 0; b < pl->nb; b++) {
		tl.b = (const uint8_t *)(pl->wp + ((size_t)p * pl->steps + (size_t)b * pl->bsteps) * nr);
		tl.steps = pl->steps - b * pl->bsteps < pl->bsteps ? pl->steps - b * pl->bsteps
								   : pl->bsteps;
		tl.first = b == 0;
		tl.cc = pl->cc ? pl->cc + ((size_t)p * pl->nb + b) * nr : NULL;
		for (int t = t0; t < t1; t++) {
			int i0 = t * mr;
			tl.rows = pl->n - i0 < mr ? pl->n - i0 : mr;
			tl.y = pl->y + (size_t)i0 * pl->m + (size_t)p * nr;
			for (int r = 0; r < mr; r++) {
				int i = r < tl.rows ? i0 + r : pl->n - 1; /* rows past n: any valid row */
				tl.a[r] = pl->a + (size_t)i * pl->arow + (size_t)b * pl->bsteps * 4;
				tl.s[r] = pl->sw * pl->xd[(size_t)i * pl->nb + b];
				tl.rc[r] = pl->rc ? pl->rc[(size_t)i * pl->nb + b] : 0;
			}
			kk->run(&tl);
		}
	}
}

void tg_tiled_workspace(const struct tg_tile_kernel *kk, int n, int m, int k, size_t *wbytes,
			size_t *abytes)
{
	size_t ldk = (size_t)tg_ldk(k), nb = (size_t)tg_nblk(k), nr = (size_t)kk->nr;
	size_t npan = ((size_t)m + nr - 1) / nr, esz = kk->wpack == TG_W_S16 ? 2 : 1;
	*wbytes = npan * nr * ldk * esz + (kk->arows == TG_A_U8 ? npan * nb * nr * 4 : 0);
	*abytes = (kk->arows == TG_A_S8 ? 0 : (size_t)n * ldk * esz) +
		  (kk->wpack == TG_W_U8 ? (size_t)n * nb * 4 : 0);
}

int tg_gemm_tiled(const struct tg_tile_kernel *kk, const int8_t *xq, const float *xd, int n,
		  const int8_t *w, float sw, int m, int k, float *y, int threads)
{
	int ldk = tg_ldk(k), kg = kk->wpack == TG_W_S16 ? 2 : 4, rc_need = kk->wpack == TG_W_U8;
	int nt = threads > 0 ? threads : omp_get_max_threads(), rc = OCB_ENOMEM;
	/* a thread per TG_OPS_PER_THREAD int8 ops at most: a small product (the LM's 1024 x 64 x
	 * 64) finishes before a woken team would (and a busy host deschedules team members at
	 * every barrier); the result is the same at any team size */
	double nmax = tg_gemm_ops(n, m, k) / TG_OPS_PER_THREAD;
	nt = nmax < nt ? (nmax < 1.0 ? 1 : (int)nmax) : nt;
	struct plan pl = {.kk = kk, .n = n, .m = m, .nb = tg_nblk(k), .steps = ldk / kg,
			  .bsteps = TG_ABLK / kg, .ntile = (n + kk->mr - 1) / kk->mr,
			  .npan = (m + kk->nr - 1) / kk->nr, .xd = xd, .sw = sw, .y = y};
	pl.arow = kk->arows == TG_A_S16 ? 2 * (size_t)ldk : (size_t)ldk;
	/* enough (panel, row chunk) items for every thread to get about four */
	pl.nchunk = (4 * nt + pl.npan - 1) / pl.npan;
	pl.nchunk = pl.nchunk > pl.ntile ? pl.ntile : pl.nchunk;
	uint8_t *abuf = kk->arows == TG_A_S8 ? NULL : ocb_alloc_untouched((size_t)n * pl.arow);
	uint32_t *wp = ocb_alloc_untouched((size_t)pl.npan * pl.steps * kk->nr * 4);
	int32_t *rcb = rc_need ? ocb_alloc_untouched((size_t)n * pl.nb * 4) : NULL;
	int32_t *ccb = kk->arows == TG_A_U8
			       ? ocb_alloc_untouched((size_t)pl.npan * pl.nb * kk->nr * 4) : NULL;
	if ((kk->arows != TG_A_S8 && !abuf) || !wp || (rc_need && !rcb) ||
	    (kk->arows == TG_A_U8 && !ccb))
		goto out;
	pl.a = abuf ? abuf : (const uint8_t *)xq;
	pl.wp = wp, pl.rc = rcb, pl.cc = ccb;
	int per = (pl.ntile + pl.nchunk - 1) / pl.nchunk;
#pragma omp parallel num_threads(nt)
	{
/* one pass (one barrier): rows i < n prepared, then panels packed (a panel costs ~nr
 * rows: dynamic chunks keep the team even) */
#pragma omp for schedule(dynamic, 16)
		for (int q = 0; q < n + pl.npan; q++) {
			int i = q, p = q - n;
			if (q < n)
				prep_row(kk, xq + (size_t)i * ldk, ldk,
					 abuf ? abuf + (size_t)i * pl.arow : NULL,
					 rcb ? rcb + (size_t)i * pl.nb : NULL);
			else
				pack_panel(kk, w, m, ldk, pl.steps, p,
					   wp + (size_t)p * pl.steps * kk->nr,
					   ccb ? ccb + (size_t)p * pl.nb * kk->nr : NULL);
		}
#pragma omp for schedule(static) nowait
		for (int it = 0; it < pl.npan * pl.nchunk; it++) {
			int t0 = it % pl.nchunk * per, t1 = t0 + per < pl.ntile ? t0 + per : pl.ntile;
			run_item(&pl, it / pl.nchunk, t0, t1);
		}
	}
	rc = OCB_OK;
out:
	ocb_free(abuf), ocb_free(wp), ocb_free(rcb), ocb_free(ccb);
	return rc ? ocb_seterr(rc, "tern gemm: out of memory") : OCB_OK;
}
