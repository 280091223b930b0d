/* run_dump: everything stored about one run, for `ocbench export` (and any reader that
 * wants a run whole): its run and machine rows as JSON objects of every column, its
 * results with samples and counters, its metrics, and the host context recorded at run
 * start. Reads only; a handful of set-based queries per run. Errors: OCB_ENOENT (no
 * such run), OCB_ENOMEM, OCB_EDB (detail in ocb_lasterr()); on error outputs own
 * nothing. */
#ifndef OCB_RUN_DUMP_H
#define OCB_RUN_DUMP_H

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "records.h"
#include "store.h"

/* The newest complete run. OCB_ENOENT "no complete run in the database" if none. */
int ocb_db_latest_complete_run(struct ocb_store *s, int64_t *run_id);

/* A stored result: its row id and the record (samples in rep order; cpu_samples only
 * when every sample has one; counters in event order). */
struct ocb_stored_result {
	int64_t id;
	struct ocb_result r;
};

/* Run `run_id` as stored. run / machine: every column of the row, NULL -> null,
 * numbers as doubles, with run "status" replaced by the status readers show
 * (run_live.h); machine {} when the row is missing. */
struct ocb_run_dump {
	int64_t run_id, machine_id;
	cJSON *run, *machine;           /* owned */
	struct ocb_stored_result *res;  /* owned, in id order */
	size_t nres;
	double load[3], mhz;            /* run_context metrics: load averages 1/5/15 min and
					 * MHz at run start; NaN if not recorded */
};

/* Loads run_id into *out; release with ocb_run_dump_release(). */
int ocb_db_run_dump(struct ocb_store *s, int64_t run_id, struct ocb_run_dump *out);
void ocb_run_dump_release(struct ocb_run_dump *d);

/* Appends one object per metric row of the run (workload, step, key, value, unit;
 * NULL -> null), ordered by workload, key, step, id, to the JSON array arr. */
int ocb_db_run_metrics_json(struct ocb_store *s, int64_t run_id, cJSON *arr);

#endif
