/* quant_repack_avx512: AVX-512 VNNI GEMV kernels on zmm over the r16 layout
 * (quant_repack.h): one call computes the 16 outputs of one group of 16 interleaved rows.
 * Their plain-C twin is qgemv_r8_ref (quant_repack.c), which reads either layout; the
 * integer block sums here are exact, only the fp32 accumulation order differs.
 *
 * Why a second layout: on a core whose vector units are 512 bits wide (AMD Zen 5 server
 * parts), a batch-1 GEMV on ymm runs out of arithmetic before it runs out of DRAM
 * bandwidth (measured in quant_repack.c's notes). The r16 layout is r8 with 16 rows per
 * group: vector j of a block is unit j of 16 rows, 64 bytes, so the r8 kernels of
 * quant_repack_kern.h carry over to zmm unchanged in shape: one 4-byte activation
 * broadcast ({1to16}, folded into vpdpbusd as a memory operand) serves 16 rows, and the
 * 16 fp16 scales of a block convert with one vcvtph2ps. Unlike r8, r16 keeps each pair
 * of blocks' scales just before their codes, so that a group is one forward stream (why:
 * quant_repack.h). Formats: all that have an r8 layout: Q8_0, Q4_0, Q4_1, Q3_G, Q2_G,
 * TQ2_0 (and TQ1_0, packed as TQ2_0 codes). */
#include <immintrin.h>

#include "quant_impl.h"
#include "quant_repack_impl.h"

#define ZMM __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
#define INL inline __attribute__((always_inline))

static INL ZMM __m512i ldz(const void *p) { return _mm512_loadu_si512(p); }

/* s + the products of unsigned codes u and the 4 int8 activations at p broadcast to all
 * 16 lanes (EVEX vpdpbusd with a {1to16} memory operand: one fused uop) */
static INL ZMM __m512i dpz(__m512i s, __m512i u, const int8_t *p)
{
	__asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(s) : "v"(u), "m"(*(const int32_t *)(const void *)p));
	return s;
}

/* p, as a value the compiler cannot see through: every address a block's kernel forms
 * is then p + a constant (one register), instead of one induction variable per distinct
 * offset, which on the multi-stream kernels ran out of registers and spilled pointers */
#define OPAQUE(p) __asm__("" : "+r"(p))

static INL ZMM __m512i add4(__m512i a, __m512i b, __m512i c, __m512i d)
{
	return _mm512_add_epi32(_mm512_add_epi32(a, b), _mm512_add_epi32(c, d));
}

/* Software prefetch of the `bytes` bytes at p + pf.l2 into L2 and at p + pf.l1 into L1
 * (each where its distance is not 0) */
static INL void prefetch_ahead(const char *p, struct qk_pf pf, int bytes)
{
	if (pf.l2) {
		const char *b = p + pf.l2;
		OPAQUE(b);
#pragma GCC unroll 33
		for (int l = 0; l < bytes; l += 64)
			_mm_prefetch(b + l, _MM_HINT_T1);
	}
	if (pf.l1) {
		const char *b = p + pf.l1;
		OPAQUE(b);
#pragma GCC unroll 33
		for (int l = 0; l < bytes; l += 64)
			_mm_prefetch(b + l, _MM_HINT_T0);
	}
}

/* The line pf.l2 bytes past p into L2 and the one pf.l1 past it into L1 (each where its
 * distance is not 0): one of each per line a loop loads, spread over its loads, where
 * prefetch_ahead asks for many lines at once. prefetch_ahead(p, pf, 64) would ask for the
 * same lines, but its OPAQUE base pointers cost tq2_0_r16s a register (objdump of the x2
 * and x4 kernels: 16 more instructions, one more stack access). The two distance tests
 * stay in the loop (gcc does not unswitch them): loop-invariant, so always predicted. */
static INL void prefetch_line(const void *p, struct qk_pf pf)
{
	if (pf.l2)
		_mm_prefetch((const char *)p + pf.l2, _MM_HINT_T1);
	if (pf.l1)
		_mm_prefetch((const char *)p + pf.l1, _MM_HINT_T0);
}

/* ---- blocks of 32: Q8_0, Q4_0, Q4_1, Q3_G, Q2_G (quant_repack_kern.h explains the
 * offsets) ---- */

/* Q4_0/Q4_1: 4 vectors of nibbles (element i in the low nibble of byte i of the block,
 * i + 16 in the high one). The high nibble is taken in place (mask 0xf0: 16 times the
 * code), so one and per nibble and no shift; its sum is a multiple of 16, shifted back
 * exactly at the end. Returns [S_0 .. S_15] (int32, exact: |16 c a| <= 16 * 15 * 128 per
 * product, 16 products per lane and sum). */
static INL ZMM __m512i nib_isum16(const uint8_t *q, const int8_t *aq, struct qk_pf pf)
{
	OPAQUE(q);
	OPAQUE(aq);
	const __m512i m4 = _mm512_set1_epi8(0x0f), mh = _mm512_set1_epi8((char)0xf0);
	const __m512i z = _mm512_setzero_si512();
	__m512i lo0 = z, lo1 = z, hi0 = z, hi1 = z;
#pragma GCC unroll 2
	for (int j = 0; j < 4; j += 2) {
		prefetch_line(q + 64 * j, pf);
		prefetch_line(q + 64 * j + 64, pf);
		const __m512i v = ldz(q + 64 * j), w = ldz(q + 64 * j + 64);
		lo0 = dpz(lo0, _mm512_and_si512(v, m4), aq + 4 * j);
		hi0 = dpz(hi0, _mm512_and_si512(v, mh), aq + 16 + 4 * j);
		lo1 = dpz(lo1, _mm512_and_si512(w, m4), aq + 4 * j + 4);
		hi1 = dpz(hi1, _mm512_and_si512(w, mh), aq + 16 + 4 * j + 4);
	}
	return _mm512_add_epi32(_mm512_add_epi32(lo0, lo1),
				_mm512_srai_epi32(_mm512_add_epi32(hi0, hi1), 4));
}

/* Q8_0: 8 vectors of signed codes w. vpdpbusd wants one unsigned side: w ^ 0x80 is w + 128
 * as an unsigned byte, one xor per vector (the sign-transfer form, |w| times the activation
 * negated where w < 0, took three and ran 1.35x slower hot). Returns S + 128 sum(a); the
 * block's 128 sum(a) is taken off in fp32 through the activation block's ds = d_a sum(a),
 * as Q4_0's 8 sum(a) is (z32_r16n). */
static INL ZMM __m512i q8_isum16(const uint8_t *q, const int8_t *aq, struct qk_pf pf)
{
	OPAQUE(q);
	OPAQUE(aq);
	const __m512i bias = _mm512_set1_epi8((char)0x80), z = _mm512_setzero_si512();
	__m512i s[4] = { z, z, z, z };
#pragma GCC unroll 8
	for (int j = 0; j < 8; j++) {
		prefetch_line(q + 64 * j, pf);
		s[j & 3] = dpz(s[j & 3], _mm512_xor_si512(ldz(q + 64 * j), bias), aq + 4 * j);
	}
	return add4(s[0], s[1], s[2], s[3]);
}

/* Q2_G: 2 vectors of low bits; byte 4u + i of a row holds elements 4u + i + 8n at bits
 * 2n..2n+1 (n = 0..3). Each 2-bit field is taken in place (mask 3 << 2n: 4^n times the
 * code) into its own sum t_n; S = sum over n of t_n / 4^n, exact (t_n is a multiple of
 * 4^n, and >> is an exact division of one). */
static INL ZMM __m512i low2_isum16(const uint8_t *q, const int8_t *aq, struct qk_pf pf)
{
	OPAQUE(q);
	OPAQUE(aq);
	const __m512i z = _mm512_setzero_si512();
	__m512i t[4] = { z, z, z, z };
#pragma GCC unroll 2
	for (int u = 0; u < 2; u++) {
		prefetch_line(q + 64 * u, pf);
		const __m512i v = ldz(q + 64 * u);
#pragma GCC unroll 4
		for (int n = 0; n < 4; n++)
			t[n] = dpz(t[n], _mm512_and_si512(v, _mm512_set1_epi8((char)(3 << 2 * n))),
				   aq + 8 * n + 4 * u);
	}
	return add4(t[0], _mm512_srai_epi32(t[1], 2), _mm512_srai_epi32(t[2], 4),
		    _mm512_srai_epi32(t[3], 6));
}

/* Q3_G: three vectors A, B, C in r16's own encoding (quant_repack.c q3_r16_codes): slot s
 * holds elements 4s .. 4s + 3 (byte i of a row's unit: element 4s + i). Slots 0-5 are
 * whole 3-bit fields at bits 0-2 (mask 7) and 3-5 (mask 0x38: 8 times the code) of A, B,
 * C; slots 6 and 7 have their low 2 bits at bits 6-7 of A and B (64 times) and their
 * high bit, worth 4, at bit 6 (64 times the bit, so 16 times its worth) and bit 7 (32
 * times) of C. Each weight class sums apart and is divided back exactly (every term of
 * a sum is a multiple of its weight): S = t1 + t8 / 8 + t64 / 64 + t16 / 16 + t32 / 32.
 * 10 ands and 10 vpdpbusd per block of 16 rows. */
static INL ZMM __m512i q3_isum16(const uint8_t *q, const int8_t *aq, struct qk_pf pf)
{
	OPAQUE(q);
	OPAQUE(aq);
	const __m512i m7 = _mm512_set1_epi8(0x07), m38 = _mm512_set1_epi8(0x38);
	const __m512i mc0 = _mm512_set1_epi8((char)0xc0), z = _mm512_setzero_si512();
	prefetch_line(q, pf);
	prefetch_line(q + 64, pf);
	prefetch_line(q + 128, pf);
	const __m512i A = ldz(q), B = ldz(q + 64), C = ldz(q + 128);
	__m512i t1 = dpz(z, _mm512_and_si512(A, m7), aq);
	__m512i t8 = dpz(z, _mm512_and_si512(A, m38), aq + 4);
	t1 = dpz(t1, _mm512_and_si512(B, m7), aq + 8);
	t8 = dpz(t8, _mm512_and_si512(B, m38), aq + 12);
	t1 = dpz(t1, _mm512_and_si512(C, m7), aq + 16);
	t8 = dpz(t8, _mm512_and_si512(C, m38), aq + 20);
	__m512i t64 = dpz(z, _mm512_and_si512(A, mc0), aq + 24);
	t64 = dpz(t64, _mm512_and_si512(B, mc0), aq + 28);
	const __m512i t16 = dpz(z, _mm512_and_si512(C, _mm512_set1_epi8(0x40)), aq + 24);
	const __m512i t32 = dpz(z, _mm512_and_si512(C, _mm512_set1_epi8((char)0x80)), aq + 28);
	return _mm512_add_epi32(add4(t1, _mm512_srai_epi32(t8, 3), _mm512_srai_epi32(t64, 6),
				     _mm512_srai_epi32(t16, 4)),
				_mm512_srai_epi32(t32, 5));
}

enum z32_kind { Z32_Q8_0, Z32_Q4_0, Z32_Q4_1, Z32_Q3_G, Z32_Q2_G };

/* One block bb of 16 rows, its scales at sb and codes at qb:
 * acc += d_w d_a S, cacc += (d or m)_w ds (quant_repack_kern.h) */
#define Z32_BLOCK(sb, qb, bb, acc, cacc, lpf)                                               \
	do {                                                                                \
		const __m512 wd = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(sb))); \
		const __m512 wo = S == 2 ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((sb) + 16))) \
					 : wd;                                              \
		const __m512i is = kind == Z32_Q8_0   ? q8_isum16(qb, a[bb].qs, lpf)        \
				   : kind == Z32_Q3_G ? q3_isum16(qb, a[bb].qs, lpf)        \
				   : kind == Z32_Q2_G ? low2_isum16(qb, a[bb].qs, lpf)      \
						      : nib_isum16(qb, a[bb].qs, lpf);      \
		acc = _mm512_fmadd_ps(_mm512_mul_ps(wd, _mm512_set1_ps(a[bb].d)),           \
				      _mm512_cvtepi32_ps(is), acc);                         \
		cacc = _mm512_fmadd_ps(wo, _mm512_set1_ps(a[bb].ds), cacc);                 \
	} while (0)

/* ns (1, 2, 4 or 8) groups of 16 rows of a 32-block format whose blocks carry P payload
 * bytes, walked side by side: grp[s] -> y[s][0..16). A group is in pairs of blocks (a pair's
 * 2 x 16 S scales, then its 2 x 16 P bytes of codes). Why several groups at once: each is
 * its own forward stream, and streams far apart keep more DRAM requests in flight than
 * one (qr_default_streams, quant_repack.c). */
static INL ZMM void z32_r16n(enum z32_kind kind, int P, int ns, int64_t k,
			     const void *const *grp, const void *xq, float *const *y)
{
	const int S = kind == Z32_Q8_0 || kind == Z32_Q4_0 ? 1 : 2; /* fp16 scales: d (, m) */
	const int64_t nb = k / 32;
	const size_t bb16 = (size_t)16 * (size_t)(2 * S + P); /* one block of the 16 rows */
	const struct qk_pf pf = qk_prefetch_r16(kind == Z32_Q8_0 ? QF_Q8_0 : QF_Q4_0, ns);
	/* How the prefetches are asked for (where qk_prefetch_r16 sets a distance): on 2 and 4
	 * streams one per line as the loop loads it (lpf, as tq2_0_r16s), on 1 and 8 a
	 * pair's lines at once (prefetch_ahead). On the Zen 5 VM (5 Dec 2026, cold 16384^2,
	 * 4:2048 and 8:1024, old and new in alternating processes, five pairs at 1 and 2
	 * threads; first seen as 24 of 24 rounds within one process for Q8_0 and Q4_0), per
	 * line was faster on 4 streams in 30 of 40 pairs (Q4_0 80.5 -> 89.4% of the read at
	 * 1 thread, 85.0 -> 95.3% at 2; Q8_0, Q4_1, Q2_G 1-6 points), on 8 in 12 of 30
	 * (Q3_G 86.7 -> 80.6% at 1 thread). One stream (Intel's default) is not re-measured. */
	const int per_line = ns == 2 || ns == 4;
	const struct qk_pf lpf = per_line ? pf : (struct qk_pf){ 0, 0 };
	const block_qa32 *a = xq;
	const __m512 z = _mm512_setzero_ps();
	/* per stream; acc1, c1 used at ns == 1 only (initialised whole: a loop instead moved
	 * them to the stack in part) */
	__m512 acc0[8] = { z, z, z, z, z, z, z, z }, acc1[8] = { z, z, z, z, z, z, z, z };
	__m512 c0[8] = { z, z, z, z, z, z, z, z }, c1[8] = { z, z, z, z, z, z, z, z };
	int64_t b = 0;
	for (; b + 1 < nb; b += 2) {
#pragma GCC unroll 8
		for (int s = 0; s < ns; s++) {
			const char *pr = (const char *)grp[s] + (size_t)b * bb16;
			if (per_line) { /* the pair's S lines of scales */
				prefetch_line(pr, lpf);
				if (S == 2)
					prefetch_line(pr + 64, lpf);
			} else {
				prefetch_ahead(pr, pf, 2 * (int)bb16);
			}
			const uint16_t *sc = (const uint16_t *)(const void *)pr;
			const uint8_t *q = (const uint8_t *)pr + 64 * S;
			Z32_BLOCK(sc, q, b, acc0[s], c0[s], lpf);
			if (ns == 1) {
				Z32_BLOCK(sc + 16 * S, q + 16 * P, b + 1, acc1[s], c1[s], lpf);
			} else { /* the streams are the independent chains: fewer zmm live */
				Z32_BLOCK(sc + 16 * S, q + 16 * P, b + 1, acc0[s], c0[s], lpf);
			}
		}
	}
#pragma GCC unroll 8
	for (int s = 0; s < ns; s++) {
		if (b < nb) { /* an odd last block: its scales, then its codes */
			const char *pr = (const char *)grp[s] + (size_t)b * bb16;
			Z32_BLOCK((const uint16_t *)(const void *)pr, (const uint8_t *)pr + 32 * S, b,
				  acc0[s], c0[s], ((struct qk_pf){ 0, 0 }));
		}
		/* the offsets: Q8_0's bias of 128 and Q4_0's 8 off the codes, the others' min
		 * added */
		const __m512 acc = _mm512_add_ps(acc0[s], acc1[s]), c = _mm512_add_ps(c0[s], c1[s]);
		_mm512_storeu_ps(y[s], S == 2 ? _mm512_add_ps(acc, c)
				       : _mm512_fnmadd_ps(_mm512_set1_ps(kind == Z32_Q8_0 ? 128.0f : 8.0f),
							  c, acc));
	}
}
#undef Z32_BLOCK

/* One group (qr_group_fn), and two or four side by side (qr_groups_fn), of each format */
#define Z32_KERNELS(name, kind, P)                                                          \
	static ZMM void name##_r16(int64_t k, const void *g, const void *xq, float *y)      \
	{                                                                                   \
		z32_r16n(kind, P, 1, k, &g, xq, &y);                                        \
	}                                                                                   \
	static ZMM void name##_r16x2(int64_t k, const void *const *g, const void *xq,       \
				     float *const *y)                                       \
	{                                                                                   \
		z32_r16n(kind, P, 2, k, g, xq, y);                                          \
	}                                                                                   \
	static ZMM void name##_r16x4(int64_t k, const void *const *g, const void *xq,       \
				     float *const *y)                                       \
	{                                                                                   \
		z32_r16n(kind, P, 4, k, g, xq, y);                                          \
	}
/* eight side by side: not for Q8_0, whose kernel on 8 spills (qr_max_streams) */
#define Z32_KERNEL8(name, kind, P)                                                          \
	static ZMM void name##_r16x8(int64_t k, const void *const *g, const void *xq,       \
				     float *const *y)                                       \
	{                                                                                   \
		z32_r16n(kind, P, 8, k, g, xq, y);                                          \
	}
Z32_KERNELS(q8_0, Z32_Q8_0, 32)
Z32_KERNELS(q4_0, Z32_Q4_0, 16)
Z32_KERNELS(q4_1, Z32_Q4_1, 16)
Z32_KERNELS(q3_g, Z32_Q3_G, 12)
Z32_KERNELS(q2_g, Z32_Q2_G, 8)
Z32_KERNEL8(q4_0, Z32_Q4_0, 16)
Z32_KERNEL8(q4_1, Z32_Q4_1, 16)
Z32_KERNEL8(q3_g, Z32_Q3_G, 12)
Z32_KERNEL8(q2_g, Z32_Q2_G, 8)
#undef Z32_KERNELS
#undef Z32_KERNEL8

/* ---- TQ2_0 (TQ1_0 packed as TQ2_0) ----
 * 16 vectors per block; unit j = bytes 4j..4j+3 of plane h = j / 8, and code n of byte
 * 4(j % 8) + i multiplies element 128h + 32n + 4(j % 8) + i. The four 2-bit codes of a
 * byte are taken in place with the masks 0x03, 0x0c, 0x30, 0xc0 (t, 4t, 16t, 64t). */

/* 64 sum(t a) from the four masks' sums (field n's sum is 4^n times its codes' one) */
static INL ZMM __m512i tq2_weigh(__m512i t0, __m512i t1, __m512i t2, __m512i t3)
{
	return add4(_mm512_slli_epi32(t0, 6), _mm512_slli_epi32(t1, 4), _mm512_slli_epi32(t2, 2), t3);
}

/* One block's 16 vectors unrolled into 8 independent sums (each mask's split by the
 * vector's parity). Returns 64 sum(t a) per row, exact (|64 t a| <= 192 * 128 per
 * product, 256 products: < 2^23). */
static INL ZMM __m512i tq2_isum16(const uint8_t *q, const int8_t *aq)
{
	OPAQUE(q);
	OPAQUE(aq);
	const __m512i z = _mm512_setzero_si512();
	__m512i s[8] = { z, z, z, z, z, z, z, z };
#pragma GCC unroll 16
	for (int j = 0; j < 16; j++) {
		const __m512i x = ldz(q + 64 * j);
		const int8_t *ab = aq + 128 * (j / 8) + 4 * (j % 8);
		const int p = j & 1;
		s[0 + p] = dpz(s[0 + p], _mm512_and_si512(x, _mm512_set1_epi8(0x03)), ab);
		s[2 + p] = dpz(s[2 + p], _mm512_and_si512(x, _mm512_set1_epi8(0x0c)), ab + 32);
		s[4 + p] = dpz(s[4 + p], _mm512_and_si512(x, _mm512_set1_epi8(0x30)), ab + 64);
		s[6 + p] = dpz(s[6 + p], _mm512_and_si512(x, _mm512_set1_epi8((char)0xc0)), ab + 96);
	}
	const __m512i t0 = _mm512_add_epi32(s[0], s[1]), t1 = _mm512_add_epi32(s[2], s[3]);
	const __m512i t2 = _mm512_add_epi32(s[4], s[5]), t3 = _mm512_add_epi32(s[6], s[7]);
	return tq2_weigh(t0, t1, t2, t3);
}

/* One TQ2_0 block of 16 rows, its fp16 scales at sb, s64 = 64 sum(t a) of its codes
 * against activation block ab: acc + d_w d_a sum((t - 1) a), with sum((t - 1) a) =
 * sum(t a) - s (s the activation block's exact sum), all times 64 */
static INL ZMM __m512 tq2_acc(__m512 acc, const void *sb, __m512i s64, const block_qa256 *ab)
{
	const __m512 wd = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)sb));
	const __m512i is = _mm512_sub_epi32(s64, _mm512_set1_epi32(ab->s * 64));
	return _mm512_fmadd_ps(_mm512_mul_ps(wd, _mm512_set1_ps(ab->d / 64)),
			       _mm512_cvtepi32_ps(is), acc);
}

/* One group of 16 rows, in pairs of blocks: 2 x 32 bytes of scales, then 2 x 1024 of codes
 * (the 16 code vectors of a block unrolled: one stream, fed by a software prefetch) */
static ZMM void tq2_0_r16(int64_t k, const void *g, const void *xq, float *y)
{
	const int64_t nb = k / QK_TQ;
	const size_t bb16 = 16 * sizeof(block_tq2_0); /* one block of the 16 rows */
	const struct qk_pf pf = qk_prefetch_r16(QF_TQ2_0, 1);
	const block_qa256 *a = xq;
	__m512 acc0 = _mm512_setzero_ps(), acc1 = acc0;
	int64_t b = 0;
	for (; b + 1 < nb; b += 2) {
		const char *pr = (const char *)g + (size_t)b * bb16;
		prefetch_ahead(pr, pf, 2 * (int)bb16);
		const uint16_t *sc = (const uint16_t *)(const void *)pr;
		const uint8_t *q = (const uint8_t *)pr + 64;
		acc0 = tq2_acc(acc0, sc, tq2_isum16(q, a[b].qs), &a[b]);
		acc1 = tq2_acc(acc1, sc + 16, tq2_isum16(q + 1024, a[b + 1].qs), &a[b + 1]);
	}
	if (b < nb) { /* an odd last block */
		const char *pr = (const char *)g + (size_t)b * bb16;
		acc0 = tq2_acc(acc0, pr, tq2_isum16((const uint8_t *)pr + 32, a[b].qs), &a[b]);
	}
	_mm512_storeu_ps(y, _mm512_add_ps(acc0, acc1));
}

/* ns (2 or 4) groups of 16 rows side by side, one code vector of each group per step of a
 * loop over a block's 16 (4 sums per group: the masks of tq2_isum16 without its split by
 * parity, each sum's chain fed by ns groups); the layout as tq2_0_r16's. A prefetch, where
 * set, asks for one line per line loaded (prefetch_line): on the Zen 5 VM (5 Dec 2026,
 * cold 16384^2, settings timed in turn within one process, seven rounds at 1 thread and
 * eight at 2) 4 streams with 2 KiB ahead so reached 71-113% / 88-118% of the best read,
 * against 69-107% / 74-94% on 2 streams without and 55-85% / 52-87% on one with 8 KiB,
 * where a prefetch asking for a pair of blocks (33 lines) at once had cost 2 or 4 streams
 * up to half their rate (quant_repack.c qr_default_prefetch).
 * Why a loop, where every other kernel here unrolls: on the Zen 5 VM, cold 16384^2 at one
 * thread, the same arithmetic over the same bytes (a driver outside the tree, every
 * variant timed in turn within one process, 5 Dec 2026) ran at 100-111% of the best read
 * loop on 2 streams and 89-99% on 4 as this loop without software prefetch (five runs),
 * against 41-46% for the unrolled body (a pair of blocks per step, as tq2_0_r16) without
 * prefetch and 69-84% with 8 KiB ahead (the multi-stream kernels before were that body
 * per stream). Hot (8 groups in L2) they ran alike (94-97 GB/s). Our reading, without
 * counters to show it: the hardware prefetchers follow a load that walks 64 bytes per
 * step, not 32 loads that each jump 2112 bytes per step (tests/perf/README.md). */
static INL ZMM void tq2_0_r16s(int ns, int64_t k, const void *const *grp, const void *xq,
			       float *const *y)
{
	const int64_t nb = k / QK_TQ;
	const size_t bb16 = 16 * sizeof(block_tq2_0);
	const struct qk_pf pf = qk_prefetch_r16(QF_TQ2_0, ns);
	const block_qa256 *a = xq;
	const __m512i m0 = _mm512_set1_epi8(0x03), m1 = _mm512_set1_epi8(0x0c);
	const __m512i m2 = _mm512_set1_epi8(0x30), m3 = _mm512_set1_epi8((char)0xc0);
	const __m512 zf = _mm512_setzero_ps();
	__m512 acc[4] = { zf, zf, zf, zf };
	for (int64_t b = 0; b < nb; b++) {
		/* block b: in the pair from b & ~1, scales at 32 (b & 1) and codes at
		 * 64 + 1024 (b & 1); an odd last block alone: scales at 0, codes at 32 */
		const size_t base = (size_t)(b & ~(int64_t)1) * bb16;
		const int alone = (nb & 1) && b == nb - 1;
		const size_t so = alone ? 0 : 32 * (size_t)(b & 1);
		const size_t qo = alone ? 32 : 64 + 1024 * (size_t)(b & 1);
		const __m512i z = _mm512_setzero_si512();
		__m512i s[4][4];
		const uint8_t *q[4];
#pragma GCC unroll 4
		for (int t = 0; t < ns; t++) {
			s[t][0] = s[t][1] = s[t][2] = s[t][3] = z;
			q[t] = (const uint8_t *)grp[t] + base + qo;
		}
		const int8_t *aq = a[b].qs;
#pragma GCC unroll 1
		for (int j = 0; j < 16; j++) {
			const int8_t *ab = aq + 128 * (j >> 3) + 4 * (j & 7);
#pragma GCC unroll 4
			for (int t = 0; t < ns; t++) {
				prefetch_line(q[t] + 64 * j, pf);
				const __m512i x = ldz(q[t] + 64 * j);
				s[t][0] = dpz(s[t][0], _mm512_and_si512(x, m0), ab);
				s[t][1] = dpz(s[t][1], _mm512_and_si512(x, m1), ab + 32);
				s[t][2] = dpz(s[t][2], _mm512_and_si512(x, m2), ab + 64);
				s[t][3] = dpz(s[t][3], _mm512_and_si512(x, m3), ab + 96);
			}
		}
#pragma GCC unroll 4
		for (int t = 0; t < ns; t++)
			acc[t] = tq2_acc(acc[t], (const char *)grp[t] + base + so,
					 tq2_weigh(s[t][0], s[t][1], s[t][2], s[t][3]), &a[b]);
	}
#pragma GCC unroll 4
	for (int t = 0; t < ns; t++)
		_mm512_storeu_ps(y[t], acc[t]);
}

static ZMM void tq2_0_r16x2(int64_t k, const void *const *g, const void *xq, float *const *y)
{
	tq2_0_r16s(2, k, g, xq, y);
}

static ZMM void tq2_0_r16x4(int64_t k, const void *const *g, const void *xq, float *const *y)
{
	tq2_0_r16s(4, k, g, xq, y);
}

qr_group_fn qr_zmm_kernel(enum qformat_type type)
{
	switch (type) {
	case QF_Q8_0:
		return q8_0_r16;
	case QF_Q4_0:
		return q4_0_r16;
	case QF_Q4_1:
		return q4_1_r16;
	case QF_Q3_G:
		return q3_g_r16;
	case QF_Q2_G:
		return q2_g_r16;
	case QF_TQ2_0:
		return tq2_0_r16;
	default:
		return NULL;
	}
}

qr_groups_fn qr_zmm_kernels(enum qformat_type type, int ns)
{
#define PICK(name)                                                                          \
	return ns == 2 ? name##_r16x2 : ns == 4 ? name##_r16x4 : ns == 8 ? name##_r16x8 : NULL
	switch (type) {
	case QF_Q8_0:
		return ns == 2 ? q8_0_r16x2 : ns == 4 ? q8_0_r16x4 : NULL;
	case QF_Q4_0:
		PICK(q4_0);
	case QF_Q4_1:
		PICK(q4_1);
	case QF_Q3_G:
		PICK(q3_g);
	case QF_Q2_G:
		PICK(q2_g);
	case QF_TQ2_0:
		return ns == 2 ? tq2_0_r16x2 : ns == 4 ? tq2_0_r16x4 : NULL;
	default:
		return NULL;
	}
#undef PICK
}

/* ---- GEMM: one group of 16 rows times 4 activation rows (qgemm_r8) ----
 * The GEMV kernels' decodes, each decoded vector of codes fed to 4 vpdpbusd (one per
 * activation row) instead of one, so that the loads and the ands, shifts and xors of a
 * decode are shared by 4 rows and vpdpbusd is what is left. Fields narrower than a byte
 * are shifted down and masked (one vector of codes 0 .. 2^b - 1 per field) rather than
 * masked in place as in the GEMV: in place, every field weight needs its own sum per row,
 * which for 4 rows is more zmm than there are. Two sums per row (even and odd vectors)
 * keep 8 vpdpbusd chains in flight (three, 12 chains, ran 11-43% slower on the Zen 5 VM,
 * Q8_0/Q4_0/Q3_G/TQ2_0 4096^2 at n = 8 and 32, alternated twice, 5 Dec 2026). Every loop
 * over the rows is unrolled by pragma: without it GCC kept the sums in memory and the
 * kernels ran 3.5-4x slower. Sums are exact in int32 as in the GEMV. */

/* s[t][p] += u times the 4 activations of row t at byte o of its block's qs */
#define DOT_ROWS(s, u, qs, o, p)                                                            \
	do {                                                                                \
		_Pragma("GCC unroll 4") for (int t_ = 0; t_ < QR_ROWS; t_++)                \
			s[t_][p] = dpz(s[t_][p], u, (qs)[t_] + (o));                        \
	} while (0)

/* b-bit field at bit `sh` of every byte of v, as bytes 0 .. 2^b - 1 */
static INL ZMM __m512i field(__m512i v, int sh, int bits)
{
	return _mm512_and_si512(sh ? _mm512_srli_epi16(v, sh) : v,
				_mm512_set1_epi8((char)((1 << bits) - 1)));
}

/* is[t] = S of activation row t for one block of 16 rows of a 32-block format (codes at
 * q; Q8_0's with its bias of 128 as in q8_isum16) */
static INL ZMM void z32_isum_rows(enum z32_kind kind, const uint8_t *q, const int8_t *const *qs,
				  __m512i *is)
{
	OPAQUE(q);
	const __m512i z = _mm512_setzero_si512();
	__m512i s[QR_ROWS][2];
#pragma GCC unroll 4
	for (int t = 0; t < QR_ROWS; t++)
		s[t][0] = s[t][1] = z;
	if (kind == Z32_Q8_0) {
		const __m512i bias = _mm512_set1_epi8((char)0x80);
#pragma GCC unroll 8
		for (int j = 0; j < 8; j++)
			DOT_ROWS(s, _mm512_xor_si512(ldz(q + 64 * j), bias), qs, 4 * j, j & 1);
	} else if (kind == Z32_Q4_0 || kind == Z32_Q4_1) {
#pragma GCC unroll 4
		for (int j = 0; j < 4; j++) { /* low nibble: element 4j + i, high: + 16 */
			const __m512i v = ldz(q + 64 * j);
			DOT_ROWS(s, field(v, 0, 4), qs, 4 * j, 0);
			DOT_ROWS(s, field(v, 4, 4), qs, 16 + 4 * j, 1);
		}
	} else if (kind == Z32_Q2_G) {
#pragma GCC unroll 2
		for (int u = 0; u < 2; u++) {
			const __m512i v = ldz(q + 64 * u);
#pragma GCC unroll 4
			for (int n = 0; n < 4; n++)
				DOT_ROWS(s, field(v, 2 * n, 2), qs, 8 * n + 4 * u, n & 1);
		}
	} else { /* Q3_G, r16's encoding (q3_isum16): slots 0-5 whole, 6 and 7 split */
		const __m512i A = ldz(q), B = ldz(q + 64), C = ldz(q + 128);
		DOT_ROWS(s, field(A, 0, 3), qs, 0, 0);
		DOT_ROWS(s, field(A, 3, 3), qs, 4, 1);
		DOT_ROWS(s, field(B, 0, 3), qs, 8, 0);
		DOT_ROWS(s, field(B, 3, 3), qs, 12, 1);
		DOT_ROWS(s, field(C, 0, 3), qs, 16, 0);
		DOT_ROWS(s, field(C, 3, 3), qs, 20, 1);
		/* slot 6: low bits at 6-7 of A, high bit (worth 4) at bit 6 of C; slot 7: B, bit 7 */
		const __m512i four = _mm512_set1_epi8(4);
		DOT_ROWS(s, _mm512_or_si512(field(A, 6, 2), _mm512_and_si512(_mm512_srli_epi16(C, 4), four)),
			 qs, 24, 0);
		DOT_ROWS(s, _mm512_or_si512(field(B, 6, 2), _mm512_and_si512(_mm512_srli_epi16(C, 5), four)),
			 qs, 28, 1);
	}
#pragma GCC unroll 4
	for (int t = 0; t < QR_ROWS; t++)
		is[t] = _mm512_add_epi32(s[t][0], s[t][1]);
}

/* One block bb of the 16 rows (scales at sb, codes at qb) times the 4 rows' blocks bb */
#define Z32_BLOCK_ROWS(sb, qb, bb)                                                          \
	do {                                                                                \
		const __m512 wd = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(sb))); \
		const __m512 wo = S == 2 ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((sb) + 16))) \
					 : wd;                                              \
		const int8_t *qs[QR_ROWS];                                                  \
		__m512i is[QR_ROWS];                                                        \
		_Pragma("GCC unroll 4") for (int t = 0; t < QR_ROWS; t++)                   \
			qs[t] = a[t][bb].qs;                                                \
		z32_isum_rows(kind, qb, qs, is);                                            \
		_Pragma("GCC unroll 4") for (int t = 0; t < QR_ROWS; t++) {                 \
			acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(wd, _mm512_set1_ps(a[t][bb].d)), \
						 _mm512_cvtepi32_ps(is[t]), acc[t]);        \
			c[t] = _mm512_fmadd_ps(wo, _mm512_set1_ps(a[t][bb].ds), c[t]);      \
		}                                                                           \
	} while (0)

/* y[t][0..16) = the group of 16 rows at grp times activation row xq[t], t < 4 (layout as
 * z32_r16n: pairs of blocks, each pair's scales then its codes) */
static INL ZMM void z32_r16_rows(enum z32_kind kind, int P, int64_t k, const void *grp,
				 const void *const *xq, float *const *y)
{
	const int S = kind == Z32_Q8_0 || kind == Z32_Q4_0 ? 1 : 2;
	const int64_t nb = k / 32;
	const size_t bb16 = (size_t)16 * (size_t)(2 * S + P);
	const block_qa32 *a[QR_ROWS];
	__m512 acc[QR_ROWS], c[QR_ROWS];
#pragma GCC unroll 4
	for (int t = 0; t < QR_ROWS; t++) {
		a[t] = xq[t];
		acc[t] = c[t] = _mm512_setzero_ps();
	}
	int64_t b = 0;
	for (; b + 1 < nb; b += 2) {
		const char *pr = (const char *)grp + (size_t)b * bb16;
		const uint16_t *sc = (const uint16_t *)(const void *)pr;
		const uint8_t *q = (const uint8_t *)pr + 64 * S;
		Z32_BLOCK_ROWS(sc, q, b);
		Z32_BLOCK_ROWS(sc + 16 * S, q + 16 * P, b + 1);
	}
	if (b < nb) { /* an odd last block: its scales, then its codes */
		const char *pr = (const char *)grp + (size_t)b * bb16;
		Z32_BLOCK_ROWS((const uint16_t *)(const void *)pr, (const uint8_t *)pr + 32 * S, b);
	}
#pragma GCC unroll 4
	for (int t = 0; t < QR_ROWS; t++)
		_mm512_storeu_ps(y[t], S == 2 ? _mm512_add_ps(acc[t], c[t])
					      : _mm512_fnmadd_ps(_mm512_set1_ps(kind == Z32_Q8_0 ? 128.0f
												: 8.0f),
								 c[t], acc[t]));
}
#undef Z32_BLOCK_ROWS

/* TQ2_0: is[t] = sum(c a) of row t over one block (codes c = t + 1 in 0 .. 2; the
 * activation block's sum is taken off by the caller). Vector j, field n multiplies
 * elements 128 (j / 8) + 32 n + 4 (j % 8) + i (tq2_isum16). */
static INL ZMM void tq2_isum_rows(const uint8_t *q, const int8_t *const *qs, __m512i *is)
{
	OPAQUE(q);
	const __m512i z = _mm512_setzero_si512();
	__m512i s[QR_ROWS][2];
#pragma GCC unroll 4
	for (int t = 0; t < QR_ROWS; t++)
		s[t][0] = s[t][1] = z;
#pragma GCC unroll 16
	for (int j = 0; j < 16; j++) {
		const __m512i x = ldz(q + 64 * j);
		const int o = 128 * (j / 8) + 4 * (j % 8);
#pragma GCC unroll 4
		for (int n = 0; n < 4; n++)
			DOT_ROWS(s, field(x, 2 * n, 2), qs, o + 32 * n, n & 1);
	}
#pragma GCC unroll 4
	for (int t = 0; t < QR_ROWS; t++)
		is[t] = _mm512_add_epi32(s[t][0], s[t][1]);
}

#define TQ2_BLOCK_ROWS(sb, qb, bb)                                                          \
	do {                                                                                \
		const __m512 wd = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(sb))); \
		const int8_t *qs[QR_ROWS];                                                  \
		__m512i is[QR_ROWS];                                                        \
		_Pragma("GCC unroll 4") for (int t = 0; t < QR_ROWS; t++)                   \
			qs[t] = a[t][bb].qs;                                                \
		tq2_isum_rows(qb, qs, is);                                                  \
		_Pragma("GCC unroll 4") for (int t = 0; t < QR_ROWS; t++)                   \
			acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(wd, _mm512_set1_ps(a[t][bb].d)), \
						 _mm512_cvtepi32_ps(_mm512_sub_epi32(      \
							 is[t], _mm512_set1_epi32(a[t][bb].s))), \
						 acc[t]);                                   \
	} while (0)

static ZMM void tq2_0_r16_rows(int64_t k, const void *grp, const void *const *xq,
			       float *const *y)
{
	const int64_t nb = k / QK_TQ;
	const size_t bb16 = 16 * sizeof(block_tq2_0);
	const block_qa256 *a[QR_ROWS];
	__m512 acc[QR_ROWS];
#pragma GCC unroll 4
	for (int t = 0; t < QR_ROWS; t++) {
		a[t] = xq[t];
		acc[t] = _mm512_setzero_ps();
	}
	int64_t b = 0;
	for (; b + 1 < nb; b += 2) {
		const char *pr = (const char *)grp + (size_t)b * bb16;
		const uint16_t *sc = (const uint16_t *)(const void *)pr;
		const uint8_t *q = (const uint8_t *)pr + 64;
		TQ2_BLOCK_ROWS(sc, q, b);
		TQ2_BLOCK_ROWS(sc + 16, q + 1024, b + 1);
	}
	if (b < nb) {
		const char *pr = (const char *)grp + (size_t)b * bb16;
		TQ2_BLOCK_ROWS((const uint16_t *)(const void *)pr, (const uint8_t *)pr + 32, b);
	}
#pragma GCC unroll 4
	for (int t = 0; t < QR_ROWS; t++)
		_mm512_storeu_ps(y[t], acc[t]);
}
#undef TQ2_BLOCK_ROWS
#undef DOT_ROWS

#define Z32_ROWS_KERNEL(name, kind, P)                                                      \
	static ZMM void name##_r16_rows(int64_t k, const void *g, const void *const *xq,    \
					float *const *y)                                    \
	{                                                                                   \
		z32_r16_rows(kind, P, k, g, xq, y);                                         \
	}
Z32_ROWS_KERNEL(q8_0, Z32_Q8_0, 32)
Z32_ROWS_KERNEL(q4_0, Z32_Q4_0, 16)
Z32_ROWS_KERNEL(q4_1, Z32_Q4_1, 16)
Z32_ROWS_KERNEL(q3_g, Z32_Q3_G, 12)
Z32_ROWS_KERNEL(q2_g, Z32_Q2_G, 8)
#undef Z32_ROWS_KERNEL

qr_rows_fn qr_zmm_rows_kernel(enum qformat_type type)
{
	switch (type) {
	case QF_Q8_0:
		return q8_0_r16_rows;
	case QF_Q4_0:
		return q4_0_r16_rows;
	case QF_Q4_1:
		return q4_1_r16_rows;
	case QF_Q3_G:
		return q3_g_r16_rows;
	case QF_Q2_G:
		return q2_g_r16_rows;
	case QF_TQ2_0:
		return tq2_0_r16_rows;
	default:
		return NULL;
	}
}
