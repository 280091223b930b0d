/* linear: fp32 path of the linear-layer interface (see linear.h), on OpenBLAS sgemm in
 * tiles of a thread-independent shape (kernels/sgemm_det.h: the same bits at any thread
 * count; the team is the caller's OpenBLAS thread count).
 * All arrays row-major: x [n][in], y [n][out], W [out][in], b [out]. */
#include "linear.h"

#include "../kernels/sgemm_det.h"

/* y[i][:] += b for every row: one contiguous inner loop the compiler vectorizes. */
static void add_bias(float *restrict y, const float *restrict b, int n, int out)
{
	for (int i = 0; i < n; i++) {
		float *restrict yi = y + (size_t)i * out;
#pragma omp simd
		for (int j = 0; j < out; j++)
			yi[j] += b[j];
	}
}

/* gb[j] += sum_i dy[i][j]: rows in order (deterministic), inner loop vectorizable. */
static void sum_rows(float *restrict gb, const float *restrict dy, int n, int out)
{
	for (int i = 0; i < n; i++) {
		const float *restrict di = dy + (size_t)i * out;
#pragma omp simd
		for (int j = 0; j < out; j++)
			gb[j] += di[j];
	}
}

void ocb_linear_forward(const struct ocb_linear *l, const float *x, int n, float *y)
{
	if (n <= 0)
		return;
	if (l->impl && l->impl->forward)
		l->impl->forward(l->impl_state, l, x, n, y);
	else
		/* y[n][out] = x[n][in] * W[out][in]^T */
		ocb_sgemm_det(CblasNoTrans, CblasTrans, n, l->out, l->in, 1.0f, x, l->in, l->w,
			      l->in, 0.0f, y, l->out, 0);
	if (l->b)
		add_bias(y, l->b, n, l->out);
}

void ocb_linear_backward(const struct ocb_linear *l, const float *x, const float *dy, int n,
			 float *dx)
{
	if (n <= 0)
		return;
	/* gW[out][in] += dy[n][out]^T * x[n][in] (skipped for frozen layers: gw == NULL) */
	if (l->gw && l->impl && l->impl->backward_weight)
		l->impl->backward_weight(l->impl_state, l, x, dy, n);
	else if (l->gw)
		ocb_sgemm_det(CblasTrans, CblasNoTrans, l->out, l->in, n, 1.0f, dy, l->out, x,
			      l->in, 1.0f, l->gw, l->in, 0);
	if (l->gb && l->b)
		sum_rows(l->gb, dy, n, l->out);
	if (dx) {
		if (l->impl && l->impl->backward_input)
			l->impl->backward_input(l->impl_state, l, dy, n, dx);
		else
			/* dx[n][in] = dy[n][out] * W[out][in] */
			ocb_sgemm_det(CblasNoTrans, CblasNoTrans, n, l->in, l->out, 1.0f, dy,
				      l->out, l->w, l->in, 0.0f, dx, l->in, 0);
	}
	/* direct training: the weight changes only after dx used it */
	if (l->impl && l->impl->update_weight)
		l->impl->update_weight(l->impl_state, l, x, dy, n);
}

size_t ocb_linear_weight_bytes(const struct ocb_linear *l)
{
	/* The bias stays fp32 in every format. */
	size_t bias = l->b ? (size_t)l->out * sizeof(float) : 0;
	if (l->impl && l->impl->weight_bytes)
		return l->impl->weight_bytes(l->impl_state, l) + bias;
	return (size_t)l->in * l->out * sizeof(float) + bias;
}

double ocb_linear_fwd_flops(const struct ocb_linear *l, int n)
{
	/* 2*n*in*out for the product (one multiply + one add each), n*out for the bias */
	return 2.0 * n * l->in * l->out + (l->b ? (double)n * l->out : 0.0);
}

double ocb_linear_bwd_flops(const struct ocb_linear *l, int n, int with_dx)
{
	/* gW: 2*n*in*out (+ n*out for gb); dx: 2*n*in*out when asked for */
	double f = l->gw ? 2.0 * n * l->in * l->out : 0.0;
	if (l->gb && l->b)
		f += (double)n * l->out;
	if (with_dx)
		f += 2.0 * n * l->in * l->out;
	return f;
}
