#include "peak_fma.h"

#include <immintrin.h>
#include <omp.h>

#include "../common/ocb_cpu.h"

/* acc = acc * M + C keeps every lane in [0.5, 2] (fixed point C / (1 - M) = 1), so no
 * denormal or overflow slows any iteration down. */
#define FMA_M 0.75f
#define FMA_C 0.25f

/* Initial value of lane l of accumulator k among nacc x nlanes: 0.5 + 1.5 x index /
 * count, in [0.5, 2) (the step is a power of two for 96 and 256 lanes: exact). */
static float lane_init(int k, int l, int nacc, int nlanes)
{
	return 0.5f + (float)(k * nlanes + l) * (1.5f / (float)(nacc * nlanes));
}

static int team(int threads)
{
	return threads > 0 ? threads : omp_get_max_threads();
}

/* The plain-C arithmetic of both vector variants: nacc x nlanes (<= 16 x 16) lanes. */
static double fma_ref(long iters, int threads, double *sink, int nacc, int nlanes)
{
	int nt = team(threads);
	double total = 0.0;
	if (iters < 0)
		iters = 0;
#pragma omp parallel num_threads(nt) reduction(+ : total)
	{
		float acc[16][16];
		for (int k = 0; k < nacc; k++)
			for (int l = 0; l < nlanes; l++)
				acc[k][l] = lane_init(k, l, nacc, nlanes);
		for (long i = 0; i < iters; i++)
			for (int k = 0; k < nacc; k++)
				for (int l = 0; l < nlanes; l++)
					acc[k][l] = acc[k][l] * FMA_M + FMA_C;
		for (int k = 0; k < nacc; k++)
			for (int l = 0; l < nlanes; l++)
				total += acc[k][l];
	}
	if (sink)
		*sink = total;
	return (double)nt * (double)iters * 2.0 * nacc * nlanes;
}

double ocb_peak_fma_ref(long iters, int threads, double *sink)
{
	return fma_ref(iters, threads, sink, OCB_FMA_ACC, OCB_FMA_LANES);
}

double ocb_peak_fma_avx512_ref(long iters, int threads, double *sink)
{
	return fma_ref(iters, threads, sink, OCB_FMA512_ACC, OCB_FMA512_LANES);
}

/* Sum of the 8 lanes of v, in double. */
__attribute__((target("avx2,fma"))) static double hsum8(__m256 v)
{
	float f[8];
	double s = 0.0;
	_mm256_storeu_ps(f, v);
	for (int l = 0; l < 8; l++)
		s += f[l];
	return s;
}

/* 12 named registers rather than an array so that GCC keeps all of them in ymm0-15
 * (an array indexed in a loop may be spilled); each FMA depends only on its own chain. */
__attribute__((target("avx2,fma"))) double ocb_peak_fma_avx2(long iters, int threads,
							     double *sink)
{
	int nt = team(threads);
	double total = 0.0;
	if (iters < 0)
		iters = 0;
#pragma omp parallel num_threads(nt) reduction(+ : total)
	{
		float init[OCB_FMA_ACC][OCB_FMA_LANES];
		for (int k = 0; k < OCB_FMA_ACC; k++)
			for (int l = 0; l < OCB_FMA_LANES; l++)
				init[k][l] = lane_init(k, l, OCB_FMA_ACC, OCB_FMA_LANES);
		const __m256 m = _mm256_set1_ps(FMA_M), c = _mm256_set1_ps(FMA_C);
		__m256 a0 = _mm256_loadu_ps(init[0]), a1 = _mm256_loadu_ps(init[1]);
		__m256 a2 = _mm256_loadu_ps(init[2]), a3 = _mm256_loadu_ps(init[3]);
		__m256 a4 = _mm256_loadu_ps(init[4]), a5 = _mm256_loadu_ps(init[5]);
		__m256 a6 = _mm256_loadu_ps(init[6]), a7 = _mm256_loadu_ps(init[7]);
		__m256 a8 = _mm256_loadu_ps(init[8]), a9 = _mm256_loadu_ps(init[9]);
		__m256 a10 = _mm256_loadu_ps(init[10]), a11 = _mm256_loadu_ps(init[11]);
		for (long i = 0; i < iters; i++) {
			a0 = _mm256_fmadd_ps(a0, m, c);
			a1 = _mm256_fmadd_ps(a1, m, c);
			a2 = _mm256_fmadd_ps(a2, m, c);
			a3 = _mm256_fmadd_ps(a3, m, c);
			a4 = _mm256_fmadd_ps(a4, m, c);
			a5 = _mm256_fmadd_ps(a5, m, c);
			a6 = _mm256_fmadd_ps(a6, m, c);
			a7 = _mm256_fmadd_ps(a7, m, c);
			a8 = _mm256_fmadd_ps(a8, m, c);
			a9 = _mm256_fmadd_ps(a9, m, c);
			a10 = _mm256_fmadd_ps(a10, m, c);
			a11 = _mm256_fmadd_ps(a11, m, c);
		}
		total += hsum8(a0) + hsum8(a1) + hsum8(a2) + hsum8(a3) + hsum8(a4) + hsum8(a5) +
			 hsum8(a6) + hsum8(a7) + hsum8(a8) + hsum8(a9) + hsum8(a10) + hsum8(a11);
	}
	if (sink)
		*sink = total;
	return (double)nt * (double)iters * OCB_FMA_FLOPS_PER_ITER;
}

/* Sum of the 16 lanes of v, in double. */
__attribute__((target("avx512f"))) static double hsum16(__m512 v)
{
	float f[16];
	double s = 0.0;
	_mm512_storeu_ps(f, v);
	for (int l = 0; l < 16; l++)
		s += f[l];
	return s;
}

#define FMA16(i) a##i = _mm512_fmadd_ps(a##i, m, c)
#define LOAD16(i) __m512 a##i = _mm512_loadu_ps(init[i])

/* 16 named zmm chains (of 32 registers), as in the AVX2 variant; built with a
 * function-level target so that the rest of the binary stays AVX2 (or plain). */
__attribute__((target("avx512f"))) double ocb_peak_fma_avx512(long iters, int threads,
							       double *sink)
{
	_Static_assert(OCB_FMA512_ACC == 16 && OCB_FMA512_LANES == 16, "16 zmm chains");
	int nt = team(threads);
	double total = 0.0;
	if (iters < 0)
		iters = 0;
#pragma omp parallel num_threads(nt) reduction(+ : total)
	{
		float init[OCB_FMA512_ACC][OCB_FMA512_LANES];
		for (int k = 0; k < OCB_FMA512_ACC; k++)
			for (int l = 0; l < OCB_FMA512_LANES; l++)
				init[k][l] = lane_init(k, l, OCB_FMA512_ACC, OCB_FMA512_LANES);
		const __m512 m = _mm512_set1_ps(FMA_M), c = _mm512_set1_ps(FMA_C);
		LOAD16(0); LOAD16(1); LOAD16(2); LOAD16(3); LOAD16(4); LOAD16(5); LOAD16(6);
		LOAD16(7); LOAD16(8); LOAD16(9); LOAD16(10); LOAD16(11); LOAD16(12);
		LOAD16(13); LOAD16(14); LOAD16(15);
		for (long i = 0; i < iters; i++) {
			FMA16(0); FMA16(1); FMA16(2); FMA16(3); FMA16(4); FMA16(5); FMA16(6);
			FMA16(7); FMA16(8); FMA16(9); FMA16(10); FMA16(11); FMA16(12);
			FMA16(13); FMA16(14); FMA16(15);
		}
		total += hsum16(a0) + hsum16(a1) + hsum16(a2) + hsum16(a3) + hsum16(a4) +
			 hsum16(a5) + hsum16(a6) + hsum16(a7) + hsum16(a8) + hsum16(a9) +
			 hsum16(a10) + hsum16(a11) + hsum16(a12) + hsum16(a13) + hsum16(a14) +
			 hsum16(a15);
	}
	if (sink)
		*sink = total;
	return (double)nt * (double)iters * OCB_FMA512_FLOPS_PER_ITER;
}

double ocb_peak_fma(long iters, int threads, double *sink)
{
	if (ocb_cpu_avx512f())
		return ocb_peak_fma_avx512(iters, threads, sink);
	if (ocb_cpu_avx2())
		return ocb_peak_fma_avx2(iters, threads, sink);
	return ocb_peak_fma_ref(iters, threads, sink);
}

double ocb_peak_fma_flops_per_iter(void)
{
	return ocb_cpu_avx512f() ? OCB_FMA512_FLOPS_PER_ITER : OCB_FMA_FLOPS_PER_ITER;
}

const char *ocb_peak_fma_isa(void)
{
	if (ocb_cpu_avx512f())
		return "AVX-512F zmm FMA, 16 independent 16-lane accumulators";
	if (ocb_cpu_avx2())
		return "AVX2 ymm FMA, 12 independent 8-lane accumulators";
	return "plain-C FMA (no AVX2: not a peak), 12 x 8 lanes";
}
