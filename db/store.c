/* store: see store.h. Opening is two-phase so that a file we must refuse is never
 * written: a read-only "probe" connection classifies the file (SQLite magic, ocbench_meta,
 * user_version) before any pragma that writes (journal_mode=WAL) or any migration runs. */
#include "store.h"
#include "result_row.h"
#include "store_int.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_log.h"
#include "../common/ocb_natcmp.h"
#include "../common/ocb_time.h"
#include "busy.h"
#include "column.h"
#include "run_live.h"
#include "uri.h"

#ifndef OCB_VERSION
#define OCB_VERSION "unknown"
#endif

/* db/schema.sql, embedded by db/schema_blob.S: always the newest schema. */
extern const char ocb_schema_sql[];


/* Forward migrations: migrations[v] upgrades a file at user_version v to v + 1.
 * Version 0 is a fresh (empty) file: its step runs db/schema.sql, which describes the
 * newest schema, and jumps straight to OCB_SCHEMA_VERSION. Steps v >= 1 are the ALTERs
 * that bring an older ocbench's file forward. */
static const char *const migrations[OCB_SCHEMA_VERSION] = {
	NULL, /* 0 -> newest: ocb_schema_sql */
	/* 1 -> 2: ceiling trials/spread/suspect, result suspect, run boot_id */
	"ALTER TABLE ceiling ADD COLUMN trials INTEGER;"
	"ALTER TABLE ceiling ADD COLUMN spread REAL;"
	"ALTER TABLE ceiling ADD COLUMN suspect TEXT;"
	"ALTER TABLE result ADD COLUMN suspect TEXT;"
	"ALTER TABLE run ADD COLUMN boot_id TEXT;",
	/* 2 -> 3: process CPU time per sample (Google Benchmark's cpu_time) */
	"ALTER TABLE sample ADD COLUMN cpu_s REAL;",
	/* 3 -> 4: workload identities as JSON beside the metric rows (common/workload_id.h) */
	"CREATE TABLE IF NOT EXISTS workload_ident (run_id INTEGER NOT NULL REFERENCES run(id)"
	" ON DELETE CASCADE, workload TEXT NOT NULL, ident TEXT NOT NULL,"
	" PRIMARY KEY (run_id, workload)) WITHOUT ROWID;",
};
_Static_assert(sizeof migrations / sizeof migrations[0] == OCB_SCHEMA_VERSION,
	       "one migration step per schema version");

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

struct ocb_store {
	sqlite3 *db;
	char *path;
	enum ocb_store_mode mode;
	int in_group; /* inside ocb_store_begin .. ocb_store_commit */
	sqlite3_stmt *stmt[ST_COUNT];
};

/* ---- small helpers ---------------------------------------------------------------- */

/* Status for the connection's last SQLite error: permission-like -> EPERM, else EDB. */
static int db_status(sqlite3 *db)
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

static int dberr(sqlite3 *db, const char *path, const char *what)
{
	/* a full disk or the file size limit surfaces as SQLite's "disk I/O error": say so */
	int e = sqlite3_system_errno(db), space = e == ENOSPC || e == EFBIG || e == EDQUOT;
	return ocb_seterr(db_status(db), "%s: %s: %s%s%s%s", path, what, sqlite3_errmsg(db),
			  space ? " (" : "", space ? strerror(e) : "", space ? ")" : "");
}

static int s_err(struct ocb_store *s, const char *what)
{
	return dberr(s->db, s->path, what);
}

/* The cached statement `id`, reset and with bindings cleared; NULL on failure (detail
 * set). Borrowed from the store. */
static sqlite3_stmt *stmt(struct ocb_store *s, enum stmt_id id)
{
	sqlite3_stmt *st = s->stmt[id];
	if (!st) {
		if (sqlite3_prepare_v3(s->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
				       &s->stmt[id], NULL) != SQLITE_OK) {
			s_err(s, "prepare");
			return NULL;
		}
		return s->stmt[id];
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

/* Runs a statement that returns no rows; OCB_OK or the mapped error. */
static int step_done(struct ocb_store *s, sqlite3_stmt *st, const char *what)
{
	int rc = ocb_db_step_retry(st);
	int status = rc == SQLITE_DONE ? OCB_OK : s_err(s, what);
	sqlite3_reset(st);
	return status;
}

static int exec_stmt(struct ocb_store *s, enum stmt_id id, const char *what)
{
	sqlite3_stmt *st = stmt(s, id);
	return st ? step_done(s, st, what) : db_status(s->db);
}

/* NaN is "unknown": stored as NULL. */
static void bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, v);
}

/* NULL and "" are stored as NULL. */
static void bind_opt_text(sqlite3_stmt *st, int i, const char *t)
{
	if (t && *t)
		sqlite3_bind_text(st, i, t, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_text(sqlite3_stmt *st, int i, const char *t)
{
	sqlite3_bind_text(st, i, t ? t : "", -1, SQLITE_TRANSIENT);
}

/* One integer from a one-row query; OCB_OK or the mapped error. */
static int query_int(sqlite3 *db, const char *path, const char *sql, int64_t *v)
{
	sqlite3_stmt *st = NULL;
	int rc;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = dberr(db, path, "read");
		goto out;
	}
	if (sqlite3_step(st) != SQLITE_ROW) {
		rc = dberr(db, path, "read");
		goto out;
	}
	*v = sqlite3_column_int64(st, 0);
	rc = OCB_OK;
out:
	sqlite3_finalize(st);
	return rc;
}

/* ---- opening ---------------------------------------------------------------------- */

/* Checks the 16-byte SQLite header magic of a non-empty file ourselves, so that a text
 * file is refused without SQLite ever touching it. */
static int check_magic(const char *path)
{
	static const char magic[16] = "SQLite format 3"; /* + the NUL */
	char buf[16];
	FILE *f = fopen(path, "rb");
	if (!f)
		return ocb_seterr(errno == EACCES ? OCB_EPERM : OCB_EIO, "%s: cannot read: %s", path,
				  strerror(errno));
	size_t got = fread(buf, 1, sizeof buf, f);
	fclose(f);
	if (got != sizeof buf || memcmp(buf, magic, sizeof magic) != 0)
		return ocb_seterr(OCB_ENOTOURS, "%s: not an SQLite database", path);
	return OCB_OK;
}

/* Classifies an open database: *version = its user_version when the file is ocbench's
 * (or 0 for a fresh database without any table). Refuses foreign and newer files.
 * Reads only. */
static int classify(sqlite3 *db, const char *path, int *version)
{
	sqlite3_stmt *st = NULL;
	int64_t uv = 0, nobj = 0;
	int rc = query_int(db, path, "PRAGMA user_version", &uv);
	if (rc == OCB_ENOTOURS)
		rc = ocb_seterr(OCB_ENOTOURS, "%s: not an SQLite database", path);
	if (rc)
		goto out;
	rc = query_int(db, path, "SELECT count(*) FROM sqlite_master", &nobj);
	if (rc)
		goto out;
	if (nobj == 0) {
		if (uv != 0) {
			rc = ocb_seterr(OCB_ENOTOURS,
					"%s: an SQLite database (user_version %lld) without ocbench's "
					"tables: not an ocbench database",
					path, (long long)uv);
			goto out;
		}
		*version = 0;
		goto out;
	}
	if (sqlite3_prepare_v2(db, "SELECT value FROM ocbench_meta WHERE key = 'app'", -1, &st,
			       NULL) != SQLITE_OK) {
		rc = ocb_seterr(OCB_ENOTOURS,
				"%s: an SQLite database without ocbench's tables: not an ocbench "
				"database",
				path);
		goto out;
	}
	int step = sqlite3_step(st);
	if (step != SQLITE_ROW && step != SQLITE_DONE) {
		rc = dberr(db, path, "read ocbench_meta");
		goto out;
	}
	const unsigned char *app = step == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
	if (!app || strcmp((const char *)app, "ocbench") != 0) {
		rc = ocb_seterr(OCB_ENOTOURS, "%s: an SQLite database not made by ocbench", path);
		goto out;
	}
	if (uv > OCB_SCHEMA_VERSION) {
		rc = ocb_seterr(OCB_ENEWER, "%s: schema version %lld is newer than this ocbench (%d)",
				path, (long long)uv, OCB_SCHEMA_VERSION);
		goto out;
	}
	if (uv < 0) {
		rc = ocb_seterr(OCB_ENOTOURS, "%s: bad schema version %lld", path, (long long)uv);
		goto out;
	}
	*version = (int)uv;
out:
	sqlite3_finalize(st);
	return rc;
}

static int exec_sql(struct ocb_store *s, const char *sql, const char *what)
{
	char *msg = NULL;
	if (ocb_db_exec_retry(s->db, sql, &msg) != SQLITE_OK) {
		int rc = ocb_seterr(db_status(s->db), "%s: %s: %s", s->path, what,
				    msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		return rc;
	}
	return OCB_OK;
}

/* Brings the file to OCB_SCHEMA_VERSION in one IMMEDIATE transaction (re-classifying
 * inside it, in case another ocbench migrated the file meanwhile). */
static int migrate(struct ocb_store *s)
{
	char sql[256], now[32];
	int version = 0, rc = exec_sql(s, "BEGIN IMMEDIATE", "begin migration");
	if (rc)
		return rc;
	rc = classify(s->db, s->path, &version);
	if (rc || version == OCB_SCHEMA_VERSION)
		goto out;
	if (version == 0) {
		rc = exec_sql(s, ocb_schema_sql, "create schema");
		if (rc)
			goto out;
		snprintf(sql, sizeof sql,
			 "INSERT OR REPLACE INTO ocbench_meta (key, value) VALUES ('app', 'ocbench'),"
			 " ('created_at', '%s'), ('created_by', 'ocbench %s')",
			 ocb_utc_now(now, sizeof now), OCB_VERSION);
		rc = exec_sql(s, sql, "write ocbench_meta");
		if (rc)
			goto out;
		version = OCB_SCHEMA_VERSION;
	}
	for (; version < OCB_SCHEMA_VERSION; version++) {
		snprintf(sql, sizeof sql, "migrate schema %d -> %d", version, version + 1);
		rc = exec_sql(s, migrations[version], sql);
		if (rc)
			goto out;
	}
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", OCB_SCHEMA_VERSION);
	rc = exec_sql(s, sql, "set schema version");
out:
	if (rc == OCB_OK)
		rc = exec_sql(s, "COMMIT", "commit migration");
	if (rc != OCB_OK && !sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* Marks runs left 'running' by a process that no longer exists as aborted: the verdict
 * every reader already shows (run_live.h), now stored. */
static int mark_aborted(struct ocb_store *s)
{
	char now[32];
	sqlite3_stmt *sel = NULL, *upd = NULL;
	int64_t *ids = NULL;
	size_t n = 0, cap = 0;
	int rc = OCB_OK;

	if (sqlite3_prepare_v2(s->db,
			       "SELECT id, pid, hostname, boot_id, started_at FROM run"
			       " WHERE status = 'running' AND pid IS NOT NULL AND hostname IS NOT NULL",
			       -1, &sel, NULL) != SQLITE_OK) {
		rc = s_err(s, "find stale runs");
		goto out;
	}
	int step;
	while ((step = sqlite3_step(sel)) == SQLITE_ROW) {
		const char *shown = ocb_live_status(
			"running", sqlite3_column_int64(sel, 1),
			(const char *)sqlite3_column_text(sel, 2),
			(const char *)sqlite3_column_text(sel, 3),
			(const char *)sqlite3_column_text(sel, 4));
		if (strcmp(shown, "aborted") != 0)
			continue; /* alive, or on another host: still running */
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 8;
			int64_t *p = realloc(ids, nc * sizeof *p);
			if (!p) {
				rc = ocb_seterr(OCB_ENOMEM, "%s: stale runs", s->path);
				goto out;
			}
			ids = p;
			cap = nc;
		}
		ids[n++] = sqlite3_column_int64(sel, 0);
	}
	if (step != SQLITE_DONE) {
		rc = s_err(s, "find stale runs");
		goto out;
	}
	if (n == 0)
		goto out;
	if (sqlite3_prepare_v2(s->db,
			       "UPDATE run SET status = 'aborted', finished_at = ?1"
			       " WHERE id = ?2 AND status = 'running'",
			       -1, &upd, NULL) != SQLITE_OK) {
		rc = s_err(s, "mark stale runs");
		goto out;
	}
	ocb_utc_now(now, sizeof now);
	if ((rc = exec_sql(s, "BEGIN IMMEDIATE", "mark stale runs")))
		goto out;
	for (size_t i = 0; i < n && rc == OCB_OK; i++) {
		sqlite3_reset(upd);
		sqlite3_bind_text(upd, 1, now, -1, SQLITE_STATIC);
		sqlite3_bind_int64(upd, 2, ids[i]);
		if (sqlite3_step(upd) != SQLITE_DONE)
			rc = s_err(s, "mark stale runs");
	}
	if (rc == OCB_OK)
		rc = exec_sql(s, "COMMIT", "mark stale runs");
	if (rc != OCB_OK && !sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	if (rc == OCB_OK)
		ocb_info("%s: marked %zu run(s) left 'running' by a dead process as aborted",
			 s->path, n);
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	free(ids);
	return rc;
}

/* SQLite collation "ocb_params": cases in numeric order (common/ocb_natcmp.h). */
static int collate_params(void *u, int na, const void *a, int nb, const void *b)
{
	(void)u;
	return ocb_natcmp_n(a, (size_t)na, b, (size_t)nb);
}

/* What every connection of a store offers its queries: the collation ocb_params and the
 * function ocb_status() (run_live.h). */
static int add_functions(sqlite3 *db, const char *path)
{
	if (sqlite3_create_collation(db, "ocb_params", SQLITE_UTF8, NULL, collate_params) !=
	    SQLITE_OK)
		return dberr(db, path, "register collation");
	return ocb_live_register(db);
}

/* Opens a connection; on failure closes it and returns the mapped status. */
static int db_connect(const char *path, int flags, sqlite3 **db)
{
	int rc = sqlite3_open_v2(path, db, flags, NULL);
	if (rc != SQLITE_OK) {
		int status = OCB_EDB;
		if (*db) {
			int e = sqlite3_system_errno(*db);
			status = ocb_seterr(db_status(*db), "%s: cannot open%s: %s%s%s", path,
					    (flags & SQLITE_OPEN_READWRITE) ? " for writing" : "",
					    sqlite3_errmsg(*db), e ? ": " : "", e ? strerror(e) : "");
		} else
			status = ocb_seterr(OCB_ENOMEM, "%s: cannot open: out of memory", path);
		sqlite3_close(*db);
		*db = NULL;
		return status;
	}
	sqlite3_extended_result_codes(*db, 0);
	sqlite3_busy_timeout(*db, OCB_BUSY_TIMEOUT_MS);
	return OCB_OK;
}

/* A WAL database SQLite cannot read through its shared-memory index: the -shm file is
 * missing and neither the file nor its folder is ours to write (another user's
 * database, a read-only mount). When no -wal file holds frames either, the database
 * file alone is the whole committed state and no one can change it under us, so it is
 * opened as immutable (SQLite "URI filenames": no locks, no -shm). Replaces *probe. */
static int open_unwritable(const char *path, sqlite3 **probe)
{
	char wal[4096], dir[4096];
	struct stat ws;
	snprintf(wal, sizeof wal, "%s-wal", path);
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = '\0';
	else
		snprintf(dir, sizeof dir, ".");
	if (access(path, W_OK) == 0 || access(dir, W_OK) == 0)
		return OCB_EPERM; /* writable: the failure is something else */
	if (stat(wal, &ws) == 0 && ws.st_size > 0)
		return ocb_seterr(OCB_EPERM, "%s: read-only, and its -wal file holds changes "
					     "only a writer can fold in (open it once as its owner)",
				  path);
	char *uri = ocb_db_uri(path, "immutable=1");
	if (!uri)
		return ocb_seterr(OCB_ENOMEM, "%s: cannot build its URI", path);
	sqlite3_close(*probe);
	*probe = NULL;
	int rc = db_connect(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, probe);
	free(uri);
	return rc;
}

/* Over 80 lines: the open sequence (classify the file, open, pragmas, migrate, mark
 * stale runs) must run in this order with one cleanup; each step is a call. */
int ocb_store_open(const char *path, enum ocb_store_mode mode, struct ocb_store **out)
{
	struct ocb_store *s = NULL;
	sqlite3 *probe = NULL;
	struct stat sb;
	int rc = OCB_OK, version = 0;

	*out = NULL;
	if (!path || !*path)
		return ocb_seterr(OCB_EINVAL, "store: empty database path");
	int exists = stat(path, &sb) == 0;
	if (!exists && errno != ENOENT)
		return ocb_seterr(errno == EACCES ? OCB_EPERM : OCB_EIO, "%s: %s", path,
				  strerror(errno));
	if (exists && S_ISDIR(sb.st_mode))
		return ocb_seterr(OCB_EINVAL, "%s: is a directory, not a database file", path);
	if (!exists && mode == OCB_STORE_READ)
		return ocb_seterr(OCB_ENOENT, "%s: no such database (run 'ocbench run' first)", path);
	if (exists && sb.st_size == 0 && mode == OCB_STORE_READ)
		return ocb_seterr(OCB_ENOTOURS, "%s: empty file, not an ocbench database", path);

	if (exists && sb.st_size > 0) {
		/* Probe: refuse what is not ours before anything can write. */
		if ((rc = check_magic(path)))
			goto out;
		if ((rc = db_connect(path, SQLITE_OPEN_READONLY, &probe)))
			goto out;
		rc = classify(probe, path, &version);
		if (rc == OCB_EPERM && (rc = open_unwritable(path, &probe)) == OCB_OK)
			rc = classify(probe, path, &version);
		if (rc)
			goto out;
		if (mode == OCB_STORE_READ && version < OCB_SCHEMA_VERSION) {
			rc = ocb_seterr(OCB_EINVAL,
					"%s: schema version %d is older than this ocbench (%d); a "
					"writing command (ocbench run) upgrades it",
					path, version, OCB_SCHEMA_VERSION);
			goto out;
		}
	}

	s = calloc(1, sizeof *s);
	if (!s || !(s->path = strdup(path))) {
		rc = ocb_seterr(OCB_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	s->mode = mode;
	if (mode == OCB_STORE_READ) {
		s->db = probe;
		probe = NULL;
		if ((rc = add_functions(s->db, path)))
			goto out;
		/* query_only: belt and braces on top of SQLITE_OPEN_READONLY */
		if ((rc = exec_sql(s, "PRAGMA query_only = ON; PRAGMA foreign_keys = ON",
				   "configure")))
			goto out;
		/* One read transaction for the store's life: every query of a report sees
		 * the same snapshot while other processes write (WAL readers never wait for
		 * them); it starts at the first read, ends at ocb_store_close. */
		rc = exec_sql(s, "BEGIN DEFERRED", "begin read snapshot");
		goto out;
	}
	sqlite3_close(probe);
	probe = NULL;

	rc = db_connect(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &s->db);
	if (rc) {
		if (rc == OCB_EDB) /* the detail already names the path and the reason */
			rc = OCB_EPERM;
		goto out;
	}
	if (sqlite3_db_readonly(s->db, "main") == 1) {
		rc = ocb_seterr(OCB_EPERM, "%s: not writable", path);
		goto out;
	}
	if ((rc = add_functions(s->db, path)))
		goto out;
	if ((rc = exec_sql(s, "PRAGMA foreign_keys = ON", "configure")))
		goto out;
	{
		sqlite3_stmt *st = NULL;
		const unsigned char *jm = NULL;
		if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL) ==
			    SQLITE_OK &&
		    ocb_db_step_retry(st) == SQLITE_ROW)
			jm = sqlite3_column_text(st, 0);
		if (!jm || strcmp((const char *)jm, "wal") != 0) {
			rc = jm ? ocb_seterr(OCB_EDB, "%s: cannot use WAL (journal mode stays '%s')",
					     path, (const char *)jm)
				: s_err(s, "enable WAL");
			sqlite3_finalize(st);
			goto out;
		}
		sqlite3_finalize(st);
	}
	if ((rc = exec_sql(s, "PRAGMA synchronous = NORMAL", "configure")))
		goto out;
	if ((rc = migrate(s)))
		goto out;
	rc = mark_aborted(s);
out:
	sqlite3_close(probe);
	if (rc != OCB_OK) {
		ocb_store_close(s);
		return rc;
	}
	*out = s;
	return OCB_OK;
}

void ocb_store_close(struct ocb_store *s)
{
	if (!s)
		return;
	if (s->db && !sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL); /* an uncommitted group */
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(s->stmt[i]);
	sqlite3_close(s->db);
	free(s->path);
	free(s);
}

sqlite3 *ocb_store_handle(struct ocb_store *s)
{
	return s ? s->db : NULL;
}

const char *ocb_store_path(const struct ocb_store *s)
{
	return s ? s->path : "";
}

static int need_write(struct ocb_store *s)
{
	if (!s || !s->db)
		return ocb_seterr(OCB_EINVAL, "store: not open");
	if (s->mode != OCB_STORE_WRITE)
		return ocb_seterr(OCB_EINVAL, "%s: opened read-only", s->path);
	return OCB_OK;
}

/* ---- writes ----------------------------------------------------------------------- */

int ocb_store_machine(struct ocb_store *s, const struct ocb_machine *m, int64_t *id)
{
	char now[32];
	sqlite3_stmt *st;
	int rc = need_write(s);
	if (rc)
		return rc;
	if (!m || !m->fingerprint[0])
		return ocb_seterr(OCB_EINVAL, "%s: machine without fingerprint", s->path);
	if (!(st = stmt(s, ST_MACHINE_INS)))
		return db_status(s->db);
	bind_text(st, 1, m->fingerprint);
	bind_text(st, 2, m->hostname);
	bind_text(st, 3, m->cpu_model);
	bind_text(st, 4, m->isa);
	sqlite3_bind_int(st, 5, m->cores);
	sqlite3_bind_int(st, 6, m->threads);
	sqlite3_bind_int64(st, 7, m->l1d_bytes);
	sqlite3_bind_int64(st, 8, m->l2_bytes);
	sqlite3_bind_int64(st, 9, m->l3_bytes);
	sqlite3_bind_int64(st, 10, m->mem_bytes);
	bind_text(st, 11, m->os);
	bind_text(st, 12, m->compiler);
	bind_text(st, 13, m->blas);
	bind_text(st, 14, m->papi_version);
	sqlite3_bind_int(st, 15, m->is_vm);
	bind_text(st, 16, ocb_utc_now(now, sizeof now));
	if ((rc = step_done(s, st, "insert machine")))
		return rc;
	if (!(st = stmt(s, ST_MACHINE_SEL)))
		return db_status(s->db);
	bind_text(st, 1, m->fingerprint);
	if (sqlite3_step(st) != SQLITE_ROW) {
		rc = s_err(s, "find machine");
		sqlite3_reset(st);
		return rc;
	}
	if (id)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return OCB_OK;
}

int ocb_store_run_begin(struct ocb_store *s, const struct ocb_run_info *ri, int64_t *run_id)
{
	char now[32], host[256] = "";
	sqlite3_stmt *st;
	int rc = need_write(s);
	if (rc)
		return rc;
	if (!ri || !ri->uuid || !*ri->uuid || !ri->suite || !*ri->suite)
		return ocb_seterr(OCB_EINVAL, "%s: run without uuid or suite", s->path);
	if (gethostname(host, sizeof host - 1) != 0)
		host[0] = '\0';
	if (!(st = stmt(s, ST_RUN_INS)))
		return db_status(s->db);
	bind_text(st, 1, ri->uuid);
	sqlite3_bind_int64(st, 2, ri->machine_id);
	bind_text(st, 3, ri->suite);
	bind_opt_text(st, 4, ri->label);
	bind_opt_text(st, 5, ri->ocbench_version);
	bind_opt_text(st, 6, ri->git_sha);
	bind_opt_text(st, 7, ri->cmdline);
	bind_opt_text(st, 8, ri->config_json);
	sqlite3_bind_int64(st, 9, (int64_t)ri->seed); /* two's complement above INT64_MAX */
	sqlite3_bind_int64(st, 10, (int64_t)getpid());
	bind_opt_text(st, 11, host);
	if (ri->started_at && *ri->started_at)
		bind_text(st, 12, ri->started_at);
	else
		bind_text(st, 12, ocb_utc_now(now, sizeof now));
	/* with pid and hostname: tells readers whether this run's process still lives */
	bind_opt_text(st, 13, ocb_host_id_self()->boot_id);
	if ((rc = step_done(s, st, "insert run")))
		return rc;
	if (run_id)
		*run_id = sqlite3_last_insert_rowid(s->db);
	return OCB_OK;
}

/* The connection's last error was a full disk or a write the file size limit refused
 * (SQLITE_FULL; SQLITE_IOERR when write() failed with EFBIG / ENOSPC). */
static int out_of_space(struct ocb_store *s)
{
	int code = sqlite3_errcode(s->db) & 0xff;
	return code == SQLITE_FULL || code == SQLITE_IOERR;
}

/* After a write failed for space: ends whatever transaction is open (SQLite may already
 * have rolled it back), then checkpoints the WAL into the database file and truncates
 * it, so that a small final write (a run's status) can start the WAL afresh from its
 * first byte. The committed runs are untouched either way. */
static int make_room(struct ocb_store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->in_group = 0;
	if (sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) !=
	    SQLITE_OK)
		return s_err(s, "checkpoint to make room");
	return OCB_OK;
}

int ocb_store_run_finish(struct ocb_store *s, int64_t run_id, const char *status)
{
	char now[32];
	sqlite3_stmt *st;
	int rc = need_write(s);
	if (rc)
		return rc;
	if (!status || (strcmp(status, "complete") && strcmp(status, "failed") &&
			strcmp(status, "aborted")))
		return ocb_seterr(OCB_EINVAL, "%s: run status '%s' is not complete|failed|aborted",
				  s->path, status ? status : "(null)");
	if (!(st = stmt(s, ST_RUN_FINISH)))
		return db_status(s->db);
	bind_text(st, 1, status);
	bind_text(st, 2, ocb_utc_now(now, sizeof now));
	sqlite3_bind_int64(st, 3, run_id);
	rc = step_done(s, st, "finish run");
	if (rc && out_of_space(s)) {
		/* The disk (or the file size limit) is full: give the status one more
		 * chance in the WAL space a checkpoint frees (store_int.h). */
		char why[512];
		snprintf(why, sizeof why, "%s", ocb_lasterr());
		if (make_room(s) == OCB_OK && (st = stmt(s, ST_RUN_FINISH))) {
			bind_text(st, 1, status);
			bind_text(st, 2, now);
			sqlite3_bind_int64(st, 3, run_id);
			rc = step_done(s, st, "finish run");
		}
		if (rc)
			ocb_seterr(rc, "%s", why);
	}
	if (rc)
		return rc;
	if (sqlite3_changes(s->db) == 0)
		return ocb_seterr(OCB_ENOENT, "%s: no run %lld", s->path, (long long)run_id);
	return OCB_OK;
}

/* The rows of one result, inside whatever transaction the caller opened. */
static int insert_result(struct ocb_store *s, int64_t run_id, const struct ocb_result *r,
			 int64_t *result_id)
{
	sqlite3_stmt *st = stmt(s, ST_RESULT_INS);
	int rc;
	if (!st)
		return db_status(s->db);
	sqlite3_bind_int64(st, 1, run_id);
	ocb_result_row_bind(st, 2, r);
	if ((rc = step_done(s, st, "insert result")))
		return rc;
	int64_t rid = sqlite3_last_insert_rowid(s->db);

	for (size_t i = 0; i < r->nsamples; i++) {
		if (!(st = stmt(s, ST_SAMPLE_INS)))
			return db_status(s->db);
		sqlite3_bind_int64(st, 1, rid);
		sqlite3_bind_int64(st, 2, (int64_t)i);
		sqlite3_bind_double(st, 3, r->samples[i]);
		bind_real(st, 4, r->cpu_samples ? r->cpu_samples[i] : NAN);
		if ((rc = step_done(s, st, "insert sample")))
			return rc;
	}
	for (size_t i = 0; i < r->ncounters; i++) {
		const struct ocb_counter_val *c = &r->counters[i];
		if (!(st = stmt(s, ST_COUNTER_INS)))
			return db_status(s->db);
		sqlite3_bind_int64(st, 1, rid);
		bind_text(st, 2, c->event);
		if (c->available)
			bind_real(st, 3, c->value);
		else
			sqlite3_bind_null(st, 3); /* never 0 for "not counted" */
		sqlite3_bind_int(st, 4, c->available ? 1 : 0);
		bind_opt_text(st, 5, c->reason);
		bind_real(st, 6, c->multiplex_ratio);
		if ((rc = step_done(s, st, "insert counter")))
			return rc;
	}
	if (result_id)
		*result_id = rid;
	return OCB_OK;
}

int ocb_store_result(struct ocb_store *s, int64_t run_id, const struct ocb_result *r,
		     int64_t *result_id)
{
	int rc = need_write(s);
	if (rc)
		return rc;
	if (!r || !r->bench[0] || !r->suite[0])
		return ocb_seterr(OCB_EINVAL, "%s: result without bench or suite", s->path);
	if (r->nsamples && !r->samples)
		return ocb_seterr(OCB_EINVAL, "%s: %s: %zu samples but no array", s->path, r->bench,
				  r->nsamples);
	if (r->ncounters && !r->counters)
		return ocb_seterr(OCB_EINVAL, "%s: %s: %zu counters but no array", s->path,
				  r->bench, r->ncounters);
	for (size_t i = 0; i < r->nsamples; i++)
		if (isnan(r->samples[i]))
			return ocb_seterr(OCB_EINVAL, "%s: %s: sample %zu is NaN", s->path, r->bench,
					  i);
	/* Inside a group a savepoint keeps this result atomic without ending the group. */
	enum stmt_id open = s->in_group ? ST_SAVEPOINT : ST_BEGIN;
	if ((rc = exec_stmt(s, open, "begin result")))
		return rc;
	rc = insert_result(s, run_id, r, result_id);
	if (rc == OCB_OK) {
		rc = exec_stmt(s, s->in_group ? ST_RELEASE : ST_COMMIT, "commit result");
		if (rc == OCB_OK)
			return OCB_OK;
	}
	if (s->in_group) {
		exec_stmt(s, ST_ROLLBACK_TO, "roll back result");
		exec_stmt(s, ST_RELEASE, "roll back result");
	} else if (!sqlite3_get_autocommit(s->db)) {
		exec_stmt(s, ST_ROLLBACK, "roll back result");
	}
	return rc;
}

int ocb_store_metric(struct ocb_store *s, int64_t run_id, const char *workload, long step,
		     const char *key, double value, const char *unit)
{
	sqlite3_stmt *st;
	int rc = need_write(s);
	if (rc)
		return rc;
	if (!workload || !*workload || !key || !*key)
		return ocb_seterr(OCB_EINVAL, "%s: metric without workload or key", s->path);
	if (!(st = stmt(s, ST_METRIC_INS)))
		return db_status(s->db);
	sqlite3_bind_int64(st, 1, run_id);
	bind_text(st, 2, workload);
	if (step < 0)
		sqlite3_bind_null(st, 3);
	else
		sqlite3_bind_int64(st, 3, step);
	bind_text(st, 4, key);
	bind_real(st, 5, value);
	bind_opt_text(st, 6, unit);
	return step_done(s, st, "insert metric");
}

int ocb_store_workload_ident(struct ocb_store *s, int64_t run_id, const char *workload,
			     const char *ident_json)
{
	sqlite3_stmt *st;
	int rc = need_write(s);
	if (rc)
		return rc;
	if (!workload || !*workload || !ident_json || !*ident_json)
		return ocb_seterr(OCB_EINVAL, "%s: workload ident without name or JSON", s->path);
	if (!(st = stmt(s, ST_IDENT_INS)))
		return db_status(s->db);
	sqlite3_bind_int64(st, 1, run_id);
	bind_text(st, 2, workload);
	bind_text(st, 3, ident_json);
	return step_done(s, st, "insert workload ident");
}

int ocb_store_begin(struct ocb_store *s)
{
	int rc = need_write(s);
	if (rc)
		return rc;
	if (s->in_group)
		return ocb_seterr(OCB_EINVAL, "%s: ocb_store_begin inside a group (no nesting)",
				  s->path);
	if ((rc = exec_stmt(s, ST_BEGIN, "begin")))
		return rc;
	s->in_group = 1;
	return OCB_OK;
}

int ocb_store_commit(struct ocb_store *s)
{
	int rc = need_write(s);
	if (rc)
		return rc;
	if (!s->in_group)
		return ocb_seterr(OCB_EINVAL, "%s: ocb_store_commit without ocb_store_begin",
				  s->path);
	rc = exec_stmt(s, ST_COMMIT, "commit");
	if (rc != OCB_OK && !sqlite3_get_autocommit(s->db))
		exec_stmt(s, ST_ROLLBACK, "roll back");
	s->in_group = 0;
	return rc;
}

void ocb_store_rollback(struct ocb_store *s)
{
	if (!s || !s->db || !s->in_group)
		return;
	if (!sqlite3_get_autocommit(s->db))
		exec_stmt(s, ST_ROLLBACK, "roll back");
	s->in_group = 0;
}

int ocb_store_ceiling(struct ocb_store *s, int64_t machine_id, int64_t run_id,
		      const struct ocb_ceiling *c)
{
	char now[32];
	sqlite3_stmt *st;
	int rc = need_write(s);
	if (rc)
		return rc;
	if (!c || !c->kind[0] || !c->unit[0] || !isfinite(c->value))
		return ocb_seterr(OCB_EINVAL, "%s: ceiling without kind, unit or a finite value",
				  s->path);
	if (!(st = stmt(s, ST_CEILING_INS)))
		return db_status(s->db);
	sqlite3_bind_int64(st, 1, machine_id);
	if (run_id > 0)
		sqlite3_bind_int64(st, 2, run_id);
	else
		sqlite3_bind_null(st, 2);
	bind_text(st, 3, c->kind);
	sqlite3_bind_int(st, 4, c->threads);
	sqlite3_bind_double(st, 5, c->value);
	bind_text(st, 6, c->unit);
	bind_opt_text(st, 7, c->method);
	bind_text(st, 8, ocb_utc_now(now, sizeof now));
	if (c->trials > 0) { /* trials 0: not known (a hand-made or imported ceiling) */
		sqlite3_bind_int(st, 9, c->trials);
		bind_real(st, 10, c->spread);
	} else {
		sqlite3_bind_null(st, 9);
		sqlite3_bind_null(st, 10);
	}
	bind_opt_text(st, 11, c->suspect);
	return step_done(s, st, "insert ceiling");
}

int ocb_store_ceiling_drop_flagged(struct ocb_store *s, int64_t machine_id, const char *kind,
				   int threads)
{
	sqlite3_stmt *st;
	int rc = need_write(s);
	if (rc)
		return rc;
	if (!(st = stmt(s, ST_CEILING_DROP_FLAGGED)))
		return db_status(s->db);
	sqlite3_bind_int64(st, 1, machine_id);
	bind_text(st, 2, kind);
	sqlite3_bind_int(st, 3, threads);
	return step_done(s, st, "delete flagged ceiling");
}

/* Rows of ceiling statement `id` for machine_id into a malloc'd array. */
static int ceilings_read(struct ocb_store *s, enum stmt_id id, int64_t machine_id,
			 struct ocb_ceiling **out, size_t *n)
{
	struct ocb_ceiling *v = NULL;
	size_t len = 0, cap = 0;
	sqlite3_stmt *st;
	int rc = OCB_OK, step;

	*out = NULL;
	*n = 0;
	if (!s || !s->db)
		return ocb_seterr(OCB_EINVAL, "store: not open");
	if (!(st = stmt(s, id)))
		return db_status(s->db);
	sqlite3_bind_int64(st, 1, machine_id);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			size_t nc = cap ? 2 * cap : 16;
			struct ocb_ceiling *p = realloc(v, nc * sizeof *p);
			if (!p) {
				rc = ocb_seterr(OCB_ENOMEM, "%s: ceilings", s->path);
				goto out;
			}
			v = p;
			cap = nc;
		}
		struct ocb_ceiling *c = &v[len++];
		memset(c, 0, sizeof *c);
		ocb_col_text(c->kind, sizeof c->kind, st, 0);
		c->threads = sqlite3_column_int(st, 1);
		c->value = sqlite3_column_double(st, 2);
		ocb_col_text(c->unit, sizeof c->unit, st, 3);
		ocb_col_text(c->method, sizeof c->method, st, 4);
		c->trials = sqlite3_column_int(st, 5); /* NULL (an older row) -> 0, unknown */
		c->spread = ocb_col_real(st, 6);
		ocb_col_text(c->suspect, sizeof c->suspect, st, 7);
	}
	if (step != SQLITE_DONE)
		rc = s_err(s, "read ceilings");
out:
	sqlite3_reset(st);
	if (rc != OCB_OK) {
		free(v);
		return rc;
	}
	*out = v;
	*n = len;
	return OCB_OK;
}

int ocb_store_ceilings_get(struct ocb_store *s, int64_t machine_id, struct ocb_ceiling **out,
			   size_t *n)
{
	return ceilings_read(s, ST_CEILING_GET, machine_id, out, n);
}

int ocb_store_ceilings_flagged(struct ocb_store *s, int64_t machine_id,
			       struct ocb_ceiling **out, size_t *n)
{
	return ceilings_read(s, ST_CEILING_FLAGGED, machine_id, out, n);
}
