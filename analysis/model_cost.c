/* model_cost: counting rules in model_cost.h. FLOP counts follow Kaplan et al. 2020
 * ("Scaling Laws", Table 1: 2 N + 2 n_layer n_ctx d_attn per token forward; here with
 * the KV length and GQA made explicit); block sizes from kernels/quant_formats.h. */
#include "model_cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/ocb_error.h"
#include "../kernels/quant_formats.h"

static const char *const wf_names[WF_N] = {"f32",   "f16",   "q8_0", "q4_0", "q4_1",
					   "tq2_0", "tq1_0", "q3_g", "q2_g"};

const char *ocb_wfmt_name(int f)
{
	return f >= 0 && f < WF_N ? wf_names[f] : NULL;
}

int ocb_wfmt_find(const char *name)
{
	for (int f = 0; f < WF_N; f++)
		if (strcasecmp(wf_names[f], name) == 0)
			return f;
	return -1;
}

/* Elements and bytes per block of format f. */
static void wf_block(int f, int64_t *blk, double *bytes)
{
	if (f == WF_F32 || f == WF_F16) {
		*blk = 1;
		*bytes = f == WF_F32 ? 4 : 2;
		return;
	}
	const struct qformat *q = qformat_find(wf_names[f]);
	*blk = q->block;
	*bytes = (double)q->block_bytes;
}

double ocb_wfmt_bpw(int f)
{
	int64_t blk;
	double b;
	wf_block(f, &blk, &b);
	return 8.0 * b / (double)blk;
}

double ocb_wfmt_matrix_bytes(int f, int64_t rows, int64_t in)
{
	int64_t blk;
	double b;
	wf_block(f, &blk, &b);
	return (double)rows * (double)((in + blk - 1) / blk) * b;
}

/* A layer's matrices: rows x in each, `count` of them. */
struct mat {
	int64_t rows, in;
};

static void add_mats(struct ocb_cost_layer *l, const struct mat *m, int nm, double vec)
{
	for (int i = 0; i < nm; i++) {
		double n = (double)m[i].rows * (double)m[i].in;
		l->mat_params += n;
		for (int f = 0; f < WF_N; f++)
			l->wbytes[f] += ocb_wfmt_matrix_bytes(f, m[i].rows, m[i].in);
	}
	l->params = l->mat_params + vec;
	for (int f = 0; f < WF_N; f++)
		l->wbytes[f] += 4.0 * vec;
}

static void llama_block(const struct ocb_model_spec *s, int64_t ctx, int64_t B,
			struct ocb_cost_layer *l)
{
	int64_t d = s->d_model, q = s->n_heads * s->head_dim, kv = s->n_kv_heads * s->head_dim;
	const struct mat m[] = {{q, d}, {kv, d}, {kv, d}, {d, q},
				{s->ffn, d}, {s->ffn, d}, {d, s->ffn}};
	add_mats(l, m, 7, 2.0 * (double)d);
	double att = 4.0 * (double)q; /* QK^T + PV per attended position */
	l->attn_decode = att * (double)ctx;
	l->attn_prefill = att * (double)(ctx + 1) / 2.0;
	l->flops_decode = 2.0 * l->mat_params + l->attn_decode;
	l->flops_prefill = 2.0 * l->mat_params + l->attn_prefill;
	double kv_pos = 2.0 * (double)kv * 2.0; /* K and V of one position, f16 */
	l->kv_bytes = kv_pos * (double)ctx * (double)B;
	for (int f = 0; f < WF_N; f++)
		l->read_decode[f] = l->wbytes[f] + kv_pos * (double)ctx * (double)B;
	double bt = (double)B * (double)ctx;
	l->act_bytes = 4.0 * (bt * (double)(3 * d + 2 * q + 2 * kv + 3 * s->ffn) +
			      (double)B * (double)s->n_heads * (double)ctx * (double)ctx);
}

static int llama(const struct ocb_model_spec *s, int64_t ctx, int64_t B, struct ocb_cost *c)
{
	int nl = (int)s->n_layers + 2;
	c->layer = calloc((size_t)nl, sizeof *c->layer);
	if (!c->layer)
		return ocb_seterr(OCB_ENOMEM, "cost: %d layers", nl);
	c->nlayers = nl;
	struct ocb_cost_layer *e = &c->layer[0], *h = &c->layer[nl - 1];
	int64_t d = s->d_model, V = s->vocab;
	snprintf(e->name, sizeof e->name, "tok_embd");
	const struct mat em = {V, d};
	add_mats(e, &em, 1, 0);
	for (int f = 0; f < WF_N; f++) /* a lookup: one row per token */
		e->read_decode[f] = ocb_wfmt_matrix_bytes(f, B, d);
	e->act_bytes = 4.0 * (double)B * (double)ctx * (double)d;
	for (int i = 0; i < s->n_layers; i++) {
		snprintf(c->layer[1 + i].name, sizeof c->layer[1 + i].name, "blk.%d", i);
		llama_block(s, ctx, B, &c->layer[1 + i]);
	}
	snprintf(h->name, sizeof h->name, "output");
	add_mats(h, &em, s->tied ? 0 : 1, (double)d);
	h->flops_decode = h->flops_prefill = 2.0 * (double)V * (double)d;
	for (int f = 0; f < WF_N; f++)
		h->read_decode[f] = ocb_wfmt_matrix_bytes(f, V, d) + 4.0 * (double)d;
	h->act_bytes = 4.0 * (double)B * (double)ctx * (double)(d + V);
	return OCB_OK;
}

static int mlp(const struct ocb_model_spec *s, int64_t B, struct ocb_cost *c)
{
	c->layer = calloc((size_t)s->nlin, sizeof *c->layer);
	if (!c->layer)
		return ocb_seterr(OCB_ENOMEM, "cost: %d layers", s->nlin);
	c->nlayers = s->nlin;
	for (int i = 0; i < s->nlin; i++) {
		struct ocb_cost_layer *l = &c->layer[i];
		const struct mat m = {s->dims[i + 1], s->dims[i]};
		snprintf(l->name, sizeof l->name, "fc%d", i + 1);
		add_mats(l, &m, 1, (double)s->dims[i + 1]);
		l->flops_decode = l->flops_prefill = 2.0 * l->mat_params;
		memcpy(l->read_decode, l->wbytes, sizeof l->wbytes);
		l->act_bytes = 4.0 * (double)B * (double)(s->dims[i] + s->dims[i + 1]);
	}
	return OCB_OK;
}

int ocb_cost_compute(const struct ocb_model_spec *s, int64_t ctx, int64_t batch,
		     struct ocb_cost *out)
{
	memset(out, 0, sizeof *out);
	if (ctx < 1 || batch < 1 || ctx > (1 << 24) || batch > (1 << 20))
		return ocb_seterr(OCB_EINVAL, "cost: ctx %lld / batch %lld out of range",
				  (long long)ctx, (long long)batch);
	int rc = ocb_spec_check(s, s->name);
	if (rc)
		return rc;
	out->spec = *s;
	out->level = -1;
	out->ctx = ctx;
	out->batch = batch;
	rc = s->arch == OCB_ARCH_LLAMA ? llama(s, ctx, batch, out) : mlp(s, batch, out);
	if (rc)
		return rc;
	struct ocb_cost_layer *t = &out->total;
	snprintf(t->name, sizeof t->name, "total");
	for (int i = 0; i < out->nlayers; i++) {
		const struct ocb_cost_layer *l = &out->layer[i];
		t->params += l->params;
		t->mat_params += l->mat_params;
		t->flops_decode += l->flops_decode;
		t->flops_prefill += l->flops_prefill;
		t->kv_bytes += l->kv_bytes;
		t->act_bytes = fmax(t->act_bytes, l->act_bytes);
		for (int f = 0; f < WF_N; f++) {
			t->wbytes[f] += l->wbytes[f];
			t->read_decode[f] += l->read_decode[f];
		}
	}
	return OCB_OK;
}

void ocb_cost_release(struct ocb_cost *c)
{
	if (!c)
		return;
	free(c->layer);
	c->layer = NULL;
	c->nlayers = 0;
}

/* ---- prediction ---- */

/* The roofs one phase (decode or prefill) of a layer runs under: matrices, attention,
 * memory; kinds for "no <kind>" when one is missing. */
struct roofs {
	const struct ocb_roof_ceil *mat, *att, *bw;
	const char *mk, *ak, *bk;
};

/* Time of `mat` matrix ops, `att` attention FLOPs and `bytes` under the roofs: compute
 * times add (the same cores do both), memory overlaps them; the largest time's kind into
 * bound. */
static double roof_time(double mat, double att, double bytes, const struct roofs *r,
			char *bound, size_t len)
{
	if (!r->mat || (att > 0 && !r->att) || !r->bw) {
		snprintf(bound, len, "no %s", !r->mat ? r->mk : !r->bw ? r->bk : r->ak);
		return NAN;
	}
	double tm = mat / (r->mat->value * 1e9), ta = att > 0 ? att / (r->att->value * 1e9) : 0;
	double tb = bytes / (r->bw->value * 1e9);
	const char *k = tb >= tm + ta ? r->bw->kind : tm >= ta ? r->mat->kind : r->att->kind;
	snprintf(bound, len, "%s", k);
	return fmax(tm + ta, tb);
}

/* The prediction from per-layer stored bytes w[] and decode-step reads rd[]. */
static int predict(const struct ocb_cost *c, int fmt, const double *w, const double *rd,
		   double wtotal, const struct ocb_roof_ceil *ce, size_t n,
		   const struct ocb_roof_caches *caches, int threads, struct ocb_pred *out)
{
	memset(out, 0, sizeof *out);
	if (fmt < 0 || fmt >= WF_N || threads < 1)
		return ocb_seterr(OCB_EINVAL, "predict: format %d, threads %d", fmt, threads);
	out->layer = calloc((size_t)c->nlayers, sizeof *out->layer);
	if (!out->layer)
		return ocb_seterr(OCB_ENOMEM, "predict: %d layers", c->nlayers);
	out->nlayers = c->nlayers;
	out->fmt = fmt;
	out->threads = threads;
	int quant = fmt != WF_F32 && fmt != WF_F16;
	snprintf(out->compute_decode, sizeof out->compute_decode, "%s",
		 quant ? "ops_int8" : "flops_fp32");
	snprintf(out->compute_prefill, sizeof out->compute_prefill, "%s",
		 quant ? "ops_int8" : "flops_sgemm");
	snprintf(out->attn_decode, sizeof out->attn_decode, "flops_fp32");
	snprintf(out->attn_prefill, sizeof out->attn_prefill, "flops_sgemm");
	enum ocb_level lv = c->level >= 0 && c->level < OCB_NLEVELS
				    ? (enum ocb_level)c->level
				    : ocb_roof_level(caches, wtotal + c->total.kv_bytes, threads);
	const char *bk = ocb_level_kind(lv);
	snprintf(out->level, sizeof out->level, "%s", bk);
	const struct ocb_roof_ceil *bw = ocb_roof_find(ce, n, bk, threads);
	const struct roofs rd_roofs = {ocb_roof_find(ce, n, out->compute_decode, threads),
				       ocb_roof_find(ce, n, out->attn_decode, threads), bw,
				       out->compute_decode, out->attn_decode, bk};
	const struct roofs rp_roofs = {ocb_roof_find(ce, n, out->compute_prefill, threads),
				       ocb_roof_find(ce, n, out->attn_prefill, threads), bw,
				       out->compute_prefill, out->attn_prefill, bk};
	double B = (double)c->batch, T = (double)c->ctx, td = 0, tp = 0;
	for (int i = 0; i < c->nlayers; i++) {
		const struct ocb_cost_layer *l = &c->layer[i];
		struct ocb_pred_layer *p = &out->layer[i];
		p->t_decode = roof_time(B * (l->flops_decode - l->attn_decode), B * l->attn_decode,
					rd[i], &rd_roofs, p->bound_decode, sizeof p->bound_decode);
		/* prefill: weights once, the layer's K and V written once */
		double pb = (i == 0 && c->spec.arch == OCB_ARCH_LLAMA) ? 4.0 * B * T *
			(double)c->spec.d_model : w[i] + l->kv_bytes;
		p->t_prefill = roof_time(B * T * (l->flops_prefill - l->attn_prefill),
					 B * T * l->attn_prefill, pb, &rp_roofs, p->bound_prefill,
					 sizeof p->bound_prefill);
		td += p->t_decode;
		tp += p->t_prefill;
	}
	out->decode_tok_s = B / td;
	out->prefill_s = tp;
	return OCB_OK;
}

int ocb_cost_predict(const struct ocb_cost *c, int fmt, const struct ocb_roof_ceil *ce,
		     size_t n, const struct ocb_roof_caches *caches, int threads,
		     struct ocb_pred *out)
{
	if (fmt < 0 || fmt >= WF_N) {
		memset(out, 0, sizeof *out);
		return ocb_seterr(OCB_EINVAL, "predict: format %d", fmt);
	}
	double *w = malloc(2 * (size_t)c->nlayers * sizeof *w);
	if (!w) {
		memset(out, 0, sizeof *out);
		return ocb_seterr(OCB_ENOMEM, "predict: %d layers", c->nlayers);
	}
	for (int i = 0; i < c->nlayers; i++) {
		w[i] = c->layer[i].wbytes[fmt];
		w[c->nlayers + i] = c->layer[i].read_decode[fmt];
	}
	int rc = predict(c, fmt, w, w + c->nlayers, c->total.wbytes[fmt], ce, n, caches,
			 threads, out);
	free(w);
	return rc;
}

int ocb_cost_predict_bytes(const struct ocb_cost *c, const double *wbytes,
			   const struct ocb_roof_ceil *ce, size_t n,
			   const struct ocb_roof_caches *caches, int threads, struct ocb_pred *out)
{
	double *rd = malloc((size_t)c->nlayers * sizeof *rd), tot = 0;
	if (!rd) {
		memset(out, 0, sizeof *out);
		return ocb_seterr(OCB_ENOMEM, "predict: %d layers", c->nlayers);
	}
	for (int i = 0; i < c->nlayers; i++) {
		const struct ocb_cost_layer *l = &c->layer[i];
		rd[i] = wbytes[i] + l->read_decode[WF_F32] - l->wbytes[WF_F32];
		tot += wbytes[i];
	}
	int rc = predict(c, WF_Q8_0, wbytes, rd, tot, ce, n, caches, threads, out);
	out->fmt = -1;
	free(rd);
	return rc;
}

void ocb_pred_release(struct ocb_pred *p)
{
	if (!p)
		return;
	free(p->layer);
	p->layer = NULL;
	p->nlayers = 0;
}
