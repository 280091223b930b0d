/* fuzz_merge: `ocbench merge OTHER.db` of a hostile database (db/merge.h), then the
 * merged store read back as `runs`, `export` and `show` do.
 *
 * Input: one mode byte, then
 *   even mode: the bytes of OTHER.db itself (any file: not SQLite, torn pages, ...);
 *   odd mode:  an SQL script run on an empty ocbench database (schema v4) to make
 *              OTHER.db: wrong or missing tables and columns, huge and non-finite values,
 *              text in numeric columns, duplicate uuids (the script may rebuild a table
 *              without its UNIQUE constraint), dangling ids.
 * The script cannot ATTACH or write files elsewhere (authorizer), and a progress handler
 * stops statements that loop. Both databases start from one template file made at
 * start-up, so an input costs file copies rather than schema creation. */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../db/merge.h"
#include "../../db/rows.h"
#include "../../report/export.h"
#include "fuzz_util.h"

static uint8_t *tmpl;
static size_t tmpl_len;
static char other[256], mine[256];

static int read_all(const char *path, uint8_t **out, size_t *n)
{
	FILE *f = fopen(path, "rb");
	long len;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	*out = malloc(len > 0 ? (size_t)len : 1);
	*n = *out && len > 0 ? fread(*out, 1, (size_t)len, f) : 0;
	fclose(f);
	return *out && (long)*n == len ? 0 : -1;
}

/* The template: an empty ocbench database, checkpointed into one file (no -wal). */
static int make_template(void)
{
	struct ocb_store *s = NULL;
	sqlite3 *db = NULL;
	char path[256];
	int rc;

	snprintf(path, sizeof path, "%s/template.db", fuzz_scratch());
	snprintf(other, sizeof other, "%s/other.db", fuzz_scratch());
	snprintf(mine, sizeof mine, "%s/mine.db", fuzz_scratch());
	if (ocb_store_open(path, OCB_STORE_WRITE, &s))
		return -1;
	ocb_store_close(s);
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return -1;
	sqlite3_exec(db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
	sqlite3_close(db);
	rc = read_all(path, &tmpl, &tmpl_len);
	fuzz_unlink_db(path);
	return rc;
}

static int deny_attach(void *u, int action, const char *a, const char *b, const char *c,
		       const char *d)
{
	(void)u, (void)a, (void)b, (void)c, (void)d;
	return action == SQLITE_ATTACH || action == SQLITE_DETACH ? SQLITE_DENY : SQLITE_OK;
}

static int stop_long(void *steps)
{
	return ++*(long *)steps > 2000; /* x 1000 VM instructions */
}

/* OTHER.db from the template and the script text[0..n) (NUL-terminated copy). */
static void run_script(const uint8_t *text, size_t n)
{
	sqlite3 *db = NULL;
	char *sql = malloc(n + 1);
	long steps = 0;

	if (!sql)
		return;
	memcpy(sql, text, n);
	sql[n] = 0;
	if (fuzz_write_file(other, tmpl, tmpl_len) == 0 &&
	    sqlite3_open_v2(other, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
		sqlite3_set_authorizer(db, deny_attach, NULL);
		sqlite3_progress_handler(db, 1000, stop_long, &steps);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	sqlite3_close(db);
	free(sql);
}

/* What the readers do with the merged store. */
static void read_back(struct ocb_store *s)
{
	struct ocb_rows r = {0};
	int64_t run_id;
	FILE *null = fopen("/dev/null", "w");

	if (ocb_db_list_runs(s, NULL, NULL, 50, &r) == 0)
		ocb_rows_release(&r);
	if (null && ocb_export_latest(s, &run_id) == 0) {
		ocb_export_run(s, run_id, OCB_EXPORT_JSON, null);
		ocb_export_run(s, run_id, OCB_EXPORT_CSV, null);
		if (ocb_db_show_results(s, run_id, &r) == 0)
			ocb_rows_release(&r);
	}
	if (null)
		fclose(null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ocb_store *s = NULL;
	struct ocb_merge_stats st;

	if (size < 1 || size > (1u << 20))
		return 0;
	if (!tmpl && make_template())
		abort();
	fuzz_unlink_db(other);
	if (data[0] & 1)
		run_script(data + 1, size - 1);
	else if (fuzz_write_file(other, data + 1, size - 1))
		return 0;
	fuzz_unlink_db(mine);
	if (fuzz_write_file(mine, tmpl, tmpl_len) || ocb_store_open(mine, OCB_STORE_WRITE, &s))
		return 0;
	if (fuzz_note("merge", ocb_merge_db(s, other, &st)) == 0)
		read_back(s);
	ocb_store_close(s);
	return 0;
}
