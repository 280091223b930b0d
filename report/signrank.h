/* signrank: the Wilcoxon signed-rank test (Wilcoxon 1945) on paired differences,
 * two-sided. `ocbench ab` feeds it the per-round log ratios d_r = log(cand_r / base_r)
 * of one case: under "no change" they are symmetric about 0.
 *
 * Zero differences are dropped before ranking (Wilcoxon's own rule; n counts the rest).
 * |d| are ranked with mid-ranks for ties; W+ is the sum of the ranks of positive d.
 * p-value:
 *   - exact when n <= OCB_SIGNRANK_EXACT_MAX: the distribution of W+ over the 2^n sign
 *     assignments of the observed ranks (doubled mid-ranks are integers, so ties are
 *     counted exactly too; the permutation distribution given the ranks);
 *   - otherwise the normal approximation with tie correction,
 *     mu = n (n + 1) / 4, sigma^2 = n (n + 1) (2n + 1) / 24 - sum(t^3 - t) / 48,
 *     and a continuity correction of 1/2.
 * Pure functions, no allocation escapes. */
#ifndef OCB_SIGNRANK_H
#define OCB_SIGNRANK_H

#include <stddef.h>

#define OCB_SIGNRANK_EXACT_MAX 25

struct ocb_signrank {
	double w_plus;  /* sum of ranks of positive differences */
	double w_minus; /* sum of ranks of negative differences */
	size_t n;       /* differences used (non-zero) */
	size_t zeros;   /* zero differences dropped */
	double z;       /* normal score, sign of W+ - mu (0 when exact) */
	double p;       /* two-sided p-value in [0, 1]; NaN when n == 0 */
	int exact;      /* 1 if p is exact */
};

/* Tests d[0..nd). NaN differences are not allowed (OCB_EINVAL). Returns OCB_OK,
 * OCB_EINVAL or OCB_ENOMEM; *out is always filled (p = NaN on failure or n == 0). */
int ocb_signrank_test(const double *d, size_t nd, struct ocb_signrank *out);

#endif
