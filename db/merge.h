/* merge: brings the runs of another ocbench database into this one (`ocbench merge`).
 *
 * The other file is checked by opening it as a read-only store (a foreign file, one
 * from a newer or older ocbench is refused, untouched), then ATTACHed read-only
 * (URI mode=ro) and copied with set-based INSERT ... SELECT statements in one
 * transaction:
 *   machines  by fingerprint (existing ones are reused)
 *   runs      by uuid; a run already here is skipped with everything under it, so a
 *             second merge of the same file adds nothing (idempotent)
 *   results, samples, counters, metrics of the new runs, with new row ids
 *   ceilings  of the merged machines, unless the same (machine, kind, threads, value,
 *             created_at) is already here
 * Row ids are remapped through temporary tables; nothing else in this database changes. */
#ifndef OCB_MERGE_H
#define OCB_MERGE_H

#include "store.h"

struct ocb_merge_stats {
	long machines, runs, runs_skipped, results, samples, counters, metrics, ceilings;
};

/* Merges `other_path` into the store s (opened for writing). *st (may be NULL) gets the
 * rows added. Errors: OCB_ENOENT, OCB_ENOTOURS, OCB_ENEWER, OCB_EINVAL (older schema:
 * open it with a writing ocbench command first, or the same file), OCB_EDB. */
int ocb_merge_db(struct ocb_store *s, const char *other_path, struct ocb_merge_stats *st);

#endif
