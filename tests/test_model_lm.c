/* Tests of workloads/model_lm: every layer's backward against central finite differences,
 * the whole tiny model's gradient, the linear interface and hook, the eval protocol. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../workloads/model_lm.h"
#include "cli_util.h"

static void fill(float *x, size_t n, float sd, struct ocb_rng *r)
{
	for (size_t i = 0; i < n; i++)
		x[i] = sd * (float)ocb_rng_normal(r);
}

static double dot(const float *a, const float *b, size_t n)
{
	double s = 0.0;
	for (size_t i = 0; i < n; i++)
		s += (double)a[i] * b[i];
	return s;
}

/* Compares analytic gradient g[n] with numeric num[n]: per element
 * |g - num| <= atol + rtol |num|, and the relative error of the whole vector < rtol. */
static void expect_close(const char *what, const float *g, const double *num, size_t n,
			 double atol, double rtol)
{
	double e2 = 0.0, n2 = 0.0;
	size_t bad = 0, worst = 0;
	double worst_err = -1.0;
	for (size_t i = 0; i < n; i++) {
		double e = fabs(g[i] - num[i]);
		e2 += e * e, n2 += num[i] * num[i];
		if (e > atol + rtol * fabs(num[i]))
			bad++;
		if (e > worst_err)
			worst_err = e, worst = i;
	}
	cr_expect(n2 > 0.0, "%s: numeric gradient is all zero", what);
	cr_expect(bad == 0, "%s: %zu of %zu elements off; worst [%zu] analytic %g numeric %g",
		  what, bad, n, worst, (double)g[worst], num[worst]);
	cr_expect(sqrt(e2 / n2) < rtol, "%s: relative error %g", what, sqrt(e2 / n2));
}

/* Loss functions of the form L = sum(out * R) used for layer checks. */
#define H_FD 1e-3f

/* ---- RMSNorm ---- */
static double rms_loss(const float *x, const float *w, const float *R, int n, int d)
{
	float y[64], r[8];
	lm_rmsnorm_forward(x, w, n, d, 1e-5f, y, r);
	return dot(y, R, (size_t)n * d);
}

Test(lm, rmsnorm_grad)
{
	enum { N = 3, D = 8 };
	struct ocb_rng rng;
	ocb_rng_seed(&rng, 1);
	float x[N * D], w[D], R[N * D], y[N * D], r[N], dx[N * D] = {0}, dw[D] = {0};
	double nx[N * D], nw[D];
	fill(x, N * D, 1.0f, &rng), fill(w, D, 1.0f, &rng), fill(R, N * D, 1.0f, &rng);
	lm_rmsnorm_forward(x, w, N, D, 1e-5f, y, r);
	lm_rmsnorm_backward(x, w, r, R, N, D, dx, dw);
	for (int i = 0; i < N * D; i++) {
		float s = x[i];
		x[i] = s + H_FD;
		double lp = rms_loss(x, w, R, N, D);
		x[i] = s - H_FD;
		double lm = rms_loss(x, w, R, N, D);
		x[i] = s;
		nx[i] = (lp - lm) / (2.0 * H_FD);
	}
	for (int i = 0; i < D; i++) {
		float s = w[i];
		w[i] = s + H_FD;
		double lp = rms_loss(x, w, R, N, D);
		w[i] = s - H_FD;
		double lm = rms_loss(x, w, R, N, D);
		w[i] = s;
		nw[i] = (lp - lm) / (2.0 * H_FD);
	}
	expect_close("rmsnorm dx", dx, nx, N * D, 2e-3, 1e-2);
	expect_close("rmsnorm dw", dw, nw, D, 2e-3, 1e-2);
	/* each output row has mean square w^2-weighted 1: with w = 1 the rms is 1 */
	float ones[D];
	for (int i = 0; i < D; i++)
		ones[i] = 1.0f;
	lm_rmsnorm_forward(x, ones, N, D, 0.0f, y, r);
	cr_expect(fabs(dot(y, y, D) / D - 1.0) < 1e-5);
}

/* ---- RoPE ---- */
enum { RB = 2, RT = 5, RH = 2, RHD = 6, RD = RH * RHD };

static double rope_loss(const float *x, const float *R, const float *c, const float *s)
{
	float y[RB * RT * RD];
	memcpy(y, x, sizeof y);
	lm_rope_apply(y, RB, RT, RH, RHD, c, s, 0);
	return dot(y, R, RB * RT * RD);
}

Test(lm, rope_grad_and_inverse)
{
	struct ocb_rng rng;
	ocb_rng_seed(&rng, 2);
	float c[RT * RHD / 2], s[RT * RHD / 2];
	lm_rope_tables(RT, RHD, 10000.0f, c, s);
	/* position 0 is the identity; the first pair at position 1 turns by 1 radian */
	cr_expect_float_eq(c[0], 1.0f, 1e-7);
	cr_expect_float_eq(s[RHD / 2], sinf(1.0f), 1e-6);
	float x[RB * RT * RD], R[RB * RT * RD], g[RB * RT * RD], y[RB * RT * RD];
	double num[RB * RT * RD];
	fill(x, RB * RT * RD, 1.0f, &rng), fill(R, RB * RT * RD, 1.0f, &rng);
	memcpy(g, R, sizeof g);
	lm_rope_apply(g, RB, RT, RH, RHD, c, s, 1); /* backward = inverse rotation of dy */
	for (int i = 0; i < RB * RT * RD; i++) {
		float v = x[i];
		x[i] = v + H_FD;
		double lp = rope_loss(x, R, c, s);
		x[i] = v - H_FD;
		double lm = rope_loss(x, R, c, s);
		x[i] = v;
		num[i] = (lp - lm) / (2.0 * H_FD);
	}
	expect_close("rope dx", g, num, RB * RT * RD, 2e-3, 1e-2);
	/* rotation: norms kept, inverse undoes it */
	memcpy(y, x, sizeof y);
	lm_rope_apply(y, RB, RT, RH, RHD, c, s, 0);
	cr_expect(fabs(dot(y, y, RB * RT * RD) - dot(x, x, RB * RT * RD)) < 1e-3);
	lm_rope_apply(y, RB, RT, RH, RHD, c, s, 1);
	for (int i = 0; i < RB * RT * RD; i++)
		cr_expect(fabsf(y[i] - x[i]) < 1e-5f);
	/* relative position: <rope(q,t1), rope(k,t2)> depends on t1 - t2 only */
	float q[RD * RT] = {0}, k[RD * RT] = {0};
	for (int t = 0; t < RT; t++)
		for (int j = 0; j < RD; j++)
			q[t * RD + j] = x[j], k[t * RD + j] = R[j];
	lm_rope_apply(q, 1, RT, RH, RHD, c, s, 0);
	lm_rope_apply(k, 1, RT, RH, RHD, c, s, 0);
	double a = dot(q + 3 * RD, k + 1 * RD, RD), b = dot(q + 4 * RD, k + 2 * RD, RD);
	cr_expect(fabs(a - b) < 1e-4, "q.k at (3,1) %g vs (4,2) %g", a, b);
}

/* ---- causal attention ---- */
enum { AB = 2, AT = 6, AH = 2, AHD = 4, AD = AH * AHD, AN = AB * AT * AD };

static double att_loss(const float *q, const float *k, const float *v, const float *R)
{
	float p[AB * AH * AT * AT], o[AN];
	lm_attention_forward(q, k, v, AB, AT, AH, AHD, p, o);
	return dot(o, R, AN);
}

static void att_fd(float *x, const float *q, const float *k, const float *v, const float *R,
		   double *num)
{
	for (int i = 0; i < AN; i++) {
		float s = x[i];
		x[i] = s + H_FD;
		double lp = att_loss(q, k, v, R);
		x[i] = s - H_FD;
		double lm = att_loss(q, k, v, R);
		x[i] = s;
		num[i] = (lp - lm) / (2.0 * H_FD);
	}
}

Test(lm, attention_grad_and_causality)
{
	struct ocb_rng rng;
	ocb_rng_seed(&rng, 3);
	float q[AN], k[AN], v[AN], R[AN], p[AB * AH * AT * AT], o[AN];
	float dp[AB * AH * AT * AT], dq[AN], dk[AN], dv[AN];
	double nq[AN], nk[AN], nv[AN];
	fill(q, AN, 1.0f, &rng), fill(k, AN, 1.0f, &rng), fill(v, AN, 1.0f, &rng);
	fill(R, AN, 1.0f, &rng);
	lm_attention_forward(q, k, v, AB, AT, AH, AHD, p, o);
	lm_attention_backward(q, k, v, p, R, AB, AT, AH, AHD, dp, dq, dk, dv);
	att_fd(q, q, k, v, R, nq);
	att_fd(k, q, k, v, R, nk);
	att_fd(v, q, k, v, R, nv);
	expect_close("attention dq", dq, nq, AN, 2e-3, 1e-2);
	expect_close("attention dk", dk, nk, AN, 2e-3, 1e-2);
	expect_close("attention dv", dv, nv, AN, 2e-3, 1e-2);
	/* rows of P sum to 1 over j <= i and are 0 above the diagonal */
	for (int bh = 0; bh < AB * AH; bh++)
		for (int i = 0; i < AT; i++) {
			double s = 0.0;
			for (int j = 0; j < AT; j++) {
				float pij = p[(bh * AT + i) * AT + j];
				if (j > i)
					cr_expect(pij == 0.0f);
				s += pij;
			}
			cr_expect(fabs(s - 1.0) < 1e-5);
		}
	/* causality: changing the last position's k and v leaves earlier outputs alone */
	float o2[AN];
	for (int b = 0; b < AB; b++)
		for (int j = 0; j < AD; j++) {
			k[(b * AT + AT - 1) * AD + j] += 1.0f;
			v[(b * AT + AT - 1) * AD + j] -= 2.0f;
		}
	lm_attention_forward(q, k, v, AB, AT, AH, AHD, p, o2);
	for (int b = 0; b < AB; b++)
		for (int t = 0; t < AT; t++)
			for (int j = 0; j < AD; j++) {
				size_t i = ((size_t)b * AT + t) * AD + j;
				if (t < AT - 1)
					cr_expect(o2[i] == o[i], "output at t=%d changed", t);
			}
	/* position 0 attends only to itself: its output is its own v (before the change) */
}

/* ---- SwiGLU ---- */
Test(lm, swiglu_grad)
{
	enum { N = 40 };
	struct ocb_rng rng;
	ocb_rng_seed(&rng, 4);
	float g[N], u[N], R[N], dg[N], du[N], y[N];
	double ng[N], nu[N];
	fill(g, N, 2.0f, &rng), fill(u, N, 1.0f, &rng), fill(R, N, 1.0f, &rng);
	lm_swiglu_backward(g, u, R, N, dg, du);
	for (int i = 0; i < N; i++) {
		float s = g[i];
		g[i] = s + H_FD, lm_swiglu_forward(g, u, N, y);
		double lp = dot(y, R, N);
		g[i] = s - H_FD, lm_swiglu_forward(g, u, N, y);
		double lm = dot(y, R, N);
		g[i] = s;
		ng[i] = (lp - lm) / (2.0 * H_FD);
		s = u[i];
		u[i] = s + H_FD, lm_swiglu_forward(g, u, N, y);
		lp = dot(y, R, N);
		u[i] = s - H_FD, lm_swiglu_forward(g, u, N, y);
		lm = dot(y, R, N);
		u[i] = s;
		nu[i] = (lp - lm) / (2.0 * H_FD);
	}
	expect_close("swiglu dgate", dg, ng, N, 2e-3, 1e-2);
	expect_close("swiglu dup", du, nu, N, 2e-3, 1e-2);
	/* SiLU(0) = 0, SiLU(x) -> x for large x */
	float z[2] = {0.0f, 20.0f}, one[2] = {1.0f, 1.0f};
	lm_swiglu_forward(z, one, 2, y);
	cr_expect(y[0] == 0.0f && fabsf(y[1] - 20.0f) < 1e-5f);
}

/* ---- embedding ---- */
Test(lm, embedding_grad)
{
	enum { V = 5, D = 3, N = 7 };
	struct ocb_rng rng;
	ocb_rng_seed(&rng, 5);
	const uint8_t tok[N] = {0, 3, 3, 1, 4, 3, 0};
	float tab[V * D], R[N * D], y[N * D], g[V * D] = {0};
	double num[V * D];
	fill(tab, V * D, 1.0f, &rng), fill(R, N * D, 1.0f, &rng);
	lm_embedding_backward(g, tok, R, N, D);
	for (int i = 0; i < V * D; i++) {
		float s = tab[i];
		tab[i] = s + H_FD, lm_embedding_forward(tab, tok, N, D, y);
		double lp = dot(y, R, N * D);
		tab[i] = s - H_FD, lm_embedding_forward(tab, tok, N, D, y);
		double lm = dot(y, R, N * D);
		tab[i] = s;
		num[i] = (lp - lm) / (2.0 * H_FD);
	}
	/* token 2 never appears: its row's gradient is exactly 0 */
	for (int j = 0; j < D; j++)
		cr_expect(g[2 * D + j] == 0.0f);
	expect_close("embedding", g, num, V * D, 2e-3, 1e-2);
}

/* ---- the whole model ---- */
static void tiny_config(struct lm_config *c)
{
	lm_config_default(c);
	c->d_model = 16, c->n_layers = 2, c->n_heads = 2, c->ctx = 8;
	c->ffn = lm_ffn_width(16);
}

/* Random weights of a larger scale than the training init, so attention is not uniform
 * and every path carries a gradient well above the finite-difference noise. */
static struct lm_model *tiny_model(int with_grads)
{
	struct lm_config c;
	tiny_config(&c);
	struct lm_model *m = NULL;
	cr_assert(lm_create(&c, with_grads, 7, &m) == OCB_OK, "%s", ocb_lasterr());
	struct ocb_rng rng;
	ocb_rng_seed(&rng, 8);
	for (int i = 0; i < lm_ntensors(&c); i++) {
		struct lm_tensor t;
		lm_tensor(m, i, &t);
		for (int k = 0; k < t.rows * t.cols; k++)
			t.data[k] = t.rows == 1 ? 1.0f + 0.3f * (float)ocb_rng_normal(&rng)
						: 0.4f * (float)ocb_rng_normal(&rng);
	}
	return m;
}

static double model_loss(struct lm_model *m, const uint8_t *in, const int32_t *tgt, int B,
			 int T)
{
	double s;
	long n;
	cr_assert(lm_forward(m, in, tgt, B, T, &s, &n) == OCB_OK);
	return s / (double)n;
}

Test(lm, model_grad_tiny)
{
	enum { B = 2, T = 8 };
	struct lm_model *m = tiny_model(1);
	cr_assert_eq(m->cfg.ffn, 48);
	struct ocb_rng rng;
	ocb_rng_seed(&rng, 9);
	uint8_t in[B * T];
	int32_t tgt[B * T];
	/* tokens from a small alphabet so embedding rows are shared; two targets unscored */
	for (int i = 0; i < B * T; i++)
		in[i] = (uint8_t)(60 + ocb_rng_below(&rng, 6)),
		tgt[i] = (int32_t)(60 + ocb_rng_below(&rng, 6));
	tgt[3] = -1, tgt[B * T - 1] = -1;
	lm_zero_grad(m);
	model_loss(m, in, tgt, B, T);
	cr_assert_eq(m->n_scored, B * T - 2);
	cr_assert(lm_backward(m) == OCB_OK);

	/* Every tensor: every element of the small ones, a fixed sample of the large. */
	const float h = 1e-2f;
	for (int ti = 0; ti < lm_ntensors(&m->cfg); ti++) {
		struct lm_tensor t;
		lm_tensor(m, ti, &t);
		int n = t.rows * t.cols, step = n > 400 ? 7 : 1, cnt = 0, base = 0;
		float g[600];
		double num[600];
		if (ti == 0 || ti == lm_ntensors(&m->cfg) - 1) {
			/* embedding and head: the rows of the alphabet carry the gradient */
			base = 60 * t.cols, n = 6 * t.cols, step = 1;
		}
		for (int k = 0; k < n && cnt < 600; k += step) {
			int kk = base + k;
			/* 4th-order central difference (Richardson): the weights are large
			 * enough that the 2nd-order one's h^2 term shows */
			float s = t.data[kk];
			double f[4];
			const float off[4] = {-2.0f * h, -h, h, 2.0f * h};
			for (int j = 0; j < 4; j++) {
				t.data[kk] = s + off[j];
				f[j] = model_loss(m, in, tgt, B, T);
			}
			t.data[kk] = s;
			num[cnt] = (f[0] - 8.0 * f[1] + 8.0 * f[2] - f[3]) / (12.0 * h);
			g[cnt++] = t.grad[kk];
		}
		expect_close(t.name, g, num, (size_t)cnt, 3e-4, 3e-2);
	}
	lm_free(m);
}

Test(lm, grads_accumulate_and_zero)
{
	enum { B = 1, T = 8 };
	struct lm_model *m = tiny_model(1);
	uint8_t in[T] = "abcdefg";
	int32_t tgt[T] = {'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'};
	lm_zero_grad(m);
	model_loss(m, in, tgt, B, T);
	lm_backward(m);
	float *g1 = malloc(m->nparams * sizeof(float));
	memcpy(g1, m->grads, m->nparams * sizeof(float));
	model_loss(m, in, tgt, B, T);
	lm_backward(m);
	/* BLAS accumulates with beta = 1 in its own order: equal to rounding */
	for (size_t i = 0; i < m->nparams; i++)
		cr_assert(fabsf(m->grads[i] - 2.0f * g1[i]) <= 1e-5f * fabsf(g1[i]) + 1e-9f,
			  "gradient %zu did not accumulate: %g after twice %g", i,
			  (double)m->grads[i], (double)g1[i]);
	lm_zero_grad(m);
	for (size_t i = 0; i < m->nparams; i++)
		cr_assert(m->grads[i] == 0.0f);
	free(g1);
	lm_free(m);
}

/* An impl that counts its calls and computes the fp32 product with a plain loop. */
struct count_state {
	int calls[64];
	struct lm_model *m;
};

static void count_forward(const void *state, const struct ocb_linear *l, const float *x, int n,
			  float *y)
{
	struct count_state *s = (struct count_state *)state;
	for (int i = 0; i < lm_nlinears(s->m); i++)
		if (lm_linear(s->m, i, NULL) == l)
			s->calls[i]++;
	for (int r = 0; r < n; r++)
		for (int o = 0; o < l->out; o++)
			y[(size_t)r * l->out + o] = (float)dot(x + (size_t)r * l->in,
							       l->w + (size_t)o * l->in, l->in);
}

static const struct ocb_linear_impl count_impl = {"count", count_forward, NULL, NULL, NULL,
						  NULL};

struct hook_state {
	int calls[64];
	int rows[64], in[64];
	float first[64];
};

static void record_hook(void *ctx, int index, const float *x, int n, int in)
{
	struct hook_state *h = ctx;
	h->calls[index]++, h->rows[index] = n, h->in[index] = in, h->first[index] = x[0];
}

Test(lm, every_linear_through_interface_and_hook)
{
	enum { B = 2, T = 8 };
	struct lm_model *m = tiny_model(0);
	int nl = lm_nlinears(m);
	cr_assert_eq(nl, 2 * 7 + 1);
	const char *name;
	cr_assert(lm_linear(m, 3, &name) == &m->layers[0].wo);
	cr_assert_str_eq(name, "layers.0.wo");
	cr_assert(lm_linear(m, 7 + 6, &name) == &m->layers[1].w_down);
	cr_assert_str_eq(name, "layers.1.w_down");
	cr_assert(lm_linear(m, nl - 1, &name) == &m->head);
	cr_assert_str_eq(name, "head");
	cr_assert_null(lm_linear(m, nl, NULL));
	cr_assert_eq(lm_linear(m, 4, NULL)->out, m->cfg.ffn);
	cr_assert_eq(lm_linear(m, 6, NULL)->in, m->cfg.ffn);

	uint8_t in[B * T];
	int32_t tgt[B * T];
	for (int i = 0; i < B * T; i++)
		in[i] = (uint8_t)(i * 7), tgt[i] = (i * 7 + 1) & 255;
	double base = model_loss(m, in, tgt, B, T);

	struct count_state cs = {.m = m};
	for (int i = 0; i < nl; i++) {
		struct ocb_linear *l = lm_linear(m, i, NULL);
		l->impl = &count_impl, l->impl_state = &cs;
	}
	struct hook_state hs = {0};
	m->on_linear_input = record_hook, m->hook_ctx = &hs;
	double swapped = model_loss(m, in, tgt, B, T);
	for (int i = 0; i < nl; i++) {
		cr_expect_eq(cs.calls[i], 1, "linear %d ran %d times through the impl", i,
			     cs.calls[i]);
		cr_expect_eq(hs.calls[i], 1);
		cr_expect_eq(hs.rows[i], B * T);
		cr_expect_eq(hs.in[i], lm_linear(m, i, NULL)->in);
	}
	/* q, k, v see the same input; the head sees the final normalised state */
	cr_expect(hs.first[0] == m->acts[0].xn1[0] && hs.first[2] == hs.first[0]);
	cr_expect(hs.first[nl - 1] == m->xnf[0]);
	cr_expect(fabs(swapped - base) < 1e-4 * fabs(base), "%g vs %g", swapped, base);
	cr_expect(lm_weight_bytes(m) == m->nparams * sizeof(float));
	lm_free(m);
}

Test(lm, eval_protocol)
{
	struct lm_model *m = tiny_model(0);
	enum { N = 53 };
	uint8_t text[N];
	for (int i = 0; i < N; i++)
		text[i] = (uint8_t)("the quick brown fox "[i % 20]);
	double l1, p1, l2, l3;
	long c1, c2, c3;
	/* non-overlapping windows of 8: every one of the 52 targets scored once */
	cr_assert(lm_eval(m, text, N, 8, 8, 3, 0, &l1, &p1, &c1) == OCB_OK, "%s",
		  ocb_lasterr());
	cr_expect_eq(c1, N - 1);
	cr_expect(fabs(p1 - exp(l1)) < 1e-9 * p1);
	/* the batch size does not change the answer beyond rounding */
	cr_assert(lm_eval(m, text, N, 8, 8, 1, 0, &l2, NULL, &c2) == OCB_OK);
	cr_expect_eq(c2, N - 1);
	cr_expect(fabs(l1 - l2) < 1e-6 * fabs(l1));
	/* strided: still each target once */
	cr_assert(lm_eval(m, text, N, 8, 3, 4, 0, &l3, NULL, &c3) == OCB_OK);
	cr_expect_eq(c3, N - 1);
	/* the first window scores exactly what one manual forward scores */
	double l4;
	long c4;
	cr_assert(lm_eval(m, text, N, 8, 8, 1, 1, &l4, NULL, &c4) == OCB_OK);
	cr_expect_eq(c4, 8);
	int32_t tgt[8];
	for (int i = 0; i < 8; i++)
		tgt[i] = text[i + 1];
	double s;
	long n;
	lm_forward(m, text, tgt, 1, 8, &s, &n);
	cr_expect(fabs(s / n - l4) < 1e-9);
	/* bad protocols are refused */
	cr_expect(lm_eval(m, text, N, 9, 8, 1, 0, NULL, NULL, NULL) == OCB_EINVAL);
	cr_expect(lm_eval(m, text, N, 8, 9, 1, 0, NULL, NULL, NULL) == OCB_EINVAL);
	cr_expect(lm_eval(m, text, 1, 8, 8, 1, 0, NULL, NULL, NULL) == OCB_EINVAL);
	lm_free(m);
}

Test(lm, config_and_layout)
{
	struct lm_config c;
	lm_config_default(&c);
	cr_expect_eq(c.ffn, 344);
	/* 256*128*2 + 4 * (2*128 + 4*128^2 + 3*128*344) + 128 */
	cr_expect_eq(lm_param_count(&c), 65536u + 4u * (256u + 65536u + 132096u) + 128u);
	struct lm_model *m = NULL;
	cr_assert(lm_create(&c, 0, 1, &m) == OCB_OK);
	size_t total = 0;
	for (int i = 0; i < lm_ntensors(&c); i++) {
		struct lm_tensor t;
		lm_tensor(m, i, &t);
		cr_expect(t.data == m->params + total, "%s not contiguous", t.name);
		total += (size_t)t.rows * t.cols;
	}
	cr_expect_eq(total, m->nparams);
	cr_expect_null(m->grads);
	cr_expect(lm_backward(m) == OCB_EINVAL);
	lm_free(m);
	c.n_heads = 3;
	cr_expect(lm_config_check(&c) == OCB_EINVAL);
	c.n_heads = 4, c.vocab = 300;
	cr_expect(lm_config_check(&c) == OCB_EINVAL);
	lm_free(NULL);
}

Test(lm, checkpoint_roundtrip_and_refusal)
{
	char dir[128], path[256], bad[256];
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb_lm")));
	snprintf(path, sizeof path, "%s/lm.ckpt", dir);
	snprintf(bad, sizeof bad, "%s/bad.ckpt", dir);
	struct lm_model *m = tiny_model(0), *r = NULL;
	cr_assert(lm_save(m, path) == OCB_OK, "%s", ocb_lasterr());
	cr_assert(lm_load(path, 1, &r) == OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(r->nparams, m->nparams);
	cr_expect(memcmp(r->params, m->params, m->nparams * sizeof(float)) == 0,
		  "parameters not bit-exact after the round trip");
	cr_expect(memcmp(&r->cfg, &m->cfg, sizeof m->cfg) == 0);
	cr_expect_not_null(r->grads);
	/* one flipped byte in the data is refused (checksum) */
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	rewind(f);
	unsigned char *buf = malloc((size_t)len);
	cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	buf[len / 2] ^= 0x10;
	f = fopen(bad, "wb");
	fwrite(buf, 1, (size_t)len, f);
	fclose(f);
	struct lm_model *b = (struct lm_model *)1;
	cr_expect(lm_load(bad, 0, &b) == OCB_EFORMAT);
	cr_expect_null(b);
	cr_expect(strstr(ocb_lasterr(), "bad.ckpt") != NULL, "%s", ocb_lasterr());
	/* a missing file */
	cr_expect(lm_load("/nonexistent/lm.ckpt", 0, &b) == OCB_ENOENT);
	free(buf);
	unlink(path), unlink(bad), rmdir(dir);
	lm_free(m);
	lm_free(r);
}
