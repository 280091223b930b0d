/* store_core: what the files of the store's implementation share (db/store*.c only;
 * other db/ files use store_int.h). The store was one 1000-line file; it is split by
 * idea: store.c (statement cache, binding and error helpers), store_open.c (opening,
 * classifying and refusing files), store_migrate.c (schema versions), store_run.c (a
 * run's lifecycle, stale runs), store_write.c (machines, results, metrics, groups),
 * store_ceiling.c (ceilings). */
#ifndef OCB_STORE_CORE_H
#define OCB_STORE_CORE_H

#include <sqlite3.h>
#include <stdint.h>

#include "store.h"
#include "store_int.h"

#ifndef OCB_VERSION
#define OCB_VERSION "unknown"
#endif

/* Cached prepared statements, prepared on first use (PERSISTENT), finalized at close. */
enum stmt_id {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_SAVEPOINT,
	ST_RELEASE,
	ST_ROLLBACK_TO,
	ST_MACHINE_INS,
	ST_MACHINE_SEL,
	ST_RUN_INS,
	ST_RUN_FINISH,
	ST_RESULT_INS,
	ST_SAMPLE_INS,
	ST_COUNTER_INS,
	ST_METRIC_INS,
	ST_IDENT_INS,
	ST_CEILING_INS,
	ST_CEILING_GET,
	ST_CEILING_FLAGGED,
	ST_CEILING_DROP_FLAGGED,
	ST_COUNT
};

struct ocb_store {
	sqlite3 *db;
	char *path;
	enum ocb_store_mode mode;
	int in_group; /* inside ocb_store_begin .. ocb_store_commit */
	sqlite3_stmt *stmt[ST_COUNT];
};

/* ---- helpers (store.c) ---- */

/* Status for the connection's last SQLite error: permission-like -> EPERM, else EDB. */
int store_status(sqlite3 *db);
/* Sets the detail "PATH: WHAT: sqlite's message" and returns store_status(db). */
int store_dberr(sqlite3 *db, const char *path, const char *what);
int store_err(struct ocb_store *s, const char *what);
/* The cached statement `id`, reset and with bindings cleared; NULL on failure (detail
 * set). Borrowed from the store. */
sqlite3_stmt *store_stmt(struct ocb_store *s, enum stmt_id id);
/* Runs a statement that returns no rows (retried when busy, db/busy.h); OCB_OK or the
 * mapped error. */
int store_step_done(struct ocb_store *s, sqlite3_stmt *st, const char *what);
int store_exec_stmt(struct ocb_store *s, enum stmt_id id, const char *what);
void store_bind_real(sqlite3_stmt *st, int i, double v);      /* NaN -> NULL */
void store_bind_opt_text(sqlite3_stmt *st, int i, const char *t); /* NULL, "" -> NULL */
void store_bind_text(sqlite3_stmt *st, int i, const char *t);
/* One integer from a one-row query; OCB_OK or the mapped error. */
int store_query_int(sqlite3 *db, const char *path, const char *sql, int64_t *v);
/* sqlite3_exec of sql (retried when busy); OCB_OK or the mapped error naming `what`. */
int store_exec_sql(struct ocb_store *s, const char *sql, const char *what);
/* OCB_OK if s is open for writing, else OCB_EINVAL. */
int store_need_write(struct ocb_store *s);

/* ---- open (store_open.c), migrate (store_migrate.c), runs (store_run.c) ---- */

/* Classifies an open database: *version = its user_version when the file is ocbench's
 * (or 0 for a fresh database without any table). Refuses foreign and newer files. */
int store_classify(sqlite3 *db, const char *path, int *version);
/* Brings the file to OCB_SCHEMA_VERSION in one IMMEDIATE transaction. */
int store_migrate(struct ocb_store *s);
/* Marks runs left 'running' by a process that no longer exists as aborted. */
int store_mark_aborted(struct ocb_store *s);

#endif
