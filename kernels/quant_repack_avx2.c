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

/* ---- blocks of 32 (Q4_0, Q4_1, Q3_G, Q2_G) ----
 * Codes go unsigned into maddubs; a format's offset (-8 for Q4_0, the min m for the
 * others) is applied once per block from the activation block's ds = d_a sum(a): acc gets
 * d_w d_a S, cacc gets d_w ds (Q4_0, times -8 at the end) or m_w ds. Each isum function
 * returns [S_0 .. S_7] (int32, exact) for one block of the 8 rows; its int16 partial sums
 * are bounded in its comment. */

/* Q4_0/Q4_1: 4 vectors of nibbles (element i in the low nibble of byte i, i + 16 in the
 * high one). 8 maddubs with |lane| <= 2 * 15 * 127 = 3810: int16 sum <= 30480. */
static inline AVX2 __m256i nib_isum(const uint8_t *q, const int8_t *aq)
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

/* Q2_G/Q3_G low bits: 2 vectors; byte j = 4u + i holds elements j + 8n at bits 2n..2n+1.
 * Q3_G's third vector is its high-bit plane re-encoded at packing time (qr_q3_hbits):
 * byte i of unit u... bit n + 4u of byte i is the high bit of element 8n + 4u + i, so one
 * shift and one mask put it at bit 2 (value 4) of the code byte. Codes <= 7: 8 maddubs
 * with |lane| <= 2 * 7 * 127 = 1778, int16 sum <= 14224. */
static inline AVX2 __attribute__((always_inline)) __m256i low_isum(int hbit, const uint8_t *q,
								   const int8_t *aq)
{
	const __m256i m3 = _mm256_set1_epi8(3), m4 = _mm256_set1_epi8(4);
	__m256i s = _mm256_setzero_si256();
	__m256i h = hbit ? ld(q + 64) : _mm256_setzero_si256();
	for (int u = 0; u < 2; u++) {
		__m256i v = ld(q + 32 * u);
		for (int n = 0; n < 4; n++) {
			__m256i c = _mm256_and_si256(n ? _mm256_srli_epi16(v, 2 * n) : v, m3);
			if (hbit) {
				int sh = n + 4 * u - 2;
				__m256i hb = sh > 0 ? _mm256_srli_epi16(h, sh)
					     : sh < 0 ? _mm256_slli_epi16(h, -sh) : h;
				c = _mm256_or_si256(c, _mm256_and_si256(hb, m4));
			}
			s = _mm256_add_epi16(s, _mm256_maddubs_epi16(c, bcast4(aq + 8 * n + 4 * u)));
		}
	}
	return _mm256_madd_epi16(s, _mm256_set1_epi16(1));
}

enum b32_kind { B32_Q4_0, B32_Q4_1, B32_Q3_G, B32_Q2_G };

static inline AVX2 __attribute__((always_inline)) __m256i b32_isum(enum b32_kind kind,
								   const uint8_t *q, const int8_t *aq)
{
	return kind == B32_Q4_0 || kind == B32_Q4_1 ? nib_isum(q, aq)
						    : low_isum(kind == B32_Q3_G, q, aq);
}

#define B32_BLOCK(bb, acc, cacc)                                                            \
	do {                                                                                \
		const uint16_t *sb = sc + 8 * S * (bb);                                     \
		__m256 wd = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)sb));          \
		__m256 wo = S == 2 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sb + 8))) \
				   : wd;                                                    \
		__m256i is = b32_isum(kind, q + 8 * P * (bb), a[bb].qs);                    \
		acc = _mm256_fmadd_ps(_mm256_mul_ps(wd, _mm256_broadcast_ss(&a[bb].d)),     \
				      _mm256_cvtepi32_ps(is), acc);                         \
		cacc = _mm256_fmadd_ps(wo, _mm256_broadcast_ss(&a[bb].ds), cacc);           \
	} while (0)

/* One group of 8 rows of a 32-block format whose blocks carry P payload bytes */
static inline AVX2 __attribute__((always_inline)) void b32_r8(enum b32_kind kind, int P,
							     int64_t k, const void *grp,
							     const void *xq, float *y)
{
	const int S = kind == B32_Q4_0 ? 1 : 2; /* fp16 scales per block: d (, m) */
	const int64_t nb = k / 32;
	const uint8_t *q = grp;
	const uint16_t *sc = (const uint16_t *)(const void *)(q + 8 * P * nb);
	const block_qa32 *a = xq;
	__m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, c0 = acc0, c1 = acc0;
	int64_t b = 0;
	for (; b + 1 < nb; b += 2) { /* 2 blocks: 16 P bytes of codes, 32 S bytes of scales */
		const char *pq = (const char *)(q + 8 * P * b) + QR_PF;
		for (int l = 0; l < 16 * P; l += 64)
			_mm_prefetch(pq + l, _MM_HINT_T0);
		_mm_prefetch((const char *)(sc + 8 * S * b) + QR_PF * S / P, _MM_HINT_T0);
		B32_BLOCK(b, acc0, c0);
		B32_BLOCK(b + 1, acc1, c1);
	}
	if (b < nb)
		B32_BLOCK(b, acc0, c0);
	__m256 acc = _mm256_add_ps(acc0, acc1), c = _mm256_add_ps(c0, c1);
	_mm256_storeu_ps(y, S == 2 ? _mm256_add_ps(acc, c)
				   : _mm256_fnmadd_ps(_mm256_set1_ps(8.0f), c, acc));
}
#undef B32_BLOCK

static AVX2 void q4_0_r8(int64_t k, const void *g, const void *xq, float *y)
{
	b32_r8(B32_Q4_0, 16, k, g, xq, y);
}

static AVX2 void q4_1_r8(int64_t k, const void *g, const void *xq, float *y)
{
	b32_r8(B32_Q4_1, 16, k, g, xq, y);
}

static AVX2 void q3_g_r8(int64_t k, const void *g, const void *xq, float *y)
{
	b32_r8(B32_Q3_G, 12, k, g, xq, y);
}

static AVX2 void q2_g_r8(int64_t k, const void *g, const void *xq, float *y)
{
	b32_r8(B32_Q2_G, 8, k, g, xq, y);
}

/* ---- TQ2_0 (and TQ1_0, transcoded to TQ2_0 codes when packed) ----
 * 16 vectors per block; unit j = bytes 4j..4j+3 of plane h = j / 8, and code n of byte
 * 4(j % 8) + i multiplies element 128h + 32n + 4(j % 8) + i. One 16-bit shift by 4 per
 * vector and masks 3 / 0xc give codes n = 0, 2 as t and n = 1, 3 as 4t (no more shifts).
 * int16 bounds per row lane: su collects 64 products t a <= 254 (16256); s4 collects 4t a
 * <= 1016, so it goes through madd every 8 vectors (32 products, 32512). The result is
 * 4 sum(t a); the ternary offset is sum((t - 1) a) = sum(t a) - s with s the activation
 * block's exact int sum, and the 1/4 goes into the fp32 scale (exact). */
static inline AVX2 __m256i tq2_isum4(const uint8_t *q, const int8_t *aq)
{
	const __m256i m3 = _mm256_set1_epi8(3), mc = _mm256_set1_epi8(0x0c);
	const __m256i ones = _mm256_set1_epi16(1);
	__m256i su = _mm256_setzero_si256(), s4w = _mm256_setzero_si256();
	for (int h = 0; h < 2; h++) {
		__m256i s4 = _mm256_setzero_si256();
		for (int jj = 0; jj < 8; jj++) {
			__m256i x = ld(q + 32 * (8 * h + jj)), y = _mm256_srli_epi16(x, 4);
			const int8_t *ab = aq + 128 * h + 4 * jj;
			su = _mm256_add_epi16(su, _mm256_maddubs_epi16(_mm256_and_si256(x, m3), bcast4(ab)));
			s4 = _mm256_add_epi16(s4, _mm256_maddubs_epi16(_mm256_and_si256(x, mc), bcast4(ab + 32)));
			su = _mm256_add_epi16(su, _mm256_maddubs_epi16(_mm256_and_si256(y, m3), bcast4(ab + 64)));
			s4 = _mm256_add_epi16(s4, _mm256_maddubs_epi16(_mm256_and_si256(y, mc), bcast4(ab + 96)));
		}
		s4w = _mm256_add_epi32(s4w, _mm256_madd_epi16(s4, ones));
	}
	return _mm256_add_epi32(_mm256_slli_epi32(_mm256_madd_epi16(su, ones), 2), s4w);
}

#define TQ2_BLOCK(bb, acc)                                                                  \
	do {                                                                                \
		__m256 wd = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sc + 8 * (bb)))); \
		__m256i is = _mm256_sub_epi32(tq2_isum4(q + 512 * (bb), a[bb].qs),          \
					      _mm256_set1_epi32(4 * a[bb].s));              \
		acc = _mm256_fmadd_ps(_mm256_mul_ps(wd, _mm256_set1_ps(0.25f * a[bb].d)),   \
				      _mm256_cvtepi32_ps(is), acc);                         \
	} while (0)

static AVX2 void tq2_0_r8(int64_t k, const void *grp, const void *xq, float *y)
{
	const int64_t nb = k / QK_TQ;
	const uint8_t *q = grp;
	const uint16_t *sc = (const uint16_t *)(const void *)(q + 512 * nb);
	const block_qa256 *a = xq;
	__m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
	int64_t b = 0;
	for (; b + 1 < nb; b += 2) {
		const char *pq = (const char *)(q + 512 * b) + QR_PF;
		for (int l = 0; l < 1024; l += 64)
			_mm_prefetch(pq + l, _MM_HINT_T0);
		_mm_prefetch((const char *)(sc + 8 * b) + QR_PF / 32, _MM_HINT_T0);
		TQ2_BLOCK(b, acc0);
		TQ2_BLOCK(b + 1, acc1);
	}
	if (b < nb)
		TQ2_BLOCK(b, acc0);
	_mm256_storeu_ps(y, _mm256_add_ps(acc0, acc1));
}
#undef TQ2_BLOCK

qr_group_fn qr_avx2_kernel(enum qformat_type type)
{
	switch (type) {
	case QF_Q4_0:
		return q4_0_r8;
	case QF_Q4_1:
		return q4_1_r8;
	case QF_Q3_G:
		return q3_g_r8;
	case QF_Q2_G:
		return q2_g_r8;
	case QF_TQ2_0:
		return tq2_0_r8;
	default:
		return NULL;
	}
}
