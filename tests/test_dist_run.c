/* End to end: `ocbench run --suite dist --ranks 1,2 --quick` relaunches itself under
 * mpirun per rank count, rank 0 writes the database, every rank its MLLOG file (checked
 * against the MLPerf HPC 3.0 rules); then a rank killed mid-suite ends the run as failed
 * (exit 3) and leaves the database intact. Root is allowed through the OMPI variables. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/mllog_rules.h"
#include "cli_util.h"

static const char *const mpi_env[] = {"OMPI_ALLOW_RUN_AS_ROOT=1",
				      "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", NULL};

Test(dist_run, ranks_1_2_quick_then_a_killed_rank, .timeout = 600)
{
	char dir[256], db[300], out[300], sql[600], path[400];
	static struct cli_out o;
	cli_tmpdir(dir, sizeof dir);
	snprintf(db, sizeof db, "%s/d.db", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	const char *argv[] = {"ocbench", "--db", db, "--quiet", "run", "--suite", "dist",
			      "--ranks", "1,2", "--quick", "--out", out, NULL};
	cr_assert_eq(cli_run(&o, argv, mpi_env), 0);
	cr_assert_eq(o.status, 0, "stderr: %s", o.err);
	for (int np = 1; np <= 2; np++) {
		snprintf(sql, sizeof sql, "select count(*) from metric where workload = "
					  "'dist_coll/np%d' and key = 'wrong_total' and value = 0", np);
		cr_expect_eq(cli_query_int(db, sql), 1, "np%d: #wrong 0 stored", np);
		snprintf(sql, sizeof sql, "select count(*) from metric where workload = "
					  "'dist_train/lars/np%d' and key = 'samples_per_s' and value > 0",
			 np);
		cr_expect_eq(cli_query_int(db, sql), 1, "np%d: throughput stored", np);
	}
	cr_expect_eq(cli_query_int(db, "select count(*) from metric where workload = "
				       "'dist_coll/allreduce/np2' and key = 'fit_rms'"), 1);
	cr_expect_eq(cli_query_int(db, "select count(*) from run where suite = 'dist' and "
				       "status = 'complete'"), 2, "one run per rank count");
	for (int r = 0; r < 2; r++) {
		struct ocb_mllog_verdict v;
		snprintf(path, sizeof path, "%s/mllog_dist_mlp_rank%d.txt", out, r);
		cr_assert_eq(ocb_mllog_check_file(path, &v), 0, "%s", path);
		cr_expect_eq(v.nviol, 0, "%s: %s", path, v.viol[0]);
	}
	/* rank 1 dies in dist_train: mpirun ends the job, the run fails, the db is intact */
	long before = cli_query_int(db, "select count(*) from metric");
	const char *kenv[] = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
			      "OCB_TEST_KILL_RANK=1", NULL};
	const char *kargv[] = {"ocbench", "--db", db, "--quiet", "run", "--suite", "dist",
			       "--ranks", "2", "--quick", "--out", out, NULL};
	cr_assert_eq(cli_run(&o, kargv, kenv), 0);
	cr_expect_eq(o.status, 3, "a killed rank fails the run; stderr: %s", o.err);
	cr_expect(strstr(o.err, "2-rank job") != NULL, "says which job: %s", o.err);
	char ok[64];
	cli_query_text(db, "pragma integrity_check", ok, sizeof ok);
	cr_expect_str_eq(ok, "ok");
	cr_expect_geq(cli_query_int(db, "select count(*) from metric"), before,
		      "earlier results kept");
	cr_expect_eq(cli_query_int(db, "select count(*) from run where suite = 'dist' and "
				       "status = 'complete'"), 2, "the killed run is not complete");
	snprintf(sql, sizeof sql, "rm -rf %s", dir);
	cr_expect_eq(system(sql), 0);
}
