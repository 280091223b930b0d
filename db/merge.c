#define _GNU_SOURCE
#include "merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "busy.h"
#include "merge_check.h"
#include "result_row.h"
#include "uri.h"
#include "store_int.h"

/* Runs one statement; *changes += rows it changed (if changes). Main is consistent and
 * merge only inserts, so a constraint, type or corruption error comes from the other
 * file's rows: bad input (OCB_EFORMAT), not a run-time failure. */
static int exec(sqlite3 *db, const char *sql, long *changes)
{
	char *err = NULL;
	if (ocb_db_exec_retry(db, sql, &err) != SQLITE_OK) {
		int code = sqlite3_errcode(db) & 0xff;
		int bad_input = code == SQLITE_CONSTRAINT || code == SQLITE_MISMATCH ||
				code == SQLITE_CORRUPT || code == SQLITE_NOTADB ||
				code == SQLITE_TOOBIG;
		int rc = ocb_seterr(bad_input ? OCB_EFORMAT : OCB_EDB, "merge: %s",
				    err ? err : sqlite3_errmsg(db));
		sqlite3_free(err);
		return rc;
	}
	if (changes)
		*changes += sqlite3_changes(db);
	return OCB_OK;
}

static const char *const drops =
	"DROP TABLE IF EXISTS temp.ocb_mmap; DROP TABLE IF EXISTS temp.ocb_newruns;"
	" DROP TABLE IF EXISTS temp.ocb_rmap; DROP TABLE IF EXISTS temp.ocb_resmap;";

/* Attaches other_path (as uri, read-only) as schema ocb_other and checks that its
 * schema version is this ocbench's. *attached = 1 once attached (detach it even on
 * error). */
static int attach_other(sqlite3 *db, const char *other_path, const char *uri, int *attached)
{
	sqlite3_stmt *att = NULL;
	int rc = OCB_OK;
	if (sqlite3_prepare_v2(db, "ATTACH DATABASE ?1 AS ocb_other", -1, &att, NULL) != SQLITE_OK)
		return ocb_seterr(OCB_EDB, "merge: %s", sqlite3_errmsg(db));
	sqlite3_bind_text(att, 1, uri, -1, SQLITE_TRANSIENT);
	int step = sqlite3_step(att);
	sqlite3_finalize(att);
	if (step != SQLITE_DONE)
		return ocb_seterr(OCB_EDB, "merge: cannot attach %s: %s", other_path, sqlite3_errmsg(db));
	*attached = 1;
	if (sqlite3_db_readonly(db, "ocb_other") != 1)
		return ocb_seterr(OCB_EDB, "merge: %s could not be attached read-only", other_path);
	sqlite3_stmt *v = NULL;
	int ver = -1;
	if (sqlite3_prepare_v2(db, "PRAGMA ocb_other.user_version", -1, &v, NULL) == SQLITE_OK &&
	    sqlite3_step(v) == SQLITE_ROW)
		ver = sqlite3_column_int(v, 0);
	sqlite3_finalize(v);
	if (ver != OCB_SCHEMA_VERSION)
		rc = ocb_seterr(ver > OCB_SCHEMA_VERSION ? OCB_ENEWER : OCB_EINVAL,
				"%s: schema version %d, this ocbench merges version %d", other_path,
				ver, OCB_SCHEMA_VERSION);
	return rc;
}

/* Inside the open transaction: every new machine, run, result (+ samples, counters),
 * metric, workload identity and ceiling of ocb_other, with new ids; counts into *st.
 * Over 80 lines only because it is the list of the transaction's statements, in order. */
static int copy_rows(sqlite3 *db, struct ocb_merge_stats *st)
{
	int rc;
	/* the result rows: every column of the row codec (result_row.h), new ids */
	char ocols[1024], result_sql[2560];
	ocb_result_cols_prefixed("o.", ocols, sizeof ocols);
	snprintf(result_sql, sizeof result_sql,
		 "INSERT INTO main.result (id, run_id, " OCB_RESULT_COLS ")"
		 " SELECT m.nid, m.run_nid, %s FROM ocb_other.result o"
		 " JOIN temp.ocb_resmap m ON m.oid = o.id ORDER BY m.nid",
		 ocols);
	if ((rc = exec(db,
		       "INSERT INTO main.machine (fingerprint, hostname, cpu_model, isa, cores, threads,"
		       " l1d_bytes, l2_bytes, l3_bytes, mem_bytes, os, compiler, blas, papi_version, is_vm,"
		       " created_at)"
		       " SELECT o.fingerprint, o.hostname, o.cpu_model, o.isa, o.cores, o.threads,"
		       " o.l1d_bytes, o.l2_bytes, o.l3_bytes, o.mem_bytes, o.os, o.compiler, o.blas,"
		       " o.papi_version, o.is_vm, o.created_at FROM ocb_other.machine o"
		       " WHERE NOT EXISTS (SELECT 1 FROM main.machine m WHERE m.fingerprint = o.fingerprint)"
		       " ORDER BY o.id",
		       &st->machines)) ||
	    (rc = exec(db,
		       "CREATE TEMP TABLE ocb_mmap AS SELECT o.id AS oid, m.id AS nid"
		       " FROM ocb_other.machine o JOIN main.machine m ON m.fingerprint = o.fingerprint",
		       NULL)) ||
	    (rc = exec(db,
		       "CREATE TEMP TABLE ocb_newruns AS SELECT o.id AS oid FROM ocb_other.run o"
		       " WHERE NOT EXISTS (SELECT 1 FROM main.run r WHERE r.uuid = o.uuid)",
		       NULL)) ||
	    (rc = exec(db,
		       "INSERT INTO main.run (uuid, machine_id, suite, label, status, ocbench_version,"
		       " git_sha, cmdline, config_json, seed, pid, hostname, started_at, finished_at,"
		       " boot_id)"
		       " SELECT o.uuid, mm.nid, o.suite, o.label, o.status, o.ocbench_version, o.git_sha,"
		       " o.cmdline, o.config_json, o.seed, o.pid, o.hostname, o.started_at, o.finished_at,"
		       " o.boot_id"
		       " FROM ocb_other.run o JOIN temp.ocb_newruns n ON n.oid = o.id"
		       " JOIN temp.ocb_mmap mm ON mm.oid = o.machine_id ORDER BY o.id",
		       &st->runs)) ||
	    (rc = exec(db,
		       "CREATE TEMP TABLE ocb_rmap AS SELECT o.id AS oid, r.id AS nid"
		       " FROM ocb_other.run o JOIN temp.ocb_newruns n ON n.oid = o.id"
		       " JOIN main.run r ON r.uuid = o.uuid",
		       NULL)) ||
	    (rc = exec(db,
		       "CREATE TEMP TABLE ocb_resmap AS SELECT o.id AS oid,"
		       " (SELECT IFNULL(MAX(id), 0) FROM main.result) + ROW_NUMBER() OVER (ORDER BY o.id)"
		       " AS nid, rm.nid AS run_nid"
		       " FROM ocb_other.result o JOIN temp.ocb_rmap rm ON rm.oid = o.run_id",
		       NULL)) ||
	    (rc = exec(db, result_sql, &st->results)) ||
	    (rc = exec(db,
		       "INSERT INTO main.sample (result_id, rep, value, cpu_s) SELECT m.nid, s.rep,"
		       " s.value, s.cpu_s"
		       " FROM ocb_other.sample s JOIN temp.ocb_resmap m ON m.oid = s.result_id",
		       &st->samples)) ||
	    (rc = exec(db,
		       "INSERT INTO main.counter (result_id, event, value, available, reason,"
		       " multiplex_ratio) SELECT m.nid, c.event, c.value, c.available, c.reason,"
		       " c.multiplex_ratio FROM ocb_other.counter c"
		       " JOIN temp.ocb_resmap m ON m.oid = c.result_id",
		       &st->counters)) ||
	    (rc = exec(db,
		       "INSERT INTO main.metric (run_id, workload, step, key, value, unit)"
		       " SELECT rm.nid, o.workload, o.step, o.key, o.value, o.unit FROM ocb_other.metric o"
		       " JOIN temp.ocb_rmap rm ON rm.oid = o.run_id ORDER BY o.id",
		       &st->metrics)) ||
	    (rc = exec(db,
		       "INSERT OR IGNORE INTO main.workload_ident (run_id, workload, ident)"
		       " SELECT rm.nid, o.workload, o.ident FROM ocb_other.workload_ident o"
		       " JOIN temp.ocb_rmap rm ON rm.oid = o.run_id",
		       NULL)) ||
	    (rc = exec(db,
		       "INSERT INTO main.ceiling (machine_id, run_id, kind, threads, value, unit, method,"
		       " created_at, trials, spread, suspect)"
		       " SELECT mm.nid, (SELECT r.id FROM main.run r JOIN ocb_other.run x ON x.uuid = r.uuid"
		       " WHERE x.id = o.run_id), o.kind, o.threads, o.value, o.unit, o.method, o.created_at,"
		       " o.trials, o.spread, o.suspect"
		       " FROM ocb_other.ceiling o JOIN temp.ocb_mmap mm ON mm.oid = o.machine_id"
		       " WHERE NOT EXISTS (SELECT 1 FROM main.ceiling c WHERE c.machine_id = mm.nid"
		       " AND c.kind = o.kind AND c.threads = o.threads AND c.value = o.value"
		       " AND c.created_at = o.created_at) ORDER BY o.id",
		       &st->ceilings)))
		return rc;
	{
		sqlite3_stmt *c = NULL;
		if (sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM ocb_other.run) -"
					   " (SELECT count(*) FROM temp.ocb_newruns)",
				       -1, &c, NULL) == SQLITE_OK &&
		    sqlite3_step(c) == SQLITE_ROW)
			st->runs_skipped = (long)sqlite3_column_int64(c, 0);
		sqlite3_finalize(c);
	}
	return OCB_OK;
}

int ocb_merge_db(struct ocb_store *s, const char *other_path, struct ocb_merge_stats *st)
{
	struct ocb_merge_stats z;
	struct ocb_store *probe = NULL;
	sqlite3 *db = ocb_store_handle(s);
	char *uri = NULL;
	int rc, attached = 0, in_tx = 0;

	if (!st)
		st = &z;
	memset(st, 0, sizeof *st);
	/* Classify the other file exactly as the store does (refuses foreign / newer / older). */
	if ((rc = ocb_store_open(other_path, OCB_STORE_READ, &probe))) {
		char why[512]; /* a torn or corrupt other file is bad input, not a failure here */
		snprintf(why, sizeof why, "%s", ocb_lasterr());
		return rc == OCB_EDB ? ocb_seterr(OCB_EFORMAT, "%s", why) : rc;
	}
	ocb_store_close(probe);
	if (!(uri = ocb_db_uri(other_path, "mode=ro")))
		return ocb_seterr(OCB_ENOENT, "%s: cannot resolve the path", other_path);
	if ((rc = attach_other(db, other_path, uri, &attached)) ||
	    (rc = ocb_merge_check_other(db, "ocb_other", other_path)))
		goto out;
	if ((rc = exec(db, drops, NULL)) || (rc = exec(db, "BEGIN IMMEDIATE", NULL)))
		goto out;
	in_tx = 1;
	long dummy = 0;
	if ((rc = copy_rows(db, st)))
		goto out;
	if ((rc = exec(db, "COMMIT", &dummy)))
		goto out;
	in_tx = 0;
out:
	if (in_tx) {
		char why[512];
		snprintf(why, sizeof why, "%s", ocb_lasterr());
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		ocb_seterr(rc, "%s", why);
		memset(st, 0, sizeof *st);
	}
	sqlite3_exec(db, drops, NULL, NULL, NULL);
	if (attached)
		sqlite3_exec(db, "DETACH DATABASE ocb_other", NULL, NULL, NULL);
	free(uri);
	return rc;
}
