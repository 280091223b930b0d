#include "optim.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"

void ocb_optim_defaults(struct ocb_optim_cfg *cfg, enum ocb_optim_kind kind)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->kind = kind;
	cfg->beta1 = 0.9f;
	cfg->beta2 = 0.999f;
	cfg->eps = 1e-8f;
	cfg->momentum = 0.9f;
	cfg->weight_decay = kind == OCB_OPTIM_ADAMW ? 0.01f : 0.0f;
}

int ocb_optim_init(struct ocb_optim *o, const struct ocb_optim_cfg *cfg, size_t n)
{
	memset(o, 0, sizeof *o);
	if (n == 0)
		return ocb_seterr(OCB_EINVAL, "optimizer: no parameters");
	if (cfg->kind != OCB_OPTIM_ADAMW && cfg->kind != OCB_OPTIM_SGD)
		return ocb_seterr(OCB_EINVAL, "optimizer: unknown kind %d", (int)cfg->kind);
	if (!(cfg->weight_decay >= 0.0f))
		return ocb_seterr(OCB_EINVAL, "optimizer: weight decay %g < 0", cfg->weight_decay);
	if (cfg->kind == OCB_OPTIM_ADAMW &&
	    (!(cfg->beta1 >= 0.0f && cfg->beta1 < 1.0f) ||
	     !(cfg->beta2 >= 0.0f && cfg->beta2 < 1.0f) || !(cfg->eps > 0.0f)))
		return ocb_seterr(OCB_EINVAL, "adamw: need 0 <= beta1, beta2 < 1 and eps > 0 "
					      "(got %g, %g, %g)", cfg->beta1, cfg->beta2, cfg->eps);
	if (cfg->kind == OCB_OPTIM_SGD && !(cfg->momentum >= 0.0f && cfg->momentum < 1.0f))
		return ocb_seterr(OCB_EINVAL, "sgd: momentum %g outside [0, 1)", cfg->momentum);

	/* m (and v) in one allocation; each view 64-byte aligned */
	size_t per = ocb_round_up(n * sizeof(float), OCB_ALIGN);
	size_t nvec = cfg->kind == OCB_OPTIM_ADAMW ? 2 : 1;
	o->block = ocb_alloc(per * nvec);
	if (!o->block)
		return OCB_ENOMEM;
	o->cfg = *cfg;
	o->n = n;
	o->m = o->block;
	o->v = nvec == 2 ? (float *)((char *)o->block + per) : NULL;
	return OCB_OK;
}

int ocb_optim_no_decay(struct ocb_optim *o, size_t off, size_t len)
{
	if (len == 0)
		return OCB_OK;
	if (off > o->n || len > o->n - off)
		return ocb_seterr(OCB_EINVAL, "optimizer: no-decay range [%zu, %zu) outside [0, %zu)",
				  off, off + len, o->n);
	size_t pos = 0; /* insertion point keeping the list sorted */
	while (pos < o->nnodecay && o->nodecay[pos].off < off)
		pos++;
	if (pos > 0 && o->nodecay[pos - 1].off + o->nodecay[pos - 1].len > off)
		return ocb_seterr(OCB_EINVAL, "optimizer: no-decay range at %zu overlaps", off);
	if (pos < o->nnodecay && off + len > o->nodecay[pos].off)
		return ocb_seterr(OCB_EINVAL, "optimizer: no-decay range at %zu overlaps", off);
	struct ocb_optim_range *r = realloc(o->nodecay, (o->nnodecay + 1) * sizeof *r);
	if (!r)
		return ocb_seterr(OCB_ENOMEM, "optimizer: cannot grow range list");
	memmove(r + pos + 1, r + pos, (o->nnodecay - pos) * sizeof *r);
	r[pos].off = off;
	r[pos].len = len;
	o->nodecay = r;
	o->nnodecay++;
	return OCB_OK;
}

/* AdamW on p[0..n) with decay wd; c1 = 1/(1-b1^t), c2 = 1/(1-b2^t). Plain C, the
 * reference for the AVX2 twin. Written as separate multiplies and adds (no fused
 * multiply-add anywhere) so that both round identically: the AVX2 path is bit-exact. */
void ocb_adamw_span_ref(float *restrict p, const float *restrict g, float *restrict m,
			float *restrict v, size_t n, float lr, float wd, float b1, float b2,
			float eps, float c1, float c2)
{
	const float keep = 1.0f - lr * wd, a1 = 1.0f - b1, a2 = 1.0f - b2;
	for (size_t i = 0; i < n; i++) {
		float gi = g[i];
		float mi = b1 * m[i] + a1 * gi;
		float vi = b2 * v[i] + a2 * (gi * gi);
		m[i] = mi;
		v[i] = vi;
		float den = sqrtf(vi * c2) + eps;
		p[i] = p[i] * keep - lr * (mi * c1) / den;
	}
}

/* The same, 8 lanes at a time. Why: at -O2 GCC keeps a scalar sqrtf call per element
 * (errno), so the plain loop runs ~3x slower than memory allows and was ~10% of an MLP
 * training step. target("avx2") without "fma": no contraction, results equal the ref. */
__attribute__((target("avx2"))) static void adamw_span_avx2(
	float *restrict p, const float *restrict g, float *restrict m, float *restrict v,
	size_t n, float lr, float wd, float b1, float b2, float eps, float c1, float c2)
{
	const __m256 vkeep = _mm256_set1_ps(1.0f - lr * wd), vb1 = _mm256_set1_ps(b1),
		     vb2 = _mm256_set1_ps(b2), va1 = _mm256_set1_ps(1.0f - b1),
		     va2 = _mm256_set1_ps(1.0f - b2), vc1 = _mm256_set1_ps(c1),
		     vc2 = _mm256_set1_ps(c2), veps = _mm256_set1_ps(eps),
		     vlr = _mm256_set1_ps(lr);
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 gi = _mm256_loadu_ps(g + i);
		__m256 mi = _mm256_add_ps(_mm256_mul_ps(vb1, _mm256_loadu_ps(m + i)),
					  _mm256_mul_ps(va1, gi));
		__m256 vi = _mm256_add_ps(_mm256_mul_ps(vb2, _mm256_loadu_ps(v + i)),
					  _mm256_mul_ps(va2, _mm256_mul_ps(gi, gi)));
		_mm256_storeu_ps(m + i, mi);
		_mm256_storeu_ps(v + i, vi);
		__m256 den = _mm256_add_ps(_mm256_sqrt_ps(_mm256_mul_ps(vi, vc2)), veps);
		__m256 upd = _mm256_div_ps(_mm256_mul_ps(vlr, _mm256_mul_ps(mi, vc1)), den);
		__m256 pi = _mm256_sub_ps(_mm256_mul_ps(_mm256_loadu_ps(p + i), vkeep), upd);
		_mm256_storeu_ps(p + i, pi);
	}
	if (i < n)
		ocb_adamw_span_ref(p + i, g + i, m + i, v + i, n - i, lr, wd, b1, b2, eps, c1, c2);
}

void ocb_adamw_span(float *restrict p, const float *restrict g, float *restrict m,
		    float *restrict v, size_t n, float lr, float wd, float b1, float b2, float eps,
		    float c1, float c2)
{
	if (ocb_cpu_avx2())
		adamw_span_avx2(p, g, m, v, n, lr, wd, b1, b2, eps, c1, c2);
	else
		ocb_adamw_span_ref(p, g, m, v, n, lr, wd, b1, b2, eps, c1, c2);
}

/* SGD with momentum on p[0..n). The velocity starts at zero, so the first step's
 * velocity is the gradient itself (PyTorch's buffer initialisation). */
static void sgd_span(float *restrict p, const float *restrict g, float *restrict m, size_t n,
		     float lr, float wd, float mu)
{
#pragma omp simd
	for (size_t i = 0; i < n; i++) {
		float gi = g[i] + wd * p[i];
		float vi = mu * m[i] + gi;
		m[i] = vi;
		p[i] -= lr * vi;
	}
}

static void step_span(struct ocb_optim *o, float *p, const float *g, size_t off, size_t len,
		      float lr, float wd, float c1, float c2)
{
	if (len == 0)
		return;
	const struct ocb_optim_cfg *c = &o->cfg;
	if (c->kind == OCB_OPTIM_ADAMW)
		ocb_adamw_span(p + off, g + off, o->m + off, o->v + off, len, lr, wd, c->beta1,
			   c->beta2, c->eps, c1, c2);
	else
		sgd_span(p + off, g + off, o->m + off, len, lr, wd, c->momentum);
}

void ocb_optim_step(struct ocb_optim *o, float *params, const float *grads, float lr)
{
	o->t++;
	float c1 = 1.0f, c2 = 1.0f;
	if (o->cfg.kind == OCB_OPTIM_ADAMW) {
		/* bias corrections in double: pow of a value close to 1 */
		c1 = (float)(1.0 / (1.0 - pow(o->cfg.beta1, (double)o->t)));
		c2 = (float)(1.0 / (1.0 - pow(o->cfg.beta2, (double)o->t)));
	}
	float wd = o->cfg.weight_decay;
	size_t pos = 0;
	for (size_t r = 0; r < o->nnodecay; r++) {
		const struct ocb_optim_range *nr = &o->nodecay[r];
		step_span(o, params, grads, pos, nr->off - pos, lr, wd, c1, c2);
		step_span(o, params, grads, nr->off, nr->len, lr, 0.0f, c1, c2);
		pos = nr->off + nr->len;
	}
	step_span(o, params, grads, pos, o->n - pos, lr, wd, c1, c2);
}

size_t ocb_optim_state_bytes(const struct ocb_optim *o)
{
	if (!o->block)
		return 0;
	return o->n * sizeof(float) * (o->v ? 2 : 1);
}

const char *ocb_optim_name(enum ocb_optim_kind kind)
{
	return kind == OCB_OPTIM_ADAMW ? "adamw" : kind == OCB_OPTIM_SGD ? "sgd" : "unknown";
}

void ocb_optim_release(struct ocb_optim *o)
{
	if (!o)
		return;
	ocb_free(o->block);
	free(o->nodecay);
	memset(o, 0, sizeof *o);
}

double ocb_optim_clip_grad_norm(float *g, size_t n, double max_norm)
{
	double ss = 0.0;
	for (size_t i = 0; i < n; i++)
		ss += (double)g[i] * g[i];
	double norm = sqrt(ss);
	if (max_norm > 0.0 && norm > max_norm) {
		float s = (float)(max_norm / norm);
		for (size_t i = 0; i < n; i++)
			g[i] *= s;
	}
	return norm;
}
