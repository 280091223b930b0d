#include "live_case.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_time.h"
#include "harness.h"

static void set_threads(int threads)
{
	openblas_set_num_threads(threads);
	omp_set_num_threads(threads);
}

/* The check against the reference; OCB_OK or the failure (ocb_lasterr set). */
static int check(struct ocb_live_case *lc)
{
	double err = NAN;
	if (!lc->b->check)
		return OCB_OK;
	ocb_seterr(OCB_OK, "%s", "");
	int rc = lc->b->check(lc->state, &err);
	lc->check_err = err;
	if (rc != OCB_OK)
		return ocb_seterr(rc, "check: %s", ocb_lasterr());
	if (isnan(err))
		return ocb_seterr(OCB_ECHECK, "check: error against the reference is NaN");
	return OCB_OK;
}

int ocb_live_setup(struct ocb_live_case *lc, const struct ocb_bench *b, const cJSON *full,
		   const struct ocb_ctx *ctx, double warmup_s, double slow_frac, int skip_check)
{
	memset(lc, 0, sizeof *lc);
	lc->b = b;
	lc->threads = ctx->threads > 0 ? ctx->threads : 1;
	lc->slow_frac = slow_frac;
	lc->check_err = NAN;
	snprintf(lc->variant, sizeof lc->variant, "default");
	if (b->kind != OCB_KERNEL || !b->run)
		return ocb_seterr(OCB_EINVAL, "%s: a workload runs once; it is not timed on request",
				  b->name);
	set_threads(lc->threads); /* setup may already run BLAS (reference outputs) */
	ocb_seterr(OCB_OK, "%s", "");
	int rc = b->setup ? b->setup(full, ctx, &lc->state) : OCB_OK;
	if (rc != OCB_OK) {
		rc = ocb_seterr(rc, "setup: %s", ocb_lasterr());
		goto fail;
	}
	if (b->variant) {
		const char *v = b->variant(lc->state);
		if (v && *v)
			snprintf(lc->variant, sizeof lc->variant, "%s", v);
	}
	double t0 = ocb_now_s();
	if (!skip_check && (rc = check(lc)) != OCB_OK)
		goto fail;
	double t1 = ocb_now_s();
	double per_ns = 0;
	ocb_seterr(OCB_OK, "%s", "");
	if ((rc = ocb_harness_warm_up(b, lc->state, warmup_s, &lc->batch, &per_ns)) != OCB_OK) {
		rc = ocb_seterr(rc, "run (warm-up): %s", ocb_lasterr());
		goto fail;
	}
	lc->check_s = skip_check ? 0.0 : t1 - t0;
	lc->warm_s = ocb_now_s() - t1;
	lc->per_call_s = per_ns * 1e-9;
	lc->ready = 1;
	return OCB_OK;
fail:
	ocb_live_release(lc);
	return rc;
}

int ocb_live_time(struct ocb_live_case *lc, long reps, double max_s, double *s, long *n)
{
	*n = 0;
	if (!lc->ready)
		return ocb_seterr(OCB_EINVAL, "%s: not set up", lc->b ? lc->b->name : "case");
	set_threads(lc->threads); /* another live case may have run at another count */
	double inv = 1e-9 / (double)lc->batch;
	uint64_t begin = ocb_now_ns(), limit = max_s > 0 ? (uint64_t)(max_s * 1e9) : UINT64_MAX;
	for (long i = 0; i < reps && (i == 0 || ocb_now_ns() - begin < limit); i++) {
		int rc = OCB_OK;
		uint64_t t0 = ocb_now_ns();
		for (long k = 0; k < lc->batch && rc == OCB_OK; k++)
			rc = lc->b->run(lc->state);
		uint64_t t1 = ocb_harness_slow_spin(t0, ocb_now_ns(), lc->slow_frac);
		if (rc != OCB_OK)
			return ocb_seterr(rc, "run: %s", ocb_lasterr());
		s[i] = (double)(t1 - t0) * inv;
		*n = i + 1;
	}
	return OCB_OK;
}

void ocb_live_release(struct ocb_live_case *lc)
{
	if (lc->state && lc->b && lc->b->teardown)
		lc->b->teardown(lc->state);
	lc->state = NULL;
	lc->ready = 0;
}
