/* qtrain: STE and DQT linear layers and their optimizer (see qtrain.h). */
#include "qtrain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../kernels/quant_formats.h"
#include "../kernels/sr_rng.h"
#include "../kernels/tern_gemm.h"

const char *qt_method_name(enum qt_method m)
{
	return m == QT_STE ? "ste" : m == QT_DQT ? "dqt" : "fp32";
}

int qt_method_parse(const char *s)
{
	for (int m = QT_FP32; m <= QT_DQT; m++)
		if (!strcasecmp(s, qt_method_name((enum qt_method)m)))
			return m;
	return -1;
}

int qt_cfg_check(const struct qt_cfg *c)
{
	if (c->method == QT_STE && c->bits != 2)
		return ocb_seterr(OCB_EINVAL, "ste trains ternary weights (bits 2), not %d", c->bits);
	if (c->method == QT_DQT && c->bits != 2 && c->bits != 3 && c->bits != 4 && c->bits != 8)
		return ocb_seterr(OCB_EINVAL, "dqt bits %d: not 8, 4, 3 or 2 (ternary)", c->bits);
	if (c->method < QT_FP32 || c->method > QT_DQT || c->moments < DQT_M_F32 ||
	    c->moments > DQT_M_FP8)
		return ocb_seterr(OCB_EINVAL, "quantized training: unknown method or moments");
	return OCB_OK;
}

const char *qt_cfg_label(const struct qt_cfg *c, char *buf, size_t len)
{
	if (c->method == QT_FP32)
		snprintf(buf, len, "fp32");
	else if (c->bits == 2)
		snprintf(buf, len, "%s-ternary", qt_method_name(c->method));
	else
		snprintf(buf, len, "%s-%d", qt_method_name(c->method), c->bits);
	return buf;
}

const char *qt_scale_rule(const struct qt_cfg *c)
{
	if (c->method == QT_STE)
		return "per forward: absmean of the fp32 latent weights (BitNet b1.58)";
	if (c->method != QT_DQT)
		return "none (fp32)";
	if (c->bits == 2)
		return "fixed at init: mean|W0| rounded to fp16 (absmean), grid {-1,0,1}";
	return "fixed at init: c*rms(W0)/qmax, c = 6 (8 bits), 3 (4 bits), 2.5 (3 bits)";
}

static int qmax_of(int bits) { return bits == 2 ? 1 : (1 << (bits - 1)) - 1; }

static int grow_scratch(struct qt_set *s, const struct ocb_linear *l);

/* ---- the linear impls ---- */

/* x[n][in] -> the set's int8 scratch; the product with the layer's codes into y. */
static void q_forward_codes(struct qt_layer *q, const float *x, int n, float *y)
{
	struct qt_set *s = q->set;
	const struct ocb_linear *l = q->l;
	if (n > s->max_rows) { /* a larger batch than announced (evaluation): grow the
				* scratch for every layer's width, not just this one's */
		int old = s->max_rows, rc = OCB_OK;
		s->max_rows = n;
		for (int i = 0; i < s->nlayers && rc == OCB_OK; i++)
			rc = grow_scratch(s, s->layer[i].l);
		if (rc) {
			s->max_rows = old;
			for (size_t i = 0; i < (size_t)n * l->out; i++)
				y[i] = NAN; /* the driver stops on a non-finite loss */
			return;
		}
	}
	tg_quant_act(x, n, l->in, s->xq, s->xd);
	if (q->qmax <= 7) /* ternary, 3 and 4 bits: the unsigned maddubs path */
		tg_gemm_lowbit(s->xq, s->xd, n, q->codes, q->scale, l->out, l->in, y, s->threads);
	else
		tg_gemm(s->xq, s->xd, n, q->codes, q->scale, l->out, l->in, y, s->threads);
}

/* BitNet b1.58: ternary codes of the latent W (absmean), then the int8 product. */
static void ste_forward(const void *st, const struct ocb_linear *l, const float *x, int n,
			float *y)
{
	struct qt_layer *q = (struct qt_layer *)st;
	size_t cnt = (size_t)l->out * l->in;
	double sum = 0.0;
	for (int j = 0; j < l->out; j++) { /* row sums in float (vectorised), total in double */
		float rs = 0.0f;
		for (int t = 0; t < l->in; t++)
			rs += fabsf(l->w[(size_t)j * l->in + t]);
		sum += rs;
	}
	float g = (float)(sum / (double)cnt), ig = 1.0f / (g + 1e-5f);
	for (int j = 0; j < l->out; j++)
		for (int t = 0; t < l->in; t++) {
			/* round(clamp(v, -1, 1)) == clamp(round(v), -1, 1); the +-1.5 * 2^23 trick
			 * is round-half-even (rintf) without a libm call */
			float v = l->w[(size_t)j * l->in + t] * ig;
			v = v < -1.0f ? -1.0f : v > 1.0f ? 1.0f : v;
			q->codes[(size_t)j * q->ldk + t] = (int8_t)((v + 12582912.0f) - 12582912.0f);
		}
	q->scale = g;
	q_forward_codes(q, x, n, y);
}

static void dqt_forward(const void *st, const struct ocb_linear *l, const float *x, int n,
			float *y)
{
	(void)l;
	q_forward_codes((struct qt_layer *)st, x, n, y);
}

/* dx = dy (s codes): through the low-bit weights (STE: the last forward's ternary). */
static void q_backward_input(const void *st, const struct ocb_linear *l, const float *dy, int n,
			     float *dx)
{
	const struct qt_layer *q = st;
	if (tg_gemm_dx(dy, n, q->codes, q->scale, l->out, l->in, dx))
		tg_gemm_dx_ref(dy, n, q->codes, q->scale, l->out, l->in, dx); /* no memory */
}

/* DQT: dW in tiles of QT_TILE_ROWS rows, each consumed by the fused update at once. */
static void dqt_update_weight(const void *st, const struct ocb_linear *l, const float *x,
			      const float *dy, int n)
{
	struct qt_layer *q = (struct qt_layer *)st;
	struct qt_set *s = q->set;
	struct dqt_hyper h = {.lr = s->lr, .wd = s->opt.weight_decay, .b1 = s->opt.beta1,
			      .b2 = s->opt.beta2, .eps = s->opt.eps, .c1 = s->c1, .c2 = s->c2,
			      .scale = q->scale, .qmax = q->qmax,
			      .key = sr_key(s->seed, (uint64_t)s->t, (uint64_t)q->index)};
	size_t mb = dqt_mfmt_bytes(s->cfg.moments);
	float am = 0.0f, asv = 0.0f;
	/* The update is element-wise streaming work (~20 flops per weight) on the calling
	 * thread: an OpenMP region per tile cost more than it saved next to OpenBLAS's own
	 * threads on a shared 2-core VM. The result does not depend on it either way (the
	 * RNG is keyed by element index; tests run the kernel on 1 and 2 threads). */
	for (int j0 = 0; j0 < l->out; j0 += QT_TILE_ROWS) {
		int r = l->out - j0 < QT_TILE_ROWS ? l->out - j0 : QT_TILE_ROWS;
		tg_gemm_dw(dy, n, l->out, j0, r, x, l->in, s->gtile);
		for (int j = j0; j < j0 + r; j++) {
			size_t off = (size_t)j * l->in;
			struct dqt_moments mo = {.fmt = s->cfg.moments, .m = (char *)q->m + off * mb,
						 .v = (char *)q->v + off * mb, .m_dec = q->m_dec,
						 .v_dec = q->v_dec, .m_enc = q->m_enc,
						 .v_enc = q->v_enc};
			dqt_update(q->codes + (size_t)j * q->ldk, s->gtile + (size_t)(j - j0) * l->in,
				   (size_t)l->in, off, &h, &mo);
			am = fmaxf(am, mo.amax_m);
			asv = fmaxf(asv, mo.amax_sv);
		}
	}
	/* fp8: the values just stored used m_enc; the next step decodes with it and encodes
	 * with this step's maxima */
	q->m_dec = q->m_enc;
	q->v_dec = q->v_enc;
	q->m_enc = am / 448.0f;
	q->v_enc = asv / 448.0f;
}

static size_t q_weight_bytes(const void *st, const struct ocb_linear *l)
{
	const struct qt_layer *q = st;
	(void)l;
	return (size_t)l->out * q->ldk + sizeof(float);
}

static const struct ocb_linear_impl ste_impl = {
	.name = "ste-ternary",
	.forward = ste_forward,
	.backward_input = q_backward_input,
	.weight_bytes = NULL, /* the fp32 latent weights are the storage; codes: qt_set_bytes */
};

static const struct ocb_linear_impl dqt_impl = {
	.name = "dqt",
	.forward = dqt_forward,
	.backward_input = q_backward_input,
	.update_weight = dqt_update_weight,
	.weight_bytes = q_weight_bytes,
};

/* ---- the set ---- */

int qt_set_init(struct qt_set *s, const struct qt_cfg *c, const struct ocb_optim_cfg *opt,
		uint64_t seed, int threads, int max_rows)
{
	memset(s, 0, sizeof *s);
	int rc = qt_cfg_check(c);
	if (rc)
		return rc;
	if (max_rows < 1)
		return ocb_seterr(OCB_EINVAL, "quantized training: max rows %d", max_rows);
	s->cfg = *c;
	s->opt = *opt;
	s->seed = seed;
	s->threads = threads;
	s->max_rows = max_rows;
	return OCB_OK;
}

/* Releases the whole pages inside [p, p + bytes) (their contents become zero). */
static void release_pages(void *p, size_t bytes)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)p + pg - 1) & ~(uintptr_t)(pg - 1);
	uintptr_t e = ((uintptr_t)p + bytes) & ~(uintptr_t)(pg - 1);
	if (e > a)
		madvise((void *)a, e - a, MADV_DONTNEED);
}

/* Releases the layers' fp32 home regions (weights and gradients), adjacent regions merged
 * first: released one by one, the page that straddles two neighbouring linears (wq|wk,
 * ...) belongs wholly to neither and stayed resident — ~32 pages, ~1 B/param, on the
 * suite's 133 k-parameter LM. A page shared with a tensor that stays fp32 (a norm, the
 * embedding) is kept. */
static void release_homes(struct qt_set *s)
{
	struct span { uintptr_t a, e; } sp[2 * QT_MAX_LAYERS], t;
	int n = 0;
	for (int i = 0; i < s->nlayers; i++) {
		const struct qt_layer *q = &s->layer[i];
		size_t bytes = (size_t)q->l->out * q->l->in * sizeof(float);
		if (q->w_home)
			sp[n++] = (struct span){(uintptr_t)q->w_home, (uintptr_t)q->w_home + bytes};
		if (q->gw_home)
			sp[n++] = (struct span){(uintptr_t)q->gw_home, (uintptr_t)q->gw_home + bytes};
	}
	for (int i = 1; i < n; i++) /* insertion sort by start */
		for (int j = i; j > 0 && sp[j - 1].a > sp[j].a; j--)
			t = sp[j], sp[j] = sp[j - 1], sp[j - 1] = t;
	for (int i = 0; i < n;) {
		uintptr_t a = sp[i].a, e = sp[i].e;
		for (i++; i < n && sp[i].a == e; i++)
			e = sp[i].e;
		release_pages((void *)a, e - a);
	}
}

/* The DQT scale rule (qtrain.h) from the initial weights. */
static float dqt_scale(const float *w, size_t n, int bits, int qmax)
{
	double sa = 0.0, s2 = 0.0;
	for (size_t i = 0; i < n; i++) {
		sa += fabs(w[i]);
		s2 += (double)w[i] * w[i];
	}
	if (bits == 2) {
		float s = ocb_fp16_to_fp32(ocb_fp32_to_fp16((float)(sa / (double)n)));
		return s > 0.0f ? s : 1e-3f;
	}
	double c = bits == 8 ? 6.0 : bits == 4 ? 3.0 : 2.5;
	float s = (float)(c * sqrt(s2 / (double)n) / qmax);
	return s > 0.0f ? s : 1e-3f;
}

/* codes = clamp(round-to-nearest(w / s)) (init and load: deterministic, no SR). */
static void quantize_rtn(struct qt_layer *q, const float *w)
{
	const struct ocb_linear *l = q->l;
	float is = 1.0f / q->scale;
	for (int j = 0; j < l->out; j++)
		for (int t = 0; t < l->in; t++) {
			long v = lrintf(w[(size_t)j * l->in + t] * is);
			v = v < -q->qmax ? -q->qmax : v > q->qmax ? q->qmax : v;
			q->codes[(size_t)j * q->ldk + t] = (int8_t)v;
		}
}

static int grow_scratch(struct qt_set *s, const struct ocb_linear *l)
{
	size_t xq = (size_t)s->max_rows * tg_ldk(l->in);
	size_t xd = (size_t)s->max_rows * tg_nblk(l->in);
	if (xq > s->xq_cap) {
		ocb_free(s->xq);
		if (!(s->xq = ocb_alloc(xq)))
			return ocb_seterr(OCB_ENOMEM, "quantized training: out of memory");
		s->xq_cap = xq;
	}
	if (xd > s->xd_cap) {
		ocb_free(s->xd);
		if (!(s->xd = ocb_alloc(xd * sizeof(float))))
			return ocb_seterr(OCB_ENOMEM, "quantized training: out of memory");
		s->xd_cap = xd;
	}
	size_t gt = s->cfg.method == QT_DQT ? (size_t)QT_TILE_ROWS * l->in : 0;
	if (gt > s->gtile_cap) {
		ocb_free(s->gtile);
		if (!(s->gtile = ocb_alloc(gt * sizeof(float))))
			return ocb_seterr(OCB_ENOMEM, "quantized training: out of memory");
		s->gtile_cap = gt;
	}
	return OCB_OK;
}

int qt_set_add_linear(struct qt_set *s, struct ocb_linear *l)
{
	if (s->cfg.method == QT_FP32)
		return OCB_OK;
	if (s->nlayers == QT_MAX_LAYERS)
		return ocb_seterr(OCB_EINVAL, "quantized training: more than %d layers",
				  QT_MAX_LAYERS);
	int rc = grow_scratch(s, l);
	if (rc)
		return rc;
	struct qt_layer *q = &s->layer[s->nlayers];
	memset(q, 0, sizeof *q);
	q->set = s;
	q->l = l;
	q->index = s->nlayers;
	q->qmax = qmax_of(s->cfg.bits);
	q->ldk = tg_ldk(l->in);
	size_t cnt = (size_t)l->out * l->in;
	if (!(q->codes = ocb_alloc((size_t)l->out * q->ldk)))
		return ocb_seterr(OCB_ENOMEM, "quantized training: out of memory");
	s->nlayers++;
	if (s->cfg.method == QT_STE) {
		l->impl = &ste_impl;
		l->impl_state = q;
		return OCB_OK;
	}
	q->scale = dqt_scale(l->w, cnt, s->cfg.bits, q->qmax);
	quantize_rtn(q, l->w);
	/* from here on the weight is the codes: the fp32 regions hold nothing */
	q->w_home = l->w;
	q->gw_home = l->gw;
	release_pages(l->w, cnt * sizeof(float));
	if (l->gw)
		release_pages(l->gw, cnt * sizeof(float));
	l->w = NULL;
	l->gw = NULL;
	l->impl = &dqt_impl;
	l->impl_state = q;
	return OCB_OK;
}

int qt_set_add_fp32(struct qt_set *s, float *p, float *g, size_t n, int decay)
{
	if (s->cfg.method != QT_DQT)
		return OCB_OK;
	if (s->nranges == (int)(sizeof s->range / sizeof s->range[0]))
		return ocb_seterr(OCB_EINVAL, "quantized training: too many fp32 tensors");
	s->range[s->nranges++] = (struct qt_range){p, g, n, s->aux_n, decay};
	s->aux_n += n;
	return OCB_OK;
}

int qt_set_finish(struct qt_set *s)
{
	if (s->cfg.method != QT_DQT)
		return OCB_OK;
	release_homes(s);
	/* every moment in one block (as the model's parameters): one allocation each would
	 * cost a page of allocator overhead apiece (~1 B/param on the LM's 42 of them) */
	size_t mb = dqt_mfmt_bytes(s->cfg.moments), total = 0;
	for (int i = 0; i < s->nlayers; i++)
		total += 2 * ocb_round_up((size_t)s->layer[i].l->out * s->layer[i].l->in * mb, 64);
	total += 2 * ocb_round_up(s->aux_n * sizeof(float), 64);
	if (!(s->moments = ocb_alloc(total)))
		return ocb_seterr(OCB_ENOMEM, "quantized training: out of memory for moments");
	char *p = s->moments;
	for (int i = 0; i < s->nlayers; i++) {
		size_t b = ocb_round_up((size_t)s->layer[i].l->out * s->layer[i].l->in * mb, 64);
		s->layer[i].m = p, p += b;
		s->layer[i].v = p, p += b;
	}
	s->aux_m = (float *)p, p += ocb_round_up(s->aux_n * sizeof(float), 64);
	s->aux_v = (float *)p;
	return OCB_OK;
}

void qt_set_begin_step(struct qt_set *s, long step, float lr)
{
	(void)step;
	s->t++;
	s->lr = lr;
	s->c1 = (float)(1.0 / (1.0 - pow(s->opt.beta1, (double)s->t)));
	s->c2 = (float)(1.0 / (1.0 - pow(s->opt.beta2, (double)s->t)));
}

void qt_set_end_step(struct qt_set *s)
{
	if (s->cfg.method != QT_DQT)
		return;
	for (int i = 0; i < s->nranges; i++) {
		const struct qt_range *r = &s->range[i];
		ocb_adamw_span(r->p, r->g, s->aux_m + r->aux_off, s->aux_v + r->aux_off, r->n,
			       s->lr, r->decay ? s->opt.weight_decay : 0.0f, s->opt.beta1,
			       s->opt.beta2, s->opt.eps, s->c1, s->c2);
	}
}

void qt_set_zero_grads(struct qt_set *s)
{
	for (int i = 0; i < s->nranges; i++)
		memset(s->range[i].g, 0, s->range[i].n * sizeof(float));
}

void qt_set_bytes(const struct qt_set *s, struct qt_bytes *b)
{
	memset(b, 0, sizeof *b);
	if (s->cfg.method == QT_FP32)
		return;
	size_t mb = dqt_mfmt_bytes(s->cfg.moments);
	for (int i = 0; i < s->nlayers; i++) {
		const struct qt_layer *q = &s->layer[i];
		size_t cnt = (size_t)q->l->out * q->l->in;
		b->weights += (size_t)q->l->out * q->ldk + sizeof(float);
		if (s->cfg.method == QT_DQT)
			b->optimizer += 2 * cnt * mb;
	}
	/* transients, never live together: the fp32 tile of dx (tern_gemm.h: 64 dequantized
	 * weight rows) or the forward GEMM's packed weights + prepared activations */
	size_t tw = 0, ta = 0;
	for (int i = 0; i < s->nlayers; i++) {
		const struct ocb_linear *l = s->layer[i].l;
		size_t w, a;
		tg_gemm_workspace(s->layer[i].qmax <= 7, s->max_rows, l->out, l->in, s->threads,
				  &w, &a);
		w = 64 * (size_t)l->in * sizeof(float) > w ? 64 * (size_t)l->in * sizeof(float) : w;
		tw = w > tw ? w : tw;
		ta = a > ta ? a : ta;
	}
	b->weights += tw;
	b->activations += ta;
	b->grads += s->gtile_cap * sizeof(float);
	b->optimizer += 2 * s->aux_n * sizeof(float);
	b->activations += s->xq_cap + s->xd_cap * sizeof(float);
}

size_t qt_set_fp32_params(const struct qt_set *s)
{
	return s->aux_n;
}

void qt_set_materialize(struct qt_set *s)
{
	if (s->cfg.method != QT_DQT)
		return;
	for (int i = 0; i < s->nlayers; i++) {
		struct qt_layer *q = &s->layer[i];
		struct ocb_linear *l = q->l;
		for (int j = 0; j < l->out; j++)
			for (int t = 0; t < l->in; t++)
				q->w_home[(size_t)j * l->in + t] =
					q->scale * (float)q->codes[(size_t)j * q->ldk + t];
		l->w = q->w_home;
	}
}

void qt_set_unmaterialize(struct qt_set *s)
{
	if (s->cfg.method != QT_DQT)
		return;
	release_homes(s);
	for (int i = 0; i < s->nlayers; i++)
		s->layer[i].l->w = NULL;
}

void qt_set_requantize(struct qt_set *s)
{
	if (s->cfg.method != QT_DQT)
		return;
	for (int i = 0; i < s->nlayers; i++) {
		struct qt_layer *q = &s->layer[i];
		const float *w = q->w_home;
		size_t cnt = (size_t)q->l->out * q->l->in;
		/* a grid checkpoint holds s * code: s is the smallest nonzero |w| whenever some
		 * code is +-1; check that every weight is then an integer multiple on the grid,
		 * else (a foreign checkpoint) choose the scale by the rule */
		float mn = INFINITY;
		for (size_t k = 0; k < cnt; k++)
			if (w[k] != 0.0f && fabsf(w[k]) < mn)
				mn = fabsf(w[k]);
		int grid = isfinite(mn);
		for (size_t k = 0; grid && k < cnt; k++) {
			float c = rintf(w[k] / mn);
			grid = fabsf(c) <= (float)q->qmax && c * mn == w[k];
		}
		q->scale = grid ? mn : dqt_scale(w, cnt, s->cfg.bits, q->qmax);
		quantize_rtn(q, w);
	}
}

void qt_set_release(struct qt_set *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nlayers; i++) {
		struct qt_layer *q = &s->layer[i];
		if (q->w_home && q->l) { /* give the model its pointers back */
			q->l->w = q->w_home;
			q->l->gw = q->gw_home;
		}
		if (q->l) {
			q->l->impl = NULL;
			q->l->impl_state = NULL;
		}
		ocb_free(q->codes);
	}
	ocb_free(s->moments);
	ocb_free(s->xq);
	ocb_free(s->xd);
	ocb_free(s->gtile);
	memset(s, 0, sizeof *s);
}
