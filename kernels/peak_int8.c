#include "peak_int8.h"

#include <immintrin.h>
#include <omp.h>

#include "../common/ocb_cpu.h"

/* Operands: accumulator k multiplies a[k % NA] (u8, 0..3) by b[k / NA] (s8, -3..3), so
 * the accumulators see different operand pairs (the compiler cannot merge two chains)
 * and no pair sum comes near int16 saturation (2 x 3 x 3 = 18): maddubs+madd and vpdpbusd
 * compute the same integers. AVX2 shape: 8 accumulators x 8 lanes (b[0..1]); AVX-512
 * VNNI shape: 16 accumulators x 16 lanes (b[0..3]). */
#define NA 4
#define NB 2
_Static_assert(NA * NB == OCB_INT8_ACC, "one operand pair per accumulator");
_Static_assert(NA * 4 == OCB_INT8_512_ACC, "one operand pair per accumulator");

struct shape {
	int nacc, lanes; /* accumulators, int32 lanes per accumulator (<= 16 x 16) */
};
static const struct shape AVX2_SHAPE = {OCB_INT8_ACC, 8};
static const struct shape VNNI512_SHAPE = {OCB_INT8_512_ACC, 16};

static uint8_t a_byte(int k, int i) { return (uint8_t)((k + i) % 4); }
static int8_t b_byte(int k, int i)
{
	return (int8_t)(k == 0 ? i % 7 - 3 : k == 1 ? 3 - i % 5 : (k * i + k) % 7 - 3);
}
/* Initial value of lane l (0..15) of accumulator k. */
static uint32_t acc_init(int k, int l) { return (uint32_t)(1000 * k + 17 * l); }

static int team(int threads)
{
	return threads > 0 ? threads : omp_get_max_threads();
}

/* What one step adds to lane l of accumulator k: sum of its four byte products. */
static uint32_t lane_step(int k, int l)
{
	int s = 0;
	for (int q = 0; q < 4; q++)
		s += a_byte(k % NA, 4 * l + q) * b_byte(k / NA, 4 * l + q);
	return (uint32_t)s;
}

static uint64_t expect_shape(long iters, int threads, struct shape sh)
{
	uint64_t one = 0;
	if (iters < 0)
		iters = 0;
	for (int k = 0; k < sh.nacc; k++)
		for (int l = 0; l < sh.lanes; l++)
			one += (uint32_t)(acc_init(k, l) + (uint32_t)iters * lane_step(k, l));
	return (uint64_t)team(threads) * one;
}

uint64_t ocb_peak_int8_expect(long iters, int threads)
{
	return expect_shape(iters, threads, AVX2_SHAPE);
}

uint64_t ocb_peak_int8_vnni512_expect(long iters, int threads)
{
	return expect_shape(iters, threads, VNNI512_SHAPE);
}

static double ops_of(long iters, int nt, struct shape sh)
{
	return (double)nt * (double)iters * 2.0 * sh.nacc * 4 * sh.lanes;
}

/* The integer arithmetic of every variant, lane by lane, for shape sh. */
static double int8_ref(long iters, int threads, uint64_t *sink, struct shape sh)
{
	int nt = team(threads);
	uint64_t total = 0;
	if (iters < 0)
		iters = 0;
#pragma omp parallel num_threads(nt) reduction(+ : total)
	{
		uint8_t a[NA][64];
		int8_t b[4][64];
		uint32_t acc[16][16];
		for (int i = 0; i < 4 * sh.lanes; i++) {
			for (int k = 0; k < NA; k++)
				a[k][i] = a_byte(k, i);
			for (int k = 0; k < 4; k++)
				b[k][i] = b_byte(k, i);
		}
		for (int k = 0; k < sh.nacc; k++)
			for (int l = 0; l < sh.lanes; l++)
				acc[k][l] = acc_init(k, l);
		for (long it = 0; it < iters; it++) {
			/* the operands "may change" each step: no folding into iters x step */
			__asm__ volatile("" : : "r"(a), "r"(b) : "memory");
			for (int k = 0; k < sh.nacc; k++)
				for (int l = 0; l < sh.lanes; l++) {
					const uint8_t *x = &a[k % NA][4 * l];
					const int8_t *y = &b[k / NA][4 * l];
					int16_t p0 = (int16_t)(x[0] * y[0] + x[1] * y[1]);
					int16_t p1 = (int16_t)(x[2] * y[2] + x[3] * y[3]);
					acc[k][l] += (uint32_t)(p0 + p1);
				}
		}
		for (int k = 0; k < sh.nacc; k++)
			for (int l = 0; l < sh.lanes; l++)
				total += acc[k][l];
	}
	if (sink)
		*sink = total;
	return ops_of(iters, nt, sh);
}

double ocb_peak_int8_ref(long iters, int threads, uint64_t *sink)
{
	return int8_ref(iters, threads, sink, AVX2_SHAPE);
}

double ocb_peak_int8_vnni512_ref(long iters, int threads, uint64_t *sink)
{
	return int8_ref(iters, threads, sink, VNNI512_SHAPE);
}

/* Sum of the 8 int32 lanes of v read as uint32. */
__attribute__((target("avx2"))) static uint64_t hsum8u(__m256i v)
{
	uint32_t f[8];
	uint64_t s = 0;
	_mm256_storeu_si256((__m256i *)f, v);
	for (int l = 0; l < 8; l++)
		s += f[l];
	return s;
}

__attribute__((target("avx2"))) static __m256i load_acc(int k)
{
	uint32_t v[8];
	for (int l = 0; l < 8; l++)
		v[l] = acc_init(k, l);
	return _mm256_loadu_si256((const __m256i *)v);
}

__attribute__((target("avx2"))) static __m256i load_a(int k)
{
	uint8_t v[32];
	for (int i = 0; i < 32; i++)
		v[i] = a_byte(k, i);
	return _mm256_loadu_si256((const __m256i *)v);
}

__attribute__((target("avx2"))) static __m256i load_b(int k)
{
	int8_t v[32];
	for (int i = 0; i < 32; i++)
		v[i] = b_byte(k, i);
	return _mm256_loadu_si256((const __m256i *)v);
}

/* One chain step: acc += madd(maddubs(a, b), 1). */
#define STEP(acc, a, b) \
	acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), _mm256_set1_epi16(1)))

/* The body of the 8-chain ymm variants (AVX2 and AVX-VNNI), `step` their chain step, in a
 * function taking (iters, threads, sink). Named registers (8 accumulators + 4 + 2
 * operands, and the AVX2 step's constant 1s = 15 ymm) so that GCC keeps every value in a
 * register. The empty asm tells the compiler the operands may change each step (so it
 * cannot hoist the loop-invariant products) without emitting an instruction: the CPU
 * sees only the chains. */
#define CHAIN8_BODY(step)                                                                  \
	int nt = team(threads);                                                            \
	uint64_t total = 0;                                                                \
	if (iters < 0)                                                                     \
		iters = 0;                                                                 \
	_Pragma("omp parallel num_threads(nt) reduction(+ : total)")                      \
	{                                                                                  \
		__m256i a0 = load_a(0), a1 = load_a(1), a2 = load_a(2), a3 = load_a(3);    \
		__m256i b0 = load_b(0), b1 = load_b(1);                                    \
		__m256i c0 = load_acc(0), c1 = load_acc(1), c2 = load_acc(2);              \
		__m256i c3 = load_acc(3), c4 = load_acc(4), c5 = load_acc(5);              \
		__m256i c6 = load_acc(6), c7 = load_acc(7);                                \
		for (long it = 0; it < iters; it++) {                                      \
			__asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3),      \
					 "+x"(b0), "+x"(b1));                              \
			step(c0, a0, b0);                                                  \
			step(c1, a1, b0);                                                  \
			step(c2, a2, b0);                                                  \
			step(c3, a3, b0);                                                  \
			step(c4, a0, b1);                                                  \
			step(c5, a1, b1);                                                  \
			step(c6, a2, b1);                                                  \
			step(c7, a3, b1);                                                  \
		}                                                                          \
		total += hsum8u(c0) + hsum8u(c1) + hsum8u(c2) + hsum8u(c3) + hsum8u(c4) +  \
			 hsum8u(c5) + hsum8u(c6) + hsum8u(c7);                             \
	}                                                                                  \
	if (sink)                                                                          \
		*sink = total;                                                             \
	return (double)nt * (double)iters * OCB_INT8_OPS_PER_ITER

__attribute__((target("avx2"))) double ocb_peak_int8_avx2(long iters, int threads,
							  uint64_t *sink)
{
	CHAIN8_BODY(STEP);
}

#define VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

/* Sum of the 16 int32 lanes of v read as uint32. */
VNNI static uint64_t hsum16u(__m512i v)
{
	uint32_t f[16];
	uint64_t s = 0;
	_mm512_storeu_si512(f, v);
	for (int l = 0; l < 16; l++)
		s += f[l];
	return s;
}

VNNI static __m512i load512(int what, int k)
{
	uint32_t v[16];
	uint8_t *u = (uint8_t *)v;
	for (int i = 0; i < 64; i++)
		u[i] = what == 0 ? a_byte(k, i) : (uint8_t)b_byte(k, i);
	if (what == 2)
		for (int l = 0; l < 16; l++)
			v[l] = acc_init(k, l);
	return _mm512_loadu_si512(v);
}

#define A512(k) __m512i a##k = load512(0, k)
#define B512(k) __m512i b##k = load512(1, k)
/* accumulator 4j + i multiplies a_i by b_j (k % NA, k / NA as in the _ref) */
#define DP4(j) \
	c##j##0 = _mm512_dpbusd_epi32(c##j##0, a0, b##j); \
	c##j##1 = _mm512_dpbusd_epi32(c##j##1, a1, b##j); \
	c##j##2 = _mm512_dpbusd_epi32(c##j##2, a2, b##j); \
	c##j##3 = _mm512_dpbusd_epi32(c##j##3, a3, b##j)

/* 16 chains of vpdpbusd (latency 5 on 2 ports needs >= 10) in named registers (16
 * accumulators + 8 operands = 24 of 32 zmm); the empty asm as in the AVX2 variant. */
VNNI double ocb_peak_int8_vnni512(long iters, int threads, uint64_t *sink)
{
	int nt = team(threads);
	uint64_t total = 0;
	if (iters < 0)
		iters = 0;
#pragma omp parallel num_threads(nt) reduction(+ : total)
	{
		A512(0); A512(1); A512(2); A512(3);
		B512(0); B512(1); B512(2); B512(3);
		__m512i c00 = load512(2, 0), c01 = load512(2, 1), c02 = load512(2, 2);
		__m512i c03 = load512(2, 3), c10 = load512(2, 4), c11 = load512(2, 5);
		__m512i c12 = load512(2, 6), c13 = load512(2, 7), c20 = load512(2, 8);
		__m512i c21 = load512(2, 9), c22 = load512(2, 10), c23 = load512(2, 11);
		__m512i c30 = load512(2, 12), c31 = load512(2, 13), c32 = load512(2, 14);
		__m512i c33 = load512(2, 15);
		for (long it = 0; it < iters; it++) {
			__asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(b0),
					 "+v"(b1), "+v"(b2), "+v"(b3));
			DP4(0);
			DP4(1);
			DP4(2);
			DP4(3);
		}
		total += hsum16u(c00) + hsum16u(c01) + hsum16u(c02) + hsum16u(c03) +
			 hsum16u(c10) + hsum16u(c11) + hsum16u(c12) + hsum16u(c13) +
			 hsum16u(c20) + hsum16u(c21) + hsum16u(c22) + hsum16u(c23) +
			 hsum16u(c30) + hsum16u(c31) + hsum16u(c32) + hsum16u(c33);
	}
	if (sink)
		*sink = total;
	return ops_of(iters, nt, VNNI512_SHAPE);
}

/* One AVX-VNNI chain step: acc += 4-product sums of a x b (no int16 stage). */
#define STEPV(acc, a, b) acc = _mm256_dpbusd_avx_epi32(acc, a, b)

/* The AVX2 variant's shape, operands and registers with vpdpbusd ymm in place of
 * maddubs+madd+add: the same integers. 8 chains on 2 ports of latency 5 keep the ports
 * ~80% busy: this variant only has to be >= the AVX2 chain and AVX-VNNI kernels. */
__attribute__((target("avx2,avxvnni"))) double ocb_peak_int8_avxvnni(long iters, int threads,
								     uint64_t *sink)
{
	CHAIN8_BODY(STEPV);
}

double ocb_peak_int8(long iters, int threads, uint64_t *sink)
{
	if (ocb_cpu_avx512vnni())
		return ocb_peak_int8_vnni512(iters, threads, sink);
	if (ocb_cpu_avxvnni())
		return ocb_peak_int8_avxvnni(iters, threads, sink);
	if (ocb_cpu_avx2())
		return ocb_peak_int8_avx2(iters, threads, sink);
	return ocb_peak_int8_ref(iters, threads, sink);
}

double ocb_peak_int8_ops_per_iter(void)
{
	return ocb_cpu_avx512vnni() ? OCB_INT8_512_OPS_PER_ITER : OCB_INT8_OPS_PER_ITER;
}

uint64_t ocb_peak_int8_expected(long iters, int threads)
{
	return ocb_cpu_avx512vnni() ? ocb_peak_int8_vnni512_expect(iters, threads)
				    : ocb_peak_int8_expect(iters, threads);
}

const char *ocb_peak_int8_isa(void)
{
	if (ocb_cpu_avx512vnni())
		return "AVX-512 VNNI int8 dot chain (vpdpbusd zmm), 16 accumulators, "
		       "2 ops per multiply-add";
	if (ocb_cpu_avxvnni())
		return "AVX-VNNI int8 dot chain (vpdpbusd ymm), 8 accumulators, "
		       "2 ops per multiply-add";
	if (ocb_cpu_avx2())
		return "AVX2 int8 dot chain (maddubs+madd+add), 8 accumulators, "
		       "2 ops per multiply-add";
	return "plain-C int8 dot chain (no AVX2: not a peak), 8 accumulators, "
	       "2 ops per multiply-add";
}
