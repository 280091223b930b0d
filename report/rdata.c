#define _GNU_SOURCE /* asprintf */
#include "rdata.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../db/column.h"

static int db_err(sqlite3 *db, const char *what)
{
	return ocb_seterr(OCB_EDB, "%s: %s", what, sqlite3_errmsg(db));
}

int ocb_sel_machines(sqlite3 *db, const char *specs, struct ocb_sel *sel)
{
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

int ocb_sel_cte(const struct ocb_sel *sel, char *buf, size_t len)
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

int ocb_rset_load(sqlite3 *db, const struct ocb_sel *sel, int ok_only, struct ocb_rset *out)
{
	char cte[2048], *sql = NULL;
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc, s;

	out->r = NULL;
	out->n = 0;
	if ((rc = ocb_sel_cte(sel, cte, sizeof cte)))
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

int ocb_mceil_load(sqlite3 *db, const int64_t *ids, size_t n, struct ocb_mceil *out)
{
	sqlite3_stmt *st = NULL;
	int rc = OCB_OK, s;

	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof out[i]);
		out[i].machine_id = ids[i];
	}
	if (n == 0)
		return OCB_OK;
	/* Newest row per (machine, kind, threads) that is not flagged suspect, else the
	 * newest flagged one (as ocb_store_ceilings_get); machines without ceilings still
	 * come back once (LEFT JOIN) for their names. */
	if (sqlite3_prepare_v2(db,
			       "SELECT m.id, m.hostname, m.cpu_model, c.kind, c.threads, c.value,"
			       " c.unit, c.method FROM machine m LEFT JOIN ("
			       " SELECT *, ROW_NUMBER() OVER (PARTITION BY machine_id, kind, threads"
			       " ORDER BY suspect IS NOT NULL, created_at DESC, id DESC) AS rn"
			       " FROM ceiling) c"
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
	}
	if (s != SQLITE_DONE)
		rc = db_err(db, "load ceilings");
	for (size_t i = 0; rc == OCB_OK && i < n; i++) {
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

double ocb_unit_seconds(const char *unit)
{
	if (!unit || !*unit || strcmp(unit, "s") == 0)
		return 1;
	if (strcmp(unit, "ms") == 0)
		return 1e-3;
	if (strcmp(unit, "us") == 0)
		return 1e-6;
	if (strcmp(unit, "ns") == 0)
		return 1e-9;
	return 0;
}

double ocb_rrow_gflops(const struct ocb_rrow *r)
{
	double sec = ocb_unit_seconds(r->unit) * r->median;
	return sec > 0 && r->flops > 0 ? r->flops / sec / 1e9 : NAN;
}

double ocb_rrow_gbs(const struct ocb_rrow *r)
{
	double sec = ocb_unit_seconds(r->unit) * r->median;
	return sec > 0 && r->bytes > 0 ? r->bytes / sec / 1e9 : NAN;
}

double ocb_rrow_roof_frac(const struct ocb_rrow *r, const struct ocb_mceil *mc)
{
	if (!isnan(r->bound_frac))
		return r->bound_frac;
	if (!mc || !mc->n || !mc->view)
		return NAN;
	return ocb_roof_frac(mc->view, mc->n, r->bound, r->threads, r->flops, r->bytes,
			     ocb_unit_seconds(r->unit) * r->median);
}
