/* store_write: machines, results (with their samples and counters, atomically),
 * metrics, workload identities, and groups of writes in one transaction. */
#include "store_core.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_time.h"
#include "result_row.h"

int ocb_store_machine(struct ocb_store *s, const struct ocb_machine *m, int64_t *id)
{
	char now[32];
	sqlite3_stmt *st;
	int rc = store_need_write(s);
	if (rc)
		return rc;
	if (!m || !m->fingerprint[0])
		return ocb_seterr(OCB_EINVAL, "%s: machine without fingerprint", s->path);
	if (!(st = store_stmt(s, ST_MACHINE_INS)))
		return store_status(s->db);
	store_bind_text(st, 1, m->fingerprint);
	store_bind_text(st, 2, m->hostname);
	store_bind_text(st, 3, m->cpu_model);
	store_bind_text(st, 4, m->isa);
	sqlite3_bind_int(st, 5, m->cores);
	sqlite3_bind_int(st, 6, m->threads);
	sqlite3_bind_int64(st, 7, m->l1d_bytes);
	sqlite3_bind_int64(st, 8, m->l2_bytes);
	sqlite3_bind_int64(st, 9, m->l3_bytes);
	sqlite3_bind_int64(st, 10, m->mem_bytes);
	store_bind_text(st, 11, m->os);
	store_bind_text(st, 12, m->compiler);
	store_bind_text(st, 13, m->blas);
	store_bind_text(st, 14, m->papi_version);
	sqlite3_bind_int(st, 15, m->is_vm);
	store_bind_text(st, 16, ocb_utc_now(now, sizeof now));
	if ((rc = store_step_done(s, st, "insert machine")))
		return rc;
	if (!(st = store_stmt(s, ST_MACHINE_SEL)))
		return store_status(s->db);
	store_bind_text(st, 1, m->fingerprint);
	if (sqlite3_step(st) != SQLITE_ROW) {
		rc = store_err(s, "find machine");
		sqlite3_reset(st);
		return rc;
	}
	if (id)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return OCB_OK;
}

/* The rows of one result, inside whatever transaction the caller opened. */
static int insert_result(struct ocb_store *s, int64_t run_id, const struct ocb_result *r,
			 int64_t *result_id)
{
	sqlite3_stmt *st = store_stmt(s, ST_RESULT_INS);
	int rc;
	if (!st)
		return store_status(s->db);
	sqlite3_bind_int64(st, 1, run_id);
	ocb_result_row_bind(st, 2, r);
	if ((rc = store_step_done(s, st, "insert result")))
		return rc;
	int64_t rid = sqlite3_last_insert_rowid(s->db);

	for (size_t i = 0; i < r->nsamples; i++) {
		if (!(st = store_stmt(s, ST_SAMPLE_INS)))
			return store_status(s->db);
		sqlite3_bind_int64(st, 1, rid);
		sqlite3_bind_int64(st, 2, (int64_t)i);
		sqlite3_bind_double(st, 3, r->samples[i]);
		store_bind_real(st, 4, r->cpu_samples ? r->cpu_samples[i] : NAN);
		if ((rc = store_step_done(s, st, "insert sample")))
			return rc;
	}
	for (size_t i = 0; i < r->ncounters; i++) {
		const struct ocb_counter_val *c = &r->counters[i];
		if (!(st = store_stmt(s, ST_COUNTER_INS)))
			return store_status(s->db);
		sqlite3_bind_int64(st, 1, rid);
		store_bind_text(st, 2, c->event);
		if (c->available)
			store_bind_real(st, 3, c->value);
		else
			sqlite3_bind_null(st, 3); /* never 0 for "not counted" */
		sqlite3_bind_int(st, 4, c->available ? 1 : 0);
		store_bind_opt_text(st, 5, c->reason);
		store_bind_real(st, 6, c->multiplex_ratio);
		if ((rc = store_step_done(s, st, "insert counter")))
			return rc;
	}
	if (result_id)
		*result_id = rid;
	return OCB_OK;
}

int ocb_store_result(struct ocb_store *s, int64_t run_id, const struct ocb_result *r,
		     int64_t *result_id)
{
	int rc = store_need_write(s);
	if (rc)
		return rc;
	if (!r || !r->bench[0] || !r->suite[0])
		return ocb_seterr(OCB_EINVAL, "%s: result without bench or suite", s->path);
	if (r->nsamples && !r->samples)
		return ocb_seterr(OCB_EINVAL, "%s: %s: %zu samples but no array", s->path, r->bench,
				  r->nsamples);
	if (r->ncounters && !r->counters)
		return ocb_seterr(OCB_EINVAL, "%s: %s: %zu counters but no array", s->path,
				  r->bench, r->ncounters);
	for (size_t i = 0; i < r->nsamples; i++)
		if (isnan(r->samples[i]))
			return ocb_seterr(OCB_EINVAL, "%s: %s: sample %zu is NaN", s->path, r->bench,
					  i);
	/* Inside a group a savepoint keeps this result atomic without ending the group. */
	enum stmt_id open = s->in_group ? ST_SAVEPOINT : ST_BEGIN;
	if ((rc = store_exec_stmt(s, open, "begin result")))
		return rc;
	rc = insert_result(s, run_id, r, result_id);
	if (rc == OCB_OK) {
		rc = store_exec_stmt(s, s->in_group ? ST_RELEASE : ST_COMMIT, "commit result");
		if (rc == OCB_OK)
			return OCB_OK;
	}
	if (s->in_group) {
		store_exec_stmt(s, ST_ROLLBACK_TO, "roll back result");
		store_exec_stmt(s, ST_RELEASE, "roll back result");
	} else if (!sqlite3_get_autocommit(s->db)) {
		store_exec_stmt(s, ST_ROLLBACK, "roll back result");
	}
	return rc;
}

int ocb_store_metric(struct ocb_store *s, int64_t run_id, const char *workload, long step,
		     const char *key, double value, const char *unit)
{
	sqlite3_stmt *st;
	int rc = store_need_write(s);
	if (rc)
		return rc;
	if (!workload || !*workload || !key || !*key)
		return ocb_seterr(OCB_EINVAL, "%s: metric without workload or key", s->path);
	if (!(st = store_stmt(s, ST_METRIC_INS)))
		return store_status(s->db);
	sqlite3_bind_int64(st, 1, run_id);
	store_bind_text(st, 2, workload);
	if (step < 0)
		sqlite3_bind_null(st, 3);
	else
		sqlite3_bind_int64(st, 3, step);
	store_bind_text(st, 4, key);
	store_bind_real(st, 5, value);
	store_bind_opt_text(st, 6, unit);
	return store_step_done(s, st, "insert metric");
}

int ocb_store_workload_ident(struct ocb_store *s, int64_t run_id, const char *workload,
			     const char *ident_json)
{
	sqlite3_stmt *st;
	int rc = store_need_write(s);
	if (rc)
		return rc;
	if (!workload || !*workload || !ident_json || !*ident_json)
		return ocb_seterr(OCB_EINVAL, "%s: workload ident without name or JSON", s->path);
	if (!(st = store_stmt(s, ST_IDENT_INS)))
		return store_status(s->db);
	sqlite3_bind_int64(st, 1, run_id);
	store_bind_text(st, 2, workload);
	store_bind_text(st, 3, ident_json);
	return store_step_done(s, st, "insert workload ident");
}

int ocb_store_begin(struct ocb_store *s)
{
	int rc = store_need_write(s);
	if (rc)
		return rc;
	if (s->in_group)
		return ocb_seterr(OCB_EINVAL, "%s: ocb_store_begin inside a group (no nesting)",
				  s->path);
	if ((rc = store_exec_stmt(s, ST_BEGIN, "begin")))
		return rc;
	s->in_group = 1;
	return OCB_OK;
}

int ocb_store_commit(struct ocb_store *s)
{
	int rc = store_need_write(s);
	if (rc)
		return rc;
	if (!s->in_group)
		return ocb_seterr(OCB_EINVAL, "%s: ocb_store_commit without ocb_store_begin",
				  s->path);
	rc = store_exec_stmt(s, ST_COMMIT, "commit");
	if (rc != OCB_OK && !sqlite3_get_autocommit(s->db))
		store_exec_stmt(s, ST_ROLLBACK, "roll back");
	s->in_group = 0;
	return rc;
}

void ocb_store_rollback(struct ocb_store *s)
{
	if (!s || !s->db || !s->in_group)
		return;
	if (!sqlite3_get_autocommit(s->db))
		store_exec_stmt(s, ST_ROLLBACK, "roll back");
	s->in_group = 0;
}
