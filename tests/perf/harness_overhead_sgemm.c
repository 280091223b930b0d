/* harness_overhead_sgemm: issue 2's acceptance check "ocbench within 3% of a bare loop"
 * on the dense baseline. OpenBLAS sgemm n=2048 is timed
 *   harness: ocb_harness_case() on the baseline suite's sgemm bench (median per call);
 *   bare   : a plain loop of cblas_sgemm calls on its own buffers, the same number of
 *            calls the harness took, one clock pair per call (median per call);
 * alternating which goes first over several rounds, so drift of a shared machine hits
 * both alike. Prints GFLOP/s of both and harness/bare per round, and the median ratio.
 * Exit 0 when the median ratio is >= 0.97 (the harness costs at most 3%), 1 otherwise.
 *
 * usage: harness_overhead_sgemm [--n N] [--threads T] [--rounds R] */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../collect/harness.h"
#include "../../collect/host.h"
#include "../../collect/suite_baseline.h"
#include "../../common/ocb_alloc.h"
#include "../../common/ocb_cpu.h"
#include "../../common/ocb_rng.h"
#include "../../common/ocb_stats.h"
#include "../../common/ocb_time.h"

/* The bare loop: reps timed calls after one warm-up; median seconds per call. */
static double bare_sgemm(int n, int threads, long reps)
{
	size_t nn = (size_t)n * (size_t)n;
	float *buf = ocb_alloc(3 * nn * sizeof(float));
	double *t = malloc((size_t)reps * sizeof *t);
	struct ocb_rng rng;
	double med = NAN;
	if (!buf || !t)
		goto out;
	ocb_rng_seed(&rng, 1);
	for (size_t i = 0; i < 2 * nn; i++)
		buf[i] = 2.0f * ocb_rng_uniformf(&rng) - 1.0f;
	openblas_set_num_threads(threads);
	for (long r = -1; r < reps; r++) {
		double t0 = ocb_now_s();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, buf, n,
			    buf + nn, n, 0.0f, buf + 2 * nn, n);
		if (r >= 0)
			t[r] = ocb_now_s() - t0;
	}
	med = ocb_median(t, (size_t)reps);
out:
	free(t);
	ocb_free(buf);
	return med;
}

int main(int argc, char **argv)
{
	int n = 2048, threads = ocb_cpu_cores(), rounds = 4;
	/* OpenBLAS must use kernels for this CPU (see ocb_host_blas_reexec), else both sides
	 * measure its generic fallback. */
	ocb_host_blas_reexec(argv);
	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "--n") == 0)
			n = atoi(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "--threads") == 0)
			threads = atoi(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "--rounds") == 0)
			rounds = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: %s [--n N] [--threads T] [--rounds R]\n", argv[0]);
			return 2;
		}
	}
	if (n < 16 || threads < 1 || rounds < 1 || rounds > 100) {
		fprintf(stderr, "%s: bad --n, --threads or --rounds\n", argv[0]);
		return 2;
	}

	struct ocb_ctx ctx = {.threads = threads, .seed = 1};
	struct ocb_harness_opts o;
	ocb_harness_defaults(&o);
	cJSON *p = cJSON_CreateObject();
	cJSON_AddNumberToObject(p, "n", n);
	double flops = 2.0 * n * (double)n * n;
	double ratios[100];

	printf("OpenBLAS sgemm n=%d, %d thread(s), OpenBLAS core %s\n", n, threads,
	       openblas_get_corename());
	printf("%-6s %-8s %6s %14s %14s %8s\n", "round", "first", "reps", "harness_GF/s",
	       "bare_GF/s", "h/bare");
	for (int r = 0; r < rounds; r++) {
		struct ocb_result res;
		double th = NAN, tb = NAN;
		long reps = 0;
		int harness_first = r % 2 == 0;
		for (int k = 0; k < 2; k++) {
			if ((k == 0) == harness_first) {
				if (ocb_harness_case(&ocb_bench_sgemm, p, &ctx, &o, NULL, &res) != 0 ||
				    strcmp(res.status, "ok") != 0) {
					fprintf(stderr, "harness_overhead_sgemm: %s\n", res.error);
					return 3;
				}
				th = res.st.median;
				reps = res.st.n;
				ocb_result_release(&res);
			} else {
				/* harness first: the same number of calls; bare first: the harness's
				 * last count (or 10 in the first round) */
				tb = bare_sgemm(n, threads, reps > 0 ? reps : 10);
			}
		}
		ratios[r] = tb / th; /* = harness GFLOP/s / bare GFLOP/s */
		printf("%-6d %-8s %6ld %14.1f %14.1f %8.3f\n", r, harness_first ? "harness" : "bare",
		       reps, flops / th * 1e-9, flops / tb * 1e-9, ratios[r]);
	}
	double med = ocb_median(ratios, (size_t)rounds);
	int ok = med >= 0.97;
	printf("median harness/bare = %.3f: %s (issue 2: ocbench within 3%% of the bare loop)\n",
	       med, ok ? "PASS" : "FAIL");
	cJSON_Delete(p);
	return ok ? 0 : 1;
}
