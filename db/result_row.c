/* result_row: result columns <-> struct ocb_result (result_row.h). */
#define _GNU_SOURCE /* strtok_r */
#include "result_row.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "column.h"

void ocb_result_cols_prefixed(const char *prefix, char *buf, size_t len)
{
	char cols[] = OCB_RESULT_COLS, *save = NULL;
	size_t o = 0;
	buf[0] = '\0';
	for (char *c = strtok_r(cols, ", ", &save); c && o < len; c = strtok_r(NULL, ", ", &save))
		o += (size_t)snprintf(buf + o, len - o, "%s%s%s", o ? ", " : "", prefix, c);
}

void ocb_result_row_params(int first, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	for (int i = 0; i < OCB_RESULT_NCOLS && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s?%d", i ? "," : "", first + i);
}

static void bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, v);
}

static void bind_opt_text(sqlite3_stmt *st, int i, const char *t)
{
	if (t && *t)
		sqlite3_bind_text(st, i, t, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_text(sqlite3_stmt *st, int i, const char *t)
{
	sqlite3_bind_text(st, i, t ? t : "", -1, SQLITE_TRANSIENT);
}

void ocb_result_row_bind(sqlite3_stmt *st, int p, const struct ocb_result *r)
{
	bind_text(st, p + 0, r->suite);
	bind_text(st, p + 1, r->bench);
	bind_text(st, p + 2, r->params_json ? r->params_json : "{}");
	bind_opt_text(st, p + 3, r->variant);
	sqlite3_bind_int(st, p + 4, r->threads);
	bind_text(st, p + 5, r->unit[0] ? r->unit : "s");
	sqlite3_bind_int64(st, p + 6, r->st.n);
	bind_real(st, p + 7, r->st.min);
	bind_real(st, p + 8, r->st.median);
	bind_real(st, p + 9, r->st.mean);
	bind_real(st, p + 10, r->st.stddev);
	bind_real(st, p + 11, r->st.mad);
	bind_real(st, p + 12, r->st.ci_low);
	bind_real(st, p + 13, r->st.ci_high);
	sqlite3_bind_int64(st, p + 14, r->st.outliers);
	bind_real(st, p + 15, r->flops);
	bind_real(st, p + 16, r->bytes);
	bind_real(st, p + 17, r->check_err);
	bind_opt_text(st, p + 18, r->bound);
	bind_real(st, p + 19, r->bound_frac);
	sqlite3_bind_int(st, p + 20, r->timing_only ? 1 : 0);
	bind_text(st, p + 21, r->status[0] ? r->status : "ok");
	bind_opt_text(st, p + 22, r->error);
	bind_opt_text(st, p + 23, r->suspect); /* "" -> NULL: not suspect */
}

int ocb_result_row_read(sqlite3_stmt *st, int c, struct ocb_result *r)
{
	memset(r, 0, sizeof *r);
	ocb_col_text(r->suite, sizeof r->suite, st, c + 0);
	ocb_col_text(r->bench, sizeof r->bench, st, c + 1);
	const unsigned char *pj = sqlite3_column_text(st, c + 2);
	ocb_col_text(r->variant, sizeof r->variant, st, c + 3);
	r->threads = sqlite3_column_int(st, c + 4);
	ocb_col_text(r->unit, sizeof r->unit, st, c + 5);
	r->st.n = (long)sqlite3_column_int64(st, c + 6);
	r->st.min = ocb_col_real(st, c + 7);
	r->st.median = ocb_col_real(st, c + 8);
	r->st.mean = ocb_col_real(st, c + 9);
	r->st.stddev = ocb_col_real(st, c + 10);
	r->st.mad = ocb_col_real(st, c + 11);
	r->st.ci_low = ocb_col_real(st, c + 12);
	r->st.ci_high = ocb_col_real(st, c + 13);
	r->st.outliers = (long)sqlite3_column_int64(st, c + 14);
	r->flops = ocb_col_real(st, c + 15);
	r->bytes = ocb_col_real(st, c + 16);
	r->check_err = ocb_col_real(st, c + 17);
	ocb_col_text(r->bound, sizeof r->bound, st, c + 18);
	r->bound_frac = ocb_col_real(st, c + 19);
	r->timing_only = sqlite3_column_int(st, c + 20);
	ocb_col_text(r->status, sizeof r->status, st, c + 21);
	ocb_col_text(r->error, sizeof r->error, st, c + 22);
	ocb_col_text(r->suspect, sizeof r->suspect, st, c + 23);
	if (!(r->params_json = strdup(pj ? (const char *)pj : "{}")))
		return ocb_seterr(OCB_ENOMEM, "result row");
	return OCB_OK;
}
