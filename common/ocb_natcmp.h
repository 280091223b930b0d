/* ocb_natcmp: the order in which ocbench lists cases: text compared character by
 * character, but numbers compared by value, so {"n":256} comes before {"n":2048} and
 * "q4_0" before "q16_0". Used for every sorted table (as the SQLite collation
 * "ocb_params", registered by db/store.c on each connection, and from C). */
#ifndef OCB_NATCMP_H
#define OCB_NATCMP_H

#include <stddef.h>

/* <0, 0, >0. Numbers: an optional '-' (after start, ':', ',', '[', '{', '"', '/', '=' or
 * a space) then digits, an optional fraction and exponent, compared as doubles. Equal
 * under that order but different bytes (1.0 vs 1) -> ordered by their bytes, so 0 means
 * identical. Lengths are explicit; the strings need no NUL. */
int ocb_natcmp_n(const char *a, size_t na, const char *b, size_t nb);
/* The same for NUL-terminated strings (NULL sorts first). */
int ocb_natcmp(const char *a, const char *b);

#endif
