/* train_mlp: runs the `train` suite's MLP workload (collect/bench_train_mlp.c) outside
 * the runner and prints its metrics: a stand-alone check of accuracy, time and
 * throughput. The sgemm ceiling is measured here in the same run (best of 5 square
 * 2048 sgemm at the same thread count) so sgemm_fraction is a ratio within one run.
 *
 *   build/perf/train_mlp [--full] [--threads N] [--seed S] [--data-dir D] [--out D]
 * (--out: where MLLOG and checkpoint go; default a new /tmp/ocb-train-mlp-XXXXXX)
 *
 * Without --full it runs the --quick case (1 epoch on 10,000 examples), as `make bench`
 * does. Exit 0 on success, 2 on bad data/usage, 3 on a run-time failure. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../collect/bench.h"
#include "../../common/ocb_alloc.h"
#include "../../common/ocb_cpu.h"
#include "../../common/ocb_error.h"
#include "../../common/ocb_time.h"
#include "../../db/records.h"

extern const struct ocb_bench ocb_bench_train_mlp;

static int print_metric(void *c, const char *workload, long step, const char *key, double v,
			const char *unit)
{
	(void)c;
	if (step < 0)
		printf("%s %-18s %14.6g %s\n", workload, key, v, unit);
	else if (strcmp(key, "train_loss") != 0 || step % 200 < 20)
		printf("%s %-18s step %5ld %10.6g %s\n", workload, key, step, v, unit);
	return 0;
}

static double sgemm_gflops(int threads)
{
	const int n = 2048;
	float *a = ocb_alloc((size_t)n * n * 4), *b = ocb_alloc((size_t)n * n * 4),
	      *c = ocb_alloc((size_t)n * n * 4);
	double best = 0;
	openblas_set_num_threads(threads);
	for (size_t i = 0; a && b && c && i < (size_t)n * n; i++)
		a[i] = b[i] = (float)(i % 7) * 0.1f;
	for (int r = 0; a && b && c && r < 5; r++) {
		double t = ocb_now_s();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n,
			    0.0f, c, n);
		t = ocb_now_s() - t;
		if (2.0 * n * n * n / t / 1e9 > best)
			best = 2.0 * n * n * n / t / 1e9;
	}
	ocb_free(a);
	ocb_free(b);
	ocb_free(c);
	return best;
}

int main(int argc, char **argv)
{
	int full = 0, threads = ocb_cpu_cores();
	unsigned long long seed = 1;
	const char *data = NULL, *out = NULL;
	char tmp[] = "/tmp/ocb-train-mlp-XXXXXX";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--full") == 0)
			full = 1;
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--data-dir") == 0 && i + 1 < argc)
			data = argv[++i];
		else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			out = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--full] [--threads N] [--seed S] "
					"[--data-dir D] [--out D]\n", argv[0]);
			return 2;
		}
	}
	if (!out && !(out = mkdtemp(tmp))) {
		fprintf(stderr, "train_mlp: cannot create a directory under /tmp\n");
		return 3;
	}
	if (threads < 1) {
		fprintf(stderr, "train_mlp: --threads must be >= 1\n");
		return 2;
	}
	struct ocb_ceiling ceil = {.kind = "flops_sgemm", .threads = threads, .unit = "GFLOP/s"};
	ceil.value = sgemm_gflops(threads);
	printf("sgemm 2048 ceiling: %.1f GFLOP/s (%d threads)\n", ceil.value, threads);
	struct ocb_ctx ctx = {.threads = threads, .seed = seed, .quick = !full, .data_dir = data,
			      .out_dir = out, .ceilings = &ceil, .nceilings = 1,
			      .metrics = {NULL, print_metric}};
	const struct ocb_bench *b = &ocb_bench_train_mlp;
	cJSON *cases = b->cases(&ctx);
	void *st = NULL;
	int rc = cases ? OCB_OK : OCB_ENOMEM;
	openblas_set_num_threads(threads);
	if (rc == OCB_OK)
		rc = b->setup(cJSON_GetArrayItem(cases, 0), &ctx, &st);
	double t0 = ocb_now_s();
	if (rc == OCB_OK)
		rc = b->workload(st, &ctx);
	if (rc == OCB_OK)
		printf("workload wall time %.1f s; checkpoint %s/mlp_fp32.ckpt\n", ocb_now_s() - t0,
		       out);
	if (st)
		b->teardown(st);
	cJSON_Delete(cases);
	if (rc) {
		fprintf(stderr, "train_mlp: %s: %s\n", ocb_strerror(rc), ocb_lasterr());
		return ocb_exit_code(rc);
	}
	return 0;
}
