/* mde: the minimal detectable effect of a comparison (the smallest relative change it
 * would detect at two-sided level alpha with the given power) and the number of A/B
 * rounds that reach a target MDE. All on log times: a change by factor (1 + e) is a
 * shift of log(1 + e); an MDE m on the log scale is the relative change expm1(m).
 *
 * Model of one case's log time: y = mu_build + b + e, b the state of the machine when
 * the measurement ran (between-run variance var_b; shared by both builds inside one A/B
 * round, not by two sequential runs), e the measurement's own noise (within-run
 * variance var_w per sample).
 *   sequential (one run per side, r_b and r_c samples):
 *       se^2 = 2 var_b + var_w (1/r_b + 1/r_c)
 *   paired A/B rounds (b cancels in d_r = y_cand,r - y_base,r), R rounds:
 *       se^2 = var_d / R / ARE,  var_d = 2 var_w (per-round median noise)
 * where ARE = 3/pi is the efficiency of the signed-rank test relative to the t test on
 * normal data (Hodges & Lehmann 1956): the rank test needs pi/3 times the rounds.
 *   MDE = (z_{1-alpha/2} + z_{power}) * se          (normal power approximation)
 * Pure functions. */
#ifndef OCB_MDE_H
#define OCB_MDE_H

#include <stddef.h>

#define OCB_MDE_POWER 0.80
/* The asymptotic relative efficiency of the signed-rank test to the t test. */
#define OCB_MDE_SIGNRANK_ARE (3.0 / 3.14159265358979323846)
/* The fewest rounds at which the exact two-sided signed-rank test can reach p < 0.05
 * (n = 6: p = 2 / 2^6 = 0.031; n = 5: 0.0625); below it no verdict is given. */
#define OCB_MDE_MIN_ROUNDS 6

/* The fewest rounds at which it can reach p < alpha: the smallest n with 2 / 2^n < alpha
 * (0.05 -> 6, 0.01 -> 8), at least OCB_MDE_MIN_ROUNDS. */
size_t ocb_mde_min_rounds(double alpha);

/* Standard normal quantile: x with Phi(x) = p, p in (0, 1) (Acklam's rational
 * approximation refined by one Halley step on erfc; |error| < 1e-12). NaN outside. */
double ocb_norm_quantile(double p);

/* z_{1-alpha/2} + z_{power}: 2.8016 for alpha 0.05 and power 0.8. */
double ocb_mde_zsum(double alpha, double power);

/* Relative MDE expm1(zsum * se); NaN when se is NaN or negative. */
double ocb_mde_rel(double se_log, double alpha, double power);

/* se of the sequential comparison (formula above); var_b may be NaN when unknown (no
 * history): it is then taken as 0 and the MDE is a lower bound. */
double ocb_mde_se_sequential(double var_w, size_t reps_base, size_t reps_cand, double var_b);

/* se of the paired comparison over `rounds` rounds with per-round difference variance
 * var_d (formula above). NaN when rounds == 0. */
double ocb_mde_se_paired(double var_d, size_t rounds);

/* Rounds for a target relative MDE (e.g. 0.03) from a pilot's var_d: the smallest R with
 * ocb_mde_rel(ocb_mde_se_paired(var_d, R)) <= target, at least ocb_mde_min_rounds(alpha).
 * 0 when target <= 0 or var_d is NaN. */
size_t ocb_mde_rounds(double target_rel, double var_d, double alpha, double power);

/* Robust variance of log(x[0..n)): (1.4826 MAD(log x))^2 (the normal-consistent MAD,
 * so single outliers do not inflate it). NaN for n < 2 or x <= 0. */
double ocb_mde_var_log(const double *x, size_t n);

/* Robust variance of d[0..n) itself (already logs), as above. */
double ocb_mde_var_robust(const double *d, size_t n);

/* Splits paired per-round log times lb[r], lc[r] (r < n, n >= 3) into the within-run
 * variance var_w = var(lc - lb) / 2 and the between-round variance
 * var_b = max(0, var((lb + lc) / 2) - var_w / 2) (plain sample variances). NaNs when
 * n < 3. */
void ocb_mde_split(const double *lb, const double *lc, size_t n, double *var_w, double *var_b);

#endif
