#define _GNU_SOURCE /* vasprintf */
#include "table.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "escape.h"

#define CELL(t, r, c) ((r) * (t)->ncols + (c))

int ocb_table_init(struct ocb_table *t, const char *id, const char *title, size_t ncols,
		   const char *const *cols)
{
	memset(t, 0, sizeof *t);
	if (!id || !*id || strlen(id) >= sizeof t->id || ncols == 0)
		return ocb_seterr(OCB_EINVAL, "table: bad id or no columns");
	for (const char *p = id; *p; p++)
		if (!(*p == '_' || *p == '-' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z')))
			return ocb_seterr(OCB_EINVAL, "table: id '%s' is not file-safe", id);
	strcpy(t->id, id);
	t->ncols = ncols;
	t->title = strdup(title ? title : "");
	t->cols = calloc(ncols, sizeof *t->cols);
	t->best = calloc(ncols, sizeof *t->best);
	if (!t->title || !t->cols || !t->best)
		goto nomem;
	for (size_t c = 0; c < ncols; c++)
		if (!(t->cols[c] = strdup(cols[c] ? cols[c] : "")))
			goto nomem;
	return OCB_OK;
nomem:
	ocb_table_release(t);
	return ocb_seterr(OCB_ENOMEM, "table %s", id);
}

void ocb_table_release(struct ocb_table *t)
{
	if (!t)
		return;
	for (size_t c = 0; t->cols && c < t->ncols; c++)
		free(t->cols[c]);
	for (size_t i = 0; t->text && i < t->nrows * t->ncols; i++)
		free(t->text[i]);
	free(t->cols);
	free(t->best);
	free(t->text);
	free(t->num);
	for (size_t c = 0; t->group && c < t->ncols; c++)
		free(t->group[c]);
	free(t->group);
	free(t->title);
	free(t->note);
	free(t->prov);
	memset(t, 0, sizeof *t);
}

int ocb_table_add_row(struct ocb_table *t, size_t *row)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		char **text = realloc(t->text, cap * t->ncols * sizeof *text);
		if (!text)
			return ocb_seterr(OCB_ENOMEM, "table %s: %zu rows", t->id, cap);
		t->text = text;
		double *num = realloc(t->num, cap * t->ncols * sizeof *num);
		if (!num)
			return ocb_seterr(OCB_ENOMEM, "table %s: %zu rows", t->id, cap);
		t->num = num;
		t->cap = cap;
	}
	for (size_t c = 0; c < t->ncols; c++) {
		t->text[CELL(t, t->nrows, c)] = NULL;
		t->num[CELL(t, t->nrows, c)] = NAN;
	}
	*row = t->nrows++;
	return OCB_OK;
}

int ocb_table_text(struct ocb_table *t, size_t row, size_t col, const char *s)
{
	if (row >= t->nrows || col >= t->ncols)
		return ocb_seterr(OCB_EINVAL, "table %s: no cell (%zu, %zu)", t->id, row, col);
	char *d = strdup(s ? s : "");
	if (!d)
		return ocb_seterr(OCB_ENOMEM, "table %s", t->id);
	free(t->text[CELL(t, row, col)]);
	t->text[CELL(t, row, col)] = d;
	return OCB_OK;
}

int ocb_table_printf(struct ocb_table *t, size_t row, size_t col, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return ocb_seterr(OCB_ENOMEM, "table %s", t->id);
	int rc = ocb_table_text(t, row, col, s);
	free(s);
	return rc;
}

int ocb_table_num(struct ocb_table *t, size_t row, size_t col, double v, const char *fmt)
{
	int rc = isnan(v) ? ocb_table_text(t, row, col, "")
			  : ocb_table_printf(t, row, col, fmt, v);
	if (rc == OCB_OK)
		t->num[CELL(t, row, col)] = v;
	return rc;
}

int ocb_table_set_note(struct ocb_table *t, const char *note)
{
	char *d = strdup(note ? note : "");
	if (!d)
		return ocb_seterr(OCB_ENOMEM, "table %s", t->id);
	free(t->note);
	t->note = d;
	return OCB_OK;
}

int ocb_table_set_prov(struct ocb_table *t, const char *prov)
{
	char *d = strdup(prov ? prov : "");
	if (!d)
		return ocb_seterr(OCB_ENOMEM, "table %s", t->id);
	free(t->prov);
	t->prov = d;
	return OCB_OK;
}

int ocb_table_set_group(struct ocb_table *t, size_t col, const char *group)
{
	if (col >= t->ncols)
		return ocb_seterr(OCB_EINVAL, "table %s: no column %zu", t->id, col);
	if (!t->group && !(t->group = calloc(t->ncols, sizeof *t->group)))
		return ocb_seterr(OCB_ENOMEM, "table %s", t->id);
	char *d = group ? strdup(group) : NULL;
	if (group && !d)
		return ocb_seterr(OCB_ENOMEM, "table %s", t->id);
	free(t->group[col]);
	t->group[col] = d;
	return OCB_OK;
}

int ocb_table_in_paper(const struct ocb_table *t)
{
	return t->form != OCB_FORM_LONG;
}

int ocb_table_in_long(const struct ocb_table *t)
{
	return t->form != OCB_FORM_PAPER;
}

/* Column c's group header, "" when none. */
static const char *group_of(const struct ocb_table *t, size_t c)
{
	return t->group && t->group[c] ? t->group[c] : "";
}

int ocb_table_is_best(const struct ocb_table *t, size_t row, size_t col)
{
	if (col >= t->ncols || row >= t->nrows || t->best[col] == OCB_BEST_NONE)
		return 0;
	double v = t->num[CELL(t, row, col)];
	if (isnan(v))
		return 0;
	size_t counted = 0;
	for (size_t r = 0; r < t->nrows; r++) {
		double w = t->num[CELL(t, r, col)];
		if (isnan(w))
			continue;
		counted++;
		if ((t->best[col] > 0 && w > v) || (t->best[col] < 0 && w < v))
			return 0;
	}
	return counted > 1; /* a lone number is not "best" of anything */
}

void ocb_table_best_values(const struct ocb_table *t, double *bv)
{
	for (size_t c = 0; c < t->ncols; c++) {
		size_t counted = 0;
		double b = NAN;
		for (size_t r = 0; r < t->nrows && t->best[c] != OCB_BEST_NONE; r++) {
			double w = t->num[CELL(t, r, c)];
			if (isnan(w))
				continue;
			counted++;
			if (isnan(b) || (t->best[c] > 0 && w > b) || (t->best[c] < 0 && w < b))
				b = w;
		}
		bv[c] = counted > 1 ? b : NAN;
	}
}

static const char *cell(const struct ocb_table *t, size_t r, size_t c)
{
	const char *s = t->text[CELL(t, r, c)];
	return s ? s : "";
}

static int col_numeric(const struct ocb_table *t, size_t c)
{
	for (size_t r = 0; r < t->nrows; r++)
		if (!isnan(t->num[CELL(t, r, c)]))
			return 1;
	return 0;
}

static int status(FILE *f)
{
	return ferror(f) ? ocb_seterr(OCB_EIO, "write failed") : OCB_OK;
}

int ocb_table_write_md(const struct ocb_table *t, FILE *f)
{
	fputs("### ", f);
	ocb_esc_md(f, t->title);
	fputs("\n\n", f);
	if (t->prov && *t->prov) {
		fputc('*', f);
		ocb_esc_md(f, t->prov);
		fputs("*\n\n", f);
	}
	fputc('|', f);
	for (size_t c = 0; c < t->ncols; c++) {
		fputc(' ', f);
		if (*group_of(t, c)) {
			ocb_esc_md(f, group_of(t, c));
			fputc(' ', f);
		}
		ocb_esc_md(f, t->cols[c]);
		fputs(" |", f);
	}
	fputs("\n|", f);
	for (size_t c = 0; c < t->ncols; c++)
		fputs(col_numeric(t, c) ? "---:|" : "---|", f);
	fputc('\n', f);
	double *bv = calloc(t->ncols, sizeof *bv);
	if (!bv)
		return ocb_seterr(OCB_ENOMEM, "table %s", t->id);
	ocb_table_best_values(t, bv);
	for (size_t r = 0; r < t->nrows; r++) {
		fputc('|', f);
		for (size_t c = 0; c < t->ncols; c++) {
			int b = !isnan(bv[c]) && t->num[CELL(t, r, c)] == bv[c];
			fputs(b ? " **" : " ", f);
			ocb_esc_md(f, cell(t, r, c));
			fputs(b ? "** |" : " |", f);
		}
		fputc('\n', f);
	}
	free(bv);
	if (t->note && *t->note) {
		fputs("\n", f);
		ocb_esc_md(f, t->note);
		fputc('\n', f);
	}
	fputc('\n', f);
	return status(f);
}

int ocb_table_write_latex(const struct ocb_table *t, FILE *f)
{
	return ocb_table_write_latex_fit(t, f, 0, 0);
}

int ocb_table_write_csv(const struct ocb_table *t, FILE *f)
{
	for (size_t c = 0; c < t->ncols; c++) {
		if (c)
			fputc(',', f);
		ocb_esc_csv(f, t->cols[c]);
	}
	fputs("\r\n", f);
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			double v = t->num[CELL(t, r, c)];
			if (c)
				fputc(',', f);
			if (!isnan(v))
				fprintf(f, "%.17g", v);
			else
				ocb_esc_csv(f, cell(t, r, c));
		}
		fputs("\r\n", f);
	}
	return status(f);
}

int ocb_table_write_html(const struct ocb_table *t, FILE *f)
{
	fprintf(f, "<h3 id=\"%s\">", t->id);
	ocb_esc_html(f, t->title);
	fputs("</h3>\n<table>\n<thead><tr>", f);
	for (size_t c = 0; c < t->ncols; c++) {
		fputs("<th>", f);
		ocb_esc_html(f, t->cols[c]);
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs("<tr>", f);
		for (size_t c = 0; c < t->ncols; c++) {
			int b = ocb_table_is_best(t, r, c);
			fputs(isnan(t->num[CELL(t, r, c)]) ? "<td>" : "<td class=\"n\">", f);
			if (b)
				fputs("<b>", f);
			ocb_esc_html(f, cell(t, r, c));
			fputs(b ? "</b></td>" : "</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody>\n</table>\n", f);
	if (t->note && *t->note) {
		fputs("<p class=\"note\">", f);
		ocb_esc_html(f, t->note);
		fputs("</p>\n", f);
	}
	return status(f);
}

cJSON *ocb_table_json(const struct ocb_table *t)
{
	cJSON *o = cJSON_CreateObject(), *cols = NULL, *rows = NULL;
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "id", t->id);
	cJSON_AddStringToObject(o, "title", t->title ? t->title : "");
	if (t->note)
		cJSON_AddStringToObject(o, "note", t->note);
	if (t->prov)
		cJSON_AddStringToObject(o, "provenance", t->prov);
	cols = cJSON_AddArrayToObject(o, "columns");
	rows = cJSON_AddArrayToObject(o, "rows");
	if (!cols || !rows)
		goto fail;
	for (size_t c = 0; c < t->ncols; c++)
		if (!cJSON_AddItemToArray(cols, cJSON_CreateString(t->cols[c])))
			goto fail;
	for (size_t r = 0; r < t->nrows; r++) {
		cJSON *row = cJSON_CreateArray();
		if (!row || !cJSON_AddItemToArray(rows, row))
			goto fail;
		for (size_t c = 0; c < t->ncols; c++) {
			double v = t->num[CELL(t, r, c)];
			cJSON *e = !isnan(v) && isfinite(v) ? cJSON_CreateNumber(v)
							     : cJSON_CreateString(cell(t, r, c));
			if (!e || !cJSON_AddItemToArray(row, e))
				goto fail;
		}
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}
