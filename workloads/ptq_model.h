/* ptq_model: a model seen by post-training quantization: its linears (the weights PTQ
 * replaces), a saved fp32 copy of each, the calibration statistics of each (H = 2 X^T X
 * of its inputs, the diagonal Fisher of its outputs) and three model-specific passes
 * (calibration, Fisher, evaluation) behind an ops table, so calibration, the PTQ sweep and
 * the mixed-precision driver work on any model (ptq_mlp.h and ptq_lm.h implement it). */
#ifndef OCB_PTQ_MODEL_H
#define OCB_PTQ_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "linear.h"

struct ptq_lin {
	char name[48];
	struct ocb_linear *lin; /* the model's layer (borrowed); PTQ writes lin->w */
	float *w0;              /* [out][in] the fp32 weights (view into ptq_model.block) */
	float *h;               /* [in][in] 2 X^T X over the calibration rows (view) */
	double out_norm;        /* ||X W^T||^2 on the calibration rows */
	double *fisher;         /* [out] sum over calibration rows of (dLoss/dy_j)^2 (view) */
	int fuse;               /* mixed precision: layers with one fuse id >= 0 share bits */
};

struct ptq_model;

struct ptq_model_ops {
	/* One pass of the current weights over the calibration data: *loss = mean
	 * cross-entropy (nats per example or per token). capture: add every linear's input
	 * rows to its h (quant_hessian_add). */
	int (*calib_pass)(void *impl, struct ptq_model *m, int capture, double *loss);
	/* Adds sum over calibration rows of (dLoss/dy_j)^2 to every linear's fisher[j], at
	 * the current (fp32) weights. */
	int (*fisher_pass)(void *impl, struct ptq_model *m);
	/* The model's quality at the current weights: *metric (accuracy 0..1 or perplexity),
	 * *loss (nats, NAN if not measured). */
	int (*eval)(void *impl, double *metric, double *loss);
};

struct ptq_model {
	int nlin;
	struct ptq_lin *lin;  /* [nlin] */
	int64_t nweights;     /* weights in the linears */
	size_t nparams;       /* all fp32 parameters of the model */
	long calib_rows;      /* rows of X per linear */
	const struct ptq_model_ops *ops;
	void *impl;
	float *block;         /* every w0 and h: one allocation */
	double *fisher_block; /* every fisher */
};

/* Allocates lin[nlin] (zeroed); the model's adapter then fills name, lin and fuse of each
 * and calls ptq_model_snapshot. OCB_ENOMEM. */
int ptq_model_init(struct ptq_model *m, int nlin);
/* Lays out w0, h (zero) and fisher (zero) of every linear and copies w0 from lin->w;
 * sets nweights. OCB_ENOMEM. */
int ptq_model_snapshot(struct ptq_model *m);
/* Writes the saved fp32 weights back into every linear. */
void ptq_model_restore(struct ptq_model *m);
/* Frees what init and snapshot allocated (not the model behind lin). */
void ptq_model_release(struct ptq_model *m);

#endif
