/* compress_plan: the per-layer quantization plan `ocbench plan` writes and `compress`
 * reads: the JSON of mixprec_plan_json (mixed_precision.h) — {"budget_bpw", "total_bpw",
 * "layers": [{"name", "method" ("gptq_b3_g128", "rtn_b4_g32", ...), "bits", "group",
 * "bpw", "cost_bits", ...}]} — as a list of (linear name, method, bits, group; a spec's
 * GGUF-style names "blk.N.attn_q" .. "output" read as the LM's "layers.N.wq" .. "head"), and the
 * plan made from size alone (a model spec: no weights, no calibration data). */
#ifndef OCB_COMPRESS_PLAN_H
#define OCB_COMPRESS_PLAN_H

#include <cJSON.h>
#include <stdint.h>

#include "../analysis/model_spec.h"

struct compress_plan_layer {
	char name[64];
	int gptq;   /* 1: GPTQ, 0: RTN */
	int bits;   /* 2..8 */
	int group;  /* columns per scale (>= 1) */
};

struct compress_plan {
	int n;
	struct compress_plan_layer *l; /* [n], owned */
};

/* From the plan JSON; `what` names it in messages. OCB_EFORMAT "what: layer 3: ..." for
 * a missing or bad field, OCB_ENOMEM. On failure nothing to release. */
int compress_plan_from_json(const cJSON *o, const char *what, struct compress_plan *p);
/* The same from a file (OCB_ENOENT, OCB_EFORMAT). */
int compress_plan_load(const char *path, struct compress_plan *p);
/* The entry of linear `name`, or NULL. */
const struct compress_plan_layer *compress_plan_find(const struct compress_plan *p,
						     const char *name);
void compress_plan_release(struct compress_plan *p);

/* Candidate bit-widths of every plan (mixed_plan_run.h's ptq_cand_bits). */
#define CPLAN_NCAND 4

/* A budget "3.2bpw" (bits per linear weight) or "BYTES" (a positive integer: bytes of
 * the linears' storage) into bits over nweights weights. OCB_EINVAL naming the text. */
int compress_budget_parse(const char *s, int64_t nweights, int64_t *budget_bits);

/* The plan of a spec from size alone: every 2-D matrix of a llama spec (blk.i.attn_q,
 * attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down; output unless tied) or mlp
 * (fcI) is a layer with the GPTQ candidates {2,3,4,8} bits at `group` (asymmetric, the
 * grid's exact cost), and candidate error n 4^-b (a uniform quantizer's noise power per
 * weight ~ step^2 / 12 with step ~ 2^-b of the range): without measured sensitivity
 * the planner can only trade bits per weight; the same matrix of every block shares one
 * choice (fuse group per matrix kind). Solved exactly (mixprec_solve) under
 * budget_bits (<= 0: 4 bits uniform's storage). *out: the plan JSON (mixprec_plan_json),
 * caller cJSON_Delete()s. OCB_EINVAL (budget below the 2-bit plan), OCB_ENOMEM. */
int compress_plan_by_size(const struct ocb_model_spec *s, int group, int64_t budget_bits,
			  cJSON **out);
/* Storage per layer of model cost c under a plan (JSON as mixprec_plan_json): planned
 * linears at their cost_bits, other matrices and vectors f32, into wbytes[c->nlayers]
 * (for ocb_cost_predict_bytes). OCB_EFORMAT when a plan layer has no place in c. */
struct ocb_cost;
int compress_plan_layer_bytes(const struct ocb_cost *c, const cJSON *plan, double *wbytes);
/* Number of weights in the spec's planned matrices (for budget_parse). */
int64_t compress_plan_spec_weights(const struct ocb_model_spec *s);


/* ---- plans of an LM (workloads/model_lm.h) ---- */
struct lm_model;
struct ocb_text;

/* Every linear of m (lm_linear order) at GPTQ `bits`, `group`. OCB_ENOMEM. */
int compress_plan_uniform(const struct lm_model *m, int bits, int group,
			  struct compress_plan *p);
/* Its exact storage in bits (quant_cost_bits summed): the budget "the same as uniform". */
int64_t compress_plan_bits(const struct lm_model *m, const struct compress_plan *p);

/* The measured-sensitivity plan of LM m (loaded with gradients) under budget_bits:
 * calibration on `calib_windows` windows of min(128, ctx) training bytes (seed), every
 * linear's GPTQ candidates {2,3,4,8} at `group` scored by `err` (mixed_plan_run.h:
 * 0 fisher, 1 output, 2 probe), fused q/k/v and gate/up sharing bits, solved exactly.
 * *plan_json: the plan (caller cJSON_Delete()s); *pred / *uni_pred (may be NULL): the
 * plan's and uniform 4 bits' summed error. m's linears are left at the plan's weights.
 * OCB_EINVAL (infeasible budget, bad data), OCB_ENOMEM, quantizer errors. */
int compress_plan_measured(struct lm_model *m, const struct ocb_text *text, int group,
			   int err, int64_t budget_bits, int calib_windows, uint64_t seed,
			   cJSON **plan_json, double *pred, double *uni_pred);

#endif
