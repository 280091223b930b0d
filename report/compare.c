#define _GNU_SOURCE
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../db/pairs.h"
#include "../db/store_query.h"
#include "mwu.h"
#include "rdata.h"

void ocb_cmp_defaults(struct ocb_cmp_opts *o)
{
	o->threshold = 0.05;
	o->alpha = 0.01;
	o->noise_floor = 0.01;
	o->history = 1;
}

const char *ocb_verdict_name(enum ocb_verdict v)
{
	static const char *names[] = {"same", "noise", "faster", "slower", "n/a"};
	return v <= OCB_V_NA ? names[v] : "?";
}

int ocb_cmp_resolve(struct ocb_store *s, const char *spec, int64_t *run_id)
{
	int rc = ocb_store_run_resolve(s, spec, run_id);
	if (rc != OCB_ENOENT)
		return rc;
	return ocb_db_machine_latest_run(s, spec, run_id);
}

void ocb_cmp_release(struct ocb_cmp *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->c[i].params);
	free(c->c);
	c->c = NULL;
	c->n = 0;
	for (int side = 0; side < 2; side++) {
		ocb_case_rows_release(c->only[side], c->nonly[side]);
		c->only[side] = NULL;
		c->nonly[side] = 0;
	}
}

/* Warnings about what is being compared: the same run twice, quick against full. */
static void add_warnings(struct ocb_cmp *c)
{
	if (c->base_run == c->cand_run)
		snprintf(c->warn[c->nwarn++], sizeof c->warn[0],
			 "comparing run %lld with itself: every case is 'same' by construction",
			 (long long)c->base_run);
	if (c->base.quick >= 0 && c->cand.quick >= 0 && c->base.quick != c->cand.quick)
		snprintf(c->warn[c->nwarn++], sizeof c->warn[0],
			 "base run %lld is %s, cand run %lld is %s: their sizes and budgets differ "
			 "(%zu + %zu cases not compared)",
			 (long long)c->base_run, ocb_run_mode(&c->base), (long long)c->cand_run,
			 ocb_run_mode(&c->cand), c->nonly[0], c->nonly[1]);
	if (c->nonly[0] + c->nonly[1] && c->nwarn < OCB_CMP_MAXWARN)
		snprintf(c->warn[c->nwarn++], sizeof c->warn[0],
			 "%zu case(s) in base only and %zu in cand only were not compared (listed "
			 "below)",
			 c->nonly[0], c->nonly[1]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Between-run noise of case k: 3 sigma (sigma = 1.4826 MAD) of the log medians of its
 * earlier runs on the base machine `bm` (not the candidate run), as a relative change;
 * 0 with fewer than 3 runs. */
static int history_band(struct ocb_store *db, int64_t bm, int64_t cand,
			const struct ocb_cmp_case *k, double *band, int *nhist)
{
	double v[64], dev[64];
	int n = 0;
	int rc = ocb_db_case_medians(db, bm, k->bench, k->params, k->threads, k->variant, cand, v,
				     64, &n);
	*band = 0.0;
	*nhist = n;
	if (rc || n < 3)
		return rc;
	for (int i = 0; i < n; i++)
		v[i] = log(v[i]);
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
	for (int i = 0; i < n; i++)
		dev[i] = fabs(v[i] - med);
	qsort(dev, (size_t)n, sizeof *dev, cmp_double);
	double mad = n % 2 ? dev[n / 2] : 0.5 * (dev[n / 2 - 1] + dev[n / 2]);
	*band = exp(3.0 * 1.4826 * mad) - 1.0;
	return OCB_OK;
}

/* What compare keeps apart from the cases while it judges them. */
struct cmp_work {
	struct ocb_store *db;
	int64_t bm;                 /* the base run's machine */
	struct ocb_mceil mc[2];     /* ceilings of the base and cand machines */
	double *bs, *cs;            /* samples of the current pair */
	size_t bcap, ccap;
	double logsum;
	size_t nlog;
};

/* The case of pair p, appended to out->c[out->n] (room for it is there): ratios, the
 * samples' Mann-Whitney U test and the verdict against the threshold band. */
static int judge_pair(struct cmp_work *w, const struct ocb_result_pair *p, struct ocb_cmp *out)
{
	struct ocb_cmp_case *k = &out->c[out->n];
	int rc;
	memset(k, 0, sizeof *k);
	snprintf(k->bench, sizeof k->bench, "%s", p->b.bench);
	if (!(k->params = strdup(p->b.params)))
		return ocb_seterr(OCB_ENOMEM, "compare");
	out->n++;
	snprintf(k->variant, sizeof k->variant, "%s", p->b.variant);
	k->threads = p->b.threads;
	snprintf(k->unit, sizeof k->unit, "%s", p->b.unit);
	k->base_median = p->b.median;
	k->cand_median = p->c.median;
	k->base_roof = ocb_rrow_roof_frac(&p->b, &w->mc[0]);
	k->cand_roof = ocb_rrow_roof_frac(&p->c, &w->mc[1]);
	snprintf(k->base_suspect, sizeof k->base_suspect, "%s", p->b.suspect);
	snprintf(k->cand_suspect, sizeof k->cand_suspect, "%s", p->c.suspect);
	/* convert the candidate to the base's unit if they differ (both times) */
	double scale = 1;
	double us_b = ocb_unit_seconds(k->unit), us_c = ocb_unit_seconds(p->c.unit);
	if (us_b > 0 && us_c > 0)
		scale = us_c / us_b;
	double blo = p->b.ci_low, bhi = p->b.ci_high, clo = p->c.ci_low, chi = p->c.ci_high;
	k->ratio = k->base_median > 0 ? scale * k->cand_median / k->base_median : NAN;
	k->ratio_lo = bhi > 0 ? scale * clo / bhi : NAN;
	k->ratio_hi = blo > 0 ? scale * chi / blo : NAN;

	if ((rc = ocb_db_samples(w->db, p->base_id, &w->bs, &w->bcap, &k->nbase)) ||
	    (rc = ocb_db_samples(w->db, p->cand_id, &w->cs, &w->ccap, &k->ncand)))
		return rc;
	for (size_t i = 0; i < k->ncand; i++)
		w->cs[i] *= scale;
	struct ocb_mwu m;
	if ((rc = ocb_mwu_test(w->bs, k->nbase, w->cs, k->ncand, &m)))
		return rc;
	k->u = m.u;
	k->p = m.p;
	double floor = fmax(out->opts.threshold, out->opts.noise_floor), hband = 0;
	if (out->opts.history && !out->cross_machine) {
		if ((rc = history_band(w->db, w->bm, out->cand_run, k, &hband, &k->nhist)))
			return rc;
		floor = fmax(floor, hband);
	}
	k->band = floor;
	int lower_is_better = us_b > 0;
	if (isnan(k->p) || isnan(k->ratio))
		k->verdict = OCB_V_NA;
	else if (k->p >= out->opts.alpha)
		k->verdict = OCB_V_SAME;
	/* A change counts only when the whole ratio CI clears the threshold band: the
	 * medians of two runs on a shared VM drift by several percent between runs
	 * (REFERENCE.md §6), which the within-run samples of one run cannot show. */
	else if (k->ratio_lo > 1 + floor)
		k->verdict = lower_is_better ? OCB_V_SLOWER : OCB_V_FASTER;
	else if (k->ratio_hi < 1 - floor)
		k->verdict = lower_is_better ? OCB_V_FASTER : OCB_V_SLOWER;
	else
		k->verdict = OCB_V_NOISE;
	out->count[k->verdict]++;
	if (k->ratio > 0) {
		w->logsum += log(k->ratio);
		w->nlog++;
	}
	return OCB_OK;
}

/* The runs, their hosts and labels, and both machines' ceilings. */
static int cmp_setup(struct cmp_work *w, int64_t base, int64_t cand, struct ocb_cmp *out)
{
	int rc;
	if ((rc = ocb_run_load(w->db, base, &out->base)) ||
	    (rc = ocb_run_load(w->db, cand, &out->cand)))
		return rc;
	snprintf(out->base_host, sizeof out->base_host, "%.63s", out->base.machine_host);
	snprintf(out->cand_host, sizeof out->cand_host, "%.63s", out->cand.machine_host);
	snprintf(out->base_label, sizeof out->base_label, "%.63s", out->base.label);
	snprintf(out->cand_label, sizeof out->cand_label, "%.63s", out->cand.label);
	w->bm = out->base.machine_id;
	out->cross_machine = out->base.machine_id != out->cand.machine_id;
	int64_t ids[2] = {out->base.machine_id, out->cand.machine_id};
	return ocb_mceil_load(w->db, ids, 2, w->mc);
}

int ocb_cmp_runs(struct ocb_store *db, int64_t base, int64_t cand, const struct ocb_cmp_opts *o,
		 struct ocb_cmp *out)
{
	struct cmp_work w;
	struct ocb_result_pair *pairs = NULL;
	size_t np = 0;
	int64_t *used = NULL, last_b = -1;
	size_t nused = 0;
	int rc;

	memset(out, 0, sizeof *out);
	memset(&w, 0, sizeof w);
	w.db = db;
	if (o)
		out->opts = *o;
	else
		ocb_cmp_defaults(&out->opts);
	out->base_run = base;
	out->cand_run = cand;
	out->geomean = NAN;
	if ((rc = cmp_setup(&w, base, cand, out)) ||
	    (rc = ocb_db_result_pairs(db, base, cand, &pairs, &np)))
		goto out;
	/* Pairs of the same case; same variant first, each result used once. */
	if (!(used = calloc(np + 1, sizeof *used)) || !(out->c = calloc(np + 1, sizeof *out->c))) {
		rc = ocb_seterr(OCB_ENOMEM, "compare");
		goto out;
	}
	for (size_t i = 0; i < np; i++) {
		int taken = pairs[i].base_id == last_b;
		for (size_t j = 0; j < nused && !taken; j++)
			taken = used[j] == pairs[i].cand_id;
		if (taken)
			continue;
		last_b = pairs[i].base_id;
		used[nused++] = pairs[i].cand_id;
		if ((rc = judge_pair(&w, &pairs[i], out)))
			goto out;
	}
	out->geomean = w.nlog ? exp(w.logsum / (double)w.nlog) : NAN;
	if ((rc = ocb_db_unpaired(db, base, cand, &out->only[0], &out->nonly[0])) ||
	    (rc = ocb_db_unpaired(db, cand, base, &out->only[1], &out->nonly[1])))
		goto out;
	add_warnings(out);
out:
	if (rc)
		ocb_cmp_release(out);
	ocb_mceil_release(&w.mc[0]);
	ocb_mceil_release(&w.mc[1]);
	ocb_result_pairs_release(pairs, np);
	free(used);
	free(w.bs);
	free(w.cs);
	return rc;
}

#define PARAMS_MAX 40 /* widest params column; longer params are cut visibly */

/* params as shown in the table: whole when it fits, else its head + "...[k]" where [k]
 * is its line in the legend under the table (*nlegend counts them). */
static const char *params_cell(const char *p, size_t width, int *nlegend, char *buf, size_t len)
{
	if (strlen(p) <= width)
		return p;
	char mark[16];
	int m = snprintf(mark, sizeof mark, "...[%d]", ++*nlegend);
	snprintf(buf, len, "%.*s%s", (int)(width - (size_t)m), p, mark);
	return buf;
}

static void print_run(FILE *f, const char *side, const struct ocb_run *r)
{
	fprintf(f, "%s: run %lld %.8s on %s%s%s%s, %s, %s, commit %s\n", side, (long long)r->id,
		r->uuid, r->machine_host, r->label[0] ? " (label " : "", r->label,
		r->label[0] ? ")" : "", r->shown, ocb_run_mode(r),
		r->git_sha[0] ? r->git_sha : "-");
}

static void print_only(const struct ocb_cmp *c, FILE *f)
{
	for (int side = 0; side < 2; side++) {
		if (!c->nonly[side])
			continue;
		fprintf(f, "\nin %s only (run %lld; no ok result of the case in the other run), "
			   "not compared: %zu\n",
			side ? "cand" : "base", (long long)(side ? c->cand_run : c->base_run),
			c->nonly[side]);
		for (size_t i = 0; i < c->nonly[side]; i++) {
			const struct ocb_case_row *o = &c->only[side][i];
			fprintf(f, "  %s %s threads=%d %s%s\n", o->bench, o->params, o->threads,
				o->variant, strcmp(o->status, "ok") ? o->status : "");
		}
	}
}

int ocb_cmp_print(const struct ocb_cmp *c, FILE *f)
{
	size_t pw = strlen("params"), bw = strlen("case");
	int nleg = 0;
	char cut[PARAMS_MAX + 1];
	for (size_t i = 0; i < c->n; i++) {
		size_t l = strlen(c->c[i].params), b = strlen(c->c[i].bench);
		pw = l > pw ? (l < PARAMS_MAX ? l : PARAMS_MAX) : pw;
		bw = b > bw ? b : bw;
	}
	for (int i = 0; i < c->nwarn; i++)
		fprintf(f, "warning: %s\n", c->warn[i]);
	print_run(f, "base", &c->base);
	print_run(f, "cand", &c->cand);
	fprintf(f, "threshold %.1f%%, alpha %g, Mann-Whitney U on raw samples; ratio = cand/base "
		   "median, CI from the medians' 95%% CIs;\nband = max(threshold, 1%% floor%s): the "
		   "whole ratio CI must clear it\n\n",
		100 * c->opts.threshold, c->opts.alpha,
		c->opts.history && !c->cross_machine ? ", 3 sigma of the case's earlier runs here" : "");
	fprintf(f, "%-*s %-*s %3s %11s %11s %7s %17s %9s %6s %-7s %-5s", (int)bw, "case", (int)pw,
		"params", "thr", "base", "cand", "ratio", "ratio CI", "p", "band", "verdict", "flag");
	if (c->cross_machine)
		fprintf(f, " %9s %9s", "roof base", "roof cand");
	fputc('\n', f);
	for (size_t i = 0; i < c->n; i++) {
		const struct ocb_cmp_case *k = &c->c[i];
		char ci[40];
		snprintf(ci, sizeof ci, "[%.3f, %.3f]", k->ratio_lo, k->ratio_hi);
		fprintf(f, "%-*s %-*s %3d %9.4g%-2.2s %9.4g%-2.2s %7.3f %17s %9.2g %5.1f%% %-7s",
			(int)bw, k->bench, (int)pw, params_cell(k->params, pw, &nleg, cut, sizeof cut),
			k->threads, k->base_median, k->unit, k->cand_median, k->unit, k->ratio, ci, k->p,
			100 * k->band, ocb_verdict_name(k->verdict));
		/* flagged at the source (collect/suspect.h): which side; reasons listed below */
		fprintf(f, " %-5s", k->base_suspect[0] && k->cand_suspect[0] ? "both!"
				    : k->base_suspect[0]			 ? "base!"
				    : k->cand_suspect[0]			 ? "cand!"
										 : "");
		if (c->cross_machine)
			fprintf(f, " %8.1f%% %8.1f%%", 100 * k->base_roof, 100 * k->cand_roof);
		fputc('\n', f);
	}
	if (nleg) { /* the full parameters of every cut cell, in the order of the marks */
		fputs("\nparams cut above ([k]: in full):\n", f);
		for (size_t i = 0, k = 0; i < c->n; i++)
			if (strlen(c->c[i].params) > pw)
				fprintf(f, "  [%zu] %s\n", ++k, c->c[i].params);
	}
	size_t nflag = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct ocb_cmp_case *k = &c->c[i];
		for (int side = 0; side < 2; side++) {
			const char *why = side ? k->cand_suspect : k->base_suspect;
			if (!why[0])
				continue;
			if (!nflag++)
				fprintf(f, "\nflagged when measured (suspect; the verdict may not hold):\n");
			fprintf(f, "  %s %s t=%d %s: %s\n", k->bench, k->params, k->threads,
				side ? "cand" : "base", why);
		}
	}
	fprintf(f, "\n%zu cases: %zu slower, %zu faster, %zu same, %zu noise, %zu n/a; "
		   "geometric mean of ratios %.4f\n",
		c->n, c->count[OCB_V_SLOWER], c->count[OCB_V_FASTER], c->count[OCB_V_SAME],
		c->count[OCB_V_NOISE], c->count[OCB_V_NA], c->geomean);
	print_only(c, f);
	return ferror(f) ? ocb_seterr(OCB_EIO, "compare: write failed") : OCB_OK;
}

static void add_num(cJSON *o, const char *k, double v)
{
	if (isnan(v) || isinf(v))
		cJSON_AddNullToObject(o, k);
	else
		cJSON_AddNumberToObject(o, k, v);
}

cJSON *ocb_cmp_json(const struct ocb_cmp *c)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "base_run", (double)c->base_run);
	cJSON_AddNumberToObject(o, "cand_run", (double)c->cand_run);
	cJSON_AddStringToObject(o, "base_host", c->base_host);
	cJSON_AddStringToObject(o, "cand_host", c->cand_host);
	cJSON_AddBoolToObject(o, "cross_machine", c->cross_machine);
	add_num(o, "threshold", c->opts.threshold);
	add_num(o, "alpha", c->opts.alpha);
	add_num(o, "geomean_ratio", c->geomean);
	cJSON *cnt = cJSON_AddObjectToObject(o, "counts");
	for (int v = 0; cnt && v <= OCB_V_NA; v++)
		cJSON_AddNumberToObject(cnt, ocb_verdict_name(v), (double)c->count[v]);
	cJSON *w = cJSON_AddArrayToObject(o, "warnings");
	for (int i = 0; w && i < c->nwarn; i++)
		cJSON_AddItemToArray(w, cJSON_CreateString(c->warn[i]));
	cJSON_AddStringToObject(o, "base_mode", ocb_run_mode(&c->base));
	cJSON_AddStringToObject(o, "cand_mode", ocb_run_mode(&c->cand));
	cJSON_AddStringToObject(o, "base_status", c->base.shown);
	cJSON_AddStringToObject(o, "cand_status", c->cand.shown);
	for (int side = 0; side < 2; side++) {
		cJSON *a = cJSON_AddArrayToObject(o, side ? "cand_only" : "base_only");
		for (size_t i = 0; a && i < c->nonly[side]; i++) {
			const struct ocb_case_row *x = &c->only[side][i];
			cJSON *e = cJSON_CreateObject();
			if (!e || !cJSON_AddItemToArray(a, e)) {
				cJSON_Delete(e);
				break;
			}
			cJSON_AddStringToObject(e, "bench", x->bench);
			cJSON_AddStringToObject(e, "params", x->params);
			cJSON_AddNumberToObject(e, "threads", x->threads);
			cJSON_AddStringToObject(e, "variant", x->variant);
			cJSON_AddStringToObject(e, "status", x->status);
		}
	}
	if (!(arr = cJSON_AddArrayToObject(o, "cases"))) {
		cJSON_Delete(o);
		return NULL;
	}
	for (size_t i = 0; i < c->n; i++) {
		const struct ocb_cmp_case *k = &c->c[i];
		cJSON *e = cJSON_CreateObject();
		if (!e || !cJSON_AddItemToArray(arr, e)) {
			cJSON_Delete(e);
			cJSON_Delete(o);
			return NULL;
		}
		cJSON_AddStringToObject(e, "bench", k->bench);
		cJSON_AddStringToObject(e, "params", k->params);
		cJSON_AddStringToObject(e, "variant", k->variant);
		cJSON_AddNumberToObject(e, "threads", k->threads);
		cJSON_AddStringToObject(e, "unit", k->unit);
		add_num(e, "base_median", k->base_median);
		add_num(e, "cand_median", k->cand_median);
		add_num(e, "ratio", k->ratio);
		add_num(e, "ratio_ci_low", k->ratio_lo);
		add_num(e, "ratio_ci_high", k->ratio_hi);
		add_num(e, "mwu_u", k->u);
		add_num(e, "p", k->p);
		cJSON_AddNumberToObject(e, "n_base", (double)k->nbase);
		cJSON_AddNumberToObject(e, "n_cand", (double)k->ncand);
		cJSON_AddStringToObject(e, "verdict", ocb_verdict_name(k->verdict));
		add_num(e, "band", k->band);
		cJSON_AddNumberToObject(e, "history_runs", k->nhist);
		add_num(e, "base_roofline_frac", k->base_roof);
		add_num(e, "cand_roofline_frac", k->cand_roof);
		if (k->base_suspect[0])
			cJSON_AddStringToObject(e, "base_suspect", k->base_suspect);
		else
			cJSON_AddNullToObject(e, "base_suspect");
		if (k->cand_suspect[0])
			cJSON_AddStringToObject(e, "cand_suspect", k->cand_suspect);
		else
			cJSON_AddNullToObject(e, "cand_suspect");
	}
	return o;
}
