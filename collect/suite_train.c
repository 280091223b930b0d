/* suite_train: the fp32 reference baselines (issue 3). One line per bench. */
#include "bench.h"

extern const struct ocb_bench ocb_bench_train_mlp;

static const struct ocb_bench *const benches[] = {
	&ocb_bench_train_mlp,
};

const struct ocb_suite ocb_suite_train = {
	.name = "train",
	.doc = "fp32 reference training: MLP on Fashion-MNIST (and the byte LM); accuracy, "
	       "loss curves, throughput, memory, MLLOG, checkpoints",
	.benches = benches,
	.nbenches = sizeof benches / sizeof benches[0],
};
