/* model_cost_out: the cost model and its predictions as JSON and as text tables (what
 * `ocbench inspect` prints and the report's inspect section reuses). No I/O besides the
 * FILE * the caller hands in. */
#ifndef OCB_MODEL_COST_OUT_H
#define OCB_MODEL_COST_OUT_H

#include <cJSON.h>
#include <stdio.h>

#include "model_cost.h"

/* {"model":{spec},"ctx","batch","layers":[{name, params, flops_decode, flops_prefill,
 * weight_bytes:{f32..}, read_decode_bytes:{..}, kv_bytes, act_bytes}], "total":{..},
 * "predictions":[{format, threads, level, decode_tok_s, prefill_s, layers:[{name,
 * t_decode, bound_decode, t_prefill, bound_prefill}]}]}. np may be 0. NaN -> null.
 * Caller cJSON_Delete()s; NULL on no memory. */
cJSON *ocb_cost_json(const struct ocb_cost *c, const struct ocb_pred *p, int np);

/* The model line, the per-layer table (runs of identical blocks folded into one row
 * "blk.0-31 x32") and the per-format footprint table. */
void ocb_cost_print(const struct ocb_cost *c, FILE *f);
/* The per-format prediction table (one row per p[i]) and, for p[detail] (detail >= 0),
 * every layer's times and bound. */
void ocb_pred_print(const struct ocb_cost *c, const struct ocb_pred *p, int np, int detail,
		    FILE *f);

/* "8.03 B", "218.11 M", "4.10 k" / "4.52 GB", "256.0 MiB"-style short numbers into buf. */
char *ocb_fmt_count(double x, char *buf, size_t len);
char *ocb_fmt_bytes(double x, char *buf, size_t len);

#endif
