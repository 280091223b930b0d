/* The paired statistics of `ocbench ab` against values computed by hand: the
 * Wilcoxon signed-rank test (exact, ties, zeros, normal approximation), the bootstrap
 * CI of the median, the normal quantile, and the MDE / rounds formulas. */
#include <criterion/criterion.h>
#include <math.h>

#include "../common/ocb_error.h"
#include "../report/bootmed.h"
#include "../report/mde.h"
#include "../report/signrank.h"

Test(signrank, exact_no_ties)
{
	/* |d| ranks: 0.1 -> 1 (negative), 0.2 -> 2, 0.3 -> 3, 0.4 -> 4, 0.5 -> 5.
	 * W+ = 14, W- = 1. Of the 2^5 = 32 sign assignments, W- <= 1 for {} and {1}: 2,
	 * so p = 2 * 2/32 = 0.125. */
	double d[] = {0.5, -0.1, 0.3, 0.2, 0.4};
	struct ocb_signrank r;
	cr_assert_eq(ocb_signrank_test(d, 5, &r), OCB_OK);
	cr_assert(r.exact);
	cr_assert_eq(r.n, 5);
	cr_assert_float_eq(r.w_plus, 14.0, 1e-12);
	cr_assert_float_eq(r.w_minus, 1.0, 1e-12);
	cr_assert_float_eq(r.p, 0.125, 1e-12);
	/* Mirrored: same p. */
	for (int i = 0; i < 5; i++)
		d[i] = -d[i];
	cr_assert_eq(ocb_signrank_test(d, 5, &r), OCB_OK);
	cr_assert_float_eq(r.w_plus, 1.0, 1e-12);
	cr_assert_float_eq(r.p, 0.125, 1e-12);
}

Test(signrank, all_positive_six_is_the_smallest_significant)
{
	/* n = 6 all positive: W+ = 21, only 1 of 64 assignments reaches it: p = 2/64. */
	double d[] = {0.01, 0.02, 0.03, 0.04, 0.05, 0.06};
	struct ocb_signrank r;
	cr_assert_eq(ocb_signrank_test(d, 6, &r), OCB_OK);
	cr_assert_float_eq(r.p, 2.0 / 64.0, 1e-12);
	cr_assert_eq(ocb_signrank_test(d, 5, &r), OCB_OK);
	cr_assert_float_eq(r.p, 2.0 / 32.0, 1e-12);
}

Test(signrank, zero_differences_are_dropped)
{
	/* Two zeros plus the five of exact_no_ties: same W+, n = 5, p = 0.125. */
	double d[] = {0, 0.5, -0.1, 0, 0.3, 0.2, 0.4};
	struct ocb_signrank r;
	cr_assert_eq(ocb_signrank_test(d, 7, &r), OCB_OK);
	cr_assert_eq(r.n, 5);
	cr_assert_eq(r.zeros, 2);
	cr_assert_float_eq(r.w_plus, 14.0, 1e-12);
	cr_assert_float_eq(r.p, 0.125, 1e-12);
	/* Only zeros: nothing to test. */
	double z[] = {0, 0, 0};
	cr_assert_eq(ocb_signrank_test(z, 3, &r), OCB_OK);
	cr_assert_eq(r.n, 0);
	cr_assert(isnan(r.p));
}

Test(signrank, ties_exact)
{
	/* d = {1, -1, 2}: |d| mid-ranks 1.5, 1.5, 3; W+ = 4.5, W- = 1.5. Doubled ranks
	 * {3, 3, 6}; the 8 subset sums are 0 3 3 6 6 9 9 12, observed 9:
	 * P(>= 9) = 3/8, P(<= 9) = 7/8, p = 2 * 3/8 = 0.75. */
	double d[] = {1, -1, 2};
	struct ocb_signrank r;
	cr_assert_eq(ocb_signrank_test(d, 3, &r), OCB_OK);
	cr_assert(r.exact);
	cr_assert_float_eq(r.w_plus, 4.5, 1e-12);
	cr_assert_float_eq(r.w_minus, 1.5, 1e-12);
	cr_assert_float_eq(r.p, 0.75, 1e-12);
}

Test(signrank, normal_approximation_with_ties)
{
	/* n = 30: 12 x +0.01, 8 x -0.01, 10 x +0.03. |d| = 0.01 takes ranks 1..20 (mid
	 * 10.5), 0.03 ranks 21..30 (mid 25.5). W+ = 12 * 10.5 + 10 * 25.5 = 381, W- = 84.
	 * mu = 30 * 31 / 4 = 232.5; var = 30 * 31 * 61 / 24 - ((20^3 - 20) + (10^3 - 10)) / 48
	 * = 2363.75 - 186.875 = 2176.875; z = (381 - 232.5 - 0.5) / sqrt(var) = 3.17208612;
	 * p = erfc(z / sqrt 2) = 0.00151348118. */
	double d[30];
	for (int i = 0; i < 30; i++)
		d[i] = i < 12 ? 0.01 : i < 20 ? -0.01 : 0.03;
	struct ocb_signrank r;
	cr_assert_eq(ocb_signrank_test(d, 30, &r), OCB_OK);
	cr_assert_not(r.exact);
	cr_assert_float_eq(r.w_plus, 381.0, 1e-9);
	cr_assert_float_eq(r.w_minus, 84.0, 1e-9);
	cr_assert_float_eq(r.z, 3.1720861191653773, 1e-9);
	cr_assert_float_eq(r.p, 0.0015134811847876887, 1e-12);
}

Test(signrank, rejects_nan)
{
	double d[] = {0.1, NAN};
	struct ocb_signrank r;
	cr_assert_eq(ocb_signrank_test(d, 2, &r), OCB_EINVAL);
	cr_assert(isnan(r.p));
}

Test(bootmed, three_values_by_hand)
{
	/* Resample medians of {1, 2, 3}: P(1) = P(>= two 1s of 3 draws) = 3 (1/3)^2 (2/3)
	 * + (1/3)^3 = 7/27 = 0.259, P(3) = 7/27, P(2) = 13/27. At level 0.5 the ends are the
	 * 0.25 and 0.75 quantiles: 1 and 3; at level 0.4 (0.3, 0.7): 2 and 2. With 10^5
	 * resamples the count of 1s is 25926 +- 139 (1 sd), far from the 25000 boundary. */
	double x[] = {3, 1, 2}, lo, hi;
	cr_assert_eq(ocb_bootmed_ci(x, 3, 100000, 0.5, 42, &lo, &hi), OCB_OK);
	cr_assert_float_eq(lo, 1.0, 0);
	cr_assert_float_eq(hi, 3.0, 0);
	cr_assert_eq(ocb_bootmed_ci(x, 3, 100000, 0.4, 42, &lo, &hi), OCB_OK);
	cr_assert_float_eq(lo, 2.0, 0);
	cr_assert_float_eq(hi, 2.0, 0);
}

Test(bootmed, seeded_and_degenerate)
{
	double x[] = {0.1, 0.5, -0.2, 0.3, 0.0, 0.2, 0.4}, l1, h1, l2, h2;
	cr_assert_eq(ocb_bootmed_ci(x, 7, 2000, 0.95, 7, &l1, &h1), OCB_OK);
	cr_assert_eq(ocb_bootmed_ci(x, 7, 2000, 0.95, 7, &l2, &h2), OCB_OK);
	cr_assert_eq(l1, l2);
	cr_assert_eq(h1, h2);
	cr_assert(l1 <= 0.2 && 0.2 <= h1);
	cr_assert(l1 >= -0.2 && h1 <= 0.5);
	/* One value or all equal: the interval is that value. */
	double c[] = {0.25, 0.25, 0.25};
	cr_assert_eq(ocb_bootmed_ci(c, 3, 500, 0.95, 1, &l1, &h1), OCB_OK);
	cr_assert_float_eq(l1, 0.25, 0);
	cr_assert_float_eq(h1, 0.25, 0);
	cr_assert_eq(ocb_bootmed_ci(c, 0, 500, 0.95, 1, &l1, &h1), OCB_OK);
	cr_assert(isnan(l1) && isnan(h1));
	cr_assert_eq(ocb_bootmed_ci(c, 3, 500, 1.0, 1, &l1, &h1), OCB_EINVAL);
	cr_assert_eq(ocb_bootmed_ci(c, 3, 0, 0.9, 1, &l1, &h1), OCB_EINVAL);
}

Test(bootmed, ratio_scale)
{
	/* Log ratios of 1.0, 1.1, 1.2: the median ratio is 1.1; at level 0.5 the ends are
	 * the extreme ratios (as three_values_by_hand). */
	double d[] = {log(1.2), log(1.0), log(1.1)}, med, lo, hi;
	cr_assert_eq(ocb_bootmed_ratio_ci(d, 3, 100000, 0.5, 3, &med, &lo, &hi), OCB_OK);
	cr_assert_float_eq(med, 1.1, 1e-12);
	cr_assert_float_eq(lo, 1.0, 1e-12);
	cr_assert_float_eq(hi, 1.2, 1e-12);
}

Test(mde, normal_quantile)
{
	cr_assert_float_eq(ocb_norm_quantile(0.975), 1.9599639845400536, 1e-12);
	cr_assert_float_eq(ocb_norm_quantile(0.8), 0.8416212335729144, 1e-12);
	cr_assert_float_eq(ocb_norm_quantile(0.5), 0.0, 1e-14);
	cr_assert_float_eq(ocb_norm_quantile(1e-5), -4.2648907939228256, 1e-10);
	cr_assert_float_eq(ocb_norm_quantile(1 - 1e-5), 4.2648907939228256, 1e-10);
	cr_assert(isnan(ocb_norm_quantile(0)));
	cr_assert(isnan(ocb_norm_quantile(1)));
	cr_assert_float_eq(ocb_mde_zsum(0.05, 0.8), 2.801585218112968, 1e-12);
}

Test(mde, paired_and_sequential_by_hand)
{
	/* Paired: var_d = 0.05^2, 25 rounds: se = sqrt(0.0025 / 25 / (3/pi)) = 0.0102332671;
	 * MDE = expm1(2.80158522 * se) = 0.0290842919. */
	double se = ocb_mde_se_paired(0.0025, 25);
	cr_assert_float_eq(se, 0.010233267079464885, 1e-12);
	cr_assert_float_eq(ocb_mde_rel(se, 0.05, 0.8), 0.029084291858164406, 1e-12);
	/* Sequential: var_w = 0.02^2 per sample, 10 + 10 samples, var_b = 0.1^2:
	 * se = sqrt(2 * 0.01 + 0.0004 * 0.2) = 0.1417039167; MDE = 0.4873493832. The run
	 * to run drift dominates: 10x the samples would barely change it. */
	se = ocb_mde_se_sequential(0.0004, 10, 10, 0.01);
	cr_assert_float_eq(se, 0.14170391667134682, 1e-12);
	cr_assert_float_eq(ocb_mde_rel(se, 0.05, 0.8), 0.48734938316391485, 1e-12);
	/* Unknown between-run variance: a lower bound, var_b taken as 0. */
	cr_assert_float_eq(ocb_mde_se_sequential(0.0004, 10, 10, NAN), sqrt(0.0004 * 0.2), 1e-15);
	cr_assert(isnan(ocb_mde_se_paired(0.0025, 0)));
}

Test(mde, rounds_for_a_target)
{
	/* R >= 2.80158522^2 * 0.0025 / (3/pi) / log(1.03)^2 = 23.518 -> 24. */
	cr_assert_eq(ocb_mde_rounds(0.03, 0.0025, 0.05, 0.8), 24);
	cr_assert(ocb_mde_rel(ocb_mde_se_paired(0.0025, 24), 0.05, 0.8) <= 0.03);
	cr_assert(ocb_mde_rel(ocb_mde_se_paired(0.0025, 23), 0.05, 0.8) > 0.03);
	/* A quiet case still needs the rounds a rank test can be significant with. */
	cr_assert_eq(ocb_mde_rounds(0.03, 1e-8, 0.05, 0.8), 6);
	cr_assert_eq(ocb_mde_rounds(0.03, 1e-8, 0.01, 0.8), 8); /* 2/2^7 = 0.0156 >= 0.01 */
	cr_assert_eq(ocb_mde_min_rounds(0.05), 6);
	cr_assert_eq(ocb_mde_min_rounds(0.001), 11); /* 2/2^10 = 0.00195, 2/2^11 < 0.001 */
	cr_assert_eq(ocb_mde_rounds(0, 0.0025, 0.05, 0.8), 0);
	cr_assert_eq(ocb_mde_rounds(0.03, NAN, 0.05, 0.8), 0);
}

Test(mde, variances_by_hand)
{
	/* Robust: d = {1, 2, 3, 4, 100}: median 3, |d - 3| = {2, 1, 0, 1, 97}, MAD 1:
	 * var = 1.4826^2 = 2.19810276; the outlier does not count. */
	double d[] = {1, 2, 3, 4, 100};
	cr_assert_float_eq(ocb_mde_var_robust(d, 5), 1.4826 * 1.4826, 1e-12);
	double x[] = {exp(1), exp(2), exp(3), exp(4), exp(100)};
	cr_assert_float_eq(ocb_mde_var_log(x, 5), 1.4826 * 1.4826, 1e-9);
	cr_assert(isnan(ocb_mde_var_log(x, 1)));
	/* Split: lb = {0, 1, 2}, lc = {0.1, 1.0, 2.2}: d = {0.1, 0, 0.2}, var(d) = 0.01,
	 * var_w = 0.005; round means {0.05, 1.0, 2.1}, var = 2.105 / 2 = 1.0525,
	 * var_b = 1.0525 - 0.0025 = 1.05. */
	double lb[] = {0, 1, 2}, lc[] = {0.1, 1.0, 2.2}, vw, vb;
	ocb_mde_split(lb, lc, 3, &vw, &vb);
	cr_assert_float_eq(vw, 0.005, 1e-12);
	cr_assert_float_eq(vb, 1.05, 1e-12);
	ocb_mde_split(lb, lc, 2, &vw, &vb);
	cr_assert(isnan(vw) && isnan(vb));
}

/* ---- one case's A/B verdict from paired per-round medians ---- */
#include "../report/ab_verdict.h"

/* Host drift per round: the whole machine 30% slower in some rounds, 20% faster in
 * others; both builds see it inside a round. */
static const double drift[10] = {1.0, 1.3, 0.8, 1.1, 0.9, 1.25, 0.85, 1.0, 1.2, 0.95};

Test(ab_verdict, drift_cancels_and_a_5pct_slowdown_is_seen)
{
	/* cand = base x 1.05 x (1 +- 0.5%): every d_r > 0, so W+ = 55 = n(n+1)/2 and the
	 * exact p = 2 / 2^10 = 0.00195 < 0.01; the median ratio is ~1.05 >= 1.02. */
	double b[10], c[10];
	for (int r = 0; r < 10; r++) {
		b[r] = 0.01 * drift[r];
		c[r] = b[r] * 1.05 * (r % 2 ? 1.005 : 0.995);
	}
	struct ocb_ab_opts o;
	struct ocb_ab_stats st;
	ocb_ab_defaults(&o);
	cr_assert_eq(ocb_ab_eval(b, c, 10, &o, &st), OCB_OK);
	cr_assert_eq(st.n, 10);
	cr_assert_float_eq(st.p, 2.0 / 1024.0, 1e-12);
	cr_assert_float_eq(st.w_plus, 55.0, 1e-12);
	cr_assert(fabs(st.ratio - 1.05) < 0.006, "%g", st.ratio);
	cr_assert_gt(st.lo, 1.0);
	cr_assert_eq(st.verdict, OCB_V_SLOWER);
	/* Interleaving removed the drift: the paired MDE is ~1%, a sequential pair of runs
	 * with this drift could not have seen less than ~50%. */
	cr_assert_lt(st.mde, 0.02);
	cr_assert_gt(st.mde_seq, 0.3);
	cr_assert_gt(st.var_b, 100 * st.var_w);
}

Test(ab_verdict, same_build_and_small_shift)
{
	double b[10], c[10];
	struct ocb_ab_opts o;
	struct ocb_ab_stats st;
	ocb_ab_defaults(&o);
	/* Identical medians: every d is 0 (dropped), p = 1, same, MDE 0. */
	for (int r = 0; r < 10; r++)
		b[r] = c[r] = 0.01 * drift[r];
	cr_assert_eq(ocb_ab_eval(b, c, 10, &o, &st), OCB_OK);
	cr_assert_eq(st.verdict, OCB_V_SAME);
	cr_assert_float_eq(st.p, 1.0, 0);
	cr_assert_float_eq(st.ratio, 1.0, 1e-12);
	cr_assert_float_eq(st.mde, 0.0, 1e-12);
	cr_assert_not(st.mde_warn);
	/* A consistent 1% shift is significant but under the 2% threshold: noise. */
	for (int r = 0; r < 10; r++)
		c[r] = b[r] * 1.01 * (r % 2 ? 1.001 : 0.999);
	cr_assert_eq(ocb_ab_eval(b, c, 10, &o, &st), OCB_OK);
	cr_assert_eq(st.verdict, OCB_V_NOISE);
	/* Alternating ~+-10%: |d_r| = log(1.1 + 0.001 r) ranks r + 1, the odd rounds up:
	 * W+ = 2 + 4 + 6 + 8 + 10 = 30 against mu = 27.5, p large; the MDE is far above the
	 * threshold: same, with the warning. */
	for (int r = 0; r < 10; r++)
		c[r] = b[r] * (r % 2 ? 1.1 + 0.001 * r : 1 / (1.1 + 0.001 * r));
	cr_assert_eq(ocb_ab_eval(b, c, 10, &o, &st), OCB_OK);
	cr_assert_eq(st.verdict, OCB_V_SAME);
	cr_assert_float_eq(st.w_plus, 30.0, 1e-12);
	cr_assert_gt(st.p, 0.5);
	cr_assert_gt(st.mde, o.threshold);
	cr_assert(st.mde_warn);
}

Test(ab_verdict, missing_rounds_and_too_few)
{
	double b[8] = {1, 1, NAN, 1, 1, 1, 1, 1}, c[8] = {1.1, 1.1, 1.1, 1.1, 1.1, 0, 1.1, 1.1};
	struct ocb_ab_opts o;
	struct ocb_ab_stats st;
	ocb_ab_defaults(&o);
	cr_assert_eq(ocb_ab_eval(b, c, 8, &o, &st), OCB_OK);
	cr_assert_eq(st.n, 6); /* the NaN base and the 0 cand rounds are dropped */
	cr_assert_eq(ocb_ab_eval(b, c, 5, &o, &st), OCB_OK);
	cr_assert_eq(st.n, 4);
	cr_assert_eq(st.verdict, OCB_V_NA);
	cr_assert(isnan(st.p));
}
