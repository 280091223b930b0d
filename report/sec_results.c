/* sec_results: one table per suite of the selected results: case, params, variant,
 * threads, (machine,) median with its 95% CI, GFLOP/s, GB/s, the fraction of the
 * roofline bound, and every counter that was available for the suite (per repetition).
 * Counters come from one query over the selection. */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "rctx.h"

/* the order of ocb_sel_counters' rows: (result_id, event) */
static int cmp_cval(const void *a, const void *b)
{
	const struct ocb_sel_counter *x = a, *y = b;
	if (x->result_id != y->result_id)
		return x->result_id < y->result_id ? -1 : 1;
	return strcmp(x->event, y->event);
}

static const struct ocb_sel_counter *find_cval(const struct ocb_sel_counter *cv, size_t n, int64_t id, const char *ev)
{
	if (!n)
		return NULL;
	struct ocb_sel_counter key = {.result_id = id};
	snprintf(key.event, sizeof key.event, "%s", ev);
	return bsearch(&key, cv, n, sizeof *cv, cmp_cval);
}

/* Writes "suite" into a file-safe id fragment. */
static void safe_id(char *dst, size_t len, const char *prefix, const char *s, size_t k)
{
	size_t o = (size_t)snprintf(dst, len, "%s", prefix);
	for (; *s && o + 8 < len && o < 40; s++)
		dst[o++] = ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			    (*s >= '0' && *s <= '9')) ? *s : '_';
	snprintf(dst + o, len - o, "_%zu", k);
}

/* Appends a printf'd piece to the growing note *buf (*len bytes so far). */
static int note_add(char **buf, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int note_add(char **buf, size_t *len, const char *fmt, ...)
{
	char *piece = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&piece, fmt, ap);
	va_end(ap);
	char *nb = n < 0 ? NULL : realloc(*buf, *len + (size_t)n + 1);
	if (!nb) {
		free(piece);
		return ocb_seterr(OCB_ENOMEM, "results table");
	}
	memcpy(nb + *len, piece, (size_t)n + 1);
	*buf = nb;
	*len += (size_t)n;
	free(piece);
	return OCB_OK;
}

/* One table per suite. Over 80 lines: the per-suite loop builds the columns (the suite's
 * available counters), then the rows, then the note, sharing the suite's bounds [a, b)
 * and its suspect list; splitting it would pass all of them around. Left as it was
 * (issue 9 moved only its counter query into db/). */
int ocb_rsec_results(struct ocb_rctx *x)
{
	struct ocb_sel_counter *cv = NULL;
	char *sus = NULL; /* this table's suspect reasons, for its note */
	size_t suslen = 0, nsus = 0;
	size_t ncv = 0;
	char **events = NULL;
	const char **cols = NULL;
	int rc = ocb_sel_counters(x->db, &x->o->sel, &cv, &ncv);
	if (rc)
		return rc;
	int multi = 0;
	for (size_t i = 1; i < x->rs.n; i++)
		multi |= x->rs.r[i].machine_id != x->rs.r[0].machine_id;

	size_t k = 0;
	for (size_t a = 0; a < x->rs.n; k++) {
		size_t b = a;
		while (b < x->rs.n && strcmp(x->rs.r[b].suite, x->rs.r[a].suite) == 0)
			b++;
		/* The suite's available counter events, sorted (cv is sorted by result). */
		size_t nev = 0;
		free(events);
		events = calloc(ncv + 1, sizeof *events);
		if (!events) {
			rc = ocb_seterr(OCB_ENOMEM, "results table");
			goto out;
		}
		for (size_t i = 0; i < ncv; i++) {
			if (!cv[i].available)
				continue;
			int mine = 0;
			for (size_t r = a; r < b && !mine; r++)
				mine = x->rs.r[r].id == cv[i].result_id;
			if (!mine)
				continue;
			int seen = 0;
			for (size_t e = 0; e < nev && !seen; e++)
				seen = strcmp(events[e], cv[i].event) == 0;
			if (!seen)
				events[nev++] = cv[i].event;
		}
		static const char *base_cols[] = {"case", "params", "variant", "threads", "machine",
						  "median", "95% CI", "unit", "GFLOP/s", "GB/s",
						  "roofline", "bound", "flag"};
		size_t nbase = sizeof base_cols / sizeof *base_cols;
		free(cols);
		cols = calloc(nbase + nev, sizeof *cols);
		if (!cols) {
			rc = ocb_seterr(OCB_ENOMEM, "results table");
			goto out;
		}
		size_t nc = 0;
		for (size_t c = 0; c < nbase; c++)
			if (c != 4 || multi)
				cols[nc++] = base_cols[c];
		for (size_t e = 0; e < nev; e++)
			cols[nc++] = events[e];

		struct ocb_table *t;
		char id[64], *title = NULL;
		safe_id(id, sizeof id, "results_", x->rs.r[a].suite, k);
		if (asprintf(&title, "Suite %s: results", x->rs.r[a].suite) < 0) {
			rc = ocb_seterr(OCB_ENOMEM, "results table");
			goto out;
		}
		if ((rc = ocb_rctx_table(x, &t))) {
			free(title);
			goto out;
		}
		rc = ocb_table_init(t, id, title, nc, cols);
		free(title);
		if (rc) {
			ocb_rctx_table_drop(x);
			goto out;
		}
		for (size_t i = a; i < b; i++) {
			const struct ocb_rrow *r = &x->rs.r[i];
			const struct ocb_mceil *mc = ocb_mceil_find(x->mc, x->nmc, r->machine_id);
			size_t row, c = 0;
			if ((rc = ocb_table_add_row(t, &row)))
				goto out;
			ocb_table_text(t, row, c++, r->bench);
			ocb_table_text(t, row, c++, r->params);
			ocb_table_text(t, row, c++, r->variant);
			ocb_table_num(t, row, c++, r->threads, "%.0f");
			if (multi)
				ocb_table_text(t, row, c++, r->host);
			if (strcmp(r->status, "ok") != 0) {
				ocb_table_text(t, row, c++, r->status);
				c += 6;
			} else {
				ocb_table_num(t, row, c++, r->median, "%.4g");
				if (!isnan(r->ci_low) && !isnan(r->ci_high))
					ocb_table_printf(t, row, c, "[%.4g, %.4g]", r->ci_low, r->ci_high);
				c++;
				ocb_table_text(t, row, c++, r->unit);
				ocb_table_num(t, row, c++, ocb_rrow_gflops(r), "%.3g");
				ocb_table_num(t, row, c++, ocb_rrow_gbs(r), "%.3g");
				double f = ocb_rrow_roof_frac(r, mc);
				ocb_table_num(t, row, c++, isnan(f) ? NAN : 100 * f, "%.1f%%");
			}
			ocb_table_text(t, row, c++, r->bound);
			/* flagged at the source (collect/suspect.h): a marker here, why in the note */
			if (strcmp(r->status, "ok") == 0 && r->suspect[0]) {
				ocb_table_printf(t, row, c, "suspect [%zu]", ++nsus);
				if ((rc = note_add(&sus, &suslen, "[%zu] %s %s t=%d: %s. ", nsus,
						   r->bench, r->params, r->threads, r->suspect)))
					goto out;
			}
			c++;
			for (size_t e = 0; e < nev; e++, c++) {
				const struct ocb_sel_counter *v = find_cval(cv, ncv, r->id, events[e]);
				if (v && v->available)
					ocb_table_num(t, row, c, v->value, "%.4g");
				else
					ocb_table_text(t, row, c, v ? "n/a" : "");
			}
		}
		const char *cnote = nev ? "Counters are per repetition of the timed region; "
					  "n/a: not available on this machine."
					: "Timing only: no counters were available.";
		if (sus) {
			char *full = NULL;
			if (asprintf(&full, "%s Suspect results (ok, but flagged when measured): %s",
				     cnote, sus) < 0) {
				rc = ocb_seterr(OCB_ENOMEM, "results table");
				goto out;
			}
			rc = ocb_table_set_note(t, full);
			free(full);
		} else {
			rc = ocb_table_set_note(t, cnote);
		}
		free(sus);
		sus = NULL;
		suslen = 0;
		nsus = 0;
		if (rc)
			goto out;
		a = b;
	}
out:
	free(sus);
	free(cols);
	free(events);
	free(cv);
	return rc;
}
