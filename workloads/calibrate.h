/* calibrate: the calibration statistics PTQ needs, on a ptq_model at its fp32 weights:
 *   H_l = 2 X_l^T X_l  of every linear's inputs over the calibration rows (GPTQ's Hessian
 *                      and the output error ||X W^T - X Q^T||^2 = (w-q)^T H (w-q) / 2),
 *   F_l[j]             the diagonal empirical Fisher of every output, sum over rows of
 *                      (dLoss/dy_j)^2 (BRECQ, Li et al. ICLR 2021, weights the output
 *                      reconstruction error the same way),
 *   out_norm_l         ||X W^T||^2, the denominator of the relative output error. */
#ifndef OCB_CALIBRATE_H
#define OCB_CALIBRATE_H

#include "ptq_model.h"

/* One capturing calibration pass, one Fisher pass, then every out_norm. Accumulates into
 * h and fisher (zero after ptq_model_snapshot). Errors of the model's passes, OCB_ENOMEM. */
int ptq_calibrate(struct ptq_model *m);

/* ||X W^T||^2 of one linear from its H: w^T H w / 2 summed over rows. OCB_ENOMEM. */
int ptq_out_norm(const struct ptq_lin *q, double *norm);

#endif
