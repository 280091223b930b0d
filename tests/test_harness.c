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
#include "../common/ocb_stats.h"
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
	.name = "fake_spin", .kind = OCB_KERNEL, .setup = fk_setup,
	.run = fk_run, .check = fk_check, .work = fk_work_bw, .variant = fk_variant,
	.teardown = fk_teardown,
};

static const struct ocb_bench plain_bench = {
	.name = "fake_plain", .kind = OCB_KERNEL, .setup = fk_setup,
	.run = fk_run, .teardown = fk_teardown,
};

static void release(struct ocb_result *r)
{
	free(r->params_json);
	free(r->samples);
	free(r->cpu_samples);
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
	cr_expect_eq(o.no_ci_stop, 0);
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
	cr_expect_str_eq(r.suite, ""); /* not in the registry: no home suite (the runner sets the planned one) */
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

/* Below 6 samples [min, max] is not a 95% CI (it holds the median with probability
 * 1 - 2^(1-n)): an interleaved pass (min_reps 2) once stopped at 2 samples that agreed by
 * chance. The CI may end the repetitions only from 6 on. */
Test(harness, ci_stops_no_earlier_than_6_samples)
{
	reset(50000);
	struct ocb_harness_opts o = quick_opts();
	o.min_reps = 2;
	o.target_ci = 1e9;
	struct ocb_result r;
	cr_assert_eq(ocb_harness_case(&plain_bench, NULL, &ctx1, &o, NULL, &r), 0);
	cr_expect_eq(r.nsamples, 6);
	release(&r);
	o.max_reps = 4; /* max_reps still wins */
	cr_assert_eq(ocb_harness_case(&plain_bench, NULL, &ctx1, &o, NULL, &r), 0);
	cr_expect_eq(r.nsamples, 4);
	release(&r);
}

/* no_ci_stop (a later interleaved pass): max_reps samples however tight the CI */
Test(harness, no_ci_stop_takes_max_reps)
{
	reset(20000);
	struct ocb_harness_opts o = quick_opts();
	o.min_reps = 2;
	o.max_reps = 23;
	o.target_ci = 1e9;
	o.no_ci_stop = 1;
	o.budget_s = 60;
	struct ocb_result r;
	cr_assert_eq(ocb_harness_case(&plain_bench, NULL, &ctx1, &o, NULL, &r), 0);
	cr_expect_eq(r.nsamples, 23);
	release(&r);
	o.budget_s = 0.001; /* the budget still ends it, after min_reps */
	o.max_reps = 100000;
	cr_assert_eq(ocb_harness_case(&plain_bench, NULL, &ctx1, &o, NULL, &r), 0);
	cr_expect_geq(r.nsamples, 2);
	cr_expect_lt(r.nsamples, 1000, "n = %zu", r.nsamples);
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
	/* no count above 4: the largest below (2) -> 10 GB/s; achieved 1e6 B / median */
	double want = 1e6 / r.st.median * 1e-9 / 10.0;
	cr_expect_float_eq(r.bound_frac, want, 1e-9 * want);
	cr_expect(r.bound_frac > 0 && r.bound_frac <= 0.1001);
	release(&r);

	struct ocb_bench roof = spin_bench;
	roof.work = fk_work_roof;
	ctx.threads = 2;
	cr_assert_eq(ocb_harness_case(&roof, NULL, &ctx, &o, NULL, &r), 0);
	cr_expect_str_eq(r.bound, "roofline:flops_fp32,bw_dram"); /* no machine: L3 unknown */
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
	cr_expect_str_eq(r.bound, "roofline:flops_fp32,bw_l2");
	/* min(100, 40 GB/s * 2 flop/B) = 80 GFLOP/s (the ceilings of the next count up, 2) */
	want = 2e6 / r.st.median * 1e-9 / 80.0;
	cr_expect_float_eq(r.bound_frac, want, 1e-9 * want);
	release(&r);

	ctx.nceilings = 1; /* no flops_fp32: unknown */
	cr_assert_eq(ocb_harness_case(&roof, NULL, &ctx, &o, NULL, &r), 0);
	cr_expect_str_eq(r.bound, "roofline:flops_fp32,bw_dram");
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
	.name = "fake_train", .kind = OCB_WORKLOAD, .setup = fk_setup,
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

/* ---- merging the passes of an interleaved run (ocb_harness_merge) ---- */

/* A pass's ok result with samples x[0..n) and, if nctr > 0, counters E0 = v, E1 = 2v
 * (E1 unavailable when e1_avail == 0), as ocb_harness_case would give it. */
static struct ocb_result part(const double *x, size_t n, double v, int nctr, int e1_avail,
			      double check_err)
{
	struct ocb_result r;
	memset(&r, 0, sizeof r);
	snprintf(r.suite, sizeof r.suite, "test");
	snprintf(r.bench, sizeof r.bench, "fake_spin");
	snprintf(r.status, sizeof r.status, "ok");
	r.params_json = strdup("{}");
	r.samples = malloc(n * sizeof *r.samples);
	memcpy(r.samples, x, n * sizeof *x);
	r.nsamples = n;
	r.threads = 1;
	r.flops = 2e6;
	r.bytes = 1e6;
	r.check_err = check_err;
	r.bound_frac = NAN;
	ocb_stats_compute(r.samples, n, &r.st);
	r.timing_only = nctr == 0;
	if (nctr) {
		r.counters = calloc(2, sizeof *r.counters);
		r.ncounters = 2;
		for (int i = 0; i < 2; i++) {
			snprintf(r.counters[i].event, sizeof r.counters[i].event, "E%d", i);
			r.counters[i].value = (i + 1) * v;
			r.counters[i].available = i == 0 || e1_avail;
			r.counters[i].multiplex_ratio = 1;
			if (!r.counters[i].available)
				snprintf(r.counters[i].reason, sizeof r.counters[i].reason, "gone");
		}
	}
	return r;
}

static struct ocb_result failed_part(const char *msg, int status)
{
	struct ocb_result r;
	memset(&r, 0, sizeof r);
	snprintf(r.status, sizeof r.status, "failed");
	snprintf(r.error, sizeof r.error, "%s", msg);
	r.err_status = status;
	r.params_json = strdup("{}");
	r.check_err = NAN;
	ocb_stats_compute(NULL, 0, &r.st);
	return r;
}

Test(harness, merge_concatenates_and_recomputes)
{
	const double a[] = {1, 2, 3}, b[] = {10, 11}, c[] = {4, 5, 6, 7};
	struct ocb_result acc, p;
	memset(&acc, 0, sizeof acc);
	p = part(a, 3, 10, 1, 1, 1e-6);
	cr_assert_eq(ocb_harness_merge(&acc, &p), OCB_OK);
	cr_expect_null(p.samples);
	p = part(b, 2, 20, 1, 1, 3e-6);
	p.ref_s = 4.5; /* a set-up timing (the GEMV plan's median): the first one is kept */
	cr_assert_eq(ocb_harness_merge(&acc, &p), OCB_OK);
	p = part(c, 4, 40, 1, 0, 2e-6);
	p.ref_s = 9;
	cr_assert_eq(ocb_harness_merge(&acc, &p), OCB_OK);

	cr_expect_float_eq(acc.ref_s, 4.5, 0);
	/* the passes' own medians 2, 10.5 and 5.5 */
	cr_expect_eq(acc.passes, 3);
	cr_expect_float_eq(acc.pass_lo, 2.0, 0);
	cr_expect_float_eq(acc.pass_hi, 10.5, 1e-15);
	cr_assert_eq(acc.nsamples, 9);
	cr_expect_eq(acc.st.n, 9);
	const double want[] = {1, 2, 3, 10, 11, 4, 5, 6, 7}; /* pass order */
	for (int i = 0; i < 9; i++)
		cr_expect_float_eq(acc.samples[i], want[i], 0, "sample %d", i);
	cr_expect_float_eq(acc.st.median, 5.0, 1e-15); /* of 1..7,10,11 */
	cr_expect_float_eq(acc.st.min, 1.0, 0);
	cr_expect_float_eq(acc.st.mean, 49.0 / 9, 1e-12);
	cr_expect_str_eq(acc.status, "ok");
	cr_expect_float_eq(acc.check_err, 3e-6, 0);
	/* E0 weighted by sample count: (3*10 + 2*20 + 4*40) / 9 */
	cr_assert_eq(acc.ncounters, 2);
	cr_expect(acc.counters[0].available);
	cr_expect_float_eq(acc.counters[0].value, 230.0 / 9, 1e-12);
	/* E1 unavailable in the third pass: unavailable, with that pass's reason */
	cr_expect_not(acc.counters[1].available);
	cr_expect_str_eq(acc.counters[1].reason, "gone");
	cr_expect_eq(acc.timing_only, 0);

	/* The bound, recomputed from the merged median (5 s): 1e6 B / 5 s vs 10 GB/s. */
	struct ocb_ceiling ce[] = {{.kind = "bw_dram", .threads = 1, .value = 10, .unit = "GB/s"}};
	struct ocb_ctx ctx = {.threads = 1, .ceilings = ce, .nceilings = 1};
	struct ocb_work w = {2e6, 1e6, "bw_dram", NULL, 0, 0};
	ocb_harness_bound(&acc, &w, 1, &ctx);
	cr_expect_str_eq(acc.bound, "bw_dram");
	cr_expect_float_eq(acc.bound_frac, 1e6 / 5.0 * 1e-9 / 10, 1e-18);
	ocb_harness_bound(&acc, &w, 0, &ctx);
	cr_expect(isnan(acc.bound_frac));
	ocb_result_release(&acc);
}

Test(harness, merge_timing_only_pass_drops_counters)
{
	const double a[] = {1, 2}, b[] = {3, 4};
	struct ocb_result acc, p;
	memset(&acc, 0, sizeof acc);
	p = part(a, 2, 10, 1, 1, NAN);
	cr_assert_eq(ocb_harness_merge(&acc, &p), OCB_OK);
	p = part(b, 2, 0, 0, 0, NAN);
	cr_assert_eq(ocb_harness_merge(&acc, &p), OCB_OK);
	cr_expect_eq(acc.nsamples, 4);
	cr_expect_eq(acc.ncounters, 0);
	cr_expect_null(acc.counters);
	cr_expect_eq(acc.timing_only, 1);
	cr_expect(isnan(acc.check_err));
	ocb_result_release(&acc);
}

Test(harness, merge_failure_propagates)
{
	const double a[] = {1, 2, 3}, b[] = {4, 5};
	struct ocb_result acc, p;
	memset(&acc, 0, sizeof acc);
	p = part(a, 3, 10, 1, 1, 1e-7);
	cr_assert_eq(ocb_harness_merge(&acc, &p), OCB_OK);
	p = failed_part("run: fake broke", OCB_ERUNTIME);
	cr_assert_eq(ocb_harness_merge(&acc, &p), OCB_OK);
	p = failed_part("setup: other", OCB_EINVAL);
	cr_assert_eq(ocb_harness_merge(&acc, &p), OCB_OK);
	p = part(b, 2, 10, 1, 1, 1e-5);
	cr_assert_eq(ocb_harness_merge(&acc, &p), OCB_OK);
	cr_expect_str_eq(acc.status, "failed");
	cr_expect_str_eq(acc.error, "run: fake broke"); /* the first failure */
	cr_expect_eq(acc.err_status, OCB_ERUNTIME);
	cr_expect_eq(acc.nsamples, 0);
	cr_expect_null(acc.samples);
	cr_expect_null(acc.counters);
	cr_expect_eq(acc.st.n, 0);
	cr_expect(isnan(acc.st.median));
	cr_expect_float_eq(acc.check_err, 1e-5, 0); /* max over every pass */
	ocb_result_release(&acc);

	/* Failed in the first pass: stays failed. */
	memset(&acc, 0, sizeof acc);
	p = failed_part("check: bad", OCB_ECHECK);
	cr_assert_eq(ocb_harness_merge(&acc, &p), OCB_OK);
	p = part(a, 3, 10, 1, 1, 1e-7);
	cr_assert_eq(ocb_harness_merge(&acc, &p), OCB_OK);
	cr_expect_str_eq(acc.status, "failed");
	cr_expect_eq(acc.err_status, OCB_ECHECK);
	cr_expect_eq(acc.nsamples, 0);
	ocb_result_release(&acc);
}

/* A real case in passes: the harness's results merge into n = the sum of the passes. */
Test(harness, merge_of_real_passes)
{
	reset(100000);
	struct ocb_harness_opts o = quick_opts();
	o.min_reps = o.max_reps = 4;
	struct ocb_result acc, r;
	memset(&acc, 0, sizeof acc);
	for (int pass = 0; pass < 3; pass++) {
		cr_assert_eq(ocb_harness_case(&spin_bench, NULL, &ctx1, &o, NULL, &r), 0);
		cr_assert_eq(r.nsamples, 4);
		cr_assert_eq(ocb_harness_merge(&acc, &r), OCB_OK);
	}
	cr_expect_eq(F.teardowns, 3);
	cr_expect_eq(acc.nsamples, 12);
	cr_expect_eq(acc.st.n, 12);
	cr_expect_float_eq(acc.st.median, ocb_median(acc.samples, 12), 0);
	cr_expect_str_eq(acc.variant, "spin");
	cr_assert_not_null(acc.cpu_samples, "CPU times follow the merged samples");
	for (size_t i = 0; i < 12; i++)
		cr_expect(acc.cpu_samples[i] > 0, "cpu %zu = %g", i, acc.cpu_samples[i]);
	ocb_result_release(&acc);
}

/* Each sample carries the process CPU time of its calls (Google Benchmark's cpu_time):
 * a spinning kernel burns CPU for most of its wall time, never more than a few times it
 * (one thread here). */
Test(harness, cpu_time_per_sample)
{
	reset(200000);
	struct ocb_harness_opts o = quick_opts();
	o.max_reps = 20;
	struct ocb_result r;
	cr_assert_eq(ocb_harness_case(&spin_bench, NULL, &ctx1, &o, NULL, &r), 0);
	cr_assert_str_eq(r.status, "ok", "%s", r.error);
	cr_assert_not_null(r.cpu_samples);
	size_t busy = 0;
	for (size_t i = 0; i < r.nsamples; i++) {
		cr_expect(r.cpu_samples[i] > 0 && r.cpu_samples[i] <= 4 * r.samples[i] + 1e-3,
			  "sample %zu: cpu %g s, wall %g s", i, r.cpu_samples[i], r.samples[i]);
		busy += r.cpu_samples[i] > 0.3 * r.samples[i];
	}
	cr_expect_geq(2 * busy, r.nsamples, "the spin burned CPU in %zu of %zu samples", busy,
		      r.nsamples);
	release(&r);
}
