/* listing: what the read-only commands (runs, show, machines) share to print rows:
 * an aligned text table built cell by cell, and the JSON object of a query row.
 * The table owns copies of its cells; listing_release() frees them. */
#ifndef OCB_LISTING_H
#define OCB_LISTING_H

#include <cJSON.h>
#include <stdio.h>

#include "../db/rows.h"

#define LISTING_MAXCOL 16

struct listing {
	size_t ncol, nrow, cap; /* cells: nrow x ncol, row-major */
	char **cell;
	const char *head[LISTING_MAXCOL];
	unsigned right; /* bit c set: column c is right-aligned (numbers) */
	size_t cur;     /* next column of the row being filled */
};

/* ncol <= LISTING_MAXCOL headers (borrowed, must outlive t). No allocation yet. */
void listing_init(struct listing *t, size_t ncol, const char *const *head, unsigned right);
/* Appends the next cell of the current row (a new row starts after ncol cells).
 * Returns 0, or OCB_ENOMEM. */
int listing_addf(struct listing *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints header and rows, columns padded to their widest cell, two spaces apart. */
void listing_print(const struct listing *t, FILE *f);
void listing_release(struct listing *t);

/* Row `row` of r as a JSON object keyed by column name: NULL -> null, numbers ->
 * numbers (non-finite -> null), text -> strings; a column named params_json or
 * config_json holding valid JSON is embedded as JSON. Caller frees with cJSON_Delete();
 * NULL on allocation failure. */
cJSON *listing_row_json(const struct ocb_rows *r, size_t row);
/* Every row of r appended to the JSON array arr. 0 or OCB_ENOMEM. */
int listing_rows_json(const struct ocb_rows *r, cJSON *arr);

/* The end of a listing command: `arr` as indented JSON on stdout when json, else the
 * table, or the line `empty` when it has no rows. Returns 0, or prints one line and
 * returns the exit code when the JSON cannot be made. */
int listing_emit(const char *cmd, int json, const cJSON *arr, const struct listing *t,
		 const char *empty);

/* A duration in seconds as "812 ns", "3.41 us", "12.5 ms", "1.20 s" into buf. */
char *listing_fmt_seconds(double s, char *buf, size_t len);

#endif
