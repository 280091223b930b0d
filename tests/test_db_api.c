/* db_api: the typed reads of db/ocb_db.h: result rows loaded back through the one row
 * codec, listings read by column name, metric filters, the current ceiling (unflagged
 * first) seen the same by the store and the report, history and result pairs. */
#include "../db/ocb_db.h"
#include "../db/result_row.h"
#include "report_fixture.h"

static struct ocb_store *fresh(char *dir, size_t len, char *path, size_t plen)
{
	fx_tmpdir(dir, len, "dbapi");
	snprintf(path, plen, "%s/t.db", dir);
	return fx_open(path);
}

Test(db_api, result_row_round_trip_keeps_nan_and_text)
{
	char dir[256], path[512];
	struct ocb_store *s = fresh(dir, sizeof dir, path, sizeof path);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	int64_t run = fx_run(s, m, "baseline", "lbl");
	struct ocb_result r, back;
	double smp[3] = {1e-3, 2e-3, 3e-3};
	memset(&r, 0, sizeof r);
	snprintf(r.suite, sizeof r.suite, "baseline");
	snprintf(r.bench, sizeof r.bench, "k");
	r.params_json = "{\"n\":4}";
	r.threads = 2;
	r.st = (struct ocb_stats){3, 1e-3, 2e-3, 2e-3, NAN, 1e-4, 1e-3, 3e-3, 1};
	r.flops = 8;
	r.bytes = NAN;
	r.check_err = 0.5;
	snprintf(r.bound, sizeof r.bound, "bw_l1");
	r.bound_frac = NAN;
	snprintf(r.suspect, sizeof r.suspect, "host busy");
	r.samples = smp;
	r.nsamples = 3;
	int64_t id;
	cr_assert_eq(ocb_store_result(s, run, &r, &id), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_store_result_load(s, id, &back), OCB_OK, "%s", ocb_lasterr());
	cr_assert_str_eq(back.params_json, "{\"n\":4}");
	cr_assert_str_eq(back.unit, "s");      /* "" is stored as the default unit */
	cr_assert_str_eq(back.status, "ok");
	cr_assert_str_eq(back.variant, "");    /* "" -> NULL -> "" */
	cr_assert_str_eq(back.suspect, "host busy");
	cr_assert_str_eq(back.bound, "bw_l1");
	cr_assert(isnan(back.st.stddev) && isnan(back.bytes) && isnan(back.bound_frac));
	cr_assert_float_eq(back.st.median, 2e-3, 1e-15);
	cr_assert_float_eq(back.check_err, 0.5, 1e-15);
	cr_assert_eq(back.threads, 2);
	cr_assert_eq(back.st.outliers, 1);
	cr_assert_eq(back.nsamples, 3);
	cr_assert_float_eq(back.samples[2], 3e-3, 1e-15);
	ocb_result_release(&back);

	char cols[1024];
	ocb_result_cols_prefixed("o.", cols, sizeof cols);
	cr_assert(strncmp(cols, "o.suite, o.bench, o.params_json,", 32) == 0, "%s", cols);
	cr_assert(strstr(cols, ", o.suspect") && !strstr(cols, "o. "), "%s", cols);
	ocb_store_close(s);
	fx_rmdir(dir);
}

Test(db_api, listings_read_by_column_name)
{
	char dir[256], path[512];
	struct ocb_store *s = fresh(dir, sizeof dir, path, sizeof path);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	int64_t r1 = fx_run(s, m, "baseline", NULL);
	fx_result(s, r1, "baseline", "sgemm", "{\"n\":8}", 1e-3, 0.01, 7, 1, 1e6, 0);
	cr_assert_eq(ocb_store_run_finish(s, r1, "complete"), OCB_OK);
	int64_t r2 = fx_run(s, m, "train", "second");
	cr_assert_eq(ocb_store_run_finish(s, r2, "complete"), OCB_OK);

	struct ocb_rows rows;
	cr_assert_eq(ocb_db_list_runs(s, NULL, NULL, 10, &rows), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(rows.nrow, 2);
	size_t newest = ocb_rows_int(&rows, 0, "id") == r2 ? 0 : 1;
	cr_assert_str_eq(ocb_rows_text(&rows, newest, "label", "-"), "second");
	cr_assert_str_eq(ocb_rows_text(&rows, 1 - newest, "label", "-"), "-"); /* NULL */
	cr_assert(ocb_rows_is_null(&rows, 1 - newest, "label"));
	cr_assert_eq(ocb_rows_int(&rows, 1 - newest, "results"), 1);
	cr_assert_str_eq(ocb_rows_text(&rows, 0, "status", ""), "complete");
	cr_assert(ocb_rows_is_null(&rows, 0, "no_such_column"));
	ocb_rows_release(&rows);

	cr_assert_eq(ocb_db_list_runs(s, "train", NULL, 10, &rows), OCB_OK);
	cr_assert_eq(rows.nrow, 1);
	ocb_rows_release(&rows);

	cr_assert_eq(ocb_db_show_results(s, r1, &rows), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(rows.nrow, 1);
	cr_assert_str_eq(ocb_rows_text(&rows, 0, "bench", ""), "sgemm");
	/* gflops = flops / median / 1e9; gbs NULL when bytes is 0 (not modelled) */
	double med = ocb_rows_real(&rows, 0, "median");
	cr_assert_float_eq(ocb_rows_real(&rows, 0, "gflops"), 1e6 / med / 1e9, 1e-9);
	cr_assert(ocb_rows_is_null(&rows, 0, "gbs"));
	ocb_rows_release(&rows);
	ocb_store_close(s);
	fx_rmdir(dir);
}

Test(db_api, metric_query_filters_and_orders)
{
	char dir[256], path[512];
	struct ocb_store *s = fresh(dir, sizeof dir, path, sizeof path);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	int64_t r = fx_run(s, m, "train", NULL);
	for (long step = 2; step >= 0; step--)
		ocb_store_metric(s, r, "wl_b", step, "train_loss", 1.0 + (double)step, "nats");
	ocb_store_metric(s, r, "wl_a", 0, "train_loss", 9.0, "nats");
	ocb_store_metric(s, r, "wl_a", -1, "train_time", 5.0, "s");
	ocb_store_metric(s, r, "quant_acc:mlp:rtn:4:32", -1, "test_accuracy", 0.8, "1");
	cr_assert_eq(ocb_store_run_finish(s, r, "complete"), OCB_OK);

	struct ocb_sel sel = {.mode = OCB_SEL_RUN, .run_id = r};
	struct ocb_metric_query q = {.steps = OCB_MQ_STEPPED, .quant = OCB_MQ_QUANT_NONE,
				     .order = OCB_MQ_BY_WL_KEY_STEP};
	struct ocb_metric_set ms;
	cr_assert_eq(ocb_sel_metrics(s, &sel, &q, &ms), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ms.n, 4);
	cr_assert_str_eq(ms.r[0].workload, "wl_a");
	cr_assert_eq(ms.r[1].step, 0);
	cr_assert_eq(ms.r[3].step, 2);
	cr_assert_float_eq(ms.r[3].value, 3.0, 1e-12);
	ocb_metric_set_release(&ms);

	static const char *const keys[] = {"train_time", NULL};
	struct ocb_metric_query f = {.steps = OCB_MQ_FINAL, .keys = keys};
	cr_assert_eq(ocb_sel_metrics(s, &sel, &f, &ms), OCB_OK);
	cr_assert_eq(ms.n, 1);
	cr_assert_eq(ms.r[0].step, -1);
	cr_assert_str_eq(ms.r[0].unit, "s");
	ocb_metric_set_release(&ms);

	struct ocb_metric_query qa = {.steps = OCB_MQ_FINAL, .quant = OCB_MQ_QUANT_ONLY,
				      .quant_kind = "quant_acc"};
	cr_assert_eq(ocb_sel_metrics(s, &sel, &qa, &ms), OCB_OK);
	cr_assert_eq(ms.n, 1);
	cr_assert_str_eq(ms.r[0].workload, "quant_acc:mlp:rtn:4:32");
	ocb_metric_set_release(&ms);
	ocb_store_close(s);
	fx_rmdir(dir);
}

Test(db_api, current_ceiling_prefers_unflagged_in_store_and_report)
{
	char dir[256], path[512];
	struct ocb_store *s = fresh(dir, sizeof dir, path, sizeof path);
	int64_t m = fx_machine(s, "hostA", "aaaa1111"); /* flops_fp32 = 80, unflagged */
	struct ocb_ceiling bad = {.kind = "flops_fp32", .threads = 1, .value = 5,
				  .unit = "GFLOP/s", .method = "test"};
	snprintf(bad.suspect, sizeof bad.suspect, "core shared");
	cr_assert_eq(ocb_store_ceiling(s, m, 0, &bad), OCB_OK); /* newer but flagged */

	struct ocb_ceiling *c = NULL;
	size_t n = 0;
	double store_v = NAN, report_v = NAN;
	cr_assert_eq(ocb_store_ceilings_get(s, m, &c, &n), OCB_OK);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(c[i].kind, "flops_fp32") && c[i].threads == 1)
			store_v = c[i].value;
	free(c);
	struct ocb_mceil mc;
	cr_assert_eq(ocb_mceil_load(s, &m, 1, &mc), OCB_OK, "%s", ocb_lasterr());
	for (size_t i = 0; i < mc.n; i++)
		if (!strcmp(mc.c[i].kind, "flops_fp32") && mc.c[i].threads == 1)
			report_v = mc.c[i].value;
	cr_assert_str_eq(mc.host, "hostA");
	cr_assert_eq(mc.caches.l3, 32 << 20); /* the machine record's, for the level rule */
	cr_assert_eq(mc.caches.l2, 512 << 10);
	cr_assert_eq(mc.caches.cores, 2);
	ocb_mceil_release(&mc);
	cr_assert_float_eq(store_v, 80, 1e-12);
	cr_assert_float_eq(report_v, 80, 1e-12);
	ocb_store_close(s);
	fx_rmdir(dir);
}

/* The report's ceiling loader gives the measured last-level capacity (cap_llc, MiB) to
 * the level rule: not while the only stored row is flagged and above the reported 32 MiB,
 * a flagged 20 MiB (below it), then 24 MiB once an unflagged one is stored. */
Test(db_api, report_caches_carry_the_measured_llc)
{
	char dir[256], path[512];
	struct ocb_store *s = fresh(dir, sizeof dir, path, sizeof path);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	struct ocb_ceiling cap = {.kind = "cap_llc", .threads = 1, .value = 99, .unit = "MiB",
				  .method = "test"};
	snprintf(cap.suspect, sizeof cap.suspect, "spread 70%%");
	cr_assert_eq(ocb_store_ceiling(s, m, 0, &cap), OCB_OK);
	struct ocb_mceil mc;
	cr_assert_eq(ocb_mceil_load(s, &m, 1, &mc), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(mc.caches.llc, 0, "a flagged capacity above the reported size is not used");
	ocb_mceil_release(&mc);
	cap.value = 20;
	cr_assert_eq(ocb_store_ceiling(s, m, 0, &cap), OCB_OK);
	cr_assert_eq(ocb_mceil_load(s, &m, 1, &mc), OCB_OK, "%s", ocb_lasterr());
	cr_assert_float_eq(mc.caches.llc, 20.0 * 1048576, 1e-6, "flagged, below the reported");
	ocb_mceil_release(&mc);
	cap.value = 24;
	cap.suspect[0] = 0;
	cr_assert_eq(ocb_store_ceiling(s, m, 0, &cap), OCB_OK);
	cr_assert_eq(ocb_mceil_load(s, &m, 1, &mc), OCB_OK, "%s", ocb_lasterr());
	cr_assert_float_eq(mc.caches.llc, 24.0 * 1048576, 1e-6);
	cr_assert_float_eq(ocb_roof_llc(&mc.caches), 24.0 * 1048576, 1e-6);
	ocb_mceil_release(&mc);
	ocb_store_close(s);
	fx_rmdir(dir);
}

Test(db_api, result_pairs_history_and_unpaired_cases)
{
	char dir[256], path[512];
	struct ocb_store *s = fresh(dir, sizeof dir, path, sizeof path);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	int64_t a = fx_run(s, m, "baseline", NULL);
	fx_result(s, a, "baseline", "k", "{\"n\":1}", 1e-3, 0.01, 9, 1, 0, 0);
	fx_result(s, a, "baseline", "only_a", "{}", 1e-3, 0.01, 9, 2, 0, 0);
	cr_assert_eq(ocb_store_run_finish(s, a, "complete"), OCB_OK);
	int64_t b = fx_run(s, m, "baseline", NULL);
	fx_result(s, b, "baseline", "k", "{\"n\":1}", 2e-3, 0.01, 9, 3, 0, 0);
	cr_assert_eq(ocb_store_run_finish(s, b, "complete"), OCB_OK);

	struct ocb_result_pair *p = NULL;
	size_t np = 0;
	cr_assert_eq(ocb_db_result_pairs(s, a, b, &p, &np), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(np, 1);
	cr_assert_str_eq(p[0].b.params, "{\"n\":1}");
	cr_assert(p[0].c.median > p[0].b.median);
	double *buf = NULL;
	size_t cap = 0, ns = 0;
	cr_assert_eq(ocb_db_samples(s, p[0].cand_id, &buf, &cap, &ns), OCB_OK);
	cr_assert_eq(ns, 9);
	free(buf);
	ocb_result_pairs_release(p, np);

	struct ocb_case_row *only = NULL;
	size_t no = 0;
	cr_assert_eq(ocb_db_unpaired(s, a, b, &only, &no), OCB_OK);
	cr_assert_eq(no, 1);
	cr_assert_str_eq(only[0].bench, "only_a");
	ocb_case_rows_release(only, no);

	struct ocb_history_row *h = NULL;
	size_t nh = 0;
	cr_assert_eq(ocb_db_history(s, "k", NULL, NULL, 0, &h, &nh), OCB_OK);
	cr_assert_eq(nh, 2);
	cr_assert_eq(h[0].run_id, a);
	cr_assert_str_eq(h[1].host, "hostA");
	ocb_history_rows_release(h, nh);
	ocb_store_close(s);
	fx_rmdir(dir);
}
