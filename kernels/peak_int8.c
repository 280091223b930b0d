#include "peak_int8.h"

#include <immintrin.h>
#include <omp.h>

#include "../common/ocb_cpu.h"

/* Operands: accumulator k multiplies a[k % 4] (u8, 0..3) by b[k / 4] (s8, -3..3), so the
 * eight accumulators see eight different operand pairs (the compiler cannot merge two
 * chains) and no pair sum comes near int16 saturation (2 x 3 x 3 = 18). */
#define NA 4
#define NB 2
_Static_assert(NA * NB == OCB_INT8_ACC, "one operand pair per accumulator");

static uint8_t a_byte(int k, int i) { return (uint8_t)((k + i) % 4); }
static int8_t b_byte(int k, int i) { return (int8_t)(k == 0 ? i % 7 - 3 : 3 - i % 5); }
/* Initial value of lane l (0..7) of accumulator k. */
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

uint64_t ocb_peak_int8_expect(long iters, int threads)
{
	uint64_t one = 0;
	if (iters < 0)
		iters = 0;
	for (int k = 0; k < OCB_INT8_ACC; k++)
		for (int l = 0; l < 8; l++)
			one += (uint32_t)(acc_init(k, l) + (uint32_t)iters * lane_step(k, l));
	return (uint64_t)team(threads) * one;
}

double ocb_peak_int8_ref(long iters, int threads, uint64_t *sink)
{
	int nt = team(threads);
	uint64_t total = 0;
	if (iters < 0)
		iters = 0;
#pragma omp parallel num_threads(nt) reduction(+ : total)
	{
		uint8_t a[NA][32];
		int8_t b[NB][32];
		uint32_t acc[OCB_INT8_ACC][8];
		for (int i = 0; i < 32; i++) {
			for (int k = 0; k < NA; k++)
				a[k][i] = a_byte(k, i);
			for (int k = 0; k < NB; k++)
				b[k][i] = b_byte(k, i);
		}
		for (int k = 0; k < OCB_INT8_ACC; k++)
			for (int l = 0; l < 8; l++)
				acc[k][l] = acc_init(k, l);
		for (long it = 0; it < iters; it++) {
			/* the operands "may change" each step: no folding into iters x step */
			__asm__ volatile("" : : "r"(a), "r"(b) : "memory");
			for (int k = 0; k < OCB_INT8_ACC; k++)
				for (int l = 0; l < 8; l++) {
					const uint8_t *x = &a[k % NA][4 * l];
					const int8_t *y = &b[k / NA][4 * l];
					int16_t p0 = (int16_t)(x[0] * y[0] + x[1] * y[1]);
					int16_t p1 = (int16_t)(x[2] * y[2] + x[3] * y[3]);
					acc[k][l] += (uint32_t)(p0 + p1);
				}
		}
		for (int k = 0; k < OCB_INT8_ACC; k++)
			for (int l = 0; l < 8; l++)
				total += acc[k][l];
	}
	if (sink)
		*sink = total;
	return (double)nt * (double)iters * OCB_INT8_OPS_PER_ITER;
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
	acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones))

/* Named registers (8 accumulators + 4 + 2 operands + ones = 15 ymm) so that GCC keeps
 * every value in a register. The empty asm tells the compiler the operands may change
 * each step (so it cannot hoist the loop-invariant products) without emitting an
 * instruction: the CPU sees only the three-instruction chains. */
__attribute__((target("avx2"))) double ocb_peak_int8_avx2(long iters, int threads,
							  uint64_t *sink)
{
	int nt = team(threads);
	uint64_t total = 0;
	if (iters < 0)
		iters = 0;
#pragma omp parallel num_threads(nt) reduction(+ : total)
	{
		const __m256i ones = _mm256_set1_epi16(1);
		__m256i a0 = load_a(0), a1 = load_a(1), a2 = load_a(2), a3 = load_a(3);
		__m256i b0 = load_b(0), b1 = load_b(1);
		__m256i c0 = load_acc(0), c1 = load_acc(1), c2 = load_acc(2), c3 = load_acc(3);
		__m256i c4 = load_acc(4), c5 = load_acc(5), c6 = load_acc(6), c7 = load_acc(7);
		for (long it = 0; it < iters; it++) {
			__asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(b0),
					 "+x"(b1));
			STEP(c0, a0, b0);
			STEP(c1, a1, b0);
			STEP(c2, a2, b0);
			STEP(c3, a3, b0);
			STEP(c4, a0, b1);
			STEP(c5, a1, b1);
			STEP(c6, a2, b1);
			STEP(c7, a3, b1);
		}
		total += hsum8u(c0) + hsum8u(c1) + hsum8u(c2) + hsum8u(c3) + hsum8u(c4) +
			 hsum8u(c5) + hsum8u(c6) + hsum8u(c7);
	}
	if (sink)
		*sink = total;
	return (double)nt * (double)iters * OCB_INT8_OPS_PER_ITER;
}

double ocb_peak_int8(long iters, int threads, uint64_t *sink)
{
	if (ocb_cpu_avx2())
		return ocb_peak_int8_avx2(iters, threads, sink);
	return ocb_peak_int8_ref(iters, threads, sink);
}
