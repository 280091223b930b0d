/* sec_results: one table per suite of the selected results: case, params, variant,
 * threads, (machine,) median with its 95% CI, GFLOP/s, GB/s, the fraction of the
 * roofline bound, and every counter that was available for the suite (per repetition).
 * Counters come from one query over the selection. This is the long form (CSV, JSON,
 * the HTML page's data view); the paper tables are sec_kernels.c's pivots. */
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

/* One suite's results x->rs.r[a..b) and the counters of the selection. */
struct suite_ctx {
	size_t a, b;
	const struct ocb_sel_counter *cv;
	size_t ncv;
	const char **events;    /* the suite's available counter events (borrowed from cv) */
	size_t nev;
	int multi;              /* several machines: a machine column */
	char *sus;              /* the suite's suspect reasons, for its note */
	size_t suslen, nsus;
};

/* The suite's available counter events, in first-seen order (cv is sorted by result). */
static void suite_events(const struct ocb_rctx *x, struct suite_ctx *c)
{
	c->nev = 0;
	for (size_t i = 0; i < c->ncv; i++) {
		if (!c->cv[i].available)
			continue;
		int mine = 0;
		for (size_t r = c->a; r < c->b && !mine; r++)
			mine = x->rs.r[r].id == c->cv[i].result_id;
		if (!mine)
			continue;
		int seen = 0;
		for (size_t e = 0; e < c->nev && !seen; e++)
			seen = strcmp(c->events[e], c->cv[i].event) == 0;
		if (!seen)
			c->events[c->nev++] = c->cv[i].event;
	}
}

/* The suite's table (k-th suite), columns: the fixed ones (machine only when several)
 * and one per counter event. */
static int suite_table(struct ocb_rctx *x, const struct suite_ctx *c, size_t k,
		       struct ocb_table **t)
{
	static const char *base_cols[] = {"case", "params", "variant", "threads", "machine",
					  "median", "95% CI", "unit", "GFLOP/s", "GB/s",
					  "roofline", "bound", "flag"};
	size_t nbase = sizeof base_cols / sizeof *base_cols, nc = 0;
	const char **cols = calloc(nbase + c->nev, sizeof *cols);
	const char *suite = x->rs.r[c->a].suite;
	char id[64], *title = NULL;
	int rc;
	if (!cols || asprintf(&title, "Suite %s: results", suite) < 0) {
		free(cols);
		return ocb_seterr(OCB_ENOMEM, "results table");
	}
	for (size_t i = 0; i < nbase; i++)
		if (i != 4 || c->multi)
			cols[nc++] = base_cols[i];
	for (size_t e = 0; e < c->nev; e++)
		cols[nc++] = c->events[e];
	safe_id(id, sizeof id, "results_", suite, k);
	if (!(rc = ocb_rctx_table(x, t)) && (rc = ocb_table_init(*t, id, title, nc, cols)))
		ocb_rctx_table_drop(x);
	else if (!rc)
		(*t)->form = OCB_FORM_LONG; /* the paper form: sec_kernels.c's pivots */
	free(title);
	free(cols);
	return rc;
}

/* One row of result r: case, figures (or its status), bound, suspect flag, counters. */
static int result_row(struct ocb_rctx *x, struct suite_ctx *c, struct ocb_table *t,
		      const struct ocb_rrow *r)
{
	const struct ocb_mceil *mc = ocb_mceil_find(x->mc, x->nmc, r->machine_id);
	size_t row, col = 0;
	int rc;
	if ((rc = ocb_table_add_row(t, &row)))
		return rc;
	ocb_table_text(t, row, col++, r->bench);
	ocb_table_text(t, row, col++, r->params);
	ocb_table_text(t, row, col++, r->variant);
	ocb_table_num(t, row, col++, r->threads, "%.0f");
	if (c->multi)
		ocb_table_text(t, row, col++, r->host);
	if (strcmp(r->status, "ok") != 0) {
		ocb_table_text(t, row, col++, r->status);
		col += 6;
	} else {
		ocb_table_num(t, row, col++, r->median, "%.4g");
		if (!isnan(r->ci_low) && !isnan(r->ci_high))
			ocb_table_printf(t, row, col, "[%.4g, %.4g]", r->ci_low, r->ci_high);
		col++;
		ocb_table_text(t, row, col++, r->unit);
		ocb_table_num(t, row, col++, ocb_rrow_gflops(r), "%.3g");
		ocb_table_num(t, row, col++, ocb_rrow_gbs(r), "%.3g");
		double f = ocb_rrow_roof_frac(r, mc);
		ocb_table_num(t, row, col++, isnan(f) ? NAN : 100 * f, "%.1f%%");
	}
	ocb_table_text(t, row, col++, r->bound);
	/* flagged at the source (collect/suspect.h): a marker here, why in the note */
	if (strcmp(r->status, "ok") == 0 && r->suspect[0]) {
		ocb_table_printf(t, row, col, "suspect [%zu]", ++c->nsus);
		if ((rc = note_add(&c->sus, &c->suslen, "[%zu] %s %s t=%d: %s. ", c->nsus, r->bench,
				   r->params, r->threads, r->suspect)))
			return rc;
	}
	col++;
	for (size_t e = 0; e < c->nev; e++, col++) {
		const struct ocb_sel_counter *v = find_cval(c->cv, c->ncv, r->id, c->events[e]);
		if (v && v->available)
			ocb_table_num(t, row, col, v->value, "%.4g");
		else
			ocb_table_text(t, row, col, v ? "n/a" : "");
	}
	return OCB_OK;
}

/* The table's note: what the counters mean, and the suspect results' reasons. */
static int suite_note(const struct suite_ctx *c, struct ocb_table *t)
{
	const char *cnote = c->nev ? "Counters are per repetition of the timed region; "
				     "n/a: not available on this machine."
				   : "Timing only: no counters were available.";
	if (!c->sus)
		return ocb_table_set_note(t, cnote);
	char *full = NULL;
	if (asprintf(&full, "%s Suspect results (ok, but flagged when measured): %s", cnote,
		     c->sus) < 0)
		return ocb_seterr(OCB_ENOMEM, "results table");
	int rc = ocb_table_set_note(t, full);
	free(full);
	return rc;
}

int ocb_rsec_results(struct ocb_rctx *x)
{
	struct ocb_sel_counter *cv = NULL;
	struct suite_ctx c;
	size_t ncv = 0;
	int rc = ocb_sel_counters(x->db, &x->o->sel, &cv, &ncv);
	if (rc)
		return rc;
	memset(&c, 0, sizeof c);
	c.cv = cv;
	c.ncv = ncv;
	if (!(c.events = calloc(ncv + 1, sizeof *c.events))) {
		rc = ocb_seterr(OCB_ENOMEM, "results table");
		goto out;
	}
	for (size_t i = 1; i < x->rs.n; i++)
		c.multi |= x->rs.r[i].machine_id != x->rs.r[0].machine_id;
	for (size_t k = 0; c.a < x->rs.n && !rc; k++) {
		struct ocb_table *t;
		c.b = c.a;
		while (c.b < x->rs.n && strcmp(x->rs.r[c.b].suite, x->rs.r[c.a].suite) == 0)
			c.b++;
		suite_events(x, &c);
		if ((rc = suite_table(x, &c, k, &t)))
			break;
		for (size_t i = c.a; i < c.b && !rc; i++)
			rc = result_row(x, &c, t, &x->rs.r[i]);
		if (!rc)
			rc = suite_note(&c, t);
		free(c.sus);
		c.sus = NULL;
		c.suslen = c.nsus = 0;
		c.a = c.b;
	}
out:
	free(c.sus);
	free(c.events);
	free(cv);
	return rc;
}
