/* store_migrate: the schema's versions (PRAGMA user_version) and the forward migrations
 * that bring an older ocbench's file to OCB_SCHEMA_VERSION. */
#include "store_core.h"

#include <stdio.h>

#include "../common/ocb_error.h"
#include "../common/ocb_time.h"

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

/* Brings the file to OCB_SCHEMA_VERSION in one IMMEDIATE transaction (re-classifying
 * inside it, in case another ocbench migrated the file meanwhile). */
int store_migrate(struct ocb_store *s)
{
	char sql[256], now[32];
	int version = 0, rc = store_exec_sql(s, "BEGIN IMMEDIATE", "begin migration");
	if (rc)
		return rc;
	rc = store_classify(s->db, s->path, &version);
	if (rc || version == OCB_SCHEMA_VERSION)
		goto out;
	if (version == 0) {
		rc = store_exec_sql(s, ocb_schema_sql, "create schema");
		if (rc)
			goto out;
		snprintf(sql, sizeof sql,
			 "INSERT OR REPLACE INTO ocbench_meta (key, value) VALUES ('app', 'ocbench'),"
			 " ('created_at', '%s'), ('created_by', 'ocbench %s')",
			 ocb_utc_now(now, sizeof now), OCB_VERSION);
		rc = store_exec_sql(s, sql, "write ocbench_meta");
		if (rc)
			goto out;
		version = OCB_SCHEMA_VERSION;
	}
	for (; version < OCB_SCHEMA_VERSION; version++) {
		snprintf(sql, sizeof sql, "migrate schema %d -> %d", version, version + 1);
		rc = store_exec_sql(s, migrations[version], sql);
		if (rc)
			goto out;
	}
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", OCB_SCHEMA_VERSION);
	rc = store_exec_sql(s, sql, "set schema version");
out:
	if (rc == OCB_OK)
		rc = store_exec_sql(s, "COMMIT", "commit migration");
	if (rc != OCB_OK && !sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}
