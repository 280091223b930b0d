/* optim_lars: LARS (see optim_lars.h). */
#include "optim_lars.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"

int ocb_lars_init(struct ocb_lars *o, size_t n, float eta, float momentum, float weight_decay)
{
	memset(o, 0, sizeof *o);
	if (n == 0 || !(eta > 0.0f) || !(momentum >= 0.0f && momentum < 1.0f) ||
	    !(weight_decay >= 0.0f))
		return ocb_seterr(OCB_EINVAL, "lars: n %zu, eta %g, momentum %g, wd %g", n, eta,
				  momentum, weight_decay);
	if (!(o->v = ocb_alloc(n * sizeof(float))))
		return ocb_seterr(OCB_ENOMEM, "lars: velocity of %zu parameters", n);
	memset(o->v, 0, n * sizeof(float));
	o->n = n;
	o->eta = eta;
	o->momentum = momentum;
	o->weight_decay = weight_decay;
	return OCB_OK;
}

int ocb_lars_add_layer(struct ocb_lars *o, size_t off, size_t len, int exempt)
{
	if (len == 0 || off > o->n || len > o->n - off)
		return ocb_seterr(OCB_EINVAL, "lars: layer [%zu, +%zu) outside %zu parameters", off,
				  len, o->n);
	for (int i = 0; i < o->nlayers; i++)
		if (off < o->layers[i].off + o->layers[i].len && o->layers[i].off < off + len)
			return ocb_seterr(OCB_EINVAL, "lars: layer [%zu, +%zu) overlaps another",
					  off, len);
	if (o->nlayers == o->cap) {
		int cap = o->cap ? 2 * o->cap : 8;
		void *p = realloc(o->layers, (size_t)cap * sizeof *o->layers);
		if (!p)
			return ocb_seterr(OCB_ENOMEM, "lars: layers");
		o->layers = p;
		o->cap = cap;
	}
	o->layers[o->nlayers++] = (struct ocb_lars_layer){off, len, exempt, 1.0f};
	return OCB_OK;
}

double ocb_lars_trust_ratio(const float *w, const float *g, size_t len, double eta, double wd)
{
	double ww = 0.0, gg = 0.0;
	for (size_t i = 0; i < len; i++) {
		ww += (double)w[i] * w[i];
		gg += (double)g[i] * g[i];
	}
	double wn = sqrt(ww), gn = sqrt(gg);
	return wn > 0.0 && gn > 0.0 ? eta * wn / (gn + wd * wn) : 1.0;
}

void ocb_lars_step(struct ocb_lars *o, float *params, const float *grads, float lr)
{
	float m = o->momentum;
	for (int l = 0; l < o->nlayers; l++) {
		struct ocb_lars_layer *ly = &o->layers[l];
		float *w = params + ly->off, *v = o->v + ly->off;
		const float *g = grads + ly->off;
		if (ly->exempt) {
			for (size_t i = 0; i < ly->len; i++) {
				v[i] = m * v[i] + lr * g[i];
				w[i] -= v[i];
			}
			continue;
		}
		float wd = o->weight_decay;
		float r = (float)ocb_lars_trust_ratio(w, g, ly->len, o->eta, wd);
		float s = lr * r;
		ly->last_ratio = r;
		for (size_t i = 0; i < ly->len; i++) {
			v[i] = m * v[i] + s * (g[i] + wd * w[i]);
			w[i] -= v[i];
		}
	}
}

void ocb_lars_release(struct ocb_lars *o)
{
	ocb_free(o->v);
	free(o->layers);
	memset(o, 0, sizeof *o);
}
