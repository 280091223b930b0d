/* store: the statement cache and the small helpers every part of the store uses
 * (store_core.h says which file holds which idea; store.h is the API). */
#include "store_core.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "busy.h"
#include "result_row.h"

static const char *const stmt_sql[ST_COUNT] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_SAVEPOINT] = "SAVEPOINT ocb_result",
	[ST_RELEASE] = "RELEASE ocb_result",
	[ST_ROLLBACK_TO] = "ROLLBACK TO ocb_result",
	[ST_MACHINE_INS] =
		"INSERT INTO machine (fingerprint, hostname, cpu_model, isa, cores, threads,"
		" l1d_bytes, l2_bytes, l3_bytes, mem_bytes, os, compiler, blas, papi_version,"
		" is_vm, created_at) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)"
		" ON CONFLICT(fingerprint) DO NOTHING",
	[ST_MACHINE_SEL] = "SELECT id FROM machine WHERE fingerprint = ?1",
	[ST_RUN_INS] =
		"INSERT INTO run (uuid, machine_id, suite, label, status, ocbench_version, git_sha,"
		" cmdline, config_json, seed, pid, hostname, started_at, boot_id)"
		" VALUES (?1,?2,?3,?4,'running',?5,?6,?7,?8,?9,?10,?11,?12,?13)",
	[ST_RUN_FINISH] = "UPDATE run SET status = ?1, finished_at = ?2 WHERE id = ?3",
	[ST_RESULT_INS] =
		"INSERT INTO result (run_id, " OCB_RESULT_COLS ") VALUES"
		" (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,"
		"?23,?24,?25)",
	[ST_SAMPLE_INS] = "INSERT INTO sample (result_id, rep, value, cpu_s) VALUES (?1,?2,?3,?4)",
	[ST_COUNTER_INS] =
		"INSERT INTO counter (result_id, event, value, available, reason, multiplex_ratio)"
		" VALUES (?1,?2,?3,?4,?5,?6)",
	[ST_METRIC_INS] = "INSERT INTO metric (run_id, workload, step, key, value, unit)"
			  " VALUES (?1,?2,?3,?4,?5,?6)",
	[ST_IDENT_INS] = "INSERT OR REPLACE INTO workload_ident (run_id, workload, ident)"
			 " VALUES (?1,?2,?3)",
	[ST_CEILING_INS] =
		"INSERT INTO ceiling (machine_id, run_id, kind, threads, value, unit, method,"
		" created_at, trials, spread, suspect) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)",
	/* Per (kind, threads): the current row (store_int.h OCB_CEILING_RANKED) */
	[ST_CEILING_GET] =
		"SELECT kind, threads, value, unit, method, trials, spread, suspect FROM "
		OCB_CEILING_RANKED " WHERE machine_id = ?1 AND rn = 1 ORDER BY kind, threads",
	/* Per (kind, threads): the newest row, only when it is flagged. */
	[ST_CEILING_FLAGGED] =
		"SELECT kind, threads, value, unit, method, trials, spread, suspect FROM"
		" (SELECT *, row_number() OVER (PARTITION BY kind, threads ORDER BY"
		" created_at DESC, id DESC) AS rn FROM ceiling WHERE machine_id = ?1)"
		" WHERE rn = 1 AND suspect IS NOT NULL ORDER BY kind, threads",
	[ST_CEILING_DROP_FLAGGED] =
		"DELETE FROM ceiling WHERE machine_id = ?1 AND kind = ?2 AND threads = ?3"
		" AND suspect IS NOT NULL",
};

/* Status for the connection's last SQLite error: permission-like -> EPERM, else EDB. */
int store_status(sqlite3 *db)
{
	switch (sqlite3_errcode(db) & 0xff) {
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_CANTOPEN:
	case SQLITE_AUTH:
		return OCB_EPERM;
	case SQLITE_NOTADB:
		return OCB_ENOTOURS;
	default:
		return OCB_EDB;
	}
}

int store_dberr(sqlite3 *db, const char *path, const char *what)
{
	/* a full disk or the file size limit surfaces as SQLite's "disk I/O error": say so */
	int e = sqlite3_system_errno(db), space = e == ENOSPC || e == EFBIG || e == EDQUOT;
	return ocb_seterr(store_status(db), "%s: %s: %s%s%s%s", path, what, sqlite3_errmsg(db),
			  space ? " (" : "", space ? strerror(e) : "", space ? ")" : "");
}

int store_err(struct ocb_store *s, const char *what)
{
	return store_dberr(s->db, s->path, what);
}

/* The cached statement `id`, reset and with bindings cleared; NULL on failure (detail
 * set). Borrowed from the store. */
sqlite3_stmt *store_stmt(struct ocb_store *s, enum stmt_id id)
{
	sqlite3_stmt *st = s->stmt[id];
	if (!st) {
		if (sqlite3_prepare_v3(s->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
				       &s->stmt[id], NULL) != SQLITE_OK) {
			store_err(s, "prepare");
			return NULL;
		}
		return s->stmt[id];
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

/* Runs a statement that returns no rows; OCB_OK or the mapped error. */
int store_step_done(struct ocb_store *s, sqlite3_stmt *st, const char *what)
{
	int rc = ocb_db_step_retry(st);
	int status = rc == SQLITE_DONE ? OCB_OK : store_err(s, what);
	sqlite3_reset(st);
	return status;
}

int store_exec_stmt(struct ocb_store *s, enum stmt_id id, const char *what)
{
	sqlite3_stmt *st = store_stmt(s, id);
	return st ? store_step_done(s, st, what) : store_status(s->db);
}

/* NaN is "unknown": stored as NULL. */
void store_bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, v);
}

/* NULL and "" are stored as NULL. */
void store_bind_opt_text(sqlite3_stmt *st, int i, const char *t)
{
	if (t && *t)
		sqlite3_bind_text(st, i, t, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

void store_bind_text(sqlite3_stmt *st, int i, const char *t)
{
	sqlite3_bind_text(st, i, t ? t : "", -1, SQLITE_TRANSIENT);
}

/* One integer from a one-row query; OCB_OK or the mapped error. */
int store_query_int(sqlite3 *db, const char *path, const char *sql, int64_t *v)
{
	sqlite3_stmt *st = NULL;
	int rc;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = store_dberr(db, path, "read");
		goto out;
	}
	if (sqlite3_step(st) != SQLITE_ROW) {
		rc = store_dberr(db, path, "read");
		goto out;
	}
	*v = sqlite3_column_int64(st, 0);
	rc = OCB_OK;
out:
	sqlite3_finalize(st);
	return rc;
}

int store_exec_sql(struct ocb_store *s, const char *sql, const char *what)
{
	char *msg = NULL;
	if (ocb_db_exec_retry(s->db, sql, &msg) != SQLITE_OK) {
		int rc = ocb_seterr(store_status(s->db), "%s: %s: %s", s->path, what,
				    msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		return rc;
	}
	return OCB_OK;
}

int store_need_write(struct ocb_store *s)
{
	if (!s || !s->db)
		return ocb_seterr(OCB_EINVAL, "store: not open");
	if (s->mode != OCB_STORE_WRITE)
		return ocb_seterr(OCB_EINVAL, "%s: opened read-only", s->path);
	return OCB_OK;
}
