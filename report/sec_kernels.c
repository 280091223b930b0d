/* sec_kernels: one paper table per benchmark of the selected results (pivot.h), the way
 * papers print kernel results: the format (or variant) as rows, shape x threads as
 * columns, and per cell the headline rate with its fraction of the roofline bound.
 *
 * The headline rate of a benchmark: GB/s when most of its cases are memory-bound (their
 * bandwidth roof x operational intensity is below their compute roof, on the machine's
 * measured ceilings; without ceilings: intensity < 1 FLOP/byte), else GFLOP/s (GOP/s
 * when bound by the int8 roof); the median time when it has no work model. The CI of a
 * rate is the time's CI mapped through work / time. The long form (every field, params
 * in full, counters) stays in the per-suite results tables (CSV, JSON, HTML data). */
#define _GNU_SOURCE
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_roofline.h"
#include "pivot.h"
#include "rctx.h"
#include "sigfig.h"

enum headline { HL_TIME, HL_GBS, HL_GFLOPS, HL_GOPS };

static int ok_row(const struct ocb_rrow *r)
{
	return !strcmp(r->status, "ok") && r->median > 0;
}

/* 1 if r is memory-bound on its machine's ceilings (see the file comment). */
static int memory_bound(const struct ocb_rctx *x, const struct ocb_rrow *r)
{
	char ck[32], bk[32];
	if (!(r->bytes > 0))
		return 0;
	if (!(r->flops > 0) || ocb_roof_parse(r->bound, ck, bk, sizeof ck) || !ck[0])
		return 1;
	double oi = r->flops / r->bytes;
	const struct ocb_mceil *mc = ocb_mceil_find(x->mc, x->nmc, r->machine_id);
	const struct ocb_roof_ceil *pc = mc ? ocb_roof_find(mc->view, mc->n, ck, r->threads) : NULL;
	const struct ocb_roof_ceil *bc = mc && bk[0] ? ocb_roof_find(mc->view, mc->n, bk, r->threads)
						     : NULL;
	if (pc && bc)
		return bc->value * oi < pc->value;
	return oi < 1;
}

static enum headline headline_of(const struct ocb_rctx *x, size_t a, size_t b)
{
	size_t mem = 0, work = 0, int8 = 0;
	for (size_t i = a; i < b; i++) {
		const struct ocb_rrow *r = &x->rs.r[i];
		if (!ok_row(r) || !(r->flops > 0 || r->bytes > 0))
			continue;
		work++;
		mem += memory_bound(x, r);
		char ck[32], bk[32];
		int8 += !ocb_roof_parse(r->bound, ck, bk, sizeof ck) && !strncmp(ck, "ops_", 4);
	}
	if (!work)
		return HL_TIME;
	if (2 * mem >= work)
		return HL_GBS;
	return 2 * int8 > work ? HL_GOPS : HL_GFLOPS;
}

/* The parameters every ok row of [a, b) shares ("k=v k2=v2", the table's note says
 * them once) into fixed; 1 if key `k` is one of them. */
static int is_fixed(const char *fixed, const char *k)
{
	size_t n = strlen(k);
	for (const char *p = strstr(fixed, k); p; p = strstr(p + 1, k))
		if ((p == fixed || p[-1] == ' ') && p[n] == '=')
			return 1;
	return 0;
}

static void fixed_params(const struct ocb_rctx *x, size_t a, size_t b, char *fixed, size_t len)
{
	cJSON *first = NULL, *e;
	size_t o = 0;
	fixed[0] = '\0';
	for (size_t i = a; i < b && !first; i++)
		if (ok_row(&x->rs.r[i]))
			first = cJSON_Parse(x->rs.r[i].params ? x->rs.r[i].params : "{}");
	cJSON_ArrayForEach(e, first) {
		char v[64], w[64];
		int same = 1;
		ocb_param_text(e, v, sizeof v);
		if (!strcmp(e->string, "format") || !strcmp(e->string, "fmt"))
			continue;
		for (size_t i = a; i < b && same; i++) {
			if (!ok_row(&x->rs.r[i]))
				continue;
			cJSON *j = cJSON_Parse(x->rs.r[i].params ? x->rs.r[i].params : "{}");
			cJSON *f = cJSON_GetObjectItemCaseSensitive(j, e->string);
			ocb_param_text(f, w, sizeof w);
			same = f && !strcmp(v, w);
			cJSON_Delete(j);
		}
		if (same && o < len)
			o += (size_t)snprintf(fixed + o, len - o, "%s%s=%s", o ? " " : "", e->string, v);
	}
	cJSON_Delete(first);
}

/* The row label (format param, else variant) and column key (the other params that
 * vary, threads) of r; `variants`: the benchmark has several variants (added to the
 * label). */
static void keys_of(const struct ocb_rrow *r, int variants, const char *fixed, char *row,
		    size_t rl, char *col, size_t cl)
{
	cJSON *j = cJSON_Parse(r->params ? r->params : "{}"), *e;
	size_t o = 0;
	row[0] = col[0] = '\0';
	cJSON_ArrayForEach(e, j) {
		char v[64];
		ocb_param_text(e, v, sizeof v);
		if (!strcmp(e->string, "format") || !strcmp(e->string, "fmt"))
			snprintf(row, rl, "%s", v);
		else if (is_fixed(fixed, e->string))
			continue;
		else if (o < cl)
			o += (size_t)snprintf(col + o, cl - o, "%s%s=%s", o ? " " : "", e->string, v);
	}
	cJSON_Delete(j);
	if (!row[0])
		snprintf(row, rl, "%s", r->variant[0] ? r->variant : "-");
	else if (variants && r->variant[0]) {
		size_t n = strlen(row);
		snprintf(row + n, rl - n, " (%s)", r->variant);
	}
	if (o < cl)
		snprintf(col + o, cl - o, "%s%d thr", o ? ", " : "", r->threads);
}

/* One benchmark's table while it is built: its headline, the time scale, the
 * parameters all its cases share, and its best case (the summary's headline figure). */
struct btab {
	enum headline hl;
	double scale;       /* time unit per second (HL_TIME) */
	const char *tunit;
	int variants, multi;
	char fixed[512];
	double bestv, bestf;
	char bestcase[400];
};

/* Puts case r into the pivot (and keeps the best case). */
static int put_case(const struct ocb_rctx *x, struct btab *bt, struct ocb_pivot *p,
		    const struct ocb_rrow *r)
{
	char row[96], col[192];
	keys_of(r, bt->variants, bt->fixed, row, sizeof row, col, sizeof col);
	const char *rk[2] = {row, r->host};
	double sec = ocb_unit_seconds(r->unit), m = r->median;
	/* CI bounds mapped: a rate is work / time, so the time's high end is its low */
	double flo = r->ci_high > 0 ? m / r->ci_high : NAN, fhi = r->ci_low > 0 ? m / r->ci_low : NAN;
	double v = bt->hl == HL_TIME ? m * sec * bt->scale
		   : bt->hl == HL_GBS ? ocb_rrow_gbs(r) : ocb_rrow_gflops(r);
	const struct ocb_mceil *mc = ocb_mceil_find(x->mc, x->nmc, r->machine_id);
	double f = bt->hl == HL_TIME ? NAN : 100 * ocb_rrow_roof_frac(r, mc);
	if (isnan(bt->bestv) || (bt->hl == HL_TIME ? v < bt->bestv : v > bt->bestv)) {
		bt->bestv = v;
		bt->bestf = f;
		snprintf(bt->bestcase, sizeof bt->bestcase, "%s, %s%s%s", row, col,
			 bt->multi ? " on " : "", bt->multi ? r->host : "");
	}
	if (bt->hl == HL_TIME)
		return ocb_pivot_put(p, rk, col, 0, v, r->ci_low * sec * bt->scale,
				     r->ci_high * sec * bt->scale, r->run_id);
	int rc = ocb_pivot_put(p, rk, col, 0, v, v * flo, v * fhi, r->run_id);
	return rc ? rc : ocb_pivot_put(p, rk, col, 1, f, f * flo, f * fhi, r->run_id);
}

/* The table of benchmark rows [a, b) (k-th table). */
static int bench_table(struct ocb_rctx *x, size_t a, size_t b, size_t k, int multi)
{
	const struct ocb_rrow *r0 = &x->rs.r[a];
	static const char *const units[] = {"", "GB/s", "GFLOP/s", "GOP/s"};
	struct ocb_pmeasure meas[2] = {{.best = OCB_BEST_MAX}, {"% of roof", OCB_BEST_MAX, 2, NULL}};
	const char *keyn[2] = {"format", "machine"};
	struct btab bt = {.hl = headline_of(x, a, b), .multi = multi, .bestv = NAN, .bestf = NAN};
	double mid = 0;
	size_t nok = 0;
	int hasfmt = 0;
	for (size_t i = a; i < b; i++) {
		bt.variants |= strcmp(x->rs.r[i].variant, r0->variant) != 0;
		hasfmt |= x->rs.r[i].params && (strstr(x->rs.r[i].params, "\"format\":") ||
						 strstr(x->rs.r[i].params, "\"fmt\":"));
		if (ok_row(&x->rs.r[i]) && ++nok)
			mid += ocb_unit_seconds(x->rs.r[i].unit) * x->rs.r[i].median;
	}
	if (!nok)
		return OCB_OK;
	if (!hasfmt)
		keyn[0] = "variant";
	bt.tunit = ocb_time_unit(mid / (double)nok, &bt.scale);
	if (bt.hl == HL_TIME) {
		snprintf(meas[0].name, sizeof meas[0].name, "median (%s)", bt.tunit);
		meas[0].best = OCB_BEST_MIN;
	} else {
		snprintf(meas[0].name, sizeof meas[0].name, "%s", units[bt.hl]);
	}
	char id[64], title[192], note[768];
	snprintf(id, sizeof id, "k_%.40s_%zu", r0->bench, k);
	for (char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			*p = '_';
	snprintf(title, sizeof title, "%s (suite %s): %s%s", r0->bench, r0->suite, meas[0].name,
		 bt.hl == HL_TIME ? "" : " and % of roof");
	fixed_params(x, a, b, bt.fixed, sizeof bt.fixed);
	struct ocb_pivot p;
	int rc = ocb_pivot_init(&p, id, title, multi ? 2 : 1, keyn, bt.hl == HL_TIME ? 1 : 2, meas);
	for (size_t i = a; i < b && !rc; i++)
		if (ok_row(&x->rs.r[i]))
			rc = put_case(x, &bt, &p, &x->rs.r[i]);
	snprintf(note, sizeof note, "%s%s%sDigits to the 95%% CI of the median; best per column "
		 "in bold. Every case with its parameters, CI, bound and counters: the suite "
		 "results table (CSV, JSON, HTML).", bt.fixed[0] ? "Parameters of every case: " : "",
		 bt.fixed, bt.fixed[0] ? ". " : "");
	if (!rc)
		rc = ocb_pivot_note(&p, note);
	if (!rc)
		rc = ocb_pivot_emit(&p, x);
	if (!rc && !isnan(bt.bestv)) {
		char v[32], f[32];
		ocb_sigfig(bt.bestv, NAN, NAN, 3, v, sizeof v);
		ocb_sigfig(bt.bestf, NAN, NAN, 2, f, sizeof f);
		rc = ocb_rctx_headline(x, "%s: %s %s (%s)%s%s%s", r0->bench, v,
				       bt.hl == HL_TIME ? bt.tunit : meas[0].name, bt.bestcase,
				       isnan(bt.bestf) ? "" : ", ", isnan(bt.bestf) ? "" : f,
				       isnan(bt.bestf) ? "" : "% of roof");
	}
	ocb_pivot_release(&p);
	return rc;
}

/* Several machines: one table, every case (bench, format/variant, the parameters that
 * vary, threads, the unit of its benchmark's headline rate) a row, each machine a column
 * group of that rate and the % of its own roof. */
static int machines_table(struct ocb_rctx *x)
{
	static const struct ocb_pmeasure meas[2] = {{"rate", OCB_BEST_MAX, 3, NULL},
						    {"% of roof", OCB_BEST_MAX, 2, NULL}};
	static const char *const keyn[3] = {"case", "shape, threads", "unit"};
	static const char *const units[] = {"", "GB/s", "GFLOP/s", "GOP/s"};
	struct ocb_pivot p;
	int rc = ocb_pivot_init(&p, "machines_compare", "Machines compared: rate and % of each "
				"machine's own roof", 3, keyn, 2, meas);
	for (size_t a = 0, b; a < x->rs.n && !rc; a = b) {
		b = a + 1;
		while (b < x->rs.n && !strcmp(x->rs.r[b].suite, x->rs.r[a].suite) &&
		       !strcmp(x->rs.r[b].bench, x->rs.r[a].bench))
			b++;
		enum headline hl = headline_of(x, a, b);
		if (hl == HL_TIME)
			continue;
		char fixed[512];
		fixed_params(x, a, b, fixed, sizeof fixed);
		for (size_t i = a; i < b && !rc; i++) {
			const struct ocb_rrow *r = &x->rs.r[i];
			if (!ok_row(r))
				continue;
			char row[96], col[192], name[200];
			keys_of(r, 1, fixed, row, sizeof row, col, sizeof col);
			snprintf(name, sizeof name, "%s %s", r->bench, row);
			const char *rk[3] = {name, col, units[hl]};
			double m = r->median, flo = r->ci_high > 0 ? m / r->ci_high : NAN,
			       fhi = r->ci_low > 0 ? m / r->ci_low : NAN;
			double v = hl == HL_GBS ? ocb_rrow_gbs(r) : ocb_rrow_gflops(r);
			double f = 100 * ocb_rrow_roof_frac(r, ocb_mceil_find(x->mc, x->nmc, r->machine_id));
			if (!(rc = ocb_pivot_put(&p, rk, r->host, 0, v, v * flo, v * fhi, r->run_id)))
				rc = ocb_pivot_put(&p, rk, r->host, 1, f, f * flo, f * fhi, r->run_id);
		}
	}
	if (!rc)
		rc = ocb_pivot_note(&p, "Per machine: the case's achieved rate (its benchmark's "
					"headline unit) and its fraction of that machine's measured "
					"roofline bound (the normalised roofline). Parameters shared by "
					"every case of a benchmark: in its table. Digits to the 95% CI.");
	if (!rc)
		rc = ocb_pivot_emit(&p, x);
	ocb_pivot_release(&p);
	return rc;
}

int ocb_rsec_kernels(struct ocb_rctx *x)
{
	int rc = OCB_OK, multi = 0;
	for (size_t i = 1; i < x->rs.n; i++)
		multi |= x->rs.r[i].machine_id != x->rs.r[0].machine_id;
	size_t k = 0;
	for (size_t a = 0, b; a < x->rs.n && !rc; a = b) {
		b = a + 1;
		while (b < x->rs.n && !strcmp(x->rs.r[b].suite, x->rs.r[a].suite) &&
		       !strcmp(x->rs.r[b].bench, x->rs.r[a].bench))
			b++;
		rc = bench_table(x, a, b, k++, multi);
	}
	if (!rc && multi)
		rc = machines_table(x);
	return rc;
}
