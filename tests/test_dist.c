/* Tests of the distributed pieces that need real MPI ranks: kernels/coll (collectives
 * core, verification, plain MPI loop), kernels/coll_model (fit), workloads/trainer_dp
 * (sharding, accumulation, bucketed all-reduce, determinism). Each runs the program
 * build/dist_check (tests/mpi/) under `mpirun -np N --oversubscribe`; root is allowed
 * through the OMPI_ALLOW_RUN_AS_ROOT variables (CI runs as root). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/mllog_rules.h"
#include "../workloads/data_synth.h"
#include "cli_util.h"
#include "san.h"

/* Runs dist_check under mpirun with `np` ranks; stdout into out (NUL-terminated).
 * Returns the exit status. */
static int mpirun(int np, const char *args, char *out, size_t len)
{
	char cmd[1024];
	const char *build = getenv("OCB_BUILD") ? getenv("OCB_BUILD") : "build";
	setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
	setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
	snprintf(cmd, sizeof cmd, "mpirun -np %d --oversubscribe %s/dist_check %s 2>&1", np,
		 build, args);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p, "%s", cmd);
	size_t n = fread(out, 1, len - 1, p);
	out[n] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void coll_on(int np)
{
	static char out[65536];
	cr_assert_eq(mpirun(np, "coll", out, sizeof out), 0, "%s", out);
	int rows = 0, fits = 0;
	char op[32];
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		int inplace;
		size_t bytes;
		long wrong;
		double t, busbw, alpha, beta, rms;
		if (sscanf(l, "coll %31s inplace %d bytes %zu wrong %ld time %lf busbw %lf", op,
			   &inplace, &bytes, &wrong, &t, &busbw) == 6) {
			rows++;
			cr_expect_eq(wrong, 0, "%s", l);
			cr_expect(t > 0 && busbw >= 0 && isfinite(busbw), "%s", l);
			if (np == 1)
				cr_expect(strcmp(op, "allreduce") || busbw == 0, "1 rank: busbw 0");
		} else if (sscanf(l, "fit %31s alpha %lf beta %lf rms %lf", op, &alpha, &beta,
				  &rms) == 4) {
			fits++;
			cr_expect(alpha >= 0 && beta >= 0 && rms >= 0 && isfinite(rms), "%s", l);
		}
	}
	/* 5 ops x 2 modes x 6 sizes 8 B .. 256 KiB (x8); on 4 ranks the blocked ops have no
	 * 8 B case (one fp32 per rank needs 16 B) */
	cr_expect_eq(rows, np == 4 ? 2 * 2 * 6 + 3 * 2 * 5 : 5 * 2 * 6, "rows %d", rows);
	cr_expect_eq(fits, 5);
}

Test(dist, collectives_verified_on_2_ranks, .timeout = OCB_TIMEOUT(120))
{
	coll_on(2);
}

Test(dist, collectives_verified_on_4_ranks_oversubscribed, .timeout = OCB_TIMEOUT(120))
{
	coll_on(4);
}

Test(dist, core_and_plain_allreduce_agree_on_the_work, .timeout = OCB_TIMEOUT(120))
{
	char out[4096];
	double core, plain;
	long wrong;
	cr_assert_eq(mpirun(2, "plain 4194304", out, sizeof out), 0, "%s", out);
	char *l = strstr(out, "plain core");
	cr_assert_not_null(l, "%s", out);
	cr_assert_eq(sscanf(l, "plain core %lf plain %lf wrong %ld", &core, &plain, &wrong), 3);
	cr_expect_eq(wrong, 0);
	/* both time the same MPI call on 4 MiB: no wall-clock bound, only sanity */
	cr_expect(core > 0 && plain > 0 && isfinite(core) && isfinite(plain));
}

/* dp on synthetic data: returns the "final" line's accuracy and loss text */
static void dp_run(int np, const char *dir, const char *opt, char *final, size_t len,
		   double *hidden, double *work)
{
	static char out[65536];
	char args[512];
	snprintf(args, sizeof args, "dp %s %s 256 3 %s 2048", dir, opt,
		 strcmp(opt, "lars") ? "0.1" : "5");
	cr_assert_eq(mpirun(np, args, out, sizeof out), 0, "%s", out);
	char *f = strstr(out, "final "), *d = strstr(out, "dp ranks");
	cr_assert(f && d, "%s", out);
	int ranks, accum, micro, buckets;
	cr_assert_eq(sscanf(d, "dp ranks %d accum %d micro %d buckets %d hidden %lf work %lf",
			    &ranks, &accum, &micro, &buckets, hidden, work), 6, "%s", d);
	cr_expect_eq(ranks, np);
	cr_expect_eq(accum * micro * np, 256);
	cr_expect_gt(buckets, 3, "the 784x512 layer splits into several buckets");
	char *e = strchr(f, '\n');
	snprintf(final, len, "%.*s", e ? (int)(e - f) : (int)strlen(f), f);
	/* the time-based overlap (more than one rank) */
	char *o = strstr(out, "overlap bwd");
	if (np == 1) {
		cr_expect_null(o, "one rank: nothing to overlap");
		return;
	}
	double bwd, bwc, alone, ex, exlo, exhi, h, hlo, hhi, hmin;
	cr_assert_not_null(o, "%s", out);
	cr_assert_eq(sscanf(o, "overlap bwd %lf bwd_comm %lf alone %lf exposed %lf [%lf, %lf] "
			       "hidden %lf [%lf, %lf] hidden_min %lf", &bwd, &bwc, &alone, &ex,
			    &exlo, &exhi, &h, &hlo, &hhi, &hmin), 10, "%s", o);
	cr_expect(bwd > 0 && bwc > 0 && alone > 0, "%s", o);
	cr_expect(exlo <= ex && ex <= exhi, "the median inside its CI: %s", o);
	cr_expect(hlo <= h && h <= hhi && hlo >= 0 && hhi <= 1, "%s", o);
	cr_expect(hmin >= 0 && hmin <= 1, "%s", o);
}

Test(dist, data_parallel_trainer_learns_and_is_deterministic, .timeout = OCB_TIMEOUT(300))
{
	char dir[128], a[256], b[256], c[256];
	double h1, h2, h3, w1, w2, w3;
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb-dist")));
	cr_assert_eq(ocb_synth_fmnist_write(dir, 2048, 512, 7), 0);
	dp_run(2, dir, "lars", a, sizeof a, &h1, &w1);
	dp_run(2, dir, "lars", b, sizeof b, &h2, &w2);
	cr_expect_str_eq(a, b, "same seed, same rank count: same result");
	cr_expect(h1 >= 0 && h1 <= 1, "hidden share %g", h1);
	cr_expect(w1 >= 0 && w1 < 1, "hidden work %g (the last bucket is never hidden)", w1);
	double acc, l0, l1;
	cr_assert_eq(sscanf(a, "final %lf %lf %lf", &acc, &l0, &l1), 3, "%s", a);
	cr_expect_gt(acc, 0.9, "separable synthetic classes: %s", a);
	cr_expect_lt(l1, l0);
	/* one rank, same global batch: the same mathematics, sums in another order */
	dp_run(1, dir, "lars", c, sizeof c, &h3, &w3);
	double acc1, l01, l11;
	cr_assert_eq(sscanf(c, "final %lf %lf %lf", &acc1, &l01, &l11), 3, "%s", c);
	cr_expect(isnan(h3) && isnan(w3), "no communication on one rank");
	cr_expect_float_eq(l01, l0, 1e-4 * l0, "first loss 1 rank %g, 2 ranks %g", l01, l0);
	cr_expect_float_eq(l11, l1, 0.05 * l1 + 1e-3, "final loss 1 rank %g, 2 ranks %g", l11, l1);
	/* SGD runs through the same trainer */
	dp_run(2, dir, "sgd", a, sizeof a, &h1, &w1);
	cr_assert_eq(sscanf(a, "final %lf %lf %lf", &acc, &l0, &l1), 3, "%s", a);
	cr_expect_lt(l1, l0);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

Test(dist, mllog_of_every_rank_follows_the_mlperf_hpc_rules, .timeout = OCB_TIMEOUT(300))
{
	char dir[128], args[600], path[700];
	static char out[65536];
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb-distlog")));
	cr_assert_eq(ocb_synth_fmnist_write(dir, 2048, 512, 3), 0);
	snprintf(args, sizeof args, "train %s %s 3 256 2048 5 1", dir, dir);
	cr_assert_eq(mpirun(2, args, out, sizeof out), 0, "%s", out);
	int ranks, reached, epochs;
	char *l = strstr(out, "train ranks");
	cr_assert_not_null(l, "%s", out);
	cr_assert_eq(sscanf(l, "train ranks %d reached %d epochs %d", &ranks, &reached, &epochs), 3);
	cr_expect_eq(ranks, 2);
	cr_expect(reached && epochs >= 1 && epochs <= 3, "synthetic classes reach 0.88: %s", l);
	for (int r = 0; r < 2; r++) {
		struct ocb_mllog_verdict v;
		snprintf(path, sizeof path, "%s/mllog_dist_mlp_rank%d.txt", dir, r);
		cr_assert_eq(ocb_mllog_check_file(path, &v), 0, "%s", path);
		cr_expect_gt(v.events, 20);
		cr_expect_eq(v.nviol, 0, "rank %d: %d violations, first: %s", r, v.nviol, v.viol[0]);
		size_t len;
		char *text = cli_slurp(path, &len);
		cr_assert_not_null(text);
		cr_expect_not_null(strstr(text, "\"status\": \"success\""), "target reached");
		cr_expect_not_null(strstr(text, "\"lars_opt_weight_decay\""));
		free(text);
	}
	snprintf(args, sizeof args, "rm -rf %s", dir);
	cr_expect_eq(system(args), 0);
}

static void lmdp(int np, double *first, double *final, double *val)
{
	static char out[65536];
	cr_assert_eq(mpirun(np, "lmdp 30 8", out, sizeof out), 0, "%s", out);
	char *l = strstr(out, "lmdp ranks");
	int ranks;
	cr_assert_not_null(l, "%s", out);
	cr_assert_eq(sscanf(l, "lmdp ranks %d first %lf final %lf val %lf", &ranks, first, final,
			    val), 4, "%s", l);
	cr_expect_eq(ranks, np);
}

Test(dist, data_parallel_lm_matches_one_rank, .timeout = OCB_TIMEOUT(300))
{
	double f1, l1, v1, f2, l2, v2, f2b, l2b, v2b;
	lmdp(1, &f1, &l1, &v1);
	lmdp(2, &f2, &l2, &v2);
	lmdp(2, &f2b, &l2b, &v2b);
	cr_expect(f2 == f2b && l2 == l2b && v2 == v2b, "same seed, 2 ranks: same losses");
	cr_expect_lt(l2, f2, "it learns");
	/* the same windows and the mean of equal-sized rank means: the one-rank mathematics,
	 * summed in another order */
	cr_expect_float_eq(f2, f1, 1e-6 * f1);
	cr_expect_float_eq(l2, l1, 1e-3 * l1);
	cr_expect_float_eq(v2, v1, 1e-3 * v1);
}
