/* Mann-Whitney U against hand-computed values (REFERENCE.md §3). */
#include <criterion/criterion.h>
#include <math.h>

#include "../common/ocb_error.h"
#include "../report/mwu.h"

Test(mwu, separated_samples_exact)
{
	/* All x below all y: U_x = 0; exact two-sided p = 2 / C(10,5) = 2/252. */
	double x[] = {1, 2, 3, 4, 5}, y[] = {6, 7, 8, 9, 10};
	struct ocb_mwu r;
	cr_assert_eq(ocb_mwu_test(x, 5, y, 5, &r), OCB_OK);
	cr_assert(r.exact);
	cr_assert_float_eq(r.u, 0.0, 1e-12);
	cr_assert_float_eq(r.p, 2.0 / 252.0, 1e-12);
	/* Swapped: U = 25, same p. */
	cr_assert_eq(ocb_mwu_test(y, 5, x, 5, &r), OCB_OK);
	cr_assert_float_eq(r.u, 25.0, 1e-12);
	cr_assert_float_eq(r.p, 2.0 / 252.0, 1e-12);
}

Test(mwu, interleaved_exact)
{
	/* x = {1,3,5}, y = {2,4,6,7}: U_x = #(x > y) = 0 + 1 + 2 = 3. Under H0 the number
	 * of arrangements with U <= 3 is the partitions of 0..3 into <= 3 parts <= 4:
	 * 1 + 1 + 2 + 3 = 7 of C(7,3) = 35, so p = 2 * 7/35 = 0.4. */
	double x[] = {5, 1, 3}, y[] = {7, 2, 6, 4};
	struct ocb_mwu r;
	cr_assert_eq(ocb_mwu_test(x, 3, y, 4, &r), OCB_OK);
	cr_assert_float_eq(r.u, 3.0, 1e-12);
	cr_assert_float_eq(r.p, 0.4, 1e-12);
}

Test(mwu, ties_normal_approximation)
{
	/* x = {1,2,2,3}, y = {2,3,4,5}. Mid-ranks: 1 -> 1, the three 2s -> 3, the two
	 * 3s -> 5.5, 4 -> 7, 5 -> 8. R_x = 1 + 3 + 3 + 5.5 = 12.5, U_x = 12.5 - 10 = 2.5.
	 * mu = 8; ties t = 3, 2: sum(t^3 - t) = 24 + 6 = 30;
	 * var = 16/12 * (9 - 30/56) = 11.2857142857; z = -(5.5 - 0.5)/sqrt(var)
	 * = -1.48835139; p = erfc(1.48835139/sqrt 2) = 0.136658248. */
	double x[] = {1, 2, 2, 3}, y[] = {2, 3, 4, 5};
	struct ocb_mwu r;
	cr_assert_eq(ocb_mwu_test(x, 4, y, 4, &r), OCB_OK);
	cr_assert_not(r.exact);
	cr_assert_float_eq(r.u, 2.5, 1e-12);
	cr_assert_float_eq(r.z, -1.4883513944689681, 1e-9);
	cr_assert_float_eq(r.p, 0.13665824773814753, 1e-9);
}

Test(mwu, large_samples_shifted_and_equal)
{
	/* n = 30 each (normal approximation): a clear shift is significant, identical
	 * samples are not (U = n^2/2, p = 1). */
	double x[30], y[30];
	for (int i = 0; i < 30; i++) {
		x[i] = 1.0 + 0.001 * i;
		y[i] = 1.05 + 0.001 * i;
	}
	struct ocb_mwu r;
	cr_assert_eq(ocb_mwu_test(x, 30, y, 30, &r), OCB_OK);
	cr_assert_not(r.exact);
	cr_assert_lt(r.p, 1e-6);
	cr_assert_eq(ocb_mwu_test(x, 30, x, 30, &r), OCB_OK);
	cr_assert_float_eq(r.u, 450.0, 1e-9);
	cr_assert_float_eq(r.p, 1.0, 1e-12);
}

Test(mwu, empty_and_nan)
{
	double x[] = {1, NAN}, y[] = {2};
	struct ocb_mwu r;
	cr_assert_eq(ocb_mwu_test(x, 0, y, 1, &r), OCB_OK);
	cr_assert(isnan(r.p));
	cr_assert_eq(ocb_mwu_test(x, 2, y, 1, &r), OCB_EINVAL);
}
