#include "escape.h"

void ocb_esc_html(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

void ocb_esc_latex(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '\\': fputs("\\textbackslash{}", f); break;
		case '{': fputs("\\{", f); break;
		case '}': fputs("\\}", f); break;
		case '$': fputs("\\$", f); break;
		case '&': fputs("\\&", f); break;
		case '#': fputs("\\#", f); break;
		case '_': fputs("\\_", f); break;
		case '%': fputs("\\%", f); break;
		case '^': fputs("\\textasciicircum{}", f); break;
		case '~': fputs("\\textasciitilde{}", f); break;
		case '<': fputs("\\textless{}", f); break;
		case '>': fputs("\\textgreater{}", f); break;
		case '|': fputs("\\textbar{}", f); break;
		/* a straight double quote: the typewriter font's own glyph (OT1 tt slot 34);
		 * a plain " prints as a curly closing quote */
		case '"': fputs("{\\ttfamily\\char34}", f); break;
		case '\n': case '\r': case '\t': fputc(' ', f); break;
		default: fputc(*s, f);
		}
	}
}

void ocb_esc_md(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '|': case '\\': case '`': case '*': case '_': case '[': case ']':
			fputc('\\', f);
			fputc(*s, f);
			break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '\n': case '\r': case '\t': fputc(' ', f); break;
		default: fputc(*s, f);
		}
	}
}

void ocb_esc_csv(FILE *f, const char *s)
{
	int quote = 0;
	for (const char *p = s; p && *p; p++)
		if (*p == ',' || *p == '"' || *p == '\n' || *p == '\r')
			quote = 1;
	if (!quote) {
		fputs(s ? s : "", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void ocb_esc_gnuplot(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\'' || c == '`')
			fputs("''", f);
		else if (c == '@')
			fputs("(at)", f);
		else if (c < 0x20 || c == 0x7f)
			fputc(' ', f);
		else
			fputc(c, f);
	}
	fputc('\'', f);
}
