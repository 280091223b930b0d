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

/* The call's shape and team. Items are (panel, row chunk) pairs, panel-major, handed out
 * dynamically; every thread packs the panels and prepares the activation rows it needs
 * into its OWN buffers, so no thread ever waits for another before the join (a team with
 * a shared packing phase had a barrier: on a loaded host a descheduled member held the
 * whole team there). Row chunks only split small-m products (fewer panels than 2 per
 * thread); a panel is packed again by each thread that gets one of its chunks. */
struct plan {
	const struct tg_tile_kernel *kk;
	int n, m, ldk, nb, steps, bsteps, ntile, npan, nchunk, per, nt;
	size_t arow;   /* bytes per prepared activation row */
	size_t wpanel; /* uint32 units per packed panel */
	const int8_t *xq, *w;
	const float *xd;
	float sw, *y;
};

/* One thread's buffers (a view into the call's per-thread slabs). */
struct mine {
	uint8_t *a;       /* [n][arow] prepared rows, or NULL: xq itself */
	int32_t *rc;      /* [n][nb] row corrections, or NULL */
	uint32_t *wp;     /* one packed panel */
	int32_t *cc;      /* its column corrections [nb][nr], or NULL */
	unsigned char *ready; /* [nchunk]: rows of chunk c prepared */
	int panel;        /* the panel in wp, -1: none */
};

/* Row tiles [t0, t1) x panel p (packed in me->wp), blocks of 256 in order (the panel block
 * stays in L1). */
static void run_item(const struct plan *pl, const struct mine *me, int p, int t0, int t1)
{
	const struct tg_tile_kernel *kk = pl->kk;
	int mr = kk->mr, nr = kk->nr;
	const uint8_t *a = me->a ? me->a : (const uint8_t *)pl->xq;
	struct tg_tile tl;
	tl.ldy = (size_t)pl->m;
	tl.cols = pl->m - p * nr < nr ? pl->m - p * nr : nr;
	for (int b = 0; b < pl->nb; b++) {
		tl.b = (const uint8_t *)(me->wp + (size_t)b * pl->bsteps * nr);
		tl.steps = pl->steps - b * pl->bsteps < pl->bsteps ? pl->steps - b * pl->bsteps
								   : pl->bsteps;
		tl.first = b == 0;
		tl.cc = me->cc ? me->cc + (size_t)b * nr : NULL;
		for (int t = t0; t < t1; t++) {
			int i0 = t * mr;
			tl.rows = pl->n - i0 < mr ? pl->n - i0 : mr;
			tl.y = pl->y + (size_t)i0 * pl->m + (size_t)p * nr;
			for (int r = 0; r < mr; r++) {
				/* rows past n: any valid row (n - 1 is in this, the last, tile) */
				int i = r < tl.rows ? i0 + r : pl->n - 1;
				tl.a[r] = a + (size_t)i * pl->arow + (size_t)b * pl->bsteps * 4;
				tl.s[r] = pl->sw * pl->xd[(size_t)i * pl->nb + b];
				tl.rc[r] = me->rc ? me->rc[(size_t)i * pl->nb + b] : 0;
			}
			kk->run(&tl);
		}
	}
}

/* Item it = (panel, chunk): this thread's rows of the chunk and the panel, then the tiles. */
static void do_item(const struct plan *pl, struct mine *me, int it)
{
	const struct tg_tile_kernel *kk = pl->kk;
	int p = it / pl->nchunk, c = it % pl->nchunk;
	int t0 = c * pl->per, t1 = t0 + pl->per < pl->ntile ? t0 + pl->per : pl->ntile;
	if (!me->ready[c]) {
		int i1 = t1 * kk->mr < pl->n ? t1 * kk->mr : pl->n;
		for (int i = t0 * kk->mr; i < i1 && (me->a || me->rc); i++)
			prep_row(kk, pl->xq + (size_t)i * pl->ldk, pl->ldk,
				 me->a ? me->a + (size_t)i * pl->arow : NULL,
				 me->rc ? me->rc + (size_t)i * pl->nb : NULL);
		me->ready[c] = 1;
	}
	if (me->panel != p) {
		pack_panel(kk, pl->w, pl->m, pl->ldk, pl->steps, p, me->wp, me->cc);
		me->panel = p;
	}
	run_item(pl, me, p, t0, t1);
}

/* Threads for the call: at most one per TG_OPS_PER_THREAD int8 ops (a small product, the
 * LM's 1024 x 64 x 64, finishes before a woken team would) and per item. */
int tg_tiled_team(const struct tg_tile_kernel *kk, int n, int m, int k, int threads)
{
	int nt = threads > 0 ? threads : omp_get_max_threads();
	int items = (m + kk->nr - 1) / kk->nr * ((n + kk->mr - 1) / kk->mr);
	double nmax = tg_gemm_ops(n, m, k) / TG_OPS_PER_THREAD;
	nt = nmax < nt ? (nmax < 1.0 ? 1 : (int)nmax) : nt;
	return nt > items ? (items > 0 ? items : 1) : nt;
}

/* Per-thread slab sizes in bytes: prepared rows, row corrections, panel, column corr. */
static void slab_bytes(const struct tg_tile_kernel *kk, int n, int k, size_t sz[4])
{
	size_t ldk = (size_t)tg_ldk(k), nb = (size_t)tg_nblk(k), nr = (size_t)kk->nr;
	size_t esz = kk->wpack == TG_W_S16 ? 2 : 1;
	sz[0] = kk->arows == TG_A_S8 ? 0 : (size_t)n * ldk * esz;
	sz[1] = kk->wpack == TG_W_U8 ? (size_t)n * nb * 4 : 0;
	sz[2] = nr * ldk * esz;
	sz[3] = kk->arows == TG_A_U8 ? nb * nr * 4 : 0;
}

void tg_tiled_workspace(const struct tg_tile_kernel *kk, int n, int m, int k, int threads,
			size_t *wbytes, size_t *abytes)
{
	size_t sz[4], nt = (size_t)tg_tiled_team(kk, n, m, k, threads);
	slab_bytes(kk, n, k, sz);
	*wbytes = nt * (sz[2] + sz[3]);
	*abytes = nt * (sz[0] + sz[1]);
}

int tg_gemm_tiled(const struct tg_tile_kernel *kk, const int8_t *xq, const float *xd, int n,
		  const int8_t *w, float sw, int m, int k, float *y, int threads)
{
	int ldk = tg_ldk(k), kg = kk->wpack == TG_W_S16 ? 2 : 4;
	struct plan pl = {.kk = kk, .n = n, .m = m, .ldk = ldk, .nb = tg_nblk(k),
			  .steps = ldk / kg, .bsteps = TG_ABLK / kg, .ntile = (n + kk->mr - 1) / kk->mr,
			  .npan = (m + kk->nr - 1) / kk->nr, .nt = tg_tiled_team(kk, n, m, k, threads),
			  .xq = xq, .w = w, .xd = xd, .sw = sw, .y = y};
	size_t sz[4], slab;
	pl.arow = kk->arows == TG_A_S16 ? 2 * (size_t)ldk : (size_t)ldk;
	pl.wpanel = (size_t)pl.steps * kk->nr;
	/* rows are split only when there are fewer than 2 panels per thread */
	pl.nchunk = (2 * pl.nt + pl.npan - 1) / pl.npan;
	pl.nchunk = pl.nchunk > pl.ntile ? pl.ntile : pl.nchunk;
	pl.per = (pl.ntile + pl.nchunk - 1) / pl.nchunk;
	pl.nchunk = (pl.ntile + pl.per - 1) / pl.per;
	slab_bytes(kk, n, k, sz);
	slab = (sz[0] + sz[1] + sz[2] + sz[3] + (size_t)pl.nchunk + 63) & ~(size_t)63;
	unsigned char *buf = ocb_alloc_untouched((size_t)pl.nt * slab);
	if (!buf)
		return ocb_seterr(OCB_ENOMEM, "tern gemm: out of memory");
#pragma omp parallel num_threads(pl.nt)
	{
		/* slab: panel (64-byte aligned: first), column corr., row corr., rows, ready */
		unsigned char *b = buf + (size_t)omp_get_thread_num() * slab;
		struct mine me = {.wp = (uint32_t *)(void *)b,
				  .cc = sz[3] ? (int32_t *)(void *)(b + sz[2]) : NULL,
				  .rc = sz[1] ? (int32_t *)(void *)(b + sz[2] + sz[3]) : NULL,
				  .a = sz[0] ? b + sz[2] + sz[3] + sz[1] : NULL,
				  .ready = b + sz[2] + sz[3] + sz[1] + sz[0], .panel = -1};
		memset(me.ready, 0, (size_t)pl.nchunk);
#pragma omp for schedule(dynamic, 1) nowait
		for (int it = 0; it < pl.npan * pl.nchunk; it++)
			do_item(&pl, &me, it);
	}
	ocb_free(buf);
	return OCB_OK;
}
