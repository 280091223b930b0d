/* quant_avx2: the AVX2 (+FMA, F16C) dot products and row decoders of every format in
 * quant_formats.h, chosen at run time through the format table (quant_formats.c). Each
 * has a scalar twin in quant_q8_0.c / quant_q4.c / quant_qg.c / quant_tq.c computing the
 * same exact integer block sums; only the fp32 accumulation order differs.
 *
 * Idioms (REFERENCE.md §2, as in ggml): signed x signed int8 dot = maddubs(|w|, sign(a, w))
 * then madd(., 1) to int32; unsigned codes (Q4_1, Q3_G, Q2_G, TQ*) go straight into
 * maddubs, and the offset is applied once per block from the activation block sum s
 * (TQ: sum((t-1) a) = sum(t a) - s). Weight scales: one F16C conversion per block, or
 * (Q4_0, TQ2_0) one per 4 blocks. GEMV should be memory-bound, so the loops do little
 * per byte: several blocks per iteration with independent accumulators, codes expanded
 * with few shifts and masks, and a software prefetch (qk_prefetch) to keep DRAM requests in flight. */
#include <immintrin.h>
#include <string.h>

#include "quant_impl.h"
#include "quant_repack_impl.h" /* qk_prefetch */

#define AVX2 __attribute__((target("avx2,fma,f16c")))

/* Software prefetch distance in bytes of weights ahead of the GEMV loop: qk_prefetch
 * (quant_repack_impl.h; default and per-CPU choice in quant_repack.c, OCB_QGEMV_PF overrides). A
 * row-streaming GEMV spends cycles on arithmetic between loads, so the hardware prefetcher
 * alone keeps too few DRAM requests in flight; requesting ~2 KiB ahead (about the
 * bandwidth-delay product of one core: ~16-20 GB/s x ~100-130 ns) lets the GEMV approach
 * the plain read loop's bandwidth. Measured at 16384^2 on the Xeon (quant_gemv_bw, cold,
 * 1 thread, THP buffers): Q4_0 r8 87% (0) / 91% (1024) / 94-96% (2048) / 80-83% (4096) /
 * 72% (8192) of the read loop; Q8_0 78% (1024) / 86-91% (2048) / 82-88% (3072-4096);
 * TQ2_0 67% / 70% / 68% (1024 / 2048 / 3072). Without THP 2048 is also the best
 * (Q8_0 89% vs 83% at 4096). A register operand, not an immediate: no measurable cost. */
#define PREFETCH(p) _mm_prefetch((const char *)(p) + qk_prefetch, _MM_HINT_T0)

static inline AVX2 float h2f(uint16_t h) { return _cvtsh_ss(h); }

static inline AVX2 float hsum8(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* int32x8 partial sums of w . a, w signed int8 (|w| <= 127), a int8 in [-127, 127] */
static inline AVX2 __m256i dot_s8(__m256i w, __m256i a)
{
	__m256i p = _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(a, w));
	return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

/* same with w unsigned codes (0..15): no sign trick needed */
static inline AVX2 __m256i dot_u8(__m256i w, __m256i a)
{
	return _mm256_madd_epi16(_mm256_maddubs_epi16(w, a), _mm256_set1_epi16(1));
}

static inline AVX2 __m256i ld(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }

/* ---- unpackers: one block's codes as 32 bytes in element order ---- */

/* nibbles: low lane = low nibbles (elements 0..15), high lane = high nibbles (16..31) */
static inline AVX2 __m256i unpack_nib(const uint8_t *qs)
{
	/* the 16 bytes in both lanes straight from memory (no shuffle-port insert), then one
	 * variable shift moves the high lane's nibbles down */
	__m256i t = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)qs));
	__m256i v = _mm256_srlv_epi64(t, _mm256_set_epi64x(4, 4, 0, 0));
	return _mm256_and_si256(v, _mm256_set1_epi8(0x0f));
}

/* 8-byte plane of 2-bit codes: 64-bit lane s = the 8 bytes >> 2s, masked (elements 8s..) */
static inline AVX2 __m256i unpack_2bit(const uint8_t *qs)
{
	int64_t u;
	memcpy(&u, qs, 8);
	__m256i v = _mm256_srlv_epi64(_mm256_set1_epi64x(u), _mm256_set_epi64x(6, 4, 2, 0));
	return _mm256_and_si256(v, _mm256_set1_epi8(3));
}

/* 32-bit plane: byte i = 4 if bit i is set (Q3_G's third bit), else 0 */
static inline AVX2 __m256i unpack_hbit(const uint8_t *qh)
{
	int32_t u;
	memcpy(&u, qh, 4);
	const __m256i sel = _mm256_set_epi64x(0x0303030303030303LL, 0x0202020202020202LL,
					      0x0101010101010101LL, 0);
	const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
	__m256i v = _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32(u), sel), bit);
	return _mm256_and_si256(_mm256_cmpeq_epi8(v, bit), _mm256_set1_epi8(4));
}

static inline AVX2 __m256i unpack_q3(const block_q3_g *b)
{
	return _mm256_or_si256(unpack_2bit(b->qs), unpack_hbit(b->qh));
}

/* TQ1_0: bytes u -> trit floor(3u / 256) (the top base-3 digit of a fixed-point byte) */
static inline AVX2 __m256i tq1_top(__m256i u)
{
	const __m256i three = _mm256_set1_epi16(3);
	__m256i ev = _mm256_mulhi_epu16(_mm256_slli_epi16(u, 8), three);
	__m256i od = _mm256_mulhi_epu16(_mm256_and_si256(u, _mm256_set1_epi16((short)0xff00)), three);
	return _mm256_or_si256(ev, _mm256_slli_epi16(od, 8));
}

static inline AVX2 __m256i mul3_u8(__m256i u) { return _mm256_add_epi8(_mm256_add_epi8(u, u), u); }

/* All 256 trits (0..2) of a TQ1_0 block as 8 vectors of 32 in element order. */
static inline AVX2 void unpack_tq1(const block_tq1_0 *b, __m256i t[8])
{
	__m256i u = ld(b->qs); /* elements m + 32n, trit n */
	for (int n = 0; n < 5; n++) {
		t[n] = tq1_top(u);
		u = mul3_u8(u);
	}
	__m128i w = _mm_loadu_si128((const __m128i *)(b->qs + 32)); /* 160 + m + 16n */
	__m256i y = _mm256_inserti128_si256(_mm256_castsi128_si256(w),
					    _mm256_castsi256_si128(mul3_u8(_mm256_castsi128_si256(w))), 1);
	t[5] = tq1_top(y); /* n = 0 | 1: elements 160..191 */
	y = mul3_u8(mul3_u8(y));
	t[6] = tq1_top(y); /* n = 2 | 3: 192..223 */
	/* n = 4 of qs[32..48) (224..239) | qh: position p = element 240 + p holds trit p/4
	 * of qh[p%4]: dword p/4 of (qh x 3^(p/4)) */
	int32_t h;
	memcpy(&h, b->qh, 4);
	__m128i q0 = _mm_set1_epi32(h);
	__m128i q1 = _mm_add_epi8(_mm_add_epi8(q0, q0), q0);
	__m128i q2 = _mm_add_epi8(_mm_add_epi8(q1, q1), q1);
	__m128i q3 = _mm_add_epi8(_mm_add_epi8(q2, q2), q2);
	__m128i qh = _mm_blend_epi32(_mm_blend_epi32(q0, q1, 0x2), _mm_blend_epi32(q2, q3, 0x8), 0xc);
	__m128i w81 = _mm256_castsi256_si128(mul3_u8(_mm256_castsi128_si256(
		_mm256_extracti128_si256(y, 1)))); /* w * 27 * 3 */
	t[7] = tq1_top(_mm256_inserti128_si256(_mm256_castsi128_si256(w81), qh, 1));
}

/* ---- Q8_0 ---- */

AVX2 float q8_0_vec_dot_avx2(int64_t k, const void *vw, const void *va)
{
	const block_q8_0 *w = vw;
	const block_qa32 *a = va;
	const int64_t nb = k / QK8_0;
	__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
	int64_t b = 0;
	for (; b + 1 < nb; b += 2) {
		PREFETCH(&w[b]);
		__m256i p0 = dot_s8(ld(w[b].qs), ld(a[b].qs));
		__m256i p1 = dot_s8(ld(w[b + 1].qs), ld(a[b + 1].qs));
		acc0 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(w[b].d) * a[b].d), _mm256_cvtepi32_ps(p0), acc0);
		acc1 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(w[b + 1].d) * a[b + 1].d),
				       _mm256_cvtepi32_ps(p1), acc1);
	}
	for (; b < nb; b++) {
		__m256i p0 = dot_s8(ld(w[b].qs), ld(a[b].qs));
		acc0 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(w[b].d) * a[b].d), _mm256_cvtepi32_ps(p0), acc0);
	}
	return hsum8(_mm256_add_ps(acc0, acc1));
}

AVX2 void q8_0_decode_row_avx2(int64_t k, const void *vw, float *d, float *m, int8_t *q)
{
	const block_q8_0 *w = vw;
	for (int64_t b = 0; b < k / QK8_0; b++) {
		d[b] = h2f(w[b].d);
		m[b] = 0.0f;
		_mm256_storeu_si256((__m256i *)(q + 32 * b), ld(w[b].qs));
	}
}

/* ---- Q4_0 ---- */

static inline AVX2 __m256i q4_0_codes(const block_q4_0 *b)
{
	return _mm256_sub_epi8(unpack_nib(b->qs), _mm256_set1_epi8(8));
}

/* Unsigned nibbles straight into maddubs; the -8 offset is applied per block from the
 * activation block sum (-8 d_w ds): three fewer vector ops per block than the sign trick,
 * which matters because Q4_0 is the densest format per byte of DRAM traffic.
 * Four blocks per iteration, each with its own vector accumulator (the 4-cycle FMA
 * latency of one carried sum would bound the loop). The scales of the 4 blocks are made
 * with a few vector ops instead of ~6 scalar/shuffle ops per block (which was half the
 * loop's vector-port work): the 4 fp16 d_w gathered in a GPR, duplicated and converted
 * with one F16C op to [w0 w0 w1 w1 | w2 w2 w3 w3], times the activation pairs
 * [d0 ds0 d1 ds1 | d2 ds2 d3 ds3] -> [s0 c0 s1 c1 | s2 c2 s3 c3]. The s_j go through a
 * stack slot to broadcast loads (load port, no shuffle); the c_j (d_w ds) accumulate as
 * a whole vector whose odd lanes are summed at the end. */
static inline AVX2 uint64_t ldh(const uint16_t *p)
{
	uint16_t h;
	memcpy(&h, p, 2);
	return h;
}

static inline AVX2 __m128 ld_pair(const block_qa32 *a) /* [d ds] of a, [d ds] of a+1 */
{
	__m128 x = _mm_castpd_ps(_mm_load_sd((const double *)(const void *)&a[0].d));
	return _mm_loadh_pi(x, (const __m64 *)(const void *)&a[1].d);
}

#define Q4_0_BLOCK(j)                                                                      \
	acc##j = _mm256_fmadd_ps(_mm256_broadcast_ss(&sc[2 * (j)]),                        \
				 _mm256_cvtepi32_ps(dot_u8(unpack_nib(w[b + (j)].qs),      \
							   ld(a[b + (j)].qs))),            \
				 acc##j)

AVX2 float q4_0_vec_dot_avx2(int64_t k, const void *vw, const void *va)
{
	const block_q4_0 *w = vw;
	const block_qa32 *a = va;
	const int64_t nb = k / QK4_0;
	__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
	__m256 acc2 = _mm256_setzero_ps(), acc3 = _mm256_setzero_ps();
	__m256 cacc = _mm256_setzero_ps();
	float sc[8] __attribute__((aligned(32)));
	int64_t b = 0;
	for (; b + 3 < nb; b += 4) { /* 4 blocks = 72 bytes: two cache lines to request */
		PREFETCH(&w[b]);
		PREFETCH((const char *)&w[b] + 64);
		uint64_t h4 = ldh(&w[b].d) | ldh(&w[b + 1].d) << 16 | ldh(&w[b + 2].d) << 32 |
			      ldh(&w[b + 3].d) << 48;
		__m128i hv = _mm_cvtsi64_si128((long long)h4);
		__m256 wd = _mm256_cvtph_ps(_mm_unpacklo_epi16(hv, hv));
		__m256 p = _mm256_mul_ps(_mm256_set_m128(ld_pair(&a[b + 2]), ld_pair(&a[b])), wd);
		cacc = _mm256_add_ps(cacc, p);
		_mm256_store_ps(sc, p);
		Q4_0_BLOCK(0);
		Q4_0_BLOCK(1);
		Q4_0_BLOCK(2);
		Q4_0_BLOCK(3);
	}
	/* odd lanes of cacc: the d_w ds sums */
	_mm256_store_ps(sc, cacc);
	float c = (sc[1] + sc[3]) + (sc[5] + sc[7]);
	for (; b < nb; b++) {
		float dj = h2f(w[b].d);
		__m256i pj = dot_u8(unpack_nib(w[b].qs), ld(a[b].qs));
		acc0 = _mm256_fmadd_ps(_mm256_set1_ps(dj * a[b].d), _mm256_cvtepi32_ps(pj), acc0);
		c += dj * a[b].ds;
	}
	__m256 acc = _mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3));
	return hsum8(acc) - 8.0f * c;
}
#undef Q4_0_BLOCK

AVX2 void q4_0_decode_row_avx2(int64_t k, const void *vw, float *d, float *m, int8_t *q)
{
	const block_q4_0 *w = vw;
	for (int64_t b = 0; b < k / QK4_0; b++) {
		d[b] = h2f(w[b].d);
		m[b] = 0.0f;
		_mm256_storeu_si256((__m256i *)(q + 32 * b), q4_0_codes(&w[b]));
	}
}

/* ---- asymmetric 32-blocks: Q4_1, Q3_G, Q2_G share the loop ---- */

/* sum_b d_w d_a sum(q a) + m_w d_a s_a, codes from `unpack` */
#define ASYM_DOT(fmt, T, UNPACK)                                                               \
	AVX2 float fmt##_vec_dot_avx2(int64_t k, const void *vw, const void *va)               \
	{                                                                                      \
		const T *w = vw;                                                               \
		const block_qa32 *a = va;                                                      \
		const int64_t nb = k / 32;                                                     \
		__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();                 \
		float corr = 0.0f;                                                             \
		int64_t b = 0;                                                                 \
		for (; b + 1 < nb; b += 2) {                                                   \
			PREFETCH(&w[b]);                                                       \
			__m256i p0 = dot_u8(UNPACK(&w[b]), ld(a[b].qs));                       \
			__m256i p1 = dot_u8(UNPACK(&w[b + 1]), ld(a[b + 1].qs));               \
			acc0 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(w[b].d) * a[b].d),           \
					       _mm256_cvtepi32_ps(p0), acc0);                  \
			acc1 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(w[b + 1].d) * a[b + 1].d),   \
					       _mm256_cvtepi32_ps(p1), acc1);                  \
			corr += h2f(w[b].m) * a[b].ds + h2f(w[b + 1].m) * a[b + 1].ds;        \
		}                                                                              \
		for (; b < nb; b++) {                                                          \
			__m256i p0 = dot_u8(UNPACK(&w[b]), ld(a[b].qs));                       \
			acc0 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(w[b].d) * a[b].d),           \
					       _mm256_cvtepi32_ps(p0), acc0);                  \
			corr += h2f(w[b].m) * a[b].ds;                                         \
		}                                                                              \
		return hsum8(_mm256_add_ps(acc0, acc1)) + corr;                                \
	}                                                                                      \
	AVX2 void fmt##_decode_row_avx2(int64_t k, const void *vw, float *d, float *m, int8_t *q) \
	{                                                                                      \
		const T *w = vw;                                                               \
		for (int64_t b = 0; b < k / 32; b++) {                                         \
			d[b] = h2f(w[b].d);                                                    \
			m[b] = h2f(w[b].m);                                                    \
			_mm256_storeu_si256((__m256i *)(q + 32 * b), UNPACK(&w[b]));           \
		}                                                                              \
	}

#define Q4_1_UNPACK(b) unpack_nib((b)->qs)
#define Q2_G_UNPACK(b) unpack_2bit((b)->qs)
ASYM_DOT(q4_1, block_q4_1, Q4_1_UNPACK)
ASYM_DOT(q3_g, block_q3_g, unpack_q3)
ASYM_DOT(q2_g, block_q2_g, Q2_G_UNPACK)

/* ---- TQ2_0 ---- */

/* int32x8 partial sums of 4 sum(t a) for one 256 block (the caller subtracts s): codes t in {0,1,2} go into
 * maddubs unsigned. Code n of byte m of plane h (bits 2n, 2n+1) pairs with activation
 * 128h + 32n + m. One 16-bit shift by 4 per plane and masks 3 / 0xc give codes 0, 2 as t
 * and codes 1, 3 as 4t (no more shifts): the 4t products (<= 2*8*127 = 2032 per int16
 * lane, four of them <= 8128) and 4x the t products (four <= 508 each: 4*2032 = 8128)
 * add to <= 16256 in int16, then one madd. The caller scales by 1/4 (exact). */
static inline AVX2 __m256i tq2_block4(const block_tq2_0 *w, const block_qa256 *a)
{
	const __m256i m3 = _mm256_set1_epi8(3), mc = _mm256_set1_epi8(0x0c);
	__m256i su = _mm256_setzero_si256(), s4 = _mm256_setzero_si256();
	for (int h = 0; h < 2; h++) {
		__m256i x = ld(w->qs + 32 * h);
		__m256i y = _mm256_srli_epi16(x, 4);
		const int8_t *aq = a->qs + 128 * h;
		su = _mm256_add_epi16(su, _mm256_maddubs_epi16(_mm256_and_si256(x, m3), ld(aq)));
		s4 = _mm256_add_epi16(s4, _mm256_maddubs_epi16(_mm256_and_si256(x, mc), ld(aq + 32)));
		su = _mm256_add_epi16(su, _mm256_maddubs_epi16(_mm256_and_si256(y, m3), ld(aq + 64)));
		s4 = _mm256_add_epi16(s4, _mm256_maddubs_epi16(_mm256_and_si256(y, mc), ld(aq + 96)));
	}
	__m256i t16 = _mm256_add_epi16(_mm256_slli_epi16(su, 2), s4);
	return _mm256_madd_epi16(t16, _mm256_set1_epi16(1));
}

/* Four blocks per iteration; their scales d_w d_a with one F16C op (the 4 fp16 d_w packed
 * in a GPR) and one mul, then through a stack slot to broadcast loads (load port): the
 * scalar convert/mul/broadcast per block was ~1/6 of the vector-port work. */
#define TQ2_BLOCK(j)                                                                       \
	acc##j = _mm256_fmadd_ps(_mm256_broadcast_ss(&sc[j]),                              \
				 _mm256_cvtepi32_ps(tq2_block4(&w[b + (j)], &a[b + (j)])), acc##j)

AVX2 float tq2_0_vec_dot_avx2(int64_t k, const void *vw, const void *va)
{
	const block_tq2_0 *w = vw;
	const block_qa256 *a = va;
	const int64_t nb = k / QK_TQ;
	__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
	__m256 acc2 = _mm256_setzero_ps(), acc3 = _mm256_setzero_ps();
	__m128 cacc = _mm_setzero_ps(); /* sum of d_w d_a s: the offset, once per 4 blocks */
	float sc[4] __attribute__((aligned(16)));
	int64_t b = 0;
	for (; b + 3 < nb; b += 4) {
		const char *pw = (const char *)&w[b]; /* 4 blocks = 264 bytes: up to 5 lines */
		PREFETCH(pw);
		PREFETCH(pw + 64);
		PREFETCH(pw + 128);
		PREFETCH(pw + 192);
		PREFETCH(pw + 263);
		uint64_t h4 = ldh(&w[b].d) | ldh(&w[b + 1].d) << 16 | ldh(&w[b + 2].d) << 32 |
			      ldh(&w[b + 3].d) << 48;
		__m128 wd = _mm_cvtph_ps(_mm_cvtsi64_si128((long long)h4));
		/* (d, s) of activation blocks b..b+3 are adjacent: two 8-byte pairs per xmm */
		__m128 p01 = _mm_loadh_pi(_mm_castpd_ps(_mm_load_sd((const double *)&a[b])),
					  (const __m64 *)&a[b + 1]);
		__m128 p23 = _mm_loadh_pi(_mm_castpd_ps(_mm_load_sd((const double *)&a[b + 2])),
					  (const __m64 *)&a[b + 3]);
		__m128 ad = _mm_shuffle_ps(p01, p23, _MM_SHUFFLE(2, 0, 2, 0));
		__m128 as = _mm_cvtepi32_ps(
			_mm_castps_si128(_mm_shuffle_ps(p01, p23, _MM_SHUFFLE(3, 1, 3, 1))));
		__m128 s4 = _mm_mul_ps(wd, ad);
		_mm_store_ps(sc, s4);
		cacc = _mm_fmadd_ps(s4, as, cacc);
		TQ2_BLOCK(0);
		TQ2_BLOCK(1);
		TQ2_BLOCK(2);
		TQ2_BLOCK(3);
	}
	float corr = 0.0f;
	for (; b < nb; b++) {
		float scb = h2f(w[b].d) * a[b].d;
		corr += scb * (float)a[b].s;
		acc0 = _mm256_fmadd_ps(_mm256_set1_ps(scb),
				       _mm256_cvtepi32_ps(tq2_block4(&w[b], &a[b])), acc0);
	}
	__m256 acc = _mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3));
	__m128 c = _mm_add_ps(cacc, _mm_movehl_ps(cacc, cacc));
	c = _mm_add_ss(c, _mm_movehdup_ps(c));
	return 0.25f * hsum8(acc) - (_mm_cvtss_f32(c) + corr);
}
#undef TQ2_BLOCK

AVX2 void tq2_0_decode_row_avx2(int64_t k, const void *vw, float *d, float *m, int8_t *q)
{
	const block_tq2_0 *w = vw;
	const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
	for (int64_t b = 0; b < k / QK_TQ; b++, q += QK_TQ) {
		d[b] = h2f(w[b].d);
		m[b] = 0.0f;
		for (int h = 0; h < 2; h++) {
			__m256i x = ld(w[b].qs + 32 * h);
			for (int n = 0; n < 4; n++) {
				__m256i c = _mm256_and_si256(_mm256_srl_epi16(x, _mm_cvtsi32_si128(2 * n)), m3);
				_mm256_storeu_si256((__m256i *)(q + 128 * h + 32 * n), _mm256_sub_epi8(c, one));
			}
		}
	}
}

/* ---- TQ1_0 ---- */

AVX2 float tq1_0_vec_dot_avx2(int64_t k, const void *vw, const void *va)
{
	const block_tq1_0 *w = vw;
	const block_qa256 *a = va;
	__m256 acc = _mm256_setzero_ps();
	for (int64_t b = 0; b < k / QK_TQ; b++) {
		__m256i t[8];
		PREFETCH(&w[b]);
		unpack_tq1(&w[b], t);
		__m256i s16 = _mm256_setzero_si256();
		for (int c = 0; c < 8; c++)
			s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(t[c], ld(a[b].qs + 32 * c)));
		__m256i s32 = _mm256_sub_epi32(_mm256_madd_epi16(s16, _mm256_set1_epi16(1)),
					       _mm256_castsi128_si256(_mm_cvtsi32_si128(a[b].s)));
		acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(w[b].d) * a[b].d), _mm256_cvtepi32_ps(s32), acc);
	}
	return hsum8(acc);
}

AVX2 void tq1_0_decode_row_avx2(int64_t k, const void *vw, float *d, float *m, int8_t *q)
{
	const block_tq1_0 *w = vw;
	for (int64_t b = 0; b < k / QK_TQ; b++, q += QK_TQ) {
		__m256i t[8];
		d[b] = h2f(w[b].d);
		m[b] = 0.0f;
		unpack_tq1(&w[b], t);
		for (int c = 0; c < 8; c++)
			_mm256_storeu_si256((__m256i *)(q + 32 * c), _mm256_sub_epi8(t[c], _mm256_set1_epi8(1)));
	}
}
