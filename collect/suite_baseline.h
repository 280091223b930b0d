/* suite_baseline: the "baseline" suite — the machine's dense-compute and bandwidth
 * baselines that every other result is read against: OpenBLAS sgemm and sgemv, STREAM
 * copy and triad. One bench per file (bench_*.c), declared in registry.h. */
#ifndef OCB_SUITE_BASELINE_H
#define OCB_SUITE_BASELINE_H

#include "registry.h"

/* Threads a case runs with: ctx->threads, or the online CPUs when it is <= 0. */
int ocb_baseline_threads(const struct ocb_ctx *ctx);

#endif
