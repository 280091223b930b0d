/* trainer: the one interface every reference trainer implements (fp32 MLP and LM today;
 * ternary DQT/BitNet, block-sparse and MPI data-parallel next), and the driver that owns
 * the training loop.
 *
 * A trainer is a const ops table (struct ocb_trainer): create (from a trainer-specific
 * spec: model config + data, and the common config below), step, evaluate, save, load,
 * free. It owns its model, optimizer state, batch buffers and RNG streams; it knows
 * nothing of the schedule, of logging or of evaluation cadence. ocb_trainer_run() owns
 * those: learning-rate schedule, epochs, the on_step / on_eval cadence, events, timing,
 * the divergence check. It knows nothing of collect/ either: progress leaves through
 * struct ocb_train_cb (the benches turn it into metrics and MLLOG events).
 *
 * Determinism: the driver adds nothing random; a trainer whose step is a function of its
 * seed and the step index gives bit-identical losses for the same seed and thread count.
 * Distributed trainers (one state per rank) return from step and evaluate the global
 * values (reduced over ranks), so every rank's driver takes the same decisions (cadence,
 * divergence); only rank 0's caller should write metrics and checkpoints.
 *
 *   const struct ocb_trainer *t = &ocb_trainer_mlp;
 *   void *st;
 *   t->create(&spec, &cfg, &st);              // model + optimizer, weights from cfg.seed
 *   ocb_trainer_run(t, st, &cfg, &cb, &res);  // the loop
 *   t->save(st, "mlp_fp32.ckpt");
 *   t->free(st);
 */
#ifndef OCB_TRAINER_H
#define OCB_TRAINER_H

#include <stddef.h>
#include <stdint.h>

#include "optim.h"

/* ---- configuration: optimizer, schedule, seed, threads, batch, cadence ---- */

struct ocb_train_cfg {
	/* optimizer (optim.h); every trainer honours every field */
	enum ocb_optim_kind opt;
	float lr;            /* peak learning rate (after warm-up) */
	float min_lr;        /* cosine floor */
	float weight_decay;  /* AdamW decoupled / SGD L2; biases and norm gains exempt */
	float beta1, beta2, eps; /* AdamW */
	float momentum;      /* SGD */
	float grad_clip;     /* global L2 norm of the gradient; 0: off */
	/* schedule: exactly one of epochs and steps is > 0. Epochs need a trainer with
	 * epochs (ocb_train_info.steps_per_epoch > 0); warm-up is in the same unit. */
	int epochs;
	long steps;
	float warmup_epochs; /* epoch schedules: warm-up steps = round(this * steps/epoch) */
	long warmup_steps;   /* step schedules */
	uint64_t seed;       /* weight init and data order (each trainer's own streams) */
	int threads;         /* OpenBLAS threads during ocb_trainer_run; <= 0: as they are */
	int batch;           /* examples (MLP) or sequences (LM) per step */
	int log_every;       /* on_step every this many steps (>= 1), with the mean loss */
	long eval_every;     /* evaluate every N epochs (epoch schedules) or N steps;
				0: only once, after the last step */
};

/* Neutral values: AdamW (0.9, 0.999, 1e-8), momentum 0.9, no clipping, seed 1, log every
 * step, final evaluation only; lr, schedule and batch left 0 (the trainer's own defaults,
 * e.g. ocb_mlp_train_defaults, fill them). */
void ocb_train_cfg_defaults(struct ocb_train_cfg *c);
/* The optimizer part of c as an ocb_optim_cfg. */
void ocb_train_cfg_optim(const struct ocb_train_cfg *c, struct ocb_optim_cfg *o);

/* ---- what a trainer tells the driver ---- */

struct ocb_train_info {
	long steps_per_epoch;   /* steps of one pass over the training data; 0: no epochs */
	long samples_per_step;  /* examples (classifier) or tokens (LM) one step consumes */
	double step_flops;      /* static FLOPs of one step (work model, not measured) */
	int can_evaluate;       /* 0: no evaluation data; the driver never calls evaluate */
	size_t nparams;
	size_t weight_bytes, grad_bytes, optimizer_bytes, activation_bytes;
};

/* One evaluation. The driver fills step, epoch, final; the trainer the rest. */
struct ocb_eval {
	long step;       /* optimizer steps done */
	int epoch;       /* 1-based epoch just finished; 0 for step schedules */
	int final;       /* 1: the evaluation after the last step */
	double loss;     /* mean loss, nats per example / per token */
	double accuracy; /* 0..1; NaN if the model is not a classifier */
	double ppl;      /* exp(loss) for language models; NaN otherwise */
	long scored;     /* examples or tokens scored */
};

/* ---- the ops table ---- */

struct ocb_trainer {
	const char *name; /* "mlp", "lm": error messages */
	/* Builds model (weights from cfg->seed), optimizer and buffers from `spec` (the
	 * trainer's own struct, e.g. struct ocb_mlp_spec; borrowed data must outlive the
	 * state). *state is the caller's (free). OCB_EINVAL naming a bad spec/cfg, OCB_ENOMEM;
	 * *state NULL on failure. */
	int (*create)(const void *spec, const struct ocb_train_cfg *cfg, void **state);
	void (*info)(void *state, struct ocb_train_info *info);
	/* One optimizer step (0-based global index) at learning rate lr: next batch, forward,
	 * backward, optimizer. *loss: the batch's mean training loss (nats). A trainer with
	 * epochs starts a new pass over its data (e.g. reshuffles) when step is a multiple of
	 * steps_per_epoch, whichever schedule the driver runs. */
	int (*step)(void *state, long step, float lr, double *loss);
	/* Evaluates on the held-out data (final: the protocol of the last evaluation). */
	int (*evaluate)(void *state, int final, struct ocb_eval *ev);
	/* The model as a checkpoint (checkpoint.h); load replaces the weights with those of
	 * a checkpoint of the same kind and config (OCB_EFORMAT otherwise). Optimizer state is
	 * not in checkpoints: a loaded model restarts with fresh moments. */
	int (*save)(void *state, const char *path);
	int (*load)(void *state, const char *path);
	void (*free)(void *state); /* NULL is a no-op */
};

/* ---- progress: one callback type for metrics and curves ---- */

enum ocb_train_event {
	OCB_TRAIN_EPOCH_START,
	OCB_TRAIN_EPOCH_STOP,
	OCB_TRAIN_EVAL_START,
	OCB_TRAIN_EVAL_STOP,
};

/* Every member may be NULL. A callback returning non-zero stops training;
 * ocb_trainer_run returns that value (so return an OCB_E* status). step: optimizer steps
 * done (0-based index of the next step); epoch: 1-based, 0 for step schedules. */
struct ocb_train_cb {
	void *ctx;
	int (*on_event)(void *ctx, enum ocb_train_event ev, long step, int epoch);
	/* step: the 0-based step just taken; loss: mean over the steps since the last call */
	int (*on_step)(void *ctx, long step, double loss, double lr);
	/* after EVAL_STOP */
	int (*on_eval)(void *ctx, const struct ocb_eval *ev);
};

struct ocb_train_result {
	long steps;
	int epochs;              /* completed (0 for step schedules) */
	long samples;            /* steps * samples_per_step: examples or tokens */
	double first_loss;       /* training loss of step 0 */
	double final_train_loss; /* mean over the last epoch, or the last min(50, steps) steps */
	struct ocb_eval final_eval; /* the last evaluation; NaN/0 if there was none */
	double step_time;        /* s, sum over steps (batch + forward + backward + optimizer) */
	double eval_time;        /* s, sum over evaluations */
	double wall_time;        /* s, the whole ocb_trainer_run */
	double samples_per_s;    /* samples / step_time */
	double flops;            /* static: step_flops * steps */
	double gflops;           /* flops / step_time / 1e9 */
	struct ocb_train_info info; /* the trainer's sizes at the end (arenas may grow) */
};

/* Trains `state` (made by t->create with the same cfg) on cfg's schedule. Sets OpenBLAS
 * to cfg->threads for the call (restored after). Order per epoch: EPOCH_START, steps
 * (on_step every log_every steps and at the last), EPOCH_STOP, then if
 * due EVAL_START, evaluate, EVAL_STOP, on_eval. Step schedules: no epoch events; periodic
 * evaluations after the step that completes them, the final one after the last step.
 * Errors: OCB_EINVAL (bad schedule/cadence), OCB_ERUNTIME (non-finite loss: diverged),
 * the trainer's errors, a callback's non-zero status. *res is filled as far as it got. */
int ocb_trainer_run(const struct ocb_trainer *t, void *state, const struct ocb_train_cfg *cfg,
		    const struct ocb_train_cb *cb, struct ocb_train_result *res);

#endif
