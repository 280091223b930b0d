/* canary_run: the drift canaries (canary.h) inside `ocbench run`: measured at the run's
 * start (after its ceilings), middle (when half of its case executions are done) and
 * end, and stored as metrics of the run: workload "canary", step 0/1/2 = start/mid/end,
 * key the canary's name, value its rate (GFLOP/s or GB/s) — the same rows `ocbench ab`
 * stores, so `compare` reads both alike. No schema change.
 *
 * Sizes follow the machine's caches (ocb_canary_plan); a --quick run uses the quick
 * bands (a smaller DRAM read). A checkpoint that cannot be set up (no memory) is
 * logged and skipped. The environment variable OCBENCH_NO_CANARIES=1 turns
 * them off (`ocbench ab` sets it for its children: it measures canaries itself, once,
 * not in every child). Canaries describe the machine, they never fail a run. */
#ifndef OCB_CANARY_RUN_H
#define OCB_CANARY_RUN_H

#include <stdint.h>

#include "../db/store.h"
#include "canary.h"

struct ocb_canary_run {
	int on;                  /* enabled */
	int stored;              /* checkpoints stored so far (bit per point) */
	int quick;
	struct ocb_machine m;    /* what the sizes come from */
	long reps[OCB_CANARY_N]; /* calibrated at the first checkpoint, reused after */
};

/* Whether OCBENCH_NO_CANARIES asks for none (set, non-empty, not "0"). */
int ocb_canary_run_disabled(void);

/* Enables unless disabled. The canaries' buffers are allocated and calibrated at each
 * checkpoint and released after it (the DRAM read's buffer spans 4 L3 shares: not
 * held while the cases run). */
void ocb_canary_run_init(struct ocb_canary_run *cr, const struct ocb_machine *m, int quick);

/* Measures checkpoint `point` (OCB_CANARY_START/MID/END) once and stores it in run_id.
 * A point already stored is skipped. Returns the store's status (OCB_OK when off). */
int ocb_canary_run_point(struct ocb_canary_run *cr, struct ocb_store *s, int64_t run_id,
			 int point);

/* Stores the rates of one checkpoint (the metrics above). Pure store writes: what
 * tests use to inject a drift. */
int ocb_canary_store_point(struct ocb_store *s, int64_t run_id, int point,
			   const double rate[OCB_CANARY_N]);

void ocb_canary_run_release(struct ocb_canary_run *cr);

#endif
