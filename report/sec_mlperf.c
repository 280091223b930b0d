/* sec_mlperf: an MLPerf-style time-to-train summary (REFERENCE.md §4, "MLPerf results
 * tables"): rows are systems (machine hostname, host processor model and core count,
 * threads/ranks, framework "ocbench VERSION"), columns are training workloads, cells
 * are time-to-target in minutes. A workload counts as training when it stores a final
 * (step NULL) `time_to_target` or `train_time` metric (seconds; time_to_target wins).
 * Several runs of one system and workload are scored as MLPerf does: the olympic mean
 * (drop the best and the worst, mean of the rest) when there are >= 3 runs, else the
 * mean. A detail table gives runs, samples to converge (samples_to_converge, else
 * train_samples) and global batch size (global_batch_size). threads/ranks come from
 * metrics of those names, else from the run's config_json ($.threads, $.ranks).
 * Runs: every complete run (of the named machines with --machine; the one run with
 * --run / --latest). One query. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "rctx.h"

struct mrec {
	int64_t run, machine;
	char host[64], cpu[128], version[32];
	int cores;
	char workload[128];
	double ttt, train_time, samples, train_samples, gbs, threads, ranks;
};

struct msys {
	int64_t machine;
	double threads, ranks;
	const struct mrec *any; /* for names */
};

static int same_sys(const struct msys *s, const struct mrec *r)
{
	return s->machine == r->machine &&
	       (s->threads == r->threads || (isnan(s->threads) && isnan(r->threads))) &&
	       (s->ranks == r->ranks || (isnan(s->ranks) && isnan(r->ranks)));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Olympic mean (n >= 3) or mean of v[0..n) (sorted in place). */
static double score(double *v, size_t n, int *olympic)
{
	qsort(v, n, sizeof *v, cmp_double);
	size_t a = 0, b = n;
	*olympic = n >= 3;
	if (*olympic) {
		a = 1;
		b = n - 1;
	}
	double s = 0;
	for (size_t i = a; i < b; i++)
		s += v[i];
	return b > a ? s / (double)(b - a) : NAN;
}

static void fmt_sys(char *dst, size_t len, const struct msys *s)
{
	size_t o = (size_t)snprintf(dst, len, "%s", s->any->host);
	if (!isnan(s->threads))
		o += (size_t)snprintf(dst + o, len - o, ", %g threads", s->threads);
	if (!isnan(s->ranks) && o < len)
		snprintf(dst + o, len - o, ", %g ranks", s->ranks);
}

/* The selection's final training metrics, one mrec per (run, workload) in the query's
 * order: *rec malloc'd (caller frees), *n long. */
static int load_recs(struct ocb_rctx *x, struct mrec **rec, size_t *n)
{
	struct ocb_train_row *tr = NULL;
	size_t ntr = 0;
	int rc = ocb_sel_train_metrics(x->db, &x->o->sel, &tr, &ntr);
	*rec = NULL;
	*n = 0;
	if (rc)
		return rc;
	if (!(*rec = calloc(ntr + 1, sizeof **rec))) {
		free(tr);
		return ocb_seterr(OCB_ENOMEM, "mlperf summary");
	}
	for (size_t i = 0; i < ntr; i++) {
		const struct ocb_train_row *t = &tr[i];
		if (!*n || (*rec)[*n - 1].run != t->run_id || strcmp((*rec)[*n - 1].workload, t->workload)) {
			struct mrec *r = &(*rec)[(*n)++];
			r->run = t->run_id;
			r->machine = t->machine_id;
			snprintf(r->host, sizeof r->host, "%s", t->host);
			snprintf(r->cpu, sizeof r->cpu, "%s", t->cpu);
			r->cores = t->cores;
			snprintf(r->version, sizeof r->version, "%s", t->version);
			r->threads = t->cfg_threads;
			r->ranks = t->cfg_ranks;
			snprintf(r->workload, sizeof r->workload, "%s", t->workload);
			r->ttt = r->train_time = r->samples = r->train_samples = r->gbs = NAN;
		}
		struct mrec *r = &(*rec)[*n - 1];
		const char *key = t->key;
		double v = t->value;
		if (!strcmp(key, "time_to_target"))
			r->ttt = v;
		else if (!strcmp(key, "train_time"))
			r->train_time = v;
		else if (!strcmp(key, "samples_to_converge"))
			r->samples = v;
		else if (!strcmp(key, "train_samples"))
			r->train_samples = v;
		else if (!strcmp(key, "global_batch_size"))
			r->gbs = v;
		else if (!strcmp(key, "threads"))
			r->threads = v;
		else if (!strcmp(key, "ranks"))
			r->ranks = v;
	}
	free(tr);
	return OCB_OK;
}

/* What the two tables are built from: the records, the systems and the training
 * workloads among them (first-seen order), and scratch for one cell's values. */
struct mdata {
	struct mrec *rec;
	size_t n;
	struct msys *sys;
	size_t nsys;
	char **wls;
	size_t nwl;
	double *vals;
};

/* Systems and training workloads of d->rec, in first-seen order. */
static int find_systems(struct mdata *d)
{
	d->sys = calloc(d->n + 1, sizeof *d->sys);
	d->wls = calloc(d->n + 1, sizeof *d->wls);
	d->vals = calloc(d->n + 1, sizeof *d->vals);
	if (!d->sys || !d->wls || !d->vals)
		return ocb_seterr(OCB_ENOMEM, "mlperf summary");
	for (size_t i = 0; i < d->n; i++) {
		struct mrec *r = &d->rec[i];
		if (isnan(r->ttt) && isnan(r->train_time))
			continue;
		size_t k = 0;
		while (k < d->nsys && !same_sys(&d->sys[k], r))
			k++;
		if (k == d->nsys)
			d->sys[d->nsys++] = (struct msys){r->machine, r->threads, r->ranks, r};
		k = 0;
		while (k < d->nwl && strcmp(d->wls[k], r->workload))
			k++;
		if (k == d->nwl)
			d->wls[d->nwl++] = r->workload;
	}
	return OCB_OK;
}

/* The cell of system k x workload w: its score into t (row, column col) and a detail
 * row into dt named `name`; nothing when the system never trained it. */
static int score_cell(struct mdata *d, size_t k, size_t w, struct ocb_table *t, size_t row,
		      size_t col, struct ocb_table *dt, const char *name)
{
	size_t nv = 0, scount = 0;
	double samples = NAN, gbs = NAN, ssum = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct mrec *r = &d->rec[i];
		if (!same_sys(&d->sys[k], r) || strcmp(r->workload, d->wls[w]))
			continue;
		double sec = !isnan(r->ttt) ? r->ttt : r->train_time;
		if (isnan(sec))
			continue;
		d->vals[nv++] = sec / 60.0;
		double smp = !isnan(r->samples) ? r->samples : r->train_samples;
		if (!isnan(smp)) {
			ssum += smp;
			scount++;
		}
		if (!isnan(r->gbs))
			gbs = r->gbs;
	}
	if (!nv)
		return OCB_OK;
	if (scount)
		samples = ssum / (double)scount;
	int olympic, rc;
	double sc = score(d->vals, nv, &olympic);
	ocb_table_num(t, row, col, sc, "%.3f");
	size_t dr;
	if ((rc = ocb_table_add_row(dt, &dr)))
		return rc;
	ocb_table_text(dt, dr, 0, name);
	ocb_table_text(dt, dr, 1, d->wls[w]);
	ocb_table_num(dt, dr, 2, (double)nv, "%.0f");
	ocb_table_num(dt, dr, 3, sc, "%.3f");
	ocb_table_printf(dt, dr, 4, olympic ? "olympic mean of %zu" : "mean of %zu", nv);
	ocb_table_num(dt, dr, 5, samples, "%.0f");
	ocb_table_num(dt, dr, 6, gbs, "%.0f");
	return OCB_OK;
}

static const char *const mhead[] = {"system", "processor", "cores", "threads", "ranks",
				    "framework"};
#define MHEAD (sizeof mhead / sizeof *mhead)

/* The summary (systems x workloads) and detail tables, empty, as the last two tables
 * of x: *t and *dt (valid until the next table is added). */
static int make_tables(struct ocb_rctx *x, const struct mdata *d, struct ocb_table **t,
		       struct ocb_table **dt)
{
	static const char *dcols[] = {"system", "workload", "runs", "time to target (min)",
				      "score", "samples to converge", "global batch size"};
	const char **cols = calloc(MHEAD + d->nwl, sizeof *cols);
	char (*ctitles)[160] = calloc(d->nwl + 1, sizeof *ctitles);
	int rc = OCB_OK;
	if (!cols || !ctitles) {
		rc = ocb_seterr(OCB_ENOMEM, "mlperf summary");
		goto out;
	}
	for (size_t c = 0; c < MHEAD; c++)
		cols[c] = mhead[c];
	for (size_t w = 0; w < d->nwl; w++) {
		snprintf(ctitles[w], sizeof ctitles[w], "%s (min)", d->wls[w]);
		cols[MHEAD + w] = ctitles[w];
	}
	if ((rc = ocb_rctx_table(x, t)))
		goto out;
	if ((rc = ocb_table_init(*t, "mlperf_summary",
				 "Time to train (MLPerf style): minutes to the quality target",
				 MHEAD + d->nwl, cols))) {
		ocb_rctx_table_drop(x);
		goto out;
	}
	for (size_t w = 0; w < d->nwl; w++)
		(*t)->best[MHEAD + w] = OCB_BEST_MIN;
	if ((rc = ocb_rctx_table(x, dt)))
		goto out;
	*t = &x->tables[x->ntables - 2]; /* the array may have moved */
	if ((rc = ocb_table_init(*dt, "mlperf_detail", "Time to train: per-workload detail", 7,
				 dcols)))
		ocb_rctx_table_drop(x);
out:
	free(ctitles);
	free(cols);
	return rc;
}

int ocb_rsec_mlperf(struct ocb_rctx *x)
{
	struct mdata d;
	struct ocb_table *t, *dt;
	int rc;

	memset(&d, 0, sizeof d);
	if ((rc = load_recs(x, &d.rec, &d.n)) || (rc = find_systems(&d)) || !d.nsys ||
	    (rc = make_tables(x, &d, &t, &dt)))
		goto out;
	for (size_t k = 0; k < d.nsys && !rc; k++) {
		const struct mrec *any = d.sys[k].any;
		char name[256];
		size_t row;
		fmt_sys(name, sizeof name, &d.sys[k]);
		if ((rc = ocb_table_add_row(t, &row)))
			goto out;
		ocb_table_text(t, row, 0, any->host);
		ocb_table_text(t, row, 1, any->cpu);
		ocb_table_num(t, row, 2, any->cores, "%.0f");
		ocb_table_num(t, row, 3, d.sys[k].threads, "%g");
		ocb_table_num(t, row, 4, d.sys[k].ranks, "%g");
		ocb_table_printf(t, row, 5, "ocbench %s",
				 any->version[0] ? any->version : (x->o->version ? x->o->version : "?"));
		for (size_t w = 0; w < d.nwl && !rc; w++)
			rc = score_cell(&d, k, w, t, row, MHEAD + w, dt, name);
	}
	if (!rc)
		ocb_table_set_note(t, "Time to target: time_to_target, else train_time; olympic "
				      "mean (best and worst dropped) over >= 3 runs, else the mean.");
out:
	free(d.vals);
	free(d.wls);
	free(d.sys);
	free(d.rec);
	return rc;
}
