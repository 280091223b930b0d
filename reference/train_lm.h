/* train_lm: fp32 training and evaluation of the byte-level LM (model_lm.h) on a byte
 * corpus: random windows of the train split (ocb_rng, explicit seed), AdamW with
 * decoupled weight decay on the matrices only (norm gains exempt), linear warm-up then
 * cosine decay, global gradient-norm clipping; periodic and final validation with the
 * sliding-window protocol of lm_eval. Knows nothing of collect/: progress goes out through
 * a callback struct. The unigram baseline is ocb_text_unigram_xent (data_text.h).
 *
 * Determinism: the batch order is a function of the seed only; every reduction in the model
 * and optimizer runs in a fixed order, so the same seed and thread count give bitwise the
 * same losses. Threads: cfg.threads > 0 sets OpenBLAS's thread count for the call
 * (restored after); the model's own loops are single-threaded (see model_lm.c on OpenMP).
 * The caller owns the model and the corpora; nothing here keeps a pointer. */
#ifndef OCB_TRAIN_LM_H
#define OCB_TRAIN_LM_H

#include <stddef.h>
#include <stdint.h>

#include "model_lm.h"

struct lm_train_cfg {
	int batch;           /* sequences per step (16) */
	int seq;             /* tokens per sequence (model ctx, 128) */
	long steps;          /* optimizer steps */
	long warmup;         /* warm-up steps */
	float lr, min_lr;    /* peak and final learning rate */
	float weight_decay;  /* AdamW decoupled decay on matrices and embeddings */
	float beta1, beta2;
	float grad_clip;     /* global L2 norm; 0: off */
	uint64_t seed;       /* batch sampling (model init is lm_create's seed) */
	int threads;         /* 0: leave OpenBLAS/OpenMP as they are */
	long eval_every;     /* periodic validation every N steps; 0: final only */
	long eval_windows;   /* windows of the periodic validation (0: all) */
	long final_eval_windows; /* windows of the final validation (0: all, the default) */
	int eval_window;     /* protocol of lm_eval: window (<= ctx) and stride */
	int eval_stride;
	int eval_batch;      /* windows per forward in evaluation */
};

/* What the training reports as it goes. Any non-zero return aborts the training with
 * that status. Either pointer may be NULL. */
struct lm_train_cb {
	void *ctx;
	int (*on_step)(void *ctx, long step, double loss, float lr);
	/* step: optimizer steps done; the final evaluation has step == cfg.steps */
	int (*on_eval_start)(void *ctx, long step);
	int (*on_eval)(void *ctx, long step, double val_loss, double val_ppl, long scored);
};

struct lm_train_result {
	long steps;
	long tokens;              /* training tokens processed (batch * seq * steps) */
	double first_loss;        /* train loss of step 0 (nats/byte) */
	double final_train_loss;  /* mean over the last min(50, steps) steps */
	double val_loss, val_ppl; /* final full validation */
	long val_scored;          /* bytes scored by it */
	double train_time;        /* s, optimizer steps only (evaluation excluded) */
	double eval_time;         /* s, all validation passes */
	double tokens_per_s;      /* tokens / train_time */
	size_t weight_bytes, grad_bytes, optimizer_bytes, activation_bytes;
};

/* Defaults for the default model on 2 cores: batch 16 x 128, 700 steps, warm-up 70,
 * peak lr 2e-3, cosine to 1e-4, wd 0.1, betas (0.9, 0.95), clip 1.0, periodic validation
 * every 100 steps on 64 windows, final on the whole split, window = stride = ctx. */
void lm_train_defaults(struct lm_train_cfg *c, const struct lm_config *mc);

/* Trains m (created with gradients) on train[ntrain] and validates on val[nval] (may be
 * NULL/0: no validation). OCB_EINVAL for a bad config or a corpus shorter than one window;
 * a callback's non-zero status is returned as is. *res filled on success. */
int lm_train(struct lm_model *m, const struct lm_train_cfg *cfg, const uint8_t *train,
	     size_t ntrain, const uint8_t *val, size_t nval, const struct lm_train_cb *cb,
	     struct lm_train_result *res);

#endif
