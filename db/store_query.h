/* store_query: read helpers over the store for the CLI and reports: resolving what a
 * user typed into a row id, and loading a stored result back into its struct.
 * Reads only; works on stores opened READ or WRITE. */
#ifndef OCB_STORE_QUERY_H
#define OCB_STORE_QUERY_H

#include <stdint.h>

#include "store.h"

/* Resolves a run spec to a run id. Tried in order:
 *   "latest"             the newest run (started_at, then id)
 *   a whole number       that run id, if it exists
 *   a uuid or its prefix (>= 4 characters) matching exactly one run
 *   a label              the newest run with that label
 * Errors: OCB_ENOENT (nothing matches), OCB_EINVAL (a uuid prefix matches several runs),
 * OCB_EDB; the detail names the spec and the database. */
int ocb_store_run_resolve(struct ocb_store *s, const char *spec, int64_t *run_id);

/* Loads result `result_id` with its samples (in rep order) and counters (in event
 * order) into *out, which the caller releases with ocb_result_release(). NULL columns
 * come back as NaN (doubles), "" (strings), 0 (integers); an unavailable counter has
 * available = 0 and value NaN. Errors: OCB_ENOENT, OCB_ENOMEM, OCB_EDB; on error *out
 * is zeroed and owns nothing. */
int ocb_store_result_load(struct ocb_store *s, int64_t result_id, struct ocb_result *out);

/* Loads run `run_id` with its machine's name, CPU and fingerprint into *out; out->shown
 * is the status a reader shows (run_live.h), out->quick from config_json. Reads only.
 * Errors: OCB_ENOENT, OCB_EDB. */
int ocb_run_load(struct ocb_store *s, int64_t run_id, struct ocb_run *out);

/* The id of the machine with this fingerprint; 0 when the store has none (or on a
 * read error). Reads only. */
int64_t ocb_store_machine_find(struct ocb_store *s, const char *fingerprint);

#endif
