/* model_mlp: a multi-layer perceptron classifier for Fashion-MNIST (default
 * 784-512-256-10), ReLU between layers, softmax cross-entropy on the logits.
 * Forward and backward are ours; every product goes through ocb_linear (linear.h), so a
 * quantized / ternary / sparse suite swaps layer[i].impl without touching this file.
 *
 * Memory (DESIGN.md style 6): the model owns three allocations —
 *   params : all weights and biases, layer by layer (W_i [out][in] then b_i [out]);
 *   grads  : the same layout (so an optimizer walks both as flat arrays);
 *   acts   : activations and scratch for up to max_batch rows.
 * layer[i].w/b/gw/gb are views into params/grads. */
#ifndef OCB_MODEL_MLP_H
#define OCB_MODEL_MLP_H

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "linear.h"

#define OCB_MLP_MAXLAYERS 8

struct ocb_mlp_cfg {
	int nlayers;                        /* linear layers (>= 1) */
	int dims[OCB_MLP_MAXLAYERS + 1];    /* dims[0] inputs ... dims[nlayers] classes */
};

struct ocb_mlp {
	struct ocb_mlp_cfg cfg;
	struct ocb_linear layer[OCB_MLP_MAXLAYERS];
	float *params, *grads; /* [nparams] each (ocb_alloc) */
	size_t nparams;
	size_t w_off[OCB_MLP_MAXLAYERS], b_off[OCB_MLP_MAXLAYERS]; /* offsets in params */
	int max_batch;
	/* act[i] [max_batch][dims[i]] for i >= 1: output of layer i-1 (post-ReLU for hidden
	 * layers, logits for the last); act[0] is the caller's input during a step. */
	const float *in;
	float *act[OCB_MLP_MAXLAYERS + 1];
	float *probs;          /* [max_batch][classes] softmax of the last forward */
	float *d[2];           /* [max_batch][max dim] gradient ping-pong scratch */
	void *act_block;
	size_t act_bytes;      /* size of act_block */
};

/* 784-512-256-10. */
void ocb_mlp_default_cfg(struct ocb_mlp_cfg *cfg);
/* Config from JSON {"dims":[784,512,256,10]}; OCB_EINVAL naming the problem. */
int ocb_mlp_cfg_from_json(const cJSON *j, struct ocb_mlp_cfg *cfg);
/* {"act":"relu","dims":[...],"loss":"softmax_xent"}; caller cJSON_Delete()s. */
cJSON *ocb_mlp_cfg_to_json(const struct ocb_mlp_cfg *cfg);

/* Allocates the three blocks for `cfg` and batches up to max_batch; weights zero.
 * OCB_EINVAL (bad dims), OCB_ENOMEM. On failure nothing to release. */
int ocb_mlp_init(struct ocb_mlp *m, const struct ocb_mlp_cfg *cfg, int max_batch);
/* He (Kaiming) normal init, std sqrt(2 / in) (He et al., ICCV 2015); biases 0.
 * Deterministic in seed. */
void ocb_mlp_init_weights(struct ocb_mlp *m, uint64_t seed);
void ocb_mlp_release(struct ocb_mlp *m);

/* Forward of x[n][dims[0]] (n <= max_batch); returns the logits [n][classes], a view
 * into the model valid until the next call. */
const float *ocb_mlp_forward(struct ocb_mlp *m, const float *x, int n);

/* Softmax cross-entropy of logits[n][k] against labels y[n] (0..k-1): returns the mean
 * loss in nats; probs[n][k] gets the softmax; dlogits (may be NULL) gets the gradient of
 * the mean loss, (probs - onehot) / n. Stable (max subtracted). */
double ocb_softmax_xent(const float *logits, const int *y, int n, int k, float *probs,
			float *dlogits);

/* One training pass on a mini-batch: zeroes grads, forward, loss, backward into grads.
 * Returns the mean loss (nats). The optimizer step is the caller's. */
double ocb_mlp_grad(struct ocb_mlp *m, const float *x, const int *y, int n);

/* Argmax class of each row of x[n] into pred[n]. */
void ocb_mlp_predict(struct ocb_mlp *m, const float *x, int n, int *pred);

/* Static FLOPs of one ocb_mlp_grad over n rows (linears fwd + bwd, the first layer's dx
 * skipped as the code does; ReLU/softmax not counted). */
double ocb_mlp_step_flops(const struct ocb_mlp *m, int n);

/* Bytes: weights in their current format (sum of ocb_linear_weight_bytes), gradients,
 * activations/scratch. */
size_t ocb_mlp_weight_bytes(const struct ocb_mlp *m);
size_t ocb_mlp_grad_bytes(const struct ocb_mlp *m);

/* Checkpoint kind "mlp", tensors fc{i}.w [out,in] and fc{i}.b [out], config as
 * ocb_mlp_cfg_to_json. Save errors: those of ocb_ckpt_save. */
int ocb_mlp_save(const struct ocb_mlp *m, const char *path);
/* Loads a checkpoint into a new model (*m initialised here, max_batch rows). Errors:
 * those of ocb_ckpt_load, OCB_EFORMAT for a foreign kind / bad config / shape. */
int ocb_mlp_load(const char *path, int max_batch, struct ocb_mlp *m);
/* 1 when a and b have the same layer count and widths (their params are interchangeable). */
int ocb_mlp_same_shape(const struct ocb_mlp *a, const struct ocb_mlp *b);

#endif
