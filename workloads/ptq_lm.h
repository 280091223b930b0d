/* ptq_lm: the byte-level LM as a ptq_model. Linears: lm_linear() order (q,k,v,o,gate,up,
 * down of each block, then the head); with fused groups q,k,v and gate,up of a block.
 * Calibration data: `calib_windows` random training windows of `window` bytes with their
 * next bytes (seeded); evaluation: validation loss/perplexity over sliding windows. */
#ifndef OCB_PTQ_LM_H
#define OCB_PTQ_LM_H

#include <stdint.h>

#include "data_text.h"
#include "model_lm.h"
#include "ptq_model.h"

struct ptq_lm_proto {
	int calib_windows; /* calibration windows (>= 1) */
	int window;        /* bytes per window, calibration and evaluation (2..ctx) */
	int stride;        /* evaluation stride (1..window) */
	long eval_windows; /* the first N validation windows; 0 = all */
	int eval_batch;    /* windows per forward */
};

struct ptq_lm {
	struct lm_model *lm;          /* borrowed; loaded with gradients (Fisher pass) */
	const struct ocb_text *text;  /* borrowed */
	struct ptq_lm_proto p;
	uint8_t *cin;                 /* [calib_windows][window] input bytes */
	int32_t *ctgt;                /* [calib_windows][window] next bytes */
};

/* Fills *pm and *a; draws the calibration windows from text->train (seed ^ "lmcal").
 * OCB_EINVAL (bad protocol, window > context, no gradients, text shorter than a window),
 * OCB_ENOMEM. On failure nothing to release. */
int ptq_lm_init(struct ptq_lm *a, struct lm_model *lm, const struct ocb_text *text,
		const struct ptq_lm_proto *p, uint64_t seed, struct ptq_model *pm);
/* Releases a and pm. */
void ptq_lm_release(struct ptq_lm *a, struct ptq_model *pm);

#endif
