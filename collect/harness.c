/* harness: runs one case of a bench (DESIGN.md "Measurement rules").
 *
 * KERNEL: threads -> setup -> check (a failed check is a failed result, never timed)
 *   -> warm-up (>= 1 call and >= warmup_s) -> adaptive repetitions under the counters:
 *   samples are taken until n >= min_reps and the median's 95% CI (order statistics,
 *   REFERENCE.md §3) has a relative half-width <= target_ci (tested from CI_MIN_N
 *   samples on), or the budget is spent (but never fewer than min_reps), or
 *   n == max_reps -> statistics, bound -> teardown.
 * WORKLOAD: threads -> setup -> one timed workload() call (n = 1 sample: wall seconds),
 *   metrics go to ctx->metrics -> teardown.
 *
 * One sample is the time of one run() call in seconds. Kernels faster than
 * BATCH_BELOW_NS per call are timed in batches of `batch` back-to-back calls, so that a
 * sample spans about BATCH_TARGET_NS and the clock's own cost (tens of ns) stays far
 * below 1%; the sample stored is the batch time divided by `batch`, i.e. still the time
 * of one call. The batch size itself is not stored.
 *
 * Overhead: inside the timed region there is nothing but the clock reads and the run()
 * calls. Between samples the harness stores the sample and inserts it into a sorted
 * copy (memmove, no allocation) to test the stopping rule in O(1); both buffers are
 * sized from the warm-up's estimate and only grow (geometrically) if that was short. */
#include "harness.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_stats.h"
#include "../common/ocb_time.h"
#include "hostload.h"
#include "registry.h"
#include "suspect.h"

#define BATCH_BELOW_NS 50000.0   /* batch calls shorter than 50 us */
#define BATCH_TARGET_NS 200000.0 /* ... into samples of ~200 us */
#define BATCH_MAX 1000000L

void ocb_harness_defaults(struct ocb_harness_opts *o)
{
	o->target_ci = 0.02;
	o->budget_s = 2.0;
	o->warmup_s = 0.1;
	o->min_reps = 5;
	o->max_reps = 1000;
	o->no_ci_stop = 0;
	o->slow_bench = NULL;
	o->slow_frac = 0.0;
}

/* Marks r failed with "what: detail" (detail: the last ocb_seterr, else the status). */
static void set_failed(struct ocb_result *r, const char *what, int status)
{
	const char *d = ocb_lasterr();
	snprintf(r->status, sizeof r->status, "failed");
	r->err_status = status;
	snprintf(r->error, sizeof r->error, "%s: %s", what, d && *d ? d : ocb_strerror(status));
}

/* bound / bound_frac of a finished result (median in seconds, work per run()): the
 * roofline module (common/ocb_roofline.h) names the bound from the work model and the
 * machine's caches, and evaluates it with the measured ceilings. NaN whenever a number
 * it needs is unknown, a missing roof included (no other roof stands in for it). */
void ocb_harness_bound(struct ocb_result *r, const struct ocb_work *w, int have_work,
		       const struct ocb_ctx *ctx)
{
	struct ocb_roof_caches mc;
	struct ocb_roof_ceil *cv = NULL;
	r->bound_frac = NAN;
	r->bound[0] = '\0';
	if (!have_work)
		return;
	ocb_machine_caches(ctx->machine, &mc);
	if (ocb_roof_bound(&mc, w->bound, w->compute, ocb_work_ws(w), w->cycle, r->threads,
			   r->bound, sizeof r->bound) != 0)
		return;
	if (ctx->nceilings && !(cv = malloc(ctx->nceilings * sizeof *cv)))
		return; /* no memory: fraction unknown */
	if (cv)
		ocb_ceiling_view(ctx->ceilings, ctx->nceilings, cv);
	r->bound_frac = ocb_roof_frac(cv, cv ? ctx->nceilings : 0, r->bound, r->threads,
				      w->flops, w->bytes, r->st.median);
	free(cv);
}

static int machine_cpus(const struct ocb_ctx *ctx);

void ocb_harness_flag(struct ocb_result *r, double target_ci, const struct ocb_ctx *ctx)
{
	ocb_suspect_check(r, target_ci, machine_cpus(ctx));
}

/* No counter values for this result (counters could not start or be read). */
static void drop_counters(struct ocb_result *r)
{
	free(r->counters);
	r->counters = NULL;
	r->ncounters = 0;
	r->timing_only = 1;
}

/* Grows the [samples | sorted] block from cap to newcap values of each. */
static int grow(double **blk, size_t n, size_t *cap, size_t newcap)
{
	double *nb = malloc(2 * newcap * sizeof *nb);
	if (!nb)
		return ocb_seterr(OCB_ENOMEM, "harness: %zu samples", newcap);
	if (*blk) {
		memcpy(nb, *blk, n * sizeof *nb);
		memcpy(nb + newcap, *blk + *cap, n * sizeof *nb);
	}
	free(*blk);
	*blk = nb;
	*cap = newcap;
	return OCB_OK;
}

/* Grows the per-sample CPU-time array to cap values. */
static int grow_cpu(double **cpu, size_t cap)
{
	double *nc = realloc(*cpu, cap * sizeof *nc);
	if (!nc)
		return ocb_seterr(OCB_ENOMEM, "harness: %zu CPU times", cap);
	*cpu = nc;
	return OCB_OK;
}

/* Warm-up: at least one call and at least warmup_s, in doubling batches so that a tiny
 * kernel does not spend its warm-up reading the clock. Returns the batch size for the
 * samples in *batch and the fastest per-call time seen in *per_call_ns. */
int ocb_harness_warm_up(const struct ocb_bench *b, void *state, double warmup_s, long *batch,
			double *per_call_ns)
{
	uint64_t start = ocb_now_ns(), end = start + (uint64_t)(warmup_s > 0 ? warmup_s * 1e9 : 0);
	double best = INFINITY;
	long k = 1;
	for (;;) {
		uint64_t t0 = ocb_now_ns();
		for (long i = 0; i < k; i++) {
			int rc = b->run(state);
			if (rc != OCB_OK)
				return rc;
		}
		uint64_t t1 = ocb_now_ns();
		double per = (double)(t1 - t0) / (double)k;
		if (per < best)
			best = per;
		if (t1 >= end)
			break;
		if ((double)(t1 - t0) < BATCH_TARGET_NS && k < BATCH_MAX)
			k *= 2;
	}
	if (!(best > 0))
		best = 1.0; /* clock did not tick: a very fast call */
	*per_call_ns = best;
	*batch = 1;
	if (best < BATCH_BELOW_NS) {
		double bt = ceil(BATCH_TARGET_NS / best);
		*batch = bt > BATCH_MAX ? BATCH_MAX : (long)bt;
	}
	return OCB_OK;
}

uint64_t ocb_harness_slow_spin(uint64_t t0, uint64_t t1, double frac)
{
	if (!(frac > 0))
		return t1;
	uint64_t until = t1 + (uint64_t)((double)(t1 - t0) * frac);
	while ((t1 = ocb_now_ns()) < until)
		;
	return t1;
}

/* Inserts v into the sorted s[0..n) (capacity > n). */
static void sorted_insert(double *s, size_t n, double v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(s + lo + 1, s + lo, (n - lo) * sizeof *s);
	s[lo] = v;
}

/* The fewest samples whose CI can end the repetitions: below 6 the interval is [min, max],
 * which holds the median with probability 1 - 2^(1-n) < 95% (n = 2: 50%), so two
 * samples that agree by chance stopped an interleaved pass (min_reps 2) and the merged
 * result of 3 such passes came out with a CI 3-5x the target */
#define CI_MIN_N 6

/* Is the 95% CI of the median of the sorted s[0..n) within target (relative half-width)? */
static int ci_within(const double *s, size_t n, double target)
{
	double lo, hi, med = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
	ocb_stats_ci_sorted(s, n, &lo, &hi);
	return 0.5 * (hi - lo) <= target * med;
}

/* The adaptive repetitions. Fills r->samples/nsamples and the counter values. */
static int timed_reps(const struct ocb_bench *b, void *state, const struct ocb_harness_opts *o,
		      struct ocb_counters *ctr, long batch, double per_call_ns,
		      struct ocb_result *r)
{
	double *blk = NULL, *cpu = NULL; /* cpu[cap]: process CPU seconds per call */
	size_t n = 0, cap = 0;
	int rc = OCB_OK, crc;
	size_t max_reps = (size_t)o->max_reps, min_reps = (size_t)o->min_reps;
	double slow = o->slow_bench && strcmp(o->slow_bench, b->name) == 0 ? o->slow_frac : 0.0;

	/* Expected samples within the budget, +25%; at least min_reps, at most max_reps. */
	double est = o->budget_s * 1e9 / (per_call_ns * (double)batch) * 1.25;
	size_t want = est > (double)max_reps ? max_reps : (size_t)est;
	if (want < min_reps)
		want = min_reps;
	if (want < 16)
		want = 16 < max_reps ? 16 : max_reps;
	if ((rc = grow(&blk, 0, &cap, want)) != OCB_OK || (rc = grow_cpu(&cpu, cap)) != OCB_OK)
		goto out;

	uint64_t budget_ns = (uint64_t)(o->budget_s > 0 ? o->budget_s * 1e9 : 0);
	double inv = 1e-9 / (double)batch;
	/* Counters that cannot start leave the result timing-only, not failed. */
	struct ocb_hostload hl0, hl1;
	ocb_hostload_read(&hl0);
	/* (counters dropped by an earlier attempt stay dropped) */
	int counting = (r->counters || !ocb_counters_count(ctr)) && ocb_counters_start(ctr) == OCB_OK;
	uint64_t begin = ocb_now_ns();
	for (;;) {
		int rrc = OCB_OK;
		/* process CPU time around (outside) the timed region: Google Benchmark's
		 * cpu_time with MeasureProcessCPUTime, all threads of the process */
		double c0 = ocb_process_cpu_s();
		uint64_t t0 = ocb_now_ns();
		for (long k = 0; k < batch && rrc == OCB_OK; k++)
			rrc = b->run(state);
		uint64_t t1 = ocb_now_ns();
		t1 = ocb_harness_slow_spin(t0, t1, slow);
		cpu[n] = (ocb_process_cpu_s() - c0) / (double)batch;
		if (rrc != OCB_OK) {
			rc = rrc;
			break;
		}
		double v = (double)(t1 - t0) * inv;
		blk[n] = v;
		sorted_insert(blk + cap, n, v);
		n++;
		if (n >= max_reps)
			break;
		if (n >= min_reps) {
			if (t1 - begin >= budget_ns)
				break;
			if (!o->no_ci_stop && n >= CI_MIN_N &&
			    ci_within(blk + cap, n, o->target_ci))
				break;
		}
		if (n == cap) {
			/* outside the timed call: a longer run than the warm-up predicted */
			size_t nc = cap * 2 < max_reps ? cap * 2 : max_reps;
			if ((rc = grow(&blk, n, &cap, nc)) != OCB_OK || (rc = grow_cpu(&cpu, cap)))
				break;
		}
	}
	crc = counting ? ocb_counters_stop(ctr, (long)n * batch, r->counters) : OCB_EUNAVAIL;
	ocb_hostload_read(&hl1);
	ocb_hostload_between(&hl0, &hl1, &r->host_others_s, &r->host_wall_s);
	if (rc != OCB_OK) {
		set_failed(r, "run", rc);
		n = 0;
		rc = OCB_OK; /* a failed result, not an error of the harness */
		goto out;
	}
	if (crc != OCB_OK)
		drop_counters(r); /* the values could not be read: record none */
	/* Keep the samples (first half of the block); drop the sorted copy. */
	double *smp = realloc(blk, n * sizeof *smp);
	r->samples = smp ? smp : blk;
	r->nsamples = n;
	blk = NULL;
	r->cpu_samples = cpu;
	cpu = NULL;
	for (size_t i = 0; i < n; i++)
		if (isnan(r->cpu_samples[i])) { /* the clock failed once: no CPU times at all */
			free(r->cpu_samples);
			r->cpu_samples = NULL;
			break;
		}
out:
	free(blk);
	free(cpu);
	return rc;
}

/* The machine's CPUs for the host rule: the machine record's, else the online count. */
static int machine_cpus(const struct ocb_ctx *ctx)
{
	return ctx && ctx->machine && ctx->machine->threads > 0
		       ? ctx->machine->threads
		       : (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* The timed repetitions, re-measured (after a HOST_SETTLE_US pause) up to HOST_RETRIES
 * times while other processes kept the CPUs busy (ocb_suspect_host_busy): with every
 * core running one of the case's threads, each other runnable thread costs a team of
 * spin-waiting OpenMP threads a scheduler time slice per parallel region (a 10 us
 * 2-thread region took 6.8 ms while another process used one of 2 CPUs), so such samples
 * measure the host, not the kernel. A burst passes; a host that stays busy leaves the
 * last attempt, which ocb_harness_flag then marks suspect. */
#define HOST_RETRIES 2
#define HOST_SETTLE_US 100000
static int measure(const struct ocb_bench *b, void *state, const struct ocb_harness_opts *o,
		   struct ocb_counters *ctr, long batch, double per_call_ns,
		   const struct ocb_ctx *ctx, struct ocb_result *r)
{
	for (int attempt = 0;; attempt++) {
		int rc = timed_reps(b, state, o, ctr, batch, per_call_ns, r);
		if (rc != OCB_OK || strcmp(r->status, "ok") != 0 || attempt == HOST_RETRIES ||
		    !ocb_suspect_host_busy(r, machine_cpus(ctx), NULL))
			return rc;
		free(r->samples);
		free(r->cpu_samples); /* (valgrind: leaked on every retry before) */
		r->samples = NULL;
		r->cpu_samples = NULL;
		r->nsamples = 0;
		usleep(HOST_SETTLE_US);
	}
}

/* A fresh result of bench b: identity, params (canonical), NaN numbers, one slot per
 * counter. OCB_ENOMEM leaves what it allocated in out (the caller frees). */
static int result_init(const struct ocb_bench *b, const cJSON *params,
		       const struct ocb_ctx *ctx, struct ocb_counters *ctr,
		       struct ocb_result *out)
{
	memset(out, 0, sizeof *out);
	snprintf(out->suite, sizeof out->suite, "%s", ocb_bench_home(b));
	snprintf(out->bench, sizeof out->bench, "%s", b->name);
	snprintf(out->variant, sizeof out->variant, "default");
	snprintf(out->unit, sizeof out->unit, "s");
	snprintf(out->status, sizeof out->status, "ok");
	out->threads = ctx->threads > 0 ? ctx->threads : 1;
	out->flops = out->bytes = out->check_err = out->bound_frac = NAN;
	ocb_stats_compute(NULL, 0, &out->st); /* n = 0, NaNs */
	out->timing_only = !ocb_counters_active(ctr);

	if (params) {
		out->params_json = ocb_json_canonical(params);
	} else {
		out->params_json = malloc(3);
		if (out->params_json)
			memcpy(out->params_json, "{}", 3);
	}
	if (!out->params_json)
		return ocb_seterr(OCB_ENOMEM, "harness: %s: parameters", b->name);
	int nctr = ocb_counters_count(ctr);
	if (nctr > 0) {
		out->counters = calloc((size_t)nctr, sizeof *out->counters);
		if (!out->counters)
			return ocb_seterr(OCB_ENOMEM, "harness: %d counters", nctr);
		out->ncounters = (size_t)nctr;
	}
	return OCB_OK;
}

/* A workload: one timed call (wall and process CPU time, host load, counters). A failure
 * is recorded in out (status, error); the return is for what stops the run. */
static int time_workload(const struct ocb_bench *b, void *state, const struct ocb_ctx *ctx,
			 struct ocb_counters *ctr, struct ocb_result *out)
{
	if (!b->workload) {
		ocb_seterr(OCB_EINVAL, "bench has no workload()");
		set_failed(out, "workload", OCB_EINVAL);
		return OCB_OK;
	}
	struct ocb_hostload hl0, hl1;
	ocb_hostload_read(&hl0);
	int counting = ocb_counters_start(ctr) == OCB_OK;
	ocb_seterr(OCB_OK, "%s", "");
	double c0 = ocb_process_cpu_s();
	uint64_t t0 = ocb_now_ns();
	int wrc = b->workload(state, ctx);
	uint64_t t1 = ocb_now_ns();
	double c1 = ocb_process_cpu_s();
	ocb_hostload_read(&hl1);
	ocb_hostload_between(&hl0, &hl1, &out->host_others_s, &out->host_wall_s);
	int crc = counting ? ocb_counters_stop(ctr, 1, out->counters) : OCB_EUNAVAIL;
	if (wrc != OCB_OK) {
		set_failed(out, "workload", wrc);
		return OCB_OK;
	}
	if (crc != OCB_OK)
		drop_counters(out);
	out->samples = malloc(sizeof *out->samples);
	if (!out->samples)
		return ocb_seterr(OCB_ENOMEM, "harness: sample");
	out->samples[0] = (double)(t1 - t0) * 1e-9;
	out->nsamples = 1;
	if (isfinite(c1 - c0) && (out->cpu_samples = malloc(sizeof *out->cpu_samples)))
		out->cpu_samples[0] = c1 - c0;
	return OCB_OK;
}

/* A kernel: the check against the reference, warm-up, then the measured repetitions.
 * Failures as time_workload. */
static int time_kernel(const struct ocb_bench *b, void *state,
		       const struct ocb_harness_opts *o, struct ocb_counters *ctr,
		       const struct ocb_ctx *ctx, struct ocb_result *out)
{
	if (!b->run) {
		ocb_seterr(OCB_EINVAL, "bench has no run()");
		set_failed(out, "run", OCB_EINVAL);
		return OCB_OK;
	}
	if (b->check) {
		double err = NAN;
		ocb_seterr(OCB_OK, "%s", "");
		int crc = b->check(state, &err);
		out->check_err = err;
		if (crc != OCB_OK) {
			set_failed(out, "check", crc);
			return OCB_OK;
		}
		if (isnan(err)) {
			ocb_seterr(OCB_ECHECK, "error against the reference is NaN");
			set_failed(out, "check", OCB_ECHECK);
			return OCB_OK;
		}
	}
	long batch = 1;
	double per_call_ns = 0;
	ocb_seterr(OCB_OK, "%s", "");
	int wrc = ocb_harness_warm_up(b, state, o->warmup_s, &batch, &per_call_ns);
	if (wrc != OCB_OK) {
		set_failed(out, "run (warm-up)", wrc);
		return OCB_OK;
	}
	return measure(b, state, o, ctr, batch, per_call_ns, ctx, out);
}

/* The end of a case: a failed result carries no numbers; after an allocation failure
 * (rc) nothing half-built is left in out. */
static int result_finish(int rc, struct ocb_result *out)
{
	if (rc == OCB_OK && strcmp(out->status, "ok") != 0) {
		/* A failed result carries no numbers: no samples, no counters. */
		free(out->samples);
		out->samples = NULL;
		free(out->cpu_samples);
		out->cpu_samples = NULL;
		out->nsamples = 0;
		free(out->counters);
		out->counters = NULL;
		out->ncounters = 0;
		ocb_stats_compute(NULL, 0, &out->st);
		out->bound_frac = NAN;
		out->suspect[0] = '\0';
	}
	if (rc != OCB_OK) {
		/* Allocation failure: nothing half-built leaves here. */
		int keep = rc;
		char msg[256];
		snprintf(msg, sizeof msg, "%s", ocb_lasterr());
		free(out->params_json);
		free(out->samples);
		free(out->cpu_samples);
		free(out->counters);
		memset(out, 0, sizeof *out);
		return ocb_seterr(keep, "%s", msg);
	}
	return OCB_OK;
}

int ocb_harness_case(const struct ocb_bench *b, const cJSON *params, const struct ocb_ctx *ctx,
		     const struct ocb_harness_opts *o, struct ocb_counters *ctr,
		     struct ocb_result *out)
{
	struct ocb_harness_opts opts;
	struct ocb_work w = {.flops = NAN, .bytes = NAN};
	int have_work = 0, set_up = 0, rc;
	void *state = NULL;

	if ((rc = result_init(b, params, ctx, ctr, out)) != OCB_OK)
		goto out;
	if (o)
		opts = *o;
	else
		ocb_harness_defaults(&opts);
	if (opts.min_reps < 1)
		opts.min_reps = 1;
	if (opts.max_reps < opts.min_reps)
		opts.max_reps = opts.min_reps;

	/* Threads first: setup may already run BLAS (reference outputs). */
	openblas_set_num_threads(out->threads);
	omp_set_num_threads(out->threads);

	if (b->work) {
		ocb_seterr(OCB_OK, "%s", "");
		int wrc = b->work(params, &w);
		if (wrc != OCB_OK) {
			set_failed(out, "work model", wrc);
			goto out;
		}
		have_work = 1;
		out->flops = w.flops;
		out->bytes = w.bytes;
	}

	ocb_seterr(OCB_OK, "%s", "");
	int src = b->setup ? b->setup(params, ctx, &state) : OCB_OK;
	if (src != OCB_OK) {
		set_failed(out, "setup", src);
		goto out;
	}
	set_up = 1;
	if (b->variant) {
		const char *v = b->variant(state);
		if (v && *v)
			snprintf(out->variant, sizeof out->variant, "%s", v);
	}

	if (b->kind == OCB_KERNEL && b->reference_s)
		out->ref_s = b->reference_s(state);
	if (b->kind == OCB_KERNEL && b->team)
		out->team = b->team(state);
	rc = b->kind == OCB_WORKLOAD ? time_workload(b, state, ctx, ctr, out)
				     : time_kernel(b, state, &opts, ctr, ctx, out);
	if (rc != OCB_OK || strcmp(out->status, "ok") != 0)
		goto out;
	if ((rc = ocb_stats_compute(out->samples, out->nsamples, &out->st)) != OCB_OK)
		goto out;
	ocb_harness_bound(out, &w, have_work, ctx);
	ocb_harness_flag(out, opts.target_ci, ctx);
out:
	if (set_up || state) {
		if (b->teardown)
			b->teardown(state);
	}
	return result_finish(rc, out);
}

/* Failed: no numbers (the harness's rule for a failed result). */
static void strip_numbers(struct ocb_result *r)
{
	free(r->samples);
	r->samples = NULL;
	free(r->cpu_samples);
	r->cpu_samples = NULL;
	r->nsamples = 0;
	free(r->counters);
	r->counters = NULL;
	r->ncounters = 0;
	ocb_stats_compute(NULL, 0, &r->st);
	r->bound_frac = NAN;
	r->suspect[0] = '\0';
}

int ocb_harness_merge(struct ocb_result *acc, struct ocb_result *part)
{
	int rc = OCB_OK;
	const int part_ok = strcmp(part->status, "ok") == 0 && part->st.n > 0;
	if (!acc->params_json) { /* the first pass: take it whole */
		*acc = *part;
		memset(part, 0, sizeof *part);
		acc->passes = 1;
		acc->pass_lo = acc->pass_hi = part_ok ? acc->st.median : NAN;
		return OCB_OK;
	}
	acc->passes++;
	if (part_ok) { /* the range of the passes' own medians */
		if (!(part->st.median >= acc->pass_lo))
			acc->pass_lo = part->st.median;
		if (!(part->st.median <= acc->pass_hi))
			acc->pass_hi = part->st.median;
	}
	if (isnan(acc->check_err) || part->check_err > acc->check_err)
		acc->check_err = part->check_err;
	acc->host_others_s += part->host_others_s;
	acc->host_wall_s += part->host_wall_s;
	if (!(acc->ref_s > 0)) /* every pass keeps the first one's plan, and its median */
		acc->ref_s = part->ref_s;
	if (!acc->team)
		acc->team = part->team;
	if (strcmp(acc->status, "ok") != 0)
		goto out; /* already failed: the first failure stays */
	if (strcmp(part->status, "ok") != 0) {
		snprintf(acc->status, sizeof acc->status, "%s", part->status);
		snprintf(acc->error, sizeof acc->error, "%s", part->error);
		acc->err_status = part->err_status;
		strip_numbers(acc);
		goto out;
	}
	/* Counters: per-rep values weighted by sample count; a counter unavailable in any
	 * pass is unavailable; a pass without counters leaves the result timing-only. */
	size_t na = acc->nsamples, nb = part->nsamples;
	if (part->timing_only || !part->counters || part->ncounters != acc->ncounters) {
		free(acc->counters);
		acc->counters = NULL;
		acc->ncounters = 0;
		acc->timing_only = 1;
	}
	for (size_t i = 0; i < acc->ncounters; i++) {
		struct ocb_counter_val *a = &acc->counters[i];
		const struct ocb_counter_val *b = &part->counters[i];
		if (!a->available)
			continue;
		if (!b->available || strcmp(a->event, b->event) != 0) {
			a->available = 0;
			snprintf(a->reason, sizeof a->reason, "%s", b->reason);
			continue;
		}
		double wa = (double)na, wb = (double)nb;
		if (wa + wb > 0) {
			a->value = (a->value * wa + b->value * wb) / (wa + wb);
			a->multiplex_ratio =
				(a->multiplex_ratio * wa + b->multiplex_ratio * wb) / (wa + wb);
		}
	}
	if (nb > 0) {
		double *s = realloc(acc->samples, (na + nb) * sizeof *s);
		if (!s) {
			rc = ocb_seterr(OCB_ENOMEM, "harness: merging %zu samples", na + nb);
			goto out;
		}
		memcpy(s + na, part->samples, nb * sizeof *s);
		acc->samples = s;
		/* CPU times follow their samples; a pass without them: none for the case */
		double *c = acc->cpu_samples && part->cpu_samples
				    ? realloc(acc->cpu_samples, (na + nb) * sizeof *c)
				    : NULL;
		if (c)
			memcpy(c + na, part->cpu_samples, nb * sizeof *c);
		else
			free(acc->cpu_samples);
		acc->cpu_samples = c;
		acc->nsamples = na + nb;
	}
	rc = ocb_stats_compute(acc->samples, acc->nsamples, &acc->st);
out:
	ocb_result_release(part);
	if (rc != OCB_OK)
		ocb_result_release(acc);
	return rc;
}
