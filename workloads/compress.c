/* compress: the pipeline of compress.h. */
#include "compress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_time.h"
#include "../kernels/quant_formats.h"
#include "calibrate.h"
#include "ptq_lm.h"
#include "quant_gptq.h"

#define CALIB_BATCH 8 /* windows per forward during refinement */

void compress_opts_default(struct compress_opts *o)
{
	*o = (struct compress_opts){.calib_windows = 32, .window = 128, .eval_stride = 64,
				    .eval_windows = 256, .block_steps = 40, .global_steps = 80,
				    .lr = 2e-3f, .seed = 1};
}

/* One quantized linear: w = s (q - z) per group, s = s0 exp(theta). */
struct qlin {
	struct ocb_linear *lin;
	int out, in, ng, glen;
	int64_t cost_bits;
	uint8_t *codes;   /* [out][in] */
	float *zero;      /* [out][ng] */
	float *s0, *theta, *m, *v, *saved; /* [out][ng] each, one allocation (s0) */
};

struct cstate {
	struct lm_model *st, *te;
	struct ptq_lm a;     /* calibration windows, evaluation protocol */
	struct ptq_model pm;
	int nq;
	struct qlin *q;      /* [nq], lm_linear() order */
	long ncal;           /* calibration rows = windows x window */
	float *t_out;        /* [L][ncal][d] teacher's residual stream after each block */
	float *t_prob;       /* [ncal][V] teacher's next-byte distribution */
	long adam_t;
	float lr;
};

static float scale_of(const struct qlin *q, size_t k)
{
	return q->s0[k] * expf(q->theta[k]);
}

/* Writes the dequantized weights of q from its codes, zeros and current scales. */
static void qlin_write(const struct qlin *q)
{
	for (int r = 0; r < q->out; r++)
		for (int i = 0; i < q->in; i++) {
			size_t k = (size_t)r * q->ng + (size_t)(i / q->glen);
			q->lin->w[(size_t)r * q->in + i] =
				scale_of(q, k) * ((float)q->codes[(size_t)r * q->in + i] - q->zero[k]);
		}
}

/* Rounds every scale to fp16 (what is stored) and rewrites the weights. */
static void qlin_round(struct qlin *q)
{
	size_t n = (size_t)q->out * q->ng;
	for (size_t k = 0; k < n; k++) {
		float s = ocb_fp16_to_fp32(ocb_fp32_to_fp16(scale_of(q, k)));
		q->theta[k] = logf(s / q->s0[k]);
	}
	qlin_write(q);
}

static void qlin_free(struct qlin *q)
{
	ocb_free(q->codes);
	ocb_free(q->s0);
}

/* Quantizes linear i of the calibrated model by its plan entry: the pivot. */
static int qlin_pivot(struct cstate *c, int i, const struct compress_plan_layer *pl)
{
	struct ptq_lin *pt = &c->pm.lin[i];
	struct qlin *q = &c->q[i];
	struct quant_cfg cfg = {.bits = pl->bits, .group = pl->group, .sym = 0};
	int rc = quant_cfg_check(&cfg, pt->lin->out, pt->lin->in);
	if (rc)
		return rc;
	q->lin = pt->lin;
	q->out = pt->lin->out, q->in = pt->lin->in;
	q->ng = quant_ngroups(&cfg, q->in), q->glen = quant_group_len(&cfg, q->in);
	q->cost_bits = quant_cost_bits(&cfg, q->out, q->in);
	size_t nw = (size_t)q->out * q->in, ns = (size_t)q->out * q->ng;
	uint8_t *z8 = malloc(ns);
	q->codes = ocb_alloc(nw);
	q->s0 = ocb_alloc(6 * ns * sizeof(float));
	if (!z8 || !q->codes || !q->s0) {
		free(z8);
		return ocb_seterr(OCB_ENOMEM, "compress: %s", pt->name);
	}
	memset(q->s0, 0, 6 * ns * sizeof(float));
	q->theta = q->s0 + ns, q->m = q->s0 + 2 * ns, q->v = q->s0 + 3 * ns;
	q->saved = q->s0 + 4 * ns, q->zero = q->s0 + 5 * ns;
	float *wq = q->lin->w; /* the pivot is written in place */
	if (pl->gptq) {
		struct quant_gptq_cfg gc = {.q = cfg};
		rc = quant_gptq(pt->w0, q->out, q->in, pt->h, &gc, wq, q->s0, z8, NULL);
	} else {
		rc = quant_rtn(pt->w0, q->out, q->in, &cfg, wq, q->s0, z8);
	}
	for (size_t k = 0; rc == OCB_OK && k < ns; k++)
		q->zero[k] = z8[k];
	free(z8);
	/* codes back from the grid values: w = s (q - z) exactly, so q = round(w / s + z) */
	int maxq = (1 << pl->bits) - 1;
	for (int r = 0; rc == OCB_OK && r < q->out; r++)
		for (int j = 0; j < q->in; j++) {
			size_t k = (size_t)r * q->ng + (size_t)(j / q->glen);
			float code = nearbyintf(wq[(size_t)r * q->in + j] / q->s0[k] + q->zero[k]);
			code = code < 0 ? 0 : code > (float)maxq ? (float)maxq : code;
			q->codes[(size_t)r * q->in + j] = (uint8_t)code;
		}
	if (rc == OCB_OK)
		qlin_write(q);
	return rc;
}

/* The teacher's block outputs and next-byte distributions on every calibration window. */
static int teacher_targets(struct cstate *c)
{
	const struct lm_config *cf = &c->te->cfg;
	int T = c->a.p.window, W = c->a.p.calib_windows, L = cf->n_layers, d = cf->d_model;
	int V = cf->vocab;
	c->t_out = ocb_alloc((size_t)L * c->ncal * d * sizeof(float));
	c->t_prob = ocb_alloc((size_t)c->ncal * V * sizeof(float));
	if (!c->t_out || !c->t_prob)
		return ocb_seterr(OCB_ENOMEM, "compress: teacher targets");
	for (int w = 0; w < W; w += CALIB_BATCH) {
		int nb = W - w < CALIB_BATCH ? W - w : CALIB_BATCH;
		size_t row0 = (size_t)w * T, n = (size_t)nb * T;
		int rc = lm_forward(c->te, c->a.cin + row0, NULL, nb, T, NULL, NULL);
		if (rc)
			return rc;
		for (int l = 0; l < L; l++) {
			const float *y = l + 1 < L ? c->te->acts[l + 1].x : c->te->xf;
			memcpy(c->t_out + ((size_t)l * c->ncal + row0) * d, y, n * d * sizeof(float));
		}
		for (size_t r = 0; r < n; r++) {
			const float *z = c->te->logits + r * V;
			float *p = c->t_prob + (row0 + r) * V, mx = z[0], s = 0;
			for (int j = 1; j < V; j++)
				mx = z[j] > mx ? z[j] : mx;
			for (int j = 0; j < V; j++)
				s += (p[j] = expf(z[j] - mx));
			for (int j = 0; j < V; j++)
				p[j] /= s;
		}
	}
	return OCB_OK;
}

/* Objective of the student's last forward over rows [row0, row0 + n) and its gradient
 * placed for the backward: block l < L -> MSE of the block output (into dres);
 * l == L (head, or global) -> KL(teacher || student) per row (into logits). Returns the
 * summed objective (MSE: over rows x d; KL: over rows), scaled by `inv`. */
static double objective_grad(struct cstate *c, int l, size_t row0, size_t n, float inv)
{
	struct lm_model *m = c->st;
	int L = m->cfg.n_layers, d = m->cfg.d_model, V = m->cfg.vocab;
	double obj = 0;
	if (l < L) {
		const float *y = l + 1 < L ? m->acts[l + 1].x : m->xf;
		const float *t = c->t_out + ((size_t)l * c->ncal + row0) * d;
		for (size_t k = 0; k < n * d; k++) {
			float e = y[k] - t[k];
			obj += (double)e * e;
			m->dres[k] = 2.0f * e * inv;
		}
		return obj * inv;
	}
	for (size_t r = 0; r < n; r++) {
		float *z = m->logits + r * V, mx = z[0], s = 0;
		const float *p = c->t_prob + (row0 + r) * V;
		for (int j = 1; j < V; j++)
			mx = z[j] > mx ? z[j] : mx;
		for (int j = 0; j < V; j++)
			s += expf(z[j] - mx);
		float lse = mx + logf(s);
		for (int j = 0; j < V; j++) {
			float lq = z[j] - lse;
			if (p[j] > 0)
				obj += (double)p[j] * (logf(p[j]) - lq);
			z[j] = (expf(lq) - p[j]) * inv; /* dKL/dz = q - p */
		}
	}
	return obj * inv;
}

/* Adam on theta of q from the accumulated weight gradient: dL/ds = sum gw (code - z),
 * dL/dtheta = s dL/ds (Kingma & Ba 2015, betas 0.9, 0.999). */
static void qlin_adam(struct cstate *c, struct qlin *q)
{
	const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
	float c1 = 1.0f - powf(b1, (float)c->adam_t), c2 = 1.0f - powf(b2, (float)c->adam_t);
	for (int r = 0; r < q->out; r++)
		for (int g = 0; g < q->ng; g++) {
			size_t k = (size_t)r * q->ng + g;
			int i0 = g * q->glen, i1 = i0 + q->glen < q->in ? i0 + q->glen : q->in;
			double gs = 0;
			for (int i = i0; i < i1; i++)
				gs += (double)q->lin->gw[(size_t)r * q->in + i] *
				      ((float)q->codes[(size_t)r * q->in + i] - q->zero[k]);
			float gt = (float)gs * scale_of(q, k);
			q->m[k] = b1 * q->m[k] + (1 - b1) * gt;
			q->v[k] = b2 * q->v[k] + (1 - b2) * gt * gt;
			q->theta[k] -= c->lr * (q->m[k] / c1) / (sqrtf(q->v[k] / c2) + eps);
		}
	qlin_write(q);
}

/* Steps of Adam on the scales of linears [q0, q1) against block l's objective (l == L:
 * the logits' KL; backward through the whole model when q0 < the head). *obj0, *obj:
 * the objective of the first and the last step's forward (before their updates). */
static int refine(struct cstate *c, int l, int q0, int q1, int steps, double *obj0,
		  double *obj)
{
	struct lm_model *m = c->st;
	int T = c->a.p.window, W = c->a.p.calib_windows, L = m->cfg.n_layers, rc = OCB_OK;
	float inv = l < L ? 1.0f / ((float)c->ncal * m->cfg.d_model) : 1.0f / (float)c->ncal;
	for (int i = q0; i < q1; i++) {
		size_t ns = (size_t)c->q[i].out * c->q[i].ng;
		memset(c->q[i].m, 0, 2 * ns * sizeof(float)); /* m and v: fresh moments */
	}
	c->adam_t = 0;
	for (int s = 0; s < steps && rc == OCB_OK; s++) {
		lm_zero_grad(m);
		*obj = 0;
		for (int w = 0; w < W && rc == OCB_OK; w += CALIB_BATCH) {
			int nb = W - w < CALIB_BATCH ? W - w : CALIB_BATCH;
			size_t row0 = (size_t)w * T, n = (size_t)nb * T;
			rc = lm_forward(m, c->a.cin + row0, NULL, nb, T, NULL, NULL);
			if (rc)
				break;
			*obj += objective_grad(c, l, row0, n, inv);
			if (l < L)
				rc = lm_backward_block(m, l);
			else if (q0 == c->nq - 1) /* the head alone */
				ocb_linear_backward(&m->head, m->xnf, m->logits, (int)n, NULL);
			else
				rc = lm_backward_logits(m);
		}
		if (s == 0)
			*obj0 = *obj;
		c->adam_t++;
		for (int i = q0; i < q1 && rc == OCB_OK; i++)
			qlin_adam(c, &c->q[i]);
	}
	for (int i = q0; i < q1; i++)
		qlin_round(&c->q[i]);
	return rc;
}

static double peak_rss(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss * 1024.0 : NAN;
}

/* bpw and bytes of the quantized model (fp32 for what is not a linear). */
static void footprint(const struct cstate *c, struct compress_stage *s)
{
	double bits = 0, nw = 0;
	for (int i = 0; i < c->nq; i++) {
		bits += (double)c->q[i].cost_bits;
		nw += (double)c->q[i].out * c->q[i].in;
	}
	s->bpw = bits / nw;
	s->bytes = bits / 8.0 + ((double)c->st->nparams - nw) * 4.0;
}

/* Evaluates, saves the checkpoint, and fills the row's common fields. */
static int finish_stage(struct cstate *c, const struct compress_opts *o,
			struct compress_stage *s, double t0)
{
	int rc = c->pm.ops->eval(c->pm.impl, &s->val_ppl, &s->val_loss);
	s->ran = 1;
	s->seconds = ocb_now_s() - t0;
	if (rc == OCB_OK && o->out_prefix) {
		snprintf(s->ckpt, sizeof s->ckpt, "%s_%s.ckpt", o->out_prefix, s->name);
		rc = lm_save(c->st, s->ckpt);
	}
	s->peak_rss = peak_rss();
	return rc;
}

static void save_scales(struct cstate *c, int restore)
{
	for (int i = 0; i < c->nq; i++) {
		struct qlin *q = &c->q[i];
		size_t ns = (size_t)q->out * q->ng * sizeof(float);
		memcpy(restore ? q->theta : q->saved, restore ? q->saved : q->theta, ns);
		if (restore)
			qlin_write(q);
	}
}

/* Accepts stage s if it beats the best so far, else restores the saved scales. */
static void accept_or_reject(struct cstate *c, struct compress_stage *s, double *best)
{
	s->accepted = isfinite(s->val_ppl) && s->val_ppl < *best;
	if (s->accepted) {
		*best = s->val_ppl;
		save_scales(c, 0);
	} else {
		save_scales(c, 1);
	}
}

static int stage_block(struct cstate *c, const struct compress_opts *o, struct compress_stage *s)
{
	int L = c->st->cfg.n_layers, rc = OCB_OK;
	double obj0 = 0, obj = 0;
	s->calib_obj0 = s->calib_obj = 0;
	for (int l = 0; l < L && rc == OCB_OK; l++) {
		rc = refine(c, l, l * LM_LIN_PER_LAYER, (l + 1) * LM_LIN_PER_LAYER, o->block_steps,
			    &obj0, &obj);
		s->calib_obj0 += obj0;
		s->calib_obj += obj;
	}
	if (rc == OCB_OK) /* the head against the teacher's logits (not in the sums) */
		rc = refine(c, L, c->nq - 1, c->nq, o->block_steps, &obj0, &obj);
	return rc;
}

static int setup(struct cstate *c, const struct ocb_text *text, const struct compress_plan *plan,
		 const struct compress_opts *o)
{
	const struct ptq_lm_proto p = {.calib_windows = o->calib_windows, .window = o->window,
				       .stride = o->eval_stride, .eval_windows = o->eval_windows,
				       .eval_batch = 16};
	int rc = ptq_lm_init(&c->a, c->st, text, &p, o->seed, &c->pm);
	if (rc)
		return rc;
	c->nq = c->pm.nlin;
	c->ncal = (long)o->calib_windows * o->window;
	c->lr = o->lr;
	if (!(c->q = calloc((size_t)c->nq, sizeof *c->q)))
		return ocb_seterr(OCB_ENOMEM, "compress: %d linears", c->nq);
	for (int i = 0; i < plan->n; i++) {
		int found = 0;
		for (int j = 0; j < c->nq && !found; j++)
			found = strcmp(plan->l[i].name, c->pm.lin[j].name) == 0;
		if (!found)
			return ocb_seterr(OCB_EINVAL, "plan names '%s', which the model does not have",
					  plan->l[i].name);
	}
	for (int j = 0; j < c->nq; j++)
		if (!compress_plan_find(plan, c->pm.lin[j].name))
			return ocb_seterr(OCB_EINVAL, "plan has no entry for linear '%s'",
					  c->pm.lin[j].name);
	return teacher_targets(c);
}

static int check_models(const struct lm_model *st, const struct lm_model *te,
			const struct compress_opts *o)
{
	if (!st->grads)
		return ocb_seterr(OCB_EINVAL, "compress: the student needs gradients");
	if (memcmp(&st->cfg, &te->cfg, sizeof st->cfg) != 0 || st->nparams != te->nparams ||
	    memcmp(st->params, te->params, st->nparams * sizeof(float)) != 0)
		return ocb_seterr(OCB_EINVAL, "compress: student and teacher differ");
	if (o->calib_windows < 1 || o->window < 2 || o->window > st->cfg.ctx || o->lr <= 0 ||
	    o->block_steps < 0 || o->global_steps < 0)
		return ocb_seterr(OCB_EINVAL, "compress: bad options (window %d, ctx %d)",
				  o->window, st->cfg.ctx);
	return OCB_OK;
}

int compress_run(struct lm_model *student, struct lm_model *teacher,
		 const struct ocb_text *text, const struct compress_plan *plan,
		 const struct compress_opts *o, struct compress_stage st[CS_NSTAGES])
{
	static const char *const names[CS_NSTAGES] = {"fp32", "pivot", "block", "global"};
	struct cstate c = {.st = student, .te = teacher};
	double t0 = ocb_now_s(), best;
	int rc;

	memset(st, 0, CS_NSTAGES * sizeof *st);
	for (int k = 0; k < CS_NSTAGES; k++) {
		snprintf(st[k].name, sizeof st[k].name, "%s", names[k]);
		st[k].calib_obj0 = st[k].calib_obj = st[k].val_ppl = st[k].val_loss = NAN;
	}
	if ((rc = check_models(student, teacher, o)) || (rc = setup(&c, text, plan, o)))
		goto out;
	st[CS_FP32].bpw = 32;
	st[CS_FP32].bytes = (double)student->nparams * 4;
	if ((rc = finish_stage(&c, o, &st[CS_FP32], t0)))
		goto out;
	st[CS_FP32].accepted = 1;
	t0 = ocb_now_s();
	if ((rc = ptq_calibrate(&c.pm)))
		goto out;
	for (int i = 0; i < c.nq && rc == OCB_OK; i++)
		rc = qlin_pivot(&c, i, compress_plan_find(plan, c.pm.lin[i].name));
	if (rc || (rc = finish_stage(&c, o, &st[CS_PIVOT], t0)))
		goto out;
	st[CS_PIVOT].accepted = 1;
	best = st[CS_PIVOT].val_ppl;
	save_scales(&c, 0);
	for (int k = CS_BLOCK; k <= CS_GLOBAL; k++) {
		int steps = k == CS_BLOCK ? o->block_steps : o->global_steps;
		footprint(&c, &st[k - 1]);
		if (!steps)
			continue;
		t0 = ocb_now_s();
		rc = k == CS_BLOCK ? stage_block(&c, o, &st[k])
				   : refine(&c, student->cfg.n_layers, 0, c.nq, steps,
					    &st[k].calib_obj0, &st[k].calib_obj);
		if (rc || (rc = finish_stage(&c, o, &st[k], t0)))
			goto out;
		accept_or_reject(&c, &st[k], &best);
	}
	footprint(&c, &st[CS_GLOBAL]);
out:
	if (c.q)
		for (int i = 0; i < c.nq; i++)
			qlin_free(&c.q[i]);
	free(c.q);
	ocb_free(c.t_out);
	ocb_free(c.t_prob);
	if (c.pm.lin)
		ptq_lm_release(&c.a, &c.pm);
	return rc;
}

cJSON *compress_stages_json(const struct compress_stage st[CS_NSTAGES])
{
	cJSON *a = cJSON_CreateArray();
	for (int k = 0; a && k < CS_NSTAGES; k++) {
		const struct compress_stage *s = &st[k];
		cJSON *o = cJSON_CreateObject();
		if (!o || !s->ran) {
			cJSON_Delete(o);
			continue;
		}
		cJSON_AddStringToObject(o, "stage", s->name);
		cJSON_AddBoolToObject(o, "accepted", s->accepted);
		const struct {
			const char *k;
			double v;
		} f[] = {{"val_ppl", s->val_ppl},       {"val_loss", s->val_loss},
			 {"calib_obj0", s->calib_obj0}, {"calib_obj", s->calib_obj},
			 {"bpw", s->bpw},               {"bytes", s->bytes},
			 {"seconds", s->seconds},       {"peak_rss", s->peak_rss}};
		for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
			if (isfinite(f[i].v))
				cJSON_AddNumberToObject(o, f[i].k, f[i].v);
			else
				cJSON_AddNullToObject(o, f[i].k);
		cJSON_AddStringToObject(o, "checkpoint", s->ckpt);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}
