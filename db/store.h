/* store: the SQLite database that keeps every measurement (DESIGN.md "The store").
 *
 * Owns the schema (db/schema.sql), its version (PRAGMA user_version) and the forward
 * migrations. Opening for writing creates the file if missing, migrates it, and marks
 * runs left 'running' by a dead process as 'aborted'. A file that is not SQLite, an
 * SQLite file without ocbench's tables, or one from a newer ocbench is refused and left
 * byte-for-byte unchanged. Every write is a prepared statement; a result and its
 * samples and counters go in one transaction, so a kill leaves no half result. */
#ifndef OCB_STORE_H
#define OCB_STORE_H

#include <stdint.h>

#include "records.h"

#define OCB_SCHEMA_VERSION 4

struct ocb_store;

enum ocb_store_mode {
	OCB_STORE_READ = 0,  /* must exist; never written (SQLITE_OPEN_READONLY + query_only;
			      * on a WAL file SQLite itself may leave the -wal/-shm sidecars);
			      * every read sees one snapshot, taken at the first read (a read
			      * transaction held until ocb_store_close) */
	OCB_STORE_WRITE = 1, /* created if missing; migrated; stale runs marked aborted */
};

/* Opens `path`. On success *out is a store the caller closes with ocb_store_close().
 * Errors: OCB_ENOENT (READ and missing), OCB_ENOTOURS, OCB_ENEWER, OCB_EPERM
 * (cannot create/write), OCB_EDB. */
int ocb_store_open(const char *path, enum ocb_store_mode mode, struct ocb_store **out);
/* Closes; NULL is a no-op. */
void ocb_store_close(struct ocb_store *s);
/* The path the store was opened with, for messages. Borrowed. */
const char *ocb_store_path(const struct ocb_store *s);

/* Inserts the machine if its fingerprint is new, else refreshes nothing; *id = its row. */
int ocb_store_machine(struct ocb_store *s, const struct ocb_machine *m, int64_t *id);

int ocb_store_run_begin(struct ocb_store *s, const struct ocb_run_info *ri, int64_t *run_id);
/* status: "complete" | "failed" | "aborted". Sets finished_at. */
int ocb_store_run_finish(struct ocb_store *s, int64_t run_id, const char *status);

/* Result + its samples + its counters, atomically. *result_id may be NULL. */
int ocb_store_result(struct ocb_store *s, int64_t run_id, const struct ocb_result *r,
		     int64_t *result_id);

/* One metric row; step < 0 stores NULL. */
int ocb_store_metric(struct ocb_store *s, int64_t run_id, const char *workload, long step,
		     const char *key, double value, const char *unit);

/* The identity of metric workload `workload` of a run, as JSON with a "kind"
 * (common/workload_id.h); a second call for the same pair replaces it. */
int ocb_store_workload_ident(struct ocb_store *s, int64_t run_id, const char *workload,
			     const char *ident_json);

/* Group many writes (e.g. a training curve) in one transaction. Nesting not supported. */
int ocb_store_begin(struct ocb_store *s);
int ocb_store_commit(struct ocb_store *s);
/* Ends the group by undoing every write since ocb_store_begin(); outside a group (or
 * NULL) a no-op. A failing rollback may overwrite ocb_lasterr(): save it first. */
void ocb_store_rollback(struct ocb_store *s);

/* One ceiling row with its trials, spread and suspect reason ("" = NULL). */
int ocb_store_ceiling(struct ocb_store *s, int64_t machine_id, int64_t run_id,
		      const struct ocb_ceiling *c);
/* The current ceiling of each (kind, threads) of a machine: the newest row that passed
 * the consistency rules (suspect NULL), else the newest flagged one (c->suspect says
 * why). *out is malloc'd (caller frees with free()), *n its length; *n == 0 when the
 * machine has none yet. */
int ocb_store_ceilings_get(struct ocb_store *s, int64_t machine_id, struct ocb_ceiling **out,
			   size_t *n);
/* The (kind, threads) whose newest row is flagged suspect, as those rows (what
 * `ceilings --verify` re-measures). Same ownership as ocb_store_ceilings_get. */
int ocb_store_ceilings_flagged(struct ocb_store *s, int64_t machine_id,
			       struct ocb_ceiling **out, size_t *n);
/* Deletes the flagged rows of (kind, threads) of a machine: a re-measured value
 * replaces them (call in the same ocb_store_begin group as its insert). */
int ocb_store_ceiling_drop_flagged(struct ocb_store *s, int64_t machine_id, const char *kind,
				   int threads);

#endif
