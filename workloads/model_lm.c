/* model_lm: LLaMA-structured byte decoder, forward and backward (see model_lm.h). */
#include "model_lm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/sgemm_det.h"
#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_json.h"
#include "checkpoint.h"

void lm_config_default(struct lm_config *c)
{
	c->vocab = 256;
	c->d_model = 128;
	c->n_layers = 4;
	c->n_heads = 4;
	c->ctx = 128;
	c->ffn = lm_ffn_width(128);
	c->rope_theta = 10000.0f;
	c->norm_eps = 1e-5f;
}

int lm_ffn_width(int d_model)
{
	int f = (8 * d_model + 2) / 3; /* ceil(4 d 2/3) */
	return (f + 7) / 8 * 8;
}

int lm_config_check(const struct lm_config *c)
{
	if (c->vocab < 1 || c->vocab > 256)
		return ocb_seterr(OCB_EINVAL, "lm config: vocab %d not in 1..256 (byte tokens)",
				  c->vocab);
	if (c->d_model < 2 || c->n_layers < 1 || c->n_heads < 1 || c->ctx < 1 || c->ffn < 1)
		return ocb_seterr(OCB_EINVAL,
				  "lm config: d_model %d, n_layers %d, n_heads %d, ctx %d, ffn %d "
				  "must all be positive",
				  c->d_model, c->n_layers, c->n_heads, c->ctx, c->ffn);
	if (c->d_model % c->n_heads || (c->d_model / c->n_heads) % 2)
		return ocb_seterr(OCB_EINVAL,
				  "lm config: d_model %d / n_heads %d must be an even head dim",
				  c->d_model, c->n_heads);
	if (!(c->rope_theta > 1.0f) || !(c->norm_eps > 0.0f))
		return ocb_seterr(OCB_EINVAL, "lm config: rope_theta must be > 1, norm_eps > 0");
	return OCB_OK;
}

/* Per layer: 2 norms [d], q k v o [d][d], gate up [F][d], down [d][F]. */
static size_t layer_params(const struct lm_config *c)
{
	size_t d = (size_t)c->d_model, f = (size_t)c->ffn;
	return 2 * d + 4 * d * d + 3 * d * f;
}

size_t lm_param_count(const struct lm_config *c)
{
	size_t d = (size_t)c->d_model, v = (size_t)c->vocab;
	return v * d + (size_t)c->n_layers * layer_params(c) + d + v * d;
}

/* Tensor table: 1 embedding, 9 per layer, final norm, head. */
int lm_ntensors(const struct lm_config *c) { return 3 + 9 * c->n_layers; }

static const char *const layer_tensor_names[9] = {
	"attn_norm", "wq", "wk", "wv", "wo", "ffn_norm", "w_gate", "w_up", "w_down",
};

/* Offset (floats) and shape of tensor i in the parameter block. */
static void tensor_layout(const struct lm_config *c, int i, size_t *off, int *rows, int *cols,
			  char *name, size_t name_len)
{
	size_t d = (size_t)c->d_model, f = (size_t)c->ffn, v = (size_t)c->vocab;
	if (i == 0) {
		*off = 0, *rows = (int)v, *cols = (int)d;
		snprintf(name, name_len, "tok_emb");
		return;
	}
	size_t base = v * d;
	int L = c->n_layers;
	if (i <= 9 * L) {
		int l = (i - 1) / 9, j = (i - 1) % 9;
		/* sizes in storage order: norm, q, k, v, o, norm, gate, up, down */
		const size_t sz[9] = {d, d * d, d * d, d * d, d * d, d, f * d, f * d, d * f};
		const int r[9] = {1, (int)d, (int)d, (int)d, (int)d, 1, (int)f, (int)f, (int)d};
		const int cc[9] = {(int)d, (int)d, (int)d, (int)d, (int)d, (int)d, (int)d, (int)d,
				   (int)f};
		size_t o = base + (size_t)l * layer_params(c);
		for (int k = 0; k < j; k++)
			o += sz[k];
		*off = o, *rows = r[j], *cols = cc[j];
		snprintf(name, name_len, "layers.%d.%s", l, layer_tensor_names[j]);
		return;
	}
	base += (size_t)L * layer_params(c);
	if (i == 9 * L + 1) {
		*off = base, *rows = 1, *cols = (int)d;
		snprintf(name, name_len, "final_norm");
		return;
	}
	*off = base + d, *rows = (int)v, *cols = (int)d;
	snprintf(name, name_len, "head");
}

int lm_tensor(struct lm_model *m, int i, struct lm_tensor *t)
{
	if (i < 0 || i >= lm_ntensors(&m->cfg))
		return ocb_seterr(OCB_EINVAL, "lm tensor index %d out of range", i);
	size_t off;
	tensor_layout(&m->cfg, i, &off, &t->rows, &t->cols, t->name, sizeof t->name);
	t->data = m->params + off;
	t->grad = m->grads ? m->grads + off : NULL;
	return OCB_OK;
}

static void linear_view(struct ocb_linear *l, struct lm_model *m, int tensor, int in, int out)
{
	struct lm_tensor t;
	lm_tensor(m, tensor, &t);
	memset(l, 0, sizeof *l);
	l->in = in, l->out = out;
	l->w = t.data;
	l->gw = t.grad;
}

/* Carves the views out of params/grads. */
static void point_params(struct lm_model *m)
{
	const struct lm_config *c = &m->cfg;
	int d = c->d_model, f = c->ffn;
	struct lm_tensor t;
	lm_tensor(m, 0, &t);
	m->tok_emb = t.data, m->g_tok_emb = t.grad;
	for (int l = 0; l < c->n_layers; l++) {
		struct lm_layer *ly = &m->layers[l];
		int b = 1 + 9 * l;
		lm_tensor(m, b + 0, &t);
		ly->attn_norm = t.data, ly->g_attn_norm = t.grad;
		linear_view(&ly->wq, m, b + 1, d, d);
		linear_view(&ly->wk, m, b + 2, d, d);
		linear_view(&ly->wv, m, b + 3, d, d);
		linear_view(&ly->wo, m, b + 4, d, d);
		lm_tensor(m, b + 5, &t);
		ly->ffn_norm = t.data, ly->g_ffn_norm = t.grad;
		linear_view(&ly->w_gate, m, b + 6, d, f);
		linear_view(&ly->w_up, m, b + 7, d, f);
		linear_view(&ly->w_down, m, b + 8, f, d);
	}
	lm_tensor(m, 9 * c->n_layers + 1, &t);
	m->final_norm = t.data, m->g_final_norm = t.grad;
	linear_view(&m->head, m, 9 * c->n_layers + 2, d, c->vocab);
}

static const char *const lin_short[LM_LIN_PER_LAYER] = {"wq", "wk", "wv", "wo",
							 "w_gate", "w_up", "w_down"};

int lm_create(const struct lm_config *c, int with_grads, uint64_t seed, struct lm_model **out)
{
	int rc = OCB_OK;
	struct lm_model *m = NULL;
	*out = NULL;
	if ((rc = lm_config_check(c)) != OCB_OK)
		goto out;
	m = calloc(1, sizeof *m);
	if (!m) {
		rc = ocb_seterr(OCB_ENOMEM, "lm: out of memory for the model struct");
		goto out;
	}
	m->cfg = *c;
	m->nparams = lm_param_count(c);
	int L = c->n_layers, hd = c->d_model / c->n_heads;
	m->layers = calloc((size_t)L, sizeof *m->layers);
	m->acts = calloc((size_t)L, sizeof *m->acts);
	m->lin_names = calloc((size_t)L * LM_LIN_PER_LAYER + 1, sizeof *m->lin_names);
	m->params = ocb_alloc(m->nparams * sizeof(float));
	m->rope_cos = ocb_alloc((size_t)c->ctx * hd * sizeof(float)); /* cos then sin */
	if (with_grads)
		m->grads = ocb_alloc(m->nparams * sizeof(float));
	if (!m->layers || !m->acts || !m->lin_names || !m->params || !m->rope_cos ||
	    (with_grads && !m->grads)) {
		rc = ocb_seterr(OCB_ENOMEM, "lm: out of memory for %zu parameters", m->nparams);
		goto out;
	}
	m->rope_sin = m->rope_cos + (size_t)c->ctx * (hd / 2);
	lm_rope_tables(c->ctx, hd, c->rope_theta, m->rope_cos, m->rope_sin);
	point_params(m);
	for (int l = 0; l < L; l++)
		for (int j = 0; j < LM_LIN_PER_LAYER; j++)
			snprintf(m->lin_names[l * LM_LIN_PER_LAYER + j], sizeof m->lin_names[0],
				 "layers.%d.%s", l, lin_short[j]);
	snprintf(m->lin_names[L * LM_LIN_PER_LAYER], sizeof m->lin_names[0], "head");

	/* Init: N(0, 0.02) everywhere, residual-branch outputs (wo, w_down) scaled by
	 * 1/sqrt(2 L) (GPT-2, Radford et al. 2019), norm gains 1. */
	struct ocb_rng rng;
	ocb_rng_seed(&rng, seed);
	float resid = 1.0f / sqrtf(2.0f * (float)L);
	for (int i = 0; i < lm_ntensors(c); i++) {
		struct lm_tensor t;
		lm_tensor(m, i, &t);
		size_t n = (size_t)t.rows * t.cols;
		if (t.rows == 1) {
			for (size_t k = 0; k < n; k++)
				t.data[k] = 1.0f;
			continue;
		}
		float sd = 0.02f;
		if (strstr(t.name, ".wo") || strstr(t.name, ".w_down"))
			sd *= resid;
		for (size_t k = 0; k < n; k++)
			t.data[k] = sd * (float)ocb_rng_normal(&rng);
	}
	*out = m;
	m = NULL;
out:
	lm_free(m);
	return rc;
}

void lm_free(struct lm_model *m)
{
	if (!m)
		return;
	ocb_free(m->params);
	ocb_free(m->grads);
	ocb_free(m->arena);
	ocb_free(m->rope_cos);
	free(m->layers);
	free(m->acts);
	free(m->lin_names);
	free(m);
}

void lm_zero_grad(struct lm_model *m)
{
	if (m->grads)
		memset(m->grads, 0, m->nparams * sizeof(float));
}

int lm_reserve(struct lm_model *m, int B, int T)
{
	const struct lm_config *c = &m->cfg;
	if (B < 1 || T < 1 || T > c->ctx)
		return ocb_seterr(OCB_EINVAL, "lm: batch %d x %d tokens (context is %d)", B, T,
				  c->ctx);
	int rows = B * T;
	int capT = T > m->cap_T ? T : m->cap_T;
	int caprows = rows > m->cap_rows ? rows : m->cap_rows;
	if (m->arena && rows <= m->cap_rows && T <= m->cap_T)
		return OCB_OK;
	/* P is [B][H][T][T] = rows * H * T floats; size it for the largest of both. */
	size_t R = (size_t)caprows, d = (size_t)c->d_model, f = (size_t)c->ffn;
	size_t H = (size_t)c->n_heads, V = (size_t)c->vocab, L = (size_t)c->n_layers;
	size_t P = R * H * (size_t)capT;
	/* Every view is rounded to 16 floats (64 bytes) so each starts aligned. */
#define A16(n) ocb_round_up((n), 16)
	size_t per_layer = A16(R * d) * 8 + A16(R) * 2 + A16(P) + A16(R * f) * 3;
	size_t n = L * per_layer + A16(R * d) * 3 + A16(R) * 2 + A16(R * V);
	if (m->grads)
		n += A16(R * d) * 7 + A16(R * f) * 3 + A16(P);
	float *a = ocb_alloc(n * sizeof(float));
	if (!a)
		return ocb_seterr(OCB_ENOMEM, "lm: out of memory for a %d x %d activation arena",
				  B, T);
	ocb_free(m->arena);
	m->arena = a;
	m->arena_floats = n;
	m->cap_rows = caprows;
	m->cap_T = capT;
#define TAKE(n) (a += A16(n), a - A16(n))
	for (size_t l = 0; l < L; l++) {
		struct lm_layer_acts *s = &m->acts[l];
		s->x = TAKE(R * d), s->xn1 = TAKE(R * d), s->xn2 = TAKE(R * d);
		s->q = TAKE(R * d), s->k = TAKE(R * d), s->v = TAKE(R * d);
		s->att = TAKE(R * d), s->h = TAKE(R * d);
		s->r1 = TAKE(R), s->r2 = TAKE(R);
		s->p = TAKE(P);
		s->gate = TAKE(R * f), s->up = TAKE(R * f), s->act = TAKE(R * f);
	}
	m->xf = TAKE(R * d), m->xnf = TAKE(R * d), m->tmp = TAKE(R * d);
	m->rf = TAKE(R), m->nll = TAKE(R);
	m->logits = TAKE(R * V);
	if (m->grads) {
		m->dres = TAKE(R * d), m->dxn = TAKE(R * d), m->dtmp = TAKE(R * d);
		m->datt = TAKE(R * d), m->dq = TAKE(R * d), m->dk = TAKE(R * d);
		m->dv = TAKE(R * d);
		m->dact = TAKE(R * f), m->dgate = TAKE(R * f), m->dup = TAKE(R * f);
		m->dp = TAKE(P);
	}
#undef TAKE
#undef A16
	return OCB_OK;
}

/* ---------------- layers ---------------- */


void lm_rmsnorm_forward(const float *x, const float *w, int n, int d, float eps, float *y,
			float *rinv)
{
	for (int i = 0; i < n; i++) {
		const float *xi = x + (size_t)i * d;
		float *yi = y + (size_t)i * d;
		float ss = 0.0f;
		for (int j = 0; j < d; j++)
			ss += xi[j] * xi[j];
		float r = 1.0f / sqrtf(ss / (float)d + eps);
		rinv[i] = r;
		for (int j = 0; j < d; j++)
			yi[j] = xi[j] * r * w[j];
	}
}

/* y = x r w, r = (mean x^2 + eps)^-1/2:
 * dx_j = r w_j dy_j - x_j r^3 / d * sum_k dy_k w_k x_k;  dw_j = sum_rows dy_j x_j r. */
void lm_rmsnorm_backward(const float *x, const float *w, const float *rinv, const float *dy,
			 int n, int d, float *dx, float *dw)
{
	for (int i = 0; i < n; i++) {
		const float *xi = x + (size_t)i * d, *gi = dy + (size_t)i * d;
		float *dxi = dx + (size_t)i * d;
		float r = rinv[i], dot = 0.0f;
		for (int j = 0; j < d; j++)
			dot += gi[j] * w[j] * xi[j];
		float c = dot * r * r * r / (float)d;
		for (int j = 0; j < d; j++)
			dxi[j] += r * w[j] * gi[j] - xi[j] * c;
	}
	if (!dw)
		return;
	/* Rows in order (a fixed summation order: deterministic for any thread count). */
	for (int i = 0; i < n; i++) {
		const float *xi = x + (size_t)i * d, *gi = dy + (size_t)i * d;
		float r = rinv[i];
		for (int j = 0; j < d; j++)
			dw[j] += gi[j] * xi[j] * r;
	}
}

void lm_rope_tables(int ctx, int hd, float theta, float *cos_t, float *sin_t)
{
	int h2 = hd / 2;
	for (int t = 0; t < ctx; t++)
		for (int i = 0; i < h2; i++) {
			/* RoFormer eq. (15): theta_i = base^(-2i/hd); angle in double, then fp32 */
			double ang = (double)t * pow((double)theta, -2.0 * i / (double)hd);
			cos_t[(size_t)t * h2 + i] = (float)cos(ang);
			sin_t[(size_t)t * h2 + i] = (float)sin(ang);
		}
}

void lm_rope_apply(float *x, int B, int T, int H, int hd, const float *cos_t,
		   const float *sin_t, int inverse)
{
	int h2 = hd / 2, d = H * hd;
	float sgn = inverse ? -1.0f : 1.0f;
	for (int row = 0; row < B * T; row++) {
		int t = row % T;
		const float *c = cos_t + (size_t)t * h2, *s = sin_t + (size_t)t * h2;
		float *xr = x + (size_t)row * d;
		for (int h = 0; h < H; h++) {
			float *xh = xr + h * hd;
			for (int i = 0; i < h2; i++) {
				float a = xh[2 * i], b = xh[2 * i + 1], si = sgn * s[i];
				xh[2 * i] = a * c[i] - b * si;
				xh[2 * i + 1] = a * si + b * c[i];
			}
		}
	}
}

/* Attention: one sgemm per (b, h) product (sgemm_det: thread-independent tiles over the
 * caller's OpenBLAS thread count; at the suites' T = 64 a product is one tile). (An OpenMP
 * loop over (b, h) was tried: libgomp's spinning workers then compete with OpenBLAS's own
 * pthreads for the cores and a 2-core step ran 3x slower unless OMP_WAIT_POLICY=passive.)
 * Each (b, h) result depends only on its own data. */
void lm_attention_forward(const float *q, const float *k, const float *v, int B, int T, int H,
			  int hd, float *p, float *out)
{
	int d = H * hd;
	float scale = 1.0f / sqrtf((float)hd);
	for (int bh = 0; bh < B * H; bh++) {
		int b = bh / H, h = bh % H;
		size_t off = (size_t)b * T * d + (size_t)h * hd;
		float *P = p + (size_t)bh * T * T;
		/* S[T][T] = scale Q K^T (Q, K: T x hd with row stride d) */
		ocb_sgemm_det(CblasNoTrans, CblasTrans, T, T, hd, scale, q + off, d,
			      k + off, d, 0.0f, P, T, 0);
		for (int i = 0; i < T; i++) {
			float *pi = P + (size_t)i * T, mx = pi[0], sum = 0.0f;
			for (int j = 1; j <= i; j++)
				mx = pi[j] > mx ? pi[j] : mx;
			for (int j = 0; j <= i; j++)
				sum += (pi[j] = expf(pi[j] - mx));
			float inv = 1.0f / sum;
			for (int j = 0; j <= i; j++)
				pi[j] *= inv;
			for (int j = i + 1; j < T; j++)
				pi[j] = 0.0f; /* causal mask */
		}
		/* O[T][hd] = P V */
		ocb_sgemm_det(CblasNoTrans, CblasNoTrans, T, hd, T, 1.0f, P, T,
			      v + off, d, 0.0f, out + off, d, 0);
	}
}

/* O = P V, P = softmax(S), S = c Q K^T:
 * dP = dO V^T, dV = P^T dO, dS = P .* (dP - rowsum(P .* dP)), dQ = c dS K, dK = c dS^T Q. */
void lm_attention_backward(const float *q, const float *k, const float *v, const float *p,
			   const float *dout, int B, int T, int H, int hd, float *dp, float *dq,
			   float *dk, float *dv)
{
	int d = H * hd;
	float scale = 1.0f / sqrtf((float)hd);
	for (int bh = 0; bh < B * H; bh++) {
		int b = bh / H, h = bh % H;
		size_t off = (size_t)b * T * d + (size_t)h * hd;
		const float *P = p + (size_t)bh * T * T;
		float *dP = dp + (size_t)bh * T * T;
		ocb_sgemm_det(CblasNoTrans, CblasTrans, T, T, hd, 1.0f, dout + off, d,
			      v + off, d, 0.0f, dP, T, 0);
		ocb_sgemm_det(CblasTrans, CblasNoTrans, T, hd, T, 1.0f, P, T,
			      dout + off, d, 0.0f, dv + off, d, 0);
		for (int i = 0; i < T; i++) {
			const float *pi = P + (size_t)i * T;
			float *gi = dP + (size_t)i * T, dot = 0.0f;
			for (int j = 0; j <= i; j++)
				dot += pi[j] * gi[j];
			for (int j = 0; j <= i; j++)
				gi[j] = pi[j] * (gi[j] - dot);
			for (int j = i + 1; j < T; j++)
				gi[j] = 0.0f;
		}
		ocb_sgemm_det(CblasNoTrans, CblasNoTrans, T, hd, T, scale, dP, T,
			      k + off, d, 0.0f, dq + off, d, 0);
		ocb_sgemm_det(CblasTrans, CblasNoTrans, T, hd, T, scale, dP, T,
			      q + off, d, 0.0f, dk + off, d, 0);
	}
}

void lm_swiglu_forward(const float *gate, const float *up, size_t n, float *out)
{
	for (size_t i = 0; i < n; i++) {
		float g = gate[i];
		out[i] = g / (1.0f + expf(-g)) * up[i];
	}
}

/* silu(g) = g s, s = sigmoid(g); silu'(g) = s (1 + g (1 - s)). */
void lm_swiglu_backward(const float *gate, const float *up, const float *dout, size_t n,
			float *dgate, float *dup)
{
	for (size_t i = 0; i < n; i++) {
		float g = gate[i], s = 1.0f / (1.0f + expf(-g));
		dup[i] = dout[i] * g * s;
		dgate[i] = dout[i] * up[i] * s * (1.0f + g * (1.0f - s));
	}
}

void lm_embedding_forward(const float *table, const uint8_t *tok, int n, int d, float *out)
{
	for (int i = 0; i < n; i++)
		memcpy(out + (size_t)i * d, table + (size_t)tok[i] * d, (size_t)d * sizeof(float));
}

void lm_embedding_backward(float *gtable, const uint8_t *tok, const float *dout, int n, int d)
{
	for (int i = 0; i < n; i++) {
		float *g = gtable + (size_t)tok[i] * d;
		const float *s = dout + (size_t)i * d;
		for (int j = 0; j < d; j++)
			g[j] += s[j];
	}
}

/* ---------------- model ---------------- */

static void hook(struct lm_model *m, int index, const float *x, int n, int in)
{
	if (m->on_linear_input)
		m->on_linear_input(m->hook_ctx, index, x, n, in);
}

static void add_into(float *restrict y, const float *restrict x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] += x[i];
}

int lm_forward(struct lm_model *m, const uint8_t *in, const int32_t *tgt, int B, int T,
	       double *loss_sum, long *n_scored)
{
	const struct lm_config *c = &m->cfg;
	int rc = lm_reserve(m, B, T);
	if (rc != OCB_OK)
		return rc;
	int d = c->d_model, f = c->ffn, H = c->n_heads, hd = d / H, V = c->vocab;
	int n = B * T, L = c->n_layers;
	for (int i = 0; i < n; i++)
		if (in[i] >= V)
			return ocb_seterr(OCB_EINVAL, "lm: token %d at %d outside vocab %d", in[i],
					  i, V);
	m->B = B, m->T = T, m->in = in, m->tgt = tgt, m->n_scored = 0;

	lm_embedding_forward(m->tok_emb, in, n, d, m->acts[0].x);
	for (int l = 0; l < L; l++) {
		struct lm_layer *ly = &m->layers[l];
		struct lm_layer_acts *s = &m->acts[l];
		int li = l * LM_LIN_PER_LAYER;
		float *xout = l + 1 < L ? m->acts[l + 1].x : m->xf;

		lm_rmsnorm_forward(s->x, ly->attn_norm, n, d, c->norm_eps, s->xn1, s->r1);
		hook(m, li + 0, s->xn1, n, d);
		ocb_linear_forward(&ly->wq, s->xn1, n, s->q);
		hook(m, li + 1, s->xn1, n, d);
		ocb_linear_forward(&ly->wk, s->xn1, n, s->k);
		hook(m, li + 2, s->xn1, n, d);
		ocb_linear_forward(&ly->wv, s->xn1, n, s->v);
		lm_rope_apply(s->q, B, T, H, hd, m->rope_cos, m->rope_sin, 0);
		lm_rope_apply(s->k, B, T, H, hd, m->rope_cos, m->rope_sin, 0);
		lm_attention_forward(s->q, s->k, s->v, B, T, H, hd, s->p, s->att);
		hook(m, li + 3, s->att, n, d);
		ocb_linear_forward(&ly->wo, s->att, n, m->tmp);
		memcpy(s->h, s->x, (size_t)n * d * sizeof(float));
		add_into(s->h, m->tmp, (size_t)n * d);

		lm_rmsnorm_forward(s->h, ly->ffn_norm, n, d, c->norm_eps, s->xn2, s->r2);
		hook(m, li + 4, s->xn2, n, d);
		ocb_linear_forward(&ly->w_gate, s->xn2, n, s->gate);
		hook(m, li + 5, s->xn2, n, d);
		ocb_linear_forward(&ly->w_up, s->xn2, n, s->up);
		lm_swiglu_forward(s->gate, s->up, (size_t)n * f, s->act);
		hook(m, li + 6, s->act, n, f);
		ocb_linear_forward(&ly->w_down, s->act, n, m->tmp);
		memcpy(xout, s->h, (size_t)n * d * sizeof(float));
		add_into(xout, m->tmp, (size_t)n * d);
	}
	lm_rmsnorm_forward(m->xf, m->final_norm, n, d, c->norm_eps, m->xnf, m->rf);
	hook(m, L * LM_LIN_PER_LAYER, m->xnf, n, d);
	ocb_linear_forward(&m->head, m->xnf, n, m->logits);

	if (!tgt) {
		if (loss_sum)
			*loss_sum = 0.0;
		if (n_scored)
			*n_scored = 0;
		return OCB_OK;
	}
	for (int i = 0; i < n; i++)
		if (tgt[i] >= V)
			return ocb_seterr(OCB_EINVAL, "lm: target %d at %d outside vocab %d",
					  (int)tgt[i], i, V);
	/* nll_i = logsumexp(logits_i) - logits_i[t_i] */
	for (int i = 0; i < n; i++) {
		if (tgt[i] < 0) {
			m->nll[i] = 0.0f;
			continue;
		}
		const float *z = m->logits + (size_t)i * V;
		float mx = z[0];
		for (int j = 1; j < V; j++)
			mx = z[j] > mx ? z[j] : mx;
		float s = 0.0f;
		for (int j = 0; j < V; j++)
			s += expf(z[j] - mx);
		m->nll[i] = mx + logf(s) - z[tgt[i]];
	}
	double sum = 0.0;
	long cnt = 0;
	for (int i = 0; i < n; i++)
		if (tgt[i] >= 0)
			sum += m->nll[i], cnt++;
	m->n_scored = cnt;
	if (loss_sum)
		*loss_sum = sum;
	if (n_scored)
		*n_scored = cnt;
	return OCB_OK;
}

/* dlogits = (softmax - onehot) / n_scored, in place of the logits. */
static void xent_dlogits(struct lm_model *m)
{
	int n = m->B * m->T, V = m->cfg.vocab;
	const int32_t *tgt = m->tgt;
	float inv = m->n_scored > 0 ? 1.0f / (float)m->n_scored : 0.0f;
	for (int i = 0; i < n; i++) {
		float *z = m->logits + (size_t)i * V;
		if (tgt[i] < 0) {
			memset(z, 0, (size_t)V * sizeof(float));
			continue;
		}
		float mx = z[0];
		for (int j = 1; j < V; j++)
			mx = z[j] > mx ? z[j] : mx;
		float s = 0.0f;
		for (int j = 0; j < V; j++)
			s += (z[j] = expf(z[j] - mx));
		float k = inv / s;
		for (int j = 0; j < V; j++)
			z[j] *= k;
		z[tgt[i]] -= inv;
	}
}

int lm_backward_block(struct lm_model *m, int l)
{
	const struct lm_config *c = &m->cfg;
	if (!m->grads || !m->arena || l < 0 || l >= c->n_layers)
		return ocb_seterr(OCB_EINVAL, "lm backward: block %d needs gradients and a forward",
				  l);
	int B = m->B, T = m->T, n = B * T;
	int d = c->d_model, f = c->ffn, H = c->n_heads, hd = d / H;
	struct lm_layer *ly = &m->layers[l];
	struct lm_layer_acts *s = &m->acts[l];
	/* MLP branch: dres is d(out) = d(h) through the residual */
	ocb_linear_backward(&ly->w_down, s->act, m->dres, n, m->dact);
	lm_swiglu_backward(s->gate, s->up, m->dact, (size_t)n * f, m->dgate, m->dup);
	ocb_linear_backward(&ly->w_up, s->xn2, m->dup, n, m->dxn);
	ocb_linear_backward(&ly->w_gate, s->xn2, m->dgate, n, m->dtmp);
	add_into(m->dxn, m->dtmp, (size_t)n * d);
	lm_rmsnorm_backward(s->h, ly->ffn_norm, s->r2, m->dxn, n, d, m->dres, ly->g_ffn_norm);
	/* attention branch: dres is now d(h) = d(x) through the residual */
	ocb_linear_backward(&ly->wo, s->att, m->dres, n, m->datt);
	lm_attention_backward(s->q, s->k, s->v, s->p, m->datt, B, T, H, hd, m->dp, m->dq, m->dk,
			      m->dv);
	lm_rope_apply(m->dq, B, T, H, hd, m->rope_cos, m->rope_sin, 1);
	lm_rope_apply(m->dk, B, T, H, hd, m->rope_cos, m->rope_sin, 1);
	ocb_linear_backward(&ly->wq, s->xn1, m->dq, n, m->dxn);
	ocb_linear_backward(&ly->wk, s->xn1, m->dk, n, m->dtmp);
	add_into(m->dxn, m->dtmp, (size_t)n * d);
	ocb_linear_backward(&ly->wv, s->xn1, m->dv, n, m->dtmp);
	add_into(m->dxn, m->dtmp, (size_t)n * d);
	lm_rmsnorm_backward(s->x, ly->attn_norm, s->r1, m->dxn, n, d, m->dres, ly->g_attn_norm);
	return OCB_OK;
}

int lm_backward_logits(struct lm_model *m)
{
	const struct lm_config *c = &m->cfg;
	if (!m->grads || !m->arena)
		return ocb_seterr(OCB_EINVAL, "lm backward: needs a model with gradients and a "
					      "forward");
	int n = m->B * m->T, d = c->d_model;
	ocb_linear_backward(&m->head, m->xnf, m->logits, n, m->dxn);
	memset(m->dres, 0, (size_t)n * d * sizeof(float));
	lm_rmsnorm_backward(m->xf, m->final_norm, m->rf, m->dxn, n, d, m->dres, m->g_final_norm);
	for (int l = c->n_layers - 1; l >= 0; l--)
		lm_backward_block(m, l);
	lm_embedding_backward(m->g_tok_emb, m->in, m->dres, n, d);
	return OCB_OK;
}

int lm_backward(struct lm_model *m)
{
	if (!m->grads || !m->tgt || !m->arena)
		return ocb_seterr(OCB_EINVAL, "lm backward: needs a model with gradients and a "
					      "forward with targets");
	xent_dlogits(m);
	return lm_backward_logits(m);
}

int lm_nlinears(const struct lm_model *m) { return m->cfg.n_layers * LM_LIN_PER_LAYER + 1; }

struct ocb_linear *lm_linear(struct lm_model *m, int index, const char **name)
{
	int L = m->cfg.n_layers;
	if (index < 0 || index > L * LM_LIN_PER_LAYER)
		return NULL;
	if (name)
		*name = m->lin_names[index];
	if (index == L * LM_LIN_PER_LAYER)
		return &m->head;
	struct lm_layer *ly = &m->layers[index / LM_LIN_PER_LAYER];
	struct ocb_linear *tab[LM_LIN_PER_LAYER] = {&ly->wq, &ly->wk, &ly->wv, &ly->wo,
						    &ly->w_gate, &ly->w_up, &ly->w_down};
	return tab[index % LM_LIN_PER_LAYER];
}

double lm_forward_flops(const struct lm_config *c, int B, int T)
{
	double n = (double)B * T, d = c->d_model, f = c->ffn, L = c->n_layers;
	double lin = 2.0 * n * (4.0 * d * d + 3.0 * d * f) * L + 2.0 * n * d * c->vocab;
	double att = 4.0 * B * (double)T * T * d * L; /* 2 products x 2 flops x B H T T hd */
	return lin + att;
}

size_t lm_weight_bytes(const struct lm_model *m)
{
	const struct lm_config *c = &m->cfg;
	size_t d = (size_t)c->d_model;
	/* embedding [V][d] and 2L+1 norm vectors stay fp32 */
	size_t b = ((size_t)c->vocab * d + (2 * (size_t)c->n_layers + 1) * d) * sizeof(float);
	struct lm_model *mm = (struct lm_model *)m; /* lm_linear does not modify */
	for (int i = 0; i < lm_nlinears(m); i++)
		b += ocb_linear_weight_bytes(lm_linear(mm, i, NULL));
	return b;
}

int lm_eval(struct lm_model *m, const uint8_t *text, size_t n, int window, int stride,
	    int batch, long max_windows, double *loss, double *ppl, long *n_scored)
{
	int rc = OCB_OK;
	uint8_t *in = NULL;
	int32_t *tgt = NULL;
	if (window < 1 || window > m->cfg.ctx || stride < 1 || stride > window || batch < 1)
		return ocb_seterr(OCB_EINVAL,
				  "lm eval: window %d (context %d), stride %d (1..window), batch %d",
				  window, m->cfg.ctx, stride, batch);
	if (n < 2)
		return ocb_seterr(OCB_EINVAL, "lm eval: text of %zu bytes has nothing to predict",
				  n);
	in = malloc((size_t)batch * window);
	tgt = malloc((size_t)batch * window * sizeof *tgt);
	if (!in || !tgt) {
		rc = ocb_seterr(OCB_ENOMEM, "lm eval: out of memory");
		goto out;
	}
	/* Window w starts at s_w = w * stride, feeds text[s .. s+len) and predicts
	 * text[s+1 .. s+len]; targets up to index `done` were scored by earlier windows. */
	size_t npred = n - 1, done = 0, s = 0;
	double sum = 0.0;
	long cnt = 0, nwin = 0;
	while (done < npred && (max_windows <= 0 || nwin < max_windows)) {
		int b = 0, len = 0;
		/* gather up to `batch` full windows, or one short final window */
		while (b < batch && done < npred && (max_windows <= 0 || nwin < max_windows)) {
			size_t avail = npred - s;
			int wl = avail < (size_t)window ? (int)avail : window;
			if (b > 0 && wl != len)
				break; /* a short last window goes in its own forward */
			len = wl;
			for (int t = 0; t < wl; t++) {
				size_t pos = s + (size_t)t; /* predicts target index pos+1 */
				in[(size_t)b * wl + t] = text[pos];
				tgt[(size_t)b * wl + t] = pos + 1 > done ? text[pos + 1] : -1;
			}
			done = s + (size_t)wl;
			s += (size_t)stride;
			b++, nwin++;
		}
		double ls;
		long c;
		if ((rc = lm_forward(m, in, tgt, b, len, &ls, &c)) != OCB_OK)
			goto out;
		sum += ls, cnt += c;
	}
	if (loss)
		*loss = cnt ? sum / (double)cnt : NAN;
	if (ppl)
		*ppl = cnt ? exp(sum / (double)cnt) : NAN;
	if (n_scored)
		*n_scored = cnt;
out:
	/* the forward state points at our buffers: forget it */
	m->in = NULL, m->tgt = NULL;
	free(in);
	free(tgt);
	return rc;
}

/* ---------------- checkpoints ---------------- */

cJSON *lm_config_json(const struct lm_config *c)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	int ok = cJSON_AddNumberToObject(o, "vocab", c->vocab) &&
		 cJSON_AddNumberToObject(o, "d_model", c->d_model) &&
		 cJSON_AddNumberToObject(o, "n_layers", c->n_layers) &&
		 cJSON_AddNumberToObject(o, "n_heads", c->n_heads) &&
		 cJSON_AddNumberToObject(o, "ctx", c->ctx) &&
		 cJSON_AddNumberToObject(o, "ffn", c->ffn) &&
		 cJSON_AddNumberToObject(o, "rope_theta", c->rope_theta) &&
		 cJSON_AddNumberToObject(o, "norm_eps", c->norm_eps);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int lm_save(const struct lm_model *m, const char *path)
{
	int rc = OCB_OK;
	struct lm_model *mm = (struct lm_model *)m; /* lm_tensor only reads the model */
	int nt = lm_ntensors(&m->cfg);
	struct ocb_ckpt_tensor *t = calloc((size_t)nt, sizeof *t);
	struct lm_tensor *lt = calloc((size_t)nt, sizeof *lt);
	cJSON *cfg = lm_config_json(&m->cfg);
	if (!t || !lt || !cfg) {
		rc = ocb_seterr(OCB_ENOMEM, "%s: out of memory saving the model", path);
		goto out;
	}
	for (int i = 0; i < nt; i++) {
		lm_tensor(mm, i, &lt[i]);
		t[i].name = lt[i].name;
		t[i].dtype = OCB_DT_F32;
		t[i].data = lt[i].data;
		if (lt[i].rows == 1) {
			t[i].ndim = 1, t[i].shape[0] = lt[i].cols;
		} else {
			t[i].ndim = 2, t[i].shape[0] = lt[i].rows, t[i].shape[1] = lt[i].cols;
		}
	}
	rc = ocb_ckpt_save(path, "lm", cfg, t, (size_t)nt);
out:
	cJSON_Delete(cfg);
	free(t);
	free(lt);
	return rc;
}

/* Integer field of the stored config, or an OCB_EFORMAT naming the file. */
static int cfg_int(const struct ocb_ckpt *c, const char *key, int *v)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(c->config, key);
	if (!cJSON_IsNumber(it) || it->valuedouble != (double)(int)it->valuedouble)
		return ocb_seterr(OCB_EFORMAT, "%s: lm config has no integer '%s'", c->path,
				  key);
	*v = (int)it->valuedouble;
	return OCB_OK;
}

int lm_load(const char *path, int with_grads, struct lm_model **out)
{
	int rc = OCB_OK;
	struct ocb_ckpt *ck = NULL;
	struct lm_model *m = NULL;
	*out = NULL;
	if ((rc = ocb_ckpt_load(path, &ck)) != OCB_OK)
		goto out;
	if ((rc = ocb_ckpt_expect_kind(ck, "lm")) != OCB_OK)
		goto out;
	struct lm_config c;
	lm_config_default(&c);
	if ((rc = cfg_int(ck, "vocab", &c.vocab)) || (rc = cfg_int(ck, "d_model", &c.d_model)) ||
	    (rc = cfg_int(ck, "n_layers", &c.n_layers)) ||
	    (rc = cfg_int(ck, "n_heads", &c.n_heads)) || (rc = cfg_int(ck, "ctx", &c.ctx)) ||
	    (rc = cfg_int(ck, "ffn", &c.ffn)))
		goto out;
	c.rope_theta = (float)ocb_json_num(ck->config, "rope_theta", c.rope_theta);
	c.norm_eps = (float)ocb_json_num(ck->config, "norm_eps", c.norm_eps);
	if (lm_config_check(&c) != OCB_OK) {
		rc = ocb_seterr(OCB_EFORMAT, "%s: bad lm config: %s", path, ocb_lasterr());
		goto out;
	}
	if ((rc = lm_create(&c, with_grads, 0, &m)) != OCB_OK)
		goto out;
	if (ck->ntensors != (size_t)lm_ntensors(&c)) {
		rc = ocb_seterr(OCB_EFORMAT, "%s: %zu tensors, an lm of this config has %d", path,
				ck->ntensors, lm_ntensors(&c));
		goto out;
	}
	for (int i = 0; i < lm_ntensors(&c); i++) {
		struct lm_tensor t;
		lm_tensor(m, i, &t);
		int64_t shape[2] = {t.rows, t.cols};
		if (t.rows == 1)
			shape[0] = t.cols;
		rc = ocb_ckpt_read_tensor(ck, t.name, OCB_DT_F32, t.rows == 1 ? 1 : 2, shape,
					  t.data);
		if (rc != OCB_OK)
			goto out;
	}
	*out = m;
	m = NULL;
out:
	lm_free(m);
	ocb_ckpt_free(ck);
	return rc;
}
