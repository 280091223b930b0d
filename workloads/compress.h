/* compress: OneComp's progressive compression pipeline (REFERENCE.md §1) on the byte LM
 * (model_lm.h), from a per-layer plan (compress_plan.h):
 *
 *   0. fp32      the teacher, evaluated (the reference row);
 *   1. pivot     layer-wise: every linear quantized by its plan entry (GPTQ, or RTN) on
 *                the b-bit group grid of quant_rtn.h, H from the fp32 calibration pass:
 *                the first deployable checkpoint;
 *   2. block     block-wise refinement: block by block (first to last, each seeing the
 *                refined blocks before it), the fp16 group scales of the block's linears
 *                are tuned by Adam to minimise the mean squared error of the block's
 *                output (the residual stream after it) against the fp32 teacher's on the
 *                calibration windows (BRECQ, Li et al. ICLR 2021, with scales as the free
 *                parameters, as OneComp's block-wise stage); the head is tuned with the
 *                last block against the teacher's logits;
 *   3. global    every scale of the model tuned against the teacher's output
 *                distribution: the distillation loss KL(p_teacher || p_student) per token
 *                (Hinton et al. 2015, temperature 1) on the calibration windows.
 *
 * Codes and zero points stay as the pivot chose them: a refined model is the same
 * deployable format (codes, b-bit zeros, fp16 scales) with other scale values, so bpw and
 * bytes do not change. Scales are parametrised s = s0 exp(theta) (positive, relative
 * steps), rounded to fp16 after each stage. A stage whose validation perplexity is not
 * lower than the last accepted one is rejected and the previous weights are restored, so
 * quality never decreases from the pivot on.
 *
 * Every stage's model is saved as an "lm" checkpoint (dequantized weights, loadable by
 * every LM consumer) named <out_prefix>_<stage>.ckpt when out_prefix is set.
 *
 * Ownership: compress_run borrows the models and text; the stage rows are the caller's. */
#ifndef OCB_COMPRESS_H
#define OCB_COMPRESS_H

#include <cJSON.h>
#include <stdint.h>

#include "compress_plan.h"
#include "data_text.h"
#include "model_lm.h"

enum compress_stage_id { CS_FP32 = 0, CS_PIVOT, CS_BLOCK, CS_GLOBAL, CS_NSTAGES };

struct compress_opts {
	int calib_windows;  /* calibration windows of `window` training bytes (seeded) */
	int window;         /* <= the model's ctx */
	int eval_window, eval_stride;
	long eval_windows;  /* validation windows (0: the whole split) */
	int block_steps;    /* Adam steps per block (0: skip the stage) */
	int global_steps;   /* Adam steps of the global stage (0: skip) */
	float lr;           /* Adam step on theta = log(s / s0) */
	uint64_t seed;
	const char *out_prefix; /* checkpoints <out_prefix>_<stage>.ckpt; NULL: none */
};

/* Defaults sized for the default LM on 2 cores: 32 windows of 128 bytes, evaluation
 * window 128 stride 64 on 256 windows, 40 steps per block, 80 global, lr 2e-3, seed 1. */
void compress_opts_default(struct compress_opts *o);

struct compress_stage {
	char name[16];      /* "fp32", "pivot", "block", "global" */
	int ran, accepted;  /* accepted: its weights are the current model's */
	double val_ppl, val_loss; /* of this stage's own weights (before acceptance) */
	double calib_obj0;  /* the stage's calibration objective at its first step (block:
			     * sum over blocks of the output MSE; global: KL nats/token) */
	double calib_obj;   /* the same at its last step; NaN when the stage did not run */
	double bpw;         /* bits per linear weight incl. scales and zeros */
	double bytes;       /* model bytes: quantized linears + fp32 embedding and norms */
	double seconds;     /* wall time of the stage */
	double peak_rss;    /* process peak resident bytes after the stage */
	char ckpt[256];     /* "" when not saved */
};

/* Runs the pipeline on `student` (an LM with gradients, fp32 weights equal to the
 * teacher's; it ends holding the last accepted stage's weights) with `teacher` (the same
 * fp32 model; its weights are not modified, its activation arena is) on text (train: calibration, val: evaluation) under plan.
 * st[CS_NSTAGES] receives the rows. OCB_EINVAL (plan names a linear the model lacks,
 * models differ, bad options), OCB_ENOMEM, quantizer or checkpoint errors. */
int compress_run(struct lm_model *student, struct lm_model *teacher,
		 const struct ocb_text *text, const struct compress_plan *plan,
		 const struct compress_opts *o, struct compress_stage st[CS_NSTAGES]);

/* The stages that ran as a JSON array of {stage, accepted, val_ppl, val_loss,
 * calib_obj0, calib_obj, bpw, bytes, seconds, peak_rss, checkpoint} (NaN -> null).
 * Caller cJSON_Delete()s; NULL on no memory. */
cJSON *compress_stages_json(const struct compress_stage st[CS_NSTAGES]);

#endif
