/* compare: A/A -> no regression; a 10% slowdown with 20 samples -> slower, p < alpha,
 * and exit 1 through the CLI function. */
#include "../cli/cli.h"
#include "../report/compare.h"
#include "report_fixture.h"

#define NCASE 20

/* Two runs of NCASE cases; the candidate's case `slow` is `factor` times slower. */
static void two_runs(const char *db, int slow, double factor, int64_t *a, int64_t *b)
{
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	char bench[32];
	*a = fx_run(s, m, "baseline", "A");
	for (int i = 0; i < NCASE; i++) {
		snprintf(bench, sizeof bench, "k%02d", i);
		fx_result(s, *a, "baseline", bench, "{}", 1e-3 * (i + 1), 0.01, 20, 100 + i, 1e6, 1e6);
	}
	ocb_store_run_finish(s, *a, "complete");
	*b = fx_run(s, m, "baseline", "B");
	for (int i = 0; i < NCASE; i++) {
		snprintf(bench, sizeof bench, "k%02d", i);
		fx_result(s, *b, "baseline", bench, "{}", 1e-3 * (i + 1) * (i == slow ? factor : 1),
			  0.01, 20, 200 + i, 1e6, 1e6);
	}
	ocb_store_run_finish(s, *b, "complete");
	ocb_store_close(s);
}

Test(compare, a_a_is_not_a_regression)
{
	char dir[256], db[300];
	int64_t a, b;
	fx_tmpdir(dir, sizeof dir, "cmpaa");
	snprintf(db, sizeof db, "%s/x.db", dir);
	two_runs(db, -1, 1, &a, &b);
	struct ocb_store *s = NULL;
	cr_assert_eq(ocb_store_open(db, OCB_STORE_READ, &s), OCB_OK);
	struct ocb_cmp c;
	cr_assert_eq(ocb_cmp_runs(s, a, b, NULL, &c), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(c.n, NCASE);
	cr_assert_eq(c.count[OCB_V_SLOWER], 0);
	cr_assert_eq(c.count[OCB_V_FASTER], 0);
	/* at least 95% "same" (the rest may only be "noise": significant but tiny) */
	cr_assert_geq(c.count[OCB_V_SAME] * 100, 95 * NCASE, "same %zu of %d", c.count[OCB_V_SAME],
		      NCASE);
	cr_assert_float_eq(c.geomean, 1.0, 0.01);
	ocb_cmp_release(&c);
	ocb_store_close(s);
	fx_rmdir(dir);
}

Test(compare, ten_percent_slowdown_is_slower)
{
	char dir[256], db[300];
	int64_t a, b;
	fx_tmpdir(dir, sizeof dir, "cmp10");
	snprintf(db, sizeof db, "%s/x.db", dir);
	two_runs(db, 7, 1.10, &a, &b);
	struct ocb_store *s = NULL;
	cr_assert_eq(ocb_store_open(db, OCB_STORE_READ, &s), OCB_OK);
	struct ocb_cmp c;
	cr_assert_eq(ocb_cmp_runs(s, a, b, NULL, &c), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(c.count[OCB_V_SLOWER], 1);
	const struct ocb_cmp_case *k = &c.c[7];
	cr_assert_str_eq(k->bench, "k07");
	cr_assert_eq(k->verdict, OCB_V_SLOWER);
	cr_assert_lt(k->p, 0.01);
	cr_assert_float_eq(k->ratio, 1.10, 0.02);
	cr_assert_lt(k->ratio_lo, k->ratio);
	cr_assert_gt(k->ratio_hi, k->ratio);
	ocb_cmp_release(&c);
	ocb_store_close(s);

	/* Through the command: exit 1; the reverse comparison is "faster", exit 0. */
	struct ocb_global g = {.db_path = db, .quiet = 1};
	char *argv1[] = {"compare", "A", "B", "--threshold", "5%", NULL};
	cr_assert_eq(cmd_compare(&g, 5, argv1), 1);
	char *argv2[] = {"compare", "B", "A", NULL};
	cr_assert_eq(cmd_compare(&g, 3, argv2), 0);
	/* a threshold above the change: "noise", exit 0 */
	char *argv3[] = {"compare", "--threshold", "20%", "A", "B", NULL};
	cr_assert_eq(cmd_compare(&g, 5, argv3), 0);
	char *argv4[] = {"compare", "A", "nosuchrun", NULL};
	cr_assert_eq(cmd_compare(&g, 3, argv4), 2);
	char *argv5[] = {"compare", "A", NULL};
	cr_assert_eq(cmd_compare(&g, 2, argv5), 2);
	/* machine spec: hostname -> its newest complete run (B), vs A by label */
	char *argv6[] = {"compare", "A", "hostA", NULL};
	cr_assert_eq(cmd_compare(&g, 3, argv6), 1);
	fx_rmdir(dir);
}

/* The band grows with a case's between-run noise: with earlier runs whose medians of k00
 * wander by +-20%, a 15% slower candidate is noise; with steady earlier runs it is slower. */
static int verdict_after_history(const double *hist, int nh, double cand_factor)
{
	char dir[256], db[300], bench[8] = "k00";
	fx_tmpdir(dir, sizeof dir, "cmphist");
	snprintf(db, sizeof db, "%s/x.db", dir);
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, "hostA", "aaaa1111"), base = 0, cand;
	for (int i = 0; i < nh; i++) {
		int64_t r = fx_run(s, m, "baseline", NULL);
		fx_result(s, r, "baseline", bench, "{}", 1e-3 * hist[i], 0.01, 20, 300 + i, 1e6, 1e6);
		ocb_store_run_finish(s, r, "complete");
		base = r;
	}
	cand = fx_run(s, m, "baseline", NULL);
	fx_result(s, cand, "baseline", bench, "{}", 1e-3 * cand_factor, 0.01, 20, 999, 1e6, 1e6);
	ocb_store_run_finish(s, cand, "complete");
	struct ocb_cmp c;
	cr_assert_eq(ocb_cmp_runs(s, base, cand, NULL, &c), OCB_OK, "%s",
		     ocb_lasterr());
	cr_assert_eq(c.n, 1);
	int v = c.c[0].verdict;
	cr_expect_eq(c.c[0].nhist, nh);
	ocb_cmp_release(&c);
	ocb_store_close(s);
	fx_rmdir(dir);
	return v;
}

Test(compare, history_noise_widens_the_band)
{
	const double noisy[] = {1.0, 1.2, 0.8, 1.15, 1.0};
	const double steady[] = {1.0, 1.005, 0.995, 1.0, 1.0};
	cr_expect_eq(verdict_after_history(noisy, 5, 1.15), OCB_V_NOISE);
	cr_expect_eq(verdict_after_history(steady, 5, 1.15), OCB_V_SLOWER);
}

static int64_t mode_run(struct ocb_store *s, int64_t m, const char *uuid, int quick)
{
	struct ocb_run_info ri = {.uuid = uuid, .machine_id = m, .suite = "baseline",
				  .ocbench_version = "0.1.0", .git_sha = "abc",
				  .config_json = quick ? "{\"quick\":true}" : "{\"quick\":false}",
				  .seed = 1};
	int64_t id;
	cr_assert_eq(ocb_store_run_begin(s, &ri, &id), OCB_OK, "%s", ocb_lasterr());
	return id;
}

/* A full run against a quick one: the cases of one side only are listed (numeric
 * order: n=512 before n=2048), a warning names the modes, every parameter set is
 * shown whole or cut visibly with its full text in the legend, rows sort by value. */
Test(compare, quick_vs_full_lists_unmatched_and_keeps_params_whole)
{
	char dir[256], db[300];
	fx_tmpdir(dir, sizeof dir, "cmpqf");
	snprintf(db, sizeof db, "%s/x.db", dir);
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	/* 41, 39 and 40 characters: the column is at most 40 wide */
	static const char *const gemm[] = {"{\"fmt\":\"f32\",\"k\":16384,\"m\":16384,\"n\":128}",
					   "{\"fmt\":\"f32\",\"k\":16384,\"m\":16384,\"n\":8}",
					   "{\"fmt\":\"f32\",\"k\":16384,\"m\":16384,\"n\":32}"};
	int64_t a = mode_run(s, m, "aaaaaaaa-0000-4000-8000-000000000001", 0);
	fx_result(s, a, "baseline", "sgemm", "{\"n\":2048}", 1e-2, 0.01, 10, 1, 1e9, 1e6);
	fx_result(s, a, "baseline", "sgemm", "{\"n\":256}", 1e-3, 0.01, 10, 2, 1e7, 1e6);
	fx_result(s, a, "baseline", "sgemm", "{\"n\":512}", 2e-3, 0.01, 10, 3, 1e8, 1e6);
	for (int i = 0; i < 3; i++)
		fx_result(s, a, "baseline", "gemm_f32", gemm[i], 1e-3, 0.01, 10, 4 + i, 1e9, 1e6);
	ocb_store_run_finish(s, a, "complete");
	int64_t b = mode_run(s, m, "bbbbbbbb-0000-4000-8000-000000000002", 1);
	fx_result(s, b, "baseline", "sgemm", "{\"n\":256}", 1e-3, 0.01, 10, 12, 1e7, 1e6);
	for (int i = 0; i < 3; i++)
		fx_result(s, b, "baseline", "gemm_f32", gemm[i], 1e-3, 0.01, 10, 14 + i, 1e9, 1e6);
	fx_result(s, b, "baseline", "q4", "{\"n\":64}", 1e-3, 0.01, 10, 20, 1e6, 1e6);
	ocb_store_run_finish(s, b, "complete");
	ocb_store_close(s);

	cr_assert_eq(ocb_store_open(db, OCB_STORE_READ, &s), OCB_OK);
	struct ocb_cmp c;
	cr_assert_eq(ocb_cmp_runs(s, a, b, NULL, &c), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(c.n, 4);
	cr_expect_str_eq(c.c[0].params, gemm[1]); /* n = 8, 32, 128: by value */
	cr_expect_str_eq(c.c[1].params, gemm[2]);
	cr_expect_str_eq(c.c[2].params, gemm[0]);
	cr_assert_eq(c.nonly[0], 2);
	cr_expect_str_eq(c.only[0][0].params, "{\"n\":512}");
	cr_expect_str_eq(c.only[0][1].params, "{\"n\":2048}");
	cr_assert_eq(c.nonly[1], 1);
	cr_expect_str_eq(c.only[1][0].bench, "q4");
	int mode_warned = 0;
	for (int i = 0; i < c.nwarn; i++)
		mode_warned |= strstr(c.warn[i], "quick") && strstr(c.warn[i], "full");
	cr_expect(mode_warned, "no quick-vs-full warning");

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_eq(ocb_cmp_print(&c, f), OCB_OK);
	fclose(f);
	for (int i = 0; i < 3; i++) /* whole, in its cell or in the legend */
		cr_expect_not_null(strstr(buf, gemm[i]), "params %s not shown whole:\n%s", gemm[i],
				   buf);
	cr_expect_not_null(strstr(buf, "...[1]"), "%s", buf);
	cr_expect_null(strstr(buf, "...[2]"), "%s", buf);
	cr_expect_not_null(strstr(buf, "[1] {\"fmt\":\"f32\",\"k\":16384,\"m\":16384,\"n\":128}"));
	cr_expect_not_null(strstr(buf, "warning: base run"), "%s", buf);
	char *bo = strstr(buf, "\nin base only"), *co = strstr(buf, "\nin cand only");
	cr_assert(bo && co, "%s", buf);
	char *n512 = strstr(bo, "{\"n\":512}"), *n2048 = strstr(bo, "{\"n\":2048}");
	cr_expect(n512 && n2048 && n512 < n2048 && n2048 < co, "%s", buf);
	cr_expect_not_null(strstr(co, "q4 {\"n\":64}"), "%s", buf);
	free(buf);
	ocb_cmp_release(&c);

	/* a run with itself */
	cr_assert_eq(ocb_cmp_runs(s, a, a, NULL, &c), OCB_OK);
	cr_assert_geq(c.nwarn, 1);
	cr_expect_not_null(strstr(c.warn[0], "itself"), "%s", c.warn[0]);
	cr_expect_eq(c.nonly[0] + c.nonly[1], 0);
	ocb_cmp_release(&c);
	ocb_store_close(s);
	fx_rmdir(dir);
}
