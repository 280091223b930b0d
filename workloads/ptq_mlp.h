/* ptq_mlp: the fp32 MLP as a ptq_model. Calibration data: `calib` training images drawn
 * with a seeded generator; evaluation: accuracy on the whole test set. Batches of
 * PTQ_MLP_BATCH: load the MLP with at least that max_batch. */
#ifndef OCB_PTQ_MLP_H
#define OCB_PTQ_MLP_H

#include <stdint.h>

#include "data_idx.h"
#include "model_mlp.h"
#include "ptq_model.h"

#define PTQ_MLP_BATCH 1000

struct ptq_mlp {
	struct ocb_mlp *mlp;              /* borrowed */
	const struct ocb_idx_set *test;   /* borrowed */
	int calib;                        /* calibration images */
	float *cx;                        /* [calib][dim] */
	int *cy;                          /* [calib] labels */
};

/* Fills *pm (names fc0.., no fused groups) and *a; draws the calibration images from
 * train (seed ^ "quant"). OCB_EINVAL (calib < 1, input size != image size,
 * max_batch < PTQ_MLP_BATCH), OCB_ENOMEM. On failure nothing to release. */
int ptq_mlp_init(struct ptq_mlp *a, struct ocb_mlp *mlp, const struct ocb_idx_set *train,
		 const struct ocb_idx_set *test, int calib, uint64_t seed, struct ptq_model *pm);
/* Releases a and pm. */
void ptq_mlp_release(struct ptq_mlp *a, struct ptq_model *pm);

#endif
