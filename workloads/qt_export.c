/* qt_export: TQ2_0/TQ1_0 export of a DQT-ternary MLP, evaluated with qmatmul. */
#include "qt_export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../kernels/quant_gemv.h"

struct xlayer {
	void *q;     /* [out] rows of qformat_row_bytes(f, kp) */
	int kp;      /* in rounded up to 256 */
};

/* Layer q of the set -> blocks; counts values that do not come back exactly. */
static int export_layer(const struct qt_layer *q, const struct qformat *f, struct xlayer *x,
			long *mismatched)
{
	const struct ocb_linear *l = q->l;
	x->kp = (int)ocb_round_up((size_t)l->in, 256);
	size_t rb = qformat_row_bytes(f, x->kp);
	float *w = ocb_alloc((size_t)l->out * x->kp * sizeof(float));
	float *back = ocb_alloc((size_t)x->kp * sizeof(float));
	x->q = ocb_alloc((size_t)l->out * rb);
	int rc = OCB_OK;
	if (!w || !back || !x->q) {
		rc = ocb_seterr(OCB_ENOMEM, "ternary export: out of memory");
		goto out;
	}
	for (int j = 0; j < l->out; j++)
		for (int t = 0; t < l->in; t++)
			w[(size_t)j * x->kp + t] = q->scale * (float)q->codes[(size_t)j * q->ldk + t];
	if ((rc = qformat_quantize(f, w, x->q, l->out, x->kp)))
		goto out;
	for (int j = 0; j < l->out; j++) {
		qformat_dequantize(f, (const char *)x->q + (size_t)j * rb, back, 1, x->kp);
		for (int t = 0; t < x->kp; t++)
			*mismatched += back[t] != w[(size_t)j * x->kp + t];
	}
out:
	ocb_free(w);
	ocb_free(back);
	return rc;
}

/* Forward of n rows through the exported layers (hidden) and the fp32 classifier. */
static int forward(struct ocb_mlp *m, const struct qformat *f, const struct xlayer *xl,
		   const float *x, int n, float *a, float *b, void *act, int threads, float **out)
{
	int L = m->cfg.nlayers, rc;
	const float *cur = x;
	int curk = m->cfg.dims[0];
	for (int i = 0; i < L - 1; i++) {
		const struct ocb_linear *l = &m->layer[i];
		/* zero-padded input rows of kp */
		for (int r = 0; r < n; r++) {
			memcpy(a + (size_t)r * xl[i].kp, cur + (size_t)r * curk, (size_t)curk * 4);
			memset(a + (size_t)r * xl[i].kp + curk, 0, (size_t)(xl[i].kp - curk) * 4);
		}
		if ((rc = qmatmul(f, xl[i].q, l->out, xl[i].kp, a, n, b, act, threads)))
			return rc;
		for (int r = 0; r < n; r++)
			for (int j = 0; j < l->out; j++) {
				float v = b[(size_t)r * l->out + j] + (l->b ? l->b[j] : 0.0f);
				b[(size_t)r * l->out + j] = v > 0.0f ? v : 0.0f;
			}
		/* b is the next input: the next padding copies it into a before b is rewritten */
		cur = b;
		curk = l->out;
	}
	ocb_linear_forward(&m->layer[L - 1], cur, n, m->act[L]);
	*out = m->act[L];
	return OCB_OK;
}

int qt_mlp_export_eval(struct ocb_mlp *m, const struct qt_set *s, const struct qformat *f,
		       const struct ocb_idx_set *test, int threads, struct qt_export_result *r)
{
	int L = m->cfg.nlayers, bs = m->max_batch, k = m->cfg.dims[L], rc = OCB_OK;
	struct xlayer xl[OCB_MLP_MAXLAYERS] = {{0}};
	float *x = NULL, *a = NULL, *b = NULL;
	int *y = NULL;
	void *act = NULL;
	memset(r, 0, sizeof *r);
	if (s->cfg.method != QT_DQT || s->cfg.bits != 2 || s->nlayers != L - 1)
		return ocb_seterr(OCB_EINVAL, "ternary export: needs a DQT-ternary MLP");
	size_t maxk = 0;
	for (int i = 0; i < L - 1 && rc == OCB_OK; i++) {
		rc = export_layer(&s->layer[i], f, &xl[i], &r->mismatched);
		r->weight_bytes += (size_t)m->layer[i].out * qformat_row_bytes(f, xl[i].kp);
		maxk = (size_t)xl[i].kp > maxk ? (size_t)xl[i].kp : maxk;
	}
	if (rc)
		goto out;
	size_t wide = maxk;
	for (int i = 1; i <= L; i++)
		wide = (size_t)m->cfg.dims[i] > wide ? (size_t)m->cfg.dims[i] : wide;
	x = ocb_alloc((size_t)bs * test->dim * sizeof(float));
	a = ocb_alloc((size_t)bs * wide * sizeof(float));
	b = ocb_alloc((size_t)bs * wide * sizeof(float));
	act = ocb_alloc(qformat_act_bytes(f, bs, (int64_t)maxk));
	y = malloc((size_t)bs * sizeof(int));
	if (!x || !a || !b || !act || !y) {
		rc = ocb_seterr(OCB_ENOMEM, "ternary export: out of memory");
		goto out;
	}
	long correct = 0;
	double lsum = 0.0;
	for (int first = 0; first < test->n && rc == OCB_OK; first += bs) {
		int n = test->n - first < bs ? test->n - first : bs;
		float *z;
		ocb_idx_gather(test, NULL, first, n, x, y);
		if ((rc = forward(m, f, xl, x, n, a, b, act, threads, &z)))
			break;
		lsum += ocb_softmax_xent(z, y, n, k, m->probs, NULL) * n;
		for (int i = 0; i < n; i++) {
			const float *zi = z + (size_t)i * k;
			int best = 0;
			for (int j = 1; j < k; j++)
				if (zi[j] > zi[best])
					best = j;
			correct += best == y[i];
		}
	}
	r->accuracy = test->n ? (double)correct / test->n : NAN;
	r->loss = test->n ? lsum / test->n : NAN;
out:
	for (int i = 0; i < L - 1; i++)
		ocb_free(xl[i].q);
	ocb_free(x);
	ocb_free(a);
	ocb_free(b);
	ocb_free(act);
	free(y);
	return rc;
}
