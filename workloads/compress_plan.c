/* compress_plan: see compress_plan.h. */
#include "compress_plan.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "calibrate.h"
#include "mixed_plan_run.h"
#include "mixed_precision.h"
#include "model_lm.h"
#include "ptq_lm.h"
#include "../analysis/model_cost.h"
#include "quant_rtn.h"

static const int cand_bits[CPLAN_NCAND] = {2, 3, 4, 8};

/* GGUF-style names of a spec's plan ("blk.2.attn_q", "output") as the LM's linears
 * ("layers.2.wq", "head"), so that a plan of examples/models/lm.json drives `compress`
 * of an LM checkpoint; other names are kept. */
static void canon_name(const char *in, char *out, size_t len)
{
	static const char *const gg[7] = {"attn_q", "attn_k", "attn_v", "attn_output",
					  "ffn_gate", "ffn_up", "ffn_down"};
	static const char *const lm[7] = {"wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down"};
	int l, n = 0;
	if (strcmp(in, "output") == 0) {
		snprintf(out, len, "head");
		return;
	}
	if (sscanf(in, "blk.%d.%n", &l, &n) == 1 && n > 0)
		for (int j = 0; j < 7; j++)
			if (strcmp(in + n, gg[j]) == 0) {
				snprintf(out, len, "layers.%d.%s", l, lm[j]);
				return;
			}
	snprintf(out, len, "%s", in);
}

static int layer_from_json(const cJSON *e, const char *what, int i,
			   struct compress_plan_layer *l)
{
	const char *name = ocb_json_str(e, "name", NULL);
	const char *method = ocb_json_str(e, "method", NULL);
	double bits = ocb_json_num(e, "bits", -1), group = ocb_json_num(e, "group", -1);
	if (!name || !*name || strlen(name) >= sizeof l->name)
		return ocb_seterr(OCB_EFORMAT, "%s: layer %d: 'name' missing or too long", what, i);
	canon_name(name, l->name, sizeof l->name);
	if (!method)
		return ocb_seterr(OCB_EFORMAT, "%s: layer %d (%s): 'method' missing", what, i, name);
	if (strncmp(method, "gptq", 4) == 0)
		l->gptq = 1;
	else if (strncmp(method, "rtn", 3) == 0)
		l->gptq = 0;
	else
		return ocb_seterr(OCB_EFORMAT, "%s: layer %d (%s): method '%s' (gptq_* or rtn_*)",
				  what, i, name, method);
	if (bits != floor(bits) || bits < 2 || bits > 8)
		return ocb_seterr(OCB_EFORMAT, "%s: layer %d (%s): 'bits' must be 2..8", what, i,
				  name);
	if (group != floor(group) || group < 1 || group > (1 << 24))
		return ocb_seterr(OCB_EFORMAT, "%s: layer %d (%s): 'group' must be a positive "
				  "integer", what, i, name);
	l->bits = (int)bits;
	l->group = (int)group;
	return OCB_OK;
}

int compress_plan_from_json(const cJSON *o, const char *what, struct compress_plan *p)
{
	memset(p, 0, sizeof *p);
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "layers");
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1)
		return ocb_seterr(OCB_EFORMAT, "%s: a plan needs a non-empty 'layers' array", what);
	int n = cJSON_GetArraySize(a);
	p->l = calloc((size_t)n, sizeof *p->l);
	if (!p->l)
		return ocb_seterr(OCB_ENOMEM, "%s: %d layers", what, n);
	p->n = n;
	for (int i = 0; i < n; i++) {
		int rc = layer_from_json(cJSON_GetArrayItem(a, i), what, i, &p->l[i]);
		for (int j = 0; rc == OCB_OK && j < i; j++)
			if (strcmp(p->l[j].name, p->l[i].name) == 0)
				rc = ocb_seterr(OCB_EFORMAT, "%s: layer '%s' planned twice", what,
						p->l[i].name);
		if (rc) {
			compress_plan_release(p);
			return rc;
		}
	}
	return OCB_OK;
}

int compress_plan_load(const char *path, struct compress_plan *p)
{
	cJSON *o = NULL;
	memset(p, 0, sizeof *p);
	int rc = ocb_json_read_file(path, &o);
	if (!rc)
		rc = compress_plan_from_json(o, path, p);
	cJSON_Delete(o);
	return rc;
}

const struct compress_plan_layer *compress_plan_find(const struct compress_plan *p,
						     const char *name)
{
	for (int i = 0; i < p->n; i++)
		if (strcmp(p->l[i].name, name) == 0)
			return &p->l[i];
	return NULL;
}

void compress_plan_release(struct compress_plan *p)
{
	if (!p)
		return;
	free(p->l);
	p->l = NULL;
	p->n = 0;
}

int compress_budget_parse(const char *s, int64_t nweights, int64_t *budget_bits)
{
	char *end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v > 0) || !isfinite(v))
		goto bad;
	if (strcmp(end, "bpw") == 0) {
		if (v > 32)
			goto bad;
		*budget_bits = (int64_t)floor(v * (double)nweights);
		return OCB_OK;
	}
	if (*end || v != floor(v) || v > 0x1p60)
		goto bad;
	*budget_bits = (int64_t)v * 8;
	return OCB_OK;
bad:
	return ocb_seterr(OCB_EINVAL, "budget '%s': want bits per weight ('3.2bpw', 0..32) or a "
			  "whole number of bytes", s);
}

/* The spec's matrices: name, rows (out), in. n_out <= cap. */
static int spec_mats(const struct ocb_model_spec *s, char (*name)[64], int64_t *out,
		     int64_t *in, int cap)
{
	int k = 0;
	if (s->arch == OCB_ARCH_MLP) {
		for (int i = 0; i < s->nlin && k < cap; i++, k++) {
			snprintf(name[k], 64, "fc%d", i + 1);
			out[k] = s->dims[i + 1];
			in[k] = s->dims[i];
		}
		return k;
	}
	static const char *const mn[7] = {"attn_q", "attn_k", "attn_v", "attn_output",
					  "ffn_gate", "ffn_up", "ffn_down"};
	int64_t d = s->d_model, q = s->n_heads * s->head_dim, kv = s->n_kv_heads * s->head_dim;
	const int64_t ro[7] = {q, kv, kv, d, s->ffn, s->ffn, d};
	const int64_t ri[7] = {d, d, d, q, d, d, s->ffn};
	for (int64_t l = 0; l < s->n_layers; l++)
		for (int j = 0; j < 7 && k < cap; j++, k++) {
			snprintf(name[k], 64, "blk.%lld.%s", (long long)l, mn[j]);
			out[k] = ro[j];
			in[k] = ri[j];
		}
	if (!s->tied && k < cap) {
		snprintf(name[k], 64, "output");
		out[k] = s->vocab;
		in[k++] = d;
	}
	return k;
}

static int spec_nmats(const struct ocb_model_spec *s)
{
	return s->arch == OCB_ARCH_MLP ? s->nlin : (int)s->n_layers * 7 + !s->tied;
}

int64_t compress_plan_spec_weights(const struct ocb_model_spec *s)
{
	int n = spec_nmats(s);
	char (*name)[64] = malloc((size_t)n * 64);
	int64_t *out = malloc((size_t)n * sizeof *out), *in = malloc((size_t)n * sizeof *in);
	int64_t w = 0;
	if (name && out && in) {
		n = spec_mats(s, name, out, in, n);
		for (int i = 0; i < n; i++)
			w += out[i] * in[i];
	}
	free(name);
	free(out);
	free(in);
	return w;
}

int compress_plan_by_size(const struct ocb_model_spec *s, int group, int64_t budget_bits,
			  cJSON **out_json)
{
	int n = spec_nmats(s), rc = OCB_OK;
	char (*name)[64] = malloc((size_t)n * 64);
	int64_t *out = malloc((size_t)n * sizeof *out), *in = malloc((size_t)n * sizeof *in);
	struct mixprec_layer *L = calloc((size_t)n, sizeof *L);
	struct mixprec_option *opt = calloc((size_t)n * CPLAN_NCAND, sizeof *opt);
	struct mixprec_plan plan = {0};
	*out_json = NULL;
	if (!name || !out || !in || !L || !opt) {
		rc = ocb_seterr(OCB_ENOMEM, "plan: %d layers", n);
		goto out;
	}
	n = spec_mats(s, name, out, in, n);
	int64_t uni4 = 0;
	for (int i = 0; i < n; i++) {
		snprintf(L[i].name, sizeof L[i].name, "%s", name[i]);
		L[i].n = out[i] * in[i];
		/* identical matrices of all blocks share bits (the same error per weight
		 * without measurement), which keeps the exact solver's frontier small */
		L[i].fuse = s->arch == OCB_ARCH_LLAMA && strncmp(name[i], "blk.", 4) == 0 ? i % 7
											     : -1;
		L[i].nopt = CPLAN_NCAND;
		L[i].opt = opt + (size_t)i * CPLAN_NCAND;
		for (int k = 0; k < CPLAN_NCAND; k++) {
			struct mixprec_option *o = &opt[(size_t)i * CPLAN_NCAND + k];
			struct quant_cfg q = {.bits = cand_bits[k], .group = group, .sym = 0};
			int g = quant_group_len(&q, (int)in[i]);
			snprintf(o->name, sizeof o->name, "gptq_b%d_g%d", q.bits, g);
			o->bits = q.bits;
			o->group = g;
			o->cost_bits = quant_cost_bits(&q, (int)out[i], (int)in[i]);
			o->err = (double)L[i].n * pow(4.0, -q.bits);
			if (q.bits == 4)
				uni4 += o->cost_bits;
		}
	}
	if ((rc = mixprec_solve(L, n, budget_bits > 0 ? budget_bits : uni4, &plan)))
		goto out;
	if (!(*out_json = mixprec_plan_json(L, n, &plan)))
		rc = ocb_seterr(OCB_ENOMEM, "plan JSON");
out:
	mixprec_plan_release(&plan);
	free(name);
	free(out);
	free(in);
	free(L);
	free(opt);
	return rc;
}

/* The cost layer a planned linear belongs to: "layers.N.*" / "blk.N.*" -> block N,
 * "head" / "output" -> the head, "fcN" -> linear N; -1 if none. */
static int cost_layer_of(const struct ocb_cost *c, const char *name)
{
	int k;
	if (c->spec.arch == OCB_ARCH_MLP)
		return sscanf(name, "fc%d", &k) == 1 && k >= 1 && k <= c->nlayers ? k - 1 : -1;
	if (strcmp(name, "head") == 0 || strcmp(name, "output") == 0)
		return c->nlayers - 1;
	if ((sscanf(name, "layers.%d.", &k) == 1 || sscanf(name, "blk.%d.", &k) == 1) && k >= 0 &&
	    k < c->nlayers - 2)
		return k + 1;
	return -1;
}

int compress_plan_layer_bytes(const struct ocb_cost *c, const cJSON *plan, double *wbytes)
{
	double *planned = calloc((size_t)c->nlayers, sizeof *planned);
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(plan, "layers"), *e;
	if (!planned)
		return ocb_seterr(OCB_ENOMEM, "plan bytes");
	for (int i = 0; i < c->nlayers; i++) /* vectors f32 */
		wbytes[i] = c->layer[i].wbytes[WF_F32] - 4.0 * c->layer[i].mat_params;
	cJSON_ArrayForEach(e, a) {
		const char *name = ocb_json_str(e, "name", "");
		int k = cost_layer_of(c, name);
		double n = ocb_json_num(e, "n", -1), bits = ocb_json_num(e, "cost_bits", -1);
		if (k < 0 || n < 0 || bits < 0) {
			free(planned);
			return ocb_seterr(OCB_EFORMAT, "plan layer '%s' does not fit model '%s'", name,
					  c->spec.name);
		}
		wbytes[k] += bits / 8.0;
		planned[k] += n;
	}
	for (int i = 0; i < c->nlayers; i++) /* unplanned matrices (embedding) stay f32 */
		wbytes[i] += 4.0 * (c->layer[i].mat_params - planned[i]);
	free(planned);
	return OCB_OK;
}

int compress_plan_uniform(const struct lm_model *m, int bits, int group,
			  struct compress_plan *p)
{
	int n = lm_nlinears(m);
	memset(p, 0, sizeof *p);
	if (!(p->l = calloc((size_t)n, sizeof *p->l)))
		return ocb_seterr(OCB_ENOMEM, "plan: %d linears", n);
	p->n = n;
	for (int i = 0; i < n; i++) {
		const char *name;
		lm_linear((struct lm_model *)m, i, &name);
		p->l[i] = (struct compress_plan_layer){.gptq = 1, .bits = bits, .group = group};
		snprintf(p->l[i].name, sizeof p->l[i].name, "%s", name);
	}
	return OCB_OK;
}

int64_t compress_plan_bits(const struct lm_model *m, const struct compress_plan *p)
{
	int64_t bits = 0;
	for (int i = 0; i < lm_nlinears(m); i++) {
		const char *name;
		const struct ocb_linear *l = lm_linear((struct lm_model *)m, i, &name);
		const struct compress_plan_layer *e = compress_plan_find(p, name);
		if (!e)
			return -1;
		struct quant_cfg q = {.bits = e->bits, .group = e->group, .sym = 0};
		bits += quant_cost_bits(&q, l->out, l->in);
	}
	return bits;
}

int compress_plan_measured(struct lm_model *m, const struct ocb_text *text, int group,
			   int err, int64_t budget_bits, int calib_windows, uint64_t seed,
			   cJSON **plan_json, double *pred, double *uni_pred)
{
	struct ptq_lm a;
	struct ptq_model pm = {0};
	int64_t bits;
	double pr, un;
	int win = m->cfg.ctx < 128 ? m->cfg.ctx : 128;
	const struct ptq_lm_proto p = {.calib_windows = calib_windows, .window = win,
				       .stride = win, .eval_windows = 1, .eval_batch = 1};
	*plan_json = NULL;
	int rc = ptq_lm_init(&a, m, text, &p, seed, &pm);
	if (rc)
		return rc;
	if (!(rc = ptq_calibrate(&pm))) {
		struct quant_method base = {.kind = QA_GPTQ, .q = {.bits = 4, .group = group}};
		struct ptq_mixed_opts mo = {.err = (enum ptq_plan_err)err, .fuse = 1,
					    .budget_bits = budget_bits, .plan_json = plan_json};
		rc = ptq_mixed_run(&pm, &base, &mo, NULL, &bits, &pr, &un);
		if (pred)
			*pred = pr;
		if (uni_pred)
			*uni_pred = un;
	}
	ptq_lm_release(&a, &pm);
	return rc;
}
