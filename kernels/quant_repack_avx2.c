/* quant_repack_avx2: AVX2 (+FMA, F16C) GEMV kernels on the r8 layout (quant_repack.h):
 * one call computes the 8 outputs of one group of 8 interleaved rows. Each has the plain-C
 * twin qgemv_r8_ref (quant_repack.c), which gives qgemv_ref's results; the integer block
 * sums here are exact, only the fp32 accumulation order differs.
 *
 * Register picture for 32 weights x 8 rows: vector j of a block holds bytes 4j..4j+3 of
 * every row's codes, row r in 32-bit lane r; the activations those bytes multiply are the
 * same for all rows, so they are one 4-byte broadcast load (vpbroadcastd m32: a load-port
 * uop on Intel and AMD, no shuffle port). maddubs(codes, act) then leaves row r's products
 * in lane r's two int16 halves; a block's int16 partial sums are added up before one
 * madd(., 1) to int32, which gives [S_0 .. S_7] in lane order, and the block's fp16 scales of
 * the 8 rows are one 16-byte load and one vcvtph2ps: no per-row horizontal work at all. */
#include <immintrin.h>
#include <string.h>

#include "quant_impl.h"
#include "quant_repack_impl.h"

#define AVX2 __attribute__((target("avx2,fma,f16c")))

/* Software prefetch distance (bytes of the code stream ahead). The kernels issue one
 * prefetch per 64-byte line of codes and one per line of scales; see quant_repack.c for
 * the measurements behind the value. */
#ifndef QR_PF
#define QR_PF 2048
#endif

static inline AVX2 __m256i ld(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }

static inline AVX2 __m256i bcast4(const int8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return _mm256_set1_epi32(v);
}

/* ---- Q4_0: 4 vectors of nibbles per block (element i in the low nibble of byte i, element
 * i + 16 in the high nibble). Codes q in 0..15 go unsigned into maddubs; the -8 offset is
 * -8 d_w ds per block (ds = d_a sum(a), kept by the activation block). Per block: 8
 * maddubs with |lane| <= 2 * 15 * 127 = 3810, so their int16 sum (<= 30480) cannot wrap. */

static inline AVX2 __m256i q4_0_r8_isum(const uint8_t *q, const int8_t *aq)
{
	const __m256i m4 = _mm256_set1_epi8(0x0f);
	__m256i s = _mm256_setzero_si256();
	for (int j = 0; j < 4; j++) {
		__m256i v = ld(q + 32 * j);
		s = _mm256_add_epi16(s, _mm256_maddubs_epi16(_mm256_and_si256(v, m4), bcast4(aq + 4 * j)));
		s = _mm256_add_epi16(s, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), m4),
							     bcast4(aq + 16 + 4 * j)));
	}
	return _mm256_madd_epi16(s, _mm256_set1_epi16(1));
}

/* Q4_0 (S = 1: d) and Q4_1 (S = 2: d, m): acc += d_w d_a S; the offset term is
 * -8 d_w ds (Q4_0) or m_w ds (Q4_1), accumulated apart in cacc. */
#define NIB_R8_BLOCK(bb, acc, cacc)                                                         \
	do {                                                                                \
		const uint16_t *sb = sc + 8 * S * (bb);                                     \
		__m256 wd = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)sb));          \
		__m256 wo = S == 2 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sb + 8))) \
				   : wd;                                                    \
		__m256i is = q4_0_r8_isum(q + 128 * (bb), a[bb].qs);                        \
		acc = _mm256_fmadd_ps(_mm256_mul_ps(wd, _mm256_broadcast_ss(&a[bb].d)),     \
				      _mm256_cvtepi32_ps(is), acc);                         \
		cacc = _mm256_fmadd_ps(wo, _mm256_broadcast_ss(&a[bb].ds), cacc);           \
	} while (0)

static inline AVX2 __attribute__((always_inline)) void nib_r8(int S, int64_t k, const void *grp,
							     const void *xq, float *y)
{
	const int64_t nb = k / 32;
	const uint8_t *q = grp;
	const uint16_t *sc = (const uint16_t *)(const void *)(q + 128 * nb);
	const block_qa32 *a = xq;
	__m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, c0 = acc0, c1 = acc0;
	int64_t b = 0;
	for (; b + 1 < nb; b += 2) { /* 2 blocks = 256 bytes of codes, 32 S bytes of scales */
		const char *pq = (const char *)(q + 128 * b) + QR_PF;
		_mm_prefetch(pq, _MM_HINT_T0);
		_mm_prefetch(pq + 64, _MM_HINT_T0);
		_mm_prefetch(pq + 128, _MM_HINT_T0);
		_mm_prefetch(pq + 192, _MM_HINT_T0);
		_mm_prefetch((const char *)(sc + 8 * S * b) + QR_PF / 8 * S, _MM_HINT_T0);
		NIB_R8_BLOCK(b, acc0, c0);
		NIB_R8_BLOCK(b + 1, acc1, c1);
	}
	if (b < nb)
		NIB_R8_BLOCK(b, acc0, c0);
	__m256 acc = _mm256_add_ps(acc0, acc1), c = _mm256_add_ps(c0, c1);
	_mm256_storeu_ps(y, S == 2 ? _mm256_add_ps(acc, c)
				   : _mm256_fnmadd_ps(_mm256_set1_ps(8.0f), c, acc));
}

static AVX2 void q4_0_r8(int64_t k, const void *grp, const void *xq, float *y)
{
	nib_r8(1, k, grp, xq, y);
}

static AVX2 void q4_1_r8(int64_t k, const void *grp, const void *xq, float *y)
{
	nib_r8(2, k, grp, xq, y);
}

qr_group_fn qr_avx2_kernel(enum qformat_type type)
{
	switch (type) {
	case QF_Q4_0:
		return q4_0_r8;
	case QF_Q4_1:
		return q4_1_r8;
	default:
		return NULL;
	}
}
