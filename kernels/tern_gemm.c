/* tern_gemm: int8 x int8 forward and fp32 backward products of low-bit training
 * (see tern_gemm.h). */
#include "tern_gemm.h"

#include <cblas.h>
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"

#define AVX2 __attribute__((target("avx2,fma")))

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

void tg_quant_act(const float *x, int n, int k, int8_t *xq, float *xd)
{
	int ldk = tg_ldk(k), nb = tg_nblk(k);
	for (int i = 0; i < n; i++) {
		const float *xr = x + (size_t)i * k;
		int8_t *qr = xq + (size_t)i * ldk;
		for (int b = 0; b < nb; b++) {
			int lo = b * TG_ABLK, hi = lo + TG_ABLK < k ? lo + TG_ABLK : k;
			float amax = 0.0f;
			for (int j = lo; j < hi; j++)
				amax = fmaxf(amax, fabsf(xr[j]));
			float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
			for (int j = lo; j < hi; j++) {
				long v = lrintf(xr[j] * id);
				qr[j] = (int8_t)(v < -127 ? -127 : v > 127 ? 127 : v);
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

/* acc += madd(maddubs(|w|, sign(x, w)), 1): 32 signed int8 products into 8 int32 lanes. */
#define TG_MAC(acc, x, w, aw) \
	acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(aw, \
							_mm256_sign_epi8(x, w)), ones))

/* 4 activation rows x 2 weight rows: 8 int32 accumulators per block of 256, reduced
 * with a hadd tree to the 8 dots, scaled and summed into fp32 per block. */
static AVX2 void kern_4x2(const int8_t *x0, const float *xd, int nb, int ldk, const int8_t *w0,
			  float sw, float out[4][2])
{
	const __m256i ones = _mm256_set1_epi16(1);
	const int8_t *w1 = w0 + ldk;
	const int8_t *x1 = x0 + ldk, *x2 = x1 + ldk, *x3 = x2 + ldk;
	__m128 f01 = _mm_setzero_ps(), f23 = _mm_setzero_ps();
	for (int b = 0; b < nb; b++) {
		int lo = b * TG_ABLK, hi = lo + TG_ABLK < ldk ? lo + TG_ABLK : ldk;
		__m256i a00 = _mm256_setzero_si256(), a01 = a00, a10 = a00, a11 = a00;
		__m256i a20 = a00, a21 = a00, a30 = a00, a31 = a00;
		for (int t = lo; t < hi; t += 32) {
			__m256i wa = _mm256_loadu_si256((const __m256i *)(w0 + t));
			__m256i wb = _mm256_loadu_si256((const __m256i *)(w1 + t));
			__m256i aa = _mm256_sign_epi8(wa, wa), ab = _mm256_sign_epi8(wb, wb);
			__m256i x = _mm256_loadu_si256((const __m256i *)(x0 + t));
			TG_MAC(a00, x, wa, aa);
			TG_MAC(a01, x, wb, ab);
			x = _mm256_loadu_si256((const __m256i *)(x1 + t));
			TG_MAC(a10, x, wa, aa);
			TG_MAC(a11, x, wb, ab);
			x = _mm256_loadu_si256((const __m256i *)(x2 + t));
			TG_MAC(a20, x, wa, aa);
			TG_MAC(a21, x, wb, ab);
			x = _mm256_loadu_si256((const __m256i *)(x3 + t));
			TG_MAC(a30, x, wa, aa);
			TG_MAC(a31, x, wb, ab);
		}
		/* hadd tree: h01 = [d00 d01 d10 d11] per 128-bit half, halves summed */
		__m256i h01 = _mm256_hadd_epi32(_mm256_hadd_epi32(a00, a01),
						_mm256_hadd_epi32(a10, a11));
		__m256i h23 = _mm256_hadd_epi32(_mm256_hadd_epi32(a20, a21),
						_mm256_hadd_epi32(a30, a31));
		__m128i s01 = _mm_add_epi32(_mm256_castsi256_si128(h01),
					    _mm256_extracti128_si256(h01, 1));
		__m128i s23 = _mm_add_epi32(_mm256_castsi256_si128(h23),
					    _mm256_extracti128_si256(h23, 1));
		__m128 d01 = _mm_setr_ps(sw * xd[b], sw * xd[b], sw * xd[nb + b], sw * xd[nb + b]);
		__m128 d23 = _mm_setr_ps(sw * xd[2 * nb + b], sw * xd[2 * nb + b],
					 sw * xd[3 * nb + b], sw * xd[3 * nb + b]);
		f01 = _mm_add_ps(f01, _mm_mul_ps(d01, _mm_cvtepi32_ps(s01)));
		f23 = _mm_add_ps(f23, _mm_mul_ps(d23, _mm_cvtepi32_ps(s23)));
	}
	float t[8];
	_mm_storeu_ps(t, f01);
	_mm_storeu_ps(t + 4, f23);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 2; j++)
			out[i][j] = t[2 * i + j];
}

AVX2 void tg_gemm_avx2(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw,
		       int m, int k, float *y, int threads)
{
	int ldk = tg_ldk(k), nb = tg_nblk(k), m2 = m & ~1, n4 = n & ~3;
#pragma omp parallel for schedule(static) num_threads(nthreads(threads))
	for (int j = 0; j < m2; j += 2) {
		const int8_t *wr = w + (size_t)j * ldk;
		for (int i = 0; i < n4; i += 4) {
			float o[4][2];
			kern_4x2(xq + (size_t)i * ldk, xd + (size_t)i * nb, nb, ldk, wr, sw, o);
			for (int a = 0; a < 4; a++) {
				y[(size_t)(i + a) * m + j] = o[a][0];
				y[(size_t)(i + a) * m + j + 1] = o[a][1];
			}
		}
		for (int i = n4; i < n; i++)
			for (int jj = j; jj < j + 2; jj++)
				y[(size_t)i * m + jj] = dot_one(xq + (size_t)i * ldk,
								xd + (size_t)i * nb,
								w + (size_t)jj * ldk, sw, ldk, nb);
	}
	for (int j = m2; j < m; j++)
		for (int i = 0; i < n; i++)
			y[(size_t)i * m + j] = dot_one(xq + (size_t)i * ldk, xd + (size_t)i * nb,
						       w + (size_t)j * ldk, sw, ldk, nb);
}

void tg_gemm(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m, int k,
	     float *y, int threads)
{
	if (ocb_cpu_avx2())
		tg_gemm_avx2(xq, xd, n, w, sw, m, k, y, threads);
	else
		tg_gemm_ref(xq, xd, n, w, sw, m, k, y, threads);
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
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, k, r, 1.0f, dy + j0, m,
			    wt, k, j0 ? 1.0f : 0.0f, dx, k);
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
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r, k, n, 1.0f, dy + j0, m, x, k,
		    0.0f, g, k);
}
