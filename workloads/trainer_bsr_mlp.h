/* trainer_bsr_mlp: the MLP (model_mlp.h) trained while its hidden weights are sparsified
 * into B x B blocks, BLaST-style (block_prune.h): block Frobenius-norm magnitude pruning
 * on a cubic schedule, optional gradient regrowth, fine-tuning with a fixed mask after
 * the target. A trainer (trainer.h) like the dense one: same data order, same AdamW
 * (biases not decayed), same defaults (ocb_mlp_train_defaults).
 *
 * The sparse layers run on the block-sparse kernels (kernels/bsr.h) through the linear
 * impl hooks on the row-major activations: forward Y = X W^T, backward dX = dY W and
 * dW = dY^T X on the stored blocks only, and AdamW updates only the stored blocks, one
 * contiguous pass over their values and moments (bsr_layer.h; pruned weights are zero
 * and stay so), so a step gets cheaper as sparsity rises. Before t0 the layers run the
 * same kernels at density 1. Layers are sparse when both their dims are multiples of B,
 * except the output layer (the classes). While training, the layers' BSR values are the
 * master copy of their weights; the model's params (pruned blocks zeroed) are brought up
 * to date at pruning events and before saving.
 *
 * Determinism: as the dense trainer (every kernel writes each element from one thread in
 * a fixed order); same seed + threads -> same losses. Only AdamW is supported. */
#ifndef OCB_TRAINER_BSR_MLP_H
#define OCB_TRAINER_BSR_MLP_H

#include "block_prune.h"
#include "bsr_layer.h"
#include "trainer_mlp.h"

struct ocb_bsr_mlp_spec {
	struct ocb_mlp_spec mlp;    /* model and data, as the dense trainer */
	struct ocb_prune_cfg prune; /* block, target, schedule (steps), regrow */
};

extern const struct ocb_trainer ocb_trainer_bsr_mlp;

/* The schedule for a run of `steps` steps: ramp over [10%, 40%] of training, 20 events,
 * fine-tuning for the last 60%; target and block as given, per-layer scope, no regrowth.
 * Measured (Fashion-MNIST, 784-512-256-10, the 15-epoch recipe, seed 1, 2 threads): 95%
 * of 8x8 blocks -> 0.8811 vs 0.9029 dense (-2.18 points); 16x16 -> -2.46; ending the
 * ramp at 60% instead: -2.51 (16x16); at 25%: -2.65; regrowth 0.1 / 0.3 or global scope
 * did not help; 30 epochs (both runs): 16x16 0.8910 vs 0.9042 dense (-1.32). */
void ocb_bsr_mlp_default_prune(struct ocb_prune_cfg *p, long steps, int block, double target);

/* The training step of the sparse layers alone, as they are now (after training: at the
 * target), against the same layers dense: the sum over the sparse layers of
 * ocb_bsr_layer_time_step (forward, dW, dX where the model needs it, i.e. not for the
 * first layer, AdamW; best of `reps` each; batch rows), in seconds. This is the "step on
 * the same layers" ratio: the whole step also holds the dense output layer, softmax,
 * data and the bias updates, which do not get cheaper with sparsity. */
int ocb_bsr_mlp_time_layers(void *state, int threads, int reps, double *sparse_s,
			    double *dense_s);

/* What the sparse layers hold now (bsr_layer.h). */
void ocb_bsr_mlp_stats(void *state, struct ocb_bsr_train_stats *st);

#endif
