/* ptq_sweep: the configurations of the PTQ sweep and one configuration's run on a
 * ptq_model: quantize every linear from its fp32 copy (uniformly, or by a mixed-precision
 * plan, mixed_plan_run.h), measure weight and calibration-output errors, evaluate.
 *
 * Configurations (full; quick: fp32, rtn/gptq b3 g128, q8_0 and its fp16-aware twin,
 * mixed_gptq):
 *   fp32                                 the baseline (always first, always selected)
 *   rtn   b 4,3,2 x group 32,128,pc; b 8 g128   asymmetric grid (quant_rtn.h)
 *   gptq  b 4,3,2 x group 32,128,pc      act-order + static groups (quant_gptq.h)
 *   every block format of kernels/quant_formats.h, and <fmt>/fp16-aware for the ggml ones
 *   ternary (per tensor), ternary (row)  BitNet b1.58 absmean (quant_ternary.h)
 *   mixed_rtn, mixed_gptq                per-layer bits in {2,3,4,8} at group 128 under the
 *                                        storage of uniform 3-bit g128 */
#ifndef OCB_PTQ_SWEEP_H
#define OCB_PTQ_SWEEP_H

#include <stdint.h>

#include "../common/workload_id.h"
#include "mixed_plan_run.h"
#include "ptq_model.h"
#include "quant_apply.h"

#define PTQ_MAXCONF 64

struct ptq_conf {
	struct ocb_quant_id id; /* model, method, rounding, bits, group */
	struct quant_method m;
	int mixed;              /* 1: per-layer plan over m.kind's candidates at m.q.group */
};

/* What one configuration measured. */
struct ptq_outcome {
	int64_t bits;           /* storage of the quantized linears (scales etc. included) */
	double bpw;             /* bits / weights in the linears */
	double model_bytes;     /* bits / 8 + 4 bytes per other parameter */
	double quant_s, eval_s; /* seconds */
	double weight_rel_err;  /* sum ||W - Q||_F^2 / sum ||W||_F^2 */
	double output_rel_err;  /* sum ||X W^T - X Q^T||^2 / sum ||X W^T||^2 */
	double metric, loss;    /* the model's eval */
	double pred, uni_pred;  /* mixed: the plan's and uniform's predicted error; else NAN */
};

/* 1 if `filter` (comma list of "<method>[/<rounding>]" or "<that>:<bits>:<group>"; ""
 * = everything) selects the configuration; fp32 always. */
int ptq_conf_selected(const char *filter, const struct ocb_quant_id *id);
/* Fills c[PTQ_MAXCONF] with the sweep of `model` ("mlp", "lm") that filter selects;
 * returns the count (fp32 first). */
int ptq_confs(const char *model, int quick, const char *filter, struct ptq_conf *c);
/* Runs c on m (weights left quantized: ptq_model_restore afterwards). For c->mixed the
 * plan is saved at plan_path. Errors of the quantizers, the planner, the eval. */
int ptq_run_conf(struct ptq_model *m, const struct ptq_conf *c, const struct ptq_mixed_opts *mo,
		 const char *plan_path, struct ptq_outcome *o);
/* The main metric of the configuration (method label, bits, group) among c[n], NAN if
 * absent. */
double ptq_lookup(const struct ptq_conf *c, const double *metric, int n, const char *method,
		  const char *bits, const char *group);

#endif
