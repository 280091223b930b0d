/* report_sparse: the sparse suite's section (report/sec_sparse.c) on a database written
 * through the store API: the kernel table joins the three peers of a case and the set-up
 * metrics, speedups are computed from the stored medians, a failed peer says so, the
 * crossover density per block size is interpolated from the stored results, and the
 * accuracy and memory tables take their reference from the target-0 run. */
#include "../report/report.h"
#include "report_fixture.h"

#define SHAPE "\"k\":2048,\"m\":2048,\"n\":128"

/* A bsr_spmm result of `ms` milliseconds (tiny noise) with the useful work 2 d m k n. */
static int64_t kres(struct ocb_store *s, int64_t run, int block, double density, const char *peer,
		    double ms)
{
	char p[160];
	snprintf(p, sizeof p, "{\"block\":%d,\"density\":%g," SHAPE ",\"peer\":\"%s\"}", block,
		 density, peer);
	double d = strcmp(peer, "openblas") ? density / 100 : 1.0;
	return fx_result(s, run, "sparse", "bsr_spmm", p, ms * 1e-3, 1e-6, 9, 7, 2 * d * 2048.0 *
			 2048 * 128, 1e6);
}

static void sparse_metrics(struct ocb_store *s, int64_t r, const char *kind, int block,
			   double target, const char *qkey, double q, double step, double sp)
{
	char wl[64], id[160];
	snprintf(wl, sizeof wl, "%s_b%d_s%g", kind, block, target * 100);
	snprintf(id, sizeof id, "{\"kind\":\"%s\",\"block\":%d,\"target\":%g,\"rule\":"
		 "\"block_frobenius_magnitude\"}", kind, block, target);
	cr_assert_eq(ocb_store_workload_ident(s, r, wl, id), OCB_OK, "%s", ocb_lasterr());
	ocb_store_metric(s, r, wl, -1, qkey, q, "1");
	ocb_store_metric(s, r, wl, -1, "step_time", step, "s");
	ocb_store_metric(s, r, wl, -1, "block_sparsity", sp, "1");
	ocb_store_metric(s, r, wl, -1, "dense_bytes", 2048.0 * 1024, "bytes");
	ocb_store_metric(s, r, wl, -1, "sparse_bytes", 2048.0 * 1024 * (1 - sp) + 4096, "bytes");
	ocb_store_metric(s, r, wl, -1, "sparse_bytes_q8_0", 600.0 * 1024 * (1 - sp), "bytes");
	ocb_store_metric(s, r, wl, -1, "sparse_bytes_q4_0", 300.0 * 1024 * (1 - sp), "bytes");
}

static void fill(struct ocb_store *s, int64_t r)
{
	kres(s, r, 32, 100, "openblas", 10.0); /* the dense line */
	/* 32x32: speedups 5, 2.5, 1.25, 0.833 at 10, 20, 50, 100%: crossover 80% */
	const double d32[] = {10, 20, 50, 100}, t32[] = {2.0, 4.0, 8.0, 12.0};
	for (int i = 0; i < 4; i++)
		kres(s, r, 32, d32[i], "bsr", t32[i]);
	/* 8x8: 2.0 at 10%, 0.5 at 50%: crossover 10 + 40 / 1.5 = 36.7% */
	kres(s, r, 8, 10, "bsr", 5.0);
	kres(s, r, 8, 50, "bsr", 20.0);
	/* 64x64: faster at every density */
	kres(s, r, 64, 50, "bsr", 4.0);
	kres(s, r, 64, 100, "bsr", 9.0);
	/* librsb: 6 ms at 10% (3x slower than ours), tuned for 1.5 s; failed at 20% */
	kres(s, r, 32, 10, "librsb", 6.0);
	int64_t bad = kres(s, r, 32, 20, "librsb", 1.0);
	sqlite3 *db = ocb_store_handle(s);
	char sql[96];
	snprintf(sql, sizeof sql, "UPDATE result SET status='failed' WHERE id=%lld", (long long)bad);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	const char *wl = "bsr_spmm:librsb:2048x2048x128:b32:d10:t1";
	cr_assert_eq(ocb_store_workload_ident(s, r, wl, "{\"kind\":\"bsr_spmm_setup\",\"peer\":"
					      "\"librsb\",\"m\":2048,\"k\":2048,\"n\":128,\"block\":"
					      "32,\"density\":10,\"threads\":1}"), OCB_OK);
	ocb_store_metric(s, r, wl, -1, "librsb_tune_time", 1.5, "s");
	ocb_store_metric(s, r, wl, -1, "convert_time", 0.004, "s");
	/* the models: 0% is the reference of the deltas */
	sparse_metrics(s, r, "sparse_mlp", 8, 0.0, "test_accuracy", 0.90, 0.030, 0.0);
	sparse_metrics(s, r, "sparse_mlp", 8, 0.95, "test_accuracy", 0.8811, 0.003, 0.95);
	/* the sparse layers' step alone: 0.5 ms vs 2 ms for the same layers dense */
	ocb_store_metric(s, r, "sparse_mlp_b8_s95", -1, "layer_step_time", 0.0005, "s");
	ocb_store_metric(s, r, "sparse_mlp_b8_s95", -1, "layer_step_time_dense", 0.002, "s");
	sparse_metrics(s, r, "sparse_lm", 8, 0.0, "val_ppl", 10.0, 0.2, 0.0);
	sparse_metrics(s, r, "sparse_lm", 8, 0.9, "val_ppl", 10.5, 0.1, 0.9);
}

static void expect_line(const char *md, const char *line)
{
	cr_expect_not_null(strstr(md, line), "missing `%s` in\n%s", line, md);
}

Test(report_sparse, kernel_crossover_accuracy_memory)
{
	char dir[256], db[300], out[300], p[400];
	fx_tmpdir(dir, sizeof dir, "rsparse");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	int64_t r = fx_run(s, m, "sparse", NULL);
	fill(s, r);
	cr_assert_eq(ocb_store_run_finish(s, r, "complete"), OCB_OK);
	struct ocb_report_opts o = {.out_dir = out, .version = "0.1.0", .formats = OCB_FMT_MD};
	struct ocb_report_summary sum;
	cr_assert_eq(ocb_report_write(s, &o, &sum), OCB_OK, "%s", ocb_lasterr());
	ocb_store_close(s);
	snprintf(p, sizeof p, "%s/report.md", out);
	char *md = fx_slurp(p);
	/* kernel: 32x32 at 10%: 2 ms, useful 2 * 0.1 * 2048^2 * 128 / 2 ms = 53.7 GFLOP/s,
	 * dense-eq. 537, x OpenBLAS 5, librsb 6 ms -> 3x, tuning 1.5 s, conversion 4 ms */
	expect_line(md, "| hostA | 2048x2048x128 | 32 | 10 | 1 | 2 | 53.7 | 536.9 | 10 | 5.00 | 6 "
			"| 3.00 | 1.500 | 4 |");
	expect_line(md, "| hostA | 2048x2048x128 | 32 | 20 | 1 | 4 | 53.7 | 268.4 | 10 | 2.50 | "
			"failed |  |  |  |");
	/* 8x8 measured without its own dense row: the shape's dense time is used */
	expect_line(md, "| hostA | 2048x2048x128 | 8 | 50 | 1 | 20 | 26.8 | 53.7 | 10 | 0.50 | - |");
	/* crossover per block size */
	expect_line(md, "| hostA | 2048x2048x128 | 8 | 1 | 10-50 (2) | 2.00 | 0.50 | 37 |");
	expect_line(md, "| hostA | 2048x2048x128 | 32 | 1 | 10-100 (4) | 5.00 | 0.83 | 80 |");
	expect_line(md, "| hostA | 2048x2048x128 | 64 | 1 | 50-100 (2) | 2.50 | 1.11 | &gt;= 100 "
			"(faster at every density) |");
	/* accuracy: -1.89 points at 95%, 10x faster step; LM +5% ppl at 90%, 2x */
	expect_line(md, "| 1 | 8 | 95 | 95.0 | 0.8811 | -1.89 | 3 | 10.00 | ");
	expect_line(md, "| 0.5 | 2 | 4.00 |");
	expect_line(md, "| 1 | 8 | 90 | 90.0 | 10.500 | +5.00 | 100 | 2.00 | ");
	/* memory at 95%: 2048 KiB dense, 106.4 KiB BSR (19.25x), Q8_0 30 KiB */
	expect_line(md, "| mlp (hidden) | 1 | 8 | 95.0 | 2048.0 | 106.4 | 19.25 | 30.0 | 68.27 |");
	free(md);
	fx_rmdir(dir);
}

/* No sparse rows: the section adds nothing (other suites' reports are unchanged). */
Test(report_sparse, absent_without_sparse_rows)
{
	char dir[256], db[300], out[300], p[400];
	fx_tmpdir(dir, sizeof dir, "rsparse0");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	struct ocb_store *s = fx_open(db);
	int64_t r = fx_run(s, fx_machine(s, "hostA", "aaaa1111"), "baseline", NULL);
	fx_result(s, r, "baseline", "sgemm", "{\"n\":256}", 1e-3, 0.01, 9, 1, 3e7, 8e5);
	cr_assert_eq(ocb_store_run_finish(s, r, "complete"), OCB_OK);
	struct ocb_report_opts o = {.out_dir = out, .version = "0.1.0", .formats = OCB_FMT_MD};
	struct ocb_report_summary sum;
	cr_assert_eq(ocb_report_write(s, &o, &sum), OCB_OK, "%s", ocb_lasterr());
	ocb_store_close(s);
	snprintf(p, sizeof p, "%s/report.md", out);
	char *md = fx_slurp(p);
	cr_expect_null(strstr(md, "Sparse suite"), "%s", md);
	free(md);
	fx_rmdir(dir);
}
