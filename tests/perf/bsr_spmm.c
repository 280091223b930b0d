/* bsr_spmm: the block-sparse SpMM against its peers in one process, the design check of
 * issue 11: W m x k with a random block mask of the given density, X k x n, Y = W X by
 * ocb_bsr_spmm, OpenBLAS sgemm on the dense equivalent and librsb (tuned; tuning timed
 * apart), same threads. Best of `reps` interleaved rounds (the machine is shared).
 *
 *   OPENBLAS_CORETYPE=Haswell build/perf/bsr_spmm [m k n B threads reps density%...]
 *   defaults: 4096 4096 128 32 2 7 10 5; OCB_NO_RSB=1 leaves librsb out (its tuning
 *   takes 5-30 s at high density); OCB_THREAD_CPU=1 with 1 thread times by the calling
 *   thread's CPU clock instead of the wall clock (every peer then runs in that thread: a
 *   loaded machine's descheduling drops out; cache sharing with the other load does not)
 * Prints one line per density: times (ms), GFLOP/s (useful), speedups, max error; on an
 * AVX-512 CPU also the AVX2 body's time (OCB_FORCE_AVX2 flipped inside the same rounds). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include "../../common/ocb_alloc.h"
#include "../../common/ocb_cpu.h"
#include "../../common/ocb_error.h"
#include "../../common/ocb_rng.h"
#include "../../common/ocb_time.h"
#include "../../kernels/bsr.h"
#include "../../kernels/rsb_peer.h"

static int thread_cpu; /* OCB_THREAD_CPU: CLOCK_THREAD_CPUTIME_ID instead of ocb_now_s */

static double now(void)
{
	if (!thread_cpu)
		return ocb_now_s();
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double max_abs_diff(const float *a, const float *b, size_t n)
{
	double e = 0;
	for (size_t i = 0; i < n; i++)
		e = fmax(e, fabs((double)a[i] - b[i]));
	return e;
}

int main(int argc, char **argv)
{
	/* libgomp reads its wait policy at load time: re-exec once with passive waiting, or
	 * idle OpenMP workers spin against OpenBLAS and the other team on a shared 2-core VM
	 * (measured here: 3-8x slower steps under load) */
	if (!getenv("OMP_WAIT_POLICY")) {
		setenv("OMP_WAIT_POLICY", "passive", 1);
		execv("/proc/self/exe", argv);
	}
	int m = argc > 1 ? atoi(argv[1]) : 4096, k = argc > 2 ? atoi(argv[2]) : 4096;
	int n = argc > 3 ? atoi(argv[3]) : 128, B = argc > 4 ? atoi(argv[4]) : 32;
	int threads = argc > 5 ? atoi(argv[5]) : 2, reps = argc > 6 ? atoi(argv[6]) : 7;
	double dens[8] = {10, 5};
	int nd = 2;
	if (argc > 7)
		for (nd = 0; nd < 8 && 7 + nd < argc; nd++)
			dens[nd] = atof(argv[7 + nd]);
	int mb = m / B, kb = k / B, no_rsb = getenv("OCB_NO_RSB") != NULL;
	thread_cpu = getenv("OCB_THREAD_CPU") != NULL && threads == 1;
	float *w = ocb_alloc((size_t)m * k * 4), *x = ocb_alloc((size_t)k * n * 4);
	float *y0 = ocb_alloc((size_t)m * n * 4), *y1 = ocb_alloc((size_t)m * n * 4);
	float *y2 = ocb_alloc((size_t)m * n * 4), *y3 = ocb_alloc((size_t)m * n * 4);
	uint8_t *mask = malloc((size_t)mb * kb);
	struct ocb_rng r;
	ocb_rng_seed(&r, 42);
	for (size_t i = 0; i < (size_t)k * n; i++)
		x[i] = ocb_rng_uniformf(&r) - 0.5f;
	openblas_set_num_threads(threads);
	ocb_rsb_init();
	printf("# %s; W %dx%d, X %dx%d, %dx%d blocks, %d threads, best of %d, %s\n",
	       openblas_get_corename(), m, k, k, n, B, B, threads, reps,
	       thread_cpu ? "thread CPU time" : "wall time");
	printf("# dens%%  dense_ms  bsr_ms  rsb_ms  rsb_tune_s  bsr_GF/s  x_dense  x_rsb  err_bsr  "
	       "err_rsb  avx2_ms\n");
	for (int d = 0; d < nd; d++) {
		for (size_t i = 0; i < (size_t)mb * kb; i++)
			mask[i] = ocb_rng_uniform(&r) * 100.0 < dens[d];
		memset(w, 0, (size_t)m * k * 4);
		for (int bi = 0; bi < mb; bi++)
			for (int bj = 0; bj < kb; bj++)
				if (mask[(size_t)bi * kb + bj])
					for (int a = 0; a < B; a++)
						for (int c = 0; c < B; c++)
							w[(size_t)(bi * B + a) * k + bj * B + c] =
								ocb_rng_uniformf(&r) - 0.5f;
		struct ocb_bsr s;
		struct ocb_rsb rs = {0};
		double t0 = ocb_now_s();
		if (ocb_bsr_from_dense(&s, w, m, k, B, B)) {
			fprintf(stderr, "ocbench: bsr: %s\n", ocb_lasterr());
			return 2;
		}
		double conv = ocb_now_s() - t0;
		int have_rsb = !no_rsb && ocb_rsb_from_bsr(&rs, &s) == OCB_OK &&
			       ocb_rsb_tune(&rs, x, y2, n, threads, 0) == OCB_OK;
		if (!have_rsb && !no_rsb)
			fprintf(stderr, "# librsb: %s\n", ocb_lasterr());
		double best[4] = {1e30, 1e30, 1e30, 1e30};
		int wide = !strcmp(ocb_bsr_path(&s), "avx512");
		for (int it = 0; it < reps; it++) {
			t0 = now();
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, w, k, x,
				    n, 0.0f, y0, n);
			best[0] = fmin(best[0], now() - t0);
			t0 = now();
			ocb_bsr_spmm(&s, x, n, n, y1, n, threads);
			best[1] = fmin(best[1], now() - t0);
			if (have_rsb) {
				t0 = now();
				ocb_rsb_spmm(&rs, x, y2, n, threads);
				best[2] = fmin(best[2], now() - t0);
			}
			if (wide) { /* the AVX2 body on the same matrix, same round */
				setenv("OCB_FORCE_AVX2", "1", 1);
				ocb_cpu_reset();
				t0 = now();
				ocb_bsr_spmm(&s, x, n, n, y3, n, threads);
				best[3] = fmin(best[3], now() - t0);
				unsetenv("OCB_FORCE_AVX2");
				ocb_cpu_reset();
			}
		}
		printf("%6.1f %9.3f %7.3f %7.3f %10.3f %9.1f %8.2f %6.2f %8.1e %8.1e %8.3f  (%s, conv %.3f s, "
		       "density %.3f)\n",
		       dens[d], best[0] * 1e3, best[1] * 1e3, have_rsb ? best[2] * 1e3 : NAN,
		       have_rsb ? rs.tune_time : NAN, ocb_bsr_flops(&s, n) / best[1] / 1e9,
		       best[0] / best[1], have_rsb ? best[2] / best[1] : NAN,
		       max_abs_diff(y0, y1, (size_t)m * n),
		       have_rsb ? max_abs_diff(y0, y2, (size_t)m * n) : NAN,
		       wide ? best[3] * 1e3 : NAN, ocb_bsr_path(&s), conv,
		       ocb_bsr_density(&s));
		if (have_rsb)
			ocb_rsb_release(&rs);
		ocb_bsr_release(&s);
	}
	ocb_rsb_finalize();
	ocb_free(w), ocb_free(x), ocb_free(y0), ocb_free(y1), ocb_free(y2), ocb_free(y3);
	free(mask);
	return 0;
}
