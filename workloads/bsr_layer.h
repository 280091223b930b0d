/* bsr_layer: one linear layer (linear.h) on the block-sparse kernels (kernels/bsr.h), the
 * piece every block-sparse trainer shares (trainer_bsr_mlp.h, trainer_bsr_lm.h).
 *
 * Installing it sets l->impl: forward Y = X W^T, backward dX = dY W and dW = dY^T X on the
 * stored blocks only (into the layer's dw, not l->gw), all on the row-major activations
 * the models give (the `_rm` kernels: no transposes).
 *
 * Everything per stored weight lives in the BSR block order, so the optimizer step is
 * one contiguous pass over the nnz values: the weights (s.val, the master copy while
 * training), their gradient dw and the AdamW moments m, v. They are re-laid out only
 * when the mask changes (pruning, regrowth, loading). l->w (pruned blocks zero) is
 * brought up to date by ocb_bsr_layer_sync, which every reader of l->w here calls first
 * (pruning, timing) and the trainers call before saving; ocb_bsr_layer_gather goes the
 * other way after l->w was written from outside.
 *
 * Training with it: forward/backward, ocb_bsr_layer_adamw, and at pruning events
 * ocb_bsr_layer_prune. Set dense_grad = 1 before a backward whose full gradient (into
 * l->gw, for regrowth scores) is wanted. */
#ifndef OCB_BSR_LAYER_H
#define OCB_BSR_LAYER_H

#include <stdint.h>

#include "../kernels/bsr.h"
#include "linear.h"

struct ocb_bsr_layer {
	struct ocb_bsr s;   /* s.val: the stored blocks' weights (master while training) */
	int B, mb, kb, threads, max_rows;
	uint8_t *mask;      /* [mb][kb] */
	/* [mb*kb][B][B] each: room for every block, the first s.nnzb used, in s's order */
	float *dw;          /* gradient on the stored blocks */
	float *m, *v;       /* AdamW moments */
	float *scratch;     /* the kernels' packed blocks (ocb_bsr_rm_scratch_floats) */
	float *wscore, *gscore; /* [mb*kb] */
	int w_stale;        /* s.val is newer than l->w */
	int dense_grad;
};

/* 1 if l's shape tiles into B x B blocks. */
int ocb_bsr_layer_fits(const struct ocb_linear *l, int B);
/* All blocks stored (density 1); installs the impl on l. On failure release L. */
int ocb_bsr_layer_init(struct ocb_bsr_layer *L, struct ocb_linear *l, int B, int max_rows,
		       int threads);
/* Frees L and removes the impl from l (l may be NULL). */
void ocb_bsr_layer_release(struct ocb_bsr_layer *L, struct ocb_linear *l);
/* s.val from l->w's stored blocks (after l->w was written from outside). */
void ocb_bsr_layer_gather(struct ocb_bsr_layer *L, const struct ocb_linear *l);

/* l->w's stored blocks from s.val, if the optimizer changed them since (cheap if not). */
void ocb_bsr_layer_sync(struct ocb_bsr_layer *L, const struct ocb_linear *l);

/* A pruning event: keep the blocks of largest ||W_blk||_F so that `sparsity` of the blocks
 * are zero (at least one kept); if dense_grad was set for the last backward and regrow >
 * 0, swap round(regrow * kept) blocks by gradient (block_prune.h). Zeroes the dead blocks'
 * weights, rebuilds the BSR and carries the kept blocks' moments over (revived blocks
 * start at zero weight and moments). *revived += blocks regrown. OCB_ENOMEM. */
int ocb_bsr_layer_prune(struct ocb_bsr_layer *L, struct ocb_linear *l, double sparsity,
			double regrow, long *revived);
/* Global scope (ocb_prune_cfg.global): per-layer sparsities sp[n] such that the n layers
 * together keep the round((1 - target) * all) blocks of largest ||W_blk||_F. Ties at the
 * threshold go to the earlier layers. OCB_ENOMEM. */
int ocb_bsr_layers_global(struct ocb_bsr_layer *const *L, struct ocb_linear *const *l, int n,
			  double target, double *sp);
/* Mask from the non-zero blocks of l->w (after loading weights); rebuilds the BSR, moments
 * zero. */
int ocb_bsr_layer_remask(struct ocb_bsr_layer *L, struct ocb_linear *l);

/* AdamW (optim.h's ocb_adamw_span) on the stored blocks: weights s.val, gradients dw,
 * moments m, v, one pass over the nnz values (split over the layer's threads when
 * large; elementwise, so any split gives the same values). */
void ocb_bsr_layer_adamw(struct ocb_bsr_layer *L, float lr, float wd, float b1, float b2,
			 float eps, float c1, float c2);
/* Sum of squares of the stored blocks' dw (before scaling), then dw *= scale (clipping:
 * call with 1 for the norm, then with max_norm / norm). */
double ocb_bsr_layer_grad_ss(struct ocb_bsr_layer *L, float scale);

/* One training step of this layer alone, block-sparse against the same layer dense, on n
 * rows of random inputs (n <= max_rows): sparse = forward + dW on the stored blocks
 * (+ dX = dY W when with_dx) + AdamW on the stored blocks, as a training step does them
 * (OpenBLAS at one thread as in the trainers); dense = the fp32 layer on OpenBLAS sgemm
 * with `threads` threads (forward, dW, dX when with_dx) + AdamW on every weight. Best of `reps`
 * interleaved rounds each (seconds of `clock`: NULL for ocb_now_s, the wall clock;
 * ocb_thread_cpu_s at one thread drops a loaded machine's descheduling out). The weights
 * and the layer's moments are left as they are (AdamW with lr 0; the moments restored
 * after); l->gw and the layer's dw are overwritten. OCB_EINVAL, OCB_ENOMEM. */
int ocb_bsr_layer_time_step(struct ocb_bsr_layer *L, struct ocb_linear *l, int n, int with_dx,
			    int threads, int reps, double (*clock)(void), double *sparse_s,
			    double *dense_s);

/* All blocks of the layer (stored: L->s.nnzb). */
long ocb_bsr_layer_blocks(const struct ocb_bsr_layer *L);

/* What a block-sparse trainer's sparse layers hold now. */
struct ocb_bsr_train_stats {
	int sparse_layers;      /* layers on the block-sparse kernels */
	double sparsity;        /* zero blocks / all blocks, over the sparse layers */
	size_t bsr_bytes;       /* their inference bytes: values + indices (ocb_bsr_bytes) */
	size_t dense_bytes;     /* the same layers' fp32 weights */
	double bytes_q8_0, bytes_q4_0; /* bsr bytes with Q8_0 / Q4_0 block values */
	long events;            /* pruning events so far */
	long revived;           /* blocks regrown so far */
	long blocks, zero_blocks; /* over the sparse layers */
};
/* Adds L (the layer l) to st: sparse_layers, blocks, bytes; sparsity from the totals. */
void ocb_bsr_layer_stats_add(const struct ocb_bsr_layer *L, const struct ocb_linear *l,
			     struct ocb_bsr_train_stats *st);

#endif
