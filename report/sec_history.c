/* sec_history: the history of the covered cases and a comparison with the run before.
 *
 * History (history.h): for every benchmark of the selected results, each covered case's
 * medians over the complete runs of its machine (the newest HIST_MAX), with change
 * points (E-Divisive means): runs, first and last median with their CI digits, the
 * change first -> last, and each change point (run, date, shift, p). A table only when
 * some case has two or more runs.
 * Compare (compare.h): each covered run against the run before it in its cases'
 * history (same machine): per case base and candidate median, ratio with its CI,
 * Mann-Whitney p and the verdict (coloured on the HTML page), as `ocbench compare`. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "compare.h"
#include "history.h"
#include "rctx.h"
#include "sigfig.h"

#define HIST_MAX 200   /* points per series: change points over the recent past */
#define MAX_PAIRS 4    /* comparisons shown */

struct pair {
	int64_t base, cand;
};

/* The covered result of series s, or NULL. */
static const struct ocb_rrow *covered(const struct ocb_rctx *x, const struct ocb_hist_series *s)
{
	for (size_t i = 0; i < x->rs.n; i++) {
		const struct ocb_rrow *r = &x->rs.r[i];
		if (!strcmp(r->status, "ok") && r->machine_id == s->machine_id &&
		    r->threads == s->threads && !strcmp(r->bench, s->bench) &&
		    !strcmp(r->variant, s->variant) && !strcmp(r->params ? r->params : "", s->params))
			return r;
	}
	return NULL;
}

/* "1.65 ms" for a median of series s (unit s/ms/us/ns scaled to 1-3 digits). */
static void median_text(const struct ocb_hist_series *s, const struct ocb_hist_point *p,
			char *buf, size_t len)
{
	double sec = ocb_unit_seconds(s->unit), scale = 1;
	char v[48];
	if (sec > 0) {
		const char *u = ocb_time_unit(p->median * sec, &scale);
		ocb_sigfig(p->median * sec * scale, p->ci_low * sec * scale, p->ci_high * sec * scale,
			   3, v, sizeof v);
		snprintf(buf, len, "%s %s", v, u);
	} else {
		ocb_sigfig(p->median, p->ci_low, p->ci_high, 3, v, sizeof v);
		snprintf(buf, len, "%s %s", v, s->unit);
	}
}

/* Records (base, cand): the point before the covered run in the series. */
static void add_pair(const struct ocb_hist_series *s, int64_t cand, struct pair *pairs, size_t *np)
{
	for (size_t k = 1; k < s->n; k++) {
		if (s->pt[k].run_id != cand)
			continue;
		for (size_t i = 0; i < *np; i++)
			if (pairs[i].cand == cand)
				return;
		if (*np < MAX_PAIRS)
			pairs[(*np)++] = (struct pair){s->pt[k - 1].run_id, cand};
		return;
	}
}

/* One row per covered series of h with >= 2 points. */
static int hist_rows(struct ocb_rctx *x, struct ocb_hist *h, struct ocb_table **t,
		     struct pair *pairs, size_t *np)
{
	static const char *const cols[] = {"case", "parameters", "machine", "runs", "first",
					   "last", "change", "change points"};
	int rc = OCB_OK;
	for (size_t i = 0; i < h->n && !rc; i++) {
		struct ocb_hist_series *s = &h->s[i];
		const struct ocb_rrow *r = covered(x, s);
		if (!r || s->n < 2)
			continue;
		add_pair(s, r->run_id, pairs, np);
		if (!*t) {
			if ((rc = ocb_rctx_table(x, t)))
				return rc;
			if ((rc = ocb_table_init(*t, "history", "History: median per run, change points",
						 8, cols))) {
				ocb_rctx_table_drop(x);
				*t = NULL;
				return rc;
			}
			(*t)->form = OCB_FORM_PAPER;
			(*t)->nkey = 2;
		}
		size_t row;
		char words[512], a[64], b[64], cps[512] = "";
		if ((rc = ocb_table_add_row(*t, &row)))
			return rc;
		ocb_params_words(s->params, words, sizeof words);
		snprintf(words + strlen(words), sizeof words - strlen(words), "%s%d thr",
			 words[0] ? ", " : "", s->threads);
		median_text(s, &s->pt[0], a, sizeof a);
		median_text(s, &s->pt[s->n - 1], b, sizeof b);
		size_t oc = 0;
		for (size_t k = 0; k < s->n && oc < sizeof cps; k++)
			if (s->pt[k].change)
				oc += (size_t)snprintf(cps + oc, sizeof cps - oc,
						       "%srun %lld %.10s %+.0f%% (p %.2g)", oc ? "; " : "",
						       (long long)s->pt[k].run_id, s->pt[k].started_at,
						       100 * s->pt[k].shift, s->pt[k].p);
		ocb_table_printf(*t, row, 0, "%s %s", s->bench, s->variant);
		ocb_table_text(*t, row, 1, words);
		ocb_table_text(*t, row, 2, s->host);
		ocb_table_num(*t, row, 3, (double)s->n, "%.0f");
		ocb_table_text(*t, row, 4, a);
		ocb_table_text(*t, row, 5, b);
		double ch = s->pt[0].median > 0 ? 100 * (s->pt[s->n - 1].median / s->pt[0].median - 1)
						: NAN;
		ocb_table_num(*t, row, 6, ch, "%+.1f%%");
		rc = ocb_table_text(*t, row, 7, cps[0] ? cps : "none");
	}
	return rc;
}

/* The comparison of pair p as a table. */
static int compare_table(struct ocb_rctx *x, const struct pair *p, size_t k)
{
	static const char *const cols[] = {"case", "parameters", "base", "cand", "ratio",
					   "95% CI", "p", "verdict"};
	struct ocb_cmp c;
	struct ocb_cmp_opts o;
	struct ocb_table *t = NULL;
	char id[32], title[256];
	ocb_cmp_defaults(&o);
	int rc = ocb_cmp_runs(x->db, p->base, p->cand, &o, &c);
	if (rc)
		return rc == OCB_ENOMEM ? rc : OCB_OK; /* nothing to compare: no table */
	snprintf(id, sizeof id, "compare_%zu", k);
	snprintf(title, sizeof title, "Compare: run %lld (%.8s) against the run before, %lld (%.8s), on %s",
		 (long long)p->cand, c.cand.uuid, (long long)p->base, c.base.uuid, c.cand_host);
	if (!c.n || (rc = ocb_rctx_table(x, &t)))
		goto out;
	if ((rc = ocb_table_init(t, id, title, 8, cols))) {
		ocb_rctx_table_drop(x);
		goto out;
	}
	t->form = OCB_FORM_PAPER;
	t->nkey = 2;
	for (size_t i = 0; i < c.n && !rc; i++) {
		const struct ocb_cmp_case *cc = &c.c[i];
		size_t row;
		char words[512];
		if ((rc = ocb_table_add_row(t, &row)))
			break;
		ocb_params_words(cc->params, words, sizeof words);
		snprintf(words + strlen(words), sizeof words - strlen(words), "%s%d thr",
			 words[0] ? ", " : "", cc->threads);
		ocb_table_printf(t, row, 0, "%s %s", cc->bench, cc->variant);
		ocb_table_text(t, row, 1, words);
		/* times in a unit that reads (the number, for sorting, stays in cc's unit) */
		double sec = ocb_unit_seconds(cc->unit), scale = 1;
		const char *u = sec > 0 ? ocb_time_unit(cc->base_median * sec, &scale) : cc->unit;
		if (sec <= 0)
			sec = 1;
		ocb_table_num(t, row, 2, cc->base_median, "%.4g");
		ocb_table_printf(t, row, 2, "%.4g %s", cc->base_median * sec * scale, u);
		ocb_table_num(t, row, 3, cc->cand_median, "%.4g");
		ocb_table_printf(t, row, 3, "%.4g %s", cc->cand_median * sec * scale, u);
		ocb_table_num(t, row, 4, cc->ratio, "%.3f");
		if (!isnan(cc->ratio_lo))
			ocb_table_printf(t, row, 5, "[%.3f, %.3f]", cc->ratio_lo, cc->ratio_hi);
		ocb_table_num(t, row, 6, cc->p, "%.2g");
		rc = ocb_table_text(t, row, 7, ocb_verdict_name(cc->verdict));
	}
	if (!rc) {
		char note[256];
		snprintf(note, sizeof note, "Ratio cand / base of the medians; verdicts as ocbench "
			 "compare: threshold %.0f%%, alpha %.2g (Mann-Whitney U on the samples); "
			 "geometric mean of the ratios %.3f.", 100 * o.threshold, o.alpha, c.geomean);
		rc = ocb_table_set_note(t, note);
	}
out:
	ocb_cmp_release(&c);
	return rc;
}

int ocb_rsec_history(struct ocb_rctx *x)
{
	struct ocb_table *t = NULL;
	struct pair pairs[MAX_PAIRS];
	size_t np = 0;
	int rc = OCB_OK;
	for (size_t i = 0; i < x->rs.n && !rc; i++) {
		const struct ocb_rrow *r = &x->rs.r[i];
		int first = strcmp(r->status, "ok") == 0;
		for (size_t j = 0; j < i && first; j++)
			first = strcmp(x->rs.r[j].bench, r->bench) != 0;
		if (!first)
			continue;
		struct ocb_hist h = {0};
		rc = ocb_hist_load(x->db, r->bench, &x->o->sel, &h);
		if (rc == OCB_ENOENT) {
			rc = OCB_OK;
			continue;
		}
		for (size_t k = 0; k < h.n && !rc; k++) {
			struct ocb_hist_series *s = &h.s[k];
			if (s->n > HIST_MAX) { /* the recent past only */
				memmove(s->pt, s->pt + (s->n - HIST_MAX), HIST_MAX * sizeof *s->pt);
				s->n = HIST_MAX;
			}
		}
		if (!rc)
			rc = ocb_hist_detect(&h, NULL);
		if (!rc)
			rc = hist_rows(x, &h, &t, pairs, &np);
		ocb_hist_release(&h);
	}
	if (!rc && t)
		rc = ocb_table_set_note(t, "Medians of the complete runs on the machine, oldest first "
					   "(the newest 200); change points by E-Divisive means with a "
					   "permutation test, as ocbench history.");
	for (size_t k = 0; k < np && !rc; k++)
		rc = compare_table(x, &pairs[k], k);
	return rc;
}
