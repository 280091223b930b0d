/* bsr_layer_time: one training step of a block-sparse layer against the same layer dense
 * (see bsr_layer.h, ocb_bsr_layer_time_step). */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_time.h"
#include "bsr_layer.h"
#include "optim.h"

/* AdamW constants of a mid-training step; lr 0 so the timing leaves the weights as they
 * are (the arithmetic is the same: p -= 0 * ...). */
#define TS_B1 0.9f
#define TS_B2 0.999f
#define TS_EPS 1e-8f
#define TS_C1 1.1f
#define TS_C2 1.5f

/* The sparse side, as a training step runs it: forward (Y = X W^T), backward (dW on the
 * stored blocks, dX = dY W when dx), AdamW on the stored blocks. */
static void sparse_step(struct ocb_bsr_layer *L, struct ocb_linear *l, const float *x,
			const float *dy, int n, float *y, float *dx)
{
	ocb_linear_forward(l, x, n, y);
	ocb_linear_backward(l, x, dy, n, dx);
	ocb_bsr_layer_adamw(L, 0.0f, 1e-4f, TS_B1, TS_B2, TS_EPS, TS_C1, TS_C2);
}

/* The dense side: the fp32 layer on OpenBLAS (impl removed for the call), AdamW on every
 * weight. */
static void dense_step(struct ocb_linear *l, const float *x, const float *dy, int n, float *y,
		       float *dx, float *om, float *ov)
{
	const struct ocb_linear_impl *impl = l->impl;
	const void *ist = l->impl_state;
	l->impl = NULL, l->impl_state = NULL;
	ocb_linear_forward(l, x, n, y);
	ocb_linear_backward(l, x, dy, n, dx);
	ocb_adamw_span(l->w, l->gw, om, ov, (size_t)l->in * l->out, 0.0f, 1e-4f, TS_B1, TS_B2,
		       TS_EPS, TS_C1, TS_C2);
	l->impl = impl, l->impl_state = ist;
}

int ocb_bsr_layer_time_step(struct ocb_bsr_layer *L, struct ocb_linear *l, int n, int with_dx,
			    int threads, int reps, double (*clock)(void), double *sparse_s,
			    double *dense_s)
{
	if (!clock)
		clock = ocb_now_s;
	if (n < 1 || n > L->max_rows || reps < 1 || !l->gw)
		return ocb_seterr(OCB_EINVAL, "bsr layer timing: bad arguments (n %d, reps %d)", n,
				  reps);
	size_t nx = (size_t)n * l->in, ny = (size_t)n * l->out, nw = (size_t)l->in * l->out;
	size_t nv = (size_t)L->s.nnzb * L->B * L->B + 1;
	float *x = ocb_alloc(nx * sizeof(float)), *dx = ocb_alloc(nx * sizeof(float));
	float *y = ocb_alloc(ny * sizeof(float)), *dy = ocb_alloc(ny * sizeof(float));
	float *om = ocb_alloc(nw * sizeof(float)), *ov = ocb_alloc(nw * sizeof(float));
	float *keep_m = ocb_alloc(nv * sizeof(float)), *keep_v = ocb_alloc(nv * sizeof(float));
	int rc = OCB_OK;
	if (!x || !dx || !y || !dy || !om || !ov || !keep_m || !keep_v) {
		rc = ocb_seterr(OCB_ENOMEM, "bsr layer timing: out of memory");
		goto out;
	}
	struct ocb_rng r;
	ocb_rng_seed(&r, 7);
	for (size_t i = 0; i < nx; i++)
		x[i] = ocb_rng_uniformf(&r) - 0.5f;
	for (size_t i = 0; i < ny; i++)
		dy[i] = 1e-3f * (ocb_rng_uniformf(&r) - 0.5f);
	ocb_bsr_layer_sync(L, l); /* the dense side reads l->w */
	memcpy(keep_m, L->m, nv * sizeof(float));
	memcpy(keep_v, L->v, nv * sizeof(float));
	*sparse_s = *dense_s = INFINITY;
	for (int k = 0; k < reps; k++) { /* interleaved rounds, best of each side */
		openblas_set_num_threads(1); /* as the trainers during sparse steps */
		double t0 = clock();
		sparse_step(L, l, x, dy, n, y, with_dx ? dx : NULL);
		*sparse_s = fmin(*sparse_s, clock() - t0);
		openblas_set_num_threads(threads > 0 ? threads : 1);
		t0 = clock();
		dense_step(l, x, dy, n, y, with_dx ? dx : NULL, om, ov);
		*dense_s = fmin(*dense_s, clock() - t0);
	}
	openblas_set_num_threads(1);
	memcpy(L->m, keep_m, nv * sizeof(float));
	memcpy(L->v, keep_v, nv * sizeof(float));
	L->w_stale = 0; /* lr 0: s.val still equals l->w */
out:
	ocb_free(x), ocb_free(dx), ocb_free(y), ocb_free(dy), ocb_free(om), ocb_free(ov);
	ocb_free(keep_m), ocb_free(keep_v);
	return rc;
}
