/* model_spec: spec objects and checkpoint configs -> struct ocb_model_spec (see
 * model_spec.h); reading files (checkpoints, GGUF) is workloads/model_spec_load.c. */
#include "model_spec.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"

#define SPEC_MAXDIM (1ll << 31)
/* Blocks of a llama model: published ones have at most a few hundred; the cap keeps a
 * hostile file (block_count 2^31 with tiny matrices, under the 2^40 parameter bound)
 * from making `inspect` allocate and cost billions of layers (found by tests/fuzz). */
#define SPEC_MAXLAYERS (1ll << 16)

const char *ocb_arch_name(enum ocb_arch a)
{
	return a == OCB_ARCH_LLAMA ? "llama" : a == OCB_ARCH_MLP ? "mlp" : NULL;
}

static int bad(const char *what, const char *field, const char *why)
{
	return ocb_seterr(OCB_EFORMAT, "%s: field '%s' %s", what, field, why);
}

static int check_llama(const struct ocb_model_spec *s, const char *what)
{
	const struct {
		const char *name;
		int64_t v;
	} f[] = {{"vocab", s->vocab},     {"d_model", s->d_model},       {"n_layers", s->n_layers},
		 {"n_heads", s->n_heads}, {"n_kv_heads", s->n_kv_heads}, {"head_dim", s->head_dim},
		 {"ffn", s->ffn},         {"ctx", s->ctx}};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		if (f[i].v < 1 || f[i].v > SPEC_MAXDIM)
			return bad(what, f[i].name, "must be in 1..2^31");
	if (s->n_layers > SPEC_MAXLAYERS)
		return bad(what, "n_layers", "must be in 1..65536");
	if (s->n_heads % s->n_kv_heads)
		return bad(what, "n_kv_heads", "must divide n_heads");
	/* the largest matrices: (d x ffn), (d x vocab), (d x heads * head_dim) */
	double biggest = fmax((double)s->d_model * (double)s->ffn,
			      fmax((double)s->d_model * (double)s->vocab,
				   (double)s->d_model * (double)(s->n_heads * s->head_dim)));
	if (biggest * (double)s->n_layers > 0x1p40)
		return ocb_seterr(OCB_EFORMAT, "%s: more than 2^40 parameters", what);
	return OCB_OK;
}

int ocb_spec_check(const struct ocb_model_spec *s, const char *what)
{
	if (s->arch == OCB_ARCH_LLAMA)
		return check_llama(s, what);
	if (s->arch != OCB_ARCH_MLP)
		return bad(what, "arch", "must be 'llama' or 'mlp'");
	if (s->nlin < 1 || s->nlin >= OCB_SPEC_MAXDIMS)
		return bad(what, "dims", "must list 2..17 sizes");
	for (int i = 0; i <= s->nlin; i++)
		if (s->dims[i] < 1 || s->dims[i] > SPEC_MAXDIM)
			return bad(what, "dims", "must be in 1..2^31");
	return OCB_OK;
}

/* Integer field: *v = dflt when absent and dflt >= 0, else required. */
static int get_int(const cJSON *o, const char *key, int64_t dflt, const char *what, int64_t *v)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!j) {
		if (dflt < 0)
			return bad(what, key, "is missing");
		*v = dflt;
		return OCB_OK;
	}
	double d = j->valuedouble;
	if (!cJSON_IsNumber(j) || d != floor(d) || d < 1 || d > (double)SPEC_MAXDIM)
		return bad(what, key, "must be an integer in 1..2^31");
	*v = (int64_t)d;
	return OCB_OK;
}

static int from_json_llama(const cJSON *o, const char *what, struct ocb_model_spec *s)
{
	int rc;
	if ((rc = get_int(o, "vocab", -1, what, &s->vocab)) ||
	    (rc = get_int(o, "d_model", -1, what, &s->d_model)) ||
	    (rc = get_int(o, "n_layers", -1, what, &s->n_layers)) ||
	    (rc = get_int(o, "n_heads", -1, what, &s->n_heads)) ||
	    (rc = get_int(o, "ffn", -1, what, &s->ffn)) ||
	    (rc = get_int(o, "n_kv_heads", s->n_heads, what, &s->n_kv_heads)) ||
	    (rc = get_int(o, "head_dim", s->d_model / s->n_heads, what, &s->head_dim)) ||
	    (rc = get_int(o, "ctx", 2048, what, &s->ctx)))
		return rc;
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "tied_embeddings");
	if (t && !cJSON_IsBool(t))
		return bad(what, "tied_embeddings", "must be true or false");
	s->tied = t && cJSON_IsTrue(t);
	return OCB_OK;
}

static int from_json_mlp(const cJSON *o, const char *what, struct ocb_model_spec *s)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "dims");
	if (!cJSON_IsArray(d))
		return bad(what, "dims", "must be an array of sizes");
	int n = cJSON_GetArraySize(d);
	if (n < 2 || n > OCB_SPEC_MAXDIMS)
		return bad(what, "dims", "must list 2..17 sizes");
	s->nlin = n - 1;
	for (int i = 0; i < n; i++) {
		const cJSON *e = cJSON_GetArrayItem(d, i);
		double v = cJSON_IsNumber(e) ? e->valuedouble : -1;
		if (v != floor(v) || v < 1 || v > (double)SPEC_MAXDIM)
			return bad(what, "dims", "must be integers in 1..2^31");
		s->dims[i] = (int64_t)v;
	}
	return OCB_OK;
}

int ocb_spec_from_json(const cJSON *o, const char *what, struct ocb_model_spec *s)
{
	memset(s, 0, sizeof *s);
	if (!cJSON_IsObject(o))
		return ocb_seterr(OCB_EFORMAT, "%s: a model spec must be a JSON object", what);
	const char *arch = ocb_json_str(o, "arch", NULL);
	const char *name = ocb_json_str(o, "name", NULL);
	if (!arch)
		return bad(what, "arch", "is missing ('llama' or 'mlp')");
	snprintf(s->name, sizeof s->name, "%s", name ? name : arch);
	int rc;
	if (strcmp(arch, "llama") == 0) {
		s->arch = OCB_ARCH_LLAMA;
		rc = from_json_llama(o, what, s);
	} else if (strcmp(arch, "mlp") == 0) {
		s->arch = OCB_ARCH_MLP;
		rc = from_json_mlp(o, what, s);
	} else {
		rc = bad(what, "arch", "must be 'llama' or 'mlp'");
	}
	return rc ? rc : ocb_spec_check(s, what);
}

int ocb_spec_from_ckpt_config(const char *kind, const cJSON *cfg, const char *what,
			      struct ocb_model_spec *s)
{
	int rc;
	memset(s, 0, sizeof *s);
	if (strcmp(kind, "lm") == 0) {
		s->arch = OCB_ARCH_LLAMA;
		snprintf(s->name, sizeof s->name, "lm");
		/* model_lm: full multi-head attention, untied head, ctx = the RoPE table */
		rc = from_json_llama(cfg, what, s);
		s->tied = 0;
	} else if (strcmp(kind, "mlp") == 0) {
		s->arch = OCB_ARCH_MLP;
		snprintf(s->name, sizeof s->name, "mlp");
		rc = from_json_mlp(cfg, what, s);
	} else {
		rc = ocb_seterr(OCB_EFORMAT, "%s: model kind '%s' has no shape ocbench knows "
				"(lm, mlp)", what, kind);
	}
	return rc ? rc : ocb_spec_check(s, what);
}

/* The shapes of examples/models/ *.json, built in for benches that must not depend on the
 * working directory (a test keeps the two equal). */
static const struct ocb_model_spec builtin[] = {
	{.name = "Llama-3-8B", .arch = OCB_ARCH_LLAMA, .vocab = 128256, .d_model = 4096,
	 .n_layers = 32, .n_heads = 32, .n_kv_heads = 8, .head_dim = 128, .ffn = 14336,
	 .ctx = 8192, .tied = 0},
	{.name = "Llama-3.2-1B", .arch = OCB_ARCH_LLAMA, .vocab = 128256, .d_model = 2048,
	 .n_layers = 16, .n_heads = 32, .n_kv_heads = 8, .head_dim = 64, .ffn = 8192,
	 .ctx = 131072, .tied = 1},
	{.name = "Mistral-7B-v0.1", .arch = OCB_ARCH_LLAMA, .vocab = 32000, .d_model = 4096,
	 .n_layers = 32, .n_heads = 32, .n_kv_heads = 8, .head_dim = 128, .ffn = 14336,
	 .ctx = 8192, .tied = 0},
};
static const char *const builtin_file[] = {"llama-3-8b", "llama-3.2-1b", "mistral-7b"};

int ocb_spec_builtin(const char *name, struct ocb_model_spec *s)
{
	for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
		if (strcmp(name, builtin_file[i]) == 0) {
			*s = builtin[i];
			return OCB_OK;
		}
	return ocb_seterr(OCB_EINVAL, "no built-in model '%s' (llama-3-8b, llama-3.2-1b, "
			  "mistral-7b)", name);
}
