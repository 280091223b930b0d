/* Criterion suite `qgemv_plan`: the r16 GEMV's settings chosen by timing
 * (kernels/qgemv_plan.h): the candidates per CPU, the choice from timings, a plan made
 * and then used by qgemv_r8 (every candidate's result within the summation-order bound),
 * the environment's precedence, the caches hook and copies, and what is not planned. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../kernels/qgemv_plan.h"
#include "../kernels/quant_gemv.h"
#include "../kernels/quant_repack.h"
#include "../kernels/quant_repack_impl.h"
#include "cli_util.h"
#include "qrepack_prob.h"
#include "san.h"

static void clear_env(void)
{
	unsetenv("OCB_QGEMV");
	unsetenv("OCB_QGEMV_STREAMS");
	unsetenv("OCB_QGEMV_PF");
	unsetenv("OCB_QGEMV_PF_L2");
	unsetenv("OCB_QGEMV_PLAN");
	qk_prefetch_r16_set(-1, -1);
	qgemv_plan_forget();
}

static int same(const struct qgemv_setting *a, const struct qgemv_setting *b)
{
	return a->streams == b->streams && a->pf_l1 == b->pf_l1 && a->pf_l2 == b->pf_l2 &&
	       a->threads == b->threads;
}

/* The CPU's default first, then distinct settings each of which has a kernel */
Test(qgemv_plan, candidates_per_cpu)
{
	const struct ocb_cpu_id zen5 = { .vendor = "AuthenticAMD", .family = 0x1a, .model = 0x02 };
	const struct ocb_cpu_id emr = { .vendor = "GenuineIntel", .family = 6, .model = 0xcf };
	const enum qformat_type types[] = { QF_Q8_0, QF_Q4_0, QF_Q4_1, QF_Q3_G, QF_Q2_G, QF_TQ2_0 };
	const struct ocb_cpu_id *cpus[] = { &zen5, &emr };
	for (size_t c = 0; c < 2; c++)
		for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
			struct qgemv_setting s[QGEMV_PLAN_MAX];
			const int n = qgemv_plan_candidates(types[i], cpus[c], s);
			const int ns0 = qr_default_streams(types[i], cpus[c]);
			const struct qk_pf pf0 = qr_default_prefetch(types[i], cpus[c], ns0);
			cr_assert(n >= 2 && n <= QGEMV_PLAN_SETTINGS, "type %d: %d", (int)types[i], n);
			cr_assert(s[0].streams == ns0 && s[0].pf_l1 == pf0.l1 && s[0].pf_l2 == pf0.l2,
				  "type %d cpu %zu: the default is not first", (int)types[i], c);
			for (int j = 0; j < n; j++) {
				cr_assert_leq(s[j].streams, qr_max_streams(types[i]));
				cr_assert(s[j].streams == 1 ? qr_zmm_kernel(types[i]) != NULL
							    : qr_zmm_kernels(types[i], s[j].streams) != NULL,
					  "type %d: no kernel for %d streams", (int)types[i], s[j].streams);
				for (int l = 0; l < j; l++)
					cr_assert(!same(&s[j], &s[l]), "type %d: %d twice", (int)types[i], j);
			}
		}
	struct qgemv_setting s[QGEMV_PLAN_MAX];
	const int n = qgemv_plan_candidates(QF_Q4_0, &zen5, s); /* as measured: README */
	cr_assert_eq(n, 4); /* 4:2048, 8:1024, 4:0, 2:0 */
	cr_assert(s[0].streams == 4 && s[0].pf_l1 == 2048 && s[0].pf_l2 == 0);
	cr_assert(s[1].streams == 8 && s[1].pf_l1 == 1024 && s[1].pf_l2 == 0);
	cr_assert(s[2].streams == 4 && s[2].pf_l1 == 0 && s[2].pf_l2 == 0);
	cr_assert(s[3].streams == 2 && s[3].pf_l1 == 0 && s[3].pf_l2 == 0);
	/* Q3_G: 8:1024, 4:2048, 4:0, 2:0 */
	cr_assert_eq(qgemv_plan_candidates(QF_Q3_G, &zen5, s), 4);
	cr_assert(s[0].streams == 8 && s[0].pf_l1 == 1024 && s[0].pf_l2 == 0);
	cr_assert(s[1].streams == 4 && s[1].pf_l1 == 2048 && s[1].pf_l2 == 0);
	cr_assert_eq(qgemv_plan_candidates(QF_Q8_0, &zen5, s), 3); /* 4:2048, 4:0, 2:0 */
	cr_assert(s[0].streams == 4 && s[0].pf_l1 == 2048 && s[0].pf_l2 == 0);
	cr_assert_eq(qgemv_plan_candidates(QF_TQ2_0, &zen5, s), 3); /* 4:2048, 2:0, 1:8192 */
	cr_assert(s[0].streams == 4 && s[0].pf_l1 == 2048 && s[0].pf_l2 == 0);
	cr_assert(s[1].streams == 2 && s[1].pf_l1 == 0 && s[1].pf_l2 == 0);
	cr_assert(s[2].streams == 1 && s[2].pf_l1 == 8192 && s[2].pf_l2 == 0);
}

/* The median over rounds decides; one slow round of the fastest does not; a tie keeps the
 * lower index (the default) */
Test(qgemv_plan, pick_by_median)
{
	/* rounds x settings */
	const double t[5 * 3] = { 3, 2, 4,  3, 2, 4,  3, 9, 4,  3, 2, 4,  3, 2, 1 };
	double med[3];
	cr_assert_eq(qgemv_plan_pick(t, 3, 5, med), 1);
	cr_assert_float_eq(med[0], 3.0, 1e-12);
	cr_assert_float_eq(med[1], 2.0, 1e-12);
	cr_assert_float_eq(med[2], 4.0, 1e-12);
	const double tie[3 * 2] = { 2, 2,  1, 1,  3, 3 };
	cr_assert_eq(qgemv_plan_pick(tie, 2, 3, med), 0);
	const double last[3 * 3] = { 5, 5, 4,  5, 5, 4,  5, 5, 4 };
	cr_assert_eq(qgemv_plan_pick(last, 3, 3, med), 2);
}

/* A lower median is not enough: the setting must also have run faster than the default
 * in at least 4 of 5 rounds, each round's timings being back to back */
Test(qgemv_plan, pick_needs_paired_wins)
{
	double med[3];
	/* setting 1's median is lower (2 < 3) but it won only 3 of 5 rounds: the default */
	const double three[5 * 2] = { 3, 2,  3, 2,  3, 2,  3, 4,  3, 4 };
	cr_assert_eq(qgemv_plan_pick(three, 2, 5, med), 0);
	cr_assert_float_eq(med[1], 2.0, 1e-12);
	/* 4 of 5: it replaces the default */
	const double four[5 * 2] = { 3, 2,  3, 2,  3, 2,  3, 2,  3, 4 };
	cr_assert_eq(qgemv_plan_pick(four, 2, 5, med), 1);
	/* the fastest median among the settings that qualify: 2 has the lowest median but won
	 * 3 of 5 rounds, 1 won all five */
	const double mixed[5 * 3] = { 5, 4, 1,  5, 4, 1,  5, 4, 1,  5, 4, 9,  5, 4, 9 };
	cr_assert_eq(qgemv_plan_pick(mixed, 3, 5, med), 1);
	/* a tie in every round is no win */
	const double tie[5 * 2] = { 3, 3,  3, 3,  3, 3,  3, 3,  3, 3 };
	cr_assert_eq(qgemv_plan_pick(tie, 2, 5, med), 0);
	/* four fifths of any number of rounds: 7 of 10 is not enough, 8 of 10 is */
	double ten[10 * 2];
	for (int r = 0; r < 10; r++) {
		ten[2 * r] = 3;
		ten[2 * r + 1] = r < 7 ? 2 : 4;
	}
	cr_assert_eq(qgemv_plan_pick(ten, 2, 10, med), 0);
	ten[2 * 7 + 1] = 2;
	cr_assert_eq(qgemv_plan_pick(ten, 2, 10, med), 1);
}

/* Each round times every setting once, the team's before the one-thread ones; the team
 * setting timed right after a one-thread call (the round's first, after the last
 * round's one-thread group) is each of them in turn, so no setting always holds that
 * place (qgemv_plan_order says why) */
Test(qgemv_plan, order_rotates_each_group)
{
	const int n = 6, nteam = 3, rounds = 9;
	int first[3] = { 0, 0, 0 };
	for (int r = 0; r < rounds; r++) {
		int seen[6] = { 0 };
		for (int i = 0; i < n; i++) {
			const int j = qgemv_plan_order(n, nteam, r, i);
			cr_assert(j >= 0 && j < n && !seen[j], "round %d place %d: %d", r, i,
				  j);
			seen[j] = 1;
			cr_assert_eq(j < nteam, i < nteam,
				     "round %d: a one-thread setting among the team's", r);
		}
		first[qgemv_plan_order(n, nteam, r, 0)]++;
	}
	for (int j = 0; j < nteam; j++)
		cr_assert_eq(first[j], rounds / nteam, "setting %d first in %d of %d rounds", j,
			     first[j], rounds);
	for (int r = 0; r < 4; r++) /* one group (1 thread): a plain rotation */
		for (int i = 0; i < 4; i++)
			cr_assert_eq(qgemv_plan_order(4, 4, r, i), (i + r) % 4);
}

static int calls;
static void count_call(void *arg)
{
	(void)arg;
	calls++;
}

/* A plan made on 2 copies, with the hook before every timing, is found for its shape and
 * threads only, qgemv_r8 runs it, and every candidate's result is right */
Test(qgemv_plan, plan_made_and_used, .fini = clear_env)
{
	if (!ocb_cpu_avx512vnni())
		cr_skip_test("no AVX-512 VNNI on this CPU: no r16 kernels to plan");
	clear_env();
	setenv("OCB_QGEMV", "r16", 1);
	const char *fmts[] = { "q4_0", "q8_0", "tq1_0" };
	for (size_t i = 0; i < sizeof fmts / sizeof *fmts; i++) {
		const struct qformat *f = qformat_find(fmts[i]);
		struct rprob p;
		const int64_t m = 16 * 9 + 3, k = f->block == 32 ? 32 * 67 : 512;
		rprob_init(&p, f, m, k, 5 + i);
		cr_assert_eq(qrepack_pack(f, p.w, m, k, p.wr, 2), OCB_OK);
		char *wr2 = qrepack_alloc(qrepack_bytes(f, m, k));
		cr_assert_not_null(wr2);
		memcpy(wr2, p.wr, qrepack_bytes(f, m, k));
		const void *copies[2] = { p.wr, wr2 };
		float *y = malloc(sizeof(float) * (size_t)m), *y0 = malloc(sizeof(float) * (size_t)m);
		cr_assert_eq(qgemv_ref(f, p.w, m, k, p.xq, y0, 1), OCB_OK);
		const struct qgemv_plan_opts opts = { copies, 2, count_call, NULL };
		struct qgemv_plan_info pi;
		calls = 0;
		cr_assert_eq(qgemv_plan(f, p.wr, m, k, p.xq, y, 2, &opts, &pi), OCB_OK);
		cr_assert(pi.ncand >= 2 && pi.rounds >= 5 && pi.rounds % 2 == 1, "%s: %d x %d",
			  f->name, pi.ncand, pi.rounds);
		cr_assert_eq(calls, pi.ncand * pi.rounds, "the hook runs before every timing");
		cr_assert(pi.chosen >= 0 && pi.chosen < pi.ncand && same(&pi.setting, &pi.cand[pi.chosen]));
		/* the default, or a setting with a lower median (qgemv_plan_pick) */
		for (int j = 0; j < pi.ncand; j++)
			cr_assert(pi.median_s[j] > 0);
		cr_assert(pi.median_s[pi.chosen] <= pi.median_s[0]);
		struct qgemv_setting got;
		cr_assert(qgemv_plan_find(f, m, k, 2, &got) && same(&got, &pi.setting), "%s", f->name);
		cr_assert(!qgemv_plan_find(f, m, k, 1, &got), "another thread count has no plan");
		cr_assert(!qgemv_plan_find(f, m + 16, k, 2, &got), "another shape has no plan");
		char want[48];
		snprintf(want, sizeof want, "%s%s",
			 pi.setting.streams == 1   ? "avx512vnni-r16"
			 : pi.setting.streams == 2 ? "avx512vnni-r16x2"
			 : pi.setting.streams == 4 ? "avx512vnni-r16x4"
						   : "avx512vnni-r16x8",
			 pi.setting.threads == 1 ? "-1t" : "");
		cr_assert_str_eq(qgemv_plan_variant(f, &pi.setting), want);
		/* at 2 threads every setting is timed on one thread too: the second half, in
		 * the same order */
		cr_assert(pi.ncand % 2 == 0, "%s: %d", f->name, pi.ncand);
		const int half = pi.ncand / 2;
		for (int j = 0; j < half; j++) {
			const struct qgemv_setting *a = &pi.cand[j], *b = &pi.cand[half + j];
			cr_assert_eq(a->threads, 0, "%s candidate %d", f->name, j);
			cr_assert(b->threads == 1 && b->streams == a->streams && b->pf_l1 == a->pf_l1 &&
				  b->pf_l2 == a->pf_l2,
				  "%s: candidate %d is %d:%d:%d threads %d", f->name, half + j,
				  b->streams, b->pf_l1, b->pf_l2, b->threads);
		}
		const struct qgemv_setting *one = &pi.cand[half]; /* the default on one thread */
		/* and runs the call on one thread whatever it asks: the same code path as a
		 * 1-thread call, so the same bits */
		float *ya = malloc(sizeof(float) * (size_t)m), *yb = malloc(sizeof(float) * (size_t)m);
		cr_assert_eq(qgemv_r8_setting(f, wr2, m, k, p.xq, ya, 2, one), OCB_OK);
		cr_assert_eq(qgemv_r8_setting(f, wr2, m, k, p.xq, yb, 1, &pi.cand[0]), OCB_OK);
		cr_assert_eq(memcmp(ya, yb, sizeof(float) * (size_t)m), 0, "%s", f->name);
		free(ya), free(yb);
		/* the planned call and each candidate: right within the bound */
		for (int j = -1; j < pi.ncand; j++) {
			memset(y, 0, sizeof(float) * (size_t)m);
			cr_assert_eq(j < 0 ? qgemv_r8(f, wr2, m, k, p.xq, y, 2)
					   : qgemv_r8_setting(f, wr2, m, k, p.xq, y, 3, &pi.cand[j]),
				     OCB_OK);
			for (int64_t r = 0; r < m; r++)
				cr_assert_leq(fabs((double)y0[r] - y[r]), order_bound(&p, r),
					      "%s setting %d row %lld: %g vs %g", f->name, j, (long long)r,
					      y0[r], y[r]);
		}
		free(y), free(y0);
		qrepack_free(wr2);
		rprob_free(&p);
	}
	qgemv_plan_forget();
	struct qgemv_setting got;
	cr_assert(!qgemv_plan_find(qformat_find("q4_0"), 16 * 9 + 3, 32 * 67, 2, &got));
}

/* Explicit settings win: with OCB_QGEMV_STREAMS (or a prefetch override) nothing is timed
 * and an existing plan is not used; OCB_QGEMV_PLAN=0 times nothing; a kind other than r16
 * has nothing to plan */
Test(qgemv_plan, environment_and_other_kinds, .fini = clear_env)
{
	if (!ocb_cpu_avx2())
		cr_skip_test("no AVX2 on this CPU (or OCB_FORCE_SCALAR set)");
	clear_env();
	const struct qformat *f = qformat_find("q4_0");
	struct rprob p;
	const int64_t m = 48, k = 32 * 8;
	rprob_init(&p, f, m, k, 3);
	float y[48];
	struct qgemv_plan_info pi;
	struct qgemv_setting got;
	setenv("OCB_QGEMV", "r8", 1);
	cr_assert_eq(qrepack_pack(f, p.w, m, k, p.wr, 1), OCB_OK);
	cr_assert_eq(qgemv_plan(f, p.wr, m, k, p.xq, y, 1, NULL, &pi), OCB_OK);
	cr_assert(pi.ncand == 0 && strstr(pi.why, "r16"), "%s", pi.why ? pi.why : "(null)");
	cr_assert(!qgemv_plan_find(f, m, k, 1, &got));
	if (ocb_cpu_avx512vnni()) {
		setenv("OCB_QGEMV", "r16", 1);
		cr_assert_eq(qrepack_pack(f, p.w, m, k, p.wr, 1), OCB_OK);
		setenv("OCB_QGEMV_PLAN", "0", 1);
		cr_assert_eq(qgemv_plan(f, p.wr, m, k, p.xq, y, 1, NULL, &pi), OCB_OK);
		cr_assert(pi.ncand == 0 && strstr(pi.why, "OCB_QGEMV_PLAN"));
		unsetenv("OCB_QGEMV_PLAN");
		cr_assert_eq(qgemv_plan(f, p.wr, m, k, p.xq, y, 1, NULL, &pi), OCB_OK);
		cr_assert_gt(pi.ncand, 0);
		cr_assert(qgemv_plan_find(f, m, k, 1, &got));
		setenv("OCB_QGEMV_STREAMS", "2", 1);
		cr_assert(!qgemv_plan_find(f, m, k, 1, &got), "the environment overrides the plan");
		cr_assert_eq(qgemv_plan(f, p.wr, m, k, p.xq, y, 1, NULL, &pi), OCB_OK);
		cr_assert(pi.ncand == 0 && strstr(pi.why, "environment"));
		unsetenv("OCB_QGEMV_STREAMS");
		qk_prefetch_r16_set(512, -1); /* quant_gemv_bw's configurations */
		cr_assert(!qgemv_plan_find(f, m, k, 1, &got));
		qk_prefetch_r16_set(-1, -1);
		cr_assert(qgemv_plan_find(f, m, k, 1, &got), "the plan is back");
	}
	cr_assert_eq(qgemv_plan(NULL, p.wr, m, k, p.xq, y, 1, NULL, &pi), OCB_EINVAL);
	rprob_free(&p);
}

/* End to end: a GEMV case whose repetitions run slower than its planning rounds timed
 * the same kernel (here slowed on purpose: --inject-slowdown spins three times as long
 * again after each sample: 4x, far past the rule's 1.5x even where the planning rounds
 * were slowed by other tests running beside this one; at 2x it once went unflagged in
 * such a run) is stored suspect with the set-up rule's reason (collect/suspect.h) */
Test(qgemv_plan, a_case_far_from_its_plan_is_flagged, .timeout = OCB_TIMEOUT(240))
{
	if (qgemv_choose(qformat_find("q4_0")) != QGEMV_VNNI512_R16)
		cr_skip_test("no r16 kernels here (AVX-512 VNNI): nothing is planned");
	struct cli_rundir d;
	cr_assert(cli_rundir(&d, "p.db"));
	const char *argv[] = {"", "--db", d.db, "--quiet", "run", "--suite", "quant", "--quick",
			      "--filter", "quant_gemv/.*\"q4_0\"", "--threads", "1",
			      "--inject-slowdown", "quant_gemv:3.0", "--out", d.out, NULL};
	struct cli_out o;
	cr_assert_eq(cli_run(&o, argv, NULL), 0);
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_expect_eq(cli_query_int(d.db, "SELECT count(*) FROM result WHERE bench = 'quant_gemv' "
				       "AND suspect LIKE '%its set-up timed for the same kernel%'"), 1);
	cr_expect_eq(cli_query_int(d.db, "SELECT count(*) FROM metric WHERE key LIKE "
				       "'plan_median_q4_0_%' AND value > 0"), 1);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", d.dir);
	cr_expect_eq(system(cmd), 0);
}

/* End to end: a 2-thread GEMV case the planner ran on one thread is held to its 1-thread
 * twin by the scaling rule's CI test (collect/suspect.h), which needs the twin's CI from
 * the runner, not its median alone: every such case flagged "slower than 1" lies wholly
 * above the twin's CI, and no case flagged is faster than its twin */
Test(qgemv_plan, one_thread_cases_are_held_to_the_twin_ci, .timeout = OCB_TIMEOUT(240))
{
	if (qgemv_choose(qformat_find("q4_0")) != QGEMV_VNNI512_R16)
		cr_skip_test("no r16 kernels here (AVX-512 VNNI): nothing is planned");
	struct cli_rundir d;
	cr_assert(cli_rundir(&d, "t.db"));
	cli_seed_machine(d.db);
	const char *argv[] = {"", "--db", d.db, "--quiet", "run", "--suite", "quant", "--quick",
			      "--filter", "quant_gemv/.*\"(q4_0|q4_1|q2_g|tq2_0|tq1_0)\"",
			      "--threads", "1,2", "--out", d.out, NULL};
	struct cli_out o;
	cr_assert_eq(cli_run(&o, argv, NULL), 0);
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	const char *pair = "FROM result b JOIN result a ON a.run_id = b.run_id AND a.bench = b.bench "
			   "AND a.params_json = b.params_json AND a.threads = 1 AND b.threads = 2 "
			   "WHERE b.bench = 'quant_gemv' AND a.status = 'ok' AND b.status = 'ok'";
	char sql[512];
	snprintf(sql, sizeof sql, "SELECT count(*) %s", pair);
	cr_assert_eq(cli_query_int(d.db, sql), 5, "a 1- and a 2-thread result per format");
	snprintf(sql, sizeof sql, "SELECT count(*) %s AND b.variant LIKE '%%-1t' AND b.suspect LIKE "
		 "'%%threads slower than 1%%' AND NOT (b.ci_low > a.ci_high)", pair);
	cr_expect_eq(cli_query_int(d.db, sql), 0, "a one-thread case flagged within its twin's CI");
	snprintf(sql, sizeof sql, "SELECT count(*) %s AND b.suspect LIKE '%%threads slower than 1%%' "
		 "AND NOT (b.median > a.median)", pair);
	cr_expect_eq(cli_query_int(d.db, sql), 0, "a case flagged slower that is not");
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", d.dir);
	cr_expect_eq(system(cmd), 0);
}
