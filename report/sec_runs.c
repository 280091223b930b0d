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
#include "rctx.h"

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

/* Appends `word` to the list in buf (at *o) once, separated by `sep`. */
static void add_once(char *buf, size_t len, size_t *o, const char *word, const char *sep)
{
	if (!*word || *o >= len)
		return;
	size_t wl = strlen(word);
	for (const char *p = strstr(buf, word); p; p = strstr(p + 1, word))
		if ((p == buf || !strncmp(p - strlen(sep), sep, strlen(sep))) &&
		    (!p[wl] || !strncmp(p + wl, sep, strlen(sep))))
			return;
	*o += (size_t)snprintf(buf + *o, len - *o, "%s%s", *o ? sep : "", word);
}

int ocb_rctx_prov(const struct ocb_rctx *x, const int64_t *ids, size_t n, char **out)
{
	char mach[512] = "", runs[512] = "", dates[128] = "", shas[256] = "", vers[96] = "";
	size_t om = 0, orun = 0, od = 0, os = 0, ov = 0, nrun = 0, more = 0;
	for (size_t i = 0; i < x->nruns; i++) {
		const struct ocb_run *r = &x->runs[i];
		int used = n == 0;
		for (size_t k = 0; k < n && !used; k++)
			used = ids[k] == r->id;
		if (!used)
			continue;
		char m[600], run[64], date[11];
		snprintf(m, sizeof m, "%s (%s)", r->machine_host, r->cpu_model[0] ? r->cpu_model : "CPU ?");
		add_once(mach, sizeof mach, &om, m, "; ");
		if (nrun++ < 6) {
			snprintf(run, sizeof run, "%lld %.8s", (long long)r->id, r->uuid);
			add_once(runs, sizeof runs, &orun, run, ", ");
		} else {
			more++;
		}
		snprintf(date, sizeof date, "%.10s", r->started_at);
		add_once(dates, sizeof dates, &od, date, ", ");
		add_once(shas, sizeof shas, &os, r->git_sha[0] ? r->git_sha : "-", ", ");
		add_once(vers, sizeof vers, &ov, r->ocbench_version[0] ? r->ocbench_version : "-", ", ");
	}
	if (!nrun) {
		*out = strdup("no run recorded");
		return *out ? OCB_OK : ocb_seterr(OCB_ENOMEM, "provenance");
	}
	char extra[48] = "";
	if (more)
		snprintf(extra, sizeof extra, " and %zu more", more);
	if (asprintf(out, "%s; run%s %s%s; %s; commit %s; ocbench %s", mach, nrun > 1 ? "s" : "",
		     runs, extra, dates, shas, vers) < 0) {
		*out = NULL;
		return ocb_seterr(OCB_ENOMEM, "provenance");
	}
	return OCB_OK;
}
