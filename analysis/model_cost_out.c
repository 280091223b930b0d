/* model_cost_out: see model_cost_out.h. */
#include "model_cost_out.h"

#include <math.h>
#include <string.h>

char *ocb_fmt_count(double x, char *buf, size_t len)
{
	const char *u[] = {"", " k", " M", " B", " T"};
	int i = 0;
	while (fabs(x) >= 1000 && i < 4) {
		x /= 1000;
		i++;
	}
	snprintf(buf, len, i ? "%.2f%s" : "%.0f%s", x, u[i]);
	return buf;
}

char *ocb_fmt_bytes(double x, char *buf, size_t len)
{
	const char *u[] = {"B", "kB", "MB", "GB", "TB"};
	int i = 0;
	while (fabs(x) >= 1000 && i < 4) {
		x /= 1000;
		i++;
	}
	snprintf(buf, len, i ? "%.2f %s" : "%.0f %s", x, u[i]);
	return buf;
}

static const char *fmt_label(int f)
{
	return f < 0 ? "plan" : ocb_wfmt_name(f);
}

static void add_num(cJSON *o, const char *k, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

static cJSON *fmt_obj(const double *v)
{
	cJSON *o = cJSON_CreateObject();
	for (int f = 0; o && f < WF_N; f++)
		add_num(o, ocb_wfmt_name(f), v[f]);
	return o;
}

static cJSON *layer_json(const struct ocb_cost_layer *l)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "name", l->name);
	add_num(o, "params", l->params);
	add_num(o, "flops_decode", l->flops_decode);
	add_num(o, "flops_prefill", l->flops_prefill);
	cJSON_AddItemToObject(o, "weight_bytes", fmt_obj(l->wbytes));
	cJSON_AddItemToObject(o, "read_decode_bytes", fmt_obj(l->read_decode));
	add_num(o, "kv_bytes", l->kv_bytes);
	add_num(o, "act_bytes", l->act_bytes);
	return o;
}

static cJSON *spec_json(const struct ocb_model_spec *s)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "name", s->name);
	cJSON_AddStringToObject(o, "arch", ocb_arch_name(s->arch));
	if (s->arch == OCB_ARCH_MLP) {
		cJSON *d = cJSON_AddArrayToObject(o, "dims");
		for (int i = 0; d && i <= s->nlin; i++)
			cJSON_AddItemToArray(d, cJSON_CreateNumber((double)s->dims[i]));
		return o;
	}
	add_num(o, "vocab", (double)s->vocab);
	add_num(o, "d_model", (double)s->d_model);
	add_num(o, "n_layers", (double)s->n_layers);
	add_num(o, "n_heads", (double)s->n_heads);
	add_num(o, "n_kv_heads", (double)s->n_kv_heads);
	add_num(o, "head_dim", (double)s->head_dim);
	add_num(o, "ffn", (double)s->ffn);
	cJSON_AddBoolToObject(o, "tied_embeddings", s->tied);
	return o;
}

static cJSON *pred_json(const struct ocb_cost *c, const struct ocb_pred *p)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "format", fmt_label(p->fmt));
	add_num(o, "threads", p->threads);
	cJSON_AddStringToObject(o, "level", p->level);
	add_num(o, "decode_tok_s", p->decode_tok_s);
	add_num(o, "prefill_s", p->prefill_s);
	cJSON *a = cJSON_AddArrayToObject(o, "layers");
	for (int i = 0; a && i < p->nlayers; i++) {
		cJSON *l = cJSON_CreateObject();
		cJSON_AddStringToObject(l, "name", c->layer[i].name);
		add_num(l, "t_decode", p->layer[i].t_decode);
		cJSON_AddStringToObject(l, "bound_decode", p->layer[i].bound_decode);
		add_num(l, "t_prefill", p->layer[i].t_prefill);
		cJSON_AddStringToObject(l, "bound_prefill", p->layer[i].bound_prefill);
		cJSON_AddItemToArray(a, l);
	}
	return o;
}

cJSON *ocb_cost_json(const struct ocb_cost *c, const struct ocb_pred *p, int np)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddItemToObject(o, "model", spec_json(&c->spec));
	add_num(o, "ctx", (double)c->ctx);
	add_num(o, "batch", (double)c->batch);
	cJSON *a = cJSON_AddArrayToObject(o, "layers");
	for (int i = 0; a && i < c->nlayers; i++)
		cJSON_AddItemToArray(a, layer_json(&c->layer[i]));
	cJSON_AddItemToObject(o, "total", layer_json(&c->total));
	cJSON *pa = cJSON_AddArrayToObject(o, "predictions");
	for (int i = 0; pa && i < np; i++)
		cJSON_AddItemToArray(pa, pred_json(c, &p[i]));
	return o;
}

static int same_cost(const struct ocb_cost_layer *a, const struct ocb_cost_layer *b)
{
	return a->params == b->params && a->flops_decode == b->flops_decode &&
	       a->flops_prefill == b->flops_prefill && a->kv_bytes == b->kv_bytes &&
	       a->act_bytes == b->act_bytes &&
	       memcmp(a->wbytes, b->wbytes, sizeof a->wbytes) == 0;
}

static void model_line(const struct ocb_cost *c, FILE *f)
{
	const struct ocb_model_spec *s = &c->spec;
	char p[32], kv[32], act[32];
	ocb_fmt_count(c->total.params, p, sizeof p);
	if (s->arch == OCB_ARCH_MLP) {
		fprintf(f, "%s (mlp): %s parameters, %d linears\nbatch %lld: activations %s "
			"(fp32)\n\n", s->name, p, s->nlin, (long long)c->batch,
			ocb_fmt_bytes(c->total.act_bytes, act, sizeof act));
		return;
	}
	fprintf(f, "%s (llama): %s parameters, %lld layers, d_model %lld, %lld heads / %lld KV "
		"(head %lld), FFN %lld, vocab %lld, %s embeddings\n", s->name, p,
		(long long)s->n_layers, (long long)s->d_model, (long long)s->n_heads,
		(long long)s->n_kv_heads, (long long)s->head_dim, (long long)s->ffn,
		(long long)s->vocab, s->tied ? "tied" : "untied");
	fprintf(f, "context %lld, batch %lld: KV cache %s (f16), peak activations %s (fp32, "
		"prefill, one block)\n\n", (long long)c->ctx, (long long)c->batch,
		ocb_fmt_bytes(c->total.kv_bytes, kv, sizeof kv),
		ocb_fmt_bytes(c->total.act_bytes, act, sizeof act));
}

static void layer_row(const char *name, const struct ocb_cost_layer *l, FILE *f)
{
	char a[32], b[32], d[32], w1[32], w2[32], w3[32];
	fprintf(f, "%-16s %10s %12s %12s %11s %11s %11s\n", name,
		ocb_fmt_count(l->params, a, sizeof a), ocb_fmt_count(l->flops_decode, b, sizeof b),
		ocb_fmt_count(l->flops_prefill, d, sizeof d),
		ocb_fmt_bytes(l->wbytes[WF_F16], w1, sizeof w1),
		ocb_fmt_bytes(l->wbytes[WF_Q4_0], w2, sizeof w2),
		ocb_fmt_bytes(l->kv_bytes, w3, sizeof w3));
}

void ocb_cost_print(const struct ocb_cost *c, FILE *f)
{
	char name[40];
	model_line(c, f);
	fprintf(f, "%-16s %10s %12s %12s %11s %11s %11s\n", "layer", "params", "FLOP/tok dec",
		"FLOP/tok pre", "f16", "q4_0", "KV cache");
	for (int i = 0; i < c->nlayers;) {
		int j = i + 1;
		while (j < c->nlayers && same_cost(&c->layer[i], &c->layer[j]) &&
		       strncmp(c->layer[i].name, "blk.", 4) == 0)
			j++;
		if (j - i > 1)
			snprintf(name, sizeof name, "blk.%d-%d x%d", i - 1, j - 2, j - i);
		else
			snprintf(name, sizeof name, "%s", c->layer[i].name);
		layer_row(name, &c->layer[i], f);
		i = j;
	}
	layer_row("total", &c->total, f);
	fprintf(f, "\n%-8s %8s %12s %16s\n", "format", "bpw", "weights", "read/decode step");
	for (int k = 0; k < WF_N; k++) {
		char w[32], r[32];
		fprintf(f, "%-8s %8.4f %12s %16s\n", ocb_wfmt_name(k), ocb_wfmt_bpw(k),
			ocb_fmt_bytes(c->total.wbytes[k], w, sizeof w),
			ocb_fmt_bytes(c->total.read_decode[k], r, sizeof r));
	}
}

/* The bound most layers have ("bw_dram 33/34"). */
static void main_bound(const struct ocb_pred *p, int decode, char *out, size_t len)
{
	int best = 0, bi = 0;
	for (int i = 0; i < p->nlayers; i++) {
		const char *b = decode ? p->layer[i].bound_decode : p->layer[i].bound_prefill;
		int n = 0;
		for (int j = 0; j < p->nlayers; j++)
			n += strcmp(b, decode ? p->layer[j].bound_decode : p->layer[j].bound_prefill)
			     == 0;
		if (n > best) {
			best = n;
			bi = i;
		}
	}
	snprintf(out, len, "%s %d/%d",
		 decode ? p->layer[bi].bound_decode : p->layer[bi].bound_prefill, best,
		 p->nlayers);
}

void ocb_pred_print(const struct ocb_cost *c, const struct ocb_pred *p, int np, int detail,
		    FILE *f)
{
	fprintf(f, "%-8s %8s %14s %12s  %-22s %-22s\n", "format", "level", "decode tok/s",
		"prefill s", "decode bound (layers)", "prefill bound (layers)");
	for (int i = 0; i < np; i++) {
		char bd[48], bp[48];
		main_bound(&p[i], 1, bd, sizeof bd);
		main_bound(&p[i], 0, bp, sizeof bp);
		fprintf(f, "%-8s %8s %14.4g %12.4g  %-22s %-22s\n", fmt_label(p[i].fmt),
			p[i].level, p[i].decode_tok_s, p[i].prefill_s, bd, bp);
	}
	if (detail < 0 || detail >= np)
		return;
	const struct ocb_pred *d = &p[detail];
	fprintf(f, "\n%s per layer:\n%-16s %12s %-14s %12s %-14s\n", fmt_label(d->fmt),
		"layer", "decode s", "bound", "prefill s", "bound");
	for (int i = 0; i < d->nlayers; i++)
		fprintf(f, "%-16s %12.4g %-14s %12.4g %-14s\n", c->layer[i].name,
			d->layer[i].t_decode, d->layer[i].bound_decode, d->layer[i].t_prefill,
			d->layer[i].bound_prefill);
}
