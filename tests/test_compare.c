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
	cr_assert_eq(ocb_cmp_runs(ocb_store_handle(s), a, b, NULL, &c), OCB_OK, "%s", ocb_lasterr());
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
	cr_assert_eq(ocb_cmp_runs(ocb_store_handle(s), a, b, NULL, &c), OCB_OK, "%s", ocb_lasterr());
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
	cr_assert_eq(ocb_cmp_runs(ocb_store_handle(s), base, cand, NULL, &c), OCB_OK, "%s",
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
