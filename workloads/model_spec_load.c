/* model_spec_load: spec files, checkpoints and GGUF metadata -> struct ocb_model_spec
 * (see model_spec_load.h). GGUF keys as llama.cpp writes them (gguf-py constants:
 * "llama.block_count", "llama.embedding_length", ...); the code is ours. */
#include "model_spec_load.h"

#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "checkpoint.h"
#include "gguf.h"

/* llama.* keys (llama.cpp's names); vocab from the token embedding's shape. */
static int from_gguf(const struct gguf_file *g, struct ocb_model_spec *s)
{
	const char *arch = gguf_get_str(g, "general.architecture");
	const char *name = gguf_get_str(g, "general.name");
	char key[96];
	memset(s, 0, sizeof *s);
	if (!arch || strcmp(arch, "llama") != 0)
		return ocb_seterr(OCB_EFORMAT, "%s: general.architecture '%s' is not one ocbench "
				  "inspects (llama)", g->path, arch ? arch : "(missing)");
	s->arch = OCB_ARCH_LLAMA;
	snprintf(s->name, sizeof s->name, "%s", name ? name : "llama");
	const struct {
		const char *suffix;
		int64_t *dst;
		int64_t dflt; /* -1: required */
	} k[] = {{"block_count", &s->n_layers, -1},
		 {"embedding_length", &s->d_model, -1},
		 {"feed_forward_length", &s->ffn, -1},
		 {"attention.head_count", &s->n_heads, -1},
		 {"attention.head_count_kv", &s->n_kv_heads, 0},
		 {"attention.key_length", &s->head_dim, 0},
		 {"context_length", &s->ctx, 2048}};
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
		snprintf(key, sizeof key, "llama.%s", k[i].suffix);
		int rc = gguf_get_int(g, key, k[i].dst);
		if (rc == OCB_ENOENT && k[i].dflt >= 0)
			*k[i].dst = k[i].dflt;
		else if (rc == OCB_ENOENT)
			return ocb_seterr(OCB_EFORMAT, "%s: no key '%s'", g->path, key);
		else if (rc)
			return rc;
	}
	if (!s->n_kv_heads)
		s->n_kv_heads = s->n_heads;
	if (!s->head_dim && s->n_heads > 0)
		s->head_dim = s->d_model / s->n_heads;
	const struct gguf_tensor_info *emb = gguf_find_tensor(g, "token_embd.weight");
	if (!emb || emb->n_dims != 2)
		return ocb_seterr(OCB_EFORMAT, "%s: no 2-D tensor 'token_embd.weight'", g->path);
	s->vocab = (int64_t)emb->ne[1];
	s->tied = gguf_find_tensor(g, "output.weight") == NULL;
	return ocb_spec_check(s, g->path);
}

static int load_gguf(const char *path, struct ocb_model_spec *s)
{
	struct gguf_file *g = NULL;
	int rc = gguf_read(path, &g);
	if (!rc)
		rc = from_gguf(g, s);
	gguf_free(g);
	return rc;
}

static int load_ckpt(const char *path, struct ocb_model_spec *s)
{
	struct ocb_ckpt *c = NULL;
	int rc = ocb_ckpt_load(path, &c);
	if (!rc)
		rc = ocb_spec_from_ckpt_config(c->kind, c->config, path, s);
	ocb_ckpt_free(c);
	return rc;
}

int ocb_spec_load(const char *path, struct ocb_model_spec *s)
{
	char head[8] = {0};
	FILE *f = fopen(path, "rb");
	if (!f)
		return ocb_seterr(OCB_ENOENT, "%s: cannot open", path);
	size_t got = fread(head, 1, sizeof head, f);
	fclose(f);
	if (got >= 4 && memcmp(head, GGUF_MAGIC, 4) == 0)
		return load_gguf(path, s);
	if (got == 8 && memcmp(head, OCB_CKPT_MAGIC, 8) == 0)
		return load_ckpt(path, s);
	cJSON *o = NULL;
	int rc = ocb_json_read_file(path, &o);
	if (!rc)
		rc = ocb_spec_from_json(o, path, s);
	cJSON_Delete(o);
	return rc;
}
