/* pairs: the reads behind compare and history (pairs.h). */
#include "pairs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "column.h"
#include "store_int.h"

static int db_err(sqlite3 *db, const char *what)
{
	return ocb_seterr(OCB_EDB, "%s: %s", what, sqlite3_errmsg(db));
}

int ocb_db_machine_latest_run(struct ocb_store *s, const char *spec, int64_t *run_id)
{
	sqlite3 *db = ocb_store_handle(s);
	sqlite3_stmt *st = NULL;
	int rc;
	if (sqlite3_prepare_v2(db,
			       "SELECT r.id FROM run r JOIN machine m ON m.id = r.machine_id"
			       " WHERE r.status = 'complete' AND (m.hostname = ?1 OR"
			       " (length(?1) >= 4 AND substr(m.fingerprint, 1, length(?1)) = ?1))"
			       " ORDER BY r.started_at DESC, r.id DESC LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return ocb_seterr(OCB_EDB, "resolve '%s': %s", spec, sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, spec, -1, SQLITE_TRANSIENT);
	int s2 = sqlite3_step(st);
	if (s2 == SQLITE_ROW) {
		*run_id = sqlite3_column_int64(st, 0);
		rc = OCB_OK;
	} else if (s2 == SQLITE_DONE) {
		rc = ocb_seterr(OCB_ENOENT,
				"'%s' is no run id, uuid, label, or machine with a complete run", spec);
	} else {
		rc = ocb_seterr(OCB_EDB, "resolve '%s': %s", spec, sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	return rc;
}

void ocb_case_rows_release(struct ocb_case_row *r, size_t n)
{
	for (size_t i = 0; r && i < n; i++)
		free(r[i].params);
	free(r);
}

static char *col_dup(sqlite3_stmt *st, int c)
{
	const unsigned char *t = sqlite3_column_text(st, c);
	return strdup(t ? (const char *)t : "");
}

int ocb_db_unpaired(struct ocb_store *s, int64_t a, int64_t b, struct ocb_case_row **out,
		    size_t *n)
{
	sqlite3 *db = ocb_store_handle(s);
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc = OCB_OK, s2;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db,
			       "SELECT r.bench, r.params_json, r.threads, r.variant, r.status"
			       " FROM result r WHERE r.run_id = ?1 AND NOT (r.status = 'ok' AND"
			       " EXISTS (SELECT 1 FROM result o WHERE o.run_id = ?2 AND o.status = 'ok'"
			       " AND o.bench = r.bench AND o.params_json = r.params_json"
			       " AND o.threads IS r.threads))"
			       " ORDER BY r.bench, r.params_json COLLATE ocb_params, r.threads, r.id",
			       -1, &st, NULL) != SQLITE_OK)
		return db_err(db, "compare");
	sqlite3_bind_int64(st, 1, a);
	sqlite3_bind_int64(st, 2, b);
	while ((s2 = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			struct ocb_case_row *no = realloc(*out, cap * sizeof *no);
			if (!no) {
				rc = ocb_seterr(OCB_ENOMEM, "compare");
				goto out;
			}
			*out = no;
		}
		struct ocb_case_row *o = &(*out)[*n];
		memset(o, 0, sizeof *o);
		ocb_col_text(o->bench, sizeof o->bench, st, 0);
		if (!(o->params = col_dup(st, 1))) {
			rc = ocb_seterr(OCB_ENOMEM, "compare");
			goto out;
		}
		(*n)++;
		o->threads = sqlite3_column_int(st, 2);
		ocb_col_text(o->variant, sizeof o->variant, st, 3);
		ocb_col_text(o->status, sizeof o->status, st, 4);
	}
	if (s2 != SQLITE_DONE)
		rc = db_err(db, "compare");
out:
	if (rc) {
		ocb_case_rows_release(*out, *n);
		*out = NULL;
		*n = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

void ocb_result_pairs_release(struct ocb_result_pair *p, size_t n)
{
	for (size_t i = 0; p && i < n; i++)
		free(p[i].b.params);
	free(p);
}

/* Columns off.. of the pair query: median, flops, bytes, bound, bound_frac, unit,
 * ci_low, ci_high, suspect, variant. */
static void fill_side(struct ocb_rrow *r, sqlite3_stmt *st, int off)
{
	r->median = ocb_col_real(st, off);
	r->flops = ocb_col_real(st, off + 1);
	r->bytes = ocb_col_real(st, off + 2);
	ocb_col_text(r->bound, sizeof r->bound, st, off + 3);
	r->bound_frac = ocb_col_real(st, off + 4);
	ocb_col_text(r->unit, sizeof r->unit, st, off + 5);
	r->ci_low = ocb_col_real(st, off + 6);
	r->ci_high = ocb_col_real(st, off + 7);
	ocb_col_text(r->suspect, sizeof r->suspect, st, off + 8);
	ocb_col_text(r->variant, sizeof r->variant, st, off + 9);
}

#define SIDE(x) " " x ".median, " x ".flops, " x ".bytes, " x ".bound, " x ".bound_frac, " \
	x ".unit, " x ".ci_low, " x ".ci_high, " x ".suspect, " x ".variant"

int ocb_db_result_pairs(struct ocb_store *s, int64_t base, int64_t cand,
			struct ocb_result_pair **out, size_t *n)
{
	sqlite3 *db = ocb_store_handle(s);
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc = OCB_OK, s2;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db,
			       "SELECT b.id, c.id, b.bench, b.params_json, b.threads," SIDE("b") ","
			       SIDE("c")
			       " FROM result b JOIN result c ON c.bench = b.bench"
			       " AND c.params_json = b.params_json AND c.threads IS b.threads"
			       " WHERE b.run_id = ?1 AND c.run_id = ?2 AND b.status = 'ok'"
			       " AND c.status = 'ok'"
			       " ORDER BY b.bench, b.params_json COLLATE ocb_params, b.threads, b.variant,"
			       " b.id, (c.variant IS b.variant) DESC, c.id",
			       -1, &st, NULL) != SQLITE_OK)
		return db_err(db, "compare");
	sqlite3_bind_int64(st, 1, base);
	sqlite3_bind_int64(st, 2, cand);
	while ((s2 = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 32;
			struct ocb_result_pair *np = realloc(*out, cap * sizeof *np);
			if (!np) {
				rc = ocb_seterr(OCB_ENOMEM, "compare");
				goto out;
			}
			*out = np;
		}
		struct ocb_result_pair *p = &(*out)[*n];
		memset(p, 0, sizeof *p);
		p->base_id = sqlite3_column_int64(st, 0);
		p->cand_id = sqlite3_column_int64(st, 1);
		if (!(p->b.params = col_dup(st, 3))) {
			rc = ocb_seterr(OCB_ENOMEM, "compare");
			goto out;
		}
		(*n)++;
		ocb_col_text(p->b.bench, sizeof p->b.bench, st, 2);
		memcpy(p->c.bench, p->b.bench, sizeof p->c.bench);
		p->b.threads = p->c.threads = sqlite3_column_int(st, 4);
		fill_side(&p->b, st, 5);
		fill_side(&p->c, st, 15);
	}
	if (s2 != SQLITE_DONE)
		rc = db_err(db, "compare");
out:
	if (rc) {
		ocb_result_pairs_release(*out, *n);
		*out = NULL;
		*n = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

int ocb_db_samples(struct ocb_store *s, int64_t result_id, double **buf, size_t *cap,
		   size_t *n)
{
	sqlite3 *db = ocb_store_handle(s);
	sqlite3_stmt *st = NULL;
	int rc = OCB_OK, s2;
	*n = 0;
	if (sqlite3_prepare_v2(db, "SELECT value FROM sample WHERE result_id = ? ORDER BY rep", -1,
			       &st, NULL) != SQLITE_OK)
		return db_err(db, "samples");
	sqlite3_bind_int64(st, 1, result_id);
	while ((s2 = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == *cap) {
			size_t nc = *cap ? 2 * *cap : 64;
			double *nb = realloc(*buf, nc * sizeof *nb);
			if (!nb) {
				rc = ocb_seterr(OCB_ENOMEM, "samples");
				goto out;
			}
			*buf = nb;
			*cap = nc;
		}
		(*buf)[(*n)++] = sqlite3_column_double(st, 0);
	}
	if (s2 != SQLITE_DONE)
		rc = db_err(db, "samples");
out:
	sqlite3_finalize(st);
	return rc;
}

int ocb_db_case_medians(struct ocb_store *s, int64_t machine, const char *bench,
			const char *params, int threads, const char *variant,
			int64_t exclude_run, double *v, int max, int *n)
{
	sqlite3 *db = ocb_store_handle(s);
	sqlite3_stmt *st = NULL;
	int s2 = SQLITE_DONE;
	*n = 0;
	if (sqlite3_prepare_v2(db,
			       "SELECT r.median FROM result r JOIN run u ON u.id = r.run_id"
			       " WHERE u.machine_id = ?1 AND u.status = 'complete' AND r.status = 'ok'"
			       " AND r.bench = ?2 AND r.params_json = ?3 AND r.threads IS ?4"
			       " AND r.variant IS ?5 AND r.run_id != ?6 AND r.median > 0"
			       " ORDER BY u.started_at DESC, u.id DESC LIMIT 64",
			       -1, &st, NULL) != SQLITE_OK)
		return db_err(db, "case history");
	sqlite3_bind_int64(st, 1, machine);
	sqlite3_bind_text(st, 2, bench, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, params, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 4, threads);
	sqlite3_bind_text(st, 5, variant, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, exclude_run);
	while (*n < max && (s2 = sqlite3_step(st)) == SQLITE_ROW)
		v[(*n)++] = sqlite3_column_double(st, 0);
	int rc = s2 == SQLITE_ROW || s2 == SQLITE_DONE ? OCB_OK : db_err(db, "case history");
	sqlite3_finalize(st);
	return rc;
}

void ocb_history_rows_release(struct ocb_history_row *r, size_t n)
{
	for (size_t i = 0; r && i < n; i++)
		free(r[i].params);
	free(r);
}

int ocb_db_history(struct ocb_store *s, const char *bench, const char *params,
		   const int64_t *machines, size_t nmachines, struct ocb_history_row **out,
		   size_t *n)
{
	sqlite3 *db = ocb_store_handle(s);
	char mfilter[512] = "", sql[1536];
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc = OCB_OK, s2;
	*out = NULL;
	*n = 0;
	if (nmachines) {
		size_t o = (size_t)snprintf(mfilter, sizeof mfilter, " AND r.machine_id IN (");
		for (size_t i = 0; i < nmachines && o < sizeof mfilter; i++)
			o += (size_t)snprintf(mfilter + o, sizeof mfilter - o, "%s%lld", i ? "," : "",
					      (long long)machines[i]);
		if (o < sizeof mfilter)
			snprintf(mfilter + o, sizeof mfilter - o, ")");
	}
	snprintf(sql, sizeof sql,
		 "SELECT res.params_json, res.variant, res.threads, r.machine_id, m.hostname,"
		 " res.unit, r.id, r.started_at, r.label, res.median, res.ci_low, res.ci_high"
		 " FROM result res JOIN run r ON r.id = res.run_id"
		 " JOIN machine m ON m.id = r.machine_id"
		 " WHERE res.bench = ?1 AND (?2 IS NULL OR res.params_json = ?2)"
		 " AND res.status = 'ok' AND r.status = 'complete'%s"
		 " ORDER BY res.params_json COLLATE ocb_params, res.variant, res.threads, r.machine_id,"
		 " r.started_at, r.id, res.id",
		 mfilter);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_err(db, "history");
	sqlite3_bind_text(st, 1, bench, -1, SQLITE_TRANSIENT);
	if (params)
		sqlite3_bind_text(st, 2, params, -1, SQLITE_TRANSIENT);
	while ((s2 = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			struct ocb_history_row *nr = realloc(*out, cap * sizeof *nr);
			if (!nr) {
				rc = ocb_seterr(OCB_ENOMEM, "history");
				goto out;
			}
			*out = nr;
		}
		struct ocb_history_row *h = &(*out)[*n];
		memset(h, 0, sizeof *h);
		if (!(h->params = col_dup(st, 0))) {
			rc = ocb_seterr(OCB_ENOMEM, "history");
			goto out;
		}
		(*n)++;
		ocb_col_text(h->variant, sizeof h->variant, st, 1);
		h->threads = sqlite3_column_int(st, 2);
		h->machine_id = sqlite3_column_int64(st, 3);
		ocb_col_text(h->host, sizeof h->host, st, 4);
		ocb_col_text(h->unit, sizeof h->unit, st, 5);
		h->run_id = sqlite3_column_int64(st, 6);
		ocb_col_text(h->started_at, sizeof h->started_at, st, 7);
		ocb_col_text(h->label, sizeof h->label, st, 8);
		h->median = ocb_col_real(st, 9);
		h->ci_low = ocb_col_real(st, 10);
		h->ci_high = ocb_col_real(st, 11);
	}
	if (s2 != SQLITE_DONE)
		rc = db_err(db, "history");
out:
	if (rc) {
		ocb_history_rows_release(*out, *n);
		*out = NULL;
		*n = 0;
	}
	sqlite3_finalize(st);
	return rc;
}
