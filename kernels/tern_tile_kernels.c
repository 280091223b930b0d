/* tern_tile_kernels: the four register-tile kernels of the blocked int8 GEMM (layouts and
 * arithmetic in tern_tile.h). Each: MR x NR int32 accumulators over one 256-block of k, then
 * the epilogue in registers (bias corrections, int32 -> fp32, x row scale, store or add). */
#include <immintrin.h>
#include <string.h>

#include "tern_tile.h"

#define AVX2 __attribute__((target("avx2,fma")))
#define AVXVNNI __attribute__((target("avx2,fma,avxvnni")))
#define VNNI512 __attribute__((target("avx512f,avx512bw,avx512vnni")))

/* 4 bytes of row p at step s, as an int32 to broadcast (rows are byte-addressed). */
static inline int32_t bytes4(const uint8_t *p, int s)
{
	int32_t v;
	memcpy(&v, p + 4 * (size_t)s, 4);
	return v;
}

/* ---- AVX-512 VNNI: 8 rows x 2 zmm (32 columns), 16 accumulators, 2 weight loads and 8
 * broadcasts per 16 vpdpbusd (64 u8 x s8 products each, exact int32 sums) ---- */

static inline VNNI512 __attribute__((always_inline)) void
store512(const struct tg_tile *t, int r, int z, __m512i acc)
{
	int c0 = 16 * z;
	if (r >= t->rows || c0 >= t->cols)
		return;
	__mmask16 mk = t->cols - c0 >= 16 ? 0xffff : (__mmask16)((1u << (t->cols - c0)) - 1);
	__m512i v = _mm512_sub_epi32(acc, _mm512_set1_epi32(t->rc[r]));
	if (t->cc)
		v = _mm512_sub_epi32(v, _mm512_loadu_si512((const void *)(t->cc + c0)));
	float *yr = t->y + (size_t)r * t->ldy + c0;
	__m512 f = _mm512_mul_ps(_mm512_set1_ps(t->s[r]), _mm512_cvtepi32_ps(v));
	if (!t->first)
		f = _mm512_add_ps(_mm512_maskz_loadu_ps(mk, yr), f);
	_mm512_mask_storeu_ps(yr, mk, f);
}

/* MR rows x NZ zmm; the loops are unrolled so the accumulators live in registers */
#define TG_VNNI512_KERNEL(fn, MR, NZ)                                                      \
	static VNNI512 void fn(const struct tg_tile *t)                                    \
	{                                                                                  \
		const uint8_t *a[MR], *b = t->b;                                           \
		__m512i acc[MR][NZ], w[NZ];                                                \
		_Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)                       \
		{                                                                          \
			a[r] = t->a[r];                                                    \
			_Pragma("GCC unroll 4") for (int z = 0; z < NZ; z++)               \
				acc[r][z] = _mm512_setzero_si512();                        \
		}                                                                          \
		_Pragma("GCC unroll 2") for (int s = 0; s < t->steps; s++, b += 64 * NZ) { \
			_Pragma("GCC unroll 4") for (int z = 0; z < NZ; z++)               \
				w[z] = _mm512_load_si512((const void *)(b + 64 * z));     \
			_Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)               \
			{                                                                  \
				__m512i x = _mm512_set1_epi32(bytes4(a[r], s));            \
				_Pragma("GCC unroll 4") for (int z = 0; z < NZ; z++)       \
					acc[r][z] = _mm512_dpbusd_epi32(acc[r][z], w[z], x); \
			}                                                                  \
		}                                                                          \
		_Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)                       \
			_Pragma("GCC unroll 4") for (int z = 0; z < NZ; z++)               \
				store512(t, r, z, acc[r][z]);                              \
	}

#ifndef TG_V5_MR
#define TG_V5_MR 6
#define TG_V5_NZ 4
#endif
TG_VNNI512_KERNEL(run_vnni512, TG_V5_MR, TG_V5_NZ)

const struct tg_tile_kernel tg_tk_vnni512 = {"avx512vnni", TG_V5_MR, 16 * TG_V5_NZ, TG_A_S8,
					     TG_W_U8, run_vnni512};

/* ---- 256-bit kernels: 8 columns per ymm, 2 ymm per row ---- */

static inline AVX2 __attribute__((always_inline)) void store256(const struct tg_tile *t, int r,
								 int z, __m256i acc)
{
	int c0 = 8 * z;
	if (r >= t->rows || c0 >= t->cols)
		return;
	__m256i mk = _mm256_cmpgt_epi32(_mm256_set1_epi32(t->cols - c0),
					_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
	__m256i v = _mm256_sub_epi32(acc, _mm256_set1_epi32(t->rc[r]));
	if (t->cc)
		v = _mm256_sub_epi32(v, _mm256_loadu_si256((const __m256i *)(t->cc + c0)));
	float *yr = t->y + (size_t)r * t->ldy + c0;
	__m256 f = _mm256_mul_ps(_mm256_set1_ps(t->s[r]), _mm256_cvtepi32_ps(v));
	if (!t->first)
		f = _mm256_add_ps(_mm256_maskload_ps(yr, mk), f);
	_mm256_maskstore_ps(yr, mk, f);
}

/* MR rows x 2 ymm (16 columns); MAC(acc, w, x) is the ISA's multiply-accumulate of 4
 * packed bytes per column (w) by the row's broadcast 4 bytes (x). */
#define TG_YMM_KERNEL(fn, ATTR, MR, MAC)                                                   \
	static ATTR void fn(const struct tg_tile *t)                                       \
	{                                                                                  \
		const uint8_t *a[MR], *b = t->b;                                           \
		__m256i acc[MR][2];                                                        \
		_Pragma("GCC unroll 6") for (int r = 0; r < MR; r++)                       \
		{                                                                          \
			a[r] = t->a[r];                                                    \
			acc[r][0] = acc[r][1] = _mm256_setzero_si256();                    \
		}                                                                          \
		for (int s = 0; s < t->steps; s++, b += 64) {                              \
			__m256i w0 = _mm256_load_si256((const __m256i *)b);                \
			__m256i w1 = _mm256_load_si256((const __m256i *)(b + 32));         \
			_Pragma("GCC unroll 6") for (int r = 0; r < MR; r++)               \
			{                                                                  \
				__m256i x = _mm256_set1_epi32(bytes4(a[r], s));            \
				acc[r][0] = MAC(acc[r][0], w0, x);                         \
				acc[r][1] = MAC(acc[r][1], w1, x);                         \
			}                                                                  \
		}                                                                          \
		_Pragma("GCC unroll 6") for (int r = 0; r < MR; r++)                       \
		{                                                                          \
			store256(t, r, 0, acc[r][0]);                                      \
			store256(t, r, 1, acc[r][1]);                                      \
		}                                                                          \
	}

/* AVX-VNNI (VEX vpdpbusd ymm, e.g. Alder Lake without AVX-512): u8 w+128 x s8 x, 6 rows
 * (12 accumulators + 2 weights + 1 broadcast of the 16 ymm registers). */
#define TG_MAC_AVXVNNI(acc, w, x) _mm256_dpbusd_avx_epi32(acc, w, x)
TG_YMM_KERNEL(run_avxvnni, AVXVNNI, 6, TG_MAC_AVXVNNI)
const struct tg_tile_kernel tg_tk_avxvnni = {"avxvnni", 6, 16, TG_A_S8, TG_W_U8, run_avxvnni};

/* Plain AVX2, any int8 weights: int16 pairs x int16 pairs with vpmaddwd (exact: a pair
 * sum is at most 2 * 127^2), 6 rows (the only int8 path on AMD Zen 3). */
#define TG_MAC_MADDWD(acc, w, x) _mm256_add_epi32(acc, _mm256_madd_epi16(x, w))
TG_YMM_KERNEL(run_avx2, AVX2, 6, TG_MAC_MADDWD)
const struct tg_tile_kernel tg_tk_avx2 = {"avx2", 6, 16, TG_A_S16, TG_W_S16, run_avx2};

/* Plain AVX2, low-bit weights (|w| <= 7): u8 (x + 128) x s8 w with vpmaddubsw (pair sums
 * <= 2 * 255 * 7, no int16 saturation) + vpmaddwd by 1: 32 products per 3 instructions;
 * 4 rows (8 accumulators, 2 weights, broadcast, the ones, a temporary). */
#define TG_MAC_MADDUBS(acc, w, x)                                                          \
	_mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(x, w), _mm256_set1_epi16(1)))
TG_YMM_KERNEL(run_lowbit_avx2, AVX2, 4, TG_MAC_MADDUBS)
const struct tg_tile_kernel tg_tk_lowbit_avx2 = {"avx2-lowbit", 4, 16, TG_A_U8, TG_W_S8,
						 run_lowbit_avx2};

/* sums[b] = sum of the int8 v over block b of 256: vpmaddubsw(1, v) pair sums (|.| <= 256),
 * vpmaddwd by 1 into int32. */
AVX2 void tg_block_sums_avx2(const int8_t *v, int len, int32_t *sums)
{
	const __m256i one8 = _mm256_set1_epi8(1), one16 = _mm256_set1_epi16(1);
	for (int lo = 0, b = 0; lo < len; lo += 256, b++) {
		int hi = lo + 256 < len ? lo + 256 : len;
		__m256i acc = _mm256_setzero_si256();
		for (int t = lo; t < hi; t += 32) {
			__m256i x = _mm256_loadu_si256((const __m256i *)(v + t));
			acc = _mm256_add_epi32(acc,
					       _mm256_madd_epi16(_mm256_maddubs_epi16(one8, x), one16));
		}
		__m128i h = _mm_add_epi32(_mm256_castsi256_si128(acc),
					  _mm256_extracti128_si256(acc, 1));
		h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
		h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xb1));
		sums[b] = _mm_cvtsi128_si32(h);
	}
}

/* Transpose of a full panel of 4-byte units: wp[s][c] = (row c of w at byte 4 s) ^ flip,
 * c < nr (a multiple of 8), s < steps; 8 rows per vpgatherdd. */
AVX2 void tg_pack_panel_avx2(const int8_t *w, int ldk, int nr, int steps, uint32_t flip,
			     uint32_t *wp)
{
	const __m256i f = _mm256_set1_epi32((int)flip);
	for (int c = 0; c < nr; c += 8) {
		const int *base = (const int *)(const void *)(w + (size_t)c * ldk);
		__m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
						 _mm256_set1_epi32(ldk));
		for (int s = 0; s < steps; s++) {
			__m256i v = _mm256_i32gather_epi32(base + s, idx, 1);
			_mm256_store_si256((__m256i *)(wp + (size_t)s * nr + c),
					   _mm256_xor_si256(v, f));
		}
	}
}
