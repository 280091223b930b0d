/* store_int: what db/'s own files share about an open store (not for use outside db/).
 * The connection is SQLite's; only db/ speaks SQL (DESIGN.md "Data flow"). */
#ifndef OCB_STORE_INT_H
#define OCB_STORE_INT_H

#include <sqlite3.h>

#include "store.h"

/* The underlying connection. Borrowed: valid until ocb_store_close(). */
sqlite3 *ocb_store_handle(struct ocb_store *s);

/* Registers the SQL function ocb_status(status, pid, hostname, boot_id, started_at) ->
 * ocb_live_status (run_live.h) on db, so listing queries can select the status a reader shows. */
int ocb_live_register(sqlite3 *db);

/* The current ceilings: every ceiling row with rn = 1 for the row that counts per
 * (machine, kind, threads): the newest row that passed the consistency rules, else the
 * newest flagged one (suspect NOT NULL sorts after NULL). Newest = latest created_at;
 * equal stamps (1 s resolution) -> the later row. The one definition of "current":
 * ocb_store_ceilings_get (store.c) and the report's ocb_mceil_load (select.c) both
 * select from it with rn = 1. */
#define OCB_CEILING_RANKED                                                                  \
	"(SELECT *, row_number() OVER (PARTITION BY machine_id, kind, threads ORDER BY"     \
	" suspect IS NOT NULL, created_at DESC, id DESC) AS rn FROM ceiling)"

/* The columns ocb_run_load reads (run r joined with its machine m), and the reader of
 * such a row: one statement can load many runs (the report's ocb_sel_runs). */
#define OCB_RUN_SELECT                                                                      \
	"SELECT r.id, r.machine_id, r.pid, r.uuid, r.suite, r.label, r.status,"             \
	" r.hostname, r.boot_id, r.started_at, r.finished_at, r.ocbench_version,"            \
	" r.git_sha, r.config_json, m.hostname, m.cpu_model, m.fingerprint"                  \
	" FROM run r LEFT JOIN machine m ON m.id = r.machine_id"
struct ocb_run;
void ocb_run_from_row(sqlite3_stmt *st, struct ocb_run *out);

#endif
