/* workload_id: the identities and metric keys of the quantization-accuracy workload,
 * declared once. The bench (collect/bench_quant_accuracy.c) builds a struct ocb_quant_id
 * per configuration, names its metric rows with ocb_quant_id_name() and stores the struct
 * as JSON beside them (table workload_ident, schema v4); the report
 * (report/sec_quant.c) reads the struct back with ocb_quant_id_from_json() and never
 * splits the name, except for databases written before v4 (ocb_quant_id_parse_name, the
 * old-format reader).
 *
 * Name format (unchanged since issue 4, so old and new rows group together):
 *   "quant_acc:<model>:<method>[/<rounding>]:<bits>:<group>"
 * Checks: workload OCB_QACC_CHECK, keys <model>_gptq_gain_b<b>_g<g>,
 * mlp_q8_0_margin_points, <model>_mixed_gain_<rtn|gptq> (positive = the claim holds). */
#ifndef OCB_WORKLOAD_ID_H
#define OCB_WORKLOAD_ID_H

#include <stddef.h>

#include <cJSON.h>

#define OCB_QACC_KIND "quant_acc"        /* ident "kind" and name prefix */
#define OCB_QACC_CHECK "quant_acc_check" /* the acceptance checks' workload */

/* One configuration of the PTQ sweep. Strings are "" when not given. */
struct ocb_quant_id {
	char model[16];    /* mlp | lm */
	char method[24];   /* fp32 rtn gptq q8_0 q4_0 q4_1 q3_g q2_g tq2_0 tq1_0 ternary
			      mixed_rtn mixed_gptq */
	char rounding[16]; /* "" (the method's own, ggml's for ggml formats) | fp16-aware */
	char bits[8];      /* code bits as printed: 32 8 4 3 2 1.58; mixed_*: the uniform
			      width whose storage the plan meets */
	char group[16];    /* 32 | 128 | pc (per output channel) | the block size | tensor |
			      row | - (fp32) */
};

/* Metric keys (units in comments). Every configuration row: */
#define OCB_QK_TEST_ACCURACY "test_accuracy"     /* mlp, ratio 0..1 */
#define OCB_QK_ACC_DROP "acc_drop_points"        /* mlp, points */
#define OCB_QK_VAL_PPL "val_ppl"                 /* lm, ppl */
#define OCB_QK_VAL_LOSS "val_loss"               /* lm, nats per byte */
#define OCB_QK_REL_ERR "rel_err_vs_fp32"         /* ratio */
#define OCB_QK_BPW "effective_bpw"               /* bits */
#define OCB_QK_MODEL_BYTES "model_bytes"         /* bytes */
#define OCB_QK_QUANT_TIME "quant_time"           /* s */
#define OCB_QK_EVAL_TIME "eval_time"             /* s */
#define OCB_QK_WEIGHT_REL_ERR "weight_rel_err"   /* ratio */
#define OCB_QK_OUTPUT_REL_ERR "output_rel_err"   /* ratio */
/* mixed_* rows: */
#define OCB_QK_PRED_ERR "predicted_error"            /* sq */
#define OCB_QK_UNI_PRED_ERR "uniform_predicted_error" /* sq */
/* the fp32 row: */
#define OCB_QK_CALIB_ROWS "calib_rows"     /* rows */
#define OCB_QK_CALIB_TIME "calib_time"     /* s */
#define OCB_QK_LOAD_TIME "load_time"       /* s */
#define OCB_QK_TRAINED "trained"           /* bool */
#define OCB_QK_NWEIGHTS "nweights"         /* weights */
#define OCB_QK_EVAL_WINDOW "eval_window"   /* lm, tokens */
#define OCB_QK_EVAL_STRIDE "eval_stride"   /* lm, tokens */
#define OCB_QK_EVAL_WINDOWS "eval_windows" /* lm, windows */

/* "<method>" or "<method>/<rounding>": the method column of the tables. */
void ocb_quant_id_label(const struct ocb_quant_id *id, char *buf, size_t len);
/* The metric rows' workload name (format above). OCB_EINVAL if it does not fit. */
int ocb_quant_id_name(const struct ocb_quant_id *id, char *buf, size_t len);
/* {"kind":"quant_acc","model":..,"method":..,"rounding":..,"bits":..,"group":..}:
 * malloc'd text the caller free()s, NULL on allocation failure. */
char *ocb_quant_id_to_json(const struct ocb_quant_id *id);
/* The inverse; OCB_EFORMAT (not an object of kind quant_acc, or a field too long). */
int ocb_quant_id_from_json(const char *json, struct ocb_quant_id *id);
/* Old-format reader for rows written before schema v4: splits a name of the format
 * above (missing trailing fields read as ""). OCB_EFORMAT if it is not a quant_acc name. */
int ocb_quant_id_parse_name(const char *name, struct ocb_quant_id *id);

#endif
