/* Tests of common/ocb_stats: known samples -> known statistics (hand-computed). */
#include <criterion/criterion.h>
#include <math.h>

#include "../common/ocb_stats.h"

#define EPS 1e-12

Test(stats, one_to_nine)
{
	double x[] = {5, 3, 9, 1, 7, 2, 8, 4, 6}; /* 1..9 shuffled */
	struct ocb_stats st;
	cr_assert_eq(ocb_stats_compute(x, 9, &st), 0);
	cr_expect_eq(st.n, 9);
	cr_expect_float_eq(st.min, 1.0, EPS);
	cr_expect_float_eq(st.median, 5.0, EPS);
	cr_expect_float_eq(st.mean, 5.0, EPS);
	cr_expect_float_eq(st.stddev, sqrt(60.0 / 8.0), EPS); /* sum (i-5)^2 = 60, n-1 = 8 */
	cr_expect_float_eq(st.mad, 2.0, EPS); /* |x-5| = 0,1,1,2,2,3,3,4,4 */
	/* n = 9: exact binomial, P(B<=1) = 10/512 <= 0.025 < P(B<=2) -> [x(2), x(8)] */
	cr_expect_float_eq(st.ci_low, 2.0, EPS);
	cr_expect_float_eq(st.ci_high, 8.0, EPS);
	cr_expect_eq(st.outliers, 0);
	cr_expect_eq(x[0], 5.0, "input not modified");
}

Test(stats, one_outlier)
{
	double x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 100};
	struct ocb_stats st;
	cr_assert_eq(ocb_stats_compute(x, 10, &st), 0);
	cr_expect_float_eq(st.median, 5.5, EPS);
	cr_expect_float_eq(st.mean, 14.5, EPS);
	cr_expect_float_eq(st.mad, 2.5, EPS); /* deviations .5 .5 1.5 1.5 2.5 | 2.5 ... 94.5 */
	/* n = 10: round(5 - 1.96 sqrt(10)/2) = 2 -> [x(2), x(9)] */
	cr_expect_float_eq(st.ci_low, 2.0, EPS);
	cr_expect_float_eq(st.ci_high, 9.0, EPS);
	/* 0.6745 * 94.5 / 2.5 = 25.5 > 3.5; the next worst 0.6745 * 4.5 / 2.5 = 1.2 */
	cr_expect_eq(st.outliers, 1);
	cr_expect_float_eq(st.min, 1.0, EPS);
}

Test(stats, ci_ranks)
{
	/* n < 6 and small exact cases give [min, max]; exact tables: n=9 -> 2, n=10 -> 2,
	 * n=20 -> 6, n=100 -> 40. */
	for (size_t n = 1; n <= 8; n++)
		cr_expect_eq(ocb_stats_ci_rank(n), 1, "n=%zu", n);
	cr_expect_eq(ocb_stats_ci_rank(9), 2);
	cr_expect_eq(ocb_stats_ci_rank(10), 2);
	cr_expect_eq(ocb_stats_ci_rank(20), 6);
	cr_expect_eq(ocb_stats_ci_rank(100), 40);
	/* Coverage of the rank rule is ~95% for every n >= 10: check it exactly. */
	for (size_t n = 10; n <= 200; n++) {
		size_t j = ocb_stats_ci_rank(n);
		double lp = -(double)n * log(2.0), tail = 0.0; /* P(B <= j-1) */
		for (size_t i = 0; i < j; i++)
			tail += exp(lp + lgamma((double)n + 1) - lgamma((double)i + 1) -
				    lgamma((double)(n - i) + 1));
		cr_expect(1.0 - 2.0 * tail > 0.93, "n=%zu coverage %g", n, 1.0 - 2.0 * tail);
	}
}

Test(stats, small_and_degenerate)
{
	struct ocb_stats st;
	double one = 3.0;
	cr_assert_eq(ocb_stats_compute(&one, 1, &st), 0);
	cr_expect_eq(st.n, 1);
	cr_expect_float_eq(st.median, 3.0, EPS);
	cr_expect(isnan(st.stddev), "stddev of one sample is undefined");
	cr_expect_float_eq(st.ci_low, 3.0, EPS);
	cr_expect_float_eq(st.ci_high, 3.0, EPS);

	double few[] = {4, 1, 3, 2};
	cr_assert_eq(ocb_stats_compute(few, 4, &st), 0);
	cr_expect_float_eq(st.median, 2.5, EPS);
	cr_expect_float_eq(st.ci_low, 1.0, EPS, "n < 6: [min, max]");
	cr_expect_float_eq(st.ci_high, 4.0, EPS);

	double same[] = {2, 2, 2, 2, 2, 2, 9};
	cr_assert_eq(ocb_stats_compute(same, 7, &st), 0);
	cr_expect_float_eq(st.mad, 0.0, EPS);
	cr_expect_eq(st.outliers, 0, "MAD 0: no outliers");

	cr_assert_eq(ocb_stats_compute(NULL, 0, &st), 0);
	cr_expect_eq(st.n, 0);
	cr_expect(isnan(st.median) && isnan(st.ci_low) && isnan(st.min));
	cr_expect(isnan(ocb_median(NULL, 0)));
	double even[] = {10, 1, 7, 3};
	cr_expect_float_eq(ocb_median(even, 4), 5.0, EPS);
	cr_expect_eq(even[0], 10.0);
}
