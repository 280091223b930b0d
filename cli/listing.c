#define _GNU_SOURCE /* vasprintf */
#include "listing.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "cli.h"

void listing_init(struct listing *t, size_t ncol, const char *const *head, unsigned right)
{
	memset(t, 0, sizeof *t);
	t->ncol = ncol < LISTING_MAXCOL ? ncol : LISTING_MAXCOL;
	for (size_t c = 0; c < t->ncol; c++)
		t->head[c] = head[c];
	t->right = right;
}

int listing_addf(struct listing *t, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return ocb_seterr(OCB_ENOMEM, "listing: out of memory");
	if (t->cur == 0) {
		if (t->nrow == t->cap) {
			size_t nc = t->cap ? 2 * t->cap : 32;
			char **p = realloc(t->cell, nc * t->ncol * sizeof *p);
			if (!p) {
				free(s);
				return ocb_seterr(OCB_ENOMEM, "listing: out of memory");
			}
			t->cell = p;
			t->cap = nc;
		}
		memset(&t->cell[t->nrow * t->ncol], 0, t->ncol * sizeof *t->cell);
		t->nrow++;
	}
	t->cell[(t->nrow - 1) * t->ncol + t->cur] = s;
	t->cur = (t->cur + 1) % t->ncol;
	return OCB_OK;
}

void listing_print(const struct listing *t, FILE *f)
{
	size_t w[LISTING_MAXCOL] = {0};
	for (size_t c = 0; c < t->ncol; c++)
		w[c] = strlen(t->head[c]);
	for (size_t r = 0; r < t->nrow; r++)
		for (size_t c = 0; c < t->ncol; c++) {
			const char *s = t->cell[r * t->ncol + c];
			size_t n = s ? strlen(s) : 0;
			if (n > w[c])
				w[c] = n;
		}
	for (size_t r = 0; r <= t->nrow; r++) {
		for (size_t c = 0; c < t->ncol; c++) {
			const char *s = r == 0 ? t->head[c] : t->cell[(r - 1) * t->ncol + c];
			int right = (t->right >> c) & 1;
			int last = c + 1 == t->ncol;
			if (!s)
				s = "";
			if (right)
				fprintf(f, "%*s", (int)w[c], s);
			else if (last)
				fputs(s, f);
			else
				fprintf(f, "%-*s", (int)w[c], s);
			if (!last)
				fputs("  ", f);
		}
		fputc('\n', f);
	}
}

void listing_release(struct listing *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrow * t->ncol; i++)
		free(t->cell[i]);
	free(t->cell);
	memset(t, 0, sizeof *t);
}

cJSON *listing_row_json(const struct ocb_rows *r, size_t row)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	for (size_t c = 0; c < r->ncol; c++) {
		const char *name = r->name[c];
		const struct ocb_value *x = &r->v[row * r->ncol + c];
		cJSON *v = NULL;
		switch (x->type) {
		case OCB_V_NULL: v = cJSON_CreateNull(); break;
		case OCB_V_INT: v = cJSON_CreateNumber((double)x->i); break;
		case OCB_V_REAL: v = isfinite(x->d) ? cJSON_CreateNumber(x->d) : cJSON_CreateNull(); break;
		default:
			if (strcmp(name, "params_json") == 0 || strcmp(name, "config_json") == 0)
				v = cJSON_Parse(x->t);
			if (!v)
				v = cJSON_CreateString(x->t ? x->t : "");
			break;
		}
		if (!v || !cJSON_AddItemToObject(o, name, v)) {
			cJSON_Delete(v);
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

/* Every row of r as JSON objects appended to arr. 0 or OCB_ENOMEM. */
int listing_rows_json(const struct ocb_rows *r, cJSON *arr)
{
	for (size_t i = 0; i < r->nrow; i++) {
		cJSON *o = listing_row_json(r, i);
		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			return OCB_ENOMEM;
		}
	}
	return 0;
}

char *listing_fmt_seconds(double s, char *buf, size_t len)
{
	if (!isfinite(s))
		snprintf(buf, len, "-");
	else if (s < 1e-6)
		snprintf(buf, len, "%.0f ns", s * 1e9);
	else if (s < 1e-3)
		snprintf(buf, len, "%.3g us", s * 1e6);
	else if (s < 1.0)
		snprintf(buf, len, "%.3g ms", s * 1e3);
	else
		snprintf(buf, len, "%.3g s", s);
	return buf;
}

int listing_emit(const char *cmd, int json, const cJSON *arr, const struct listing *t,
		 const char *empty)
{
	if (json) {
		char *text = cJSON_Print(arr);
		if (!text)
			return cli_fail(cmd, ocb_seterr(OCB_ENOMEM, "out of memory"));
		puts(text);
		cJSON_free(text);
	} else if (t->nrow == 0) {
		puts(empty);
	} else {
		listing_print(t, stdout);
	}
	return 0;
}
