/* live_case: one kernel case set up once and then timed on request, as many times as
 * asked (the long-lived child of `ocbench ab`, collect/serve.h). The same steps as the
 * harness (collect/harness.h): threads -> setup -> check against the reference (a
 * failed check is a failed case, never timed) -> warm-up (which picks the calls per
 * sample) -> then, per request, `reps` samples of `batch` calls each, nothing else in
 * the timed region (the --inject-slowdown spin included, as in the harness). */
#ifndef OCB_LIVE_CASE_H
#define OCB_LIVE_CASE_H

#include <cJSON.h>
#include <stddef.h>

#include "bench.h"

struct ocb_live_case {
	const struct ocb_bench *b;
	void *state;            /* the bench's */
	int ready;              /* set up, checked and warmed up: can be timed */
	int threads;
	long batch;             /* calls per sample (from the warm-up) */
	double per_call_s;      /* fastest call of the warm-up, s */
	double slow_frac;       /* injected slowdown of this bench (0: none) */
	double check_err;       /* max relative error against the reference (NaN: no check) */
	double check_s, warm_s; /* time the check and the warm-up of the set-up took, s */
	char variant[32];
};

/* Sets up bench b on the checked params `full` with ctx (ctx->threads set by the caller),
 * checks it against its reference unless skip_check (the same build already checked the
 * same case and inputs) and warms it up for warmup_s; slow_frac as the harness's
 * slow_frac for this bench. OCB_OK, or the bench's status with ocb_lasterr() saying which
 * step failed (then nothing is held). A workload is refused (OCB_EINVAL): it runs once,
 * not on request. */
int ocb_live_setup(struct ocb_live_case *lc, const struct ocb_bench *b, const cJSON *full,
		   const struct ocb_ctx *ctx, double warmup_s, double slow_frac, int skip_check);

/* Up to reps samples into s[0..) (seconds per call), fewer when max_s > 0 seconds have
 * passed (at least one): *n the count. OCB_OK or run()'s status. */
int ocb_live_time(struct ocb_live_case *lc, long reps, double max_s, double *s, long *n);

/* Tears the case down (nothing when not set up). */
void ocb_live_release(struct ocb_live_case *lc);

#endif
