/* quant_repack_kern: the body of the r8 group kernels (GEMV: one activation row; GEMM:
 * QR_ROWS of them, at the end), included three times by
 * quant_repack_avx2.c (no include guard, on purpose): once for plain AVX2, where a code x
 * activation product goes through maddubs into int16 partial sums reduced by one
 * madd(., 1) per block (the bounds below keep those sums from wrapping), and for AVX-VNNI
 * and AVX-512 VNNI (EVEX on ymm), where vpdpbusd does multiply, pair-add and int32
 * accumulation in one instruction (no int16 stage; the bounds then hold trivially). The
 * includer defines
 *   QRK(name)    the function name with its variant suffix
 *   QRK_ATTR     the target attribute
 *   QRK_DOT(s, u, a)  s + the products of unsigned codes u and int8 activations a
 *   QRK_SUM4(a, b, c, d)  the sum of four such accumulators as 8 int32 row sums
 *   QRK_DOT32(s, u, a)  int32 s + the products of u and a (no int16 stage)
 *   QRK_VNNI, QRK_DOTB(s, u, p)  (VNNI variants) QRK_DOT with a = the 4 bytes at p
 *                broadcast
 * and ld(), bcast4(), enum b32_kind. */

/* ---- blocks of 32 (Q8_0, Q4_0, Q4_1, Q3_G, Q2_G) ----
 * Codes (but Q8_0's) go unsigned into maddubs; a format's offset (-8 for Q4_0, the min m
 * for Q4_1, Q3_G, Q2_G) is applied once per block from the activation block's ds = d_a sum(a): acc gets
 * d_w d_a S, cacc gets d_w ds (Q4_0, times -8 at the end) or m_w ds. Each isum function
 * returns [S_0 .. S_7] (int32, exact) for one block of the 8 rows; its int16 partial sums
 * are bounded in its comment. */

/* Q4_0/Q4_1: 4 vectors of nibbles (element i in the low nibble of byte i, i + 16 in the
 * high one). 8 maddubs with |lane| <= 2 * 15 * 127 = 3810: int16 sum <= 30480. */
static inline QRK_ATTR __m256i QRK(nib_isum)(const uint8_t *q, const int8_t *aq)
{
	const __m256i m4 = _mm256_set1_epi8(0x0f);
	__m256i s[4];
#pragma GCC unroll 4
	for (int j = 0; j < 4; j++) { /* 4 independent sums: vpdpbusd has latency 5 */
		__m256i v = ld(q + 32 * j);
		s[j] = QRK_DOT(_mm256_setzero_si256(), _mm256_and_si256(v, m4), bcast4(aq + 4 * j));
		s[j] = QRK_DOT(s[j], _mm256_and_si256(_mm256_srli_epi16(v, 4), m4), bcast4(aq + 16 + 4 * j));
	}
	return QRK_SUM4(s[0], s[1], s[2], s[3]);
}

/* Q2_G/Q3_G low bits: 2 vectors; byte j = 4u + i holds elements j + 8n at bits 2n..2n+1.
 * Q3_G's third vector is its high-bit plane re-encoded at packing time (q3_hbits in
 * quant_repack.c): bit n + 4u of byte i is the high bit of element 8n + 4u + i, so one
 * shift and one mask put it at bit 2 (value 4) of that element's code byte. Codes <= 7: 8 maddubs
 * with |lane| <= 2 * 7 * 127 = 1778, int16 sum <= 14224. */
static inline QRK_ATTR __attribute__((always_inline)) __m256i QRK(low_isum)(int hbit, const uint8_t *q,
								   const int8_t *aq)
{
	const __m256i m3 = _mm256_set1_epi8(3), m4 = _mm256_set1_epi8(4);
	__m256i s[4] = { _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
			 _mm256_setzero_si256() };
	__m256i h = hbit ? ld(q + 64) : _mm256_setzero_si256();
#pragma GCC unroll 2
	for (int u = 0; u < 2; u++) {
		__m256i v = ld(q + 32 * u);
#pragma GCC unroll 4
		for (int n = 0; n < 4; n++) {
			__m256i c = _mm256_and_si256(n ? _mm256_srli_epi16(v, 2 * n) : v, m3);
			if (hbit) {
				int sh = n + 4 * u - 2;
				__m256i hb = sh > 0 ? _mm256_srli_epi16(h, sh)
					     : sh < 0 ? _mm256_slli_epi16(h, -sh) : h;
				c = _mm256_or_si256(c, _mm256_and_si256(hb, m4));
			}
			s[n] = QRK_DOT(s[n], c, bcast4(aq + 8 * n + 4 * u));
		}
	}
	return QRK_SUM4(s[0], s[1], s[2], s[3]);
}

/* Q8_0: 8 vectors of signed int8 codes; |w| . sign(a, w) through maddubs (a pair of
 * products reaches 2 * 127 * 127 = 32258, so each maddubs goes to int32 at once: QRK_DOT32),
 * 4 independent sums. */
static inline QRK_ATTR __m256i QRK(q8_isum)(const uint8_t *q, const int8_t *aq)
{
	__m256i s[4] = { _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
			 _mm256_setzero_si256() };
#pragma GCC unroll 8
	for (int j = 0; j < 8; j++) {
		__m256i v = ld(q + 32 * j);
		s[j & 3] = QRK_DOT32(s[j & 3], _mm256_abs_epi8(v), _mm256_sign_epi8(bcast4(aq + 4 * j), v));
	}
	return _mm256_add_epi32(_mm256_add_epi32(s[0], s[1]), _mm256_add_epi32(s[2], s[3]));
}

static inline QRK_ATTR __attribute__((always_inline)) __m256i QRK(b32_isum)(enum b32_kind kind,
								   const uint8_t *q, const int8_t *aq)
{
	return kind == B32_Q8_0 ? QRK(q8_isum)(q, aq)
	       : kind == B32_Q4_0 || kind == B32_Q4_1 ? QRK(nib_isum)(q, aq)
						      : QRK(low_isum)(kind == B32_Q3_G, q, aq);
}

#define B32_BLOCK(bb, acc, cacc)                                                            \
	do {                                                                                \
		const uint16_t *sb = sc + 8 * S * (bb);                                     \
		__m256 wd = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)sb));          \
		__m256 wo = S == 2 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sb + 8))) \
				   : wd;                                                    \
		__m256i is = QRK(b32_isum)(kind, q + 8 * P * (bb), a[bb].qs);                    \
		acc = _mm256_fmadd_ps(_mm256_mul_ps(wd, _mm256_broadcast_ss(&a[bb].d)),     \
				      _mm256_cvtepi32_ps(is), acc);                         \
		if (kind != B32_Q8_0) /* Q8_0 has no offset */                               \
			cacc = _mm256_fmadd_ps(wo, _mm256_broadcast_ss(&a[bb].ds), cacc);   \
	} while (0)

/* One group of 8 rows of a 32-block format whose blocks carry P payload bytes */
static inline QRK_ATTR __attribute__((always_inline)) void QRK(b32_r8)(enum b32_kind kind, int P,
							     int64_t k, const void *grp,
							     const void *xq, float *y)
{
	const int S = kind == B32_Q4_0 || kind == B32_Q8_0 ? 1 : 2; /* fp16 scales: d (, m) */
	const int64_t nb = k / 32;
	const uint16_t *sc = grp; /* scales first, then codes (quant_repack.h) */
	const uint8_t *q = (const uint8_t *)grp + 16 * S * nb;
	const block_qa32 *a = xq;
	__m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, c0 = acc0, c1 = acc0;
	int64_t b = 0;
	for (; b + 1 < nb; b += 2) { /* 2 blocks: 16 P bytes of codes, 32 S bytes of scales */
		const char *pq = (const char *)(q + 8 * P * b) + qk_prefetch;
#pragma GCC unroll 4
		for (int l = 0; l < 16 * P; l += 64)
			_mm_prefetch(pq + l, _MM_HINT_T0);
		_mm_prefetch((const char *)(sc + 8 * S * b) + qk_prefetch * S / P, _MM_HINT_T0);
		B32_BLOCK(b, acc0, c0);
		B32_BLOCK(b + 1, acc1, c1);
	}
	if (b < nb)
		B32_BLOCK(b, acc0, c0);
	__m256 acc = _mm256_add_ps(acc0, acc1), c = _mm256_add_ps(c0, c1);
	_mm256_storeu_ps(y, kind == B32_Q8_0 ? acc
			    : S == 2 ? _mm256_add_ps(acc, c)
				     : _mm256_fnmadd_ps(_mm256_set1_ps(8.0f), c, acc));
}
#undef B32_BLOCK

static QRK_ATTR void QRK(q8_0_r8)(int64_t k, const void *g, const void *xq, float *y)
{
	QRK(b32_r8)(B32_Q8_0, 32, k, g, xq, y);
}

static QRK_ATTR void QRK(q4_0_r8)(int64_t k, const void *g, const void *xq, float *y)
{
	QRK(b32_r8)(B32_Q4_0, 16, k, g, xq, y);
}

static QRK_ATTR void QRK(q4_1_r8)(int64_t k, const void *g, const void *xq, float *y)
{
	QRK(b32_r8)(B32_Q4_1, 16, k, g, xq, y);
}

static QRK_ATTR void QRK(q3_g_r8)(int64_t k, const void *g, const void *xq, float *y)
{
	QRK(b32_r8)(B32_Q3_G, 12, k, g, xq, y);
}

static QRK_ATTR void QRK(q2_g_r8)(int64_t k, const void *g, const void *xq, float *y)
{
	QRK(b32_r8)(B32_Q2_G, 8, k, g, xq, y);
}

/* ---- TQ2_0 (and TQ1_0, transcoded to TQ2_0 codes when packed) ----
 * 16 vectors per block; unit j = bytes 4j..4j+3 of plane h = j / 8, and code n of byte
 * 4(j % 8) + i multiplies element 128h + 32n + 4(j % 8) + i. One 16-bit shift by 4 per
 * vector and masks 3 / 0xc give codes n = 0, 2 as t and n = 1, 3 as 4t (no more shifts).
 * int16 bounds per row lane: su collects 64 products t a <= 254 (16256); s4 collects 4t a
 * <= 1016, so it goes through madd every 8 vectors (32 products, 32512). The result is
 * 4 sum(t a); the ternary offset is sum((t - 1) a) = sum(t a) - s with s the activation
 * block's exact int sum, and the 1/4 goes into the fp32 scale (exact). */
static inline QRK_ATTR __m256i QRK(tq2_isum4)(const uint8_t *q, const int8_t *aq)
{
	const __m256i m3 = _mm256_set1_epi8(3), mc = _mm256_set1_epi8(0x0c);
	const __m256i z = _mm256_setzero_si256();
	__m256i su0 = z, su1 = z, s4w = z; /* two chains each (vpdpbusd latency 5) */
#pragma GCC unroll 2
	for (int h = 0; h < 2; h++) {
		__m256i s40 = z, s41 = z;
#pragma GCC unroll 8
		for (int jj = 0; jj < 8; jj += 2) {
			__m256i x = ld(q + 32 * (8 * h + jj)), y = _mm256_srli_epi16(x, 4);
			__m256i x1 = ld(q + 32 * (8 * h + jj + 1)), y1 = _mm256_srli_epi16(x1, 4);
			const int8_t *ab = aq + 128 * h + 4 * jj;
			su0 = QRK_DOT(su0, _mm256_and_si256(x, m3), bcast4(ab));
			s40 = QRK_DOT(s40, _mm256_and_si256(x, mc), bcast4(ab + 32));
			su0 = QRK_DOT(su0, _mm256_and_si256(y, m3), bcast4(ab + 64));
			s40 = QRK_DOT(s40, _mm256_and_si256(y, mc), bcast4(ab + 96));
			su1 = QRK_DOT(su1, _mm256_and_si256(x1, m3), bcast4(ab + 4));
			s41 = QRK_DOT(s41, _mm256_and_si256(x1, mc), bcast4(ab + 36));
			su1 = QRK_DOT(su1, _mm256_and_si256(y1, m3), bcast4(ab + 68));
			s41 = QRK_DOT(s41, _mm256_and_si256(y1, mc), bcast4(ab + 100));
			/* keep the sums running: left alone, gcc reassociates the (wrapping, so
			 * associative) int16 adds into a tree over all 64 products of a block and
			 * spills them to the stack */
			__asm__("" : "+x"(su0), "+x"(su1), "+x"(s40), "+x"(s41));
		}
		s4w = _mm256_add_epi32(s4w, QRK_SUM4(s40, s41, z, z));
	}
	return _mm256_add_epi32(_mm256_slli_epi32(QRK_SUM4(su0, su1, z, z), 2), s4w);
}

#ifdef QRK_VNNI
/* The VNNI form: vpdpbusd adds its four u8 x s8 products straight into int32, so nothing
 * bounds the code values: the four 2-bit codes of a byte are taken in place with the masks
 * 0x03, 0x0c, 0x30, 0xc0 (t, 4t, 16t, 64t: no shift at all, 4 ands + 4 vpdpbusd per 32
 * bytes instead of the AVX2 form's 1 shift + 4 ands + 4 maddubs + 4 adds), into 8
 * independent sums (vpdpbusd latency 5 x 2 per cycle = 10 in flight wanted; 8 chains of 8
 * per block, and the next block's chains overlap). Result: 64 sum(t a) per row (exact:
 * |64 t a| <= 192 * 128 per product, 64 products). */
#define TQ2_SHIFT 6
static inline QRK_ATTR __attribute__((always_inline)) __m256i QRK(tq2_isum)(const uint8_t *q,
									  const int8_t *aq)
{
	const __m256i z = _mm256_setzero_si256();
	__m256i s[8] = { z, z, z, z, z, z, z, z };
#pragma GCC unroll 16
	for (int j = 0; j < 16; j++) { /* vector j: plane h = j / 8, bytes 4 (j % 8) .. + 3 */
		const __m256i x = ld(q + 32 * j);
		const int8_t *ab = aq + 128 * (j / 8) + 4 * (j % 8);
		const int p = j & 1;
		s[0 + p] = QRK_DOTB(s[0 + p], _mm256_and_si256(x, _mm256_set1_epi8(0x03)), ab);
		s[2 + p] = QRK_DOTB(s[2 + p], _mm256_and_si256(x, _mm256_set1_epi8(0x0c)), ab + 32);
		s[4 + p] = QRK_DOTB(s[4 + p], _mm256_and_si256(x, _mm256_set1_epi8(0x30)), ab + 64);
		s[6 + p] = QRK_DOTB(s[6 + p], _mm256_and_si256(x, _mm256_set1_epi8((char)0xc0)), ab + 96);
	}
	__m256i t0 = _mm256_add_epi32(s[0], s[1]), t1 = _mm256_add_epi32(s[2], s[3]);
	__m256i t2 = _mm256_add_epi32(s[4], s[5]), t3 = _mm256_add_epi32(s[6], s[7]);
	t0 = _mm256_add_epi32(_mm256_slli_epi32(t0, 6), _mm256_slli_epi32(t1, 4));
	t2 = _mm256_add_epi32(_mm256_slli_epi32(t2, 2), t3);
	return _mm256_add_epi32(t0, t2);
}
#else
#define TQ2_SHIFT 2 /* tq2_isum4 returns 4 sum(t a) */
static inline QRK_ATTR __attribute__((always_inline)) __m256i QRK(tq2_isum)(const uint8_t *q,
									  const int8_t *aq)
{
	return QRK(tq2_isum4)(q, aq);
}
#endif

#define TQ2_BLOCK(bb, acc)                                                                  \
	do {                                                                                \
		__m256 wd = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sc + 8 * (bb)))); \
		__m256i is = _mm256_sub_epi32(QRK(tq2_isum)(q + 512 * (bb), a[bb].qs),           \
					      _mm256_set1_epi32(a[bb].s * (1 << TQ2_SHIFT))); \
		acc = _mm256_fmadd_ps(_mm256_mul_ps(wd, _mm256_set1_ps(a[bb].d / (1 << TQ2_SHIFT))), \
				      _mm256_cvtepi32_ps(is), acc);                         \
	} while (0)

static QRK_ATTR void QRK(tq2_0_r8)(int64_t k, const void *grp, const void *xq, float *y)
{
	const int64_t nb = k / QK_TQ;
	const uint16_t *sc = grp; /* scales first, then codes (quant_repack.h) */
	const uint8_t *q = (const uint8_t *)grp + 16 * nb;
	const block_qa256 *a = xq;
	__m256 acc = _mm256_setzero_ps();
	/* one block per iteration: its 4 partial sums give enough independent work, and two
	 * blocks in flight made gcc spill registers (llvm-mca: 114 stack moves per iteration) */
	for (int64_t b = 0; b < nb; b++) {
		const char *pq = (const char *)(q + 512 * b) + qk_prefetch;
#pragma GCC unroll 8
		for (int l = 0; l < 512; l += 64)
			_mm_prefetch(pq + l, _MM_HINT_T0);
		if (!(b & 1))
			_mm_prefetch((const char *)(sc + 8 * b) + qk_prefetch / 32, _MM_HINT_T0);
		TQ2_BLOCK(b, acc);
	}
	_mm256_storeu_ps(y, acc);
}
#undef TQ2_BLOCK
#undef TQ2_SHIFT

/* ---- GEMM: QR_ROWS activation rows per call (qgemm_r8) ----
 * Each code vector is loaded and decoded once and feeds all QR_ROWS rows: the decoding
 * (loads, shifts, masks) is shared, only the dot products are per row. Per row and block,
 * the int16 sums of the maddubs form hold at most the GEMV's bounds summed over one chain:
 * Q4_0/Q4_1 8 maddubs of |lane| <= 3810 (30480), Q3_G/Q2_G 8 of <= 1778 (14224), TQ2_0
 * 64 of <= 2 * 2 * 127 (codes c = t + 1 <= 2, activations clamped to +-127: 32512);
 * Q8_0's pairs go to int32 at once. The VNNI forms have int32 sums and two chains per row
 * (vpdpbusd's latency). A format's offset (Q4_0's -8, Q4_1/Q3_G/Q2_G's min, on
 * VNNI Q8_0's -128) goes into the row's one fp32 sum per block. */
#ifdef QRK_VNNI
#define RW_CH 2           /* chains per row */
#define RW_I32(s) (s)     /* a chain as int32 */
#define RW_DOT(s, u, p) QRK_DOTB(s, u, p)
#else
#define RW_CH 1
#define RW_I32(s) _mm256_madd_epi16((s), _mm256_set1_epi16(1))
#define RW_DOT(s, u, p) QRK_DOT(s, u, bcast4(p))
#endif

/* s[t][h] += u times the 4 bytes at row t's activations + o (h: the chain). The empty asm
 * keeps each sum running: left alone, gcc reassociates the (wrapping, so associative)
 * int16 adds into a tree over a block's products and spills them (66-510 stack accesses
 * per kernel) */
#define RW_ROWS(s, u, qs, o, h)                                                             \
	do {                                                                                \
		const __m256i u_ = (u);                                                     \
		_Pragma("GCC unroll 4") for (int t_ = 0; t_ < QR_ROWS; t_++) {              \
			s[t_][(h) % RW_CH] = RW_DOT(s[t_][(h) % RW_CH], u_, (qs)[t_] + (o)); \
			__asm__("" : "+x"(s[t_][(h) % RW_CH]));                             \
		}                                                                           \
	} while (0)

/* row t's chains as one int32 sum */
#define RW_SUM(s, t) RW_I32(RW_CH == 2 ? _mm256_add_epi32((s)[t][0], (s)[t][RW_CH - 1]) : (s)[t][0])

/* is[t] = row t's exact int32 block sums [S_0 .. S_7] of one block of a 32-block format
 * (codes at q as in b32_isum); Q8_0's codes go in as w + 128 on VNNI, as |w| with
 * sign(a, w) on AVX2 (a pair of products reaches 32258: no int16 stage) */
static inline QRK_ATTR __attribute__((always_inline)) void QRK(b32_isum_rows)(
	enum b32_kind kind, const uint8_t *q, const int8_t *const *qs, __m256i *is)
{
	__m256i s[QR_ROWS][RW_CH];
#pragma GCC unroll 4
	for (int t = 0; t < QR_ROWS; t++)
		for (int h = 0; h < RW_CH; h++)
			s[t][h] = _mm256_setzero_si256();
	if (kind == B32_Q8_0) {
#pragma GCC unroll 8
		for (int j = 0; j < 8; j++) {
			const __m256i v = ld(q + 32 * j);
#ifdef QRK_VNNI
			RW_ROWS(s, _mm256_xor_si256(v, _mm256_set1_epi8((char)0x80)), qs, 4 * j, j);
#else
			const __m256i av = _mm256_abs_epi8(v);
#pragma GCC unroll 4
			for (int t = 0; t < QR_ROWS; t++) {
				s[t][0] = QRK_DOT32(s[t][0], av, _mm256_sign_epi8(bcast4(qs[t] + 4 * j), v));
				__asm__("" : "+x"(s[t][0])); /* as in RW_ROWS */
			}
#endif
		}
#pragma GCC unroll 4
		for (int t = 0; t < QR_ROWS; t++)
			is[t] = RW_CH == 2 ? _mm256_add_epi32(s[t][0], s[t][RW_CH - 1]) : s[t][0];
		return;
	}
	if (kind == B32_Q4_0 || kind == B32_Q4_1) {
		const __m256i m4 = _mm256_set1_epi8(0x0f);
#pragma GCC unroll 4
		for (int j = 0; j < 4; j++) { /* low nibble: element 4j + i, high: + 16 */
			const __m256i v = ld(q + 32 * j);
			RW_ROWS(s, _mm256_and_si256(v, m4), qs, 4 * j, 0);
			RW_ROWS(s, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4), qs, 16 + 4 * j, 1);
		}
	} else { /* Q3_G, Q2_G: as low_isum */
		const __m256i m3 = _mm256_set1_epi8(3), m4 = _mm256_set1_epi8(4);
		const __m256i hv = kind == B32_Q3_G ? ld(q + 64) : _mm256_setzero_si256();
#pragma GCC unroll 2
		for (int u = 0; u < 2; u++) {
			const __m256i v = ld(q + 32 * u);
#pragma GCC unroll 4
			for (int n = 0; n < 4; n++) {
				__m256i c = _mm256_and_si256(n ? _mm256_srli_epi16(v, 2 * n) : v, m3);
				if (kind == B32_Q3_G) {
					const int sh = n + 4 * u - 2;
					const __m256i hb = sh > 0 ? _mm256_srli_epi16(hv, sh)
							   : sh < 0 ? _mm256_slli_epi16(hv, -sh) : hv;
					c = _mm256_or_si256(c, _mm256_and_si256(hb, m4));
				}
				RW_ROWS(s, c, qs, 8 * n + 4 * u, n);
			}
		}
	}
#pragma GCC unroll 4
	for (int t = 0; t < QR_ROWS; t++)
		is[t] = RW_SUM(s, t);
}

/* y[t][0..8) = one group of 8 rows of a 32-block format times activation row xq[t] */
static inline QRK_ATTR __attribute__((always_inline)) void QRK(b32_r8_rows)(
	enum b32_kind kind, int P, int64_t k, const void *grp, const void *const *xq,
	float *const *y)
{
	const int S = kind == B32_Q4_0 || kind == B32_Q8_0 ? 1 : 2;
	const int64_t nb = k / 32;
	const uint16_t *sc = grp; /* scales first, then codes (quant_repack.h) */
	const uint8_t *q = (const uint8_t *)grp + 16 * S * nb;
#ifdef QRK_VNNI /* the offset's factor on a block's scale */
	const float off = kind == B32_Q4_0 ? -8.0f : kind == B32_Q8_0 ? -128.0f : 1.0f;
#else
	const float off = kind == B32_Q4_0 ? -8.0f : 1.0f;
#endif
	const int has_off = RW_CH == 2 || kind != B32_Q8_0;
	const block_qa32 *a[QR_ROWS];
	__m256 acc[QR_ROWS];
#pragma GCC unroll 4
	for (int t = 0; t < QR_ROWS; t++)
		a[t] = xq[t], acc[t] = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		const uint16_t *sb = sc + 8 * S * b;
		const __m256 wd = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)sb));
		const __m256 wo = _mm256_mul_ps(
			S == 2 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sb + 8))) : wd,
			_mm256_set1_ps(off));
		const int8_t *qs[QR_ROWS];
		__m256i is[QR_ROWS];
#pragma GCC unroll 4
		for (int t = 0; t < QR_ROWS; t++)
			qs[t] = a[t][b].qs;
		QRK(b32_isum_rows)(kind, q + 8 * P * b, qs, is);
#pragma GCC unroll 4
		for (int t = 0; t < QR_ROWS; t++) {
			acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(wd, _mm256_broadcast_ss(&a[t][b].d)),
						 _mm256_cvtepi32_ps(is[t]), acc[t]);
			if (has_off)
				acc[t] = _mm256_fmadd_ps(wo, _mm256_broadcast_ss(&a[t][b].ds), acc[t]);
		}
	}
#pragma GCC unroll 4
	for (int t = 0; t < QR_ROWS; t++)
		_mm256_storeu_ps(y[t], acc[t]);
}

#define B32_ROWS_KERNEL(name, kind, P)                                                      \
	static QRK_ATTR void QRK(name##_r8_rows)(int64_t k, const void *g, const void *const *xq, \
						 float *const *y)                           \
	{                                                                                   \
		QRK(b32_r8_rows)(kind, P, k, g, xq, y);                                     \
	}
B32_ROWS_KERNEL(q8_0, B32_Q8_0, 32)
B32_ROWS_KERNEL(q4_0, B32_Q4_0, 16)
B32_ROWS_KERNEL(q4_1, B32_Q4_1, 16)
B32_ROWS_KERNEL(q3_g, B32_Q3_G, 12)
B32_ROWS_KERNEL(q2_g, B32_Q2_G, 8)
#undef B32_ROWS_KERNEL

/* TQ2_0: vector j, field n (bits 2n, 2n + 1: the code c = t + 1) multiplies elements
 * 128 (j / 8) + 32 n + 4 (j % 8) + i (as tq2_isum); the activation block's sum s comes off
 * per row (sum (c - 1) a = sum c a - s) */
static QRK_ATTR void QRK(tq2_0_r8_rows)(int64_t k, const void *grp, const void *const *xq,
					float *const *y)
{
	const int64_t nb = k / QK_TQ;
	const uint16_t *sc = grp; /* scales first, then codes (quant_repack.h) */
	const uint8_t *q = (const uint8_t *)grp + 16 * nb;
	const __m256i m3 = _mm256_set1_epi8(3);
	const block_qa256 *a[QR_ROWS];
	__m256 acc[QR_ROWS];
#pragma GCC unroll 4
	for (int t = 0; t < QR_ROWS; t++)
		a[t] = xq[t], acc[t] = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		const uint8_t *qb = q + 512 * b;
		const int8_t *qs[QR_ROWS];
		__m256i s[QR_ROWS][RW_CH];
#pragma GCC unroll 4
		for (int t = 0; t < QR_ROWS; t++) {
			qs[t] = a[t][b].qs;
			for (int h = 0; h < RW_CH; h++)
				s[t][h] = _mm256_setzero_si256();
		}
#pragma GCC unroll 16
		for (int j = 0; j < 16; j++) {
			const __m256i x = ld(qb + 32 * j);
			const int o = 128 * (j / 8) + 4 * (j % 8);
#pragma GCC unroll 4
			for (int n = 0; n < 4; n++)
				RW_ROWS(s, _mm256_and_si256(n ? _mm256_srli_epi16(x, 2 * n) : x, m3), qs,
					o + 32 * n, n);
		}
		const __m256 wd = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sc + 8 * b)));
#pragma GCC unroll 4
		for (int t = 0; t < QR_ROWS; t++) {
			const __m256i is = _mm256_sub_epi32(RW_SUM(s, t), _mm256_set1_epi32(a[t][b].s));
			acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(wd, _mm256_broadcast_ss(&a[t][b].d)),
						 _mm256_cvtepi32_ps(is), acc[t]);
		}
	}
#pragma GCC unroll 4
	for (int t = 0; t < QR_ROWS; t++)
		_mm256_storeu_ps(y[t], acc[t]);
}
#undef RW_SUM
#undef RW_ROWS
#undef RW_DOT
#undef RW_I32
#undef RW_CH
