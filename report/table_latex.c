/* table_latex: a report table as booktabs floats that fit a given width (table.h).
 *
 * Width is estimated, not measured: at \footnotesize (8 pt Computer Modern) a digit is
 * 4 pt and the average letter about 4.2 pt; we count 4.6 pt per character (bold cells
 * and capitals need the margin) plus 2 x \tabcolsep (3 pt each). Headers wrap at spaces
 * (a nested tabular): a column header into about two lines, a group header to the width
 * of the columns it spans, so a column is as wide as its longest cell or header line. Columns that do not fit go into further parts, each repeating the nkey
 * label columns; a pivot's column group is never cut unless it alone is too wide. Rows
 * beyond max_rows go into further parts too (a float taller than the page is dropped by
 * LaTeX: "Float too large for page"). A text column wider than 40% of the width is capped
 * there (the label columns together at 45% of it) and its cells wrap (wrapped()). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "escape.h"
#include "table.h"

#define PT_PER_CHAR 4.6
#define PAD_PT 6.0

#define CELL(t, r, c) ((r) * (t)->ncols + (c))

static const char *cell(const struct ocb_table *t, size_t r, size_t c)
{
	const char *s = t->text[CELL(t, r, c)];
	return s ? s : "";
}

static const char *group_of(const struct ocb_table *t, size_t c)
{
	return t->group && t->group[c] ? t->group[c] : "";
}

/* Header s wrapped at spaces into lines of at most `target` characters (a longer word
 * is a line of its own): the lines' end offsets into ends[0..8), their count returned. */
static int wrap(const char *s, size_t target, size_t ends[8])
{
	size_t n = strlen(s), start = 0;
	int k = 0;
	while (start < n && k < 7) {
		size_t end = start + target;
		if (end >= n)
			break;
		size_t sp = end;
		while (sp > start && s[sp] != ' ')
			sp--;
		if (sp == start) { /* a word longer than target: up to its end */
			sp = end;
			while (sp < n && s[sp] != ' ')
				sp++;
			if (sp >= n)
				break;
		}
		ends[k++] = sp;
		start = sp + 1;
	}
	ends[k++] = n;
	return k;
}

/* The wrap width of a header: two lines for a column header, `span` characters for a
 * group header; never below its longest word. */
static size_t wrap_target(const char *s, size_t span)
{
	size_t n = strlen(s), word = 0, w = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == ' ') {
			word = w > word ? w : word;
			w = 0;
		} else {
			w++;
		}
	}
	size_t t = span ? span : (n <= 8 ? n : (n + 1) / 2);
	return t > word ? t : word;
}

/* Characters of the widest line of header s wrapped at `target`. */
static size_t header_chars(const char *s, size_t target)
{
	size_t ends[8], start = 0, most = 0;
	int k = wrap(s, target, ends);
	for (int i = 0; i < k; i++) {
		most = ends[i] - start > most ? ends[i] - start : most;
		start = ends[i] + 1;
	}
	return most;
}

/* Writes header s wrapped at `target` (a nested tabular when it takes several lines). */
static void header_out(FILE *f, const char *s, size_t target)
{
	size_t ends[8], start = 0;
	int k = wrap(s, target, ends);
	if (k == 1) {
		ocb_esc_latex(f, s);
		return;
	}
	fputs("\\begin{tabular}[b]{@{}c@{}}", f);
	for (int i = 0; i < k; i++) {
		char *line = strndup(s + start, ends[i] - start);
		if (i)
			fputs("\\\\", f);
		ocb_esc_latex(f, line ? line : "");
		free(line);
		start = ends[i] + 1;
	}
	fputs("\\end{tabular}", f);
}

static int col_numeric(const struct ocb_table *t, size_t c)
{
	for (size_t r = 0; r < t->nrows; r++)
		if (!isnan(t->num[CELL(t, r, c)]))
			return 1;
	return 0;
}

/* Estimated width of column c in points (cells and its header). */
static double col_width(const struct ocb_table *t, size_t c)
{
	size_t chars = header_chars(t->cols[c], wrap_target(t->cols[c], 0));
	for (size_t r = 0; r < t->nrows; r++) {
		size_t l = strlen(cell(t, r, c));
		chars = l > chars ? l : chars;
	}
	return (double)chars * PT_PER_CHAR + PAD_PT;
}

/* The end (exclusive) of column c's group run. */
static size_t group_end(const struct ocb_table *t, size_t c)
{
	size_t e = c + 1;
	while (e < t->ncols && *group_of(t, c) && !strcmp(group_of(t, e), group_of(t, c)))
		e++;
	return e;
}

/* Width of the run [a, b), at least as wide as its group header. */
static double run_width(const struct ocb_table *t, const double *w, size_t a, size_t b)
{
	double sum = 0;
	for (size_t c = a; c < b; c++)
		sum += w[c];
	size_t span = (size_t)((sum - PAD_PT) / PT_PER_CHAR);
	const char *gs = group_of(t, a);
	double g = (double)header_chars(gs, wrap_target(gs, span > 12 ? span : 12)) * PT_PER_CHAR +
		   PAD_PT;
	return *group_of(t, a) && g > sum ? g : sum;
}

/* One float: columns cols[0..nc), rows [r0, r1). */
/* A cell of a wrapped column: a ragged-right \parbox of the column's width, with break
 * points after '=', '_' and ',' too (parameter words have no spaces inside). */
static void wrapped(FILE *f, const char *s, double width)
{
	char one[2] = {0, 0};
	fprintf(f, "\\parbox[t]{%.0fpt}{\\raggedright\\hspace{0pt}", width);
	for (; *s; s++) {
		one[0] = *s;
		ocb_esc_latex(f, one);
		if (*s == '=' || *s == '_' || *s == ',')
			fputs("\\allowbreak{}", f);
	}
	fputc('}', f);
}

/* What write_part needs per column, computed once per table. */
struct colinfo {
	const double *w;   /* estimated widths */
	const double *bv;  /* best values (ocb_table_best_values) */
	const char *num;   /* 1: numeric column (right-aligned) */
	const char *wrap;  /* 1: a text column capped at its width: its cells wrap */
};

static void write_part(const struct ocb_table *t, FILE *f, const struct colinfo *ci,
		       const size_t *cols, size_t nc, size_t r0, size_t r1, int part, int nparts)
{
	fputs("\\begin{table}[htbp]\n\\centering\n\\footnotesize\n\\setlength{\\tabcolsep}{3pt}\n"
	      "\\caption{", f);
	ocb_esc_latex(f, t->title);
	if (nparts > 1)
		fprintf(f, " (part %d of %d)", part, nparts);
	if (t->prov && *t->prov) {
		fputs(". {\\scriptsize ", f);
		ocb_esc_latex(f, t->prov);
		fputc('}', f);
	}
	fprintf(f, "}\n\\label{tab:%s%s", t->id, part > 1 ? "-" : "");
	if (part > 1)
		fprintf(f, "%d", part);
	fputs("}\n\\begin{tabular}{", f);
	for (size_t i = 0; i < nc; i++)
		fputc(ci->num[cols[i]] ? 'r' : 'l', f);
	fputs("}\n\\toprule\n", f);
	int groups = 0;
	for (size_t i = 0; i < nc; i++)
		groups |= *group_of(t, cols[i]) != '\0';
	if (groups) { /* the group row: one \multicolumn per run, a \cmidrule under each */
		char rules[512] = "";
		size_t ro = 0;
		for (size_t i = 0; i < nc;) {
			size_t j = i + 1;
			while (j < nc && *group_of(t, cols[i]) &&
			       !strcmp(group_of(t, cols[j]), group_of(t, cols[i])))
				j++;
			if (i)
				fputs(" & ", f);
			double sum = 0;
			for (size_t c = i; c < j; c++)
				sum += ci->w[cols[c]];
			size_t span = (size_t)((sum - PAD_PT) / PT_PER_CHAR);
			fprintf(f, "\\multicolumn{%zu}{c}{", j - i);
			header_out(f, group_of(t, cols[i]),
				   wrap_target(group_of(t, cols[i]), span > 12 ? span : 12));
			fputc('}', f);
			if (*group_of(t, cols[i]) && ro < sizeof rules)
				ro += (size_t)snprintf(rules + ro, sizeof rules - ro,
						       "\\cmidrule(lr){%zu-%zu}", i + 1, j);
			i = j;
		}
		fprintf(f, " \\\\\n%s\n", rules);
	}
	for (size_t i = 0; i < nc; i++) {
		if (i)
			fputs(" & ", f);
		header_out(f, t->cols[cols[i]], wrap_target(t->cols[cols[i]], 0));
	}
	fputs(" \\\\\n\\midrule\n", f);
	for (size_t r = r0; r < r1; r++) {
		for (size_t i = 0; i < nc; i++) {
			double v = t->num[CELL(t, r, cols[i])];
			int b = !isnan(ci->bv[cols[i]]) && v == ci->bv[cols[i]];
			if (i)
				fputs(" & ", f);
			if (b)
				fputs("\\textbf{", f);
			if (ci->wrap[cols[i]])
				wrapped(f, cell(t, r, cols[i]), ci->w[cols[i]] - PAD_PT);
			else
				ocb_esc_latex(f, cell(t, r, cols[i]));
			if (b)
				fputc('}', f);
		}
		fputs(" \\\\\n", f);
	}
	fputs("\\bottomrule\n\\end{tabular}\n", f);
	if (t->note && *t->note && part == nparts) {
		fputs("\\par\\smallskip{\\scriptsize ", f);
		ocb_esc_latex(f, t->note);
		fputs("\\par}\n", f);
	}
	fputs("\\end{table}\n\n", f);
}

/* Splits the non-key columns into column sets that fit width_pt: part k holds
 * start[k]..start[k+1]. Returns the number of column sets (>= 1). */
static size_t col_sets(const struct ocb_table *t, const double *w, double width_pt,
		       size_t *start)
{
	size_t nk = t->nkey < t->ncols ? t->nkey : 0, n = 0;
	double keyw = 0;
	for (size_t c = 0; c < nk; c++)
		keyw += w[c];
	start[n++] = nk;
	double used = keyw;
	for (size_t c = nk; c < t->ncols;) {
		size_t e = group_end(t, c);
		double rw = run_width(t, w, c, e);
		if (width_pt > 0 && used + rw > width_pt && used > keyw) {
			start[n++] = c;
			used = keyw;
		}
		used += rw;
		c = e;
	}
	start[n] = t->ncols;
	return n;
}

int ocb_table_write_latex_fit(const struct ocb_table *t, FILE *f, double width_pt,
			      size_t max_rows)
{
	double *w = calloc(t->ncols, sizeof *w), *bv = calloc(t->ncols, sizeof *bv);
	size_t *start = calloc(t->ncols + 2, sizeof *start), *cols = calloc(t->ncols, sizeof *cols);
	char *num = calloc(t->ncols, 1), *wrapc = calloc(t->ncols, 1);
	int rc = OCB_OK;
	if (!w || !bv || !start || !cols || !num || !wrapc) {
		rc = ocb_seterr(OCB_ENOMEM, "table %s", t->id);
		goto out;
	}
	for (size_t c = 0; c < t->ncols; c++) {
		w[c] = col_width(t, c);
		num[c] = (char)col_numeric(t, c);
		/* long text (parameters, reasons) wraps in a column of 40% of the width */
		if (!num[c] && width_pt > 0 && w[c] > 0.4 * width_pt) {
			w[c] = 0.4 * width_pt;
			wrapc[c] = 1;
		}
	}
	/* the label columns, repeated in every part, take at most 45% of the width: their
	 * text columns wrap narrower */
	double keyw = 0, keytext = 0;
	size_t nkeys = t->nkey < t->ncols ? t->nkey : 0;
	for (size_t c = 0; c < nkeys; c++) {
		keyw += w[c];
		keytext += num[c] ? 0 : w[c];
	}
	if (width_pt > 0 && keyw > 0.45 * width_pt && keytext > 0) {
		double shrink = (keytext - (keyw - 0.45 * width_pt)) / keytext;
		for (size_t c = 0; c < nkeys; c++) {
			double nw = fmax(w[c] * shrink, 6 * PT_PER_CHAR + PAD_PT);
			if (!num[c] && nw < w[c]) { /* never wider, at least 6 characters */
				w[c] = nw;
				wrapc[c] = 1;
			}
		}
	}
	ocb_table_best_values(t, bv);
	struct colinfo ci = {w, bv, num, wrapc};
	size_t nsets = col_sets(t, w, width_pt, start), nk = start[0];
	size_t rows = max_rows ? max_rows : (t->nrows ? t->nrows : 1);
	size_t nchunks = t->nrows ? (t->nrows + rows - 1) / rows : 1;
	int nparts = (int)(nsets * nchunks), part = 0;
	for (size_t s = 0; s < nsets; s++) {
		size_t nc = 0;
		for (size_t c = 0; c < nk; c++)
			cols[nc++] = c;
		for (size_t c = start[s]; c < start[s + 1]; c++)
			cols[nc++] = c;
		for (size_t k = 0; k < nchunks; k++) {
			size_t r0 = k * rows, r1 = r0 + rows < t->nrows ? r0 + rows : t->nrows;
			write_part(t, f, &ci, cols, nc, r0, r1, ++part, nparts);
		}
	}
	rc = ferror(f) ? ocb_seterr(OCB_EIO, "write failed") : OCB_OK;
out:
	free(w);
	free(bv);
	free(num);
	free(wrapc);
	free(start);
	free(cols);
	return rc;
}
