/* mixed_plan_run: the mixed-precision driver on a ptq_model. Every linear is quantized
 * at each candidate bit-width {2,3,4,8} (method and group of the base configuration),
 * each candidate's per-layer error is measured on the calibration statistics, the exact
 * planner (mixed_precision.h) picks one candidate per layer under the storage of the
 * uniform base bit-width, the chosen weights are installed and the plan saved as JSON.
 *
 * Per-layer error (ptq_mixed_opts.err):
 *   PTQ_ERR_FISHER  sum_r F_r (w_r - q_r)^T H (w_r - q_r) / 2: the calibration output
 *                   error of every output channel r weighted by its diagonal Fisher
 *                   (BRECQ, Li et al. ICLR 2021). Plain output error treats a unit of
 *                   error in a query projection like one in the logits; measured here it
 *                   did: the plain-output GPTQ plan lost to uniform 3-bit on the LM, the
 *                   Fisher-weighted one beats it.
 *   PTQ_ERR_OUTPUT  the same without F: OneComp's output-aware error with the full H.
 *   PTQ_ERR_PROBE   output error scaled per layer by a measured calibration-loss increase
 *                   with only that layer at the lowest candidate (one extra pass per layer). */
#ifndef OCB_MIXED_PLAN_RUN_H
#define OCB_MIXED_PLAN_RUN_H

#include <stdint.h>

#include "ptq_model.h"
#include "quant_apply.h"

enum ptq_plan_err { PTQ_ERR_FISHER = 0, PTQ_ERR_OUTPUT, PTQ_ERR_PROBE };

#define PTQ_MAXCAND 4
extern const int ptq_cand_bits[PTQ_MAXCAND]; /* {2, 3, 4, 8} */

struct ptq_mixed_opts {
	enum ptq_plan_err err;
	int fuse; /* 1: layers of one fuse group share bits */
};

/* "fisher", "output", "probe" -> *e; OCB_EINVAL otherwise. */
int ptq_plan_err_parse(const char *s, enum ptq_plan_err *e);

/* Plans, installs and saves (plan_path) per-layer bits for base (base->q.bits must be a
 * candidate: it sets the budget). *bits: the plan's storage; *pred, *uni_pred: the
 * plan's and the uniform assignment's summed per-layer error. The model's calibration
 * statistics must be captured (calibrate.h). OCB_EINVAL, OCB_ENOMEM, quantizer errors. */
int ptq_mixed_run(struct ptq_model *m, const struct quant_method *base,
		  const struct ptq_mixed_opts *o, const char *plan_path, int64_t *bits,
		  double *pred, double *uni_pred);

#endif
