/* linear: the one interface every linear layer of every reference model goes through,
 * so that the quantized, ternary and block-sparse suites swap the weights' format
 * without touching model code.
 *
 * Shapes: x [n][in], y [n][out], W [out][in] row-major (a row per output feature),
 * b [out]. Forward: y = x W^T + b. Backward: dx = dy W, dW += dy^T x, db += sum_n dy.
 * The fp32 path uses OpenBLAS sgemm. */
#ifndef OCB_LINEAR_H
#define OCB_LINEAR_H

#include <stddef.h>

struct ocb_linear;

/* A replacement weight format for the forward (and optionally backward) product.
 * `state` belongs to whoever installed the impl (a quantizer, a sparsifier). */
struct ocb_linear_impl {
	const char *name; /* "q4_0", "ternary", "bsr16", ... */
	/* y[n][out] = x[n][in] Wq^T (bias is added by ocb_linear_forward). */
	void (*forward)(const void *state, const struct ocb_linear *l, const float *x, int n,
			float *y);
	/* dx[n][in] = dy[n][out] Wq (the straight-through / direct-training input grad);
	 * NULL: use the fp32 W. */
	void (*backward_input)(const void *state, const struct ocb_linear *l, const float *dy,
			       int n, float *dx);
	/* Bytes of weight storage in this format (incl. scales/indices), for footprints. */
	size_t (*weight_bytes)(const void *state, const struct ocb_linear *l);
};

struct ocb_linear {
	int in, out;
	float *w, *b;   /* views into the model's parameter block; b may be NULL */
	float *gw, *gb; /* views into the model's gradient block (NULL in inference) */
	const struct ocb_linear_impl *impl; /* NULL: plain fp32 */
	const void *impl_state;
};

/* y[n][out] = x W^T + b, through impl when set. */
void ocb_linear_forward(const struct ocb_linear *l, const float *x, int n, float *y);
/* Accumulates gw, gb from (x, dy); writes dx[n][in] unless dx is NULL. */
void ocb_linear_backward(const struct ocb_linear *l, const float *x, const float *dy, int n,
			 float *dx);
/* Weight bytes of the layer in its current format (fp32: in*out*4 + out*4 for bias). */
size_t ocb_linear_weight_bytes(const struct ocb_linear *l);

#endif
