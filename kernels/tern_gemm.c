/* tern_gemm: int8 x int8 forward and fp32 backward products of low-bit training
 * (see tern_gemm.h). */
#include "tern_gemm.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "sgemm_det.h"
#include "tern_tile.h"

static int nthreads(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

/* One output: sum over blocks of (sw * d_b) * integer dot, blocks in order. */
static float dot_one(const int8_t *xr, const float *xdr, const int8_t *wr, float sw, int ldk,
		     int nb)
{
	float acc = 0.0f;
	for (int b = 0; b < nb; b++) {
		int lo = b * TG_ABLK, hi = lo + TG_ABLK < ldk ? lo + TG_ABLK : ldk;
		int32_t s = 0;
		for (int t = lo; t < hi; t++)
			s += (int32_t)xr[t] * wr[t];
		acc += sw * xdr[b] * (float)s;
	}
	return acc;
}

/* fp-contract off: x * id must be rounded before the +-1.5 * 2^23 trick (an FMA would
 * round once and could differ from lrintf(x * id) in the quant suite's quantizer). */
__attribute__((optimize("fp-contract=off"))) void tg_quant_act(const float *x, int n, int k,
								int8_t *xq, float *xd)
{
	int ldk = tg_ldk(k), nb = tg_nblk(k);
	for (int i = 0; i < n; i++) {
		const float *xr = x + (size_t)i * k;
		int8_t *qr = xq + (size_t)i * ldk;
		for (int b = 0; b < nb; b++) {
			int lo = b * TG_ABLK, hi = lo + TG_ABLK < k ? lo + TG_ABLK : k;
			float amax = 0.0f;
			for (int j = lo; j < hi; j++) {
				float a = fabsf(xr[j]);
				amax = a > amax ? a : amax; /* fmaxf without the libm call */
			}
			float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
			for (int j = lo; j < hi; j++) {
				/* lrintf (round half to even) for |v| < 2^22: adding and subtracting
				 * 1.5 * 2^23 rounds in the default mode, vectorisable, no libm call */
				float v = (xr[j] * id + 12582912.0f) - 12582912.0f;
				v = v < -127.0f ? -127.0f : v > 127.0f ? 127.0f : v;
				qr[j] = (int8_t)v;
			}
			xd[(size_t)i * nb + b] = d;
		}
		memset(qr + k, 0, (size_t)(ldk - k));
	}
}

void tg_gemm_ref(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m,
		 int k, float *y, int threads)
{
	int ldk = tg_ldk(k), nb = tg_nblk(k);
#pragma omp parallel for schedule(static) num_threads(nthreads(threads))
	for (int j = 0; j < m; j++)
		for (int i = 0; i < n; i++)
			y[(size_t)i * m + j] = dot_one(xq + (size_t)i * ldk, xd + (size_t)i * nb,
						       w + (size_t)j * ldk, sw, ldk, nb);
}

/* ---- the blocked paths (tern_tile.h), chosen at run time ---- */

int tg_have_vnni512(void)
{
	/* the one CPU check (common/ocb_cpu): AVX-512F/BW/VNNI, zmm state saved by the OS,
	 * OCB_FORCE_AVX2 honoured, reset by ocb_cpu_reset() */
	return ocb_cpu_avx512vnni();
}

int tg_gemm_vnni512(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m,
		    int k, float *y, int threads)
{
	return tg_gemm_tiled(&tg_tk_vnni512, xq, xd, n, w, sw, m, k, y, threads);
}

int tg_gemm_avxvnni(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m,
		    int k, float *y, int threads)
{
	return tg_gemm_tiled(&tg_tk_avxvnni, xq, xd, n, w, sw, m, k, y, threads);
}

int tg_gemm_avx2(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m,
		 int k, float *y, int threads)
{
	return tg_gemm_tiled(&tg_tk_avx2, xq, xd, n, w, sw, m, k, y, threads);
}

int tg_gemm_lowbit_avx2(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw,
			int m, int k, float *y, int threads)
{
	return tg_gemm_tiled(&tg_tk_lowbit_avx2, xq, xd, n, w, sw, m, k, y, threads);
}

/* The tile kernel tg_gemm (lowbit 0) or tg_gemm_lowbit (1) takes here, NULL: _ref. */
static const struct tg_tile_kernel *path(int lowbit)
{
	if (tg_have_vnni512())
		return &tg_tk_vnni512;
	if (ocb_cpu_avxvnni())
		return &tg_tk_avxvnni;
	if (ocb_cpu_avx2())
		return lowbit ? &tg_tk_lowbit_avx2 : &tg_tk_avx2;
	return NULL;
}

const char *tg_gemm_path(int lowbit)
{
	const struct tg_tile_kernel *kk = path(lowbit);
	return kk ? kk->name : "ref";
}

int tg_gemm_team(int lowbit, int n, int m, int k, int threads)
{
	const struct tg_tile_kernel *kk = path(lowbit);
	return kk ? tg_tiled_team(kk, n, m, k, threads) : nthreads(threads);
}

void tg_gemm_workspace(int lowbit, int n, int m, int k, int threads, size_t *wbytes,
		       size_t *abytes)
{
	const struct tg_tile_kernel *kk = path(lowbit);
	*wbytes = *abytes = 0;
	if (kk)
		tg_tiled_workspace(kk, n, m, k, threads, wbytes, abytes);
}

/* Out of memory for the packed copies: the unpacked _ref loops (same result up to fp32
 * rounding). */
static void gemm_with(const struct tg_tile_kernel *kk, const int8_t *xq, const float *xd, int n,
		      const int8_t *w, float sw, int m, int k, float *y, int threads)
{
	if (!kk || tg_gemm_tiled(kk, xq, xd, n, w, sw, m, k, y, threads))
		tg_gemm_ref(xq, xd, n, w, sw, m, k, y, threads);
}

void tg_gemm(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m, int k,
	     float *y, int threads)
{
	gemm_with(path(0), xq, xd, n, w, sw, m, k, y, threads);
}

void tg_gemm_lowbit(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m,
		    int k, float *y, int threads)
{
	gemm_with(path(1), xq, xd, n, w, sw, m, k, y, threads);
}

void tg_gemm_dx_ref(const float *dy, int n, const int8_t *w, float sw, int m, int k, float *dx)
{
	int ldk = tg_ldk(k);
	for (int i = 0; i < n; i++) {
		float *d = dx + (size_t)i * k;
		for (int t = 0; t < k; t++)
			d[t] = 0.0f;
		for (int j = 0; j < m; j++) {
			float a = sw * dy[(size_t)i * m + j];
			const int8_t *wr = w + (size_t)j * ldk;
			for (int t = 0; t < k; t++)
				d[t] += a * (float)wr[t];
		}
	}
}

#define TG_DX_TILE 64

int tg_gemm_dx(const float *dy, int n, const int8_t *w, float sw, int m, int k, float *dx)
{
	int ldk = tg_ldk(k);
	float *wt = ocb_alloc((size_t)TG_DX_TILE * k * sizeof(float));
	if (!wt)
		return ocb_seterr(OCB_ENOMEM, "tern dx: out of memory");
	for (int j0 = 0; j0 < m; j0 += TG_DX_TILE) {
		int r = m - j0 < TG_DX_TILE ? m - j0 : TG_DX_TILE;
		for (int j = 0; j < r; j++) {
			const int8_t *wr = w + (size_t)(j0 + j) * ldk;
			float *d = wt + (size_t)j * k;
#pragma omp simd
			for (int t = 0; t < k; t++)
				d[t] = sw * (float)wr[t];
		}
		/* dx[n][k] (+)= dy[n][j0:j0+r] * Wt[r][k] */
		ocb_sgemm_det(CblasNoTrans, CblasNoTrans, n, k, r, 1.0f, dy + j0, m, wt, k,
			      j0 ? 1.0f : 0.0f, dx, k, 0);
	}
	ocb_free(wt);
	return OCB_OK;
}

void tg_gemm_dw_ref(const float *dy, int n, int m, int j0, int r, const float *x, int k,
		    float *g)
{
	for (int j = 0; j < r; j++)
		for (int t = 0; t < k; t++) {
			float s = 0.0f;
			for (int i = 0; i < n; i++)
				s += dy[(size_t)i * m + j0 + j] * x[(size_t)i * k + t];
			g[(size_t)j * k + t] = s;
		}
}

void tg_gemm_dw(const float *dy, int n, int m, int j0, int r, const float *x, int k, float *g)
{
	ocb_sgemm_det(CblasTrans, CblasNoTrans, r, k, n, 1.0f, dy + j0, m, x, k, 0.0f, g, k, 0);
}
