/* history: E-Divisive finds a step, finds nothing in flat noise; the series and
 * change point come back through the store. */
#include "../cli/cli.h"
#include "../report/changepoint.h"
#include "../report/history.h"
#include "report_fixture.h"

Test(history, edivisive_finds_a_step)
{
	double z[30];
	struct ocb_rng r;
	ocb_rng_seed(&r, 7);
	for (int i = 0; i < 30; i++)
		z[i] = (i < 18 ? 1.0 : 1.25) * (1 + 0.01 * ocb_rng_normal(&r));
	size_t cp[30], n = 0;
	double p[30];
	cr_assert_eq(ocb_cp_edivisive(z, 30, NULL, cp, p, &n), OCB_OK);
	cr_assert_eq(n, 1, "found %zu change points", n);
	cr_assert_eq(cp[0], 18);
	cr_assert_lt(p[0], 0.05);
}

Test(history, edivisive_two_steps_and_flat)
{
	double z[45];
	struct ocb_rng r;
	ocb_rng_seed(&r, 3);
	for (int i = 0; i < 45; i++)
		z[i] = (i < 15 ? 1.0 : i < 30 ? 2.0 : 1.5) + 0.02 * ocb_rng_normal(&r);
	size_t cp[45], n = 0;
	cr_assert_eq(ocb_cp_edivisive(z, 45, NULL, cp, NULL, &n), OCB_OK);
	cr_assert_eq(n, 2);
	cr_assert_eq(cp[0], 15);
	cr_assert_eq(cp[1], 30);
	/* flat noise: nothing */
	for (int i = 0; i < 45; i++)
		z[i] = 1.0 + 0.02 * ocb_rng_normal(&r);
	cr_assert_eq(ocb_cp_edivisive(z, 45, NULL, cp, NULL, &n), OCB_OK);
	cr_assert_eq(n, 0, "false change point at %zu", n ? cp[0] : 0);
}

Test(history, step_in_stored_runs)
{
	char dir[256], db[300], out[300];
	fx_tmpdir(dir, sizeof dir, "hist");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(out, sizeof out, "%s/plots", dir);
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	for (int i = 0; i < 16; i++) {
		int64_t run = fx_run(s, m, "baseline", NULL);
		fx_result(s, run, "baseline", "gemv", "{\"k\":64,\"n\":32}", i < 10 ? 1e-3 : 1.2e-3, 0.01,
			  9, (uint64_t)i, 4096, 4096);
		fx_result(s, run, "baseline", "gemv", "{\"k\":128,\"n\":32}", 2e-3, 0.01, 9, 50u + i,
			  8192, 8192);
		ocb_store_run_finish(s, run, "complete");
	}
	ocb_store_close(s);
	cr_assert_eq(ocb_store_open(db, OCB_STORE_READ, &s), OCB_OK);
	struct ocb_hist h;
	/* params in another key order and with spaces: canonicalized */
	cr_assert_eq(ocb_hist_load(s, "gemv:{\"n\": 32, \"k\": 64}", NULL, &h),
		     OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(h.n, 1);
	cr_assert_eq(h.s[0].n, 16);
	cr_assert_eq(ocb_hist_detect(&h, NULL), OCB_OK);
	cr_assert_eq(h.s[0].ncp, 1);
	cr_assert(h.s[0].pt[10].change);
	cr_assert_float_eq(h.s[0].pt[10].shift, 0.2, 0.03);
	ocb_hist_release(&h);
	/* bench only: both parameter sets; the flat one has no change point */
	cr_assert_eq(ocb_hist_load(s, "gemv", NULL, &h), OCB_OK);
	cr_assert_eq(h.n, 2);
	cr_assert_eq(ocb_hist_detect(&h, NULL), OCB_OK);
	cr_assert_eq(h.s[0].ncp + h.s[1].ncp, 1);
	ocb_hist_release(&h);
	cr_assert_eq(ocb_hist_load(s, "nosuch", NULL, &h), OCB_ENOENT);
	cr_assert_eq(ocb_hist_load(s, "gemv:{bad", NULL, &h), OCB_EINVAL);
	ocb_store_close(s);

	struct ocb_global g = {.db_path = db, .quiet = 1};
	char *argv[] = {"history", "gemv", "--out", out, NULL};
	cr_assert_eq(cmd_history(&g, 4, argv), 0);
	if (access("/usr/bin/gnuplot", X_OK) == 0) {
		char p[400];
		snprintf(p, sizeof p, "%s/history_0.png", out);
		cr_assert_eq(access(p, F_OK), 0);
	}
	char *bad[] = {"history", NULL};
	cr_assert_eq(cmd_history(&g, 1, bad), 2);
	fx_rmdir(dir);
}
