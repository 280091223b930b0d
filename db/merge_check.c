/* merge_check: a foreign database's shape and keys before `merge` (merge_check.h). */
#define _GNU_SOURCE
#include "merge_check.h"

#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"

/* The tables merge reads; each must hold every column main's table of that name holds. */
static const char *const merged_tables[] = {
	"machine", "run", "result", "sample", "counter", "metric", "workload_ident", "ceiling",
};

/* Runs `sql` (one row, one text column expected, ?1 = other schema, ?2 = table); *hit = 1
 * and found[] = the text when there is a row. */
static int probe(sqlite3 *db, const char *sql, const char *other, const char *table,
		 int *hit, char *found, size_t cap)
{
	sqlite3_stmt *st = NULL;
	int rc = OCB_OK, step;

	*hit = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return ocb_seterr(OCB_EDB, "merge: %s", sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, other, -1, SQLITE_STATIC);
	if (table)
		sqlite3_bind_text(st, 2, table, -1, SQLITE_STATIC);
	step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		*hit = 1;
		snprintf(found, cap, "%.*s", 80, t ? (const char *)t : "NULL");
	} else if (step != SQLITE_DONE) {
		rc = ocb_seterr(OCB_EFORMAT, "merge: %s", sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	return rc;
}

/* Every column of main's tables is in other's table of the same name. */
static int check_columns(sqlite3 *db, const char *other, const char *path)
{
	char col[96];
	int hit, rc;

	for (size_t i = 0; i < sizeof merged_tables / sizeof merged_tables[0]; i++) {
		rc = probe(db,
			   "SELECT m.name FROM pragma_table_info(?2, 'main') m WHERE m.name NOT IN"
			   " (SELECT o.name FROM pragma_table_info(?2, ?1) o) ORDER BY m.cid LIMIT 1",
			   other, merged_tables[i], &hit, col, sizeof col);
		if (rc)
			return rc;
		if (hit)
			return ocb_seterr(OCB_EFORMAT, "%s: table %s has no column '%s': not a "
						       "well-formed ocbench database", path,
					  merged_tables[i], col);
	}
	return OCB_OK;
}

/* The keys merge matches on: run uuids and machine fingerprints, present and unique. */
static int check_keys(sqlite3 *db, const char *other, const char *path)
{
	static const struct {
		const char *table, *col;
	} keys[] = {{"run", "uuid"}, {"machine", "fingerprint"}};
	char sql[512], val[96];
	int hit, rc;

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		/* identifiers come from the table above, never from the file */
		snprintf(sql, sizeof sql,
			 "SELECT IFNULL(quote(%s), 'NULL') || ' appears ' || count(*) || ' times'"
			 " FROM \"%s\".%s GROUP BY %s HAVING count(*) > 1 OR %s IS NULL LIMIT 1",
			 keys[i].col, other, keys[i].table, keys[i].col, keys[i].col);
		if ((rc = probe(db, sql, other, NULL, &hit, val, sizeof val)))
			return rc;
		if (hit)
			return ocb_seterr(OCB_EFORMAT, "%s: %s %s %s: not a well-formed ocbench "
						       "database", path, keys[i].table,
					  keys[i].col, val);
	}
	return OCB_OK;
}

int ocb_merge_check_other(sqlite3 *db, const char *other, const char *path)
{
	int rc = check_columns(db, other, path);
	return rc ? rc : check_keys(db, other, path);
}
