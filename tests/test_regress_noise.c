/* Regression detection on a noisy machine (issue 16): compare's drift canaries (a run
 * whose canaries slow down halfway warns, with injected canary rates), the minimal
 * detectable effect per case against the formula by hand, an A/B pair judged by the
 * paired test in compare, ab's "undecided" rule for adaptive rounds, the per-round
 * fastest sample parsed from a child's line, and `run` storing its canaries. */
#include <criterion/criterion.h>
#include <math.h>

#include "../collect/ab_child.h"
#include "../collect/canary_run.h"
#include "../common/ocb_stats.h"
#include "../report/ab_verdict.h"
#include "../report/compare.h"
#include "../report/mde.h"
#include "cli_util.h"
#include "report_fixture.h"

/* A result of bench `bench` with exactly the samples x[0..n) (seconds). */
static void put_samples(struct ocb_store *s, int64_t run, const char *bench, const double *x,
			size_t n)
{
	struct ocb_result r;
	memset(&r, 0, sizeof r);
	snprintf(r.suite, sizeof r.suite, "baseline");
	snprintf(r.bench, sizeof r.bench, "%s", bench);
	r.params_json = "{}";
	snprintf(r.variant, sizeof r.variant, "ref");
	r.threads = 1;
	snprintf(r.unit, sizeof r.unit, "s");
	r.samples = (double *)x;
	r.nsamples = n;
	r.check_err = NAN;
	r.bound_frac = NAN;
	snprintf(r.status, sizeof r.status, "ok");
	cr_assert_eq(ocb_stats_compute(x, n, &r.st), OCB_OK);
	cr_assert_eq(ocb_store_result(s, run, &r, NULL), OCB_OK, "%s", ocb_lasterr());
}

/* Canaries of a run: rates `rate` at start; mid and end multiplied by `later`. */
static void put_canaries(struct ocb_store *s, int64_t run, double later)
{
	double r0[OCB_CANARY_N] = {50, 200, 12, 80}, r1[OCB_CANARY_N];
	for (int k = 0; k < OCB_CANARY_N; k++)
		r1[k] = r0[k] * later;
	cr_assert_eq(ocb_canary_store_point(s, run, OCB_CANARY_START, r0), OCB_OK);
	cr_assert_eq(ocb_canary_store_point(s, run, OCB_CANARY_MID, r1), OCB_OK);
	cr_assert_eq(ocb_canary_store_point(s, run, OCB_CANARY_END, r1), OCB_OK);
}

static int has_warning(const struct ocb_cmp *c, const char *what)
{
	for (int i = 0; i < c->nwarn; i++)
		if (strstr(c->warn[i], what))
			return 1;
	return 0;
}

Test(regress_noise, busy_loop_halfway_gives_the_drift_warning)
{
	char dir[256], db[300];
	fx_tmpdir(dir, sizeof dir, "drift");
	snprintf(db, sizeof db, "%s/x.db", dir);
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, "hostA", "aaaa1111"), run[2];
	double x[5] = {1.00, 1.01, 0.99, 1.02, 0.98};
	for (int r = 0; r < 2; r++) {
		run[r] = fx_run(s, m, "baseline", r ? "B" : "A");
		put_samples(s, run[r], "k", x, 5);
		/* base steady; cand: a competing busy loop from halfway halves every rate */
		put_canaries(s, run[r], r ? 0.5 : 1.0);
		ocb_store_run_finish(s, run[r], "complete");
	}
	struct ocb_cmp c;
	cr_assert_eq(ocb_cmp_runs(s, run[0], run[1], NULL, &c), OCB_OK, "%s", ocb_lasterr());
	cr_assert(c.can.have[0] && c.can.have[1]);
	cr_assert_eq(c.can.drift_within[0], 0);
	cr_assert_eq(c.can.drift_within[1], 1);
	/* start / later time ratio: rate halved -> time doubled */
	cr_assert_float_eq(c.can.within[1][0], 2.0, 1e-12);
	cr_assert_float_eq(c.can.within[0][2], 1.0, 1e-12);
	/* between the runs: base rate / cand median rate (50 / 25) */
	cr_assert_float_eq(c.can.between[0], 2.0, 1e-12);
	cr_assert(c.can.drift_between);
	cr_assert(has_warning(&c, "changed during the cand run"));
	cr_assert_not(has_warning(&c, "changed during the base run"));
	cr_assert(has_warning(&c, "differed between the runs"));
	ocb_cmp_release(&c);

	/* Text and JSON carry them. */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_eq(ocb_cmp_runs(s, run[0], run[1], NULL, &c), OCB_OK);
	ocb_cmp_print(&c, f);
	fclose(f);
	cr_assert(strstr(buf, "warning: drift: the machine changed during the cand run"), "%s",
		  buf);
	cr_assert(strstr(buf, "canary_read_dram"), "%s", buf);
	cJSON *j = ocb_cmp_json(&c);
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "drift_within_cand")));
	cJSON_Delete(j);
	free(buf);
	ocb_cmp_release(&c);
	ocb_store_close(s);
	fx_rmdir(dir);
}

Test(regress_noise, steady_canaries_no_warning)
{
	struct ocb_cmp_canaries k;
	memset(&k, 0, sizeof k);
	k.have[0] = k.have[1] = 1;
	for (int r = 0; r < 2; r++)
		for (int p = 0; p < 3; p++)
			for (int i = 0; i < OCB_CMP_NCANARY; i++)
				k.rate[r][p][i] = 10.0 * (1 + 0.01 * p); /* 1-2% moves */
	ocb_cmp_canary_drift(&k, 0.05);
	cr_assert_eq(k.drift_within[0] + k.drift_within[1] + k.drift_between, 0);
	cr_assert_float_eq(k.within[0][0], 1 / 1.02, 1e-12); /* start vs end, the farthest */
	cr_assert_float_eq(k.between[0], 1.0, 1e-12);
	ocb_cmp_canary_drift(&k, 0.01); /* a 2% move is more than a 1% threshold */
	cr_assert(k.drift_within[0] && k.drift_within[1]);
	cr_assert_not(k.drift_between);
}

/* The MDE column by hand: base samples {1, 1.1, 0.9, 1, 1.05}, cand the same: log
 * deviations from the median log 0 are |log x| = 0, .0953, .1054, 0, .0488; their
 * median .0488 (=log 1.05), sigma = 1.4826 * .04879 = .07234, var_w = .005233;
 * se^2 = var_w (1/5 + 1/5) = .0020933, se = .045753; z_.995 + z_.8 = 2.5758 + .8416 =
 * 3.4174; MDE = exp(3.4174 * .045753) - 1 = .1692. No earlier runs: a lower bound.
 * With three earlier runs of medians 1, 1.1, 1 (MAD of logs 0: var_b 0) it stays. */
Test(regress_noise, mde_column_by_hand)
{
	char dir[256], db[300];
	fx_tmpdir(dir, sizeof dir, "mde");
	snprintf(db, sizeof db, "%s/x.db", dir);
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, "hostA", "aaaa1111"), run[2];
	double x[5] = {1.0, 1.1, 0.9, 1.0, 1.05};
	for (int r = 0; r < 2; r++) {
		run[r] = fx_run(s, m, "baseline", r ? "B" : "A");
		put_samples(s, run[r], "k", x, 5);
		ocb_store_run_finish(s, run[r], "complete");
	}
	struct ocb_cmp c;
	cr_assert_eq(ocb_cmp_runs(s, run[0], run[1], NULL, &c), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(c.n, 1);
	cr_assert(c.c[0].mde_lb);
	cr_assert_float_eq(c.c[0].mde, 0.1692, 5e-4, "mde %g", c.c[0].mde);
	cr_assert_eq(c.nmde_above, 1); /* > the 5% threshold: the warning says so */
	cr_assert(has_warning(&c, "minimal detectable effect above the threshold"));
	ocb_cmp_release(&c);
	ocb_store_close(s);
	fx_rmdir(dir);
}

/* Two runs linked as an A/B pair (config_json.ab, as ab_store writes it): per-round
 * values with a drift shared by both sides and a 5% slowdown in cand. Sequentially
 * (Mann-Whitney) the drift hides it; the pair is judged per round: slower. */
Test(regress_noise, ab_pair_is_judged_paired)
{
	char dir[256], db[300];
	fx_tmpdir(dir, sizeof dir, "abpair");
	snprintf(db, sizeof db, "%s/x.db", dir);
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, "hostA", "aaaa1111"), run[2];
	const char *uuid[2] = {"11111111-0000-4000-8000-000000000001",
			       "22222222-0000-4000-8000-000000000002"};
	char cfg[2][400];
	for (int r = 0; r < 2; r++)
		snprintf(cfg[r], sizeof cfg[r],
			 "{\"ab\":{\"adaptive_rounds\":2,\"other\":\"%s\",\"pair\":\"abcdef12-pair\","
			 "\"rounds\":12,\"side\":\"%s\",\"stat\":\"min\"}}",
			 uuid[1 - r], r ? "cand" : "base");
	double b[12], cnd[12];
	for (int i = 0; i < 12; i++) {
		double drift = 1 + 0.3 * sin(i); /* +-30%: the machine */
		b[i] = 1e-3 * drift * (1 + 0.004 * ((i * 7) % 5 - 2));
		cnd[i] = 1.05e-3 * drift * (1 + 0.004 * ((i * 3) % 5 - 2));
	}
	for (int r = 0; r < 2; r++) {
		struct ocb_run_info ri = {.uuid = uuid[r], .machine_id = m, .suite = "baseline",
					  .label = r ? "ab-abcdef12-cand" : "ab-abcdef12-base",
					  .ocbench_version = "0.1.0", .git_sha = "test",
					  .cmdline = "test", .config_json = cfg[r], .seed = 1};
		cr_assert_eq(ocb_store_run_begin(s, &ri, &run[r]), OCB_OK);
		put_samples(s, run[r], "k", r ? cnd : b, 12);
		ocb_store_run_finish(s, run[r], "complete");
	}
	struct ocb_cmp c;
	cr_assert_eq(ocb_cmp_runs(s, run[0], run[1], NULL, &c), OCB_OK, "%s", ocb_lasterr());
	cr_assert(c.ab_pair);
	cr_assert_eq(c.ab[1].rounds, 12);
	cr_assert_str_eq(c.ab[0].stat, "min");
	cr_assert(c.c[0].paired);
	cr_assert_eq(c.c[0].verdict, OCB_V_SLOWER);
	cr_assert_float_eq(c.c[0].ratio, 1.05, 0.01);
	cr_assert_lt(c.c[0].p, 0.01);
	cr_assert_lt(c.c[0].mde, 0.05);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ocb_cmp_print(&c, f);
	fclose(f);
	cr_assert(strstr(buf, "interleaved A/B pair abcdef12 (ocbench ab): 12 rounds (2 adaptive)"),
		  "%s", buf);
	free(buf);
	ocb_cmp_release(&c);
	ocb_store_close(s);
	/* history names the pair on each of its two points */
	char dbopt[320];
	snprintf(dbopt, sizeof dbopt, "--db=%s", db);
	const char *hist[] = {"", dbopt, "history", "k", NULL};
	struct cli_out o;
	cr_assert_eq(cli_run(&o, hist, NULL), 0);
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert(strstr(o.out, "ab-abcdef12-base"), "%s", o.out);
	char want[64];
	snprintf(want, sizeof want, "(A/B pair with run %lld)", (long long)run[1]);
	cr_assert(strstr(o.out, want), "%s", o.out);
	fx_rmdir(dir);
}

Test(regress_noise, undecided_rule)
{
	struct ocb_ab_opts o;
	ocb_ab_defaults(&o); /* threshold 2% */
	struct ocb_ab_stats st = {.n = 12, .ratio = 1.0, .lo = 0.99, .hi = 1.01, .mde = 0.01,
				  .verdict = OCB_V_SAME};
	cr_assert_not(ocb_ab_undecided(&st, &o)); /* inside the band, MDE below it */
	st.mde = 0.03;
	cr_assert(ocb_ab_undecided(&st, &o)); /* could not have seen 2% */
	st = (struct ocb_ab_stats){.n = 12, .ratio = 1.03, .lo = 1.01, .hi = 1.05, .mde = 0.01,
				   .verdict = OCB_V_NOISE};
	cr_assert(ocb_ab_undecided(&st, &o)); /* CI across 1.02 */
	st.verdict = OCB_V_SLOWER;
	cr_assert_not(ocb_ab_undecided(&st, &o));
	st = (struct ocb_ab_stats){.n = 16, .ratio = 1.05, .lo = 1.03, .hi = 1.07, .mde = 0.015,
				   .p = 0.08, .verdict = OCB_V_SAME};
	cr_assert(ocb_ab_undecided(&st, &o)); /* CI beyond 1.02 but p >= alpha: more rounds */
	st.hi = 1.01;
	st.lo = 0.99;
	st.ratio = 1.0;
	cr_assert_not(ocb_ab_undecided(&st, &o));
	st = (struct ocb_ab_stats){.n = 5, .verdict = OCB_V_NA};
	cr_assert(ocb_ab_undecided(&st, &o));
}

Test(regress_noise, leaning_rule)
{
	struct ocb_ab_opts o;
	ocb_ab_defaults(&o); /* threshold 2% */
	/* nine rounds 1.03-1.08 and one at 0.85 of middle rank: p >= 0.01, CI above 1 */
	struct ocb_ab_stats st = {.n = 10, .ratio = 1.05, .lo = 1.02, .hi = 1.07, .mde = 0.02,
				  .p = 0.042, .verdict = OCB_V_SAME};
	cr_assert(ocb_ab_leaning(&st, &o));
	cr_assert(ocb_ab_undecided(&st, &o)); /* leaning is a subset of undecided */
	st.lo = 1.005; /* CI across 1.02 but above 1: still leaning */
	cr_assert(ocb_ab_leaning(&st, &o));
	st.lo = 0.99; /* CI across 1 */
	cr_assert_not(ocb_ab_leaning(&st, &o));
	st.lo = 1.01;
	st.ratio = 1.015; /* CI above 1, ratio inside the band: not beyond the threshold */
	cr_assert_not(ocb_ab_leaning(&st, &o));
	st = (struct ocb_ab_stats){.n = 10, .ratio = 0.95, .lo = 0.93, .hi = 0.99, .p = 0.03,
				   .verdict = OCB_V_SAME};
	cr_assert(ocb_ab_leaning(&st, &o)); /* faster side */
	st.verdict = OCB_V_FASTER;
	cr_assert_not(ocb_ab_leaning(&st, &o)); /* decided */
	st.verdict = OCB_V_NOISE;
	cr_assert_not(ocb_ab_leaning(&st, &o)); /* p < alpha already */
	st = (struct ocb_ab_stats){.n = 5, .ratio = 1.05, .lo = 1.02, .hi = 1.07,
				   .verdict = OCB_V_SAME};
	cr_assert_not(ocb_ab_leaning(&st, &o)); /* too few rounds: undecided, not leaning */
}

Test(regress_noise, child_line_min)
{
	struct ocb_ab_obs o;
	cr_assert_eq(ocb_ab_parse_line("{\"suite\":\"s\",\"bench\":\"b\",\"params\":{},\"variant\":"
				       "\"v\",\"threads\":1,\"status\":\"ok\",\"median_s\":0.002,"
				       "\"min_s\":0.0015}",
				       &o),
		     1);
	cr_assert_float_eq(o.min, 0.0015, 0);
	free(o.unit);
	free(o.key);
	/* an older build without min_s, or a min above the median: NaN (median used) */
	cr_assert_eq(ocb_ab_parse_line("{\"suite\":\"s\",\"bench\":\"b\",\"params\":{},\"variant\":"
				       "\"v\",\"threads\":1,\"status\":\"ok\",\"median_s\":0.002}",
				       &o),
		     1);
	cr_assert(isnan(o.min));
	free(o.unit);
	free(o.key);
}

Test(regress_noise, run_stores_its_canaries, .timeout = 0)
{
	struct cli_rundir d;
	cr_assert(cli_rundir(&d, "r.db"));
	struct cli_out o;
	const char *argv[] = {"", d.dbopt, "--quiet", "run", "--suite", "baseline", "--quick",
			      "--filter", "sgemv/", "--threads", "1", "--budget", "0.02",
			      "--out", d.out, NULL};
	const char *on[] = {"OCBENCH_NO_CANARIES=0", NULL}; /* tests/run.sh turns them off */
	cr_assert_eq(cli_run(&o, argv, on), 0);
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	/* 4 canaries x start, mid, end, positive rates */
	cr_expect_eq(cli_query_int(d.db, "SELECT count(*) FROM metric WHERE run_id = 1 AND"
				       " workload = 'canary' AND value > 0"), 12);
	cr_expect_eq(cli_query_int(d.db, "SELECT count(DISTINCT step) FROM metric WHERE"
				       " run_id = 1 AND workload = 'canary'"), 3);
	const char *env[] = {"OCBENCH_NO_CANARIES=1", NULL};
	cr_assert_eq(cli_run(&o, argv, env), 0);
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_expect_eq(cli_query_int(d.db, "SELECT count(*) FROM metric WHERE run_id = 2 AND"
				       " workload = 'canary'"), 0);
	/* compare shows them: one run with, one without */
	const char *cmp[] = {"", d.dbopt, "compare", "1", "2", NULL};
	cr_assert_eq(cli_run(&o, cmp, NULL), 0);
	cr_expect(strstr(o.out, "canaries (time ratios"), "%s", o.out);
	cr_expect(strstr(o.out, " MDE "), "%s", o.out);
}
