#include "suite_baseline.h"

#include "../common/ocb_cpu.h"

int ocb_baseline_threads(const struct ocb_ctx *ctx)
{
	return ctx && ctx->threads > 0 ? ctx->threads : ocb_cpu_cores();
}

static const struct ocb_bench *const benches[] = {
	&ocb_bench_sgemm,
	&ocb_bench_sgemv,
	&ocb_bench_stream_copy,
	&ocb_bench_stream_triad,
};

const struct ocb_suite ocb_suite_baseline = {
	.name = "baseline",
	.doc = "OpenBLAS sgemm and sgemv, STREAM copy and triad: the dense and bandwidth baselines",
	.benches = benches,
	.nbenches = sizeof benches / sizeof benches[0],
};
