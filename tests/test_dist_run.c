/* End to end: `ocbench run --suite dist --ranks 1,2 --quick` relaunches itself under
 * mpirun per rank count, rank 0 writes the database, every rank its MLLOG file (checked
 * against the MLPerf HPC 3.0 rules); then a rank killed mid-suite ends the run as failed
 * (exit 3) and leaves the database intact. Root is allowed through the OMPI variables. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../collect/mllog_rules.h"
#include "cli_util.h"
#include "san.h"

/* canaries on (tests/run.sh turns them off): the 1-rank job runs them, more ranks not */
static const char *const mpi_env[] = {"OMPI_ALLOW_RUN_AS_ROOT=1",
				      "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OCBENCH_NO_CANARIES=0",
				      NULL};

/* The report of the run: the nccl-tests table verified, and the projection calibrated
 * on the 1-rank point against the stored step times of the same run (the 1-rank row is
 * the calibration itself; the 2-rank ratio is the model's, printed: its size depends on
 * how the machine's load changed between the two jobs). */
static void report_of_the_run(const char *db, const char *dir)
{
	static struct cli_out o;
	char rep[300], path[400], line[512];
	snprintf(rep, sizeof rep, "%s/rep", dir);
	const char *argv[] = {"ocbench", "--db", db, "report", "--out", rep, "--format", "csv",
			      NULL};
	cr_assert_eq(cli_run(&o, argv, NULL), 0);
	cr_assert_eq(o.status, 0, "stderr: %s", o.err);
	snprintf(path, sizeof path, "%s/csv/dist_coll_allreduce.csv", rep);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	int rows = 0;
	while (fgets(line, sizeof line, f)) {
		int np;
		long size, count;
		double t, alg, bus, wrong;
		if (sscanf(line, "%d,%ld,%ld,%lf,%lf,%lf,%lf", &np, &size, &count, &t, &alg, &bus,
			   &wrong) == 7) {
			rows++;
			cr_expect_eq(wrong, 0, "%s", line);
			cr_expect_eq(count * 4, size, "%s", line);
		}
	}
	fclose(f);
	cr_expect_gt(rows, 6, "sizes of 1 and 2 ranks");
	snprintf(path, sizeof path, "%s/csv/dist_proj_check.csv", rep);
	cr_assert_not_null(f = fopen(path, "r"), "%s", path);
	int seen = 0;
	while (fgets(line, sizeof line, f)) {
		int np;
		double meas, proj, ratio;
		if (sscanf(line, "lars,%d,%lf,%lf,%lf", &np, &meas, &proj, &ratio) != 4)
			continue;
		seen |= 1 << np;
		cr_expect(meas > 0 && proj > 0 && isfinite(ratio), "%s", line);
		if (np == 1)
			cr_expect_float_eq(ratio, 1.0, 1e-3, "calibration point: %s", line);
		else
			cr_log_info("projection at %d ranks: measured %.4f s, projected %.4f s, "
				    "ratio %.3f", np, meas, proj, ratio);
	}
	fclose(f);
	cr_expect_eq(seen, 6, "rows for 1 and 2 ranks");
}

Test(dist_run, ranks_1_2_quick_then_a_killed_rank, .timeout = OCB_TIMEOUT(600))
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
	/* the overlap by time is stored for 2 ranks: a share with its CI */
	cr_expect_eq(cli_query_int(db, "select count(*) from metric where workload = "
				       "'dist_train/lars/np2' and key = 'overlap_hidden' and value "
				       "between 0 and 1"), 1);
	cr_expect_eq(cli_query_int(db, "select count(*) from metric where workload = "
				       "'dist_train/lars/np2' and key = 'allreduce_alone_time' and "
				       "value > 0"), 1);
	/* a rank runs one BLAS thread (mpirun binds it to a core); canaries on 1 rank only */
	cr_expect_eq(cli_query_int(db, "select count(*) from result where bench = 'dist_train' "
				       "and threads != 1"), 0, "one thread per rank");
	cr_expect_eq(cli_query_int(db, "select count(distinct run_id) from metric where "
				       "workload = 'canary' and run_id in (select run_id from metric"
				       " where workload = 'dist_coll/np1')"), 1,
		     "drift canaries in the 1-rank job");
	cr_expect_eq(cli_query_int(db, "select count(*) from metric where workload = 'canary' "
				       "and run_id in (select run_id from metric where workload = "
				       "'dist_coll/np2')"), 0, "no canaries on 2 ranks");
	/* core vs plain allreduce: 16 paired rounds, the median inside its CI */
	cr_expect_eq(cli_query_int(db, "select count(*) from metric a join metric l on "
				       "l.run_id = a.run_id and l.workload = a.workload join metric h"
				       " on h.run_id = a.run_id and h.workload = a.workload where "
				       "a.workload = 'dist_coll/np2' and a.key = 'plain_ratio' and "
				       "l.key = 'plain_ratio_lo' and h.key = 'plain_ratio_hi' and "
				       "a.value > 0 and l.value <= a.value and a.value <= h.value"),
		     1, "paired ratio with its CI");
	cr_expect_eq(cli_query_int(db, "select count(*) from metric where workload = "
				       "'dist_coll/np2' and key = 'plain_rounds' and value = 16"), 1);
	/* the compute phases' CPU share: a share of one core (small slack for clock reads) */
	for (int np = 1; np <= 2; np++) {
		snprintf(sql, sizeof sql, "select count(*) from metric where workload = "
					  "'dist_train/lars/np%d' and key = 'compute_share' and value > 0"
					  " and value <= 1.05", np);
		cr_expect_eq(cli_query_int(db, sql), 1, "np%d: compute share stored", np);
	}
	report_of_the_run(db, dir);
	for (int r = 0; r < 2; r++) {
		struct ocb_mllog_verdict v;
		snprintf(path, sizeof path, "%s/mllog_dist_mlp_rank%d.txt", out, r);
		cr_assert_eq(ocb_mllog_check_file(path, &v), 0, "%s", path);
		cr_expect_eq(v.nviol, 0, "%s: %s", path, v.viol[0]);
	}
	/* rank 1 dies in dist_train: mpirun ends the job, the run fails, the db is intact,
	 * and its private copy of the database is gone with the job's scratch folder */
	long before = cli_query_int(db, "select count(*) from metric");
	char tmpd[320], tmpenv[330];
	snprintf(tmpd, sizeof tmpd, "%s/tmp", dir);
	cr_assert_eq(mkdir(tmpd, 0700), 0);
	snprintf(tmpenv, sizeof tmpenv, "TMPDIR=%s", tmpd);
	char mark[340];
	snprintf(mark, sizeof mark, "%s/start", dir); /* for files newer than the job in /tmp */
	FILE *mf = fopen(mark, "w");
	cr_assert_not_null(mf);
	fclose(mf);
	const char *kenv[] = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
			      "OCB_TEST_KILL_RANK=1", tmpenv, NULL};
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
	snprintf(sql, sizeof sql, "find %s -name 'ocbench-*' | grep -q .", tmpd);
	cr_expect_neq(system(sql), 0, "no rank copy or scratch folder left in %s", tmpd);
	snprintf(sql, sizeof sql, "find /tmp -maxdepth 1 -name 'ocbench-rank*' -newer %s | "
				  "grep -q .", mark);
	cr_expect_neq(system(sql), 0, "no rank copy in /tmp either: $TMPDIR is honoured");
	snprintf(sql, sizeof sql, "rm -rf %s", dir);
	cr_expect_eq(system(sql), 0);
}
