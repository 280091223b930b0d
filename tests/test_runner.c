/* End-to-end tests of the runner's interleaved passes (`ocbench run --passes N`): each
 * pass gets ceil(min/max reps / N), the passes merge into one stored result per case
 * whose n is their sum, later passes take as many samples as the first, and --passes 1
 * runs each case once as before; a ceiling the merged results ran above is re-measured
 * before they are stored. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../db/records.h"
#include "cli_util.h"
#include "san.h"

Test(runner, passes_merge_into_one_result, .timeout = OCB_TIMEOUT(120))
{
	char buf[4096];
	struct cli_rundir d;
	cr_assert(cli_rundir(&d, "r.db"));
	struct cli_out o;

	/* Run 1: --passes 1, exactly 7 reps per case: n = 7, one result per case. */
	const char *one[] = {"", d.dbopt, "--quiet", "run", "--suite", "baseline", "--quick",
			     "--filter", "sgemv/", "--threads", "1", "--budget", "0.05",
			     "--min-reps", "7", "--max-reps", "7", "--passes", "1", "--out", d.out,
			     NULL};
	cr_assert_eq(cli_run(&o, one, NULL), 0);
	cr_assert_eq(o.status, 0, "run 1: exit %d: %s", o.status, o.err);
	long long cases = cli_query_int(d.db, "SELECT count(*) FROM result WHERE run_id = 1");
	cr_assert(cases >= 1);
	cr_expect_eq(cli_query_int(d.db, "SELECT count(*) FROM result WHERE run_id = 1 AND n != 7"), 0);
	cr_expect_eq(cli_lines(o.out), cases, "one line per case: %s", o.out);
	cli_query_text(d.db, "SELECT config_json FROM run WHERE id = 1", buf, sizeof buf);
	cr_expect(strstr(buf, "\"passes\":1"), "config: %s", buf);

	/* Run 2: 3 passes of ceil(7/3) = 3 reps: n = 9, still one result per case, every
	 * sample stored, statistics of all of them. */
	const char *three[] = {"", d.dbopt, "--quiet", "run", "--suite", "baseline", "--quick",
			       "--filter", "sgemv/", "--threads", "1", "--budget", "0.05",
			       "--min-reps", "7", "--max-reps", "7", "--passes", "3", "--out", d.out,
			       NULL};
	cr_assert_eq(cli_run(&o, three, NULL), 0);
	cr_assert_eq(o.status, 0, "run 2: exit %d: %s", o.status, o.err);
	cr_expect_eq(cli_query_int(d.db, "SELECT count(*) FROM result WHERE run_id = 2"), cases);
	cr_expect_eq(cli_query_int(d.db, "SELECT count(*) FROM result WHERE run_id = 2 AND n != 9"), 0);
	cr_expect_eq(cli_query_int(d.db, "SELECT count(*) FROM result r WHERE run_id = 2 AND"
			       " n != (SELECT count(*) FROM sample s WHERE s.result_id = r.id)"), 0);
	cr_expect_eq(cli_lines(o.out), cases, "one line per case: %s", o.out);
	cli_query_text(d.db, "SELECT config_json FROM run WHERE id = 2", buf, sizeof buf);
	cr_expect(strstr(buf, "\"passes\":3"), "config: %s", buf);
	cli_query_text(d.db, "SELECT status FROM run WHERE id = 2", buf, sizeof buf);
	cr_expect_str_eq(buf, "complete");
}

/* Each pass weighs the same: the first stops on its CI (from 6 samples on: below that
 * [min, max] is no 95% CI), the later ones take as many samples as it took. Before, each
 * pass of min_reps 2 stopped at 2 samples that agreed by chance (n = 6 in all), and a
 * pass in a noisy phase of the host took the most samples. */
Test(runner, passes_take_the_first_pass_count, .timeout = OCB_TIMEOUT(120))
{
	struct cli_rundir d;
	cr_assert(cli_rundir(&d, "r.db"));
	struct cli_out o;
	const char *argv[] = {"", d.dbopt, "--quiet", "run", "--suite", "baseline", "--quick",
			      "--filter", "sgemv/", "--threads", "1", "--budget", "30",
			      "--target-ci", "1", "--min-reps", "2", "--max-reps", "3000",
			      "--passes", "3", "--out", d.out, NULL};
	cr_assert_eq(cli_run(&o, argv, NULL), 0);
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_assert_geq(cli_query_int(d.db, "SELECT count(*) FROM result"), 1);
	cr_expect_eq(cli_query_int(d.db, "SELECT count(*) FROM result WHERE n < 18 OR n % 3 != 0"), 0,
		     "n per case: 3 passes of the first's count, at least 6 each");
	cr_expect_eq(cli_query_int(d.db, "SELECT count(*) FROM result r WHERE"
			       " n != (SELECT count(*) FROM sample s WHERE s.result_id = r.id)"), 0);
}

Test(runner, passes_is_validated)
{
	struct cli_out o;
	const char *bad[] = {"", "--db=/nonexistent/x.db", "run", "--passes", "0", NULL};
	cr_assert_eq(cli_run(&o, bad, NULL), 0);
	cr_expect_eq(o.status, 2);
	cr_expect(strstr(o.err, "--passes"), "%s", o.err);
	const char *help[] = {"", "run", "--help", NULL};
	cr_assert_eq(cli_run(&o, help, NULL), 0);
	cr_expect(strstr(o.out, "--passes N"), "%s", o.out);
}

/* A ceiling the run's results ran above is re-measured before they are stored: seeded at
 * 1 GB/s (as a ceiling pass in a stalled moment of the host might measure), the level's
 * read and triad ceilings at 1 thread are raised to the machine's real rates, stored as
 * this run's rows, and the STREAM triad result is stored under the new value (a fraction
 * near 1, not ~50-100x). If this host's re-measure itself fails the consistency rules
 * (then the old value is kept, and the ceiling flagged), the test is skipped. */
Test(runner, beaten_ceiling_remeasured_before_storing, .timeout = OCB_TIMEOUT(120))
{
	static const char *const kinds[] = {"bw_l1", "bw_l2", "bw_l3", "bw_dram",
					    "bw_l1_triad", "bw_l2_triad", "bw_l3_triad",
					    "bw_dram_triad"};
	struct ocb_ceiling c[8];
	memset(c, 0, sizeof c);
	for (int i = 0; i < 8; i++) {
		snprintf(c[i].kind, sizeof c[i].kind, "%s", kinds[i]);
		c[i].threads = 1, c[i].value = 1.0;
		snprintf(c[i].unit, sizeof c[i].unit, "GB/s");
		snprintf(c[i].method, sizeof c[i].method, "test stand-in (quick)");
	}
	struct cli_rundir d;
	cr_assert(cli_rundir(&d, "r.db"));
	cli_seed_machine_with(d.db, c, 8);
	struct cli_out o;
	const char *argv[] = {"", d.dbopt, "run", "--suite", "baseline", "--quick", "--filter",
			      "stream_triad", "--threads", "1", "--budget", "0.1", "--passes", "2",
			      "--out", d.out, NULL};
	cr_assert_eq(cli_run(&o, argv, NULL), 0);
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_assert(strstr(o.err, "re-measuring 1 ceiling(s) that results of this run ran above"),
		  "%s", o.err);
	if (!strstr(o.err, "placed under the new value"))
		cr_skip_test("the re-measure was not clean on this host: %s", o.err);
	char bound[64], sql[256];
	cli_query_text(d.db, "SELECT bound FROM result WHERE run_id = 1", bound, sizeof bound);
	cr_assert(strncmp(bound, "bw_", 3) == 0 && strstr(bound, "_triad"), "bound %s", bound);
	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM ceiling WHERE kind = '%s' AND threads = 1 AND run_id = 1"
		 " AND value > 2 AND suspect IS NULL", bound);
	cr_assert_eq(cli_query_int(d.db, sql), 1, "%s", o.err);
	/* under the new value: a fraction well below the 10x+ it had against 1 GB/s */
	cr_assert_eq(cli_query_int(d.db, "SELECT count(*) FROM result WHERE run_id = 1 AND"
				   " bound_frac > 0 AND bound_frac < 2"), 1, "%s", o.err);
	/* a ceiling is flagged afterwards only if the result still beats it (a machine whose
	 * last level nearly holds the arrays), never for the run's own re-measure */
	cr_expect_eq(cli_query_int(d.db, "SELECT count(*) FROM ceiling WHERE suspect IS NOT NULL"),
		     cli_query_int(d.db, "SELECT count(*) FROM result WHERE run_id = 1 AND"
				   " bound_frac > 1.05"), "%s", o.err);
}
