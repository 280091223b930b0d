/* table: one report table (title, column headers, rows of cells) and its writers for
 * Markdown, LaTeX (booktabs), CSV, HTML and JSON. Every report section builds tables;
 * the writers escape every cell (escape.h), so database text is safe in each output.
 *
 * A cell holds its display text and, optionally, a number. A column may say which way
 * is better (OCB_BEST_MAX / OCB_BEST_MIN): the cells holding the column's best number
 * are set in bold in Markdown, LaTeX and HTML (papers' "best per column").
 *
 * A table has a form: long (one row per case, every field: CSV, JSON and the HTML page's
 * data view keep it for tools), paper (a pivot, report/pivot.h: Markdown, LaTeX, HTML) or
 * both (small tables). Optional: a provenance line for the caption (machine, CPU, runs,
 * commit, date, ocbench version), a group header per column (a pivot's column key,
 * spanning its measures), and `nkey` leading label columns that LaTeX repeats when it
 * splits a table too wide for one column of a two-column article.
 *
 * The table owns every string it holds; ocb_table_release() frees them. */
#ifndef OCB_TABLE_H
#define OCB_TABLE_H

#include <cJSON.h>
#include <stddef.h>
#include <stdio.h>

enum ocb_best { OCB_BEST_MIN = -1, OCB_BEST_NONE = 0, OCB_BEST_MAX = 1 };

enum ocb_table_form {
	OCB_FORM_BOTH = 0, /* every format */
	OCB_FORM_LONG,     /* CSV, JSON, HTML data view */
	OCB_FORM_PAPER,    /* Markdown, LaTeX, HTML */
};

struct ocb_table {
	char id[64];     /* file-safe name: "results_baseline_1" (never database text) */
	char *title;     /* may hold database text */
	char *note;      /* a line under the table, or NULL */
	size_t ncols, nrows, cap;
	char **cols;     /* [ncols] */
	signed char *best; /* [ncols] enum ocb_best */
	char **text;     /* [cap * ncols], row-major; NULL reads as "" */
	double *num;     /* [cap * ncols], NaN when the cell is not a number */
	char *prov;      /* provenance for the caption, or NULL */
	char **group;    /* [ncols] group header of each column (NULL entries: none), or NULL */
	size_t nkey;     /* leading label columns (repeated in every LaTeX part) */
	enum ocb_table_form form;
};

/* Sets up t with `ncols` headers (copied). id must be [A-Za-z0-9_-]. Returns OCB_OK,
 * OCB_EINVAL or OCB_ENOMEM; on failure t is released. */
int ocb_table_init(struct ocb_table *t, const char *id, const char *title, size_t ncols,
		   const char *const *cols);
/* Frees everything t owns and zeroes it; NULL-safe. */
void ocb_table_release(struct ocb_table *t);
/* Appends an empty row; *row = its index. */
int ocb_table_add_row(struct ocb_table *t, size_t *row);
/* Sets a cell's text (copied; NULL -> ""). */
int ocb_table_text(struct ocb_table *t, size_t row, size_t col, const char *s);
/* Sets a cell's text from a printf format. */
int ocb_table_printf(struct ocb_table *t, size_t row, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Sets a cell to a number shown with `fmt` (printf, one double), or "" when v is NaN. */
int ocb_table_num(struct ocb_table *t, size_t row, size_t col, double v, const char *fmt);
/* Sets the note (copied). */
int ocb_table_set_note(struct ocb_table *t, const char *note);
/* Sets the provenance line (copied). */
int ocb_table_set_prov(struct ocb_table *t, const char *prov);
/* Sets column col's group header (copied; consecutive equal groups are one span). */
int ocb_table_set_group(struct ocb_table *t, size_t col, const char *group);
/* 1 if the table belongs in a format of this form (paper = md/tex, long = csv/json). */
int ocb_table_in_paper(const struct ocb_table *t);
int ocb_table_in_long(const struct ocb_table *t);
/* 1 if cell (row, col) holds its column's best number. */
int ocb_table_is_best(const struct ocb_table *t, size_t row, size_t col);
/* For the writers: bv[c] = column c's best number (NaN when the column has no "better"
 * direction or fewer than two numbers), so that cell (r, c) is best iff its number equals
 * bv[c]: one pass over the table instead of one per cell. bv has ncols entries. */
void ocb_table_best_values(const struct ocb_table *t, double *bv);

/* Writers. Markdown: "### title", a pipe table, best in **bold**. LaTeX: a complete
 * table float (booktabs \toprule \midrule \bottomrule, \textbf for best) that compiles
 * with \usepackage{booktabs} as a fragment. CSV: header row + rows, numbers in full
 * precision where the cell is numeric. HTML: <h3> + <table>, best in <b>. Return OCB_OK
 * or OCB_EIO if the stream failed. */
int ocb_table_write_md(const struct ocb_table *t, FILE *f);
int ocb_table_write_latex(const struct ocb_table *t, FILE *f);
/* LaTeX for a column of `width_pt` points: the table in parts of at most `max_rows` rows
 * and of as many columns as fit the width (estimated from the cells' lengths at
 * \footnotesize; the nkey label columns repeat in each part), each part a float
 * ("(part 2 of 3)" in its caption). width_pt <= 0 or max_rows == 0: no split. */
int ocb_table_write_latex_fit(const struct ocb_table *t, FILE *f, double width_pt,
			      size_t max_rows);
int ocb_table_write_csv(const struct ocb_table *t, FILE *f);
int ocb_table_write_html(const struct ocb_table *t, FILE *f);
/* The HTML page's form of the table: a filter box, a horizontal scroll container and a
 * sortable table (class "sortable": the page's script sorts by a header click, numbers by
 * their data-v value); `open`: 0 puts the table in a closed <details>. */
int ocb_table_write_html_dash(const struct ocb_table *t, FILE *f, int open);
/* {"id","title","note","provenance","columns":[...],"rows":[[cell...]...]} with numbers
 * as numbers (note and provenance when set).
 * Caller frees with cJSON_Delete(); NULL on allocation failure. */
cJSON *ocb_table_json(const struct ocb_table *t);

#endif
