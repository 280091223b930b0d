/* quant_repack_avx2: AVX2 (+FMA, F16C) GEMV and GEMM kernels on the r8 layout
 * (quant_repack.h): one GEMV call computes the 8 outputs of one group of 8 interleaved rows,
 * one GEMM call those of 4 activation rows. Each has a plain-C twin (qgemv_r8_ref,
 * qgemm_r8_ref in quant_repack.c), which gives qgemv_ref's results; the integer block
 * sums here are exact, only the fp32 accumulation order differs.
 *
 * Register picture for 32 weights x 8 rows: vector j of a block holds bytes 4j..4j+3 of
 * every row's codes, row r in 32-bit lane r; the activations those bytes multiply are the
 * same for all rows, so they are one 4-byte broadcast load (vpbroadcastd m32: a load-port
 * uop on Intel and AMD, no shuffle port). maddubs(codes, act) then leaves row r's products
 * in lane r's two int16 halves; a block's int16 partial sums are added up before one
 * madd(., 1) to int32, which gives [S_0 .. S_7] in lane order, and the block's fp16 scales of
 * the 8 rows are one 16-byte load and one vcvtph2ps: no per-row horizontal work at all.
 * The kernel bodies are in quant_repack_kern.h, instantiated here for AVX2 and AVX-VNNI. */
#include <immintrin.h>
#include <string.h>

#include "quant_impl.h"
#include "quant_repack_impl.h"

#define AVX2 __attribute__((target("avx2,fma,f16c")))
#define VNNI __attribute__((target("avx2,fma,f16c,avxvnni")))

/* Software prefetch: qk_prefetch bytes of the code stream ahead (quant_avx2.c says why
 * and what was measured); one prefetch per 64-byte line of codes, one per line of scales. */

static inline AVX2 __m256i ld(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }

static inline AVX2 __m256i bcast4(const int8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return _mm256_set1_epi32(v);
}

enum b32_kind { B32_Q8_0, B32_Q4_0, B32_Q4_1, B32_Q3_G, B32_Q2_G };

#define QRK(name) name##_avx2
#define QRK_ATTR AVX2
#define QRK_DOT(s, u, a) _mm256_add_epi16((s), _mm256_maddubs_epi16((u), (a)))
#define QRK_DOT32(s, u, a) \
	_mm256_add_epi32((s), _mm256_madd_epi16(_mm256_maddubs_epi16((u), (a)), _mm256_set1_epi16(1)))
#define QRK_SUM4(a, b, c, d)                                                               \
	_mm256_madd_epi16(_mm256_add_epi16(_mm256_add_epi16((a), (b)), _mm256_add_epi16((c), (d))), \
			  _mm256_set1_epi16(1))
#include "quant_repack_kern.h"
#undef QRK
#undef QRK_ATTR
#undef QRK_DOT
#undef QRK_SUM4
#undef QRK_DOT32

#define QRK(name) name##_vnni
#define QRK_VNNI 1
#define QRK_DOTB(s, u, p) QRK_DOT(s, u, bcast4(p))
#define QRK_ATTR VNNI
#define QRK_DOT(s, u, a) _mm256_dpbusd_avx_epi32((s), (u), (a))
#define QRK_DOT32(s, u, a) _mm256_dpbusd_avx_epi32((s), (u), (a))
#define QRK_SUM4(a, b, c, d) _mm256_add_epi32(_mm256_add_epi32((a), (b)), _mm256_add_epi32((c), (d)))
#include "quant_repack_kern.h"
#undef QRK
#undef QRK_ATTR
#undef QRK_DOT
#undef QRK_SUM4
#undef QRK_DOT32

/* s + the products of u and the 4 bytes at p broadcast: EVEX vpdpbusd with its memory
 * operand broadcast {1to8}, one fused uop where the VEX form needs a separate broadcast
 * load (gcc does not fold the broadcast by itself) */
static inline __attribute__((target("avx2,avx512vl,avx512vnni"), always_inline)) __m256i
dpbusd_bcast(__m256i s, __m256i u, const int8_t *p)
{
	__asm__("vpdpbusd %2%{1to8%}, %1, %0" : "+v"(s) : "v"(u), "m"(*(const int32_t *)(const void *)p));
	return s;
}

/* AVX-512 VNNI CPUs without AVX-VNNI (Ice Lake / Cascade Lake servers, AMD Zen 4): the
 * EVEX form of vpdpbusd on ymm (AVX512VL), the same code and results as the AVX-VNNI one */
#define QRK(name) name##_vnni512
#define QRK_ATTR __attribute__((target("avx2,fma,f16c,avx512vl,avx512vnni")))
#define QRK_DOT(s, u, a) _mm256_dpbusd_epi32((s), (u), (a))
#define QRK_DOT32(s, u, a) _mm256_dpbusd_epi32((s), (u), (a))
#define QRK_SUM4(a, b, c, d) _mm256_add_epi32(_mm256_add_epi32((a), (b)), _mm256_add_epi32((c), (d)))
#undef QRK_DOTB
#define QRK_DOTB(s, u, p) dpbusd_bcast((s), (u), (p))
#include "quant_repack_kern.h"

#define PICK(name) (isa == QR_AVX512VNNI ? name##_vnni512 : isa == QR_AVXVNNI ? name##_vnni : name##_avx2)
/* format type -> its kernel <format><suffix> for isa, or NULL */
#define PICK_FORMAT(suffix)                                                                 \
	switch (type) {                                                                     \
	case QF_Q8_0:                                                                       \
		return PICK(q8_0##suffix);                                                  \
	case QF_Q4_0:                                                                       \
		return PICK(q4_0##suffix);                                                  \
	case QF_Q4_1:                                                                       \
		return PICK(q4_1##suffix);                                                  \
	case QF_Q3_G:                                                                       \
		return PICK(q3_g##suffix);                                                  \
	case QF_Q2_G:                                                                       \
		return PICK(q2_g##suffix);                                                  \
	case QF_TQ2_0:                                                                      \
		return PICK(tq2_0##suffix);                                                 \
	default:                                                                            \
		return NULL;                                                                \
	}

qr_group_fn qr_avx2_kernel(enum qformat_type type, enum qr_isa isa)
{
	PICK_FORMAT(_r8)
}

qr_rows_fn qr_avx2_rows_kernel(enum qformat_type type, enum qr_isa isa)
{
	PICK_FORMAT(_r8_rows)
}
