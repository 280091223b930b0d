#include "ab_verdict.h"

#include <math.h>
#include <stdlib.h>

#include "../common/ocb_error.h"
#include "bootmed.h"
#include "mde.h"
#include "signrank.h"

void ocb_ab_defaults(struct ocb_ab_opts *o)
{
	o->alpha = 0.01;
	o->threshold = 0.02;
	o->power = OCB_MDE_POWER;
	o->level = 0.95;
	o->resamples = 2000;
	o->seed = 1;
}

int ocb_ab_eval(const double *base, const double *cand, size_t rounds,
		const struct ocb_ab_opts *o, struct ocb_ab_stats *st)
{
	double *d = NULL, *lb = NULL, *lc = NULL;
	int rc = OCB_OK;

	*st = (struct ocb_ab_stats){.ratio = NAN, .lo = NAN, .hi = NAN, .p = NAN,
				    .w_plus = NAN, .var_d = NAN, .mde = NAN, .var_w = NAN,
				    .var_b = NAN, .mde_seq = NAN, .verdict = OCB_V_NA};
	size_t cap = rounds ? rounds : 1;
	d = malloc(cap * sizeof *d);
	lb = malloc(cap * sizeof *lb);
	lc = malloc(cap * sizeof *lc);
	if (!d || !lb || !lc) {
		rc = ocb_seterr(OCB_ENOMEM, "ab: %zu rounds", rounds);
		goto out;
	}
	size_t n = 0;
	for (size_t r = 0; r < rounds; r++) {
		if (!(base[r] > 0) || !(cand[r] > 0))
			continue;
		lb[n] = log(base[r]);
		lc[n] = log(cand[r]);
		d[n] = lc[n] - lb[n];
		n++;
	}
	st->n = n;
	if (n < OCB_MDE_MIN_ROUNDS)
		goto out;
	struct ocb_signrank w;
	if ((rc = ocb_signrank_test(d, n, &w)) != OCB_OK)
		goto out;
	st->p = w.n ? w.p : 1.0; /* every round tied exactly: no evidence of a change */
	st->w_plus = w.w_plus;
	rc = ocb_bootmed_ratio_ci(d, n, o->resamples, o->level, o->seed, &st->ratio, &st->lo,
				  &st->hi);
	if (rc != OCB_OK)
		goto out;
	st->var_d = ocb_mde_var_robust(d, n);
	st->mde = ocb_mde_rel(ocb_mde_se_paired(st->var_d, n), o->alpha, o->power);
	ocb_mde_split(lb, lc, n, &st->var_w, &st->var_b);
	st->mde_seq = ocb_mde_rel(sqrt(2 * st->var_b + 2 * st->var_w), o->alpha, o->power);
	if (st->p < o->alpha) {
		if (st->lo > 1 && st->ratio >= 1 + o->threshold)
			st->verdict = OCB_V_SLOWER;
		else if (st->hi < 1 && st->ratio <= 1 - o->threshold)
			st->verdict = OCB_V_FASTER;
		else
			st->verdict = OCB_V_NOISE;
	} else {
		st->verdict = OCB_V_SAME;
		st->mde_warn = st->mde > o->threshold;
	}
out:
	free(d);
	free(lb);
	free(lc);
	return rc;
}

int ocb_ab_undecided(const struct ocb_ab_stats *st, const struct ocb_ab_opts *o)
{
	if (st->n < OCB_MDE_MIN_ROUNDS || st->verdict == OCB_V_NA)
		return 1;
	if (st->verdict == OCB_V_SLOWER || st->verdict == OCB_V_FASTER)
		return 0;
	if (ocb_ab_leaning(st, o))
		return 1;
	double up = 1 + o->threshold, down = 1 - o->threshold;
	if ((st->lo < up && st->hi > up) || (st->lo < down && st->hi > down))
		return 1;
	/* the two tests disagree: the bootstrap CI lies beyond the threshold, the rank
	 * test is not yet below alpha (a few rounds the other way) */
	if (st->verdict == OCB_V_SAME && (st->lo > up || st->hi < down))
		return 1;
	return st->mde > o->threshold;
}

int ocb_ab_leaning(const struct ocb_ab_stats *st, const struct ocb_ab_opts *o)
{
	if (st->n < OCB_MDE_MIN_ROUNDS || st->verdict != OCB_V_SAME)
		return 0;
	return (st->lo > 1 && st->ratio >= 1 + o->threshold) ||
	       (st->hi < 1 && st->ratio <= 1 - o->threshold);
}
