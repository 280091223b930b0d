/* run_dump: one run whole (run_dump.h). */
#include "run_dump.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "column.h"
#include "result_row.h"
#include "run_live.h"
#include "store_int.h"

static int db_fail(sqlite3 *db, const char *what)
{
	return ocb_seterr(OCB_EDB, "export %s: %s", what, sqlite3_errmsg(db));
}

int ocb_db_latest_complete_run(struct ocb_store *s, int64_t *run_id)
{
	sqlite3 *db = ocb_store_handle(s);
	sqlite3_stmt *st = NULL;
	int rc;
	if (sqlite3_prepare_v2(db, "SELECT id FROM run WHERE status = 'complete'"
				   " ORDER BY started_at DESC, id DESC LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return ocb_seterr(OCB_EDB, "export: %s", sqlite3_errmsg(db));
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		*run_id = sqlite3_column_int64(st, 0);
		rc = OCB_OK;
	} else {
		rc = step == SQLITE_DONE ? ocb_seterr(OCB_ENOENT, "no complete run in the database")
					 : ocb_seterr(OCB_EDB, "export: %s", sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	return rc;
}

/* One row as an object of its columns (NULL -> null). */
static cJSON *row_object(sqlite3_stmt *st)
{
	cJSON *o = cJSON_CreateObject();
	for (int c = 0; o && c < sqlite3_column_count(st); c++) {
		const char *name = sqlite3_column_name(st, c);
		switch (sqlite3_column_type(st, c)) {
		case SQLITE_NULL: cJSON_AddNullToObject(o, name); break;
		case SQLITE_INTEGER:
		case SQLITE_FLOAT: cJSON_AddNumberToObject(o, name, sqlite3_column_double(st, c)); break;
		default: cJSON_AddStringToObject(o, name, (const char *)sqlite3_column_text(st, c));
		}
	}
	return o;
}

/* The index of the column named `name` in st's result, or -1. */
static int col_index(sqlite3_stmt *st, const char *name)
{
	for (int c = 0; c < sqlite3_column_count(st); c++)
		if (!strcmp(sqlite3_column_name(st, c), name))
			return c;
	return -1;
}

/* The run_context metrics (collect/runner.c): load averages and MHz at run start. */
static int load_context(sqlite3 *db, struct ocb_run_dump *d)
{
	sqlite3_stmt *st = NULL;
	int s;
	d->load[0] = d->load[1] = d->load[2] = d->mhz = NAN;
	if (sqlite3_prepare_v2(db, "SELECT key, value FROM metric WHERE run_id = ?"
				   " AND workload = 'run_context' AND step IS NULL ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, "run context");
	sqlite3_bind_int64(st, 1, d->run_id);
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		double v = ocb_col_real(st, 1);
		if (!k)
			continue;
		if (!strcmp(k, "load_avg_1m"))
			d->load[0] = v;
		else if (!strcmp(k, "load_avg_5m"))
			d->load[1] = v;
		else if (!strcmp(k, "load_avg_15m"))
			d->load[2] = v;
		else if (!strcmp(k, "cpu_mhz"))
			d->mhz = v;
	}
	sqlite3_finalize(st);
	return s == SQLITE_DONE ? OCB_OK : db_fail(db, "run context");
}

/* The run row (status as readers show it) and its machine row, as JSON. */
static int load_rows(sqlite3 *db, struct ocb_run_dump *d)
{
	sqlite3_stmt *st = NULL;
	int rc = OCB_OK, s;
	if (sqlite3_prepare_v2(db, "SELECT * FROM run WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, "run");
	sqlite3_bind_int64(st, 1, d->run_id);
	if ((s = sqlite3_step(st)) != SQLITE_ROW) {
		rc = s == SQLITE_DONE ? ocb_seterr(OCB_ENOENT, "export: no run %lld", (long long)d->run_id)
				      : db_fail(db, "run");
		goto out;
	}
	d->run = row_object(st);
	d->machine_id = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(d->run, "machine_id"));
	/* the status a reader shows: a 'running' run whose process is gone is aborted */
	const char *shown = ocb_live_status(
		(const char *)sqlite3_column_text(st, col_index(st, "status")),
		sqlite3_column_int64(st, col_index(st, "pid")),
		(const char *)sqlite3_column_text(st, col_index(st, "hostname")),
		(const char *)sqlite3_column_text(st, col_index(st, "boot_id")),
		(const char *)sqlite3_column_text(st, col_index(st, "started_at")));
	if (d->run && shown)
		cJSON_ReplaceItemInObject(d->run, "status", cJSON_CreateString(shown));
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT * FROM machine WHERE id = ?", -1, &st, NULL) != SQLITE_OK) {
		rc = db_fail(db, "machine");
		goto out;
	}
	sqlite3_bind_int64(st, 1, d->machine_id);
	if (sqlite3_step(st) == SQLITE_ROW)
		d->machine = row_object(st);
	else
		d->machine = cJSON_CreateObject();
	if (!d->run || !d->machine)
		rc = ocb_seterr(OCB_ENOMEM, "export");
out:
	sqlite3_finalize(st);
	return rc;
}

static int load_results(sqlite3 *db, struct ocb_run_dump *d)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc = OCB_OK, s;
	if (sqlite3_prepare_v2(db, "SELECT id, " OCB_RESULT_COLS " FROM result WHERE run_id = ?"
				   " ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, "results");
	sqlite3_bind_int64(st, 1, d->run_id);
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if (d->nres == cap) {
			cap = cap ? 2 * cap : 32;
			struct ocb_stored_result *nr = realloc(d->res, cap * sizeof *nr);
			if (!nr) {
				rc = ocb_seterr(OCB_ENOMEM, "export");
				goto out;
			}
			d->res = nr;
		}
		struct ocb_stored_result *e = &d->res[d->nres];
		e->id = sqlite3_column_int64(st, 0);
		rc = ocb_result_row_read(st, 1, &e->r);
		d->nres++;
		if (rc)
			goto out;
	}
	if (s != SQLITE_DONE)
		rc = db_fail(db, "results");
out:
	sqlite3_finalize(st);
	return rc;
}

/* The result of row `id` (results are in id order; *ri only moves forward), or NULL. */
static struct ocb_result *result_of(struct ocb_run_dump *d, int64_t id, size_t *ri)
{
	while (*ri < d->nres && d->res[*ri].id < id)
		(*ri)++;
	return *ri < d->nres && d->res[*ri].id == id ? &d->res[*ri].r : NULL;
}

/* samples of all results, in (result, rep) order; cpu_samples kept only when every
 * sample of the result has one */
static int load_samples(sqlite3 *db, struct ocb_run_dump *d)
{
	sqlite3_stmt *st = NULL;
	size_t ri = 0;
	int rc = OCB_OK, s;
	if (sqlite3_prepare_v2(db,
			       "SELECT s.result_id, s.value, s.cpu_s,"
			       " (SELECT count(*) FROM sample t WHERE t.result_id = s.result_id)"
			       " FROM sample s JOIN result r ON r.id = s.result_id"
			       " WHERE r.run_id = ? ORDER BY s.result_id, s.rep",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, "samples");
	sqlite3_bind_int64(st, 1, d->run_id);
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		struct ocb_result *r = result_of(d, sqlite3_column_int64(st, 0), &ri);
		if (!r)
			continue;
		if (!r->samples) {
			size_t n = (size_t)sqlite3_column_int64(st, 3);
			r->samples = malloc((n + 1) * sizeof *r->samples);
			r->cpu_samples = malloc((n + 1) * sizeof *r->cpu_samples);
			if (!r->samples || !r->cpu_samples) {
				rc = ocb_seterr(OCB_ENOMEM, "export");
				goto out;
			}
		}
		r->cpu_samples[r->nsamples] = ocb_col_real(st, 2);
		r->samples[r->nsamples++] = sqlite3_column_double(st, 1);
	}
	if (s != SQLITE_DONE)
		rc = db_fail(db, "samples");
	for (size_t i = 0; i < d->nres; i++) {
		struct ocb_result *r = &d->res[i].r;
		int all = r->nsamples > 0;
		for (size_t k = 0; k < r->nsamples && all; k++)
			all = !isnan(r->cpu_samples[k]);
		if (!all) {
			free(r->cpu_samples);
			r->cpu_samples = NULL;
		}
	}
out:
	sqlite3_finalize(st);
	return rc;
}

static int load_counters(sqlite3 *db, struct ocb_run_dump *d)
{
	sqlite3_stmt *st = NULL;
	size_t ri = 0;
	int rc = OCB_OK, s;
	if (sqlite3_prepare_v2(db,
			       "SELECT c.result_id, c.event, c.value, c.available, c.reason,"
			       " c.multiplex_ratio FROM counter c JOIN result r ON r.id = c.result_id"
			       " WHERE r.run_id = ? ORDER BY c.result_id, c.event",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, "counters");
	sqlite3_bind_int64(st, 1, d->run_id);
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		struct ocb_result *r = result_of(d, sqlite3_column_int64(st, 0), &ri);
		if (!r)
			continue;
		struct ocb_counter_val *nc = realloc(r->counters, (r->ncounters + 1) * sizeof *nc);
		if (!nc) {
			rc = ocb_seterr(OCB_ENOMEM, "export");
			goto out;
		}
		r->counters = nc;
		struct ocb_counter_val *c = &r->counters[r->ncounters++];
		memset(c, 0, sizeof *c);
		ocb_col_text(c->event, sizeof c->event, st, 1);
		c->value = ocb_col_real(st, 2);
		c->available = sqlite3_column_int(st, 3);
		ocb_col_text(c->reason, sizeof c->reason, st, 4);
		c->multiplex_ratio = ocb_col_real(st, 5);
	}
	if (s != SQLITE_DONE)
		rc = db_fail(db, "counters");
out:
	sqlite3_finalize(st);
	return rc;
}

void ocb_run_dump_release(struct ocb_run_dump *d)
{
	if (!d)
		return;
	cJSON_Delete(d->run);
	cJSON_Delete(d->machine);
	for (size_t i = 0; i < d->nres; i++)
		ocb_result_release(&d->res[i].r);
	free(d->res);
	memset(d, 0, sizeof *d);
}

int ocb_db_run_dump(struct ocb_store *s, int64_t run_id, struct ocb_run_dump *out)
{
	sqlite3 *db = ocb_store_handle(s);
	int rc;
	memset(out, 0, sizeof *out);
	out->run_id = run_id;
	if ((rc = load_rows(db, out)) || (rc = load_results(db, out)) ||
	    (rc = load_samples(db, out)) || (rc = load_counters(db, out)) ||
	    (rc = load_context(db, out)))
		ocb_run_dump_release(out);
	return rc;
}

int ocb_db_run_metrics_json(struct ocb_store *s, int64_t run_id, cJSON *arr)
{
	sqlite3 *db = ocb_store_handle(s);
	sqlite3_stmt *st = NULL;
	int step;
	if (sqlite3_prepare_v2(db, "SELECT workload, step, key, value, unit FROM metric WHERE run_id = ?"
				   " ORDER BY workload, key, step, id",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, "metrics");
	sqlite3_bind_int64(st, 1, run_id);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		cJSON *o = row_object(st);
		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			sqlite3_finalize(st);
			return ocb_seterr(OCB_ENOMEM, "export");
		}
	}
	sqlite3_finalize(st);
	return step == SQLITE_DONE ? OCB_OK : db_fail(db, "metrics");
}
