/* run_ab: see run_ab.h. */
#include "run_ab.h"
#include "store_int.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"

static void col_text(sqlite3_stmt *st, int i, char *dst, size_t len)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	snprintf(dst, len, "%s", t ? (const char *)t : "");
}

int ocb_db_run_ab_link(struct ocb_store *s, int64_t run_id, struct ocb_ab_link *out)
{
	sqlite3 *db = ocb_store_handle(s);
	sqlite3_stmt *st = NULL;
	int rc = OCB_OK;
	memset(out, 0, sizeof *out);
	const char *sql =
		"SELECT json_extract(r.config_json, '$.ab.pair'), json_extract(r.config_json,"
		" '$.ab.side'), json_extract(r.config_json, '$.ab.other'),"
		" json_extract(r.config_json, '$.ab.rounds'), json_extract(r.config_json,"
		" '$.ab.adaptive_rounds'), json_extract(r.config_json, '$.ab.stat'),"
		" (SELECT o.id FROM run o WHERE o.uuid = json_extract(r.config_json, '$.ab.other'))"
		" FROM run r WHERE r.id = ?1 AND json_valid(r.config_json)"
		" AND json_extract(r.config_json, '$.ab.pair') IS NOT NULL";
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return ocb_seterr(OCB_EDB, "%s: %s", ocb_store_path(s), sqlite3_errmsg(db));
	sqlite3_bind_int64(st, 1, run_id);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		out->present = 1;
		col_text(st, 0, out->pair, sizeof out->pair);
		col_text(st, 1, out->side, sizeof out->side);
		col_text(st, 2, out->other_uuid, sizeof out->other_uuid);
		out->rounds = sqlite3_column_int64(st, 3);
		out->adaptive_rounds = sqlite3_column_int64(st, 4);
		col_text(st, 5, out->stat, sizeof out->stat);
		out->other_run = sqlite3_column_int64(st, 6);
	} else if (step != SQLITE_DONE) {
		rc = ocb_seterr(OCB_EDB, "%s: %s", ocb_store_path(s), sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	return rc;
}

int ocb_db_run_metric_steps(struct ocb_store *s, int64_t run_id, const char *workload,
			    const char *key, double *v, int nsteps)
{
	sqlite3 *db = ocb_store_handle(s);
	sqlite3_stmt *st = NULL;
	int step;
	for (int i = 0; i < nsteps; i++)
		v[i] = NAN;
	if (sqlite3_prepare_v2(db,
			       "SELECT step, value FROM metric WHERE run_id = ?1 AND workload = ?2"
			       " AND key = ?3 AND step IS NOT NULL ORDER BY rowid",
			       -1, &st, NULL) != SQLITE_OK)
		return ocb_seterr(OCB_EDB, "%s: %s", ocb_store_path(s), sqlite3_errmsg(db));
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_text(st, 2, workload, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, key, -1, SQLITE_STATIC);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int k = sqlite3_column_int(st, 0);
		if (k >= 0 && k < nsteps && sqlite3_column_type(st, 1) != SQLITE_NULL)
			v[k] = sqlite3_column_double(st, 1);
	}
	int rc = step == SQLITE_DONE ? OCB_OK
				     : ocb_seterr(OCB_EDB, "%s: %s", ocb_store_path(s),
						  sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc;
}
