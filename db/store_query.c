#include "store_query.h"
#include "store_int.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "../common/ocb_error.h"
#include "column.h"
#include "result_row.h"
#include "run_live.h"

static int qerr(struct ocb_store *s, const char *what)
{
	return ocb_seterr(OCB_EDB, "%s: %s: %s", ocb_store_path(s), what,
			  sqlite3_errmsg(ocb_store_handle(s)));
}

/* Runs `sql` with text parameter ?1 = arg (if non-NULL); *id = first column of the
 * first row, *rows = number of rows seen (stops counting at 2). */
static int first_id(struct ocb_store *s, const char *sql, const char *arg, int64_t *id,
		    int *rows)
{
	sqlite3_stmt *st = NULL;
	int rc = OCB_OK, step = SQLITE_DONE;
	*rows = 0;
	if (sqlite3_prepare_v2(ocb_store_handle(s), sql, -1, &st, NULL) != SQLITE_OK) {
		rc = qerr(s, "resolve run");
		goto out;
	}
	if (arg)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_TRANSIENT);
	while (*rows < 2 && (step = sqlite3_step(st)) == SQLITE_ROW) {
		if (*rows == 0)
			*id = sqlite3_column_int64(st, 0);
		(*rows)++;
	}
	if (*rows < 2 && step != SQLITE_DONE)
		rc = qerr(s, "resolve run");
out:
	sqlite3_finalize(st);
	return rc;
}

static int all_digits(const char *t)
{
	if (!*t)
		return 0;
	for (; *t; t++)
		if (!isdigit((unsigned char)*t))
			return 0;
	return 1;
}

static int uuidish(const char *t)
{
	size_t n = 0;
	for (; *t; t++, n++)
		if (!isxdigit((unsigned char)*t) && *t != '-')
			return 0;
	return n >= 4;
}

int ocb_store_run_resolve(struct ocb_store *s, const char *spec, int64_t *run_id)
{
	int64_t id = 0;
	int rows = 0, rc;
	if (!s || !spec || !*spec)
		return ocb_seterr(OCB_EINVAL, "empty run spec");
	if (strcmp(spec, "latest") == 0) {
		rc = first_id(s, "SELECT id FROM run ORDER BY started_at DESC, id DESC LIMIT 1",
			      NULL, &id, &rows);
		if (rc)
			return rc;
		if (rows == 0)
			return ocb_seterr(OCB_ENOENT, "%s: no runs yet", ocb_store_path(s));
		*run_id = id;
		return OCB_OK;
	}
	if (all_digits(spec)) {
		rc = first_id(s, "SELECT id FROM run WHERE id = CAST(?1 AS INTEGER)", spec, &id,
			      &rows);
		if (rc)
			return rc;
		if (rows == 1) {
			*run_id = id;
			return OCB_OK;
		}
	}
	if (uuidish(spec)) {
		/* substr() rather than LIKE: '_' and '%' carry no meaning here */
		rc = first_id(s,
			      "SELECT id FROM run WHERE lower(substr(uuid, 1, length(?1))) ="
			      " lower(?1) ORDER BY id",
			      spec, &id, &rows);
		if (rc)
			return rc;
		if (rows > 1)
			return ocb_seterr(OCB_EINVAL, "%s: run uuid prefix '%s' is ambiguous",
					  ocb_store_path(s), spec);
		if (rows == 1) {
			*run_id = id;
			return OCB_OK;
		}
	}
	rc = first_id(s,
		      "SELECT id FROM run WHERE label = ?1 ORDER BY started_at DESC, id DESC"
		      " LIMIT 1",
		      spec, &id, &rows);
	if (rc)
		return rc;
	if (rows == 0)
		return ocb_seterr(OCB_ENOENT,
				  "%s: no run '%s' (give an id, a uuid prefix, a label or 'latest')",
				  ocb_store_path(s), spec);
	*run_id = id;
	return OCB_OK;
}

/* Over 80 lines: three reads (row, samples, counters) into one struct with one
 * cleanup path, so that a failure at any step owns nothing. */
int ocb_store_result_load(struct ocb_store *s, int64_t result_id, struct ocb_result *out)
{
	sqlite3_stmt *st = NULL;
	sqlite3 *db = ocb_store_handle(s);
	struct ocb_result r = {0};
	int rc = OCB_OK, step;
	size_t cap;

	memset(out, 0, sizeof *out);
	if (!db)
		return ocb_seterr(OCB_EINVAL, "store: not open");
	if (sqlite3_prepare_v2(db,
			       "SELECT " OCB_RESULT_COLS ","
			       " (SELECT count(*) FROM sample WHERE result_id = ?1),"
			       " (SELECT count(*) FROM counter WHERE result_id = ?1)"
			       " FROM result WHERE id = ?1",
			       -1, &st, NULL) != SQLITE_OK) {
		rc = qerr(s, "load result");
		goto out;
	}
	sqlite3_bind_int64(st, 1, result_id);
	step = sqlite3_step(st);
	if (step == SQLITE_DONE) {
		rc = ocb_seterr(OCB_ENOENT, "%s: no result %lld", ocb_store_path(s),
				(long long)result_id);
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = qerr(s, "load result");
		goto out;
	}
	if ((rc = ocb_result_row_read(st, 0, &r)))
		goto out;
	size_t nsamp = (size_t)sqlite3_column_int64(st, OCB_RESULT_NCOLS);
	size_t ncnt = (size_t)sqlite3_column_int64(st, OCB_RESULT_NCOLS + 1);
	sqlite3_finalize(st);
	st = NULL;
	if (!r.params_json || (nsamp && !(r.samples = malloc(nsamp * sizeof *r.samples))) ||
	    (ncnt && !(r.counters = calloc(ncnt, sizeof *r.counters)))) {
		rc = ocb_seterr(OCB_ENOMEM, "%s: result %lld", ocb_store_path(s),
				(long long)result_id);
		goto out;
	}

	if (sqlite3_prepare_v2(db, "SELECT value, cpu_s FROM sample WHERE result_id = ?1 ORDER BY rep",
			       -1, &st, NULL) != SQLITE_OK) {
		rc = qerr(s, "load samples");
		goto out;
	}
	sqlite3_bind_int64(st, 1, result_id);
	cap = nsamp;
	int all_cpu = 1;
	while (r.nsamples < cap && (step = sqlite3_step(st)) == SQLITE_ROW) {
		double cpu = ocb_col_real(st, 1);
		if (isnan(cpu))
			all_cpu = 0;
		if (all_cpu && !r.cpu_samples && !(r.cpu_samples = malloc(cap * sizeof *r.cpu_samples))) {
			rc = ocb_seterr(OCB_ENOMEM, "%s: result %lld", ocb_store_path(s),
					(long long)result_id);
			goto out;
		}
		if (all_cpu)
			r.cpu_samples[r.nsamples] = cpu;
		r.samples[r.nsamples++] = sqlite3_column_double(st, 0);
	}
	if (!all_cpu) { /* CPU time for some samples only: for none */
		free(r.cpu_samples);
		r.cpu_samples = NULL;
	}
	sqlite3_finalize(st);
	st = NULL;

	if (sqlite3_prepare_v2(db,
			       "SELECT event, value, available, reason, multiplex_ratio FROM counter"
			       " WHERE result_id = ?1 ORDER BY event",
			       -1, &st, NULL) != SQLITE_OK) {
		rc = qerr(s, "load counters");
		goto out;
	}
	sqlite3_bind_int64(st, 1, result_id);
	cap = ncnt;
	while (r.ncounters < cap && (step = sqlite3_step(st)) == SQLITE_ROW) {
		struct ocb_counter_val *c = &r.counters[r.ncounters++];
		ocb_col_text(c->event, sizeof c->event, st, 0);
		c->value = ocb_col_real(st, 1);
		c->available = sqlite3_column_int(st, 2);
		ocb_col_text(c->reason, sizeof c->reason, st, 3);
		c->multiplex_ratio = ocb_col_real(st, 4);
	}
out:
	sqlite3_finalize(st);
	if (rc != OCB_OK) {
		ocb_result_release(&r);
		return rc;
	}
	*out = r;
	return OCB_OK;
}

void ocb_run_from_row(sqlite3_stmt *st, struct ocb_run *out)
{
	memset(out, 0, sizeof *out);
	out->quick = -1;
	out->id = sqlite3_column_int64(st, 0);
	out->machine_id = sqlite3_column_int64(st, 1);
	out->pid = sqlite3_column_int64(st, 2);
	ocb_col_text(out->uuid, sizeof out->uuid, st, 3);
	ocb_col_text(out->suite, sizeof out->suite, st, 4);
	ocb_col_text(out->label, sizeof out->label, st, 5);
	ocb_col_text(out->status, sizeof out->status, st, 6);
	ocb_col_text(out->hostname, sizeof out->hostname, st, 7);
	ocb_col_text(out->boot_id, sizeof out->boot_id, st, 8);
	ocb_col_text(out->started_at, sizeof out->started_at, st, 9);
	ocb_col_text(out->finished_at, sizeof out->finished_at, st, 10);
	ocb_col_text(out->ocbench_version, sizeof out->ocbench_version, st, 11);
	ocb_col_text(out->git_sha, sizeof out->git_sha, st, 12);
	const unsigned char *cfg = sqlite3_column_text(st, 13);
	/* "quick" of config_json without parsing it all when absent */
	cJSON *c = cfg && strstr((const char *)cfg, "\"quick\"") ? cJSON_Parse((const char *)cfg)
								  : NULL;
	const cJSON *q = cJSON_GetObjectItemCaseSensitive(c, "quick");
	if (cJSON_IsBool(q))
		out->quick = cJSON_IsTrue(q);
	cJSON_Delete(c);
	ocb_col_text(out->machine_host, sizeof out->machine_host, st, 14);
	ocb_col_text(out->cpu_model, sizeof out->cpu_model, st, 15);
	ocb_col_text(out->fingerprint, sizeof out->fingerprint, st, 16);
	snprintf(out->shown, sizeof out->shown, "%s",
		 ocb_live_status(out->status, out->pid, out->hostname, out->boot_id,
				 out->started_at));
}

int ocb_run_load(struct ocb_store *s, int64_t run_id, struct ocb_run *out)
{
	sqlite3 *db = ocb_store_handle(s);
	sqlite3_stmt *st = NULL;
	int rc = OCB_OK;
	memset(out, 0, sizeof *out);
	out->quick = -1;
	if (sqlite3_prepare_v2(db, OCB_RUN_SELECT " WHERE r.id = ?1", -1, &st, NULL) != SQLITE_OK)
		return ocb_seterr(OCB_EDB, "load run: %s", sqlite3_errmsg(db));
	sqlite3_bind_int64(st, 1, run_id);
	int step = sqlite3_step(st);
	if (step != SQLITE_ROW) {
		rc = step == SQLITE_DONE ? ocb_seterr(OCB_ENOENT, "no run %lld", (long long)run_id)
					 : ocb_seterr(OCB_EDB, "load run: %s", sqlite3_errmsg(db));
		goto out;
	}
	ocb_run_from_row(st, out);
out:
	sqlite3_finalize(st);
	return rc;
}

int64_t ocb_store_machine_find(struct ocb_store *s, const char *fingerprint)
{
	sqlite3_stmt *st = NULL;
	int64_t id = 0;
	if (sqlite3_prepare_v2(ocb_store_handle(s), "SELECT id FROM machine WHERE fingerprint = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, fingerprint, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}
