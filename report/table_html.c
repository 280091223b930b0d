/* table_html: the HTML page's form of a report table (table.h): caption with provenance,
 * a filter box, a horizontal scroll container, column groups as a header row with
 * colspan, numeric cells with their full-precision value in data-v for sorting. The page
 * (report.c) holds the one script that sorts and filters every table.sortable. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "escape.h"
#include "table.h"

#define CELL(t, r, c) ((r) * (t)->ncols + (c))

static const char *group_of(const struct ocb_table *t, size_t c)
{
	return t->group && t->group[c] ? t->group[c] : "";
}

static void head(const struct ocb_table *t, FILE *f)
{
	fputs("<thead>", f);
	int groups = 0;
	for (size_t c = 0; c < t->ncols; c++)
		groups |= *group_of(t, c) != '\0';
	if (groups) {
		fputs("<tr class=\"grp\">", f);
		for (size_t c = 0; c < t->ncols;) {
			size_t e = c + 1;
			while (e < t->ncols && *group_of(t, c) && !strcmp(group_of(t, e), group_of(t, c)))
				e++;
			fprintf(f, "<th colspan=\"%zu\">", e - c);
			ocb_esc_html(f, group_of(t, c));
			fputs("</th>", f);
			c = e;
		}
		fputs("</tr>", f);
	}
	fputs("<tr>", f);
	for (size_t c = 0; c < t->ncols; c++) {
		fputs("<th title=\"sort\">", f);
		ocb_esc_html(f, t->cols[c]);
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n", f);
}

int ocb_table_write_html_dash(const struct ocb_table *t, FILE *f, int open)
{
	if (open) {
		fprintf(f, "<section class=\"tbl\">\n<h3 id=\"%s\">", t->id);
		ocb_esc_html(f, t->title);
		fputs("</h3>\n", f);
	} else {
		fprintf(f, "<details class=\"tbl\" id=\"%s\"><summary>", t->id);
		ocb_esc_html(f, t->title);
		fprintf(f, " (%zu rows)</summary>\n", t->nrows);
	}
	if (t->prov && *t->prov) {
		fputs("<p class=\"prov\">", f);
		ocb_esc_html(f, t->prov);
		fputs("</p>\n", f);
	}
	fprintf(f, "<input class=\"filter\" type=\"search\" placeholder=\"filter rows\" "
		   "aria-label=\"filter rows\" data-for=\"t_%s\">\n", t->id);
	fprintf(f, "<div class=\"scroll\"><table class=\"sortable\" id=\"t_%s\">\n", t->id);
	head(t, f);
	fputs("<tbody>\n", f);
	double *bv = calloc(t->ncols, sizeof *bv);
	if (!bv)
		return ocb_seterr(OCB_ENOMEM, "table %s", t->id);
	ocb_table_best_values(t, bv);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs("<tr>", f);
		for (size_t c = 0; c < t->ncols; c++) {
			double v = t->num[CELL(t, r, c)];
			int b = !isnan(bv[c]) && v == bv[c];
			const char *txt = t->text[CELL(t, r, c)] ? t->text[CELL(t, r, c)] : "";
			if (isfinite(v))
				fprintf(f, "<td class=\"n\" data-v=\"%.9g\">", v);
			else if (!strcmp(t->cols[c], "verdict") && strspn(txt, "abcdefghijklmnopqrstuvwxyz") == strlen(txt))
				fprintf(f, "<td class=\"v-%s\">", txt); /* coloured by the page's style */
			else
				fputs("<td>", f);
			if (b)
				fputs("<b>", f);
			ocb_esc_html(f, t->text[CELL(t, r, c)] ? t->text[CELL(t, r, c)] : "");
			fputs(b ? "</b></td>" : "</td>", f);
		}
		fputs("</tr>\n", f);
	}
	free(bv);
	fputs("</tbody>\n</table></div>\n", f);
	if (t->note && *t->note) {
		fputs("<p class=\"note\">", f);
		ocb_esc_html(f, t->note);
		fputs("</p>\n", f);
	}
	fputs(open ? "</section>\n" : "</details>\n", f);
	return ferror(f) ? ocb_seterr(OCB_EIO, "write failed") : OCB_OK;
}
