/* train_cb: how a reference trainer tells its caller what happens, without knowing the
 * database, the metric sink or MLLOG (reference/ must not depend on collect/). The suite
 * bench turns these calls into metrics and MLLOG events. Shared by every trainer. */
#ifndef OCB_TRAIN_CB_H
#define OCB_TRAIN_CB_H

enum ocb_train_event {
	OCB_TRAIN_EPOCH_START,
	OCB_TRAIN_EPOCH_STOP,
	OCB_TRAIN_EVAL_START,
	OCB_TRAIN_EVAL_STOP,
};

/* Every member may be NULL. A callback returning non-zero stops training; the trainer
 * returns that value (so return an OCB_E* status). Epochs are 1-based (MLPerf epoch_num);
 * steps are the 0-based global optimizer step. */
struct ocb_train_cb {
	void *ctx;
	int (*on_event)(void *ctx, enum ocb_train_event ev, int epoch);
	/* loss: mean training loss (nats) over the steps since the previous report */
	int (*on_step)(void *ctx, long step, double loss, double lr);
	/* after each epoch's evaluation: accuracy 0..1 (NaN if not a classifier), loss nats */
	int (*on_eval)(void *ctx, int epoch, double accuracy, double loss);
};

#endif
