/* rows: the answer of a listing query (runs, machines, one run's header, results and
 * metrics) as values read by column name, never by position: SQLite's own value model
 * (NULL, integer, real, text) without SQLite. A query that gains a column does not
 * move the others. Owned by the struct; ocb_rows_release() frees it. */
#ifndef OCB_ROWS_H
#define OCB_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

enum ocb_vtype { OCB_V_NULL = 0, OCB_V_INT, OCB_V_REAL, OCB_V_TEXT };

struct ocb_value {
	enum ocb_vtype type;
	int64_t i;      /* OCB_V_INT */
	double d;       /* OCB_V_REAL (and OCB_V_INT as a double) */
	char *t;        /* OCB_V_TEXT (owned); NULL otherwise */
};

struct ocb_rows {
	size_t ncol, nrow;
	char **name;             /* [ncol] column names (owned) */
	struct ocb_value *v;     /* [nrow * ncol], row-major */
};

/* Column index of `name`, or -1. */
int ocb_rows_col(const struct ocb_rows *r, const char *name);
/* The value of (row, column name); a missing column reads as NULL. Borrowed. */
const struct ocb_value *ocb_rows_get(const struct ocb_rows *r, size_t row, const char *name);
/* As text (NULL -> dflt; a number as SQLite would print it), as integer (NULL -> 0),
 * as real (NULL -> NaN). Text is borrowed or written into the row's scratch (valid
 * until the next call). */
const char *ocb_rows_text(const struct ocb_rows *r, size_t row, const char *name,
			  const char *dflt);
int64_t ocb_rows_int(const struct ocb_rows *r, size_t row, const char *name);
double ocb_rows_real(const struct ocb_rows *r, size_t row, const char *name);
int ocb_rows_is_null(const struct ocb_rows *r, size_t row, const char *name);
void ocb_rows_release(struct ocb_rows *r);

/* Listings. Each fills *out (release with ocb_rows_release); errors OCB_ENOMEM, OCB_EDB.
 * Column names are part of the CLI's --json contract. */

/* Runs newest first: id, uuid, started_at, finished_at, suite, label, status (as
 * readers show it), machine_id, hostname, results. suite: runs that included it (or
 * 'all'); machine: id, hostname or fingerprint prefix; NULL: any. */
int ocb_db_list_runs(struct ocb_store *s, const char *suite, const char *machine, long limit,
		     struct ocb_rows *out);
/* Machines by id: every machine column, and runs (how many). */
int ocb_db_list_machines(struct ocb_store *s, struct ocb_rows *out);
/* One run's header (0 or 1 row): id, uuid, suite, label, status (shown), started_at,
 * finished_at, ocbench_version, git_sha, seed, cmdline, config_json, machine_id,
 * hostname, cpu_model, fingerprint. */
int ocb_db_show_run(struct ocb_store *s, int64_t run_id, struct ocb_rows *out);
/* One run's results: id, the result columns (db/result_row.h), gflops and gbs (from
 * the work model when the unit is s and both are > 0, else NULL), ordered by suite,
 * bench, params, threads, variant, id. */
int ocb_db_show_results(struct ocb_store *s, int64_t run_id, struct ocb_rows *out);
/* The last value of each (workload, key) of a run: workload, key, value, unit, step,
 * points (how many values the key has). */
int ocb_db_show_metrics(struct ocb_store *s, int64_t run_id, struct ocb_rows *out);

#endif
