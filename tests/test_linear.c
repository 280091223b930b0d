/* linear: the fp32 sgemm path against naive loops, finite-difference gradients, the
 * impl hook and the weight-byte/FLOP accounting. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_rng.h"
#include "../workloads/linear.h"

static void fill(float *a, size_t n, struct ocb_rng *r, float scale)
{
	for (size_t i = 0; i < n; i++)
		a[i] = scale * (2.0f * ocb_rng_uniformf(r) - 1.0f);
}

/* y = x W^T + b in double */
static void naive_forward(const float *x, const float *w, const float *b, int n, int in,
			  int out, double *y)
{
	for (int i = 0; i < n; i++)
		for (int o = 0; o < out; o++) {
			double s = b ? b[o] : 0.0;
			for (int k = 0; k < in; k++)
				s += (double)x[i * in + k] * w[o * in + k];
			y[i * out + o] = s;
		}
}

Test(linear, forward_backward_match_naive)
{
	enum { N = 7, IN = 13, OUT = 5 };
	struct ocb_rng r;
	ocb_rng_seed(&r, 1);
	float x[N * IN], w[OUT * IN], b[OUT], y[N * OUT], dy[N * OUT], dx[N * IN];
	float gw[OUT * IN], gb[OUT];
	double yr[N * OUT];
	fill(x, N * IN, &r, 1.0f);
	fill(w, OUT * IN, &r, 0.5f);
	fill(b, OUT, &r, 0.5f);
	fill(dy, N * OUT, &r, 1.0f);
	/* gradients accumulate: start from a known non-zero value */
	for (int i = 0; i < OUT * IN; i++)
		gw[i] = 1.0f;
	for (int i = 0; i < OUT; i++)
		gb[i] = -1.0f;
	struct ocb_linear l = {.in = IN, .out = OUT, .w = w, .b = b, .gw = gw, .gb = gb};
	ocb_linear_forward(&l, x, N, y);
	naive_forward(x, w, b, N, IN, OUT, yr);
	for (int i = 0; i < N * OUT; i++)
		cr_assert(fabs(y[i] - yr[i]) < 1e-5, "y[%d] %g vs %g", i, y[i], yr[i]);

	ocb_linear_backward(&l, x, dy, N, dx);
	for (int o = 0; o < OUT; o++) {
		double sb = -1.0;
		for (int i = 0; i < N; i++)
			sb += dy[i * OUT + o];
		cr_assert(fabs(gb[o] - sb) < 1e-5);
		for (int k = 0; k < IN; k++) {
			double s = 1.0;
			for (int i = 0; i < N; i++)
				s += (double)dy[i * OUT + o] * x[i * IN + k];
			cr_assert(fabs(gw[o * IN + k] - s) < 1e-5, "gw %g vs %g", gw[o * IN + k], s);
		}
	}
	for (int i = 0; i < N; i++)
		for (int k = 0; k < IN; k++) {
			double s = 0.0;
			for (int o = 0; o < OUT; o++)
				s += (double)dy[i * OUT + o] * w[o * IN + k];
			cr_assert(fabs(dx[i * IN + k] - s) < 1e-5);
		}
}

/* L = sum(y * c) for a fixed c: dL/dy = c. Central differences on w, b and x. */
static double loss_of(const struct ocb_linear *l, const float *x, const float *c, int n)
{
	float *y = malloc(sizeof(float) * n * l->out);
	ocb_linear_forward(l, x, n, y);
	double s = 0.0;
	for (int i = 0; i < n * l->out; i++)
		s += (double)y[i] * c[i];
	free(y);
	return s;
}

Test(linear, finite_difference_gradients)
{
	enum { N = 4, IN = 6, OUT = 3 };
	struct ocb_rng r;
	ocb_rng_seed(&r, 2);
	float x[N * IN], w[OUT * IN], b[OUT], c[N * OUT], dx[N * IN], gw[OUT * IN] = {0},
								  gb[OUT] = {0};
	fill(x, N * IN, &r, 1.0f);
	fill(w, OUT * IN, &r, 1.0f);
	fill(b, OUT, &r, 1.0f);
	fill(c, N * OUT, &r, 1.0f);
	struct ocb_linear l = {.in = IN, .out = OUT, .w = w, .b = b, .gw = gw, .gb = gb};
	ocb_linear_backward(&l, x, c, N, dx);
	const float eps = 1e-2f; /* the loss is linear in each variable: FD is exact-ish */
	float *vars[3] = {w, b, x};
	float *grads[3] = {gw, gb, dx};
	int counts[3] = {OUT * IN, OUT, N * IN};
	for (int v = 0; v < 3; v++)
		for (int i = 0; i < counts[v]; i++) {
			float keep = vars[v][i];
			vars[v][i] = keep + eps;
			double lp = loss_of(&l, x, c, N);
			vars[v][i] = keep - eps;
			double lm = loss_of(&l, x, c, N);
			vars[v][i] = keep;
			double fd = (lp - lm) / (2.0 * eps);
			double an = grads[v][i];
			cr_assert(fabs(fd - an) <= 1e-2 * fmax(1.0, fabs(an)),
				  "var %d idx %d: fd %g analytic %g", v, i, fd, an);
		}
}

/* A fake impl that doubles W: proves forward/backward_input and weight_bytes route
 * through it and that the bias is still added by the interface. */
static int calls_fwd, calls_bwd;
static void dbl_forward(const void *st, const struct ocb_linear *l, const float *x, int n,
			float *y)
{
	(void)st;
	calls_fwd++;
	for (int i = 0; i < n; i++)
		for (int o = 0; o < l->out; o++) {
			float s = 0;
			for (int k = 0; k < l->in; k++)
				s += x[i * l->in + k] * 2.0f * l->w[o * l->in + k];
			y[i * l->out + o] = s;
		}
}
static void dbl_backward(const void *st, const struct ocb_linear *l, const float *dy, int n,
			 float *dx)
{
	(void)st;
	calls_bwd++;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < l->in; k++) {
			float s = 0;
			for (int o = 0; o < l->out; o++)
				s += dy[i * l->out + o] * 2.0f * l->w[o * l->in + k];
			dx[i * l->in + k] = s;
		}
}
static size_t dbl_bytes(const void *st, const struct ocb_linear *l)
{
	(void)st;
	return (size_t)l->in * l->out / 4; /* pretend 2 bits per weight */
}

Test(linear, impl_hook)
{
	enum { N = 3, IN = 8, OUT = 4 };
	static const struct ocb_linear_impl dbl = {"double", dbl_forward, dbl_backward,
						   dbl_bytes, NULL, NULL};
	struct ocb_rng r;
	ocb_rng_seed(&r, 3);
	float x[N * IN], w[OUT * IN], b[OUT], y[N * OUT], y2[N * OUT], dy[N * OUT];
	float dx[N * IN], dx2[N * IN], gw[OUT * IN] = {0};
	fill(x, N * IN, &r, 1.0f);
	fill(w, OUT * IN, &r, 1.0f);
	fill(b, OUT, &r, 1.0f);
	fill(dy, N * OUT, &r, 1.0f);
	struct ocb_linear l = {.in = IN, .out = OUT, .w = w, .b = b, .gw = gw};
	cr_assert_eq(ocb_linear_weight_bytes(&l), (size_t)(IN * OUT + OUT) * 4);
	ocb_linear_forward(&l, x, N, y);
	ocb_linear_backward(&l, x, dy, N, dx);
	l.impl = &dbl;
	ocb_linear_forward(&l, x, N, y2);
	ocb_linear_backward(&l, x, dy, N, dx2);
	cr_assert_eq(calls_fwd, 1);
	cr_assert_eq(calls_bwd, 1);
	for (int i = 0; i < N * OUT; i++) /* 2 (y - b) + b */
		cr_assert(fabs(y2[i] - (2.0f * (y[i] - b[i % OUT]) + b[i % OUT])) < 1e-4);
	for (int i = 0; i < N * IN; i++)
		cr_assert(fabs(dx2[i] - 2.0f * dx[i]) < 1e-4);
	cr_assert_eq(ocb_linear_weight_bytes(&l), (size_t)(IN * OUT / 4 + OUT * 4));
}

Test(linear, flops)
{
	float w[6], b[3], gw[6], gb[3];
	struct ocb_linear l = {.in = 2, .out = 3, .w = w, .b = b, .gw = gw, .gb = gb};
	cr_assert_eq(ocb_linear_fwd_flops(&l, 10), 2.0 * 10 * 6 + 30);
	cr_assert_eq(ocb_linear_bwd_flops(&l, 10, 0), 2.0 * 10 * 6 + 30);
	cr_assert_eq(ocb_linear_bwd_flops(&l, 10, 1), 4.0 * 10 * 6 + 30);
}
