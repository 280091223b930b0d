/* qrepack_prob: the test problem and its bound (qrepack_prob.h). */
#include "qrepack_prob.h"

#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../kernels/quant_repack.h"

void rprob_init(struct rprob *p, const struct qformat *f, int64_t m, int64_t k, uint64_t seed)
{
	struct ocb_rng r;
	ocb_rng_seed(&r, seed);
	p->f = f, p->m = m, p->k = k;
	float *x = malloc(sizeof(float) * (size_t)(m * k)), *a = malloc(sizeof(float) * (size_t)k);
	p->w = malloc(qrepack_bytes(f, m, k));
	p->wr = qrepack_alloc(qrepack_bytes(f, m, k));
	p->xq = malloc(qformat_act_bytes(f, 1, k));
	cr_assert(x && a && p->w && p->wr && p->xq);
	for (int64_t i = 0; i < m * k; i++) /* rows of different scales */
		x[i] = (float)ocb_rng_normal(&r) * (0.01f + 0.02f * (float)((i / k) % 5));
	for (int64_t i = 0; i < k; i++)
		a[i] = (float)ocb_rng_normal(&r);
	cr_assert_eq(qformat_quantize(f, x, p->w, m, k), OCB_OK);
	cr_assert_eq(qformat_quantize_act(f, a, p->xq, 1, k), OCB_OK);
	free(x), free(a);
}

void rprob_free(struct rprob *p)
{
	free(p->w), free(p->xq);
	qrepack_free(p->wr);
}

/* Bound on |fp32 result - exact| for any summation order of the per-block products
 * (Higham's gamma_n with n = blocks + 16 additions on a chain, doubled for the two ways the
 * kernels split offsets): 2 (nb + 16) eps sum_b sum_i (|d_b| (|q_i| + 16) + |m_b|) |d_a a_i|,
 * the magnitudes every kernel's partial sums are made of (codes are <= |q| + 8 when stored
 * unsigned, offsets are 8 |d| or |m|). */
double order_bound(const struct rprob *p, int64_t r)
{
	const struct qformat *f = p->f;
	const int64_t nb = p->k / f->act_block;
	float *d = malloc(sizeof(float) * (size_t)nb), *mm = malloc(sizeof(float) * (size_t)nb);
	int8_t *q = malloc((size_t)p->k);
	f->decode_row_ref(p->k, p->w + (size_t)r * qformat_row_bytes(f, p->k), d, mm, q);
	double s = 0;
	const size_t ab = qformat_act_bytes(f, 1, f->act_block);
	for (int64_t b = 0; b < nb; b++) {
		const char *blk = p->xq + (size_t)b * ab;
		float da;
		memcpy(&da, blk, 4);
		const int8_t *aq = (const int8_t *)(blk + 8);
		for (int i = 0; i < f->act_block; i++)
			s += (fabs(d[b]) * (abs(q[b * f->act_block + i]) + 16) + fabs(mm[b])) *
			     fabs((double)da * aq[i]);
	}
	free(d), free(mm), free(q);
	return 2.0 * (double)(nb + 16) * FLT_EPSILON * s + 1e-30;
}

