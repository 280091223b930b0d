/* quant_gemv_bw: is batch-1 quantized GEMV at the memory-bandwidth limit?
 *
 * For Q8_0, Q4_0 and TQ2_0 at 16384 x 16384 (weights 285 / 151 / 69 MB, more than a
 * core's share of the last-level cache), measures the GEMV rate in GB/s of weight bytes
 * (scales included) and, in the same run with the same threads, a plain AVX2 read loop over
 * a buffer of the same size. Prints the fraction GEMV/read per format and the speed ratios
 * TQ2_0/Q4_0 and Q4_0/Q8_0 (their byte ratios are 2.18 and 1.89). Best of REPS timings.
 * Before every timed GEMV and every timed read, a buffer of twice the reported L3 size is
 * streamed (evict != 0), so that both start from DRAM even where the VM reports an L3
 * larger than the weights (this machine's lscpu says 260 MiB); evict = 0 measures hot.
 *
 * usage: quant_gemv_bw [n (16384)] [reps (10)] [threads (cores)] [evict (1)] */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_time.h"
#include "../kernels/quant_gemv.h"

/* Sum of all 32-bit words of buf (so the loads cannot be dropped), threads split it in
 * contiguous halves; 4 independent accumulators. */
__attribute__((target("avx2"))) static uint32_t read_avx2(const void *buf, size_t bytes, int threads)
{
	const __m256i *p = buf;
	const int64_t nv = (int64_t)(bytes / 32);
	uint32_t total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
	{
		int t = omp_get_thread_num(), nt = omp_get_num_threads();
		int64_t lo = nv * t / nt, hi = nv * (t + 1) / nt;
		__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
		int64_t i = lo;
		for (; i + 4 <= hi; i += 4) {
			a0 = _mm256_add_epi32(a0, _mm256_load_si256(p + i));
			a1 = _mm256_add_epi32(a1, _mm256_load_si256(p + i + 1));
			a2 = _mm256_add_epi32(a2, _mm256_load_si256(p + i + 2));
			a3 = _mm256_add_epi32(a3, _mm256_load_si256(p + i + 3));
		}
		for (; i < hi; i++)
			a0 = _mm256_add_epi32(a0, _mm256_load_si256(p + i));
		__m256i s = _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3));
		uint32_t v[8];
		_mm256_storeu_si256((__m256i *)v, s);
		for (int j = 0; j < 8; j++)
			total += v[j];
	}
	return total;
}

/* m rows of k weights of format f: copies of a pool of really quantized rows. */
static void *make_weights(const struct qformat *f, int64_t m, int64_t k, size_t *bytes)
{
	const int64_t pool = 16;
	size_t rb = qformat_row_bytes(f, k);
	float *x = malloc(sizeof(float) * (size_t)(pool * k));
	char *w = ocb_alloc(rb * (size_t)m);
	struct ocb_rng r;
	ocb_rng_seed(&r, 1);
	if (!x || !w) {
		free(x);
		ocb_free(w);
		return NULL;
	}
	for (int64_t i = 0; i < pool * k; i++)
		x[i] = (float)ocb_rng_normal(&r);
	qformat_quantize(f, x, w, pool, k);
	for (int64_t i = pool; i < m; i++)
		memcpy(w + (size_t)i * rb, w + (size_t)(i % pool) * rb, rb);
	free(x);
	*bytes = rb * (size_t)m;
	return w;
}

int main(int argc, char **argv)
{
	int64_t n = argc > 1 ? atoll(argv[1]) : 16384;
	int reps = argc > 2 ? atoi(argv[2]) : 10;
	int threads = argc > 3 ? atoi(argv[3]) : ocb_cpu_cores();
	int evict = argc > 4 ? atoi(argv[4]) : 1;
	long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
	size_t ebytes = evict ? 2 * (size_t)(l3 > (32L << 20) ? l3 : (32L << 20)) : 0;
	void *ebuf = evict ? ocb_alloc(ebytes) : NULL;
	if (evict && !ebuf) {
		fprintf(stderr, "quant_gemv_bw: out of memory for the eviction buffer\n");
		return 3;
	}
	if (ebuf)
		memset(ebuf, 2, ebytes);
	const char *names[3] = { "q8_0", "q4_0", "tq2_0" };
	double gemv_s[3] = { 0 }, gbs[3] = { 0 }, readbw[3] = { 0 };
	if (n <= 0 || n % 256 || reps <= 0 || threads <= 0) {
		fprintf(stderr, "quant_gemv_bw: usage: quant_gemv_bw [n, a multiple of 256] [reps] [threads]\n");
		return 2;
	}
	printf("quant_gemv_bw: %lld x %lld, %d threads, best of %d, path %s, %s\n", (long long)n,
	       (long long)n, threads, reps, qkernel_variant(),
	       evict ? "cold (L3 evicted before each timing)" : "hot");
	for (int fi = 0; fi < 3; fi++) {
		const struct qformat *f = qformat_find(names[fi]);
		size_t wbytes = 0;
		void *w = make_weights(f, n, n, &wbytes);
		float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
		void *xq = malloc(qformat_act_bytes(f, 1, n));
		void *buf = ocb_alloc(wbytes);
		if (!w || !x || !y || !xq || !buf) {
			fprintf(stderr, "quant_gemv_bw: out of memory\n");
			return 3;
		}
		memset(buf, 1, wbytes);
		for (int64_t i = 0; i < n; i++)
			x[i] = (float)(i % 97) / 97.0f - 0.5f;
		qformat_quantize_act(f, x, xq, 1, n);
		double best = 1e30, bestr = 1e30;
		uint32_t sink = 0;
		qgemv(f, w, n, n, xq, y, threads); /* warm-up */
		sink += read_avx2(buf, wbytes, threads);
		/* interleave the two so both see the same machine load */
		for (int r = 0; r < reps; r++) {
			if (ebuf)
				sink += read_avx2(ebuf, ebytes, threads);
			double t0 = ocb_now_s();
			qgemv(f, w, n, n, xq, y, threads);
			double tg = ocb_now_s() - t0;
			if (ebuf)
				sink += read_avx2(ebuf, ebytes, threads);
			double t1 = ocb_now_s();
			sink += read_avx2(buf, wbytes, threads);
			double t2 = ocb_now_s();
			best = tg < best ? tg : best;
			bestr = t2 - t1 < bestr ? t2 - t1 : bestr;
		}
		gemv_s[fi] = best;
		gbs[fi] = (double)wbytes / best / 1e9;
		readbw[fi] = (double)wbytes / bestr / 1e9;
		printf("%-6s weights %7.1f MB (%.4f bpw)  gemv %8.3f ms  %6.2f GB/s   read %6.2f GB/s   "
		       "fraction %5.1f%%   (y0=%g, sink %u)\n",
		       names[fi], wbytes / 1e6, f->bpw, best * 1e3, gbs[fi], readbw[fi],
		       100.0 * gbs[fi] / readbw[fi], y[0], sink);
		ocb_free(w);
		ocb_free(buf);
		free(x), free(y), free(xq);
	}
	ocb_free(ebuf);
	printf("speed ratio TQ2_0/Q4_0 %.2fx (bytes ratio %.2f)   Q4_0/Q8_0 %.2fx (bytes ratio %.2f)\n",
	       gemv_s[1] / gemv_s[2], 18.0 / 32 / (66.0 / 256), gemv_s[0] / gemv_s[1], 34.0 / 18);
	return 0;
}
