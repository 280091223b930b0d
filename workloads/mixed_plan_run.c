/* mixed_plan_run: candidates, errors, solve, install (see the header). */
#include "mixed_plan_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "mixed_precision.h"
#include "quant_gptq.h"

const int ptq_cand_bits[PTQ_MAXCAND] = {2, 3, 4, 8};

int ptq_plan_err_parse(const char *s, enum ptq_plan_err *e)
{
	if (!strcmp(s, "fisher"))
		*e = PTQ_ERR_FISHER;
	else if (!strcmp(s, "output"))
		*e = PTQ_ERR_OUTPUT;
	else if (!strcmp(s, "probe"))
		*e = PTQ_ERR_PROBE;
	else
		return ocb_seterr(OCB_EINVAL, "quant_accuracy: plan_err \"%s\" (fisher, output or "
				  "probe)", s);
	return OCB_OK;
}

/* Candidates of every layer, cache[i*C + k] = Q_k(W_i). */
struct cands {
	int nl;
	struct mixprec_layer *layers; /* [nl] */
	struct mixprec_option *opts;  /* [nl][C] */
	float **cache;                /* [nl][C] */
};

/* The error of candidate qw of linear q under the planner's error (probe: output). */
static int cand_err(const struct ptq_lin *q, const float *qw, enum ptq_plan_err e, double *err)
{
	int out = q->lin->out, in = q->lin->in;
	if (e != PTQ_ERR_FISHER) {
		*err = quant_output_err(q->w0, qw, out, in, q->h);
		return OCB_OK;
	}
	double *rows = malloc((size_t)out * sizeof *rows);
	if (!rows)
		return OCB_ENOMEM;
	quant_output_err_rows(q->w0, qw, out, in, q->h, rows);
	*err = 0.0;
	for (int r = 0; r < out; r++)
		*err += q->fisher[r] * rows[r];
	free(rows);
	return OCB_OK;
}

/* Quantizes linear i at every candidate bit-width and measures each. */
static int layer_cands(const struct ptq_model *m, int i, const struct quant_method *base,
		       const struct ptq_mixed_opts *o, struct cands *c)
{
	const struct ptq_lin *q = &m->lin[i];
	int out = q->lin->out, in = q->lin->in, rc;
	struct mixprec_layer *L = &c->layers[i];
	snprintf(L->name, sizeof L->name, "%s", q->name);
	L->n = (int64_t)out * in;
	L->fuse = o->fuse ? q->fuse : -1;
	L->nopt = PTQ_MAXCAND;
	L->opt = c->opts + (size_t)i * PTQ_MAXCAND;
	for (int k = 0; k < PTQ_MAXCAND; k++) {
		struct quant_method qm = *base;
		struct mixprec_option *op = &c->opts[(size_t)i * PTQ_MAXCAND + k];
		float **qw = &c->cache[(size_t)i * PTQ_MAXCAND + k];
		qm.q.bits = ptq_cand_bits[k];
		if (!(*qw = ocb_alloc((size_t)out * in * sizeof(float))))
			return OCB_ENOMEM;
		if ((rc = quant_apply(&qm, q->w0, out, in, q->h, *qw, &op->cost_bits, NULL)))
			return rc;
		snprintf(op->name, sizeof op->name, "%s_b%d_g%d", quant_method_name(&qm), qm.q.bits,
			 quant_group_len(&qm.q, in));
		op->bits = qm.q.bits;
		op->group = quant_group_len(&qm.q, in);
		if ((rc = cand_err(q, *qw, o->err, &op->err)))
			return rc;
	}
	return OCB_OK;
}

/* Sensitivity scaling (PTQ_ERR_PROBE): the output error says how much a layer's output
 * moves, not what that costs the model. One probe per layer (only that layer at the
 * lowest candidate, the rest fp32) measures the calibration-loss increase d_l; every
 * candidate's error of the layer is scaled by d_l / e_l(lowest), so e_l(c) estimates the
 * loss increase of c while keeping the output error's shape across bits. A layer whose
 * probe does not increase the loss gets error 0 (cheapest candidate). */
static int probe_scale(struct ptq_model *m, struct cands *c)
{
	double l0, l;
	int rc;
	ptq_model_restore(m);
	if ((rc = m->ops->calib_pass(m->impl, m, 0, &l0)))
		return rc;
	for (int i = 0; i < c->nl && rc == OCB_OK; i++) {
		struct ocb_linear *lin = m->lin[i].lin;
		size_t nw = (size_t)lin->out * lin->in;
		memcpy(lin->w, c->cache[(size_t)i * PTQ_MAXCAND], nw * sizeof(float));
		rc = m->ops->calib_pass(m->impl, m, 0, &l);
		memcpy(lin->w, m->lin[i].w0, nw * sizeof(float));
		double e0 = c->opts[(size_t)i * PTQ_MAXCAND].err;
		double sens = (e0 > 0 && l > l0) ? (l - l0) / e0 : 0.0;
		for (int k = 0; k < PTQ_MAXCAND; k++)
			c->opts[(size_t)i * PTQ_MAXCAND + k].err *= sens;
	}
	return rc;
}

/* Solves under the uniform candidate's storage, installs the chosen weights, saves. */
static int solve_install(struct ptq_model *m, const struct cands *c, int uni_k,
			 const char *plan_path, int64_t *bits, double *pred, double *uni_pred)
{
	struct mixprec_plan plan = {0};
	int64_t budget = 0;
	int rc;
	*uni_pred = 0;
	for (int i = 0; i < c->nl; i++) {
		budget += c->opts[(size_t)i * PTQ_MAXCAND + uni_k].cost_bits;
		*uni_pred += c->opts[(size_t)i * PTQ_MAXCAND + uni_k].err;
	}
	if ((rc = mixprec_solve(c->layers, c->nl, budget, &plan)))
		goto out;
	*bits = plan.bits;
	*pred = plan.err;
	for (int i = 0; i < c->nl; i++)
		memcpy(m->lin[i].lin->w, c->cache[(size_t)i * PTQ_MAXCAND + plan.choice[i]],
		       (size_t)c->layers[i].n * sizeof(float));
	rc = mixprec_plan_save(plan_path, c->layers, c->nl, &plan);
out:
	mixprec_plan_release(&plan);
	return rc;
}

int ptq_mixed_run(struct ptq_model *m, const struct quant_method *base,
		  const struct ptq_mixed_opts *o, const char *plan_path, int64_t *bits,
		  double *pred, double *uni_pred)
{
	int rc = OCB_OK, nl = m->nlin, uni_k = -1;
	struct cands c = {
		.nl = nl,
		.layers = calloc((size_t)nl, sizeof *c.layers),
		.opts = calloc((size_t)nl * PTQ_MAXCAND, sizeof *c.opts),
		.cache = calloc((size_t)nl * PTQ_MAXCAND, sizeof *c.cache),
	};
	if (!c.layers || !c.opts || !c.cache) {
		rc = ocb_seterr(OCB_ENOMEM, "quant_accuracy: plan buffers");
		goto out;
	}
	for (int k = 0; k < PTQ_MAXCAND; k++)
		if (ptq_cand_bits[k] == base->q.bits)
			uni_k = k;
	if (uni_k < 0) {
		rc = ocb_seterr(OCB_EINVAL, "mixed precision: %d bits is not a candidate",
				base->q.bits);
		goto out;
	}
	for (int i = 0; i < nl && rc == OCB_OK; i++)
		rc = layer_cands(m, i, base, o, &c);
	if (rc == OCB_OK && o->err == PTQ_ERR_PROBE)
		rc = probe_scale(m, &c);
	if (rc == OCB_OK)
		rc = solve_install(m, &c, uni_k, plan_path, bits, pred, uni_pred);
out:
	if (c.cache)
		for (int i = 0; i < nl * PTQ_MAXCAND; i++)
			ocb_free(c.cache[i]);
	free(c.cache);
	free(c.opts);
	free(c.layers);
	return rc;
}
