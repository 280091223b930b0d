#include "peak_fma.h"

#include <immintrin.h>
#include <omp.h>

#include "../common/ocb_cpu.h"

/* acc = acc * M + C keeps every lane in [0.5, 2] (fixed point C / (1 - M) = 1), so no
 * denormal or overflow slows any iteration down. */
#define FMA_M 0.75f
#define FMA_C 0.25f

static float lane_init(int k, int l)
{
	return 0.5f + (float)(k * OCB_FMA_LANES + l) / 64.0f;
}

static int team(int threads)
{
	return threads > 0 ? threads : omp_get_max_threads();
}

double ocb_peak_fma_ref(long iters, int threads, double *sink)
{
	int nt = team(threads);
	double total = 0.0;
	if (iters < 0)
		iters = 0;
#pragma omp parallel num_threads(nt) reduction(+ : total)
	{
		float acc[OCB_FMA_ACC][OCB_FMA_LANES];
		for (int k = 0; k < OCB_FMA_ACC; k++)
			for (int l = 0; l < OCB_FMA_LANES; l++)
				acc[k][l] = lane_init(k, l);
		for (long i = 0; i < iters; i++)
			for (int k = 0; k < OCB_FMA_ACC; k++)
				for (int l = 0; l < OCB_FMA_LANES; l++)
					acc[k][l] = acc[k][l] * FMA_M + FMA_C;
		for (int k = 0; k < OCB_FMA_ACC; k++)
			for (int l = 0; l < OCB_FMA_LANES; l++)
				total += acc[k][l];
	}
	if (sink)
		*sink = total;
	return (double)nt * (double)iters * OCB_FMA_FLOPS_PER_ITER;
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
				init[k][l] = lane_init(k, l);
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

double ocb_peak_fma(long iters, int threads, double *sink)
{
	if (ocb_cpu_avx2())
		return ocb_peak_fma_avx2(iters, threads, sink);
	return ocb_peak_fma_ref(iters, threads, sink);
}
