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
#include "../db/column.h"

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

int ocb_rsec_mlperf(struct ocb_rctx *x)
{
	char *sql = NULL, filter[512] = "";
	sqlite3_stmt *st = NULL;
	struct mrec *rec = NULL;
	struct msys *sys = NULL;
	char **wls = NULL;
	const char **cols = NULL;
	char (*ctitles)[160] = NULL;
	double *vals = NULL;
	size_t n = 0, cap = 0, nsys = 0, nwl = 0;
	int rc = OCB_OK, s;
	const struct ocb_sel *sel = &x->o->sel;

	if (sel->mode == OCB_SEL_RUN) {
		snprintf(filter, sizeof filter, " AND r.id = %lld", (long long)sel->run_id);
	} else if (sel->mode == OCB_SEL_LATEST) {
		snprintf(filter, sizeof filter,
			 " AND r.id = (SELECT id FROM run WHERE status = 'complete'"
			 " ORDER BY started_at DESC, id DESC LIMIT 1)");
	} else if (sel->nmachines) {
		size_t o = (size_t)snprintf(filter, sizeof filter, " AND r.machine_id IN (");
		for (size_t i = 0; i < sel->nmachines; i++)
			o += (size_t)snprintf(filter + o, sizeof filter - o, "%s%lld", i ? "," : "",
					      (long long)sel->machine[i]);
		snprintf(filter + o, sizeof filter - o, ")");
	}
	if (asprintf(&sql,
		     "SELECT r.id, r.machine_id, m.hostname, m.cpu_model, m.cores, r.ocbench_version,"
		     " CASE WHEN json_valid(r.config_json) THEN json_extract(r.config_json, '$.threads') END,"
		     " CASE WHEN json_valid(r.config_json) THEN json_extract(r.config_json, '$.ranks') END,"
		     " mt.workload, mt.key, mt.value"
		     " FROM metric mt JOIN run r ON r.id = mt.run_id JOIN machine m ON m.id = r.machine_id"
		     " WHERE r.status = 'complete' AND mt.step IS NULL AND mt.value IS NOT NULL"
		     " AND mt.key IN ('time_to_target', 'train_time', 'samples_to_converge',"
		     " 'train_samples', 'global_batch_size', 'threads', 'ranks')"
		     " AND mt.workload NOT LIKE 'quant\\_acc:%%' ESCAPE '\\'%s"
		     " ORDER BY r.id, mt.workload, mt.id",
		     filter) < 0)
		return ocb_seterr(OCB_ENOMEM, "mlperf query");
	if (sqlite3_prepare_v2(x->db, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = ocb_seterr(OCB_EDB, "mlperf summary: %s", sqlite3_errmsg(x->db));
		goto out;
	}
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t run = sqlite3_column_int64(st, 0);
		const char *wl = (const char *)sqlite3_column_text(st, 8);
		const char *key = (const char *)sqlite3_column_text(st, 9);
		double v = sqlite3_column_double(st, 10);
		if (!n || rec[n - 1].run != run || strcmp(rec[n - 1].workload, wl)) {
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				struct mrec *nr = realloc(rec, cap * sizeof *nr);
				if (!nr) {
					rc = ocb_seterr(OCB_ENOMEM, "mlperf summary");
					goto out;
				}
				rec = nr;
			}
			struct mrec *r = &rec[n++];
			memset(r, 0, sizeof *r);
			r->run = run;
			r->machine = sqlite3_column_int64(st, 1);
			const unsigned char *t;
			t = sqlite3_column_text(st, 2);
			snprintf(r->host, sizeof r->host, "%s", t ? (const char *)t : "");
			t = sqlite3_column_text(st, 3);
			snprintf(r->cpu, sizeof r->cpu, "%s", t ? (const char *)t : "");
			r->cores = sqlite3_column_int(st, 4);
			t = sqlite3_column_text(st, 5);
			snprintf(r->version, sizeof r->version, "%s", t ? (const char *)t : "");
			r->threads = ocb_col_real(st, 6);
			r->ranks = ocb_col_real(st, 7);
			snprintf(r->workload, sizeof r->workload, "%s", wl);
			r->ttt = r->train_time = r->samples = r->train_samples = r->gbs = NAN;
		}
		struct mrec *r = &rec[n - 1];
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
	if (s != SQLITE_DONE) {
		rc = ocb_seterr(OCB_EDB, "mlperf summary: %s", sqlite3_errmsg(x->db));
		goto out;
	}
	/* systems and training workloads, in first-seen order */
	sys = calloc(n + 1, sizeof *sys);
	wls = calloc(n + 1, sizeof *wls);
	vals = calloc(n + 1, sizeof *vals);
	if (!sys || !wls || !vals) {
		rc = ocb_seterr(OCB_ENOMEM, "mlperf summary");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct mrec *r = &rec[i];
		if (isnan(r->ttt) && isnan(r->train_time))
			continue;
		size_t k = 0;
		while (k < nsys && !same_sys(&sys[k], r))
			k++;
		if (k == nsys)
			sys[nsys++] = (struct msys){r->machine, r->threads, r->ranks, r};
		k = 0;
		while (k < nwl && strcmp(wls[k], r->workload))
			k++;
		if (k == nwl)
			wls[nwl++] = r->workload;
	}
	if (!nsys)
		goto out;

	/* Summary: systems x workloads. */
	static const char *head[] = {"system", "processor", "cores", "threads", "ranks", "framework"};
	size_t nh = sizeof head / sizeof *head;
	cols = calloc(nh + nwl, sizeof *cols);
	ctitles = calloc(nwl + 1, sizeof *ctitles);
	if (!cols || !ctitles) {
		rc = ocb_seterr(OCB_ENOMEM, "mlperf summary");
		goto out;
	}
	for (size_t c = 0; c < nh; c++)
		cols[c] = head[c];
	for (size_t w = 0; w < nwl; w++) {
		snprintf(ctitles[w], sizeof ctitles[w], "%s (min)", wls[w]);
		cols[nh + w] = ctitles[w];
	}
	struct ocb_table *t, *d;
	if ((rc = ocb_rctx_table(x, &t)))
		goto out;
	if ((rc = ocb_table_init(t, "mlperf_summary",
				 "Time to train (MLPerf style): minutes to the quality target",
				 nh + nwl, cols))) {
		ocb_rctx_table_drop(x);
		goto out;
	}
	for (size_t w = 0; w < nwl; w++)
		t->best[nh + w] = OCB_BEST_MIN;
	static const char *dcols[] = {"system", "workload", "runs", "time to target (min)",
				      "score", "samples to converge", "global batch size"};
	if ((rc = ocb_rctx_table(x, &d)))
		goto out;
	t = &x->tables[x->ntables - 2]; /* the array may have moved */
	if ((rc = ocb_table_init(d, "mlperf_detail", "Time to train: per-workload detail", 7,
				 dcols))) {
		ocb_rctx_table_drop(x);
		goto out;
	}
	for (size_t k = 0; k < nsys; k++) {
		char name[256];
		size_t row;
		fmt_sys(name, sizeof name, &sys[k]);
		if ((rc = ocb_table_add_row(t, &row)))
			goto out;
		ocb_table_text(t, row, 0, sys[k].any->host);
		ocb_table_text(t, row, 1, sys[k].any->cpu);
		ocb_table_num(t, row, 2, sys[k].any->cores, "%.0f");
		ocb_table_num(t, row, 3, sys[k].threads, "%g");
		ocb_table_num(t, row, 4, sys[k].ranks, "%g");
		ocb_table_printf(t, row, 5, "ocbench %s", sys[k].any->version[0] ? sys[k].any->version
									     : (x->o->version ? x->o->version : "?"));
		for (size_t w = 0; w < nwl; w++) {
			size_t nv = 0;
			double samples = NAN, gbs = NAN, ssum = 0;
			size_t scount = 0;
			for (size_t i = 0; i < n; i++) {
				const struct mrec *r = &rec[i];
				if (!same_sys(&sys[k], r) || strcmp(r->workload, wls[w]))
					continue;
				double sec = !isnan(r->ttt) ? r->ttt : r->train_time;
				if (isnan(sec))
					continue;
				vals[nv++] = sec / 60.0;
				double smp = !isnan(r->samples) ? r->samples : r->train_samples;
				if (!isnan(smp)) {
					ssum += smp;
					scount++;
				}
				if (!isnan(r->gbs))
					gbs = r->gbs;
			}
			if (!nv)
				continue;
			if (scount)
				samples = ssum / (double)scount;
			int olympic;
			double sc = score(vals, nv, &olympic);
			ocb_table_num(t, row, nh + w, sc, "%.3f");
			size_t dr;
			if ((rc = ocb_table_add_row(d, &dr)))
				goto out;
			ocb_table_text(d, dr, 0, name);
			ocb_table_text(d, dr, 1, wls[w]);
			ocb_table_num(d, dr, 2, (double)nv, "%.0f");
			ocb_table_num(d, dr, 3, sc, "%.3f");
			ocb_table_printf(d, dr, 4, olympic ? "olympic mean of %zu" : "mean of %zu", nv);
			ocb_table_num(d, dr, 5, samples, "%.0f");
			ocb_table_num(d, dr, 6, gbs, "%.0f");
		}
	}
	ocb_table_set_note(t, "Time to target: time_to_target, else train_time; olympic mean "
			      "(best and worst dropped) over >= 3 runs, else the mean.");
out:
	free(ctitles);
	free(cols);
	free(vals);
	free(wls);
	free(sys);
	free(rec);
	sqlite3_finalize(st);
	free(sql);
	return rc;
}
