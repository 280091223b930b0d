/* store_ceiling: a machine's measured ceilings — stored with their trials, spread and
 * suspect flag, read back as the current value per (kind, threads). */
#include "store_core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_time.h"
#include "column.h"

int ocb_store_ceiling(struct ocb_store *s, int64_t machine_id, int64_t run_id,
		      const struct ocb_ceiling *c)
{
	char now[32];
	sqlite3_stmt *st;
	int rc = store_need_write(s);
	if (rc)
		return rc;
	if (!c || !c->kind[0] || !c->unit[0] || !isfinite(c->value))
		return ocb_seterr(OCB_EINVAL, "%s: ceiling without kind, unit or a finite value",
				  s->path);
	if (!(st = store_stmt(s, ST_CEILING_INS)))
		return store_status(s->db);
	sqlite3_bind_int64(st, 1, machine_id);
	if (run_id > 0)
		sqlite3_bind_int64(st, 2, run_id);
	else
		sqlite3_bind_null(st, 2);
	store_bind_text(st, 3, c->kind);
	sqlite3_bind_int(st, 4, c->threads);
	sqlite3_bind_double(st, 5, c->value);
	store_bind_text(st, 6, c->unit);
	store_bind_opt_text(st, 7, c->method);
	store_bind_text(st, 8, ocb_utc_now(now, sizeof now));
	if (c->trials > 0) { /* trials 0: not known (a hand-made or imported ceiling) */
		sqlite3_bind_int(st, 9, c->trials);
		store_bind_real(st, 10, c->spread);
	} else {
		sqlite3_bind_null(st, 9);
		sqlite3_bind_null(st, 10);
	}
	store_bind_opt_text(st, 11, c->suspect);
	return store_step_done(s, st, "insert ceiling");
}

int ocb_store_ceiling_drop_flagged(struct ocb_store *s, int64_t machine_id, const char *kind,
				   int threads)
{
	sqlite3_stmt *st;
	int rc = store_need_write(s);
	if (rc)
		return rc;
	if (!(st = store_stmt(s, ST_CEILING_DROP_FLAGGED)))
		return store_status(s->db);
	sqlite3_bind_int64(st, 1, machine_id);
	store_bind_text(st, 2, kind);
	sqlite3_bind_int(st, 3, threads);
	return store_step_done(s, st, "delete flagged ceiling");
}

/* Rows of ceiling statement `id` for machine_id into a malloc'd array. */
static int ceilings_read(struct ocb_store *s, enum stmt_id id, int64_t machine_id,
			 struct ocb_ceiling **out, size_t *n)
{
	struct ocb_ceiling *v = NULL;
	size_t len = 0, cap = 0;
	sqlite3_stmt *st;
	int rc = OCB_OK, step;

	*out = NULL;
	*n = 0;
	if (!s || !s->db)
		return ocb_seterr(OCB_EINVAL, "store: not open");
	if (!(st = store_stmt(s, id)))
		return store_status(s->db);
	sqlite3_bind_int64(st, 1, machine_id);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			size_t nc = cap ? 2 * cap : 16;
			struct ocb_ceiling *p = realloc(v, nc * sizeof *p);
			if (!p) {
				rc = ocb_seterr(OCB_ENOMEM, "%s: ceilings", s->path);
				goto out;
			}
			v = p;
			cap = nc;
		}
		struct ocb_ceiling *c = &v[len++];
		memset(c, 0, sizeof *c);
		ocb_col_text(c->kind, sizeof c->kind, st, 0);
		c->threads = sqlite3_column_int(st, 1);
		c->value = sqlite3_column_double(st, 2);
		ocb_col_text(c->unit, sizeof c->unit, st, 3);
		ocb_col_text(c->method, sizeof c->method, st, 4);
		c->trials = sqlite3_column_int(st, 5); /* NULL (an older row) -> 0, unknown */
		c->spread = ocb_col_real(st, 6);
		ocb_col_text(c->suspect, sizeof c->suspect, st, 7);
	}
	if (step != SQLITE_DONE)
		rc = store_err(s, "read ceilings");
out:
	sqlite3_reset(st);
	if (rc != OCB_OK) {
		free(v);
		return rc;
	}
	*out = v;
	*n = len;
	return OCB_OK;
}

int ocb_store_ceilings_get(struct ocb_store *s, int64_t machine_id, struct ocb_ceiling **out,
			   size_t *n)
{
	return ceilings_read(s, ST_CEILING_GET, machine_id, out, n);
}

int ocb_store_ceilings_flagged(struct ocb_store *s, int64_t machine_id,
			       struct ocb_ceiling **out, size_t *n)
{
	return ceilings_read(s, ST_CEILING_FLAGGED, machine_id, out, n);
}
