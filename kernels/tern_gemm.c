/* tern_gemm: int8 x int8 forward and fp32 backward products of low-bit training
 * (see tern_gemm.h). */
#include "tern_gemm.h"

#include <cblas.h>
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
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

/* 4 activation rows x 2 weight rows, int16 x int16 -> int32 with vpmaddwd (16 products
 * per instruction, as many as vpmaddubsw + vpmaddwd give per two, and no vpsignb needed
 * for signed x signed): the activation rows are widened once per row group (x16, from
 * L1 as memory operands), the weight rows on the fly (vpmovsxbw). Eight int32
 * accumulators per block of 256, reduced with a hadd tree, scaled and summed in fp32. */
static AVX2 void kern16_4x2(const int16_t *x0, const float *xd, int nb, int ldk,
			    const int8_t *w0, float sw, float out[4][2])
{
	const int8_t *w1 = w0 + ldk;
	const int16_t *x1 = x0 + ldk, *x2 = x1 + ldk, *x3 = x2 + ldk;
	__m128 f01 = _mm_setzero_ps(), f23 = _mm_setzero_ps();
	for (int b = 0; b < nb; b++) {
		int lo = b * TG_ABLK, hi = lo + TG_ABLK < ldk ? lo + TG_ABLK : ldk;
		__m256i a00 = _mm256_setzero_si256(), a01 = a00, a10 = a00, a11 = a00;
		__m256i a20 = a00, a21 = a00, a30 = a00, a31 = a00;
		for (int t = lo; t < hi; t += 16) {
			__m256i wa = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w0 + t)));
			__m256i wb = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w1 + t)));
			__m256i x = _mm256_loadu_si256((const __m256i *)(x0 + t));
			a00 = _mm256_add_epi32(a00, _mm256_madd_epi16(wa, x));
			a01 = _mm256_add_epi32(a01, _mm256_madd_epi16(wb, x));
			x = _mm256_loadu_si256((const __m256i *)(x1 + t));
			a10 = _mm256_add_epi32(a10, _mm256_madd_epi16(wa, x));
			a11 = _mm256_add_epi32(a11, _mm256_madd_epi16(wb, x));
			x = _mm256_loadu_si256((const __m256i *)(x2 + t));
			a20 = _mm256_add_epi32(a20, _mm256_madd_epi16(wa, x));
			a21 = _mm256_add_epi32(a21, _mm256_madd_epi16(wb, x));
			x = _mm256_loadu_si256((const __m256i *)(x3 + t));
			a30 = _mm256_add_epi32(a30, _mm256_madd_epi16(wa, x));
			a31 = _mm256_add_epi32(a31, _mm256_madd_epi16(wb, x));
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

/* Rows of 4 activations outer (widened to int16 once; their 4 x ldk x 2 bytes stay in L1
 * while the weight row pairs stream past from L2), weight pairs inner, so y is written
 * row-contiguously (the other order strided y by m floats: 4 KiB aliasing and a cache
 * miss per store). */
AVX2 void tg_gemm_avx2(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw,
		       int m, int k, float *y, int threads)
{
	int ldk = tg_ldk(k), nb = tg_nblk(k), m2 = m & ~1, n4 = n & ~3;
#pragma omp parallel num_threads(nthreads(threads))
	{
		int16_t *x16 = aligned_alloc(64, ocb_round_up((size_t)4 * ldk * 2, 64));
#pragma omp for schedule(static)
		for (int i = 0; i < n4; i += 4) {
			if (x16)
				for (int t = 0; t < 4 * ldk; t += 16)
					_mm256_store_si256((__m256i *)(x16 + t), _mm256_cvtepi8_epi16(
						_mm_loadu_si128((const __m128i *)(xq + (size_t)i * ldk + t))));
			for (int j = 0; j < m2; j += 2) {
				float o[4][2];
				if (x16)
					kern16_4x2(x16, xd + (size_t)i * nb, nb, ldk,
						   w + (size_t)j * ldk, sw, o);
				else
					for (int a = 0; a < 4; a++)
						for (int c = 0; c < 2; c++)
							o[a][c] = dot_one(xq + (size_t)(i + a) * ldk,
									  xd + (size_t)(i + a) * nb,
									  w + (size_t)(j + c) * ldk,
									  sw, ldk, nb);
				for (int a = 0; a < 4; a++) {
					y[(size_t)(i + a) * m + j] = o[a][0];
					y[(size_t)(i + a) * m + j + 1] = o[a][1];
				}
			}
			for (int a = 0; a < 4; a++)
				for (int j = m2; j < m; j++)
					y[(size_t)(i + a) * m + j] = dot_one(
						xq + (size_t)(i + a) * ldk, xd + (size_t)(i + a) * nb,
						w + (size_t)j * ldk, sw, ldk, nb);
		}
		free(x16);
	}
	for (int i = n4; i < n; i++)
		for (int j = 0; j < m; j++)
			y[(size_t)i * m + j] = dot_one(xq + (size_t)i * ldk, xd + (size_t)i * nb,
						       w + (size_t)j * ldk, sw, ldk, nb);
}

/* Low-bit weights (|w| <= 7): the unsigned idiom of REFERENCE.md §2, the roof's own op
 * mix. u = x + 128 in [1, 255] as u8, vpmaddubsw(u, w) pairs stay below int16 saturation
 * (2 * 255 * 7 < 32767), vpmaddwd(., 1) + vpaddd; then per block
 * dot = sum(u w) - 128 sum(w), with the weight block sums precomputed per call. */
static AVX2 void kernu_4x2(const uint8_t *u0, const float *xd, int nb, int ldk, const int8_t *w0,
			   const int32_t *ws0, float sw, float out[4][2])
{
	const __m256i ones = _mm256_set1_epi16(1);
	const int8_t *w1 = w0 + ldk;
	const int32_t *ws1 = ws0 + nb;
	const uint8_t *u1 = u0 + ldk, *u2 = u1 + ldk, *u3 = u2 + ldk;
	__m128 f01 = _mm_setzero_ps(), f23 = _mm_setzero_ps();
	for (int b = 0; b < nb; b++) {
		int lo = b * TG_ABLK, hi = lo + TG_ABLK < ldk ? lo + TG_ABLK : ldk;
		__m256i a00 = _mm256_setzero_si256(), a01 = a00, a10 = a00, a11 = a00;
		__m256i a20 = a00, a21 = a00, a30 = a00, a31 = a00;
		for (int t = lo; t < hi; t += 32) {
			__m256i wa = _mm256_loadu_si256((const __m256i *)(w0 + t));
			__m256i wb = _mm256_loadu_si256((const __m256i *)(w1 + t));
#define TG_UMAC(acc, u, w) \
	acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, w), ones))
			__m256i u = _mm256_loadu_si256((const __m256i *)(u0 + t));
			TG_UMAC(a00, u, wa);
			TG_UMAC(a01, u, wb);
			u = _mm256_loadu_si256((const __m256i *)(u1 + t));
			TG_UMAC(a10, u, wa);
			TG_UMAC(a11, u, wb);
			u = _mm256_loadu_si256((const __m256i *)(u2 + t));
			TG_UMAC(a20, u, wa);
			TG_UMAC(a21, u, wb);
			u = _mm256_loadu_si256((const __m256i *)(u3 + t));
			TG_UMAC(a30, u, wa);
			TG_UMAC(a31, u, wb);
#undef TG_UMAC
		}
		__m256i h01 = _mm256_hadd_epi32(_mm256_hadd_epi32(a00, a01),
						_mm256_hadd_epi32(a10, a11));
		__m256i h23 = _mm256_hadd_epi32(_mm256_hadd_epi32(a20, a21),
						_mm256_hadd_epi32(a30, a31));
		/* - 128 sum(w) of weight rows 0, 1 (the same for every activation row) */
		__m128i corr = _mm_setr_epi32(ws0[b], ws1[b], ws0[b], ws1[b]);
		corr = _mm_slli_epi32(corr, 7);
		__m128i s01 = _mm_sub_epi32(_mm_add_epi32(_mm256_castsi256_si128(h01),
							  _mm256_extracti128_si256(h01, 1)), corr);
		__m128i s23 = _mm_sub_epi32(_mm_add_epi32(_mm256_castsi256_si128(h23),
							  _mm256_extracti128_si256(h23, 1)), corr);
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

static int gemm_unsigned(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw,
			 int m, int k, float *y, int threads, int vnni);

AVX2 int tg_gemm_lowbit_avx2(const int8_t *xq, const float *xd, int n, const int8_t *w,
			     float sw, int m, int k, float *y, int threads)
{
	return gemm_unsigned(xq, xd, n, w, sw, m, k, y, threads, 0);
}

/* ---- AVX-512 VNNI (vpdpbusd zmm: 64 u8 x s8 products into 16 int32 per instruction, no
 * int16 intermediate, so any int8 weight works with the unsigned idiom) ---- */

#define VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

int tg_have_vnni512(void)
{
	/* the one CPU check (common/ocb_cpu): AVX-512F/BW/VNNI, zmm state saved by the OS,
	 * OCB_FORCE_AVX2 honoured, reset by ocb_cpu_reset() */
	return ocb_cpu_avx512vnni();
}

/* 4 activation rows (u = x + 128) x 2 weight rows; per block of 256 the 8 int32 vectors are
 * reduced (ymm halves added, then the AVX2 hadd tree), corrected by 128 sum(w), scaled. */
static VNNI void kernv_4x2(const uint8_t *u0, const float *xd, int nb, int ldk, const int8_t *w0,
			   const int32_t *ws0, float sw, float out[4][2])
{
	const int8_t *w1 = w0 + ldk;
	const int32_t *ws1 = ws0 + nb;
	const uint8_t *u1 = u0 + ldk, *u2 = u1 + ldk, *u3 = u2 + ldk;
	__m128 f01 = _mm_setzero_ps(), f23 = _mm_setzero_ps();
	for (int b = 0; b < nb; b++) {
		int lo = b * TG_ABLK, hi = lo + TG_ABLK < ldk ? lo + TG_ABLK : ldk;
		__m512i a00 = _mm512_setzero_si512(), a01 = a00, a10 = a00, a11 = a00;
		__m512i a20 = a00, a21 = a00, a30 = a00, a31 = a00;
		for (int t = lo; t < hi; t += 64) {
			__m512i wa = _mm512_loadu_si512((const void *)(w0 + t));
			__m512i wb = _mm512_loadu_si512((const void *)(w1 + t));
			__m512i u = _mm512_loadu_si512((const void *)(u0 + t));
			a00 = _mm512_dpbusd_epi32(a00, u, wa);
			a01 = _mm512_dpbusd_epi32(a01, u, wb);
			u = _mm512_loadu_si512((const void *)(u1 + t));
			a10 = _mm512_dpbusd_epi32(a10, u, wa);
			a11 = _mm512_dpbusd_epi32(a11, u, wb);
			u = _mm512_loadu_si512((const void *)(u2 + t));
			a20 = _mm512_dpbusd_epi32(a20, u, wa);
			a21 = _mm512_dpbusd_epi32(a21, u, wb);
			u = _mm512_loadu_si512((const void *)(u3 + t));
			a30 = _mm512_dpbusd_epi32(a30, u, wa);
			a31 = _mm512_dpbusd_epi32(a31, u, wb);
		}
#define TG_HALF(z) _mm256_add_epi32(_mm512_castsi512_si256(z), _mm512_extracti64x4_epi64(z, 1))
		__m256i h01 = _mm256_hadd_epi32(_mm256_hadd_epi32(TG_HALF(a00), TG_HALF(a01)),
						_mm256_hadd_epi32(TG_HALF(a10), TG_HALF(a11)));
		__m256i h23 = _mm256_hadd_epi32(_mm256_hadd_epi32(TG_HALF(a20), TG_HALF(a21)),
						_mm256_hadd_epi32(TG_HALF(a30), TG_HALF(a31)));
#undef TG_HALF
		__m128i corr = _mm_slli_epi32(_mm_setr_epi32(ws0[b], ws1[b], ws0[b], ws1[b]), 7);
		__m128i s01 = _mm_sub_epi32(_mm_add_epi32(_mm256_castsi256_si128(h01),
							  _mm256_extracti128_si256(h01, 1)), corr);
		__m128i s23 = _mm_sub_epi32(_mm_add_epi32(_mm256_castsi256_si128(h23),
							  _mm256_extracti128_si256(h23, 1)), corr);
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

/* The driver of both unsigned-idiom kernels: weight block sums, u rows per group of 4,
 * weight pairs inner. vnni: kernv (needs ldk % 64 == 0), else kernu (|w| <= 7). */
static AVX2 int gemm_unsigned(const int8_t *xq, const float *xd, int n, const int8_t *w,
			      float sw, int m, int k, float *y, int threads, int vnni)
{
	int ldk = tg_ldk(k), nb = tg_nblk(k), m2 = m & ~1, n4 = n & ~3;
	int32_t *ws = malloc((size_t)m * nb * sizeof(int32_t));
	if (!ws)
		return ocb_seterr(OCB_ENOMEM, "tern gemm: out of memory");
	for (int j = 0; j < m; j++)
		for (int b = 0; b < nb; b++) {
			int32_t sum = 0;
			for (int t = b * TG_ABLK; t < (b + 1) * TG_ABLK && t < ldk; t++)
				sum += w[(size_t)j * ldk + t];
			ws[(size_t)j * nb + b] = sum;
		}
	int fail = 0;
#pragma omp parallel num_threads(nthreads(threads)) reduction(| : fail)
	{
		uint8_t *u = aligned_alloc(64, ocb_round_up((size_t)4 * ldk, 64));
		fail = !u;
#pragma omp for schedule(static)
		for (int i = 0; i < n4; i += 4) {
			if (!u)
				continue;
			const __m256i bias = _mm256_set1_epi8((char)0x80);
			for (int t = 0; t < 4 * ldk; t += 32) /* x + 128 = x ^ 0x80 as u8 */
				_mm256_store_si256((__m256i *)(u + t), _mm256_xor_si256(bias,
					_mm256_loadu_si256((const __m256i *)(xq + (size_t)i * ldk + t))));
			for (int j = 0; j < m2; j += 2) {
				float o[4][2];
				if (vnni)
					kernv_4x2(u, xd + (size_t)i * nb, nb, ldk, w + (size_t)j * ldk,
						  ws + (size_t)j * nb, sw, o);
				else
					kernu_4x2(u, xd + (size_t)i * nb, nb, ldk, w + (size_t)j * ldk,
						  ws + (size_t)j * nb, sw, o);
				for (int a = 0; a < 4; a++) {
					y[(size_t)(i + a) * m + j] = o[a][0];
					y[(size_t)(i + a) * m + j + 1] = o[a][1];
				}
			}
			for (int a = 0; a < 4; a++)
				for (int j = m2; j < m; j++)
					y[(size_t)(i + a) * m + j] = dot_one(
						xq + (size_t)(i + a) * ldk, xd + (size_t)(i + a) * nb,
						w + (size_t)j * ldk, sw, ldk, nb);
		}
		free(u);
	}
	free(ws);
	if (fail)
		return ocb_seterr(OCB_ENOMEM, "tern gemm: out of memory");
	for (int i = n4; i < n; i++)
		for (int j = 0; j < m; j++)
			y[(size_t)i * m + j] = dot_one(xq + (size_t)i * ldk, xd + (size_t)i * nb,
						       w + (size_t)j * ldk, sw, ldk, nb);
	return OCB_OK;
}

int tg_gemm_vnni512(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m,
		    int k, float *y, int threads)
{
	return gemm_unsigned(xq, xd, n, w, sw, m, k, y, threads, 1);
}

void tg_gemm_lowbit(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m,
		    int k, float *y, int threads)
{
	if (tg_have_vnni512() && !tg_gemm_vnni512(xq, xd, n, w, sw, m, k, y, threads))
		return;
	if (!ocb_cpu_avx2() || tg_gemm_lowbit_avx2(xq, xd, n, w, sw, m, k, y, threads))
		tg_gemm(xq, xd, n, w, sw, m, k, y, threads); /* no AVX2, or no memory */
}

void tg_gemm(const int8_t *xq, const float *xd, int n, const int8_t *w, float sw, int m, int k,
	     float *y, int threads)
{
	if (tg_have_vnni512() && !tg_gemm_vnni512(xq, xd, n, w, sw, m, k, y, threads))
		return;
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
