/* suite_quant: the `quant` suite (issue 4): quantized GEMV/GEMM kernels of every format
 * against the machine's ceilings and fp32 OpenBLAS; accuracy benches join this table. */
#include "bench.h"

extern const struct ocb_bench ocb_bench_quant_gemv;
extern const struct ocb_bench ocb_bench_quant_gemm;

/* One line per bench, run in this order. */
static const struct ocb_bench *const quant_benches[] = {
	&ocb_bench_quant_gemv,
	&ocb_bench_quant_gemm,
};

const struct ocb_suite ocb_suite_quant = {
	.name = "quant",
	.doc = "low-bit formats: GEMV/GEMM kernels at the memory/compute limits, accuracy vs bits",
	.benches = quant_benches,
	.nbenches = sizeof quant_benches / sizeof quant_benches[0],
};
