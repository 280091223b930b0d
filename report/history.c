#define _GNU_SOURCE
#include "history.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "escape.h"
#include "gnuplot.h"
#include "../db/pairs.h"

void ocb_hist_release(struct ocb_hist *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n; i++) {
		free(h->s[i].params);
		free(h->s[i].pt);
	}
	free(h->s);
	h->s = NULL;
	h->n = 0;
}

/* Appends history row h to the series it belongs to (a new one when its params,
 * variant, threads or machine differ from the last series'). */
static int add_point(struct ocb_hist *out, const char *bench, const struct ocb_history_row *h,
		     size_t *cap)
{
	struct ocb_hist_series *cur = out->n ? &out->s[out->n - 1] : NULL;
	if (!cur || strcmp(cur->params, h->params) || strcmp(cur->variant, h->variant) ||
	    cur->threads != h->threads || cur->machine_id != h->machine_id) {
		struct ocb_hist_series *ns = realloc(out->s, (out->n + 1) * sizeof *ns);
		if (!ns)
			return ocb_seterr(OCB_ENOMEM, "history");
		out->s = ns;
		cur = &out->s[out->n++];
		memset(cur, 0, sizeof *cur);
		*cap = 0;
		snprintf(cur->bench, sizeof cur->bench, "%s", bench);
		snprintf(cur->variant, sizeof cur->variant, "%s", h->variant);
		snprintf(cur->host, sizeof cur->host, "%s", h->host);
		snprintf(cur->unit, sizeof cur->unit, "%s", h->unit);
		cur->threads = h->threads;
		cur->machine_id = h->machine_id;
		if (!(cur->params = strdup(h->params)))
			return ocb_seterr(OCB_ENOMEM, "history");
	}
	if (cur->n == *cap) {
		*cap = *cap ? 2 * *cap : 32;
		struct ocb_hist_point *np = realloc(cur->pt, *cap * sizeof *np);
		if (!np)
			return ocb_seterr(OCB_ENOMEM, "history");
		cur->pt = np;
	}
	struct ocb_hist_point *p = &cur->pt[cur->n++];
	memset(p, 0, sizeof *p);
	p->run_id = h->run_id;
	snprintf(p->started_at, sizeof p->started_at, "%s", h->started_at);
	snprintf(p->label, sizeof p->label, "%s", h->label);
	p->median = h->median;
	p->ci_low = h->ci_low;
	p->ci_high = h->ci_high;
	p->p = NAN;
	p->shift = NAN;
	return OCB_OK;
}

int ocb_hist_load(struct ocb_store *db, const char *case_spec, const struct ocb_sel *sel,
		  struct ocb_hist *out)
{
	char bench[64], *canon = NULL;
	struct ocb_history_row *rows = NULL;
	size_t nrows = 0, cap = 0;
	cJSON *pj = NULL;
	int rc = OCB_OK;

	memset(out, 0, sizeof *out);
	const char *colon = strchr(case_spec, ':');
	size_t blen = colon ? (size_t)(colon - case_spec) : strlen(case_spec);
	if (!blen || blen >= sizeof bench)
		return ocb_seterr(OCB_EINVAL, "case '%s': want BENCH or BENCH:{params}", case_spec);
	memcpy(bench, case_spec, blen);
	bench[blen] = '\0';
	if (colon) {
		pj = cJSON_Parse(colon + 1);
		if (!pj || !cJSON_IsObject(pj)) {
			rc = ocb_seterr(OCB_EINVAL, "case '%s': the params after ':' are not a JSON object",
					case_spec);
			goto out;
		}
		if (!(canon = ocb_json_canonical(pj))) {
			rc = ocb_seterr(OCB_ENOMEM, "case params");
			goto out;
		}
	}
	if ((rc = ocb_db_history(db, bench, canon, sel ? sel->machine : NULL,
				 sel ? sel->nmachines : 0, &rows, &nrows)))
		goto out;
	for (size_t i = 0; i < nrows && !rc; i++)
		rc = add_point(out, bench, &rows[i], &cap);
	if (!rc && !out->n)
		rc = ocb_seterr(OCB_ENOENT, "no complete run has case '%s'", case_spec);
out:
	if (rc)
		ocb_hist_release(out);
	ocb_history_rows_release(rows, nrows);
	free(canon);
	cJSON_Delete(pj);
	return rc;
}

int ocb_hist_detect(struct ocb_hist *h, const struct ocb_cp_opts *o)
{
	double *z = NULL, *pv = NULL;
	size_t *cp = NULL;
	int rc = OCB_OK;
	for (size_t i = 0; i < h->n && !rc; i++) {
		struct ocb_hist_series *s = &h->s[i];
		free(z);
		free(pv);
		free(cp);
		z = malloc((s->n + 1) * sizeof *z);
		pv = malloc((s->n + 1) * sizeof *pv);
		cp = malloc((s->n + 1) * sizeof *cp);
		if (!z || !pv || !cp) {
			rc = ocb_seterr(OCB_ENOMEM, "history");
			break;
		}
		for (size_t k = 0; k < s->n; k++)
			z[k] = s->pt[k].median;
		size_t ncp = 0;
		if ((rc = ocb_cp_edivisive(z, s->n, o, cp, pv, &ncp)))
			break;
		s->ncp = ncp;
		for (size_t c = 0; c < ncp; c++) {
			size_t t = cp[c];
			size_t a = c ? cp[c - 1] : 0, b = c + 1 < ncp ? cp[c + 1] : s->n;
			double before = 0, after = 0;
			for (size_t k = a; k < t; k++)
				before += z[k];
			for (size_t k = t; k < b; k++)
				after += z[k];
			before /= (double)(t - a);
			after /= (double)(b - t);
			s->pt[t].change = 1;
			s->pt[t].p = pv[c];
			s->pt[t].shift = before != 0 ? after / before - 1 : NAN;
		}
	}
	free(z);
	free(pv);
	free(cp);
	return rc;
}

/* The other side of point k when k is one run of an `ocbench ab` pair (labels
 * "ab-<pair8>-base" / "ab-<pair8>-cand", cli/ab_store.c) and its partner is in the
 * series next to it; else NULL. */
static const struct ocb_hist_point *ab_partner(const struct ocb_hist_series *s, size_t k)
{
	const char *l = s->pt[k].label;
	if (strncmp(l, "ab-", 3) != 0 || strlen(l) != 16)
		return NULL;
	for (size_t j = k ? k - 1 : k + 1; j <= k + 1 && j < s->n; j += 2)
		if (strncmp(s->pt[j].label, l, 12) == 0 && strcmp(s->pt[j].label, l) != 0)
			return &s->pt[j];
	return NULL;
}

int ocb_hist_print(const struct ocb_hist *h, FILE *f)
{
	for (size_t i = 0; i < h->n; i++) {
		const struct ocb_hist_series *s = &h->s[i];
		fprintf(f, "%s %s variant %s, %d thread(s), on %s: %zu runs, %zu change point(s)\n",
			s->bench, s->params, s->variant[0] ? s->variant : "-", s->threads, s->host,
			s->n, s->ncp);
		fprintf(f, "  %6s  %-20s  %-16s  %12s  %-25s  %s\n", "run", "started", "label",
			"median", "95% CI", "change");
		for (size_t k = 0; k < s->n; k++) {
			const struct ocb_hist_point *p = &s->pt[k];
			char ci[64], ch[64] = "";
			snprintf(ci, sizeof ci, "[%.4g, %.4g]", p->ci_low, p->ci_high);
			if (p->change)
				snprintf(ch, sizeof ch, "<- %+.1f%% (p %.3f)", 100 * p->shift, p->p);
			const struct ocb_hist_point *o = ab_partner(s, k);
			fprintf(f, "  %6lld  %-20s  %-16.16s  %10.4g%-2.2s  %-25s  %s", (long long)p->run_id,
				p->started_at, p->label, p->median, s->unit, ci, ch);
			if (o)
				fprintf(f, "%s(A/B pair with run %lld)", ch[0] ? " " : "",
					(long long)o->run_id);
			fputc('\n', f);
		}
		fputc('\n', f);
	}
	return ferror(f) ? ocb_seterr(OCB_EIO, "history: write failed") : OCB_OK;
}

static void num(cJSON *o, const char *k, double v)
{
	if (isnan(v) || isinf(v))
		cJSON_AddNullToObject(o, k);
	else
		cJSON_AddNumberToObject(o, k, v);
}

cJSON *ocb_hist_json(const struct ocb_hist *h)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; arr && i < h->n; i++) {
		const struct ocb_hist_series *s = &h->s[i];
		cJSON *o = cJSON_CreateObject(), *pts;
		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			goto fail;
		}
		cJSON_AddStringToObject(o, "bench", s->bench);
		cJSON_AddStringToObject(o, "params", s->params);
		cJSON_AddStringToObject(o, "variant", s->variant);
		cJSON_AddNumberToObject(o, "threads", s->threads);
		cJSON_AddStringToObject(o, "machine", s->host);
		cJSON_AddStringToObject(o, "unit", s->unit);
		cJSON_AddNumberToObject(o, "change_points", (double)s->ncp);
		if (!(pts = cJSON_AddArrayToObject(o, "points")))
			goto fail;
		for (size_t k = 0; k < s->n; k++) {
			const struct ocb_hist_point *p = &s->pt[k];
			cJSON *e = cJSON_CreateObject();
			if (!e || !cJSON_AddItemToArray(pts, e)) {
				cJSON_Delete(e);
				goto fail;
			}
			cJSON_AddNumberToObject(e, "run", (double)p->run_id);
			cJSON_AddStringToObject(e, "started_at", p->started_at);
			cJSON_AddStringToObject(e, "label", p->label);
			num(e, "median", p->median);
			num(e, "ci_low", p->ci_low);
			num(e, "ci_high", p->ci_high);
			cJSON_AddBoolToObject(e, "change", p->change);
			if (p->change) {
				num(e, "p", p->p);
				num(e, "shift", p->shift);
			}
		}
	}
	return arr;
fail:
	cJSON_Delete(arr);
	return NULL;
}

int ocb_hist_plot(const struct ocb_hist *h, const char *dir, int *drawn)
{
	*drawn = 0;
	if (!ocb_gp_available())
		return ocb_seterr(OCB_EUNAVAIL, "gnuplot not found in PATH: history plots skipped");
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return ocb_seterr(OCB_EPERM, "%s: cannot create: %s", dir, strerror(errno));
	for (size_t i = 0; i < h->n; i++) {
		const struct ocb_hist_series *s = &h->s[i];
		struct ocb_gp gp;
		char base[48], *title = NULL;
		snprintf(base, sizeof base, "history_%zu", i);
		int rc = ocb_gp_open(&gp, dir, base);
		if (rc)
			return rc;
		if (asprintf(&title, "%s %s (%s, %d thr) on %s", s->bench, s->params, s->variant,
			     s->threads, s->host) < 0) {
			ocb_gp_abort(&gp);
			return ocb_seterr(OCB_ENOMEM, "history plot");
		}
		FILE *f = gp.f;
		fputs("set grid\nset key top left\nset xlabel 'run (time order)'\nset title ", f);
		ocb_esc_gnuplot(f, title);
		fputs("\nset ylabel ", f);
		char yl[64];
		snprintf(yl, sizeof yl, "median (%s)", s->unit);
		ocb_esc_gnuplot(f, yl);
		fputs("\n$M << EOD\n", f);
		for (size_t k = 0; k < s->n; k++) {
			const struct ocb_hist_point *p = &s->pt[k];
			fprintf(f, "%zu %.9g %.9g %.9g\n", k, p->median,
				isnan(p->ci_low) ? p->median : p->ci_low,
				isnan(p->ci_high) ? p->median : p->ci_high);
		}
		/* segment means as a step line */
		fputs("EOD\n$S << EOD\n", f);
		for (size_t a = 0; a < s->n;) {
			size_t b = a + 1;
			while (b < s->n && !s->pt[b].change)
				b++;
			double mean = 0;
			for (size_t k = a; k < b; k++)
				mean += s->pt[k].median;
			mean /= (double)(b - a);
			fprintf(f, "%.9g %.9g\n%.9g %.9g\n\n", (double)a - 0.5, mean, (double)b - 0.5, mean);
			a = b;
		}
		fputs("EOD\n", f);
		int ncp = 0;
		for (size_t k = 0; k < s->n; k++)
			if (s->pt[k].change)
				fprintf(f, "set arrow %d from %.1f, graph 0 to %.1f, graph 1 nohead dt 2 lc rgb 'red'\n",
					++ncp, (double)k - 0.5, (double)k - 0.5);
		rc = ocb_gp_finish(&gp, "plot $M using 1:2:3:4 with yerrorbars pt 7 ps 0.8 title 'median (95% CI)', "
					 "$S using 1:2 with lines lw 2 lc rgb 'red' title 'segment mean (E-Divisive)'");
		free(title);
		if (rc)
			return rc;
		(*drawn)++;
	}
	return OCB_OK;
}
