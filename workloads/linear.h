/* linear: the one interface every linear layer of every reference model goes through,
 * so that the quantized, ternary and block-sparse suites swap the weights' format
 * without touching model code.
 *
 * Shapes: x [n][in], y [n][out], W [out][in] row-major (a row per output feature),
 * b [out]. Forward: y = x W^T + b. Backward: dx = dy W, dW += dy^T x, db += sum_n dy.
 * The fp32 path uses OpenBLAS sgemm in fixed tiles (kernels/sgemm_det.h: bit-identical at
 * any thread count; threads: openblas_set_num_threads by the caller).
 * Gradients ACCUMULATE (+=): the caller zeroes its gradient block before a step.
 * A layer with gw == NULL is frozen (no weight gradient); with impl set, forward (and
 * backward_input if given) go through impl, while gW = dy^T x is computed as usual into
 * the fp32 gw (straight-through). Nothing here allocates; all pointers are borrowed. */
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
	/* Direct training (no fp32 master weight, gw NULL): consumes dW = dy^T x itself
	 * (e.g. in tiles, each fed straight to a fused optimizer update), AFTER dx has been
	 * computed through the current weights. NULL: nothing (frozen or gw path). The
	 * state is mutable here: it is the installer's. */
	void (*update_weight)(const void *state, const struct ocb_linear *l, const float *x,
			      const float *dy, int n);
	/* gW += dy[n][out]^T x[n][in] computed by the impl (a block-sparse layer computes it
	 * on its stored blocks only, into its own buffer); NULL: the dense fp32 product
	 * into l->gw. Called only when l->gw is set, before backward_input. */
	void (*backward_weight)(const void *state, const struct ocb_linear *l, const float *x,
				const float *dy, int n);
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

/* Static FLOPs (work model, not measured) of one forward over n rows: 2*n*in*out for the
 * product plus n*out for the bias. */
double ocb_linear_fwd_flops(const struct ocb_linear *l, int n);
/* Static FLOPs of one backward over n rows: 2*n*in*out for gW (when gw is set), n*out for
 * gb (when gb and b are set), and 2*n*in*out more for dx when with_dx != 0. */
double ocb_linear_bwd_flops(const struct ocb_linear *l, int n, int with_dx);

#endif
