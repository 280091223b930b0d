/* ternary suite end to end: `run --suite ternary --quick` in a temporary database (the
 * Debian Fashion-MNIST and fortunes data), its metrics and claims, the report's paper
 * table and loss-curve plot; and runs of the DQT / STE workloads at 1 and at 2 threads
 * give the same metrics bit for bit. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "san.h"

static long long q_int(const char *db, const char *sql) { return cli_query_int(db, sql); }

static double q_num(const char *db, const char *sql)
{
	char t[64];
	cli_query_text(db, sql, t, sizeof t);
	return *t ? atof(t) : -1.0;
}

Test(ternary_suite, quick_end_to_end)
{
	char dir[64], db[128], dbopt[400], out[400], rep[400], path[400];
	cli_tmpdir(dir, sizeof dir);
	snprintf(db, sizeof db, "%s/t.db", dir);
	snprintf(dbopt, sizeof dbopt, "--db=%s", db);
	snprintf(out, sizeof out, "--out=%s/out", dir);
	const char *argv[] = {"", dbopt, "--quiet", "run", "--suite", "ternary", "--quick",
			      "--threads", "2", "--seed", "1", out, NULL};
	struct cli_out o;
	cr_assert_eq(cli_run(&o, argv, NULL), 0);
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	/* every quick grid row of both models trained and reported */
	cr_expect_eq(q_int(db, "SELECT count(DISTINCT workload) FROM metric WHERE workload "
			       "LIKE 'ternary_mlp:%' AND key='test_accuracy' AND step IS NULL"), 5);
	cr_expect_eq(q_int(db, "SELECT count(DISTINCT workload) FROM metric WHERE workload "
			       "LIKE 'ternary_lm:%' AND key='val_loss' AND step IS NULL"), 5);
	/* far above chance (0.1) after one epoch on 10,000 examples, every method */
	cr_expect_gt(q_num(db, "SELECT min(value) FROM metric WHERE workload LIKE "
			       "'ternary_mlp:%' AND key='test_accuracy' AND step IS NULL"), 0.6);
	/* the TQ2_0/TQ1_0 export scores the training-time accuracy */
	cr_expect_eq(q_int(db, "SELECT value FROM metric WHERE workload='ternary_mlp:dqt-ternary:"
			       "fp32' AND key='export_equal'"), 1);
	/* the kernel cases ran and passed their check */
	cr_expect_eq(q_int(db, "SELECT count(*) FROM result WHERE bench='ternary_gemm' AND "
			       "status='ok'"),
		     q_int(db, "SELECT count(*) FROM result WHERE bench='ternary_gemm'"));
	cr_expect_gt(q_int(db, "SELECT count(*) FROM result WHERE bench='ternary_gemm'"), 0);
	/* MLLOG per training and checkpoints */
	snprintf(path, sizeof path, "%s/out/mllog_ternary_mlp_dqt-8_fp32.txt", dir);
	size_t len = 0;
	char *ml = cli_slurp(path, &len);
	cr_expect(ml && strstr(ml, ":::MLLOG") && strstr(ml, "run_stop"), "%s", path);
	free(ml);
	/* the report: paper table and the loss curves of every method */
	snprintf(rep, sizeof rep, "--out=%s/rep", dir);
	const char *rargv[] = {"", dbopt, "--quiet", "report", rep, NULL};
	cr_assert_eq(cli_run(&o, rargv, NULL), 0);
	cr_expect_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	snprintf(path, sizeof path, "%s/rep/report.md", dir);
	char *md = cli_slurp(path, &len);
	cr_expect(md && strstr(md, "Ternary suite: MLP on Fashion-MNIST") &&
		  strstr(md, "dqt-ternary") && strstr(md, "ternary_mlp_loss"), "report.md");
	free(md);
	/* DQT-8 holds <= 0.75x the bytes of BitNet STE (both fp32 moments), measured (peak
	 * RSS: last, as ASan's own memory makes it incomparable, tests/san.h) */
	double ste = q_num(db, "SELECT value FROM metric WHERE workload='ternary_mlp:ste-ternary:"
			       "fp32' AND key='bytes_per_param_measured'");
	double dqt = q_num(db, "SELECT value FROM metric WHERE workload='ternary_mlp:dqt-8:fp32' "
			       "AND key='bytes_per_param_measured'");
	cr_expect(ste > 0 && dqt > 0, "dqt-8 %.2f, ste %.2f B/param", dqt, ste);
	double ste_c = q_num(db, "SELECT value FROM metric WHERE workload='ternary_mlp:ste-"
				 "ternary:fp32' AND key='bytes_per_param_computed'");
	double dqt_c = q_num(db, "SELECT value FROM metric WHERE workload='ternary_mlp:dqt-8:"
				 "fp32' AND key='bytes_per_param_computed'");
	cr_expect(dqt_c > 0 && dqt_c <= 0.75 * ste_c, "computed: dqt-8 %.2f, ste %.2f B/param",
		  dqt_c, ste_c);
	/* the LM width scan: every (width, method) case, its table, and DQT-8's total falling
	 * relative to STE's as the state outgrows the activations (computed; measured below) */
	cr_expect_eq(q_int(db, "SELECT count(DISTINCT workload) FROM metric WHERE workload "
			       "GLOB 'ternary_lm_d[0-9]*' AND key='bytes_per_param_measured'"), 8);
	md = cli_slurp(path, &len);
	cr_expect(md && strstr(md, "as the model widens"), "report.md: no width table");
	free(md);
	double wr[2][2]; /* [d 64, 256][computed, measured] DQT-8 / STE totals */
	for (int w = 0; w < 2; w++)
		for (int k = 0; k < 2; k++) {
			char sql[400];
			const char *key = k ? "bytes_per_param_measured" : "bytes_per_param_computed";
			snprintf(sql, sizeof sql, "SELECT (SELECT value FROM metric WHERE workload="
				 "'ternary_lm_d%d:dqt-8:fp32' AND key='%s') / (SELECT value FROM "
				 "metric WHERE workload='ternary_lm_d%d:ste-ternary:fp32' AND "
				 "key='%s')", w ? 256 : 64, key, w ? 256 : 64, key);
			wr[w][k] = q_num(db, sql);
		}
	cr_expect(wr[0][0] > 0 && wr[1][0] > 0 && wr[1][0] < wr[0][0] - 0.05,
		  "computed DQT-8 / STE: d 64 %.3f, d 256 %.3f", wr[0][0], wr[1][0]);
	OCB_SKIP_RSS_UNDER_ASAN("ternary_suite::quick_end_to_end, DQT-8 vs STE measured bytes");
	cr_expect(dqt <= 0.75 * ste, "dqt-8 %.2f, ste %.2f B/param", dqt, ste);
	cr_expect(wr[1][1] > 0 && wr[1][1] < wr[0][1] - 0.05,
		  "measured DQT-8 / STE: d 64 %.3f, d 256 %.3f", wr[0][1], wr[1][1]);
}

/* Same seed at 1 and at 2 threads: the same metrics bit for bit (%.17g of every value), on
 * the DQT-ternary MLP case (int8 GEMM, tiles, stochastic rounding, export all involved),
 * the fp32 MLP baseline (its sgemm in thread-independent tiles, kernels/sgemm_det.h: with
 * multi-threaded OpenBLAS its 256 x 512 x 784 forward summed in another order at 2
 * threads) and the DQT-8 and STE LM cases. */
Test(ternary_suite, deterministic_at_one_and_two_threads)
{
	char dir[64], db[2][128], dbopt[400], out[400], a[8192], b[8192];
	cli_tmpdir(dir, sizeof dir);
	for (int r = 0; r < 2; r++) {
		snprintf(db[r], sizeof db[r], "%s/d%d.db", dir, r);
		snprintf(dbopt, sizeof dbopt, "--db=%s", db[r]);
		snprintf(out, sizeof out, "--out=%s/out%d", dir, r);
		const char *argv[] = {"", dbopt, "--quiet", "run", "--suite", "ternary", "--quick",
				      "--filter",
				      "ternary_mlp/.*\"bits\":2,.*\"method\":\"(dqt|fp32)\","
				      "\"moments\":\"fp32\""
				      "|ternary_lm/.*\"bits\":(2|8),.*\"method\":\"(dqt|ste)\","
				      "\"moments\":\"fp32\"",
				      "--threads", r ? "2" : "1", "--seed", "1",
				      out, NULL};
		struct cli_out o;
		cr_assert_eq(cli_run(&o, argv, NULL), 0);
		cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	}
	const char *sql = "SELECT count(DISTINCT workload) || ':' || group_concat(workload || ' ' "
			  "|| key || ' ' || printf('%.17g', value), ';') FROM (SELECT workload, "
			  "key, value FROM metric WHERE key IN ('test_accuracy','test_loss',"
			  "'train_loss','val_loss') ORDER BY workload, key, step)";
	cli_query_text(db[0], sql, a, sizeof a);
	cli_query_text(db[1], sql, b, sizeof b);
	cr_expect(!strncmp(a, "5:", 2), "cases run: %.300s", a);
	cr_expect(*a && !strcmp(a, b), "1 thread: %.300s\n2 threads: %.300s", a, b);
}
