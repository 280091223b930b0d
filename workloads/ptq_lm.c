/* ptq_lm: calibration, Fisher and evaluation passes of the LM under PTQ. */
#include "ptq_lm.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "quant_gptq.h"

#define LM_CALIB_BATCH 8 /* windows per forward in the calibration and Fisher passes */

static void lm_capture_hook(void *ctx, int index, const float *x, int n, int in)
{
	struct ptq_model *pm = ctx;
	if (index >= 0 && index < pm->nlin)
		quant_hessian_add(pm->lin[index].h, in, x, n);
}

static int lm_calib_pass(void *impl, struct ptq_model *pm, int capture, double *loss)
{
	struct ptq_lm *a = impl;
	const int T = a->p.window, nw = a->p.calib_windows;
	int rc = OCB_OK;
	double sum = 0.0;
	long cnt = 0;
	a->lm->on_linear_input = capture ? lm_capture_hook : NULL;
	a->lm->hook_ctx = pm;
	for (int w = 0; w < nw && rc == OCB_OK; w += LM_CALIB_BATCH) {
		int nb = nw - w < LM_CALIB_BATCH ? nw - w : LM_CALIB_BATCH;
		double ls = 0.0;
		long ns = 0;
		rc = lm_forward(a->lm, a->cin + (size_t)w * T, a->ctgt + (size_t)w * T, nb, T, &ls,
				&ns);
		sum += ls;
		cnt += ns;
	}
	a->lm->on_linear_input = NULL;
	a->lm->hook_ctx = NULL;
	*loss = cnt ? sum / (double)cnt : NAN;
	return rc;
}

/* Fisher capture: an fp32 linear impl whose input-gradient product also adds
 * sum_n dy[n][j]^2 to the layer's fisher[j]. Installed only during lm_fisher_pass. */
static void cap_forward(const void *state, const struct ocb_linear *l, const float *x, int n,
			float *y)
{
	(void)state;
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, l->out, l->in, 1.0f, x, l->in,
		    l->w, l->in, 0.0f, y, l->out);
}

static void cap_backward(const void *state, const struct ocb_linear *l, const float *dy, int n,
			 float *dx)
{
	const struct ptq_lin *q = state;
	for (int r = 0; r < n; r++)
		for (int j = 0; j < l->out; j++) {
			double g = dy[(size_t)r * l->out + j];
			q->fisher[j] += g * g;
		}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, l->in, l->out, 1.0f, dy, l->out,
		    l->w, l->in, 0.0f, dx, l->in);
}

static size_t cap_bytes(const void *state, const struct ocb_linear *l)
{
	(void)state;
	return (size_t)l->out * l->in * sizeof(float);
}

static const struct ocb_linear_impl capture_impl = {
	.name = "fp32_fisher_capture",
	.forward = cap_forward,
	.backward_input = cap_backward,
	.weight_bytes = cap_bytes,
};

/* Forward + backward over the calibration windows through the capture impl. */
static int lm_fisher_pass(void *impl, struct ptq_model *pm)
{
	struct ptq_lm *a = impl;
	const int T = a->p.window, nw = a->p.calib_windows;
	int rc = OCB_OK;
	for (int i = 0; i < pm->nlin; i++) {
		pm->lin[i].lin->impl = &capture_impl;
		pm->lin[i].lin->impl_state = &pm->lin[i];
	}
	for (int w = 0; w < nw && rc == OCB_OK; w += LM_CALIB_BATCH) {
		int nb = nw - w < LM_CALIB_BATCH ? nw - w : LM_CALIB_BATCH;
		rc = lm_forward(a->lm, a->cin + (size_t)w * T, a->ctgt + (size_t)w * T, nb, T, NULL,
				NULL);
		if (rc == OCB_OK)
			rc = lm_backward(a->lm);
	}
	for (int i = 0; i < pm->nlin; i++) {
		pm->lin[i].lin->impl = NULL;
		pm->lin[i].lin->impl_state = NULL;
	}
	return rc;
}

static int lm_eval_val(void *impl, double *metric, double *loss)
{
	struct ptq_lm *a = impl;
	long ns = 0;
	return lm_eval(a->lm, a->text->val, a->text->nval, a->p.window, a->p.stride,
		       a->p.eval_batch, a->p.eval_windows, loss, metric, &ns);
}

static const struct ptq_model_ops lm_ops = {
	.calib_pass = lm_calib_pass,
	.fisher_pass = lm_fisher_pass,
	.eval = lm_eval_val,
};

/* Random training windows (seeded) with their next bytes. */
static int draw_windows(struct ptq_lm *a, uint64_t seed)
{
	const struct ocb_text *text = a->text;
	int T = a->p.window, nw = a->p.calib_windows;
	if (text->ntrain < (size_t)T + 1)
		return ocb_seterr(OCB_EINVAL, "%s: training text shorter than one window",
				  text->source);
	a->cin = malloc((size_t)nw * T);
	a->ctgt = malloc((size_t)nw * T * sizeof *a->ctgt);
	if (!a->cin || !a->ctgt)
		return ocb_seterr(OCB_ENOMEM, "quant_accuracy: %d calibration windows", nw);
	struct ocb_rng r;
	ocb_rng_seed(&r, seed ^ 0x6c6d63616cULL);
	for (int w = 0; w < nw; w++) {
		size_t off = ocb_rng_below(&r, text->ntrain - (size_t)T);
		for (int t = 0; t < T; t++) {
			a->cin[(size_t)w * T + t] = text->train[off + t];
			a->ctgt[(size_t)w * T + t] = text->train[off + t + 1];
		}
	}
	return OCB_OK;
}

/* Fused groups: q,k,v of block l share id 2l, gate,up 2l+1; o, down and the head none. */
static int fuse_id(const struct lm_model *lm, int i)
{
	int l = i / LM_LIN_PER_LAYER, k = i % LM_LIN_PER_LAYER;
	if (i >= lm->cfg.n_layers * LM_LIN_PER_LAYER)
		return -1;
	return k <= 2 ? 2 * l : (k == 4 || k == 5) ? 2 * l + 1 : -1;
}

int ptq_lm_init(struct ptq_lm *a, struct lm_model *lm, const struct ocb_text *text,
		const struct ptq_lm_proto *p, uint64_t seed, struct ptq_model *pm)
{
	int rc;
	memset(a, 0, sizeof *a);
	memset(pm, 0, sizeof *pm);
	if (p->calib_windows < 1 || p->window < 2 || p->stride < 1 || p->stride > p->window ||
	    p->eval_batch < 1)
		return ocb_seterr(OCB_EINVAL, "quant_accuracy: bad LM calibration/eval protocol "
				  "(calib_windows %d, window %d, stride %d)",
				  p->calib_windows, p->window, p->stride);
	if (p->window > lm->cfg.ctx)
		return ocb_seterr(OCB_EINVAL, "quant_accuracy: window %d > LM context %d",
				  p->window, lm->cfg.ctx);
	if (!lm->grads)
		return ocb_seterr(OCB_EINVAL, "quant_accuracy: LM without gradients (Fisher pass)");
	a->lm = lm;
	a->text = text;
	a->p = *p;
	if ((rc = ptq_model_init(pm, lm_nlinears(lm))))
		return rc;
	for (int i = 0; i < pm->nlin; i++) {
		const char *name = NULL;
		pm->lin[i].lin = lm_linear(lm, i, &name);
		snprintf(pm->lin[i].name, sizeof pm->lin[i].name, "%s", name ? name : "?");
		pm->lin[i].fuse = fuse_id(lm, i);
	}
	pm->nparams = lm->nparams;
	pm->calib_rows = (long)p->calib_windows * p->window;
	pm->ops = &lm_ops;
	pm->impl = a;
	if ((rc = ptq_model_snapshot(pm)) || (rc = draw_windows(a, seed)))
		ptq_lm_release(a, pm);
	return rc;
}

void ptq_lm_release(struct ptq_lm *a, struct ptq_model *pm)
{
	free(a->cin);
	free(a->ctgt);
	a->cin = NULL;
	a->ctgt = NULL;
	ptq_model_release(pm);
}
