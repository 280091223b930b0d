/* trainer_mlp: the fp32 MLP (model_mlp.h) as a trainer (trainer.h) on an IDX set:
 * shuffled mini-batches (ocb_rng, a Fisher-Yates pass at each epoch start), the optimizer
 * of the config (biases not decayed). The last partial batch of an epoch is dropped
 * (constant batch shape), so it has epochs: steps_per_epoch = examples / batch.
 * Deterministic: same seed -> bit-identical losses, accuracies and weights at any thread
 * count (every reduction here runs in a fixed order; the fp32 products are sgemm_det's
 * thread-independent tiles, kernels/sgemm_det.h; tests/test_sgemm_det.c). */
#ifndef OCB_TRAINER_MLP_H
#define OCB_TRAINER_MLP_H

#include "data_idx.h"
#include "model_mlp.h"
#include "trainer.h"

/* What ocb_trainer_mlp.create builds from. The sets are borrowed for the state's life. */
struct ocb_mlp_spec {
	struct ocb_mlp_cfg model;
	const struct ocb_idx_set *train, *test;
	int max_train; /* use the first max_train training examples only; 0: all */
};

extern const struct ocb_trainer ocb_trainer_mlp;

/* The recipe that reaches ~0.90 test accuracy on Fashion-MNIST with 784-512-256-10 (0.899
 * measured, seed 1, 2 threads): 15 epochs, batch 256, AdamW (b1 0.9, b2 0.999, eps 1e-8,
 * wd 1e-4 decoupled, biases not decayed), lr 1e-3 with 1 warm-up epoch then cosine to
 * 1e-5, loss logged every 20 steps, evaluation after every epoch. */
void ocb_mlp_train_defaults(struct ocb_train_cfg *cfg);

/* Accuracy (0..1) and mean softmax-CE loss (nats) of m on all of s, in batches of the
 * model's max_batch. OCB_EINVAL if dims disagree, OCB_ENOMEM. */
int ocb_mlp_evaluate(struct ocb_mlp *m, const struct ocb_idx_set *s, double *accuracy,
		     double *loss);

#endif
