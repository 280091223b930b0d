/* select: the report's reads over a selection of runs (select.h). */
#define _GNU_SOURCE /* asprintf */
#include "select.h"

#include <ctype.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "column.h"
#include "store_int.h"
#include "store_query.h"

static int db_err(sqlite3 *db, const char *what)
{
	return ocb_seterr(OCB_EDB, "%s: %s", what, sqlite3_errmsg(db));
}

int ocb_sel_machines(struct ocb_store *store, const char *specs, struct ocb_sel *sel)
{
	sqlite3 *db = ocb_store_handle(store);
	sqlite3_stmt *st = NULL;
	char *copy = NULL, *save = NULL;
	int rc = OCB_OK;

	sel->nmachines = 0;
	if (!specs || !*specs)
		return ocb_seterr(OCB_EINVAL, "--machine: empty machine list");
	if (!(copy = strdup(specs)))
		return ocb_seterr(OCB_ENOMEM, "--machine");
	/* hostname exact, fingerprint prefix (>= 4 chars), or the row id */
	if (sqlite3_prepare_v2(db,
			       "SELECT id FROM machine WHERE hostname = ?1"
			       " OR (length(?1) >= 4 AND substr(fingerprint, 1, length(?1)) = ?1)"
			       " OR CAST(id AS TEXT) = ?1 ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK) {
		rc = db_err(db, "resolve machine");
		goto out;
	}
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		if (!*tok)
			continue;
		size_t found = 0;
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, tok, -1, SQLITE_TRANSIENT);
		int s;
		while ((s = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(st, 0);
			int dup = 0;
			for (size_t i = 0; i < sel->nmachines; i++)
				dup |= sel->machine[i] == id;
			found++;
			if (dup)
				continue;
			if (sel->nmachines == OCB_SEL_MAX_MACHINES) {
				rc = ocb_seterr(OCB_EINVAL, "--machine: more than %d machines",
						OCB_SEL_MAX_MACHINES);
				goto out;
			}
			sel->machine[sel->nmachines++] = id;
		}
		if (s != SQLITE_DONE) {
			rc = db_err(db, "resolve machine");
			goto out;
		}
		if (!found) {
			rc = ocb_seterr(OCB_ENOENT, "no machine '%s' in the database (see 'ocbench machines')",
					tok);
			goto out;
		}
	}
	if (!sel->nmachines)
		rc = ocb_seterr(OCB_EINVAL, "--machine: empty machine list");
out:
	sqlite3_finalize(st);
	free(copy);
	return rc;
}

static int sel_cte(const struct ocb_sel *sel, char *buf, size_t len)
{
	char mfilter[16 * 24 + 64] = "";
	int n;
	if (sel->mode == OCB_SEL_EACH && sel->nmachines) {
		size_t off = (size_t)snprintf(mfilter, sizeof mfilter, " AND r.machine_id IN (");
		for (size_t i = 0; i < sel->nmachines; i++)
			off += (size_t)snprintf(mfilter + off, sizeof mfilter - off, "%s%lld",
						i ? "," : "", (long long)sel->machine[i]);
		snprintf(mfilter + off, sizeof mfilter - off, ")");
	}
	switch (sel->mode) {
	case OCB_SEL_RUN:
		n = snprintf(buf, len,
			     "WITH sel(suite, run_id) AS (SELECT DISTINCT suite, run_id FROM result"
			     " WHERE run_id = %lld),"
			     " msel(workload, run_id) AS (SELECT DISTINCT workload, run_id FROM metric"
			     " WHERE run_id = %lld AND workload != 'run_context') ",
			     (long long)sel->run_id, (long long)sel->run_id);
		break;
	case OCB_SEL_LATEST:
		n = snprintf(buf, len,
			     "WITH lr(id) AS (SELECT id FROM run WHERE status = 'complete'"
			     " ORDER BY started_at DESC, id DESC LIMIT 1),"
			     " sel(suite, run_id) AS (SELECT DISTINCT suite, run_id FROM result"
			     " WHERE run_id = (SELECT id FROM lr)),"
			     " msel(workload, run_id) AS (SELECT DISTINCT workload, run_id FROM metric"
			     " WHERE run_id = (SELECT id FROM lr) AND workload != 'run_context') ");
		break;
	default:
		/* Newest complete run per suite (per machine when machines are named). */
		n = snprintf(buf, len,
			     "WITH sel(suite, run_id) AS (SELECT suite, run_id FROM ("
			     "SELECT x.suite, x.run_id, ROW_NUMBER() OVER (PARTITION BY %sx.suite"
			     " ORDER BY r.started_at DESC, r.id DESC) AS rn"
			     " FROM (SELECT DISTINCT suite, run_id FROM result) x"
			     " JOIN run r ON r.id = x.run_id WHERE r.status = 'complete'%s)"
			     " WHERE rn = 1),"
			     " msel(workload, run_id) AS (SELECT workload, run_id FROM ("
			     "SELECT x.workload, x.run_id, ROW_NUMBER() OVER (PARTITION BY %sx.workload"
			     " ORDER BY r.started_at DESC, r.id DESC) AS rn"
			     " FROM (SELECT DISTINCT workload, run_id FROM metric"
			     " WHERE workload != 'run_context') x"
			     " JOIN run r ON r.id = x.run_id WHERE r.status = 'complete'%s)"
			     " WHERE rn = 1) ",
			     sel->nmachines ? "r.machine_id, " : "", mfilter,
			     sel->nmachines ? "r.machine_id, " : "", mfilter);
	}
	if (n < 0 || (size_t)n >= len)
		return ocb_seterr(OCB_EINVAL, "selection: query too long");
	return OCB_OK;
}

void ocb_rrow_of_result(const struct ocb_result *r, int64_t id, struct ocb_rrow *out)
{
	memset(out, 0, sizeof *out);
	out->id = id;
	snprintf(out->suite, sizeof out->suite, "%s", r->suite);
	snprintf(out->bench, sizeof out->bench, "%s", r->bench);
	snprintf(out->variant, sizeof out->variant, "%s", r->variant);
	snprintf(out->unit, sizeof out->unit, "%s", r->unit);
	snprintf(out->bound, sizeof out->bound, "%s", r->bound);
	out->params = r->params_json;
	out->threads = r->threads;
	out->n = r->st.n;
	out->median = r->st.median;
	out->ci_low = r->st.ci_low;
	out->ci_high = r->st.ci_high;
	out->flops = r->flops;
	out->bytes = r->bytes;
	out->bound_frac = r->bound_frac;
	snprintf(out->status, sizeof out->status, "%s", r->status);
	snprintf(out->suspect, sizeof out->suspect, "%s", r->suspect);
}

void ocb_rset_release(struct ocb_rset *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++)
		free(rs->r[i].params);
	free(rs->r);
	rs->r = NULL;
	rs->n = 0;
}

int ocb_rset_load(struct ocb_store *store, const struct ocb_sel *sel, int ok_only, struct ocb_rset *out)
{
	sqlite3 *db = ocb_store_handle(store);
	char cte[2048], *sql = NULL;
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc, s;

	out->r = NULL;
	out->n = 0;
	if ((rc = sel_cte(sel, cte, sizeof cte)))
		return rc;
	if (asprintf(&sql,
		     "%s SELECT res.id, res.run_id, r.machine_id, res.suite, res.bench,"
		     " res.params_json, res.variant, res.threads, res.unit, res.n, res.median,"
		     " res.ci_low, res.ci_high, res.flops, res.bytes, res.bound, res.bound_frac,"
		     " res.status, m.hostname, res.suspect"
		     " FROM result res JOIN sel ON sel.run_id = res.run_id AND sel.suite = res.suite"
		     " JOIN run r ON r.id = res.run_id JOIN machine m ON m.id = r.machine_id"
		     " %s ORDER BY res.suite, res.bench, res.params_json COLLATE ocb_params, res.variant,"
		     " res.threads,"
		     " m.hostname, res.id",
		     cte, ok_only ? "WHERE res.status = 'ok'" : "") < 0) {
		sql = NULL;
		return ocb_seterr(OCB_ENOMEM, "report query");
	}
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = db_err(db, "load results");
		goto out;
	}
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if (out->n == cap) {
			size_t nc = cap ? 2 * cap : 64;
			struct ocb_rrow *nr = realloc(out->r, nc * sizeof *nr);
			if (!nr) {
				rc = ocb_seterr(OCB_ENOMEM, "load results: %zu rows", nc);
				goto out;
			}
			out->r = nr;
			cap = nc;
		}
		struct ocb_rrow *r = &out->r[out->n];
		memset(r, 0, sizeof *r);
		r->id = sqlite3_column_int64(st, 0);
		r->run_id = sqlite3_column_int64(st, 1);
		r->machine_id = sqlite3_column_int64(st, 2);
		ocb_col_text(r->suite, sizeof r->suite, st, 3);
		ocb_col_text(r->bench, sizeof r->bench, st, 4);
		const unsigned char *p = sqlite3_column_text(st, 5);
		if (!(r->params = strdup(p ? (const char *)p : ""))) {
			rc = ocb_seterr(OCB_ENOMEM, "load results");
			goto out;
		}
		out->n++;
		ocb_col_text(r->variant, sizeof r->variant, st, 6);
		r->threads = sqlite3_column_int(st, 7);
		ocb_col_text(r->unit, sizeof r->unit, st, 8);
		r->n = sqlite3_column_int(st, 9);
		r->median = ocb_col_real(st, 10);
		r->ci_low = ocb_col_real(st, 11);
		r->ci_high = ocb_col_real(st, 12);
		r->flops = ocb_col_real(st, 13);
		r->bytes = ocb_col_real(st, 14);
		ocb_col_text(r->bound, sizeof r->bound, st, 15);
		r->bound_frac = ocb_col_real(st, 16);
		ocb_col_text(r->status, sizeof r->status, st, 17);
		ocb_col_text(r->host, sizeof r->host, st, 18);
		ocb_col_text(r->suspect, sizeof r->suspect, st, 19);
	}
	if (s != SQLITE_DONE)
		rc = db_err(db, "load results");
out:
	if (rc)
		ocb_rset_release(out);
	sqlite3_finalize(st);
	free(sql);
	return rc;
}

void ocb_mceil_release(struct ocb_mceil *m)
{
	if (!m)
		return;
	free(m->c);
	free(m->view);
	m->c = NULL;
	m->view = NULL;
	m->n = 0;
}

const struct ocb_mceil *ocb_mceil_find(const struct ocb_mceil *m, size_t n, int64_t machine_id)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].machine_id == machine_id)
			return &m[i];
	return NULL;
}

int ocb_mceil_load(struct ocb_store *store, const int64_t *ids, size_t n, struct ocb_mceil *out)
{
	sqlite3 *db = ocb_store_handle(store);
	sqlite3_stmt *st = NULL;
	int rc = OCB_OK, s;

	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof out[i]);
		out[i].machine_id = ids[i];
	}
	if (n == 0)
		return OCB_OK;
	/* The current row per (machine, kind, threads) (store_int.h OCB_CEILING_RANKED, as
	 * ocb_store_ceilings_get); machines without ceilings still come back once (LEFT
	 * JOIN) for their names. */
	if (sqlite3_prepare_v2(db,
			       "SELECT m.id, m.hostname, m.cpu_model, c.kind, c.threads, c.value,"
			       " c.unit, c.method, m.l1d_bytes, m.l2_bytes, m.l3_bytes, m.cores,"
			       " m.threads, c.suspect FROM machine m LEFT JOIN " OCB_CEILING_RANKED " c"
			       " ON c.machine_id = m.id AND c.rn = 1"
			       " ORDER BY m.id, c.kind, c.threads",
			       -1, &st, NULL) != SQLITE_OK)
		return db_err(db, "load ceilings");
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		struct ocb_mceil *m = NULL;
		for (size_t i = 0; i < n && !m; i++)
			if (out[i].machine_id == id)
				m = &out[i];
		if (!m)
			continue;
		ocb_col_text(m->host, sizeof m->host, st, 1);
		ocb_col_text(m->cpu, sizeof m->cpu, st, 2);
		struct ocb_machine mr = {.l1d_bytes = sqlite3_column_int64(st, 8),
					 .l2_bytes = sqlite3_column_int64(st, 9),
					 .l3_bytes = sqlite3_column_int64(st, 10),
					 .cores = sqlite3_column_int(st, 11),
					 .threads = sqlite3_column_int(st, 12)};
		ocb_machine_caches(&mr, &m->caches);
		if (sqlite3_column_type(st, 3) == SQLITE_NULL)
			continue;
		struct ocb_ceiling *nc = realloc(m->c, (m->n + 1) * sizeof *nc);
		if (!nc) {
			rc = ocb_seterr(OCB_ENOMEM, "load ceilings");
			goto out;
		}
		m->c = nc;
		struct ocb_ceiling *c = &m->c[m->n++];
		memset(c, 0, sizeof *c);
		ocb_col_text(c->kind, sizeof c->kind, st, 3);
		c->threads = sqlite3_column_int(st, 4);
		c->value = sqlite3_column_double(st, 5);
		ocb_col_text(c->unit, sizeof c->unit, st, 6);
		ocb_col_text(c->method, sizeof c->method, st, 7);
		ocb_col_text(c->suspect, sizeof c->suspect, st, 13);
	}
	if (s != SQLITE_DONE)
		rc = db_err(db, "load ceilings");
	for (size_t i = 0; rc == OCB_OK && i < n; i++) {
		/* the measured last-level capacity re-levels stored results (analysis/predict) */
		out[i].caches.llc = ocb_ceiling_llc_bytes(out[i].c, out[i].n,
							  out[i].caches.l3);
		if (!out[i].n)
			continue;
		if (!(out[i].view = malloc(out[i].n * sizeof *out[i].view))) {
			rc = ocb_seterr(OCB_ENOMEM, "load ceilings");
			break;
		}
		ocb_ceiling_view(out[i].c, out[i].n, out[i].view);
	}
out:
	sqlite3_finalize(st);
	if (rc)
		for (size_t i = 0; i < n; i++)
			ocb_mceil_release(&out[i]);
	return rc;
}

/* The MLPerf section's runs: complete runs with a final training time, restricted like
 * the selection (one run, the latest, or the named machines). */
static void train_filter(const struct ocb_sel *sel, char *buf, size_t len)
{
	buf[0] = '\0';
	if (sel->mode == OCB_SEL_RUN) {
		snprintf(buf, len, " AND r.id = %lld", (long long)sel->run_id);
	} else if (sel->mode == OCB_SEL_LATEST) {
		snprintf(buf, len, " AND r.id = (SELECT id FROM run WHERE status = 'complete'"
				   " ORDER BY started_at DESC, id DESC LIMIT 1)");
	} else if (sel->nmachines) {
		size_t o = (size_t)snprintf(buf, len, " AND r.machine_id IN (");
		for (size_t i = 0; i < sel->nmachines && o < len; i++)
			o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? "," : "",
					      (long long)sel->machine[i]);
		if (o < len)
			snprintf(buf + o, len - o, ")");
	}
}

/* Grows *arr (element size sz) to hold one more than n; OCB_ENOMEM naming what. */
static int grow(void *arr, size_t sz, size_t n, size_t *cap, size_t first, const char *what)
{
	void **p = arr;
	if (n < *cap)
		return OCB_OK;
	size_t nc = *cap ? 2 * *cap : first;
	void *np = realloc(*p, nc * sz);
	if (!np)
		return ocb_seterr(OCB_ENOMEM, "%s: %zu rows", what, nc);
	*p = np;
	*cap = nc;
	return OCB_OK;
}

/* Prepares sql (NULL: out of memory) on the store's connection. */
static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st, const char *what)
{
	if (!sql)
		return ocb_seterr(OCB_ENOMEM, "%s query", what);
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK)
		return db_err(db, what);
	return OCB_OK;
}

static char *sql_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *sql_printf(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

int ocb_sel_runs(struct ocb_store *store, const struct ocb_sel *sel, struct ocb_run **out,
		 size_t *n)
{
	sqlite3 *db = ocb_store_handle(store);
	char cte[2048], filter[512], *sql = NULL;
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc, s;
	*out = NULL;
	*n = 0;
	if ((rc = sel_cte(sel, cte, sizeof cte)))
		return rc;
	train_filter(sel, filter, sizeof filter);
	/* a run named by --run / --latest is covered even when it holds nothing */
	char named[64] = "";
	if (sel->mode == OCB_SEL_RUN)
		snprintf(named, sizeof named, " UNION SELECT %lld", (long long)sel->run_id);
	else if (sel->mode == OCB_SEL_LATEST)
		snprintf(named, sizeof named, " UNION SELECT id FROM lr");
	/* one statement for all of them (a report of 10,000 runs covers 10,000) */
	sql = sql_printf("%s " OCB_RUN_SELECT " WHERE r.id IN (SELECT run_id FROM sel"
			 " UNION SELECT run_id FROM msel%s"
			 " UNION SELECT mt.run_id FROM metric mt JOIN run r ON r.id = mt.run_id"
			 " WHERE r.status = 'complete' AND mt.step IS NULL AND mt.value IS NOT NULL"
			 " AND mt.key IN ('time_to_target', 'train_time')"
			 " AND mt.workload NOT LIKE 'quant\\_acc:%%' ESCAPE '\\'%s) ORDER BY r.id",
			 cte, named, filter);
	if ((rc = prepare(db, sql, &st, "covered runs")))
		goto out;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if ((rc = grow(out, sizeof **out, *n, &cap, 8, "covered runs")))
			goto out;
		ocb_run_from_row(st, &(*out)[(*n)++]);
	}
	if (s != SQLITE_DONE)
		rc = db_err(db, "covered runs");
out:
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	sqlite3_finalize(st);
	free(sql);
	return rc;
}

static int cmp_counter(const void *a, const void *b)
{
	const struct ocb_sel_counter *x = a, *y = b;
	if (x->result_id != y->result_id)
		return x->result_id < y->result_id ? -1 : 1;
	return strcmp(x->event, y->event);
}

int ocb_sel_counters(struct ocb_store *store, const struct ocb_sel *sel,
		     struct ocb_sel_counter **out, size_t *n)
{
	sqlite3 *db = ocb_store_handle(store);
	char cte[2048], *sql = NULL;
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc, s;
	*out = NULL;
	*n = 0;
	if ((rc = sel_cte(sel, cte, sizeof cte)))
		return rc;
	sql = sql_printf("%s SELECT c.result_id, c.event, c.value, c.available FROM counter c"
			 " JOIN result res ON res.id = c.result_id"
			 " JOIN sel ON sel.run_id = res.run_id AND sel.suite = res.suite",
			 cte);
	if ((rc = prepare(db, sql, &st, "load counters")))
		goto out;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if ((rc = grow(out, sizeof **out, *n, &cap, 64, "load counters")))
			goto out;
		struct ocb_sel_counter *c = &(*out)[(*n)++];
		c->result_id = sqlite3_column_int64(st, 0);
		ocb_col_text(c->event, sizeof c->event, st, 1);
		c->available = sqlite3_column_int(st, 3) &&
			       sqlite3_column_type(st, 2) != SQLITE_NULL;
		c->value = c->available ? sqlite3_column_double(st, 2) : NAN;
	}
	if (s != SQLITE_DONE)
		rc = db_err(db, "load counters");
	else if (*n)
		qsort(*out, *n, sizeof **out, cmp_counter);
out:
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	sqlite3_finalize(st);
	free(sql);
	return rc;
}

void ocb_metric_set_release(struct ocb_metric_set *ms)
{
	if (!ms)
		return;
	for (size_t i = 0; i < ms->n; i++) {
		free(ms->r[i].workload);
		free(ms->r[i].key);
		free(ms->r[i].ident);
	}
	free(ms->r);
	ms->r = NULL;
	ms->n = 0;
}

/* The WHERE and ORDER BY of q (only fixed words and bound parameters ?1.. for the
 * strings, in the order workload, quant_kind, keys...) into buf. */
static int metric_clauses(const struct ocb_metric_query *q, char *buf, size_t len)
{
	static const char *order[] = {
		[OCB_MQ_BY_ID] = "mt.id",
		[OCB_MQ_BY_WL_KEY_STEP] = "mt.workload, mt.key, mt.step, mt.id",
		[OCB_MQ_BY_WL_KEY] = "mt.workload, mt.key, mt.id",
		[OCB_MQ_BY_KEY] = "mt.key, mt.id",
	};
	size_t o = (size_t)snprintf(buf, len, " WHERE 1");
	int p = 1;
	if (q->steps == OCB_MQ_STEPPED)
		o += (size_t)snprintf(buf + o, len - o, " AND mt.step IS NOT NULL");
	else if (q->steps == OCB_MQ_FINAL)
		o += (size_t)snprintf(buf + o, len - o, " AND mt.step IS NULL");
	if (q->value_present)
		o += (size_t)snprintf(buf + o, len - o, " AND mt.value IS NOT NULL");
	if (q->workload)
		o += (size_t)snprintf(buf + o, len - o, " AND mt.workload = ?%d", p++);
	if (q->quant == OCB_MQ_QUANT_NONE)
		o += (size_t)snprintf(buf + o, len - o,
				      " AND mt.workload NOT LIKE 'quant\\_acc:%%' ESCAPE '\\'");
	else if (q->quant == OCB_MQ_QUANT_ONLY)
		o += (size_t)snprintf(buf + o, len - o,
				      " AND (json_extract(wi.ident, '$.kind') = ?%d"
				      " OR mt.workload LIKE 'quant\\_acc:%%' ESCAPE '\\')", p++);
	if (q->keys) {
		o += (size_t)snprintf(buf + o, len - o, " AND mt.key IN (");
		for (size_t i = 0; q->keys[i] && o < len; i++)
			o += (size_t)snprintf(buf + o, len - o, "%s?%d", i ? ", " : "", p++);
		o += (size_t)snprintf(buf + o, len - o, ")");
	}
	if (o < len)
		o += (size_t)snprintf(buf + o, len - o, " ORDER BY %s", order[q->order]);
	return o < len ? OCB_OK : ocb_seterr(OCB_EINVAL, "metric query: too many keys");
}

static int metric_bind(sqlite3_stmt *st, const struct ocb_metric_query *q)
{
	int p = 1;
	if (q->workload)
		sqlite3_bind_text(st, p++, q->workload, -1, SQLITE_STATIC);
	if (q->quant == OCB_MQ_QUANT_ONLY)
		sqlite3_bind_text(st, p++, q->quant_kind ? q->quant_kind : "", -1, SQLITE_STATIC);
	for (size_t i = 0; q->keys && q->keys[i]; i++)
		sqlite3_bind_text(st, p++, q->keys[i], -1, SQLITE_STATIC);
	return OCB_OK;
}

static char *col_dup(sqlite3_stmt *st, int c, int null_ok)
{
	const unsigned char *t = sqlite3_column_text(st, c);
	if (!t && null_ok)
		return NULL;
	return strdup(t ? (const char *)t : "");
}

int ocb_sel_metrics(struct ocb_store *store, const struct ocb_sel *sel,
		    const struct ocb_metric_query *q, struct ocb_metric_set *out)
{
	sqlite3 *db = ocb_store_handle(store);
	char cte[2048], where[1024], *sql = NULL;
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc, s;
	out->r = NULL;
	out->n = 0;
	if ((rc = sel_cte(sel, cte, sizeof cte)) || (rc = metric_clauses(q, where, sizeof where)))
		return rc;
	sql = sql_printf("%s SELECT mt.id, mt.run_id, mt.workload, mt.key, mt.step, mt.value,"
			 " mt.unit, wi.ident FROM metric mt"
			 " JOIN msel ON msel.run_id = mt.run_id AND msel.workload = mt.workload"
			 " LEFT JOIN workload_ident wi ON wi.run_id = mt.run_id"
			 " AND wi.workload = mt.workload%s",
			 cte, where);
	if ((rc = prepare(db, sql, &st, "load metrics")))
		goto out;
	metric_bind(st, q);
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if ((rc = grow(&out->r, sizeof *out->r, out->n, &cap, 256, "load metrics")))
			goto out;
		struct ocb_metric_row *m = &out->r[out->n++];
		memset(m, 0, sizeof *m);
		m->id = sqlite3_column_int64(st, 0);
		m->run_id = sqlite3_column_int64(st, 1);
		m->workload = col_dup(st, 2, 0);
		m->key = col_dup(st, 3, 0);
		m->step = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : (long)sqlite3_column_int64(st, 4);
		m->value = ocb_col_real(st, 5);
		ocb_col_text(m->unit, sizeof m->unit, st, 6);
		m->ident = col_dup(st, 7, 1);
		if (!m->workload || !m->key || (!m->ident && sqlite3_column_type(st, 7) != SQLITE_NULL)) {
			rc = ocb_seterr(OCB_ENOMEM, "load metrics");
			goto out;
		}
	}
	if (s != SQLITE_DONE)
		rc = db_err(db, "load metrics");
out:
	if (rc)
		ocb_metric_set_release(out);
	sqlite3_finalize(st);
	free(sql);
	return rc;
}

int ocb_sel_train_metrics(struct ocb_store *store, const struct ocb_sel *sel,
			  struct ocb_train_row **out, size_t *n)
{
	sqlite3 *db = ocb_store_handle(store);
	char filter[512], *sql = NULL;
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc = OCB_OK, s;
	*out = NULL;
	*n = 0;
	train_filter(sel, filter, sizeof filter);
	sql = sql_printf(
		"SELECT r.id, r.machine_id, m.hostname, m.cpu_model, m.cores, r.ocbench_version,"
		" CASE WHEN json_valid(r.config_json) THEN json_extract(r.config_json, '$.threads') END,"
		" CASE WHEN json_valid(r.config_json) THEN json_extract(r.config_json, '$.ranks') END,"
		" mt.workload, mt.key, mt.value"
		" FROM metric mt JOIN run r ON r.id = mt.run_id JOIN machine m ON m.id = r.machine_id"
		" WHERE r.status = 'complete' AND mt.step IS NULL AND mt.value IS NOT NULL"
		" AND mt.key IN ('time_to_target', 'train_time', 'samples_to_converge',"
		" 'train_samples', 'global_batch_size', 'threads', 'ranks')"
		" AND mt.workload NOT LIKE 'quant\\_acc:%%' ESCAPE '\\'%s"
		" ORDER BY r.id, mt.workload, mt.id",
		filter);
	if ((rc = prepare(db, sql, &st, "mlperf summary")))
		goto out;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if ((rc = grow(out, sizeof **out, *n, &cap, 64, "mlperf summary")))
			goto out;
		struct ocb_train_row *r = &(*out)[(*n)++];
		memset(r, 0, sizeof *r);
		r->run_id = sqlite3_column_int64(st, 0);
		r->machine_id = sqlite3_column_int64(st, 1);
		ocb_col_text(r->host, sizeof r->host, st, 2);
		ocb_col_text(r->cpu, sizeof r->cpu, st, 3);
		r->cores = sqlite3_column_int(st, 4);
		ocb_col_text(r->version, sizeof r->version, st, 5);
		r->cfg_threads = ocb_col_real(st, 6);
		r->cfg_ranks = ocb_col_real(st, 7);
		ocb_col_text(r->workload, sizeof r->workload, st, 8);
		ocb_col_text(r->key, sizeof r->key, st, 9);
		r->value = sqlite3_column_double(st, 10);
	}
	if (s != SQLITE_DONE)
		rc = db_err(db, "mlperf summary");
out:
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	sqlite3_finalize(st);
	free(sql);
	return rc;
}
