/* bench_quant: the shared state and helpers of the `quant` suite's kernel benches
 * (bench_quant_gemv.c, bench_quant_gemm.c). Private to collect/bench_quant_*.c. */
#ifndef OCB_BENCH_QUANT_H
#define OCB_BENCH_QUANT_H

#include <stdint.h>

#include "../kernels/quant_formats.h"
#include "bench.h"

/* One case: Y[n][m] = X[n][k] W^T with W in `f` (NULL: fp32 through OpenBLAS).
 * W is `pool` distinct rows (random N(0, 0.05^2), quantized) repeated down to m rows, so
 * that setup stays fast at 16384 x 16384 and check() needs the scalar reference on the
 * pool rows only; the kernel still streams all m rows. One allocation holds everything. */
struct qbench {
	const struct qformat *f;
	int64_t m, k, n, pool;
	int threads;
	const char *variant; /* "avx2", "ref", "openblas" */
	int one_thread;      /* the GEMV's plan runs it on one thread (threads > 1) */
	void *mem;
	void *w;    /* m rows: qformat_row_bytes(f, k) each, or k floats */
	/* DRAM-level case: `ncopies` identical copies of W, `wstride` bytes apart, used in
	 * turn by successive runs so that their total exceeds twice the last-level cache and
	 * every call streams its weights from DRAM, as a decode step of a model larger than
	 * the cache does (a repeated call would otherwise find part of W in the L3). */
	int ncopies, next;
	size_t wstride;
	float *x;   /* n x k fp32 activations */
	void *xq;   /* n rows of quantized activations (quantized in setup, not timed) */
	float *y;   /* n x m */
	/* GEMV whose chosen kernel runs on the interleaved r8 layout (kernels/quant_repack.h):
	 * the ncopies copies repacked once in setup (qrepack_alloc, `wstride` apart, NULL
	 * otherwise); the time to repack one copy is stored as metric `repack_time_<case>` of
	 * workload "quant_gemv", not counted in the GEMV time. */
	void *wr;
	size_t wrstride; /* bytes between repacked copies */
	double repack_s;
};

/* Parses {"format", "m", "k"[, "n"]} (n defaults to 1) and builds the state. */
int qbench_setup(const cJSON *params, const struct ocb_ctx *ctx, int gemm, void **state);
void qbench_teardown(void *state);
const char *qbench_variant(void *state);
/* struct ocb_bench .team: 1 where the plan runs the GEMV on one thread, else 0 */
int qbench_team(void *state);
/* Runs the product once (gemv when n == 1 and !gemm). */
int qbench_run(struct qbench *q, int gemm);
/* Runs once and compares with the scalar reference (fp32: a double-precision loop) on
 * the pool rows: *err = max |y - ref| / max |ref|; OCB_ECHECK above 1e-4. */
int qbench_check(struct qbench *q, int gemm, double *err);
/* Static work: ops 2 n m k (int8 ops for the quantized formats, FLOPs for f32); bytes =
 * weights incl. scales + activations + output. Bound: the roofline (level from the
 * working set by the roofline module) with compute roof "ops_int8" (quantized),
 * "flops_sgemm" (f32 GEMM) or "flops_fp32" (f32 GEMV). */
int qbench_work(const cJSON *params, int gemm, struct ocb_work *w);
/* How many copies of W (wbytes each) a case rotates over on this machine: 1 unless its
 * working set is at the DRAM level, then enough for a total above twice the LLC. */
int qbench_copies(const cJSON *params, const struct ocb_ctx *ctx, int gemm, double wbytes,
		  int *ncopies);

#endif
