/* End-to-end tests of the runner's interleaved passes (`ocbench run --passes N`): each
 * pass gets ceil(min/max reps / N), the passes merge into one stored result per case
 * whose n is their sum, later passes take as many samples as the first, and --passes 1
 * runs each case once as before. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

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
