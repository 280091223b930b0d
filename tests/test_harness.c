/* Tests of collect/harness with fake benches of known cost: a busy loop that spins on
 * the monotonic clock for a set number of ns (no sleeping: the kernel cannot make it
 * shorter), a near-empty kernel (batching), failing setup/check/run, and a workload. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/harness.h"
#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_time.h"

struct fake {
	uint64_t spin_ns;
	long runs, checks, teardowns;
	int fail_check, fail_run_after;  /* run() fails from this call on (0: never) */
	double check_err;
};

static struct fake F; /* the fakes' shared state; reset by each test */

static void reset(uint64_t spin_ns)
{
	memset(&F, 0, sizeof F);
	F.spin_ns = spin_ns;
}

static int fk_setup(const cJSON *params, const struct ocb_ctx *ctx, void **state)
{
	(void)ctx;
	if (ocb_json_num(params, "fail_setup", 0) != 0)
		return ocb_seterr(OCB_EINVAL, "fake: setup refused n=%g",
				  ocb_json_num(params, "n", 0));
	*state = &F;
	return OCB_OK;
}

static int fk_run(void *state)
{
	struct fake *f = state;
	f->runs++;
	if (f->fail_run_after && f->runs >= f->fail_run_after)
		return ocb_seterr(OCB_ERUNTIME, "fake: run %ld broke", f->runs);
	if (f->spin_ns) {
		uint64_t end = ocb_now_ns() + f->spin_ns;
		while (ocb_now_ns() < end)
			;
	}
	return OCB_OK;
}

static int fk_check(void *state, double *err)
{
	struct fake *f = state;
	f->checks++;
	*err = f->check_err;
	if (f->fail_check)
		return ocb_seterr(OCB_ECHECK, "fake: max rel err %g > 1e-3", f->check_err);
	return OCB_OK;
}

static void fk_teardown(void *state)
{
	((struct fake *)state)->teardowns++;
}

static int fk_work_bw(const cJSON *params, struct ocb_work *w)
{
	(void)params;
	w->flops = 2e6;
	w->bytes = 1e6;
	w->bound = "bw_dram";
	return OCB_OK;
}

static int fk_work_roof(const cJSON *params, struct ocb_work *w)
{
	(void)params;
	w->flops = 2e6;
	w->bytes = 1e6;
	w->bound = NULL;
	return OCB_OK;
}

static const char *fk_variant(void *state)
{
	(void)state;
	return "spin";
}

static const struct ocb_bench spin_bench = {
	.name = "fake_spin", .suite = "test", .kind = OCB_KERNEL, .setup = fk_setup,
	.run = fk_run, .check = fk_check, .work = fk_work_bw, .variant = fk_variant,
	.teardown = fk_teardown,
};

static const struct ocb_bench plain_bench = {
	.name = "fake_plain", .suite = "test", .kind = OCB_KERNEL, .setup = fk_setup,
	.run = fk_run, .teardown = fk_teardown,
};

static void release(struct ocb_result *r)
{
	free(r->params_json);
	free(r->samples);
	free(r->counters);
	memset(r, 0, sizeof *r);
}

static struct ocb_harness_opts quick_opts(void)
{
	struct ocb_harness_opts o;
	ocb_harness_defaults(&o);
	o.warmup_s = 0.005;
	o.budget_s = 1.0;
	return o;
}

static const struct ocb_ctx ctx1 = {.threads = 1, .seed = 1};

Test(harness, defaults)
{
	struct ocb_harness_opts o;
	ocb_harness_defaults(&o);
	cr_expect_float_eq(o.target_ci, 0.02, 1e-15);
	cr_expect_float_eq(o.budget_s, 2.0, 1e-15);
	cr_expect_float_eq(o.warmup_s, 0.1, 1e-15);
	cr_expect_eq(o.min_reps, 5);
	cr_expect_eq(o.max_reps, 1000);
}

Test(harness, known_cost_and_fields)
{
	reset(200000); /* 200 us per call */
	struct ocb_harness_opts o = quick_opts();
	o.target_ci = 0.05;
	o.max_reps = 40;
	cJSON *p = cJSON_Parse("{\"n\":3,\"a\":\"x\"}");
	struct ocb_result r;
	cr_assert_eq(ocb_harness_case(&spin_bench, p, &ctx1, &o, NULL, &r), 0);
	cr_expect_str_eq(r.status, "ok", "%s", r.error);
	cr_expect_str_eq(r.bench, "fake_spin");
	cr_expect_str_eq(r.suite, "test");
	cr_expect_str_eq(r.params_json, "{\"a\":\"x\",\"n\":3}");
	cr_expect_str_eq(r.variant, "spin");
	cr_expect_str_eq(r.unit, "s");
	cr_expect_eq(r.threads, 1);
	cr_expect_eq(r.st.n, (long)r.nsamples);
	cr_expect_geq(r.nsamples, 5);
	cr_expect_leq(r.nsamples, 40);
	/* a spin of 200 us cannot take less; a loose factor above for a busy machine */
	cr_expect(r.st.median >= 199e-6 && r.st.median < 200e-6 * 20, "median %g", r.st.median);
	cr_expect(r.st.min >= 199e-6);
	cr_expect(r.st.ci_low <= r.st.median && r.st.median <= r.st.ci_high);
	for (size_t i = 0; i < r.nsamples; i++)
		cr_expect(r.samples[i] >= 199e-6, "sample %zu = %g", i, r.samples[i]);
	cr_expect_eq(F.checks, 1);
	cr_expect_eq(F.teardowns, 1);
	cr_expect_float_eq(r.check_err, 0.0, 1e-15);
	cr_expect_float_eq(r.flops, 2e6, 1);
	cr_expect_float_eq(r.bytes, 1e6, 1);
	cr_expect_str_eq(r.bound, "bw_dram");
	cr_expect(isnan(r.bound_frac), "no ceilings: unknown");
	cr_expect_eq(r.timing_only, 1);
	cr_expect_eq(r.ncounters, 0);
	/* each sample is one call (200 us > 50 us: no batching) */
	cr_expect_geq(F.runs, (long)r.nsamples + 1);
	release(&r);
	cJSON_Delete(p);
}

Test(harness, stops_at_min_reps_when_ci_tight)
{
	reset(50000);
	struct ocb_harness_opts o = quick_opts();
	o.min_reps = 7;
	o.target_ci = 1e9; /* any CI is tight enough: stop as soon as allowed */
	struct ocb_result r;
	cr_assert_eq(ocb_harness_case(&plain_bench, NULL, &ctx1, &o, NULL, &r), 0);
	cr_expect_str_eq(r.status, "ok");
	cr_expect_eq(r.nsamples, 7);
	cr_expect_eq(r.st.n, 7);
	cr_expect_str_eq(r.params_json, "{}");
	cr_expect_str_eq(r.variant, "default");
	cr_expect(isnan(r.check_err), "no check -> NaN");
	cr_expect_str_eq(r.bound, "", "no work model -> no bound");
	cr_expect(isnan(r.flops));
	release(&r);
}

Test(harness, honors_max_reps)
{
	reset(20000);
	struct ocb_harness_opts o = quick_opts();
	o.target_ci = -1; /* never satisfied */
	o.budget_s = 60;  /* not the limit here */
	o.max_reps = 12;
	struct ocb_result r;
	cr_assert_eq(ocb_harness_case(&plain_bench, NULL, &ctx1, &o, NULL, &r), 0);
	cr_expect_eq(r.nsamples, 12);
	cr_expect_eq(r.st.n, 12);
	release(&r);
}

Test(harness, honors_budget)
{
	reset(1000000); /* 1 ms per call */
	struct ocb_harness_opts o = quick_opts();
	o.target_ci = -1;
	o.budget_s = 0.03;
	o.min_reps = 3;
	o.max_reps = 100000;
	struct ocb_result r;
	cr_assert_eq(ocb_harness_case(&plain_bench, NULL, &ctx1, &o, NULL, &r), 0);
	cr_expect_geq(r.nsamples, 3);
	/* 30 ms of 1 ms calls: ~30 samples; 1000 would mean the budget was ignored */
	cr_expect_lt(r.nsamples, 1000, "n = %zu", r.nsamples);
	release(&r);
}

Test(harness, tiny_kernel_is_batched)
{
	reset(0); /* a call costs a few ns */
	struct ocb_harness_opts o = quick_opts();
	o.target_ci = 1e9;
	o.min_reps = 10;
	struct ocb_result r;
	cr_assert_eq(ocb_harness_case(&plain_bench, NULL, &ctx1, &o, NULL, &r), 0);
	cr_expect_eq(r.nsamples, 10);
	long warm = F.runs;
	/* per-call time, not per-batch: far below the 50 us batching threshold */
	cr_expect(r.st.median > 0 && r.st.median < 5e-6, "median %g s", r.st.median);
	cr_expect_gt(warm, 100 * (long)r.nsamples, "calls %ld for %zu samples", warm, r.nsamples);
	release(&r);
}

Test(harness, failed_check_is_not_timed)
{
	reset(1000);
	F.fail_check = 1;
	F.check_err = 0.5;
	struct ocb_result r;
	struct ocb_harness_opts o = quick_opts();
	cr_assert_eq(ocb_harness_case(&spin_bench, NULL, &ctx1, &o, NULL, &r), 0);
	cr_expect_str_eq(r.status, "failed");
	cr_expect(strstr(r.error, "check") && strstr(r.error, "max rel err 0.5"), "%s", r.error);
	cr_expect_eq(r.nsamples, 0);
	cr_expect_null(r.samples);
	cr_expect_eq(r.st.n, 0);
	cr_expect(isnan(r.st.median));
	cr_expect_eq(F.runs, 0, "never run after a failed check");
	cr_expect_eq(F.teardowns, 1);
	cr_expect_float_eq(r.check_err, 0.5, 1e-15);
	release(&r);
}

Test(harness, failed_setup_and_run)
{
	reset(1000);
	cJSON *p = cJSON_Parse("{\"fail_setup\":1,\"n\":4}");
	struct ocb_result r;
	struct ocb_harness_opts o = quick_opts();
	cr_assert_eq(ocb_harness_case(&spin_bench, p, &ctx1, &o, NULL, &r), 0);
	cr_expect_str_eq(r.status, "failed");
	cr_expect_str_eq(r.error, "setup: fake: setup refused n=4");
	cr_expect_eq(F.teardowns, 0, "no state to tear down");
	cr_expect_eq(r.nsamples, 0);
	release(&r);
	cJSON_Delete(p);

	reset(1000);
	F.fail_run_after = 30; /* breaks during warm-up or the reps */
	o.target_ci = -1;
	o.warmup_s = 0;
	cr_assert_eq(ocb_harness_case(&plain_bench, NULL, &ctx1, &o, NULL, &r), 0);
	cr_expect_str_eq(r.status, "failed");
	cr_expect(strstr(r.error, "run") && strstr(r.error, "fake: run 30 broke"), "%s", r.error);
	cr_expect_eq(r.nsamples, 0);
	cr_expect_null(r.samples);
	cr_expect_eq(F.teardowns, 1);
	release(&r);
}

Test(harness, bound_named_and_roofline)
{
	reset(1000000); /* 1 ms: 1e6 bytes -> <= 1 GB/s, 2e6 flops -> <= 2 GFLOP/s */
	struct ocb_ceiling c[] = {
		{.kind = "bw_dram", .threads = 1, .value = 5, .unit = "GB/s"},
		{.kind = "bw_dram", .threads = 2, .value = 10, .unit = "GB/s"},
		{.kind = "flops_fp32", .threads = 2, .value = 100, .unit = "GFLOP/s"},
	};
	struct ocb_ctx ctx = {.threads = 4, .ceilings = c, .nceilings = 3};
	struct ocb_harness_opts o = quick_opts();
	o.target_ci = 1e9;
	struct ocb_result r;
	cr_assert_eq(ocb_harness_case(&spin_bench, NULL, &ctx, &o, NULL, &r), 0);
	cr_expect_eq(r.threads, 4);
	cr_expect_str_eq(r.bound, "bw_dram");
	/* nearest thread count (2) -> 10 GB/s; achieved 1e6 B / median */
	double want = 1e6 / r.st.median * 1e-9 / 10.0;
	cr_expect_float_eq(r.bound_frac, want, 1e-9 * want);
	cr_expect(r.bound_frac > 0 && r.bound_frac <= 0.1001);
	release(&r);

	struct ocb_bench roof = spin_bench;
	roof.work = fk_work_roof;
	ctx.threads = 2;
	cr_assert_eq(ocb_harness_case(&roof, NULL, &ctx, &o, NULL, &r), 0);
	cr_expect_str_eq(r.bound, "roofline:bw_dram"); /* no machine given: DRAM */
	/* min(100, 10 GB/s * 2 flop/B) = 20 GFLOP/s */
	want = 2e6 / r.st.median * 1e-9 / 20.0;
	cr_expect_float_eq(r.bound_frac, want, 1e-9 * want);
	release(&r);

	/* With the machine known, a 1 MB working set lives in its 2 MiB L2. */
	struct ocb_machine m = {.threads = 2, .l1d_bytes = 48 << 10, .l2_bytes = 2 << 20,
				.l3_bytes = 64 << 20};
	struct ocb_ceiling c2[] = {
		{.kind = "bw_l2", .threads = 2, .value = 40, .unit = "GB/s"},
		{.kind = "bw_dram", .threads = 2, .value = 10, .unit = "GB/s"},
		{.kind = "flops_fp32", .threads = 2, .value = 100, .unit = "GFLOP/s"},
	};
	struct ocb_ctx ctx2 = {.threads = 1, .machine = &m, .ceilings = c2, .nceilings = 3};
	cr_assert_eq(ocb_harness_case(&roof, NULL, &ctx2, &o, NULL, &r), 0);
	cr_expect_str_eq(r.bound, "roofline:bw_l2");
	/* min(100, 40 GB/s * 2 flop/B) = 80 GFLOP/s (ceilings of the nearest threads, 2) */
	want = 2e6 / r.st.median * 1e-9 / 80.0;
	cr_expect_float_eq(r.bound_frac, want, 1e-9 * want);
	release(&r);

	ctx.nceilings = 1; /* no flops_fp32: unknown */
	cr_assert_eq(ocb_harness_case(&roof, NULL, &ctx, &o, NULL, &r), 0);
	cr_expect_str_eq(r.bound, "roofline:bw_dram");
	cr_expect(isnan(r.bound_frac));
	release(&r);
}

Test(harness, counters_per_case)
{
	reset(100000);
	struct ocb_counters *ctr = NULL;
	const char *ev[] = {"perf::TASK-CLOCK", "PAPI_TOT_CYC", "NOT_AN_EVENT"};
	cr_assert_eq(ocb_counters_open(ev, 3, 0, &ctr), 0);
	struct ocb_harness_opts o = quick_opts();
	o.target_ci = 1e9;
	struct ocb_result r;
	cr_assert_eq(ocb_harness_case(&plain_bench, NULL, &ctx1, &o, ctr, &r), 0);
	cr_expect_eq(r.timing_only, !ocb_counters_active(ctr));
	cr_assert_eq(r.ncounters, 3);
	cr_expect_str_eq(r.counters[2].event, "NOT_AN_EVENT");
	cr_expect_eq(r.counters[2].available, 0);
	cr_expect(r.counters[2].reason[0]);
	if (r.counters[0].available) /* per repetition: ~100 us of task clock, in ns */
		cr_expect(r.counters[0].value > 50000, "%g", r.counters[0].value);
	release(&r);
	ocb_counters_free(ctr);

	cr_assert_eq(ocb_counters_open(ev, 3, 1, &ctr), 0);
	cr_assert_eq(ocb_harness_case(&plain_bench, NULL, &ctx1, &o, ctr, &r), 0);
	cr_expect_eq(r.timing_only, 1);
	cr_assert_eq(r.ncounters, 3);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(r.counters[i].available, 0);
	release(&r);
	ocb_counters_free(ctr);
}

/* ---- a workload with a fake metric sink ---- */

struct sink {
	int n;
	char key[8][32];
	double val[8];
	long step[8];
};

static int sink_put(void *ctx, const char *workload, long step, const char *key, double value,
		    const char *unit)
{
	struct sink *s = ctx;
	(void)unit;
	cr_expect_str_eq(workload, "fake_train");
	if (s->n < 8) {
		snprintf(s->key[s->n], sizeof s->key[0], "%s", key);
		s->val[s->n] = value;
		s->step[s->n] = step;
		s->n++;
	}
	return OCB_OK;
}

static int fk_workload(void *state, const struct ocb_ctx *ctx)
{
	struct fake *f = state;
	for (long step = 0; step < 3; step++) {
		fk_run(f);
		ocb_metric(&ctx->metrics, "fake_train", step, "train_loss", 1.0 / (double)(step + 1),
			   "nats");
	}
	return ocb_metric(&ctx->metrics, "fake_train", -1, "test_accuracy", 0.75, "");
}

static const struct ocb_bench workload_bench = {
	.name = "fake_train", .suite = "test", .kind = OCB_WORKLOAD, .setup = fk_setup,
	.workload = fk_workload, .work = fk_work_roof, .teardown = fk_teardown,
};

Test(harness, workload_runs_once)
{
	reset(2000000); /* 3 steps of 2 ms */
	struct sink s = {0};
	struct ocb_ctx ctx = {.threads = 1, .metrics = {.ctx = &s, .put = sink_put}};
	struct ocb_result r;
	cr_assert_eq(ocb_harness_case(&workload_bench, NULL, &ctx, NULL, NULL, &r), 0);
	cr_expect_str_eq(r.status, "ok", "%s", r.error);
	cr_expect_eq(r.nsamples, 1);
	cr_expect_eq(r.st.n, 1);
	cr_expect(r.samples[0] >= 6e-3, "wall %g", r.samples[0]);
	cr_expect_float_eq(r.st.median, r.samples[0], 1e-15);
	cr_expect_eq(F.runs, 3, "no warm-up, no repetitions");
	cr_expect_eq(F.teardowns, 1);
	cr_assert_eq(s.n, 4);
	cr_expect_str_eq(s.key[0], "train_loss");
	cr_expect_eq(s.step[2], 2);
	cr_expect_float_eq(s.val[2], 1.0 / 3.0, 1e-15);
	cr_expect_str_eq(s.key[3], "test_accuracy");
	cr_expect_eq(s.step[3], -1);
	cr_expect_float_eq(r.flops, 2e6, 1);
	release(&r);
}

/* --inject-slowdown: every sample of the named bench is at least (1 + frac) times the
 * time its calls took, so its minimum is >= (1 + frac) x the unslowed minimum; other
 * benches are untouched. Asserts a ratio of minima measured in one test, no wall limit. */
Test(harness, injected_slowdown)
{
	reset(200000); /* 0.2 ms spin */
	struct ocb_ctx ctx = {.threads = 1};
	struct ocb_harness_opts o = quick_opts();
	o.min_reps = o.max_reps = 20;
	struct ocb_result base, slow, other;
	cr_assert_eq(ocb_harness_case(&spin_bench, NULL, &ctx, &o, NULL, &base), 0);
	o.slow_bench = spin_bench.name;
	o.slow_frac = 0.5;
	cr_assert_eq(ocb_harness_case(&spin_bench, NULL, &ctx, &o, NULL, &slow), 0);
	o.slow_bench = "some_other_bench";
	cr_assert_eq(ocb_harness_case(&spin_bench, NULL, &ctx, &o, NULL, &other), 0);
	cr_expect(slow.st.min >= 1.45 * base.st.min, "slowed min %g vs base min %g", slow.st.min,
		  base.st.min);
	cr_expect(other.st.min < 1.3 * base.st.min, "unnamed bench slowed: %g vs %g",
		  other.st.min, base.st.min);
	release(&base);
	release(&slow);
	release(&other);
}
