/* run_ab: what a run says about its place in an interleaved A/B comparison (`ocbench
 * ab` stores config_json {"ab": {pair, side, other, rounds, adaptive_rounds, stat}}),
 * and a run's metric values by step (the drift canaries: workload "canary", step 0/1/2
 * = start/mid/end). Typed queries; callers never see SQL. */
#ifndef OCB_RUN_AB_H
#define OCB_RUN_AB_H

#include <stdint.h>

#include "store.h"

struct ocb_ab_link {
	int present;          /* the run is one side of an A/B pair */
	char pair[40];        /* the pair's uuid */
	char side[8];         /* "base" or "cand" */
	char other_uuid[40];
	int64_t other_run;    /* the other side's run id in this store, 0 when absent */
	long rounds, adaptive_rounds;
	char stat[8];         /* per-round value: "min" or "median" ("" when not recorded) */
};

/* The A/B link of run_id into *out (present = 0 for an ordinary run). OCB_OK or OCB_EDB. */
int ocb_db_run_ab_link(struct ocb_store *s, int64_t run_id, struct ocb_ab_link *out);

/* v[step] = the value of metric (workload, key) of run_id for step 0..nsteps-1 (NaN
 * where the run has none). OCB_OK or OCB_EDB. */
int ocb_db_run_metric_steps(struct ocb_store *s, int64_t run_id, const char *workload,
			    const char *key, double *v, int nsteps);

#endif
