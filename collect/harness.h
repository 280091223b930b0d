/* harness: runs one case of a bench: validate against the reference, warm up, then
 * repeat until the 95% CI of the median is within the target or the budget ends; keeps
 * every sample, computes robust statistics, reads counters around the timed reps. */
#ifndef OCB_HARNESS_H
#define OCB_HARNESS_H

#include "bench.h"
#include "counters.h"

struct ocb_harness_opts {
	double target_ci;   /* relative half-width of the median's 95% CI; default 0.02 */
	double budget_s;    /* time budget for the repetitions of one case; default 2 s */
	double warmup_s;    /* minimum warm-up time; default 0.1 s (at least 1 call) */
	long min_reps;      /* default 5 */
	long max_reps;      /* default 1000 */
	/* 1: the CI does not end the repetitions: max_reps of them, fewer only when the
	 * budget is spent first (the later passes of an interleaved case, which take as many
	 * samples as its first pass, so that each pass weighs the same in the merged median) */
	int no_ci_stop;
	/* Testing `compare`: the bench named slow_bench gets slow_frac (0.10 = 10%) more
	 * time inside its timed region, by spinning after each sample's calls. */
	const char *slow_bench; /* NULL: none */
	double slow_frac;
};

/* Fills in the defaults above. */
void ocb_harness_defaults(struct ocb_harness_opts *o);

/* Runs `b` on `params`. Fills *out (caller releases with ocb_result_release), with
 * status "ok", or "failed" and the error text when setup/check/run fails: a failed
 * check gives a failed result, not a number. Returns OCB_OK when a result (ok or
 * failed) was produced, an error only for allocation failure. `ctr` may be NULL.
 * Owned by *out (malloc'd): params_json, samples (nsamples per-call seconds; calls
 * under 50 us are timed in batches and divided), counters (ocb_counters_count(ctr)
 * values per run() call; none when the result failed or counters could not be read).
 * teardown() is called whenever setup() succeeded, or failed leaving *state non-NULL. */
int ocb_harness_case(const struct ocb_bench *b, const cJSON *params, const struct ocb_ctx *ctx,
		     const struct ocb_harness_opts *o, struct ocb_counters *ctr,
		     struct ocb_result *out);

/* The kernel warm-up (also collect/live_case.h): at least one call and at least
 * warmup_s, in doubling batches. *batch: the calls per sample (samples of ~200 us when a
 * call is under 50 us, else 1); *per_call_ns: the fastest per-call time seen. Returns
 * OCB_OK or run()'s status. */
int ocb_harness_warm_up(const struct ocb_bench *b, void *state, double warmup_s, long *batch,
			double *per_call_ns);

/* --inject-slowdown: spins until t1 + frac x (t1 - t0) (ns) and returns the new end of
 * the sample; frac <= 0 returns t1 at once. */
uint64_t ocb_harness_slow_spin(uint64_t t0, uint64_t t1, double frac);

/* bound / bound_frac of a finished result from its median (r->st.median, seconds) and
 * the case's work model w (have_work = 0: no model, bound_frac NaN). Used by
 * ocb_harness_case and by the runner after merging the passes of an interleaved run. */
void ocb_harness_bound(struct ocb_result *r, const struct ocb_work *w, int have_work,
		       const struct ocb_ctx *ctx);

/* result.suspect of a finished result: the rules of collect/suspect.h that need only
 * this result (CI beyond 3x target_ci, fraction above 105% of its roof, host busy);
 * call after ocb_harness_bound. ocb_harness_case calls it; so does the runner after
 * merging passes, and it then adds the N-thread vs 1-thread rule (ocb_suspect_scaling). */
void ocb_harness_flag(struct ocb_result *r, double target_ci, const struct ocb_ctx *ctx);

/* Merges one pass's result `part` of a case into `acc` (the same case's earlier passes;
 * all zero before the first), taking ownership of part's buffers (part is released).
 * Samples are concatenated in pass order and acc->st recomputed from all of them;
 * counters are averaged weighted by each pass's sample count, and are available only
 * if available in every pass (else timing_only); check_err is the max; a failed pass
 * makes acc failed (the first failure's error and err_status kept, no numbers). Host
 * load times are summed; acc->passes counts the passes and pass_lo / pass_hi range over
 * the ok passes' own medians. The bound and flags are not recomputed: call ocb_harness_bound
 * and ocb_harness_flag after the last pass. Returns OCB_OK,
 * or OCB_ENOMEM (acc is then released too). */
int ocb_harness_merge(struct ocb_result *acc, struct ocb_result *part);

#endif
