/* suite_baseline: the "baseline" suite — the machine's dense-compute and bandwidth
 * baselines that every other result is read against: OpenBLAS sgemm and sgemv, STREAM
 * copy and triad. One bench per file (bench_*.c); this header names them for tests. */
#ifndef OCB_SUITE_BASELINE_H
#define OCB_SUITE_BASELINE_H

#include "bench.h"

extern const struct ocb_bench ocb_bench_sgemm;        /* bench_sgemm.c */
extern const struct ocb_bench ocb_bench_sgemv;        /* bench_sgemv.c */
extern const struct ocb_bench ocb_bench_stream_copy;  /* bench_stream.c */
extern const struct ocb_bench ocb_bench_stream_triad; /* bench_stream.c */

extern const struct ocb_suite ocb_suite_baseline;

/* Threads a case runs with: ctx->threads, or the online CPUs when it is <= 0. */
int ocb_baseline_threads(const struct ocb_ctx *ctx);

#endif
