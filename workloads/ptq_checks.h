/* ptq_checks: the quant suite's acceptance comparisons over a finished sweep, positive =
 * the claim holds (keys in common/workload_id.h's list):
 *   <model>_gptq_gain_b<b>_g<g>  b 3,2 x g 32,128,pc: mlp accuracy points GPTQ - RTN,
 *                                lm perplexity RTN - GPTQ
 *   mlp_q8_0_margin_points      0.2 - the accuracy drop of q8_0 ("within 0.2 points")
 *   <model>_mixed_gain_<m>      m rtn, gptq: mlp accuracy points mixed - uniform 3-bit
 *                                g128, lm perplexity uniform - mixed
 * A comparison whose configurations did not run is left out. */
#ifndef OCB_PTQ_CHECKS_H
#define OCB_PTQ_CHECKS_H

#include "ptq_sweep.h"

#define PTQ_MAXCHECK 16

struct ptq_check {
	char key[96];
	double value;
	const char *unit; /* "points" or "ppl" */
};

/* Fills out[PTQ_MAXCHECK] from configurations c[n] and their main metric (accuracy for
 * is_lm 0, perplexity for 1; metric[0] is fp32's); returns the count. */
int ptq_checks(const char *model, int is_lm, const struct ptq_conf *c, const double *metric,
	       int n, struct ptq_check *out);

#endif
