/* rows: listing queries answered as named values (rows.h). */
#include "rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "result_row.h"
#include "store_int.h"

int ocb_rows_col(const struct ocb_rows *r, const char *name)
{
	for (size_t c = 0; c < r->ncol; c++)
		if (!strcmp(r->name[c], name))
			return (int)c;
	return -1;
}

static const struct ocb_value null_value = {OCB_V_NULL, 0, NAN, NULL};

const struct ocb_value *ocb_rows_get(const struct ocb_rows *r, size_t row, const char *name)
{
	int c = ocb_rows_col(r, name);
	if (c < 0 || row >= r->nrow)
		return &null_value;
	return &r->v[row * r->ncol + (size_t)c];
}

const char *ocb_rows_text(const struct ocb_rows *r, size_t row, const char *name,
			  const char *dflt)
{
	static char scratch[64];
	const struct ocb_value *v = ocb_rows_get(r, row, name);
	switch (v->type) {
	case OCB_V_TEXT: return v->t;
	case OCB_V_INT: snprintf(scratch, sizeof scratch, "%lld", (long long)v->i); return scratch;
	case OCB_V_REAL: snprintf(scratch, sizeof scratch, "%.15g", v->d); return scratch;
	default: return dflt;
	}
}

int64_t ocb_rows_int(const struct ocb_rows *r, size_t row, const char *name)
{
	const struct ocb_value *v = ocb_rows_get(r, row, name);
	return v->type == OCB_V_INT ? v->i : v->type == OCB_V_REAL ? (int64_t)v->d
			: v->type == OCB_V_TEXT ? strtoll(v->t, NULL, 10) : 0;
}

double ocb_rows_real(const struct ocb_rows *r, size_t row, const char *name)
{
	const struct ocb_value *v = ocb_rows_get(r, row, name);
	return v->type == OCB_V_NULL ? NAN : v->type == OCB_V_TEXT ? strtod(v->t, NULL) : v->d;
}

int ocb_rows_is_null(const struct ocb_rows *r, size_t row, const char *name)
{
	return ocb_rows_get(r, row, name)->type == OCB_V_NULL;
}

void ocb_rows_release(struct ocb_rows *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->v && i < r->nrow * r->ncol; i++)
		free(r->v[i].t);
	for (size_t c = 0; r->name && c < r->ncol; c++)
		free(r->name[c]);
	free(r->v);
	free(r->name);
	memset(r, 0, sizeof *r);
}

/* Reads the current row of st into the next row of out. */
static int take_row(sqlite3_stmt *st, struct ocb_rows *out, size_t *cap)
{
	if (out->nrow == *cap) {
		size_t nc = *cap ? 2 * *cap : 32;
		struct ocb_value *nv = realloc(out->v, nc * out->ncol * sizeof *nv);
		if (!nv)
			return ocb_seterr(OCB_ENOMEM, "out of memory");
		out->v = nv;
		*cap = nc;
	}
	struct ocb_value *row = &out->v[out->nrow * out->ncol];
	memset(row, 0, out->ncol * sizeof *row);
	out->nrow++;
	for (size_t c = 0; c < out->ncol; c++) {
		struct ocb_value *v = &row[c];
		switch (sqlite3_column_type(st, (int)c)) {
		case SQLITE_NULL: v->type = OCB_V_NULL; v->d = NAN; break;
		case SQLITE_INTEGER:
			v->type = OCB_V_INT;
			v->i = sqlite3_column_int64(st, (int)c);
			v->d = (double)v->i;
			break;
		case SQLITE_FLOAT: v->type = OCB_V_REAL; v->d = sqlite3_column_double(st, (int)c); break;
		default: {
			const unsigned char *t = sqlite3_column_text(st, (int)c);
			v->type = OCB_V_TEXT;
			if (!(v->t = strdup(t ? (const char *)t : "")))
				return ocb_seterr(OCB_ENOMEM, "out of memory");
		}
		}
	}
	return OCB_OK;
}

/* Runs sql (parameters bound by bind(st, arg)) and keeps every row. */
static int run_rows(struct ocb_store *s, const char *sql, void (*bind)(sqlite3_stmt *, const void *),
		    const void *arg, struct ocb_rows *out)
{
	sqlite3 *db = ocb_store_handle(s);
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc = OCB_OK, step;
	memset(out, 0, sizeof *out);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return ocb_seterr(OCB_EDB, "%s: %s", ocb_store_path(s), sqlite3_errmsg(db));
	if (bind)
		bind(st, arg);
	out->ncol = (size_t)sqlite3_column_count(st);
	if (!(out->name = calloc(out->ncol + 1, sizeof *out->name))) {
		rc = ocb_seterr(OCB_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t c = 0; c < out->ncol; c++)
		if (!(out->name[c] = strdup(sqlite3_column_name(st, (int)c)))) {
			rc = ocb_seterr(OCB_ENOMEM, "out of memory");
			goto out;
		}
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		if ((rc = take_row(st, out, &cap)))
			goto out;
	if (step != SQLITE_DONE)
		rc = ocb_seterr(OCB_EDB, "%s: %s", ocb_store_path(s), sqlite3_errmsg(db));
out:
	sqlite3_finalize(st);
	if (rc)
		ocb_rows_release(out);
	return rc;
}

struct runs_args {
	const char *suite, *machine;
	long limit;
};

static void bind_runs(sqlite3_stmt *st, const void *arg)
{
	const struct runs_args *a = arg;
	if (a->suite)
		sqlite3_bind_text(st, 1, a->suite, -1, SQLITE_STATIC);
	if (a->machine)
		sqlite3_bind_text(st, 2, a->machine, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, a->limit);
}

int ocb_db_list_runs(struct ocb_store *s, const char *suite, const char *machine, long limit,
		     struct ocb_rows *out)
{
	struct runs_args a = {suite, machine, limit};
	return run_rows(s,
			"SELECT r.id, r.uuid, r.started_at, r.finished_at, r.suite, r.label,"
			" ocb_status(r.status, r.pid, r.hostname, r.boot_id, r.started_at) AS status,"
			" r.machine_id, m.hostname, (SELECT count(*) FROM result WHERE run_id = r.id)"
			" AS results FROM run r LEFT JOIN machine m ON m.id = r.machine_id"
			" WHERE (?1 IS NULL OR instr(',' || r.suite || ',', ',' || ?1 || ',') > 0"
			"        OR r.suite = 'all')"
			" AND (?2 IS NULL OR CAST(m.id AS TEXT) = ?2 OR m.hostname = ?2"
			"      OR substr(m.fingerprint, 1, length(?2)) = lower(?2))"
			" ORDER BY r.started_at DESC, r.id DESC LIMIT ?3",
			bind_runs, &a, out);
}

int ocb_db_list_machines(struct ocb_store *s, struct ocb_rows *out)
{
	return run_rows(s,
			"SELECT m.*, (SELECT count(*) FROM run WHERE machine_id = m.id) AS runs"
			" FROM machine m ORDER BY m.id",
			NULL, NULL, out);
}

static void bind_id(sqlite3_stmt *st, const void *arg)
{
	sqlite3_bind_int64(st, 1, *(const int64_t *)arg);
}

int ocb_db_show_run(struct ocb_store *s, int64_t run_id, struct ocb_rows *out)
{
	return run_rows(s,
			"SELECT r.id, r.uuid, r.suite, r.label,"
			" ocb_status(r.status, r.pid, r.hostname, r.boot_id, r.started_at) AS status,"
			" r.started_at, r.finished_at,"
			" r.ocbench_version, r.git_sha, r.seed, r.cmdline, r.config_json, r.machine_id,"
			" m.hostname, m.cpu_model, m.fingerprint"
			" FROM run r LEFT JOIN machine m ON m.id = r.machine_id WHERE r.id = ?1",
			bind_id, &run_id, out);
}

int ocb_db_show_results(struct ocb_store *s, int64_t run_id, struct ocb_rows *out)
{
	return run_rows(s,
			"SELECT id, " OCB_RESULT_COLS ","
			/* no work model (NULL) or none of that kind (0: a copy does no flops, a
			 * trainer's bytes are not modelled): no rate */
			" CASE WHEN unit = 's' AND median > 0 AND flops > 0 THEN flops / median / 1e9"
			" END AS gflops,"
			" CASE WHEN unit = 's' AND median > 0 AND bytes > 0 THEN bytes / median / 1e9"
			" END AS gbs"
			" FROM result WHERE run_id = ?1"
			" ORDER BY suite, bench, params_json COLLATE ocb_params, threads, variant, id",
			bind_id, &run_id, out);
}

int ocb_db_show_metrics(struct ocb_store *s, int64_t run_id, struct ocb_rows *out)
{
	/* last value written of each (workload, key), with how many points the key has */
	return run_rows(s,
			"SELECT workload, key, value, unit, step, points FROM (SELECT *, row_number()"
			" OVER (PARTITION BY workload, key ORDER BY id DESC) AS rn, count(*) OVER"
			" (PARTITION BY workload, key) AS points FROM metric WHERE run_id = ?1)"
			" WHERE rn = 1 ORDER BY workload, key",
			bind_id, &run_id, out);
}
