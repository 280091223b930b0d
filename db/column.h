/* column: reading a result row's columns the way every ocbench query wants them.
 * NULL is "not measured": a real column gives NaN, never 0; a text column gives "". */
#ifndef OCB_COLUMN_H
#define OCB_COLUMN_H

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>

/* Column c as a double, NaN when NULL. */
static inline double ocb_col_real(sqlite3_stmt *st, int c)
{
	return sqlite3_column_type(st, c) == SQLITE_NULL ? NAN : sqlite3_column_double(st, c);
}

/* Column c's text copied into dst[cap] (cut to fit), "" when NULL. */
static inline void ocb_col_text(char *dst, size_t cap, sqlite3_stmt *st, int c)
{
	const unsigned char *t = sqlite3_column_text(st, c);
	snprintf(dst, cap, "%s", t ? (const char *)t : "");
}

#endif
