/* store_open: opening a store (store.h). Opening is two-phase so that a file we must
 * refuse is never written: a read-only "probe" connection classifies the file (SQLite
 * magic, ocbench_meta, user_version) before any pragma that writes (journal_mode=WAL)
 * or any migration runs. */
#include "store_core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_natcmp.h"
#include "busy.h"
#include "uri.h"

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
int store_classify(sqlite3 *db, const char *path, int *version)
{
	sqlite3_stmt *st = NULL;
	int64_t uv = 0, nobj = 0;
	int rc = store_query_int(db, path, "PRAGMA user_version", &uv);
	if (rc == OCB_ENOTOURS)
		rc = ocb_seterr(OCB_ENOTOURS, "%s: not an SQLite database", path);
	if (rc)
		goto out;
	rc = store_query_int(db, path, "SELECT count(*) FROM sqlite_master", &nobj);
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
		rc = store_dberr(db, path, "read ocbench_meta");
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
		return store_dberr(db, path, "register collation");
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
			status = ocb_seterr(store_status(*db), "%s: cannot open%s: %s%s%s", path,
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
		rc = store_classify(probe, path, &version);
		if (rc == OCB_EPERM && (rc = open_unwritable(path, &probe)) == OCB_OK)
			rc = store_classify(probe, path, &version);
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
		if ((rc = store_exec_sql(s, "PRAGMA query_only = ON; PRAGMA foreign_keys = ON",
				   "configure")))
			goto out;
		/* One read transaction for the store's life: every query of a report sees
		 * the same snapshot while other processes write (WAL readers never wait for
		 * them); it starts at the first read, ends at ocb_store_close. */
		rc = store_exec_sql(s, "BEGIN DEFERRED", "begin read snapshot");
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
	if ((rc = store_exec_sql(s, "PRAGMA foreign_keys = ON", "configure")))
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
				: store_err(s, "enable WAL");
			sqlite3_finalize(st);
			goto out;
		}
		sqlite3_finalize(st);
	}
	if ((rc = store_exec_sql(s, "PRAGMA synchronous = NORMAL", "configure")))
		goto out;
	if ((rc = store_migrate(s)))
		goto out;
	rc = store_mark_aborted(s);
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
