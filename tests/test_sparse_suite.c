/* End-to-end: `ocbench run --suite sparse --quick` into a temporary database: every case
 * (our kernel, OpenBLAS dense, librsb on the same matrix, a second density) passes its
 * check and is stored with its peer and variant; the suite file runs the same bench. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cli_util.h"

Test(sparse_suite, quick_run_stores_every_peer)
{
	char tmp[64], dbopt[160], db[128], out[128];
	cr_assert(cli_tmpdir(tmp, sizeof tmp));
	snprintf(db, sizeof db, "%s/s.db", tmp);
	snprintf(dbopt, sizeof dbopt, "--db=%s", db);
	snprintf(out, sizeof out, "--out=%s/out", tmp);
	const char *argv[] = {"", dbopt, "--quiet", "run", "--suite", "sparse", "--quick",
			      "--passes", "1", out, NULL};
	struct cli_out o;
	cr_assert_eq(cli_run(&o, argv, NULL), 0);
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM result WHERE bench='bsr_spmm' "
				       "AND status='ok'"), 4);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM result WHERE suite='sparse'"), 4);
	const char *peers[][2] = {{"bsr", "avx2"}, {"openblas", "openblas"}, {"librsb", "librsb"}};
	for (int i = 0; i < 3; i++) {
		char sql[256];
		snprintf(sql, sizeof sql, "SELECT count(*) FROM result WHERE params_json LIKE "
					  "'%%\"peer\":\"%s\"%%' AND (variant='%s' OR variant='ref')",
			 peers[i][0], peers[i][1]);
		cr_expect_geq(cli_query_int(db, sql), 1, "%s", sql);
	}
	/* every check passed: errors are small and recorded */
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM result WHERE bench='bsr_spmm' AND "
				       "(check_err IS NULL OR check_err > 1e-4)"), 0);
}
