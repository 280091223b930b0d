/* store_run: a run's lifecycle in the store — begun 'running', finished complete,
 * failed or aborted (even on a full disk), and runs whose process died marked aborted. */
#include "store_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_log.h"
#include "../common/ocb_time.h"
#include "run_live.h"

/* Marks runs left 'running' by a process that no longer exists as aborted: the verdict
 * every reader already shows (run_live.h), now stored. */
int store_mark_aborted(struct ocb_store *s)
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
		rc = store_err(s, "find stale runs");
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
		rc = store_err(s, "find stale runs");
		goto out;
	}
	if (n == 0)
		goto out;
	if (sqlite3_prepare_v2(s->db,
			       "UPDATE run SET status = 'aborted', finished_at = ?1"
			       " WHERE id = ?2 AND status = 'running'",
			       -1, &upd, NULL) != SQLITE_OK) {
		rc = store_err(s, "mark stale runs");
		goto out;
	}
	ocb_utc_now(now, sizeof now);
	if ((rc = store_exec_sql(s, "BEGIN IMMEDIATE", "mark stale runs")))
		goto out;
	for (size_t i = 0; i < n && rc == OCB_OK; i++) {
		sqlite3_reset(upd);
		sqlite3_bind_text(upd, 1, now, -1, SQLITE_STATIC);
		sqlite3_bind_int64(upd, 2, ids[i]);
		if (sqlite3_step(upd) != SQLITE_DONE)
			rc = store_err(s, "mark stale runs");
	}
	if (rc == OCB_OK)
		rc = store_exec_sql(s, "COMMIT", "mark stale runs");
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

int ocb_store_run_begin(struct ocb_store *s, const struct ocb_run_info *ri, int64_t *run_id)
{
	char now[32], host[256] = "";
	sqlite3_stmt *st;
	int rc = store_need_write(s);
	if (rc)
		return rc;
	if (!ri || !ri->uuid || !*ri->uuid || !ri->suite || !*ri->suite)
		return ocb_seterr(OCB_EINVAL, "%s: run without uuid or suite", s->path);
	if (gethostname(host, sizeof host - 1) != 0)
		host[0] = '\0';
	if (!(st = store_stmt(s, ST_RUN_INS)))
		return store_status(s->db);
	store_bind_text(st, 1, ri->uuid);
	sqlite3_bind_int64(st, 2, ri->machine_id);
	store_bind_text(st, 3, ri->suite);
	store_bind_opt_text(st, 4, ri->label);
	store_bind_opt_text(st, 5, ri->ocbench_version);
	store_bind_opt_text(st, 6, ri->git_sha);
	store_bind_opt_text(st, 7, ri->cmdline);
	store_bind_opt_text(st, 8, ri->config_json);
	sqlite3_bind_int64(st, 9, (int64_t)ri->seed); /* two's complement above INT64_MAX */
	sqlite3_bind_int64(st, 10, (int64_t)getpid());
	store_bind_opt_text(st, 11, host);
	if (ri->started_at && *ri->started_at)
		store_bind_text(st, 12, ri->started_at);
	else
		store_bind_text(st, 12, ocb_utc_now(now, sizeof now));
	/* with pid and hostname: tells readers whether this run's process still lives */
	store_bind_opt_text(st, 13, ocb_host_id_self()->boot_id);
	if ((rc = store_step_done(s, st, "insert run")))
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
		return store_err(s, "checkpoint to make room");
	return OCB_OK;
}

int ocb_store_run_finish(struct ocb_store *s, int64_t run_id, const char *status)
{
	char now[32];
	sqlite3_stmt *st;
	int rc = store_need_write(s);
	if (rc)
		return rc;
	if (!status || (strcmp(status, "complete") && strcmp(status, "failed") &&
			strcmp(status, "aborted")))
		return ocb_seterr(OCB_EINVAL, "%s: run status '%s' is not complete|failed|aborted",
				  s->path, status ? status : "(null)");
	if (!(st = store_stmt(s, ST_RUN_FINISH)))
		return store_status(s->db);
	store_bind_text(st, 1, status);
	store_bind_text(st, 2, ocb_utc_now(now, sizeof now));
	sqlite3_bind_int64(st, 3, run_id);
	rc = store_step_done(s, st, "finish run");
	if (rc && out_of_space(s)) {
		/* The disk (or the file size limit) is full: give the status one more
		 * chance in the WAL space a checkpoint frees (store_int.h). */
		char why[512];
		snprintf(why, sizeof why, "%s", ocb_lasterr());
		if (make_room(s) == OCB_OK && (st = store_stmt(s, ST_RUN_FINISH))) {
			store_bind_text(st, 1, status);
			store_bind_text(st, 2, now);
			sqlite3_bind_int64(st, 3, run_id);
			rc = store_step_done(s, st, "finish run");
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
