/* qrepack_prob: a random quantized GEMV problem for the r8 / r16 tests (test_qrepack.c,
 * test_qgemv_plan.c), and the bound any summation order keeps its result within. */
#ifndef OCB_TEST_QREPACK_PROB_H
#define OCB_TEST_QREPACK_PROB_H

#include <stdint.h>

#include "../kernels/quant_formats.h"

struct rprob {
	const struct qformat *f;
	int64_t m, k;
	char *w, *wr, *xq; /* plain blocks, a buffer for their repacked copy, activations */
};

/* m x k weights of f (rows of 5 different scales) and one activation row, from seed;
 * wr allocated (qrepack_alloc), not packed. Asserts on failure. */
void rprob_init(struct rprob *p, const struct qformat *f, int64_t m, int64_t k, uint64_t seed);
void rprob_free(struct rprob *p);

/* Bound on |fp32 result of row r - exact| for any summation order of the per-block
 * products (qrepack_prob.c). */
double order_bound(const struct rprob *p, int64_t r);

#endif
