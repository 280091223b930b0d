/* optim_lars: LARS, layer-wise adaptive rate scaling (You, Gitman & Ginsburg, "Large Batch
 * Training of Convolutional Networks", 2017; as used for ResNet-50 at mini-batch 81,920
 * by Yamazaki et al. 2019, REFERENCE.md §1), over the flat parameter block of a model.
 *
 * Per layer (a range of the block) with weights w and gradient g:
 *   local_lr = eta * ||w|| / (||g|| + wd ||w||)      (1 if ||w|| or ||g|| is 0)
 *   v = m v + lr * local_lr * (g + wd w);  w -= v
 * Exempt ranges (biases, norm gains): no trust ratio and no weight decay:
 *   v = m v + lr * g;  w -= v
 * Norms are summed in double in index order: bit-identical for the same inputs. */
#ifndef OCB_OPTIM_LARS_H
#define OCB_OPTIM_LARS_H

#include <stddef.h>

struct ocb_lars_layer {
	size_t off, len;
	int exempt;       /* 1: bias / norm: plain momentum SGD, no decay */
	float last_ratio; /* local_lr of the last step (1 for exempt ranges) */
};

struct ocb_lars {
	float eta, momentum, weight_decay;
	size_t n;
	float *v; /* [n] velocity (ocb_alloc) */
	struct ocb_lars_layer *layers;
	int nlayers, cap;
};

/* Zeroed velocity for n parameters. OCB_EINVAL (n == 0, eta <= 0, momentum outside
 * [0,1), wd < 0), OCB_ENOMEM; on failure nothing to release. */
int ocb_lars_init(struct ocb_lars *o, size_t n, float eta, float momentum, float weight_decay);
/* Declares params[off, off+len) one layer. Parameters in no layer are not updated.
 * OCB_EINVAL if the range leaves [0, n) or overlaps one declared before. */
int ocb_lars_add_layer(struct ocb_lars *o, size_t off, size_t len, int exempt);
/* One step at learning rate lr over every declared layer. */
void ocb_lars_step(struct ocb_lars *o, float *params, const float *grads, float lr);
/* The trust ratio of one layer (exposed for tests). */
double ocb_lars_trust_ratio(const float *w, const float *g, size_t len, double eta, double wd);
void ocb_lars_release(struct ocb_lars *o);

#endif
