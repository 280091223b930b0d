/* optim: first-order optimizers over ONE flat parameter block (params[n], grads[n]) —
 * the layout every reference model uses (weights in one allocation, gradients in another,
 * same offsets). The optimizer owns its state (moments) in one allocation.
 *
 *   AdamW (Loshchilov & Hutter, "Decoupled Weight Decay Regularization", ICLR 2019),
 *   PyTorch's formulation, fp32 moments:
 *     m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  t = t + 1
 *     p = p * (1 - lr * wd)                                   (decoupled decay)
 *     p = p - lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)
 *   SGD with momentum (PyTorch's formulation, L2 decay coupled into the gradient):
 *     g' = g + wd p;  v = mu v + g';  p = p - lr v             (first step: v = g')
 *
 * Ranges marked with ocb_optim_no_decay() (biases, norm gains, embeddings if you like)
 * get wd = 0. Every update is element-wise in index order: bit-identical results for
 * the same inputs, independent of threads. */
#ifndef OCB_OPTIM_H
#define OCB_OPTIM_H

#include <stddef.h>

enum ocb_optim_kind { OCB_OPTIM_ADAMW = 0, OCB_OPTIM_SGD = 1 };

struct ocb_optim_cfg {
	enum ocb_optim_kind kind;
	float beta1, beta2, eps; /* AdamW */
	float momentum;          /* SGD */
	float weight_decay;      /* AdamW: decoupled; SGD: L2 added to the gradient */
};

struct ocb_optim_range { size_t off, len; };

struct ocb_optim {
	struct ocb_optim_cfg cfg;
	size_t n;      /* parameters */
	long t;        /* optimizer steps taken */
	float *m;      /* AdamW first moment / SGD velocity [n]; view into `block` */
	float *v;      /* AdamW second moment [n]; NULL for SGD */
	void *block;   /* the one allocation (ocb_alloc) holding m and v */
	struct ocb_optim_range *nodecay; /* sorted, non-overlapping; malloc'd */
	size_t nnodecay;
};

/* Defaults: AdamW b1 0.9, b2 0.999, eps 1e-8, wd 0.01; SGD momentum 0.9, wd 0. */
void ocb_optim_defaults(struct ocb_optim_cfg *cfg, enum ocb_optim_kind kind);

/* Initialises *o (the struct is the caller's) for n parameters; zeroed state.
 * OCB_EINVAL on a bad config (n == 0, betas outside [0,1), eps <= 0, ...),
 * OCB_ENOMEM. On failure *o holds nothing to release. */
int ocb_optim_init(struct ocb_optim *o, const struct ocb_optim_cfg *cfg, size_t n);

/* Marks params[off, off+len) as not decayed. Ranges may be added in any order but must
 * not overlap and must lie inside [0, n): OCB_EINVAL otherwise. */
int ocb_optim_no_decay(struct ocb_optim *o, size_t off, size_t len);

/* One step at learning rate `lr` (from ocb_schedule_lr): updates params[0..n) in place
 * from grads[0..n). grads are only read. */
void ocb_optim_step(struct ocb_optim *o, float *params, const float *grads, float lr);

/* Bytes of optimizer state (moments; excludes the small range list). */
size_t ocb_optim_state_bytes(const struct ocb_optim *o);

/* "adamw" / "sgd" (MLLOG opt_name). */
const char *ocb_optim_name(enum ocb_optim_kind kind);

/* Frees the state; the struct may be re-initialised. NULL-safe, idempotent. */
void ocb_optim_release(struct ocb_optim *o);

/* Global L2 norm of g[0..n) (summed in double, in index order: deterministic). If
 * max_norm > 0 and the norm exceeds it, scales g by max_norm / norm. Returns the norm
 * before clipping. */
double ocb_optim_clip_grad_norm(float *g, size_t n, double max_norm);

/* The AdamW update of one span p[0..n) (kernel used by ocb_optim_step; exposed for the
 * _ref-vs-AVX2 test and for trainers that update parts of a block themselves).
 * c1 = 1/(1-b1^t), c2 = 1/(1-b2^t). ocb_adamw_span picks AVX2 at run time
 * (ocb_cpu_avx2); both give bit-identical results. */
void ocb_adamw_span(float *p, const float *g, float *m, float *v, size_t n, float lr, float wd,
		    float b1, float b2, float eps, float c1, float c2);
void ocb_adamw_span_ref(float *p, const float *g, float *m, float *v, size_t n, float lr,
			float wd, float b1, float b2, float eps, float c1, float c2);

#endif
