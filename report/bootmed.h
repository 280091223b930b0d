/* bootmed: a percentile bootstrap confidence interval of the median (Efron 1979) with an
 * explicit seed. `ocbench ab` applies it to the per-round log ratios of one case and
 * reports exp() of the ends: a CI of the median cand/base ratio (for an even count, the
 * median of logs is the mean of the middle two, i.e. their geometric mean as a ratio).
 *
 * Each of `resamples` resamples draws n values with replacement (common/ocb_rng, seeded
 * with `seed`: same seed, same interval) and takes its median; the interval is the
 * (1-level)/2 and (1+level)/2 quantiles of those medians (the order statistics at
 * floor(q * B), clamped to [0, B-1]). Pure: no global state, no allocation escapes. */
#ifndef OCB_BOOTMED_H
#define OCB_BOOTMED_H

#include <stddef.h>
#include <stdint.h>

/* CI of the median of x[0..n) at confidence `level` in (0, 1). n == 0 gives NaNs and
 * OCB_OK; NaN in x, level outside (0, 1) or resamples == 0 give OCB_EINVAL; OCB_ENOMEM. */
int ocb_bootmed_ci(const double *x, size_t n, size_t resamples, double level, uint64_t seed,
		   double *lo, double *hi);

/* The same on log ratios d[0..n): *lo, *hi are ratios exp(.), *median exp(median d). */
int ocb_bootmed_ratio_ci(const double *d, size_t n, size_t resamples, double level,
			 uint64_t seed, double *median, double *lo, double *hi);

#endif
