/* Single probes of the ceilings (tests, quick looks): back-to-back trials, no rules,
 * no interleaving; the measured, checked set is collect/ceilings_measure.c. */
#include "ceilings.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_time.h"
#include "../kernels/peak_fma.h"
#include "../kernels/stream.h"

int ocb_ceilings_fma(int threads, int trials, double trial_s, double *gflops)
{
	double sink = 0.0, best = 0.0;
	/* start at about trial_s / 4 at 20 GFLOP/s per thread (see sweep_point) */
	long iters = (long)(trial_s / 4 * 20e9 / ocb_peak_fma_flops_per_iter()) + 1;
	/* Calibrate: grow iters until one call lasts about trial_s. */
	for (;;) {
		double t = ocb_now_s();
		ocb_peak_fma(iters, threads, &sink);
		t = ocb_now_s() - t;
		if (t >= trial_s / 2 || iters > (1L << 40))
			break;
		double f = t > 0 ? trial_s / t : 16.0;
		iters = (long)((double)iters * (f < 16.0 ? f : 16.0)) + 1;
	}
	for (int r = 0; r < trials; r++) {
		double t = ocb_now_s();
		double fl = ocb_peak_fma(iters, threads, &sink);
		t = ocb_now_s() - t;
		if (t > 0 && fl / t > best)
			best = fl / t;
	}
	if (!(sink > 0))
		return ocb_seterr(OCB_ERUNTIME, "FMA peak kernel: accumulators went bad (%g)", sink);
	*gflops = best * 1e-9;
	return OCB_OK;
}

int ocb_ceilings_sgemm(int n, int threads, int trials, double *gflops)
{
	float *buf = NULL, *a, *b, *c;
	size_t nn = (size_t)n * (size_t)n;
	struct ocb_rng rng;
	double best = 0.0;
	int rc = OCB_OK;

	if (n <= 0 || trials <= 0)
		return ocb_seterr(OCB_EINVAL, "sgemm: n %d, trials %d", n, trials);
	buf = ocb_alloc(3 * nn * sizeof(float));
	if (!buf) {
		rc = OCB_ENOMEM;
		goto out;
	}
	a = buf;
	b = a + nn;
	c = b + nn;
	ocb_rng_seed(&rng, 42);
	for (size_t i = 0; i < 2 * nn; i++)
		buf[i] = 2.0f * ocb_rng_uniformf(&rng) - 1.0f;
	openblas_set_num_threads(threads > 0 ? threads : ocb_cpu_cores());
	for (int r = -1; r < trials; r++) { /* r = -1: warm-up (buffers, threads, pages) */
		double t = ocb_now_s();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n,
			    0.0f, c, n);
		t = ocb_now_s() - t;
		double g = 2.0 * (double)n * (double)n * (double)n / t * 1e-9;
		if (r >= 0 && g > best)
			best = g;
	}
	*gflops = best;
out:
	ocb_free(buf);
	return rc;
}

int ocb_ceilings_stream_triad(size_t n, int threads, int trials, double *gbs)
{
	float *buf = NULL;
	double best = INFINITY;
	int rc = OCB_OK;

	n = ocb_round_up(n, 16);
	if (n == 0 || trials < 2)
		return ocb_seterr(OCB_EINVAL, "STREAM triad: n %zu, trials %d (need >= 2)", n, trials);
	buf = ocb_alloc_untouched(3 * n * sizeof(float));
	if (!buf) {
		rc = OCB_ENOMEM;
		goto out;
	}
	/* a, b, c filled by the threads that will use them (STREAM's parallel init). */
	ocb_stream_fill(buf, n, 0.0f, 0.0f, threads);
	ocb_stream_fill(buf + n, n, 1.0f, 0.001f, threads);
	ocb_stream_fill(buf + 2 * n, n, 2.0f, 0.001f, threads);
	for (int r = 0; r < trials; r++) {
		double t = ocb_now_s();
		ocb_stream_triad(buf, buf + n, buf + 2 * n, 3.0f, n, 1, threads);
		t = ocb_now_s() - t;
		if (r > 0 && t < best) /* STREAM skips the first trial */
			best = t;
	}
	*gbs = 3.0 * sizeof(float) * (double)n / best * 1e-9;
out:
	free(buf);
	return rc;
}
