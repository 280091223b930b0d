#include "stream.h"

#include <immintrin.h>
#include <omp.h>
#include <string.h>

#include "../common/ocb_cpu.h"

/* Compiler barrier between repetitions: memory may have changed, so a pass cannot be
 * hoisted out of the reps loop or merged with the next. */
#define REP_BARRIER() __asm__ volatile("" ::: "memory")

static int team(int threads)
{
	return threads > 0 ? threads : omp_get_max_threads();
}

void ocb_stream_slice(size_t n, int nt, int t, size_t *lo, size_t *hi)
{
	size_t chunk = (n + (size_t)nt - 1) / (size_t)nt;
	chunk = (chunk + 15) & ~(size_t)15; /* 16 floats = one 64-byte line */
	size_t a = (size_t)t * chunk;
	*lo = a < n ? a : n;
	*hi = a + chunk < n ? a + chunk : n;
}

void ocb_stream_fill(float *x, size_t n, float v0, float dv, int threads)
{
	int nt = team(threads);
#pragma omp parallel num_threads(nt)
	{
		size_t lo, hi;
		ocb_stream_slice(n, omp_get_num_threads(), omp_get_thread_num(), &lo, &hi);
		for (size_t i = lo; i < hi; i++)
			x[i] = v0 + dv * (float)(i % 1024);
	}
}

/* ---- sum ---- */

/* Each thread of the team sums its own slice (ocb_stream_slice) reps times with slice();
 * the total of the last pass. The variants differ only in slice(). */
static double sum_team(const float *x, size_t n, long reps, int threads,
		       double (*slice)(const float *, size_t))
{
	int nt = team(threads);
	double total = 0.0;
#pragma omp parallel num_threads(nt) reduction(+ : total)
	{
		size_t lo, hi;
		double s = 0.0;
		ocb_stream_slice(n, omp_get_num_threads(), omp_get_thread_num(), &lo, &hi);
		for (long r = 0; r < reps; r++) {
			REP_BARRIER();
			s = slice(x + lo, hi - lo);
			__asm__ volatile("" : : "g"(s));
		}
		total += s;
	}
	return total;
}

static double sum_slice_ref(const float *x, size_t n)
{
	double s = 0.0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s;
}

double ocb_stream_sum_ref(const float *x, size_t n, long reps, int threads)
{
	return sum_team(x, n, reps, threads, sum_slice_ref);
}

/* 8 independent accumulators: two loads per cycle with a 4-cycle add latency need 8
 * chains in flight to keep the load ports busy (ERT uses the same trick). */
__attribute__((target("avx2,fma"))) static double sum_slice_avx2(const float *x, size_t n)
{
	__m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0,
	       s7 = s0;
	size_t i = 0;
	for (; i + 64 <= n; i += 64) {
		s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + i));
		s1 = _mm256_add_ps(s1, _mm256_loadu_ps(x + i + 8));
		s2 = _mm256_add_ps(s2, _mm256_loadu_ps(x + i + 16));
		s3 = _mm256_add_ps(s3, _mm256_loadu_ps(x + i + 24));
		s4 = _mm256_add_ps(s4, _mm256_loadu_ps(x + i + 32));
		s5 = _mm256_add_ps(s5, _mm256_loadu_ps(x + i + 40));
		s6 = _mm256_add_ps(s6, _mm256_loadu_ps(x + i + 48));
		s7 = _mm256_add_ps(s7, _mm256_loadu_ps(x + i + 56));
	}
	for (; i + 8 <= n; i += 8)
		s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + i));
	__m256 t = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)),
				 _mm256_add_ps(_mm256_add_ps(s4, s5), _mm256_add_ps(s6, s7)));
	float f[8];
	_mm256_storeu_ps(f, t);
	double s = 0.0;
	for (int l = 0; l < 8; l++)
		s += f[l];
	for (; i < n; i++)
		s += x[i];
	return s;
}

double ocb_stream_sum_avx2(const float *x, size_t n, long reps, int threads)
{
	return sum_team(x, n, reps, threads, sum_slice_avx2);
}

/* The same loop on zmm: one load per 64-byte line instead of two. On a Xeon (model 0xcf
 * VM) a core's DRAM read rate is higher with it (1 GiB cold, best of 8: 15.1-15.5 against
 * 12.8-13.8 GB/s at 1 thread, 28.4-30.0 against 23.0-26.3 at 2), and the zmm GEMV kernels
 * stream at that rate: a read ceiling measured on ymm alone sat below them. On the Zen 5
 * VM it is the other way at 2 threads: 151 MB cold, both timed in turn 120 times, zmm
 * 30.0 against ymm 35.1 GB/s in the host's slow phases and 44.1 against 47.6 in its fast
 * ones (equal at 1 thread), while zmm GEMV kernels, with work between their loads, read
 * at the ymm rate. So a read ceiling takes the better of the two, and of the loops on
 * several streams below (ocb_stream_sum_variants). */
__attribute__((target("avx512f"))) static double sum_slice_avx512(const float *x, size_t n)
{
	__m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0,
	       s7 = s0;
	size_t i = 0;
	for (; i + 128 <= n; i += 128) {
		s0 = _mm512_add_ps(s0, _mm512_loadu_ps(x + i));
		s1 = _mm512_add_ps(s1, _mm512_loadu_ps(x + i + 16));
		s2 = _mm512_add_ps(s2, _mm512_loadu_ps(x + i + 32));
		s3 = _mm512_add_ps(s3, _mm512_loadu_ps(x + i + 48));
		s4 = _mm512_add_ps(s4, _mm512_loadu_ps(x + i + 64));
		s5 = _mm512_add_ps(s5, _mm512_loadu_ps(x + i + 80));
		s6 = _mm512_add_ps(s6, _mm512_loadu_ps(x + i + 96));
		s7 = _mm512_add_ps(s7, _mm512_loadu_ps(x + i + 112));
	}
	for (; i + 16 <= n; i += 16)
		s0 = _mm512_add_ps(s0, _mm512_loadu_ps(x + i));
	__m512 t = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)),
				 _mm512_add_ps(_mm512_add_ps(s4, s5), _mm512_add_ps(s6, s7)));
	float f[16];
	_mm512_storeu_ps(f, t);
	double s = 0.0;
	for (int l = 0; l < 16; l++)
		s += f[l];
	for (; i < n; i++)
		s += x[i];
	return s;
}

double ocb_stream_sum_avx512(const float *x, size_t n, long reps, int threads)
{
	return sum_team(x, n, reps, threads, sum_slice_avx512);
}

/* ---- sum on K streams ----
 * The slice cut in K equal parts read side by side, one 64-byte line of each part per
 * step: K hardware prefetch streams instead of one. On the Zen 5 VM (3 Dec 2026, 151 MiB
 * cold, best of 10, loops timed in turn) a core reads DRAM faster so: 1 thread one
 * stream 35-37 GB/s (zmm; ymm 33-35), two 37-42, four 43-44, eight 39; 2 threads 70-77,
 * 75-84, 86-88, 78. The GEMV kernels that read several groups side by side
 * (quant_repack.c qr_default_streams) reach past a one-stream read loop there, so a read
 * ceiling that did not try these would sit below a measured kernel. */
#define SUMK_BODY(V, W, LOAD, ADD, ZERO, x, n, K, PF)                                       \
	do {                                                                                \
		V s_[8];                                                                    \
		for (int j_ = 0; j_ < 8; j_++)                                              \
			s_[j_] = ZERO;                                                      \
		const size_t part_ = (n) / (K) / 16 * 16; /* floats per part, whole lines */ \
		for (size_t i_ = 0; i_ < part_; i_ += 16) {                                 \
			_Pragma("GCC unroll 4") for (int j_ = 0; j_ < (K); j_++)             \
			{                                                                   \
				if (PF)                                                     \
					_mm_prefetch((const char *)((x) + (size_t)j_ * part_ + i_) \
							     + (PF),                        \
						     _MM_HINT_T0);                          \
				_Pragma("GCC unroll 2") for (int l_ = 0; l_ < 16; l_ += W)   \
				{                                                           \
					V *a_ = &s_[(j_ * (16 / W) + l_ / W) % 8];          \
					*a_ = ADD(*a_, LOAD((x) + (size_t)j_ * part_ + i_ + l_)); \
				}                                                           \
			}                                                                   \
		}                                                                           \
		V t_ = s_[0];                                                               \
		for (int j_ = 1; j_ < 8; j_++)                                              \
			t_ = ADD(t_, s_[j_]);                                               \
		float f_[W];                                                                \
		memcpy(f_, &t_, sizeof f_);                                                 \
		double r_ = 0.0;                                                            \
		for (int l_ = 0; l_ < W; l_++)                                              \
			r_ += f_[l_];                                                       \
		for (size_t i_ = (size_t)(K) * part_; i_ < (n); i_++)                       \
			r_ += (x)[i_];                                                      \
		return r_;                                                                  \
	} while (0)

__attribute__((target("avx2"))) static double sum2_slice_avx2(const float *x, size_t n)
{
	SUMK_BODY(__m256, 8, _mm256_loadu_ps, _mm256_add_ps, _mm256_setzero_ps(), x, n, 2, 0);
}

__attribute__((target("avx2"))) static double sum4_slice_avx2(const float *x, size_t n)
{
	SUMK_BODY(__m256, 8, _mm256_loadu_ps, _mm256_add_ps, _mm256_setzero_ps(), x, n, 4, 0);
}

__attribute__((target("avx512f"))) static double sum2_slice_avx512(const float *x, size_t n)
{
	SUMK_BODY(__m512, 16, _mm512_loadu_ps, _mm512_add_ps, _mm512_setzero_ps(), x, n, 2, 0);
}

__attribute__((target("avx512f"))) static double sum4_slice_avx512(const float *x, size_t n)
{
	SUMK_BODY(__m512, 16, _mm512_loadu_ps, _mm512_add_ps, _mm512_setzero_ps(), x, n, 4, 0);
}

/* 4 streams, each line asked for 2 KiB ahead into L1 (prefetcht0), as the GEMV kernels
 * on 4 streams do (quant_repack.c qr_default_prefetch). On the Zen 5 VM (5 Dec 2026, 69
 * and 285 MB cold, in turn with the loops above, twelve rounds at 1 and 2 threads) it
 * read up to 21% faster than the 4-stream loop without in some of the host's phases
 * (62.4 against 52.5 GB/s, 73.6 against 60.7 at 2 threads) and up to 10% slower in
 * others; 8 or 16 KiB ahead did worse than 2 in 11 of 12 rounds, and 8 KiB on 2 streams
 * or on one in 11 and 12 of them. The GEMVs with that prefetch had gone past every loop
 * without it. */
__attribute__((target("avx2"))) static double sum4p_slice_avx2(const float *x, size_t n)
{
	SUMK_BODY(__m256, 8, _mm256_loadu_ps, _mm256_add_ps, _mm256_setzero_ps(), x, n, 4,
		  2048);
}

__attribute__((target("avx512f"))) static double sum4p_slice_avx512(const float *x, size_t n)
{
	SUMK_BODY(__m512, 16, _mm512_loadu_ps, _mm512_add_ps, _mm512_setzero_ps(), x, n, 4,
		  2048);
}
#undef SUMK_BODY

double ocb_stream_sum(const float *x, size_t n, long reps, int threads)
{
	if (ocb_cpu_avx512f())
		return ocb_stream_sum_avx512(x, n, reps, threads);
	return ocb_cpu_avx2() ? ocb_stream_sum_avx2(x, n, reps, threads)
			      : ocb_stream_sum_ref(x, n, reps, threads);
}

int ocb_stream_sum_variants(void)
{
	return ocb_cpu_avx512f() ? 5 : ocb_cpu_avx2() ? 4 : 1;
}

double ocb_stream_sum_variant(int v, const float *x, size_t n, long reps, int threads)
{
	const int z = ocb_cpu_avx512f();
	if (!ocb_cpu_avx2() || v <= 0 || v >= ocb_stream_sum_variants())
		return ocb_stream_sum(x, n, reps, threads);
	if (z && v == 1)
		return ocb_stream_sum_avx2(x, n, reps, threads);
	/* the multi-stream loops: 2, 4, 4 with the prefetch (v - z = 1, 2, 3) */
	double (*const slice[2][3])(const float *, size_t) = {
		{ sum2_slice_avx2, sum4_slice_avx2, sum4p_slice_avx2 },
		{ sum2_slice_avx512, sum4_slice_avx512, sum4p_slice_avx512 } };
	return sum_team(x, n, reps, threads, slice[z][v - z - 1]);
}

const char *ocb_stream_isa(int sum)
{
	if (!ocb_cpu_avx2())
		return "C";
	if (!sum)
		return "AVX2";
	return ocb_cpu_avx512f() ? "AVX-512F or AVX2 on 1, 2 or 4 streams per thread (4 also with "
				   "a prefetch), the best"
				 : "AVX2 on 1, 2 or 4 streams per thread (4 also with a prefetch), "
				   "the best";
}

/* ---- triad ---- */

void ocb_stream_triad_ref(float *a, const float *b, const float *c, float s, size_t n,
			  long reps, int threads)
{
	int nt = team(threads);
#pragma omp parallel num_threads(nt)
	{
		size_t lo, hi;
		ocb_stream_slice(n, omp_get_num_threads(), omp_get_thread_num(), &lo, &hi);
		for (long r = 0; r < reps; r++) {
			REP_BARRIER();
			for (size_t i = lo; i < hi; i++)
				a[i] = b[i] + s * c[i];
		}
	}
}

/* target "avx2" without "fma" on purpose: GCC contracts the intrinsics' mul + add into
 * an FMA under -ffp-contract=fast, which rounds once where STREAM (and the _ref) round
 * twice; without FMA in the target the result is bit-identical to the _ref. */
__attribute__((target("avx2"))) void ocb_stream_triad_avx2(float *a, const float *b,
							       const float *c, float s, size_t n,
							       long reps, int threads)
{
	int nt = team(threads);
#pragma omp parallel num_threads(nt)
	{
		size_t lo, hi;
		const __m256 vs = _mm256_set1_ps(s);
		ocb_stream_slice(n, omp_get_num_threads(), omp_get_thread_num(), &lo, &hi);
		for (long r = 0; r < reps; r++) {
			REP_BARRIER();
			size_t i = lo;
			for (; i + 16 <= hi; i += 16) {
				__m256 x0 = _mm256_mul_ps(vs, _mm256_loadu_ps(c + i));
				__m256 x1 = _mm256_mul_ps(vs, _mm256_loadu_ps(c + i + 8));
				_mm256_storeu_ps(a + i, _mm256_add_ps(_mm256_loadu_ps(b + i), x0));
				_mm256_storeu_ps(a + i + 8,
						 _mm256_add_ps(_mm256_loadu_ps(b + i + 8), x1));
			}
			for (; i < hi; i++)
				a[i] = b[i] + s * c[i];
		}
	}
}

void ocb_stream_triad(float *a, const float *b, const float *c, float s, size_t n, long reps,
		      int threads)
{
	if (ocb_cpu_avx2())
		ocb_stream_triad_avx2(a, b, c, s, n, reps, threads);
	else
		ocb_stream_triad_ref(a, b, c, s, n, reps, threads);
}

/* ---- copy ---- */

void ocb_stream_copy_ref(float *c, const float *a, size_t n, long reps, int threads)
{
	int nt = team(threads);
#pragma omp parallel num_threads(nt)
	{
		size_t lo, hi;
		ocb_stream_slice(n, omp_get_num_threads(), omp_get_thread_num(), &lo, &hi);
		for (long r = 0; r < reps; r++) {
			REP_BARRIER();
			for (size_t i = lo; i < hi; i++)
				c[i] = a[i];
		}
	}
}

__attribute__((target("avx2,fma"))) void ocb_stream_copy_avx2(float *c, const float *a,
							      size_t n, long reps, int threads)
{
	int nt = team(threads);
#pragma omp parallel num_threads(nt)
	{
		size_t lo, hi;
		ocb_stream_slice(n, omp_get_num_threads(), omp_get_thread_num(), &lo, &hi);
		for (long r = 0; r < reps; r++) {
			REP_BARRIER();
			size_t i = lo;
			for (; i + 32 <= hi; i += 32) {
				__m256 x0 = _mm256_loadu_ps(a + i), x1 = _mm256_loadu_ps(a + i + 8);
				__m256 x2 = _mm256_loadu_ps(a + i + 16);
				__m256 x3 = _mm256_loadu_ps(a + i + 24);
				_mm256_storeu_ps(c + i, x0);
				_mm256_storeu_ps(c + i + 8, x1);
				_mm256_storeu_ps(c + i + 16, x2);
				_mm256_storeu_ps(c + i + 24, x3);
			}
			for (; i < hi; i++)
				c[i] = a[i];
		}
	}
}

void ocb_stream_copy(float *c, const float *a, size_t n, long reps, int threads)
{
	if (ocb_cpu_avx2())
		ocb_stream_copy_avx2(c, a, n, reps, threads);
	else
		ocb_stream_copy_ref(c, a, n, reps, threads);
}
