/* ternary_train: what the ternary suite's two training workloads (bench_ternary_mlp.c,
 * bench_ternary_lm.c) share: the workload name and identity of a configuration, the MLLOG
 * file, the training callbacks -> metrics + MLLOG, and after training the final metrics,
 * the memory table (computed and measured, workloads/train_memory.h), the TQ2_0/TQ1_0
 * export of a DQT-ternary MLP (workloads/qt_export.h) and the checkpoint.
 *
 * Workload name "ternary_<model>:<label>:<moments>" (label qt_cfg_label: fp32,
 * ste-ternary, dqt-8 ...), identity JSON {"kind":"ternary","model","method","bits",
 * "moments","label","scale_rule"} (ocb_metric_ident). Metric keys, step = global step
 * unless said: train_loss (nats), elapsed_s (s); MLP test_accuracy (ratio), test_loss
 * (nats) per epoch (step = epoch); LM val_loss (nats/byte), val_ppl per evaluation; final
 * (step -1): the same, train_loss, train_time, train_step_time (s, sum), step_time (s,
 * mean), samples_per_s or tokens_per_s, weight_bits, moment_bits, nparams, weight_bytes,
 * grad_bytes, optimizer_bytes, activation_bytes (computed), train_bytes_computed,
 * train_bytes_measured, bytes_per_param_computed, bytes_per_param_measured (bytes/param,
 * everything incl. activations), state_bytes_per_param (weights + gradients + optimizer,
 * computed), state_bytes_per_param_measured (the same, measured: from the footprints at
 * the job's batch and at batch 1, extrapolated to no activations); DQT-ternary MLP also
 * tq2_0_accuracy, tq1_0_accuracy, tq2_0_loss, tq1_0_loss, tq2_0_bytes, tq1_0_bytes,
 * export_mismatched, export_equal (1 if both accuracies equal the training-time
 * test_accuracy). */
#ifndef OCB_TERNARY_TRAIN_H
#define OCB_TERNARY_TRAIN_H

#include "../workloads/data_idx.h"
#include "../workloads/data_text.h"
#include "../workloads/qtrain.h"
#include "../workloads/train_memory.h"
#include "../workloads/trainer.h"
#include "../workloads/trainer_lm.h"
#include "bench.h"
#include "mllog.h"

struct tt_job {
	const char *model;             /* "mlp" | "lm" */
	const struct ocb_trainer *t;
	const void *spec;              /* the trainer's spec (borrowed) */
	struct ocb_train_cfg cfg;
	struct qt_cfg q;
	long mem_steps;                /* steps of the memory measurement */
	const struct ocb_idx_set *test; /* MLP: the test set (export evaluation) */
	/* filled by tt_begin / used by the callbacks */
	char wl[96];
	struct ocb_mllog *log;
	const struct ocb_ctx *ctx;
	double t0;
	void *state;
};

/* The workload name j->wl ("ternary_<j->model>:<label>:<moments>") and its identity
 * (d_model added when > 0), written to ctx's metrics. */
void tt_name(struct tt_job *j, const struct ocb_ctx *ctx, int d_model);
/* Workload name, MLLOG file (in ctx->out_dir, "mllog_<wl with : -> _>.txt") with the
 * submission and hyper-parameter events, identity. *j keeps the log (tt_end closes). */
int tt_begin(struct tt_job *j, const struct ocb_ctx *ctx, long train_samples,
	     long eval_samples);
/* Creates the trainer, trains with the callbacks, writes every metric, measures memory,
 * exports (DQT-ternary MLP), saves the checkpoint "ternary_<model>_<label>_<moments>.ckpt"
 * in out_dir. */
int tt_run(struct tt_job *j);
/* The memory of the job's training (j->t, j->spec, j->cfg, j->mem_steps) measured in
 * forked children (workloads/train_memory.h) at the job's batch (*mem), and the state
 * *state (bytes: weights + gradients + optimizer) fitted from it and one more
 * measurement at batch 1 (NAN when the batch is 1). */
int tt_measure_memory(const struct tt_job *j, struct ocb_train_mem *mem, double *state);
/* The memory metrics of workload wl (step -1): nparams, weight_bytes ... state_bytes_per_
 * param_measured (the keys listed above; state_meas in bytes, NAN: not written). */
int tt_memory_metrics(const struct ocb_metric_sink *ms, const char *wl,
		      const struct ocb_train_mem *m, double state_meas);
void tt_end(struct tt_job *j);

/* Parses method/bits/moments of a checked params object into q (OCB_EINVAL naming a bad
 * combination: STE is ternary only, DQT bits 2/3/4/8). */
int tt_parse_q(const cJSON *p, struct qt_cfg *q);

/* The parameters both training benches declare, as struct ocb_param initializers: the
 * method grid (method, bits, moments), then the memory measurement's steps. */
#define TT_PARAMS_METHOD                                                                   \
	{"method", OCB_P_ENUM, "\"dqt\"", 0, 0, tt_methods, "", "fp32, BitNet b1.58 STE or DQT"}, \
	{"bits", OCB_P_INT, "8", 2, 8, NULL, "bits",                                        \
	 "DQT weight bits: 8, 4, 3 or 2 (= ternary); STE: 2"},                              \
	{"moments", OCB_P_ENUM, "\"fp32\"", 0, 0, tt_moments, "", "DQT AdamW moment storage"}
#define TT_PARAM_CORPUS                                                                    \
	{"corpus", OCB_P_STRING, "\"\"", 0, 0, NULL, "",                                     \
	 "text file or fortunes-style directory (\"\": --data-dir or the fortunes package)"}
#define TT_PARAM_MEM_STEPS                                                                 \
	{"mem_steps", OCB_P_INT, "3", 1, 1000, NULL, "steps",                               \
	 "steps of the forked memory measurement"}

/* The suite's cases: one object per row of qt_suite_grid(quick) with method, bits and
 * moments, then extra(c, arg) adds the bench's own keys. NULL when out of memory. */
cJSON *tt_grid_cases(int quick, void (*extra)(cJSON *c, void *arg), void *arg);

/* The job fields every training bench fills from its checked params: model, trainer,
 * context, q (tt_parse_q); after the recipe has filled j->cfg, tt_job_params sets lr,
 * seed, threads and mem_steps from p and ctx. */
int tt_job_init(struct tt_job *j, const cJSON *p, const struct ocb_ctx *ctx, const char *model,
		const struct ocb_trainer *t);
void tt_job_params(struct tt_job *j, const cJSON *p, const struct ocb_ctx *ctx);
/* Loads the LM's text (param "corpus", else ctx->data_dir / the fortunes package) into
 * *text and points sp's training and validation splits at it (the caller releases it). */
int tt_lm_corpus(const cJSON *p, const struct ocb_ctx *ctx, struct ocb_text *text,
		 struct lm_train_spec *sp);

extern const char *const tt_methods[];  /* "fp32", "ste", "dqt", NULL */
extern const char *const tt_moments[];  /* "fp32", "bf16", "fp8", NULL */

#endif
