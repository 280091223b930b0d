#define _GNU_SOURCE
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../db/store_query.h"
#include "mwu.h"
#include "rdata.h"
#include "../db/column.h"

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
	sqlite3_stmt *st = NULL;
	int rc = ocb_store_run_resolve(s, spec, run_id);
	if (rc != OCB_ENOENT)
		return rc;
	sqlite3 *db = ocb_store_handle(s);
	if (sqlite3_prepare_v2(db,
			       "SELECT r.id FROM run r JOIN machine m ON m.id = r.machine_id"
			       " WHERE r.status = 'complete' AND (m.hostname = ?1 OR"
			       " (length(?1) >= 4 AND substr(m.fingerprint, 1, length(?1)) = ?1))"
			       " ORDER BY r.started_at DESC, r.id DESC LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return ocb_seterr(OCB_EDB, "resolve '%s': %s", spec, sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, spec, -1, SQLITE_TRANSIENT);
	int s2 = sqlite3_step(st);
	if (s2 == SQLITE_ROW) {
		*run_id = sqlite3_column_int64(st, 0);
		rc = OCB_OK;
	} else if (s2 == SQLITE_DONE) {
		rc = ocb_seterr(OCB_ENOENT,
				"'%s' is no run id, uuid, label, or machine with a complete run", spec);
	} else {
		rc = ocb_seterr(OCB_EDB, "resolve '%s': %s", spec, sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	return rc;
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
		for (size_t i = 0; i < c->nonly[side]; i++)
			free(c->only[side][i].params);
		free(c->only[side]);
		c->only[side] = NULL;
		c->nonly[side] = 0;
	}
}

/* The cases of run `a` with no ok counterpart (bench, params, threads) in run `b`. */
static int load_only(sqlite3 *db, int64_t a, int64_t b, struct ocb_cmp_only **out, size_t *n)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc = OCB_OK, s;
	if (sqlite3_prepare_v2(db,
			       "SELECT r.bench, r.params_json, r.threads, r.variant, r.status"
			       " FROM result r WHERE r.run_id = ?1 AND NOT (r.status = 'ok' AND"
			       " EXISTS (SELECT 1 FROM result o WHERE o.run_id = ?2 AND o.status = 'ok'"
			       " AND o.bench = r.bench AND o.params_json = r.params_json"
			       " AND o.threads IS r.threads))"
			       " ORDER BY r.bench, r.params_json COLLATE ocb_params, r.threads, r.id",
			       -1, &st, NULL) != SQLITE_OK)
		return ocb_seterr(OCB_EDB, "compare: %s", sqlite3_errmsg(db));
	sqlite3_bind_int64(st, 1, a);
	sqlite3_bind_int64(st, 2, b);
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			struct ocb_cmp_only *no = realloc(*out, cap * sizeof *no);
			if (!no) {
				rc = ocb_seterr(OCB_ENOMEM, "compare");
				goto out;
			}
			*out = no;
		}
		struct ocb_cmp_only *o = &(*out)[*n];
		memset(o, 0, sizeof *o);
		ocb_col_text(o->bench, sizeof o->bench, st, 0);
		const unsigned char *p = sqlite3_column_text(st, 1);
		if (!(o->params = strdup(p ? (const char *)p : ""))) {
			rc = ocb_seterr(OCB_ENOMEM, "compare");
			goto out;
		}
		(*n)++;
		o->threads = sqlite3_column_int(st, 2);
		ocb_col_text(o->variant, sizeof o->variant, st, 3);
		ocb_col_text(o->status, sizeof o->status, st, 4);
	}
	if (s != SQLITE_DONE)
		rc = ocb_seterr(OCB_EDB, "compare: %s", sqlite3_errmsg(db));
out:
	sqlite3_finalize(st);
	return rc;
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

/* samples of one result, in rep order, into a growing buffer */
static int load_samples(sqlite3_stmt *st, int64_t id, double **buf, size_t *cap, size_t *n)
{
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, id);
	*n = 0;
	int s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == *cap) {
			size_t nc = *cap ? 2 * *cap : 64;
			double *nb = realloc(*buf, nc * sizeof *nb);
			if (!nb)
				return ocb_seterr(OCB_ENOMEM, "compare: samples");
			*buf = nb;
			*cap = nc;
		}
		(*buf)[(*n)++] = sqlite3_column_double(st, 0);
	}
	return s == SQLITE_DONE ? OCB_OK : OCB_EDB;
}

static int run_info(sqlite3 *db, int64_t run, int64_t *machine, char *host, char *label)
{
	sqlite3_stmt *st = NULL;
	int rc = OCB_OK;
	if (sqlite3_prepare_v2(db, "SELECT r.machine_id, m.hostname, r.label FROM run r"
				   " JOIN machine m ON m.id = r.machine_id WHERE r.id = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return ocb_seterr(OCB_EDB, "compare: %s", sqlite3_errmsg(db));
	sqlite3_bind_int64(st, 1, run);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*machine = sqlite3_column_int64(st, 0);
		const unsigned char *h = sqlite3_column_text(st, 1), *l = sqlite3_column_text(st, 2);
		snprintf(host, 64, "%s", h ? (const char *)h : "");
		snprintf(label, 64, "%s", l ? (const char *)l : "");
	} else {
		rc = ocb_seterr(OCB_ENOENT, "compare: no run %lld", (long long)run);
	}
	sqlite3_finalize(st);
	return rc;
}

static void fill_rrow(struct ocb_rrow *r, sqlite3_stmt *st, int off, const char *unit,
		      int threads)
{
	memset(r, 0, sizeof *r);
	snprintf(r->unit, sizeof r->unit, "%s", unit);
	r->threads = threads;
	r->median = sqlite3_column_double(st, off);
	r->flops = ocb_col_real(st, off + 1);
	r->bytes = ocb_col_real(st, off + 2);
	const unsigned char *b = sqlite3_column_text(st, off + 3);
	snprintf(r->bound, sizeof r->bound, "%s", b ? (const char *)b : "");
	r->bound_frac = ocb_col_real(st, off + 4);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Between-run noise of case k: 3 sigma (sigma = 1.4826 MAD) of the log medians of its
 * earlier runs on the base machine, as a relative change; 0 with fewer than 3 runs.
 * `hist` is bound: ?1 machine, ?6 the candidate run. */
static double history_band(sqlite3_stmt *hist, const struct ocb_cmp_case *k, int *nhist)
{
	double v[64], dev[64];
	int n = 0;
	sqlite3_reset(hist);
	sqlite3_bind_text(hist, 2, k->bench, -1, SQLITE_STATIC);
	sqlite3_bind_text(hist, 3, k->params, -1, SQLITE_STATIC);
	sqlite3_bind_int(hist, 4, k->threads);
	sqlite3_bind_text(hist, 5, k->variant, -1, SQLITE_STATIC);
	while (n < 64 && sqlite3_step(hist) == SQLITE_ROW)
		v[n++] = log(sqlite3_column_double(hist, 0));
	*nhist = n;
	if (n < 3)
		return 0.0;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
	for (int i = 0; i < n; i++)
		dev[i] = fabs(v[i] - med);
	qsort(dev, (size_t)n, sizeof *dev, cmp_double);
	double mad = n % 2 ? dev[n / 2] : 0.5 * (dev[n / 2 - 1] + dev[n / 2]);
	return exp(3.0 * 1.4826 * mad) - 1.0;
}

int ocb_cmp_runs(sqlite3 *db, int64_t base, int64_t cand, const struct ocb_cmp_opts *o,
		 struct ocb_cmp *out)
{
	sqlite3_stmt *st = NULL, *smp = NULL, *hist = NULL;
	double *bs = NULL, *cs = NULL;
	size_t bcap = 0, ccap = 0, cap = 0;
	int64_t *used = NULL, last_b = -1, bm = 0, cm = 0;
	size_t nused = 0;
	struct ocb_mceil mc[2];
	int rc, s;

	memset(out, 0, sizeof *out);
	memset(mc, 0, sizeof mc);
	if (o)
		out->opts = *o;
	else
		ocb_cmp_defaults(&out->opts);
	out->base_run = base;
	out->cand_run = cand;
	out->geomean = NAN;
	if ((rc = run_info(db, base, &bm, out->base_host, out->base_label)) ||
	    (rc = run_info(db, cand, &cm, out->cand_host, out->cand_label)) ||
	    (rc = ocb_run_load(db, base, &out->base)) || (rc = ocb_run_load(db, cand, &out->cand)))
		return rc;
	out->cross_machine = bm != cm;
	int64_t ids[2] = {bm, cm};
	if ((rc = ocb_mceil_load(db, ids, 2, mc)))
		return rc;

	/* Pairs of the same case; same variant first, each result used once. */
	if (sqlite3_prepare_v2(db,
			       "SELECT b.id, c.id, b.bench, b.params_json, b.variant, b.threads, b.unit,"
			       " b.ci_low, b.ci_high, c.ci_low, c.ci_high,"
			       " b.median, b.flops, b.bytes, b.bound, b.bound_frac,"
			       " c.median, c.flops, c.bytes, c.bound, c.bound_frac, c.unit,"
			       " b.suspect, c.suspect"
			       " FROM result b JOIN result c ON c.bench = b.bench"
			       " AND c.params_json = b.params_json AND c.threads IS b.threads"
			       " WHERE b.run_id = ?1 AND c.run_id = ?2 AND b.status = 'ok'"
			       " AND c.status = 'ok'"
			       " ORDER BY b.bench, b.params_json COLLATE ocb_params, b.threads, b.variant,"
			       " b.id,"
			       " (c.variant IS b.variant) DESC, c.id",
			       -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT value FROM sample WHERE result_id = ? ORDER BY rep", -1,
			       &smp, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
			       "SELECT r.median FROM result r JOIN run u ON u.id = r.run_id"
			       " WHERE u.machine_id = ?1 AND u.status = 'complete' AND r.status = 'ok'"
			       " AND r.bench = ?2 AND r.params_json = ?3 AND r.threads IS ?4"
			       " AND r.variant IS ?5 AND r.run_id != ?6 AND r.median > 0"
			       " ORDER BY u.started_at DESC, u.id DESC LIMIT 64",
			       -1, &hist, NULL) != SQLITE_OK) {
		rc = ocb_seterr(OCB_EDB, "compare: %s", sqlite3_errmsg(db));
		goto out;
	}
	sqlite3_bind_int64(st, 1, base);
	sqlite3_bind_int64(st, 2, cand);
	sqlite3_bind_int64(hist, 1, bm);
	sqlite3_bind_int64(hist, 6, cand);
	double logsum = 0;
	size_t nlog = 0;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t bid = sqlite3_column_int64(st, 0), cid = sqlite3_column_int64(st, 1);
		int taken = bid == last_b;
		for (size_t i = 0; i < nused && !taken; i++)
			taken = used[i] == cid;
		if (taken)
			continue;
		last_b = bid;
		int64_t *nu = realloc(used, (nused + 1) * sizeof *nu);
		if (!nu) {
			rc = ocb_seterr(OCB_ENOMEM, "compare");
			goto out;
		}
		used = nu;
		used[nused++] = cid;
		if (out->n == cap) {
			cap = cap ? 2 * cap : 32;
			struct ocb_cmp_case *ncs = realloc(out->c, cap * sizeof *ncs);
			if (!ncs) {
				rc = ocb_seterr(OCB_ENOMEM, "compare");
				goto out;
			}
			out->c = ncs;
		}
		struct ocb_cmp_case *k = &out->c[out->n];
		memset(k, 0, sizeof *k);
		const unsigned char *t;
		t = sqlite3_column_text(st, 2);
		snprintf(k->bench, sizeof k->bench, "%s", t ? (const char *)t : "");
		t = sqlite3_column_text(st, 3);
		if (!(k->params = strdup(t ? (const char *)t : ""))) {
			rc = ocb_seterr(OCB_ENOMEM, "compare");
			goto out;
		}
		out->n++;
		t = sqlite3_column_text(st, 4);
		snprintf(k->variant, sizeof k->variant, "%s", t ? (const char *)t : "");
		k->threads = sqlite3_column_int(st, 5);
		t = sqlite3_column_text(st, 6);
		snprintf(k->unit, sizeof k->unit, "%s", t ? (const char *)t : "");
		double blo = sqlite3_column_double(st, 7), bhi = sqlite3_column_double(st, 8);
		double clo = sqlite3_column_double(st, 9), chi = sqlite3_column_double(st, 10);
		struct ocb_rrow br, cr;
		const unsigned char *cu = sqlite3_column_text(st, 21);
		fill_rrow(&br, st, 11, k->unit, k->threads);
		fill_rrow(&cr, st, 16, cu ? (const char *)cu : "", k->threads);
		k->base_median = br.median;
		k->cand_median = cr.median;
		k->base_roof = ocb_rrow_roof_frac(&br, &mc[0]);
		k->cand_roof = ocb_rrow_roof_frac(&cr, &mc[1]);
		t = sqlite3_column_text(st, 22);
		snprintf(k->base_suspect, sizeof k->base_suspect, "%s", t ? (const char *)t : "");
		t = sqlite3_column_text(st, 23);
		snprintf(k->cand_suspect, sizeof k->cand_suspect, "%s", t ? (const char *)t : "");
		/* convert the candidate to the base's unit if they differ (both times) */
		double scale = 1;
		double us_b = ocb_unit_seconds(k->unit), us_c = ocb_unit_seconds(cr.unit);
		if (us_b > 0 && us_c > 0)
			scale = us_c / us_b;
		k->ratio = k->base_median > 0 ? scale * k->cand_median / k->base_median : NAN;
		k->ratio_lo = bhi > 0 ? scale * clo / bhi : NAN;
		k->ratio_hi = blo > 0 ? scale * chi / blo : NAN;

		if ((rc = load_samples(smp, bid, &bs, &bcap, &k->nbase)) ||
		    (rc = load_samples(smp, cid, &cs, &ccap, &k->ncand))) {
			if (rc == OCB_EDB)
				ocb_seterr(OCB_EDB, "compare: samples: %s", sqlite3_errmsg(db));
			goto out;
		}
		for (size_t i = 0; i < k->ncand; i++)
			cs[i] *= scale;
		struct ocb_mwu m;
		if ((rc = ocb_mwu_test(bs, k->nbase, cs, k->ncand, &m)))
			goto out;
		k->u = m.u;
		k->p = m.p;
		double floor = fmax(out->opts.threshold, out->opts.noise_floor);
		if (out->opts.history && !out->cross_machine)
			floor = fmax(floor, history_band(hist, k, &k->nhist));
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
			logsum += log(k->ratio);
			nlog++;
		}
	}
	if (s != SQLITE_DONE) {
		rc = ocb_seterr(OCB_EDB, "compare: %s", sqlite3_errmsg(db));
		goto out;
	}
	out->geomean = nlog ? exp(logsum / (double)nlog) : NAN;
	if ((rc = load_only(db, base, cand, &out->only[0], &out->nonly[0])) ||
	    (rc = load_only(db, cand, base, &out->only[1], &out->nonly[1])))
		goto out;
	add_warnings(out);
out:
	if (rc)
		ocb_cmp_release(out);
	ocb_mceil_release(&mc[0]);
	ocb_mceil_release(&mc[1]);
	free(used);
	free(bs);
	free(cs);
	sqlite3_finalize(st);
	sqlite3_finalize(smp);
	sqlite3_finalize(hist);
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
			const struct ocb_cmp_only *o = &c->only[side][i];
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
			const struct ocb_cmp_only *x = &c->only[side][i];
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
