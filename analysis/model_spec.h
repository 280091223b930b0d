/* model_spec: a model's architecture by shape alone, what `ocbench inspect` and `plan`
 * reason about before anything runs. Three sources give one struct ocb_model_spec:
 *
 *   a spec file (examples/models/ *.json), e.g.
 *     {"name": "Llama-3-8B", "arch": "llama", "vocab": 128256, "d_model": 4096,
 *      "n_layers": 32, "n_heads": 32, "n_kv_heads": 8, "head_dim": 128, "ffn": 14336,
 *      "tied_embeddings": false, "ctx": 8192, "source": "..."}
 *     {"name": "mlp", "arch": "mlp", "dims": [784, 256, 128, 10]}
 *   an ocbench checkpoint (workloads/checkpoint.h) of kind "lm" or "mlp": its config;
 *   a GGUF file (workloads/gguf.h): "general.architecture" = "llama" and its keys
 *   (files are read by workloads/model_spec_load.h; this module is pure).
 *
 * "llama" is the decoder of workloads/model_lm.h generalised to grouped-query attention
 * (Ainslie et al. 2023): n_kv_heads <= n_heads, n_heads % n_kv_heads == 0; head_dim
 * defaults to d_model / n_heads, n_kv_heads to n_heads, tied_embeddings to false, ctx to
 * 2048. The project's LM is the case vocab 256, n_kv_heads = n_heads, untied.
 * "mlp" is workloads/model_mlp.h: dims[0] inputs, dims[n] classes, n linears with biases.
 *
 * Ownership: a spec is a plain value; nothing to free. */
#ifndef OCB_MODEL_SPEC_H
#define OCB_MODEL_SPEC_H

#include <cJSON.h>
#include <stdint.h>

#define OCB_SPEC_MAXDIMS 17 /* an MLP of up to 16 linears */

enum ocb_arch { OCB_ARCH_LLAMA = 0, OCB_ARCH_MLP };

struct ocb_model_spec {
	char name[64];
	enum ocb_arch arch;
	/* llama */
	int64_t vocab, d_model, n_layers, n_heads, n_kv_heads, head_dim, ffn, ctx;
	int tied;     /* 1: the output head is the embedding matrix (counted once) */
	/* mlp */
	int nlin;     /* linears; dims[0..nlin] */
	int64_t dims[OCB_SPEC_MAXDIMS];
};

/* "llama" / "mlp" (NULL for an unknown value). */
const char *ocb_arch_name(enum ocb_arch a);

/* Checks ranges and relations (every size >= 1 and <= 2^31, heads dividing, at most
 * 2^40 parameters). OCB_EFORMAT naming `what` and the field, else OCB_OK. */
int ocb_spec_check(const struct ocb_model_spec *s, const char *what);

/* From a parsed spec object. `what` names the source in messages. Unknown keys are
 * ignored; a missing required field, a non-integer or out-of-range value is OCB_EFORMAT
 * "what: field 'x' ...". */
int ocb_spec_from_json(const cJSON *o, const char *what, struct ocb_model_spec *s);

/* From a checkpoint's kind ("lm", "mlp") and config object (as model_lm / model_mlp save
 * them). OCB_EFORMAT for another kind or a bad config. */
int ocb_spec_from_ckpt_config(const char *kind, const cJSON *cfg, const char *what,
			      struct ocb_model_spec *s);

/* A built-in real shape by its example file's stem ("llama-3-8b", "llama-3.2-1b",
 * "mistral-7b"), equal to examples/models/<stem>.json. OCB_EINVAL for another name. */
int ocb_spec_builtin(const char *name, struct ocb_model_spec *s);

#endif
