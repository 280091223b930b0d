/* suite_compress: the `compress` suite (issue 13): the progressive compression pipeline
 * of the LM at 4/3/2 bits and under a measured mixed plan (per-stage table), and the
 * decode step whose roofline prediction `inspect` makes, measured. */
#include "bench.h"

extern const struct ocb_bench ocb_bench_decode_pass;
extern const struct ocb_bench ocb_bench_compress;

/* One line per bench, run in this order. */
static const struct ocb_bench *const compress_benches[] = {
	&ocb_bench_decode_pass,
	&ocb_bench_compress,
};

const struct ocb_suite ocb_suite_compress = {
	.name = "compress",
	.doc = "static analysis checked: decode step vs its roofline prediction; progressive "
	       "compression (pivot, block, global) of the LM",
	.benches = compress_benches,
	.nbenches = sizeof compress_benches / sizeof compress_benches[0],
};
