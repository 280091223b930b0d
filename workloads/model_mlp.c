#include "model_mlp.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "checkpoint.h"

void ocb_mlp_default_cfg(struct ocb_mlp_cfg *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->nlayers = 3;
	cfg->dims[0] = 784;
	cfg->dims[1] = 512;
	cfg->dims[2] = 256;
	cfg->dims[3] = 10;
}

int ocb_mlp_cfg_from_json(const cJSON *j, struct ocb_mlp_cfg *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	const cJSON *dims = cJSON_GetObjectItemCaseSensitive(j, "dims");
	int n = cJSON_IsArray(dims) ? cJSON_GetArraySize(dims) : 0;
	if (n < 2 || n > OCB_MLP_MAXLAYERS + 1)
		return ocb_seterr(OCB_EINVAL, "mlp config: \"dims\" must be an array of 2..%d sizes",
				  OCB_MLP_MAXLAYERS + 1);
	int i = 0;
	for (const cJSON *e = dims->child; e; e = e->next, i++) {
		if (!cJSON_IsNumber(e) || e->valuedouble < 1 || e->valuedouble > 1 << 20 ||
		    e->valuedouble != (int)e->valuedouble)
			return ocb_seterr(OCB_EINVAL, "mlp config: dims[%d] is not a size", i);
		cfg->dims[i] = (int)e->valuedouble;
	}
	cfg->nlayers = n - 1;
	return OCB_OK;
}

cJSON *ocb_mlp_cfg_to_json(const struct ocb_mlp_cfg *cfg)
{
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return NULL;
	cJSON_AddStringToObject(j, "act", "relu");
	cJSON_AddItemToObject(j, "dims", cJSON_CreateIntArray(cfg->dims, cfg->nlayers + 1));
	cJSON_AddStringToObject(j, "loss", "softmax_xent");
	return j;
}

int ocb_mlp_init(struct ocb_mlp *m, const struct ocb_mlp_cfg *cfg, int max_batch)
{
	memset(m, 0, sizeof *m);
	if (cfg->nlayers < 1 || cfg->nlayers > OCB_MLP_MAXLAYERS || max_batch < 1)
		return ocb_seterr(OCB_EINVAL, "mlp: %d layers, batch %d", cfg->nlayers, max_batch);
	int maxd = 0;
	for (int i = 0; i <= cfg->nlayers; i++) {
		if (cfg->dims[i] < 1)
			return ocb_seterr(OCB_EINVAL, "mlp: dims[%d] = %d", i, cfg->dims[i]);
		if (cfg->dims[i] > maxd)
			maxd = cfg->dims[i];
	}
	m->cfg = *cfg;
	m->max_batch = max_batch;

	/* parameter layout: W_0 b_0 W_1 b_1 ...; each tensor starts 64-byte aligned
	 * (16 floats) so sgemm sees aligned rows' base */
	size_t off = 0;
	for (int i = 0; i < cfg->nlayers; i++) {
		m->w_off[i] = off;
		off += ocb_round_up((size_t)cfg->dims[i] * cfg->dims[i + 1], 16);
		m->b_off[i] = off;
		off += ocb_round_up((size_t)cfg->dims[i + 1], 16);
	}
	m->nparams = off;
	m->params = ocb_alloc(off * sizeof(float));
	m->grads = ocb_alloc(off * sizeof(float));

	/* activations: act[1..L] then probs then two scratch buffers */
	size_t abytes = 0, per[OCB_MLP_MAXLAYERS + 4];
	for (int i = 1; i <= cfg->nlayers; i++)
		abytes += per[i] = ocb_round_up((size_t)max_batch * cfg->dims[i] * 4, OCB_ALIGN);
	size_t pb = ocb_round_up((size_t)max_batch * cfg->dims[cfg->nlayers] * 4, OCB_ALIGN);
	size_t db = ocb_round_up((size_t)max_batch * maxd * 4, OCB_ALIGN);
	abytes += pb + 2 * db;
	m->act_block = ocb_alloc(abytes);
	m->act_bytes = abytes;
	if (!m->params || !m->grads || !m->act_block) {
		ocb_mlp_release(m);
		return ocb_seterr(OCB_ENOMEM, "mlp: cannot allocate %zu parameters", off);
	}
	char *a = m->act_block;
	for (int i = 1; i <= cfg->nlayers; i++) {
		m->act[i] = (float *)a;
		a += per[i];
	}
	m->probs = (float *)a;
	a += pb;
	m->d[0] = (float *)a;
	m->d[1] = (float *)(a + db);

	for (int i = 0; i < cfg->nlayers; i++) {
		struct ocb_linear *l = &m->layer[i];
		l->in = cfg->dims[i];
		l->out = cfg->dims[i + 1];
		l->w = m->params + m->w_off[i];
		l->b = m->params + m->b_off[i];
		l->gw = m->grads + m->w_off[i];
		l->gb = m->grads + m->b_off[i];
	}
	return OCB_OK;
}

void ocb_mlp_init_weights(struct ocb_mlp *m, uint64_t seed)
{
	struct ocb_rng r;
	ocb_rng_seed(&r, seed);
	memset(m->params, 0, m->nparams * sizeof(float));
	for (int i = 0; i < m->cfg.nlayers; i++) {
		struct ocb_linear *l = &m->layer[i];
		double std = sqrt(2.0 / l->in);
		for (size_t k = 0; k < (size_t)l->in * l->out; k++)
			l->w[k] = (float)(std * ocb_rng_normal(&r));
	}
}

void ocb_mlp_release(struct ocb_mlp *m)
{
	if (!m)
		return;
	ocb_free(m->params);
	ocb_free(m->grads);
	ocb_free(m->act_block);
	memset(m, 0, sizeof *m);
}

/* In place h = max(h, 0). The select form (not fmaxf, whose NaN rule blocks maxps)
 * vectorises under omp simd at -O2. */
static void relu_inplace(float *restrict h, size_t n)
{
#pragma omp simd
	for (size_t i = 0; i < n; i++)
		h[i] = h[i] > 0.0f ? h[i] : 0.0f;
}

/* In place d = d * (h > 0): ReLU backward through its output (h = relu(z) > 0 iff
 * z > 0). */
static void relu_backward(float *restrict d, const float *restrict h, size_t n)
{
#pragma omp simd
	for (size_t i = 0; i < n; i++)
		d[i] = h[i] > 0.0f ? d[i] : 0.0f;
}

const float *ocb_mlp_forward(struct ocb_mlp *m, const float *x, int n)
{
	int L = m->cfg.nlayers;
	m->in = x;
	const float *cur = x;
	for (int i = 0; i < L; i++) {
		ocb_linear_forward(&m->layer[i], cur, n, m->act[i + 1]);
		if (i + 1 < L)
			relu_inplace(m->act[i + 1], (size_t)n * m->cfg.dims[i + 1]);
		cur = m->act[i + 1];
	}
	return m->act[L];
}

double ocb_softmax_xent(const float *logits, const int *y, int n, int k, float *probs,
			float *dlogits)
{
	double loss = 0.0; /* summed in row order: deterministic */
	for (int i = 0; i < n; i++) {
		const float *z = logits + (size_t)i * k;
		float *p = probs + (size_t)i * k;
		float mx = z[0];
		for (int j = 1; j < k; j++)
			mx = z[j] > mx ? z[j] : mx;
		double s = 0.0;
		for (int j = 0; j < k; j++) {
			p[j] = expf(z[j] - mx);
			s += p[j];
		}
		float inv = (float)(1.0 / s);
		for (int j = 0; j < k; j++)
			p[j] *= inv;
		/* -log softmax_y = log(sum) - (z_y - max) */
		loss += log(s) - (double)(z[y[i]] - mx);
		if (dlogits) {
			float *d = dlogits + (size_t)i * k;
			float sc = 1.0f / (float)n;
			for (int j = 0; j < k; j++)
				d[j] = (p[j] - (j == y[i] ? 1.0f : 0.0f)) * sc;
		}
	}
	return n ? loss / n : 0.0;
}

double ocb_mlp_grad(struct ocb_mlp *m, const float *x, const int *y, int n)
{
	int L = m->cfg.nlayers;
	memset(m->grads, 0, m->nparams * sizeof(float));
	const float *logits = ocb_mlp_forward(m, x, n);
	float *dcur = m->d[0], *dnext = m->d[1];
	double loss = ocb_softmax_xent(logits, y, n, m->cfg.dims[L], m->probs, dcur);
	for (int i = L - 1; i >= 0; i--) {
		const float *xin = i == 0 ? x : m->act[i];
		/* dx of the first layer is not needed: skip that product */
		ocb_linear_backward(&m->layer[i], xin, dcur, n, i == 0 ? NULL : dnext);
		if (i > 0) {
			/* through the ReLU that produced act[i]; in place on dnext */
			relu_backward(dnext, m->act[i], (size_t)n * m->cfg.dims[i]);
			float *t = dcur;
			dcur = dnext;
			dnext = t;
		}
	}
	return loss;
}

void ocb_mlp_predict(struct ocb_mlp *m, const float *x, int n, int *pred)
{
	const float *z = ocb_mlp_forward(m, x, n);
	int k = m->cfg.dims[m->cfg.nlayers];
	for (int i = 0; i < n; i++) {
		const float *zi = z + (size_t)i * k;
		int best = 0;
		for (int j = 1; j < k; j++)
			if (zi[j] > zi[best])
				best = j;
		pred[i] = best;
	}
}

double ocb_mlp_step_flops(const struct ocb_mlp *m, int n)
{
	double f = 0.0;
	for (int i = 0; i < m->cfg.nlayers; i++)
		f += ocb_linear_fwd_flops(&m->layer[i], n) +
		     ocb_linear_bwd_flops(&m->layer[i], n, i > 0);
	return f;
}

size_t ocb_mlp_weight_bytes(const struct ocb_mlp *m)
{
	size_t b = 0;
	for (int i = 0; i < m->cfg.nlayers; i++)
		b += ocb_linear_weight_bytes(&m->layer[i]);
	return b;
}

size_t ocb_mlp_grad_bytes(const struct ocb_mlp *m)
{
	return m->nparams * sizeof(float);
}

int ocb_mlp_save(const struct ocb_mlp *m, const char *path)
{
	struct ocb_ckpt_tensor t[2 * OCB_MLP_MAXLAYERS];
	char names[2 * OCB_MLP_MAXLAYERS][16];
	int L = m->cfg.nlayers;
	for (int i = 0; i < L; i++) {
		const struct ocb_linear *l = &m->layer[i];
		snprintf(names[2 * i], 16, "fc%d.w", i + 1);
		snprintf(names[2 * i + 1], 16, "fc%d.b", i + 1);
		t[2 * i] = (struct ocb_ckpt_tensor){.name = names[2 * i], .dtype = OCB_DT_F32,
						    .ndim = 2, .shape = {l->out, l->in}, .data = l->w};
		t[2 * i + 1] = (struct ocb_ckpt_tensor){.name = names[2 * i + 1],
							.dtype = OCB_DT_F32, .ndim = 1,
							.shape = {l->out}, .data = l->b};
	}
	cJSON *cfg = ocb_mlp_cfg_to_json(&m->cfg);
	if (!cfg)
		return ocb_seterr(OCB_ENOMEM, "%s: out of memory", path);
	int rc = ocb_ckpt_save(path, "mlp", cfg, t, (size_t)(2 * L));
	cJSON_Delete(cfg);
	return rc;
}

int ocb_mlp_load(const char *path, int max_batch, struct ocb_mlp *m)
{
	struct ocb_ckpt *c = NULL;
	struct ocb_mlp_cfg cfg;
	int rc;

	memset(m, 0, sizeof *m);
	rc = ocb_ckpt_load(path, &c);
	if (rc)
		goto out;
	rc = ocb_ckpt_expect_kind(c, "mlp");
	if (rc)
		goto out;
	if (ocb_mlp_cfg_from_json(c->config, &cfg) != OCB_OK) {
		rc = ocb_seterr(OCB_EFORMAT, "%s: %s", path, ocb_lasterr());
		goto out;
	}
	rc = ocb_mlp_init(m, &cfg, max_batch);
	if (rc)
		goto out;
	for (int i = 0; i < cfg.nlayers && rc == OCB_OK; i++) {
		struct ocb_linear *l = &m->layer[i];
		char nw[16], nb[16];
		snprintf(nw, sizeof nw, "fc%d.w", i + 1);
		snprintf(nb, sizeof nb, "fc%d.b", i + 1);
		int64_t sw[2] = {l->out, l->in}, sb[1] = {l->out};
		rc = ocb_ckpt_read_tensor(c, nw, OCB_DT_F32, 2, sw, l->w);
		if (rc == OCB_OK)
			rc = ocb_ckpt_read_tensor(c, nb, OCB_DT_F32, 1, sb, l->b);
	}
out:
	if (rc)
		ocb_mlp_release(m);
	ocb_ckpt_free(c);
	return rc;
}

int ocb_mlp_same_shape(const struct ocb_mlp *a, const struct ocb_mlp *b)
{
	if (a->cfg.nlayers != b->cfg.nlayers)
		return 0;
	for (int i = 0; i <= a->cfg.nlayers; i++)
		if (a->cfg.dims[i] != b->cfg.dims[i])
			return 0;
	return 1;
}
