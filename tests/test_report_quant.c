/* report_quant: the compression-vs-accuracy table carries the ggml-exact rows of the block
 * formats and, beside each, its "<fmt>/fp16-aware" row, with the note that tells them
 * apart (report/sec_quant.c; identities and keys of common/workload_id.h). */
#include "../common/workload_id.h"
#include "../report/report.h"
#include "report_fixture.h"

Test(report_quant, fp16_aware_rows_beside_ggml_rows)
{
	char dir[256], db[300], out[300], p[400];
	fx_tmpdir(dir, sizeof dir, "rquant");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	int64_t r = fx_run(s, m, "quant", NULL);
	/* weight_rel_err: the fp16-aware rounding is a little more accurate */
	struct { const char *wl; double acc, werr; } q[] = {
		{"quant_acc:mlp:fp32:32:-", 0.884, 0},
		{"quant_acc:mlp:q8_0/fp16-aware:8:32", 0.8838, 2.84e-5},
		{"quant_acc:mlp:q4_0:4:32", 0.871, 7.31e-3},
		{"quant_acc:mlp:q8_0:8:32", 0.8839, 2.86e-5},
		{"quant_acc:mlp:q4_0/fp16-aware:4:32", 0.872, 7.30e-3},
	};
	for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
		ocb_store_metric(s, r, q[i].wl, -1, "test_accuracy", q[i].acc, "ratio");
		ocb_store_metric(s, r, q[i].wl, -1, "weight_rel_err", q[i].werr, "ratio");
	}
	cr_assert_eq(ocb_store_run_finish(s, r, "complete"), OCB_OK);
	struct ocb_report_opts o = {.out_dir = out, .version = "0.1.0"};
	struct ocb_report_summary sum;
	cr_assert_eq(ocb_report_write(s, &o, &sum), OCB_OK, "%s", ocb_lasterr());
	ocb_store_close(s);

	snprintf(p, sizeof p, "%s/csv/quant_accuracy_0.csv", out);
	char *csv = fx_slurp(p);
	/* rows sorted by method: each ggml-exact row directly followed by its fp16-aware row */
	const char *order[] = {"\nfp32,", "\nq4_0,", "\nq4_0/fp16-aware,", "\nq8_0,",
			       "\nq8_0/fp16-aware,"};
	const char *at = csv;
	for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
		const char *hit = strstr(at, order[i]);
		cr_assert_not_null(hit, "row %s missing or out of order in\n%s", order[i] + 1, csv);
		at = hit + 1;
	}
	cr_assert_not_null(strstr(csv, "\nq8_0/fp16-aware,8,32,0.8838"), "%s", csv);
	free(csv);
	snprintf(p, sizeof p, "%s/report.md", out);
	char *md = fx_slurp(p);
	cr_assert_not_null(strstr(md, "/fp16-aware rows round the scale to fp16 first"), "%s", md);
	free(md);
	fx_rmdir(dir);
}

/* A row whose identity is stored (workload_ident, schema v4) is read from the struct, not
 * the name: a name no old-format reader could split still lands in the right row. */
Test(report_quant, identity_read_from_store_not_name)
{
	char dir[256], db[300], out[300], p[400];
	fx_tmpdir(dir, sizeof dir, "rquant_id");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	int64_t r = fx_run(s, m, "quant", NULL);
	struct ocb_quant_id fp = {"mlp", "fp32", "", "32", "-"};
	struct ocb_quant_id q4 = {"mlp", "q4_0", "fp16-aware", "4", "32"};
	char *j1 = ocb_quant_id_to_json(&fp), *j2 = ocb_quant_id_to_json(&q4);
	cr_assert_eq(ocb_store_workload_ident(s, r, "baseline-row", j1), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_store_workload_ident(s, r, "opaque#7", j2), OCB_OK, "%s", ocb_lasterr());
	free(j1);
	free(j2);
	ocb_store_metric(s, r, "baseline-row", -1, "test_accuracy", 0.884, "ratio");
	ocb_store_metric(s, r, "opaque#7", -1, "test_accuracy", 0.8712, "ratio");
	/* an old-format row (no identity) joins the same table */
	ocb_store_metric(s, r, "quant_acc:mlp:rtn:3:128", -1, "test_accuracy", 0.8011, "ratio");
	cr_assert_eq(ocb_store_run_finish(s, r, "complete"), OCB_OK);
	struct ocb_report_opts o = {.out_dir = out, .version = "0.1.0"};
	struct ocb_report_summary sum;
	cr_assert_eq(ocb_report_write(s, &o, &sum), OCB_OK, "%s", ocb_lasterr());
	ocb_store_close(s);
	snprintf(p, sizeof p, "%s/csv/quant_accuracy_0.csv", out);
	char *csv = fx_slurp(p);
	cr_expect_not_null(strstr(csv, "\nfp32,32,-,0.884"), "%s", csv);
	cr_expect_not_null(strstr(csv, "\nq4_0/fp16-aware,4,32,0.871"), "%s", csv);
	cr_expect_not_null(strstr(csv, "\nrtn,3,128,0.801"), "%s", csv);
	cr_expect_null(strstr(csv, "opaque"), "%s", csv);
	free(csv);
	fx_rmdir(dir);
}
