/* End-to-end: `ocbench run --suite sparse --quick` into a temporary database: every case
 * (our kernel, OpenBLAS dense, librsb on the same matrix, a second density) passes its
 * check and is stored with its peer and variant, with its set-up times as metrics; the
 * sparse_mlp and sparse_lm workloads store their metrics per target. */
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
			      "--filter", "bsr_spmm", "--passes", "1", out, NULL};
	struct cli_out o;
	cr_assert_eq(cli_run(&o, argv, NULL), 0);
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM result WHERE bench='bsr_spmm' "
				       "AND status='ok'"), 4);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM result WHERE suite='sparse' AND "
				       "bench='bsr_spmm'"), 4);
	/* our kernel: the widest SIMD body this CPU has (avx512 or avx2), or ref */
	const char *peers[][2] = {{"bsr", "avx2' OR variant='avx512"}, {"openblas", "openblas"},
				  {"librsb", "librsb"}};
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
	/* set-up times beside the results: librsb's tuning, our dense -> BSR conversion */
	cr_expect_geq(cli_query_int(db, "SELECT count(*) FROM metric m JOIN workload_ident w ON "
					"w.run_id=m.run_id AND w.workload=m.workload WHERE "
					"m.key='librsb_tune_time' AND m.value >= 0 AND w.ident LIKE "
					"'%\"kind\":\"bsr_spmm_setup\",\"peer\":\"librsb\"%'"), 1);
	cr_expect_geq(cli_query_int(db, "SELECT count(*) FROM metric WHERE workload LIKE "
					"'bsr_spmm:bsr:512x512x32:b16:d50:t%' AND key='convert_time'"), 1);
}

/* The LM half at --quick: perplexity, sparsity reached, bytes, identity per target. */
Test(sparse_suite, quick_sparse_lm_metrics)
{
	char tmp[64], dbopt[160], db[128], out[128];
	cr_assert(cli_tmpdir(tmp, sizeof tmp));
	snprintf(db, sizeof db, "%s/l.db", tmp);
	snprintf(dbopt, sizeof dbopt, "--db=%s", db);
	snprintf(out, sizeof out, "--out=%s/out", tmp);
	const char *argv[] = {"", dbopt, "--quiet", "run", "--suite", "sparse", "--quick",
			      "--filter", "sparse_lm", "--passes", "1", out, NULL};
	struct cli_out o;
	cr_assert_eq(cli_run(&o, argv, NULL), 0);
	if (o.status == 2 && strstr(o.err, "fortunes"))
		cr_skip_test("no fortunes corpus here: %s", o.err);
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM metric WHERE workload LIKE "
				       "'sparse_lm_b8_s%' AND key='val_ppl' AND value > 1 AND "
				       "value < 256"), 2);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM metric WHERE workload="
				       "'sparse_lm_b8_s90' AND key='block_sparsity' AND "
				       "value BETWEEN 0.88 AND 0.91"), 1);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM metric a JOIN metric b ON "
				       "a.workload='sparse_lm_b8_s90' AND b.workload="
				       "'sparse_lm_b8_s90' AND a.key='sparse_bytes' AND "
				       "b.key='dense_bytes' AND a.value * 5 < b.value"), 1);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM workload_ident WHERE workload="
				       "'sparse_lm_b8_s90' AND ident LIKE '%\"kind\":\"sparse_lm\"%' "
				       "AND ident LIKE '%\"rule\":\"block_frobenius_magnitude\"%'"), 1);
}

/* The workload half of the suite at --quick: accuracy, sparsity, bytes, step time per
 * target, and the pruning configuration stored as the identity. */
Test(sparse_suite, quick_sparse_mlp_metrics)
{
	char tmp[64], dbopt[160], db[128], out[128];
	cr_assert(cli_tmpdir(tmp, sizeof tmp));
	snprintf(db, sizeof db, "%s/m.db", tmp);
	snprintf(dbopt, sizeof dbopt, "--db=%s", db);
	snprintf(out, sizeof out, "--out=%s/out", tmp);
	const char *argv[] = {"", dbopt, "--quiet", "run", "--suite", "sparse", "--quick",
			      "--filter", "sparse_mlp", "--passes", "1", out, NULL};
	struct cli_out o;
	cr_assert_eq(cli_run(&o, argv, NULL), 0);
	if (o.status == 2 && strstr(o.err, "fashion"))
		cr_skip_test("no Fashion-MNIST here: %s", o.err);
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM metric WHERE workload LIKE "
				       "'sparse_mlp_b16_s%' AND key='test_accuracy'"), 2);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM metric WHERE workload="
				       "'sparse_mlp_b16_s90' AND key='block_sparsity' AND "
				       "value BETWEEN 0.89 AND 0.91"), 1);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM metric WHERE workload="
				       "'sparse_mlp_b16_s90' AND key='test_accuracy' AND value > 0.3"),
		     1);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM metric a JOIN metric b ON "
				       "a.workload='sparse_mlp_b16_s90' AND b.workload="
				       "'sparse_mlp_b16_s90' AND a.key='sparse_bytes' AND "
				       "b.key='dense_bytes' AND a.value * 5 < b.value"), 1);
	/* the sparse layers' step alone and the same layers dense, both measured */
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM metric a JOIN metric b ON "
				       "a.workload='sparse_mlp_b16_s90' AND b.workload=a.workload AND "
				       "a.key='layer_step_time' AND b.key='layer_step_time_dense' AND "
				       "a.value > 0 AND b.value > 0"), 1);
}
