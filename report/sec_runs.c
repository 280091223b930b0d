/* sec_runs: which runs the report covers, stated exactly: a table of every run whose
 * results or metrics any section uses (the selection's sel and msel, and the complete
 * training runs the MLPerf summary scores), with uuid, label, suite, status (as readers
 * show it, db/run_live.h), mode (quick/full), machine and commit, and one summary line
 * for the report's header. A selection that mixes quick and full runs is refused unless
 * opts->allow_mixed: their sizes and budgets differ, so their figures do not belong in
 * one table. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../db/store_query.h"
#include "rctx.h"

/* The MLPerf section's runs (sec_mlperf.c): complete runs with a final training time. */
static void mlperf_filter(const struct ocb_sel *sel, char *buf, size_t len)
{
	buf[0] = '\0';
	if (sel->mode == OCB_SEL_RUN) {
		snprintf(buf, len, " AND r.id = %lld", (long long)sel->run_id);
	} else if (sel->mode == OCB_SEL_LATEST) {
		snprintf(buf, len, " AND r.id = (SELECT id FROM run WHERE status = 'complete'"
				   " ORDER BY started_at DESC, id DESC LIMIT 1)");
	} else if (sel->nmachines) {
		size_t o = (size_t)snprintf(buf, len, " AND r.machine_id IN (");
		for (size_t i = 0; i < sel->nmachines && o < len; i++)
			o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? "," : "",
					      (long long)sel->machine[i]);
		if (o < len)
			snprintf(buf + o, len - o, ")");
	}
}

int ocb_runs_covered(sqlite3 *db, const struct ocb_sel *sel, struct ocb_run **out, size_t *n)
{
	char cte[2048], filter[512], *sql = NULL;
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc, s;
	*out = NULL;
	*n = 0;
	if ((rc = ocb_sel_cte(sel, cte, sizeof cte)))
		return rc;
	mlperf_filter(sel, filter, sizeof filter);
	/* a run named by --run / --latest is covered even when it holds nothing */
	char named[64] = "";
	if (sel->mode == OCB_SEL_RUN)
		snprintf(named, sizeof named, " UNION SELECT %lld", (long long)sel->run_id);
	else if (sel->mode == OCB_SEL_LATEST)
		snprintf(named, sizeof named, " UNION SELECT id FROM lr");
	if (asprintf(&sql,
		     "%s SELECT run_id FROM sel UNION SELECT run_id FROM msel%s"
		     " UNION SELECT mt.run_id FROM metric mt JOIN run r ON r.id = mt.run_id"
		     " WHERE r.status = 'complete' AND mt.step IS NULL AND mt.value IS NOT NULL"
		     " AND mt.key IN ('time_to_target', 'train_time')"
		     " AND mt.workload NOT LIKE 'quant\\_acc:%%' ESCAPE '\\'%s ORDER BY 1",
		     cte, named, filter) < 0)
		return ocb_seterr(OCB_ENOMEM, "covered runs");
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = ocb_seterr(OCB_EDB, "covered runs: %s", sqlite3_errmsg(db));
		goto out;
	}
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 8;
			struct ocb_run *nr = realloc(*out, cap * sizeof *nr);
			if (!nr) {
				rc = ocb_seterr(OCB_ENOMEM, "covered runs");
				goto out;
			}
			*out = nr;
		}
		if ((rc = ocb_run_load(db, sqlite3_column_int64(st, 0), &(*out)[*n])))
			goto out;
		(*n)++;
	}
	if (s != SQLITE_DONE)
		rc = ocb_seterr(OCB_EDB, "covered runs: %s", sqlite3_errmsg(db));
out:
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	sqlite3_finalize(st);
	free(sql);
	return rc;
}

/* "quick runs 3 (1a2b3c4d), 4 (...) and full runs 5 (...)" into buf. */
static void list_modes(const struct ocb_run *r, size_t n, char *buf, size_t len)
{
	size_t o = 0;
	for (int q = 1; q >= 0 && o < len; q--) {
		o += (size_t)snprintf(buf + o, len - o, "%s%s runs", q ? "" : " and ",
				      q ? "quick" : "full");
		int first = 1;
		for (size_t i = 0; i < n && o < len; i++)
			if (r[i].quick == q) {
				o += (size_t)snprintf(buf + o, len - o, "%s %lld (%.8s)", first ? "" : ",",
						      (long long)r[i].id, r[i].uuid);
				first = 0;
			}
	}
}

int ocb_runs_check_mixed(const struct ocb_run *r, size_t n, int allow_mixed)
{
	int quick = 0, full = 0;
	char list[900];
	for (size_t i = 0; i < n; i++) {
		quick += r[i].quick == 1;
		full += r[i].quick == 0;
	}
	if (!quick || !full || allow_mixed)
		return OCB_OK;
	list_modes(r, n, list, sizeof list);
	return ocb_seterr(OCB_EINVAL,
			  "the selection mixes %s: pass --allow-mixed, or choose runs with --run, "
			  "--latest or --machine",
			  list);
}

/* Appends "a, b" to buf (at *o) unless `word` is already listed. */
static void add_word(char *buf, size_t len, size_t *o, const char *word)
{
	if (!*word || *o >= len)
		return;
	for (const char *p = strstr(buf, word); p; p = strstr(p + 1, word)) {
		size_t wl = strlen(word);
		if ((p == buf || p[-1] == ' ') && (p[wl] == ',' || p[wl] == '\0'))
			return;
	}
	*o += (size_t)snprintf(buf + *o, len - *o, "%s%s", *o ? ", " : "", word);
}

void ocb_runs_summary(const struct ocb_run *r, size_t n, char *buf, size_t len)
{
	char hosts[256] = "", shas[256] = "", modes[64] = "";
	size_t oh = 0, os = 0, om = 0, nm = 0;
	for (size_t i = 0; i < n; i++) {
		int seen = 0;
		for (size_t k = 0; k < i && !seen; k++)
			seen = r[k].machine_id == r[i].machine_id;
		nm += !seen;
		add_word(hosts, sizeof hosts, &oh, r[i].machine_host);
		add_word(shas, sizeof shas, &os, r[i].git_sha[0] ? r[i].git_sha : "-");
		add_word(modes, sizeof modes, &om, ocb_run_mode(&r[i]));
	}
	snprintf(buf, len, "%zu run(s) on %zu machine(s) (%s); commits %s; modes %s", n, nm,
		 hosts, shas, modes);
}

int ocb_rsec_runs(struct ocb_rctx *x)
{
	static const char *const cols[] = {"run", "uuid", "label", "suite", "status", "mode",
					   "machine", "cpu", "fingerprint", "commit", "ocbench",
					   "started"};
	struct ocb_table *t;
	int rc;
	if (!x->nruns)
		return OCB_OK;
	if ((rc = ocb_rctx_table(x, &t)) ||
	    (rc = ocb_table_init(t, "runs_covered", "Runs covered by this report",
				 sizeof cols / sizeof *cols, cols))) {
		ocb_rctx_table_drop(x);
		return rc;
	}
	for (size_t i = 0; i < x->nruns && !rc; i++) {
		const struct ocb_run *r = &x->runs[i];
		size_t row;
		if ((rc = ocb_table_add_row(t, &row)))
			break;
		ocb_table_printf(t, row, 0, "%lld", (long long)r->id);
		ocb_table_text(t, row, 1, r->uuid);
		ocb_table_text(t, row, 2, r->label[0] ? r->label : "-");
		ocb_table_text(t, row, 3, r->suite);
		ocb_table_text(t, row, 4, r->shown);
		ocb_table_text(t, row, 5, ocb_run_mode(r));
		ocb_table_text(t, row, 6, r->machine_host);
		ocb_table_text(t, row, 7, r->cpu_model);
		ocb_table_printf(t, row, 8, "%.12s", r->fingerprint);
		ocb_table_text(t, row, 9, r->git_sha[0] ? r->git_sha : "-");
		ocb_table_text(t, row, 10, r->ocbench_version);
		rc = ocb_table_text(t, row, 11, r->started_at);
	}
	if (!rc)
		rc = ocb_table_set_note(t, x->covers);
	return rc;
}
