/* ab_verdict: the verdict of one case of `ocbench ab` from its paired per-round medians
 * (base[r], cand[r] in seconds, r < rounds; a NaN on either side drops round r).
 *   d_r      = log(cand[r] / base[r])
 *   ratio    = exp(median d), CI: seeded percentile bootstrap of the median (bootmed.h)
 *   p        = two-sided Wilcoxon signed-rank on d (signrank.h)
 *   mde      = relative MDE at alpha and power from var_d = (1.4826 MAD(d))^2 over the
 *              rounds used (mde.h, paired); var_w / var_b split the per-round medians
 *              into within- and between-round variance, and mde_seq is the MDE one
 *              sequential pair of runs with these variances would have had (se^2 =
 *              2 var_b + 2 var_w): what interleaving bought
 *   verdict  = slower  p < alpha, CI above 1 and ratio >= 1 + threshold
 *              faster  p < alpha, CI below 1 and ratio <= 1 - threshold
 *              noise   p < alpha otherwise (a real but smaller change, or a fluke)
 *              same    p >= alpha; `mde_warn` when mde > threshold: "same" then only
 *                      means "no change larger than mde", not "none above threshold"
 *              n/a     fewer than OCB_MDE_MIN_ROUNDS paired rounds
 * Pure; uses report/compare.h's verdict names. */
#ifndef OCB_AB_VERDICT_H
#define OCB_AB_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "compare.h"

struct ocb_ab_opts {
	double alpha;     /* default 0.01 */
	double threshold; /* default 0.02 */
	double power;     /* default OCB_MDE_POWER */
	double level;     /* of the ratio CI, default 0.95 */
	size_t resamples; /* bootstrap, default 2000 */
	uint64_t seed;    /* bootstrap seed */
};

struct ocb_ab_stats {
	size_t n;                 /* paired rounds used */
	double ratio, lo, hi;     /* median cand/base and its CI */
	double p, w_plus;
	double var_d, mde;        /* paired */
	double var_w, var_b, mde_seq;
	int mde_warn;
	enum ocb_verdict verdict;
};

void ocb_ab_defaults(struct ocb_ab_opts *o);

/* Undecided (adaptive rounds, `ab --time-limit`): more rounds could change the verdict.
 * True when fewer than OCB_MDE_MIN_ROUNDS rounds were paired, or the verdict is not
 * slower/faster and either the ratio CI contains 1 + threshold or 1 - threshold (a
 * change beyond the threshold is neither shown nor excluded) or the MDE is above the
 * threshold, or the verdict is "same" while the CI lies wholly beyond the band (the
 * bootstrap sees a change the rank test does not yet), or the case leans
 * (ocb_ab_leaning). A case flagged slower/faster, or whose CI lies inside the band with
 * an MDE below the threshold, is decided. Pure. */
int ocb_ab_undecided(const struct ocb_ab_stats *st, const struct ocb_ab_opts *o);

/* Leaning (served first by the adaptive rounds): the evidence points to a change beyond
 * the threshold that the rank test does not yet show: verdict "same" (p >= alpha), the
 * ratio CI wholly above 1 with ratio >= 1 + threshold, or wholly below 1 with ratio <=
 * 1 - threshold. Typically one or two of ten rounds read far the other way (a host
 * event on one side), and at 10 rounds one such round with a middle rank already puts
 * the two-sided p above 0.01. A subset of the undecided cases. Pure. */
int ocb_ab_leaning(const struct ocb_ab_stats *st, const struct ocb_ab_opts *o);

/* Fills *st. Returns OCB_OK or OCB_ENOMEM (then st->verdict is OCB_V_NA). */
int ocb_ab_eval(const double *base, const double *cand, size_t rounds,
		const struct ocb_ab_opts *o, struct ocb_ab_stats *st);

#endif
