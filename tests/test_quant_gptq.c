/* Tests for workloads/quant_gptq: GPTQ beats RTN on correlated inputs, act-order, dead
 * columns, equivalence with RTN when H is diagonal, grid membership. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_rng.h"
#include "../common/ocb_error.h"
#include "../workloads/quant_gptq.h"

enum { OUT = 48, IN = 192, N = 768, K = 24 };

struct layer {
	float *w, *x, *h, *q;
};

/* W ~ N(0,1); X = Z A + 0.05 noise with Z [N][K] and A [K][IN]: strongly correlated inputs
 * of low effective rank, with per-column scales that vary (some columns matter more). */
static void make_layer(struct layer *L, uint64_t seed)
{
	struct ocb_rng r;
	ocb_rng_seed(&r, seed);
	L->w = malloc(sizeof(float) * OUT * IN);
	L->x = malloc(sizeof(float) * N * IN);
	L->h = calloc((size_t)IN * IN, sizeof(float));
	L->q = malloc(sizeof(float) * OUT * IN);
	float *a = malloc(sizeof(float) * K * IN), *z = malloc(sizeof(float) * N * K);
	for (int i = 0; i < OUT * IN; i++)
		L->w[i] = (float)ocb_rng_normal(&r);
	for (int i = 0; i < K * IN; i++)
		a[i] = (float)ocb_rng_normal(&r) * (1.0f + 3.0f * (i % IN) / IN);
	for (int i = 0; i < N * K; i++)
		z[i] = (float)ocb_rng_normal(&r);
	for (int n = 0; n < N; n++)
		for (int j = 0; j < IN; j++) {
			float s = 0.05f * (float)ocb_rng_normal(&r);
			for (int k = 0; k < K; k++)
				s += z[n * K + k] * a[k * IN + j];
			L->x[n * IN + j] = s;
		}
	free(a);
	free(z);
	quant_hessian_add(L->h, IN, L->x, N);
}

static void free_layer(struct layer *L)
{
	free(L->w);
	free(L->x);
	free(L->h);
	free(L->q);
}

/* ||X W^T - X Q^T||_F^2 computed directly */
static double direct_out_err(const struct layer *L, const float *q)
{
	double e = 0;
	for (int n = 0; n < N; n++)
		for (int o = 0; o < OUT; o++) {
			double d = 0;
			for (int j = 0; j < IN; j++)
				d += (double)L->x[n * IN + j] * (L->w[o * IN + j] - q[o * IN + j]);
			e += d * d;
		}
	return e;
}

Test(gptq, hessian_and_output_error_match_direct)
{
	struct layer L;
	make_layer(&L, 11);
	/* symmetric, diagonal = 2 sum x_j^2 */
	double d0 = 0;
	for (int n = 0; n < N; n++)
		d0 += 2.0 * L.x[n * IN] * L.x[n * IN];
	cr_assert_float_eq(L.h[0], d0, 1e-4 * d0);
	cr_assert_eq(L.h[3 * IN + 5], L.h[5 * IN + 3]);
	struct quant_cfg c = {3, 32, 0};
	cr_assert_eq(quant_rtn(L.w, OUT, IN, &c, L.q, NULL, NULL), 0);
	double a = quant_output_err(L.w, L.q, OUT, IN, L.h), b = direct_out_err(&L, L.q);
	cr_assert_float_eq(a, b, 1e-3 * b);
	double rows[OUT], sum = 0;
	cr_assert_float_eq(quant_output_err_rows(L.w, L.q, OUT, IN, L.h, rows), a, 1e-9 * a);
	for (int r = 0; r < OUT; r++) {
		cr_assert_geq(rows[r], 0.0);
		sum += rows[r];
	}
	cr_assert_float_eq(sum, a, 1e-9 * a);
	free_layer(&L);
}

Test(gptq, beats_rtn_at_3_and_2_bits)
{
	struct layer L;
	make_layer(&L, 12);
	const int groups[] = {32, 0};
	for (int bits = 2; bits <= 4; bits++)
		for (int gi = 0; gi < 2; gi++)
			for (int ao = 0; ao <= 1; ao++) {
				struct quant_gptq_cfg g = {{bits, groups[gi], 0}, ao, 64, 0.01f};
				cr_assert_eq(quant_rtn(L.w, OUT, IN, &g.q, L.q, NULL, NULL), 0);
				double e_rtn = direct_out_err(&L, L.q);
				double loss = -1;
				cr_assert_eq(quant_gptq(L.w, OUT, IN, L.h, &g, L.q, NULL, NULL, &loss),
					     0, "%s", ocb_lasterr());
				double e_gptq = direct_out_err(&L, L.q);
				cr_assert_gt(loss, 0);
				cr_assert_lt(e_gptq, 0.7 * e_rtn, "b%d g%d ao%d: gptq %g rtn %g", bits,
					     groups[gi], ao, e_gptq, e_rtn);
			}
	free_layer(&L);
}

Test(gptq, act_order_keeps_the_grid_and_helps_or_holds)
{
	struct layer L;
	make_layer(&L, 13);
	struct quant_gptq_cfg g = {{3, 32, 0}, 0, 128, 0.01f};
	int ng = IN / 32;
	float *s = malloc(sizeof(float) * OUT * ng);
	uint8_t *z = malloc((size_t)OUT * ng);
	double e[2];
	for (int ao = 0; ao <= 1; ao++) {
		g.act_order = ao;
		cr_assert_eq(quant_gptq(L.w, OUT, IN, L.h, &g, L.q, s, z, NULL), 0);
		e[ao] = direct_out_err(&L, L.q);
		/* every weight is a grid point of its (natural-order) group's scale/zero */
		for (int r = 0; r < OUT; r++)
			for (int i = 0; i < IN; i++) {
				float sc = s[r * ng + i / 32], code = L.q[r * IN + i] / sc + z[r * ng + i / 32];
				cr_assert_float_eq(code, nearbyintf(code), 1e-3, "ao %d", ao);
				cr_assert(code > -0.01f && code < 7.01f);
			}
	}
	cr_assert_lt(e[1], 1.1 * e[0], "act-order %g vs natural %g", e[1], e[0]);
	free(s);
	free(z);
	free_layer(&L);
}

Test(gptq, dead_columns_are_zeroed_and_do_not_break)
{
	struct layer L;
	make_layer(&L, 14);
	const int dead[] = {0, 5, 77, IN - 1};
	memset(L.h, 0, sizeof(float) * IN * IN);
	for (int n = 0; n < N; n++)
		for (int d = 0; d < 4; d++)
			L.x[n * IN + dead[d]] = 0.0f;
	quant_hessian_add(L.h, IN, L.x, N);
	for (int ao = 0; ao <= 1; ao++) {
		struct quant_gptq_cfg g = {{4, 0, 1}, ao, 0, 0};
		cr_assert_eq(quant_gptq(L.w, OUT, IN, L.h, &g, L.q, NULL, NULL, NULL), 0);
		for (int r = 0; r < OUT; r++)
			for (int d = 0; d < 4; d++)
				cr_assert_eq(L.q[r * IN + dead[d]], 0.0f);
		for (int i = 0; i < OUT * IN; i++)
			cr_assert(isfinite(L.q[i]));
	}
	free_layer(&L);
}

Test(gptq, diagonal_hessian_reduces_to_rtn)
{
	/* H diagonal -> H^-1 and U diagonal -> no error is propagated: GPTQ == RTN. */
	struct layer L;
	make_layer(&L, 15);
	memset(L.h, 0, sizeof(float) * IN * IN);
	for (int j = 0; j < IN; j++)
		L.h[j * IN + j] = 1.0f + j;
	float *q2 = malloc(sizeof(float) * OUT * IN);
	const int groups[] = {16, 0};
	for (int gi = 0; gi < 2; gi++) {
		struct quant_gptq_cfg g = {{3, groups[gi], 0}, 1, 32, 0};
		cr_assert_eq(quant_gptq(L.w, OUT, IN, L.h, &g, L.q, NULL, NULL, NULL), 0);
		cr_assert_eq(quant_rtn(L.w, OUT, IN, &g.q, q2, NULL, NULL), 0);
		for (int i = 0; i < OUT * IN; i++)
			cr_assert_float_eq(L.q[i], q2[i], 1e-6, "at %d", i);
	}
	free(q2);
	free_layer(&L);
}

Test(gptq, block_size_does_not_change_the_result_much)
{
	/* Lazy batch updates are an exact reordering of the same arithmetic. */
	struct layer L;
	make_layer(&L, 16);
	float *q2 = malloc(sizeof(float) * OUT * IN);
	struct quant_gptq_cfg a = {{4, 64, 0}, 0, 128, 0}, b = {{4, 64, 0}, 0, 16, 0};
	cr_assert_eq(quant_gptq(L.w, OUT, IN, L.h, &a, L.q, NULL, NULL, NULL), 0);
	cr_assert_eq(quant_gptq(L.w, OUT, IN, L.h, &b, q2, NULL, NULL, NULL), 0);
	int same = 0;
	for (int i = 0; i < OUT * IN; i++)
		same += fabsf(L.q[i] - q2[i]) < 1e-6f;
	cr_assert_gt(same, 0.97 * OUT * IN, "only %d of %d equal", same, OUT * IN);
	double ea = direct_out_err(&L, L.q), eb = direct_out_err(&L, q2);
	cr_assert_float_eq(ea, eb, 0.05 * ea);
	free(q2);
	free_layer(&L);
}

Test(gptq, bad_input)
{
	float w[4] = {1, 2, 3, 4}, h[4] = {1, 0, 0, 1}, q[4];
	struct quant_gptq_cfg g = {{1, 0, 0}, 0, 0, 0};
	cr_assert_lt(quant_gptq(w, 2, 2, h, &g, q, NULL, NULL, NULL), 0);
	g.q.bits = 4;
	cr_assert_lt(quant_gptq(w, 2, 2, NULL, &g, q, NULL, NULL, NULL), 0);
	float hneg[4] = {-5, 0, 0, -5}; /* not positive definite even after damping */
	cr_assert_eq(quant_gptq(w, 2, 2, hneg, &g, q, NULL, NULL, NULL), OCB_ERUNTIME);
}
