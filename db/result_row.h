/* result_row: the one place that lists the columns of table `result` (after id and
 * run_id) and converts a row <-> struct ocb_result (records.h). Internal to db/: the
 * store's insert, result loads, export's run loader and merge all use it. */
#ifndef OCB_RESULT_ROW_H
#define OCB_RESULT_ROW_H

#include <sqlite3.h>

#include "records.h"

/* The result columns, in codec order (OCB_RESULT_NCOLS of them). */
#define OCB_RESULT_COLS                                                                      \
	"suite, bench, params_json, variant, threads, unit, n, min, median, mean, stddev,"  \
	" mad, ci_low, ci_high, outliers, flops, bytes, check_err, bound, bound_frac,"     \
	" timing_only, status, error, suspect"
#define OCB_RESULT_NCOLS 24

/* OCB_RESULT_COLS with each column prefixed ("o." -> "o.suite, o.bench, ...") into buf. */
void ocb_result_cols_prefixed(const char *prefix, char *buf, size_t len);

/* "?2,?3,...,?25": the placeholders of the columns when the first is ?first. */
void ocb_result_row_params(int first, char *buf, size_t len);

/* Binds r's columns to parameters first .. first+OCB_RESULT_NCOLS-1 of st (NaN and ""
 * optional text as NULL; unit "" as "s", status "" as "ok", params NULL as "{}"). */
void ocb_result_row_bind(sqlite3_stmt *st, int first, const struct ocb_result *r);

/* Reads columns off .. off+OCB_RESULT_NCOLS-1 of st's current row into *r (zeroed
 * first; NULL reals -> NaN, NULL text -> ""). r->params_json is malloc'd (release with
 * ocb_result_release); samples and counters are not touched. OCB_OK or OCB_ENOMEM. */
int ocb_result_row_read(sqlite3_stmt *st, int off, struct ocb_result *r);

#endif
