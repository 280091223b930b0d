/* escape: writing database text into the report's languages so that no stored string
 * (bench names, labels, hostnames, params) can change the meaning of the output.
 *
 * Every function writes the escaped form of `s` (NULL is written as "") to `f`.
 * Nothing is allocated; nothing fails except the stream (check ferror()). */
#ifndef OCB_ESCAPE_H
#define OCB_ESCAPE_H

#include <stdio.h>

/* HTML text and attribute values: & < > " ' become entities. */
void ocb_esc_html(FILE *f, const char *s);

/* LaTeX text mode: \ { } $ & # ^ _ % ~ < > | become their text commands (all of which
 * exist in the default OT1 encoding, so the fragment needs no fontenc); newlines
 * become spaces. A double quote becomes the typewriter font's straight glyph (a plain
 * one would print curly); an apostrophe stays one. */
void ocb_esc_latex(FILE *f, const char *s);

/* A Markdown table cell: | \ ` * _ [ ] < > are backslash-escaped or entity-escaped,
 * newlines become spaces, so the cell cannot split the row or open markup. */
void ocb_esc_md(FILE *f, const char *s);

/* A CSV field (RFC 4180): quoted when it holds , " CR or LF, with " doubled. */
void ocb_esc_csv(FILE *f, const char *s);

/* A complete gnuplot string literal, quotes included. gnuplot performs backquote
 * command substitution and @macro expansion on the whole command line before parsing,
 * except inside single-quoted strings (gnuplot manual, "Substitution and command line
 * macros": "anywhere on the gnuplot command line except inside strings delimited by
 * single quotes"); in single quotes backslashes are plain and a quote is doubled
 * ("quote marks"). So the literal is single-quoted with ' doubled, and, as a second
 * line of defence, backquotes become ' (then doubled), CR/LF/other control bytes
 * become spaces (a newline would end the command) and @ becomes "(at)". */
void ocb_esc_gnuplot(FILE *f, const char *s);

#endif
