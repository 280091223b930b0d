/* trainer_lm: the byte-level LM (model_lm.h) as a trainer (trainer.h) on a byte corpus:
 * random windows of the train split each step (ocb_rng seeded from the config's seed),
 * the config's optimizer with decay on the matrices and embeddings only (norm gains
 * exempt), global gradient-norm clipping; validation with the sliding-window protocol of
 * lm_eval (a quick slice for periodic evaluations, a longer one for the final). It has no
 * epochs: give a step schedule. The unigram baseline is ocb_text_unigram_xent.
 *
 * Determinism: the batch order is a function of the seed only; every reduction in the model
 * and optimizer runs in a fixed order, so the same seed and thread count give bitwise the
 * same losses. The model's own loops are single-threaded (see model_lm.c on OpenMP). */
#ifndef OCB_TRAINER_LM_H
#define OCB_TRAINER_LM_H

#include <stddef.h>
#include <stdint.h>

#include "model_lm.h"
#include "trainer.h"

/* What lm_trainer.create builds from. The corpora are borrowed for the state's life. */
struct lm_train_spec {
	struct lm_config model;
	const uint8_t *train;
	size_t ntrain;
	const uint8_t *val;       /* may be NULL (nval 0): no evaluation */
	size_t nval;
	int seq;                  /* tokens per training sequence (<= ctx) */
	int eval_window;          /* protocol of lm_eval: window (<= ctx) and stride */
	int eval_stride;
	int eval_batch;           /* windows per forward in evaluation */
	long eval_windows;        /* windows of a periodic evaluation (0: all) */
	long final_eval_windows;  /* windows of the final evaluation (0: all) */
};

extern const struct ocb_trainer lm_trainer;

/* Spec defaults for model mc (copied in; corpora left NULL): seq = window = stride = ctx,
 * periodic validation on 64 windows of 16 per forward, final on the whole split. */
void lm_train_spec_defaults(struct lm_train_spec *s, const struct lm_config *mc);

/* The recipe for the default model on 2 cores: batch 16, 700 steps, warm-up 70, peak lr
 * 2e-3, cosine to 1e-4, AdamW wd 0.1, betas (0.9, 0.95), clip 1.0, loss logged every
 * step, validation every 100 steps. */
void lm_train_defaults(struct ocb_train_cfg *c);

#endif
