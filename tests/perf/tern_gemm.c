/* tern_gemm: the ternary suite's int8 training GEMM against OpenBLAS sgemm on the same
 * shape and against the measured integer-dot roof (kernels/peak_int8.h), in one run.
 *
 * Y[n][m] = Xq[n][k] W^T with int8 activations (per-token / 256-block absmax) and int8
 * weight codes (random ternary), vs fp32 sgemm of the same n x m x k, vs ocb_peak_int8.
 * Rates are from wall time, best of REPS: run it on a quiet machine. (Process CPU time x
 * threads is not a rate: idle pools spinning and descheduled threads skew it; it made
 * 2 threads look 6.7x one.)
 *
 * usage: tern_gemm [n (1024)] [m (1024)] [k (256)] [threads (1)] [reps (5)] */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../common/ocb_alloc.h"
#include "../../common/ocb_rng.h"
#include "../../common/ocb_time.h"
#include "../../kernels/peak_int8.h"
#include "../../kernels/tern_gemm.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1024, m = argc > 2 ? atoi(argv[2]) : 1024;
	int k = argc > 3 ? atoi(argv[3]) : 256, th = argc > 4 ? atoi(argv[4]) : 1;
	int reps = argc > 5 ? atoi(argv[5]) : 5;
	int ldk = tg_ldk(k), nb = tg_nblk(k);
	float *x = ocb_alloc((size_t)n * k * 4), *xd = ocb_alloc((size_t)n * nb * 4);
	float *w = ocb_alloc((size_t)m * k * 4), *y = ocb_alloc((size_t)n * m * 4);
	int8_t *xq = ocb_alloc((size_t)n * ldk), *wq = ocb_alloc((size_t)m * ldk);
	struct ocb_rng r;
	if (!x || !xd || !w || !y || !xq || !wq)
		return 3;
	ocb_rng_seed(&r, 1);
	for (size_t i = 0; i < (size_t)n * k; i++)
		x[i] = (float)ocb_rng_normal(&r);
	for (int j = 0; j < m; j++)
		for (int t = 0; t < k; t++) {
			int c = (int)ocb_rng_below(&r, 3) - 1;
			wq[(size_t)j * ldk + t] = (int8_t)c;
			w[(size_t)j * k + t] = (float)c;
		}
	openblas_set_num_threads(th);
	double ops = tg_gemm_ops(n, m, k);
	double bq = 1e30, bl = 1e30, bi = 1e30, bs = 1e30, br = 0;
	for (int rep = 0; rep < reps; rep++) {
		double t0 = ocb_now_s();
		tg_quant_act(x, n, k, xq, xd);
		double t1 = ocb_now_s();
		tg_gemm_lowbit(xq, xd, n, wq, 1.0f, m, k, y, th);
		double t2 = ocb_now_s();
		tg_gemm(xq, xd, n, wq, 1.0f, m, k, y, th);
		double t3 = ocb_now_s();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, m, k, 1.0f, x, k, w, k, 0.0f,
			    y, m);
		double t4 = ocb_now_s();
		double pops = ocb_peak_int8(1000000, th, NULL);
		double t5 = ocb_now_s();
		bq = t1 - t0 < bq ? t1 - t0 : bq;
		bl = t2 - t1 < bl ? t2 - t1 : bl;
		bi = t3 - t2 < bi ? t3 - t2 : bi;
		bs = t4 - t3 < bs ? t4 - t3 : bs;
		br = pops / (t5 - t4) > br ? pops / (t5 - t4) : br;
	}
	double gi = ops / bi / 1e9, gl = ops / bl / 1e9, gs = ops / bs / 1e9, gr = br / 1e9;
	printf("%d x %d x %d, %d thread(s), best of %d (wall time):\n", n, m, k, th, reps);
	printf("  int8 GEMM (8-bit path) %7.1f GOP/s  (+ activation quantization %.3f ms)\n", gi,
	       bq * 1e3);
	printf("  ternary GEMM (low-bit path) %7.1f GOP/s = %.0f%% of the roof, %.2fx sgemm\n", gl,
	       100 * gl / gr, gl / gs);
	printf("  sgemm      %7.1f GFLOP/s\n", gs);
	printf("  int8 roof  %7.1f GOP/s\n", gr);
	printf("  int8 GEMM = %.0f%% of the roof, %.2fx sgemm\n", 100 * gi / gr, gi / gs);
	return 0;
}
