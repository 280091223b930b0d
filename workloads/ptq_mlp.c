/* ptq_mlp: calibration, Fisher and evaluation passes of the MLP under PTQ. */
#include "ptq_mlp.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "quant_gptq.h"

#define B PTQ_MLP_BATCH

/* Mean cross-entropy per image over the calibration images; with capture, every
 * linear's input (act[i], the images for layer 0) is added to its h. */
static int mlp_calib_pass(void *impl, struct ptq_model *pm, int capture, double *loss)
{
	struct ptq_mlp *a = impl;
	int dim = a->mlp->cfg.dims[0], k = a->mlp->cfg.dims[a->mlp->cfg.nlayers];
	double sum = 0.0;
	long cnt = 0;
	float *probs = malloc((size_t)B * k * sizeof *probs);
	if (!probs)
		return ocb_seterr(OCB_ENOMEM, "quant_accuracy: calibration buffers");
	for (int b = 0; b < a->calib; b += B) {
		int nb = a->calib - b < B ? a->calib - b : B;
		const float *x = a->cx + (size_t)b * dim;
		const float *logits = ocb_mlp_forward(a->mlp, x, nb);
		if (capture)
			for (int i = 0; i < pm->nlin; i++)
				quant_hessian_add(pm->lin[i].h, pm->lin[i].lin->in,
						  i == 0 ? x : a->mlp->act[i], nb);
		sum += nb * ocb_softmax_xent(logits, a->cy + b, nb, k, probs, NULL);
		cnt += nb;
	}
	free(probs);
	*loss = cnt ? sum / (double)cnt : NAN;
	return OCB_OK;
}

/* The softmax-CE gradient propagated by hand through the linears and ReLUs (layer 0
 * computes no input gradient in model_mlp, so a linear impl would not see its dy). */
static int mlp_fisher_pass(void *impl, struct ptq_model *pm)
{
	struct ptq_mlp *a = impl;
	struct ocb_mlp *mlp = a->mlp;
	int rc = OCB_OK, dim = mlp->cfg.dims[0], L = mlp->cfg.nlayers, maxd = 0;
	for (int i = 0; i <= L; i++)
		maxd = mlp->cfg.dims[i] > maxd ? mlp->cfg.dims[i] : maxd;
	float *d = malloc((size_t)B * maxd * sizeof *d);
	float *e = malloc((size_t)B * maxd * sizeof *e);
	float *probs = malloc((size_t)B * maxd * sizeof *probs);
	if (!d || !e || !probs) {
		rc = ocb_seterr(OCB_ENOMEM, "quant_accuracy: Fisher buffers");
		goto out;
	}
	for (int b = 0; b < a->calib; b += B) {
		int nb = a->calib - b < B ? a->calib - b : B;
		const float *logits = ocb_mlp_forward(mlp, a->cx + (size_t)b * dim, nb);
		ocb_softmax_xent(logits, a->cy + b, nb, mlp->cfg.dims[L], probs, d);
		for (int i = L - 1; i >= 0; i--) { /* d [nb][out_i]: dLoss/d(output of layer i) */
			const struct ocb_linear *l = pm->lin[i].lin;
			for (int r = 0; r < nb; r++)
				for (int j = 0; j < l->out; j++) {
					double g = d[(size_t)r * l->out + j];
					pm->lin[i].fisher[j] += g * g;
				}
			if (i == 0)
				break;
			/* e [nb][in] = d W, then the ReLU before layer i: act[i] > 0 */
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, l->in, l->out, 1.0f,
				    d, l->out, l->w, l->in, 0.0f, e, l->in);
			for (size_t k = 0; k < (size_t)nb * l->in; k++)
				d[k] = mlp->act[i][k] > 0.0f ? e[k] : 0.0f;
		}
	}
out:
	free(d);
	free(e);
	free(probs);
	return rc;
}

/* Accuracy on the test set; no loss. */
static int mlp_eval(void *impl, double *metric, double *loss)
{
	struct ptq_mlp *a = impl;
	const struct ocb_idx_set *test = a->test;
	int dim = test->dim, correct = 0;
	float *x = malloc((size_t)B * dim * sizeof *x);
	int *y = malloc(B * sizeof *y), *pred = malloc(B * sizeof *pred);
	if (!x || !y || !pred) {
		free(x);
		free(y);
		free(pred);
		return ocb_seterr(OCB_ENOMEM, "quant_accuracy: eval buffers");
	}
	for (int b = 0; b < test->n; b += B) {
		int nb = test->n - b < B ? test->n - b : B;
		ocb_idx_gather(test, NULL, b, nb, x, y);
		ocb_mlp_predict(a->mlp, x, nb, pred);
		for (int i = 0; i < nb; i++)
			correct += pred[i] == y[i];
	}
	free(x);
	free(y);
	free(pred);
	*metric = (double)correct / test->n;
	*loss = NAN;
	return OCB_OK;
}

static const struct ptq_model_ops mlp_ops = {
	.calib_pass = mlp_calib_pass,
	.fisher_pass = mlp_fisher_pass,
	.eval = mlp_eval,
};

/* `calib` random training images (seeded). */
static int draw_calib(struct ptq_mlp *a, const struct ocb_idx_set *train, uint64_t seed)
{
	int dim = train->dim, n = a->calib;
	a->cx = malloc((size_t)n * dim * sizeof *a->cx);
	a->cy = malloc((size_t)n * sizeof *a->cy);
	int *idx = malloc((size_t)n * sizeof *idx);
	if (!a->cx || !a->cy || !idx) {
		free(idx);
		return ocb_seterr(OCB_ENOMEM, "quant_accuracy: %d calibration images", n);
	}
	struct ocb_rng r;
	ocb_rng_seed(&r, seed ^ 0x7175616e74ULL);
	for (int i = 0; i < n; i++)
		idx[i] = (int)ocb_rng_below(&r, (uint64_t)train->n);
	ocb_idx_gather(train, idx, 0, n, a->cx, a->cy);
	free(idx);
	return OCB_OK;
}

int ptq_mlp_init(struct ptq_mlp *a, struct ocb_mlp *mlp, const struct ocb_idx_set *train,
		 const struct ocb_idx_set *test, int calib, uint64_t seed, struct ptq_model *pm)
{
	int rc;
	memset(a, 0, sizeof *a);
	memset(pm, 0, sizeof *pm);
	if (calib < 1)
		return ocb_seterr(OCB_EINVAL, "quant_accuracy: calib %d < 1", calib);
	if (mlp->cfg.dims[0] != train->dim || mlp->cfg.dims[0] != test->dim)
		return ocb_seterr(OCB_EFORMAT, "quant_accuracy: MLP input %d, images have %d pixels",
				  mlp->cfg.dims[0], train->dim);
	if (mlp->max_batch < B)
		return ocb_seterr(OCB_EINVAL, "quant_accuracy: MLP batch %d < %d", mlp->max_batch, B);
	a->mlp = mlp;
	a->test = test;
	a->calib = calib;
	if ((rc = ptq_model_init(pm, mlp->cfg.nlayers)))
		return rc;
	for (int i = 0; i < pm->nlin; i++) {
		snprintf(pm->lin[i].name, sizeof pm->lin[i].name, "fc%d", i);
		pm->lin[i].lin = &mlp->layer[i];
		pm->lin[i].fuse = -1;
	}
	pm->nparams = mlp->nparams;
	pm->calib_rows = calib;
	pm->ops = &mlp_ops;
	pm->impl = a;
	if ((rc = ptq_model_snapshot(pm)) || (rc = draw_calib(a, train, seed)))
		ptq_mlp_release(a, pm);
	return rc;
}

void ptq_mlp_release(struct ptq_mlp *a, struct ptq_model *pm)
{
	free(a->cx);
	free(a->cy);
	a->cx = NULL;
	a->cy = NULL;
	ptq_model_release(pm);
}
