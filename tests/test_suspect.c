/* suspect: each anomaly rule of collect/suspect.h, on hand-made results. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../collect/suspect.h"

static struct ocb_result ok_result(int threads, double median, double lo, double hi)
{
	struct ocb_result r;
	memset(&r, 0, sizeof r);
	snprintf(r.status, sizeof r.status, "ok");
	r.threads = threads;
	r.st.n = 20;
	r.st.median = median;
	r.st.ci_low = lo;
	r.st.ci_high = hi;
	r.bound_frac = NAN;
	return r;
}

Test(suspect, ci_beyond_three_times_the_target)
{
	static const struct { double lo, hi, target; int flagged; } tab[] = {
		{0.95, 1.05, 0.02, 0}, /* +-5% <= 6% */
		{0.93, 1.07, 0.02, 1}, /* +-7% > 6% */
		{0.93, 1.07, 0.05, 0}, /* a looser target */
		{-1.298, 3.298, 0.02, 1}, /* +-229.8% (q2_g GEMV, seen as ok) */
	};
	for (size_t i = 0; i < sizeof tab / sizeof *tab; i++) {
		struct ocb_result r = ok_result(1, 1.0, tab[i].lo, tab[i].hi);
		cr_expect_eq(ocb_suspect_check(&r, tab[i].target, 0), tab[i].flagged, "case %zu", i);
		cr_expect_eq(strstr(r.suspect, "CI +-") != NULL, tab[i].flagged, "%s", r.suspect);
	}
	struct ocb_result r = ok_result(1, 1.0, 0.9, 1.1);
	r.st.n = 1; /* one sample (a workload): no CI to judge */
	cr_expect_eq(ocb_suspect_check(&r, 0.02, 0), 0);
}

/* A wide CI of merged passes quotes the range of the passes' own medians (here a host
 * that halved its speed for one pass); a single pass, or a tight CI, quotes nothing. */
Test(suspect, ci_of_passes_quotes_their_medians)
{
	struct ocb_result r = ok_result(2, 2.0e-3, 1.0e-3, 3.0e-3);
	r.passes = 3, r.pass_lo = 1.8e-3, r.pass_hi = 4.1e-3;
	cr_expect_eq(ocb_suspect_check(&r, 0.02, 0), 1);
	cr_expect(strstr(r.suspect, "CI +-50.0% > 3x the 2% target (3 passes' medians 1.8 ms to "
				    "4.1 ms, x2.28)"), "%s", r.suspect);
	r = ok_result(2, 2.0e-3, 1.0e-3, 3.0e-3);
	r.passes = 1, r.pass_lo = r.pass_hi = 2.0e-3;
	cr_expect_eq(ocb_suspect_check(&r, 0.02, 0), 1);
	cr_expect_null(strstr(r.suspect, "passes"), "%s", r.suspect);
	r = ok_result(2, 2.0e-3, 1.99e-3, 2.01e-3);
	r.passes = 3, r.pass_lo = 1.8e-3, r.pass_hi = 4.1e-3;
	cr_expect_eq(ocb_suspect_check(&r, 0.02, 0), 0);
	cr_expect_str_empty(r.suspect);
}

Test(suspect, fraction_above_105_percent_of_the_roof)
{
	static const struct { double frac; int flagged; } tab[] = {
		{0.5, 0}, {1.0, 0}, {1.05, 0}, {1.051, 1}, {2.234, 1}, {NAN, 0}, {INFINITY, 0},
	};
	for (size_t i = 0; i < sizeof tab / sizeof *tab; i++) {
		struct ocb_result r = ok_result(2, 1.0, 1.0, 1.0);
		r.bound_frac = tab[i].frac;
		snprintf(r.bound, sizeof r.bound, "roofline:flops_fp32,bw_dram");
		cr_expect_eq(ocb_suspect_check(&r, 0.02, 0), tab[i].flagged, "frac %g", tab[i].frac);
		if (tab[i].flagged)
			cr_expect(strstr(r.suspect, "of its roof roofline:flops_fp32,bw_dram"), "%s",
				  r.suspect);
	}
}

/* The set-up's own timing of the same kernel (the GEMV planner's median): more than 1.5x
 * off it either way is flagged; no reference, no rule */
Test(suspect, median_far_from_the_setup_timing)
{
	static const struct { double median, ref; int flagged; } tab[] = {
		{2.0e-3, 2.0e-3, 0}, {2.9e-3, 2.0e-3, 0}, {3.1e-3, 2.0e-3, 1},
		{8.19e-3, 4.6e-3, 1}, /* q4_1 16384^2, 1 thread, Zen 5 VM, fresh root 0d0c330 */
		{1.4e-3, 2.0e-3, 0}, {1.2e-3, 2.0e-3, 1}, {5e-3, 0, 0}, {5e-3, NAN, 0},
	};
	for (size_t i = 0; i < sizeof tab / sizeof *tab; i++) {
		struct ocb_result r = ok_result(1, tab[i].median, tab[i].median, tab[i].median);
		r.ref_s = tab[i].ref;
		cr_expect_eq(ocb_suspect_check(&r, 0.02, 0), tab[i].flagged, "case %zu: %s", i,
			     r.suspect);
		cr_expect_eq(strstr(r.suspect, "its set-up timed for the same kernel") != NULL,
			     tab[i].flagged, "case %zu: %s", i, r.suspect);
	}
}

Test(suspect, host_busy)
{
	static const struct { int threads, ncpus; double others, wall; int flagged; } tab[] = {
		{2, 2, 1.0, 1.0, 1},  /* one other CPU's worth while 2 threads need both */
		{2, 2, 0.3, 1.0, 0},  /* noise */
		{1, 2, 0.9, 1.0, 0},  /* 1 thread + 0.9 fits on 2 CPUs */
		{1, 2, 1.5, 1.0, 1},
		{2, 2, 1.0, 0.0, 0},  /* no timed wall time: unknown */
		{2, 2, 0.01, 0.01, 0}, /* 10 ms: below the ticks' resolution, not judged */
		{2, 2, 0.5, 0.1, 1},  /* 5 CPUs' worth is capped at the machine's 2 */
		{2, 0, 1.0, 1.0, 0},  /* CPU count unknown: rule off */
		{4, 8, 2.0, 1.0, 0},
	};
	for (size_t i = 0; i < sizeof tab / sizeof *tab; i++) {
		struct ocb_result r = ok_result(tab[i].threads, 1.0, 1.0, 1.0);
		r.host_others_s = tab[i].others;
		r.host_wall_s = tab[i].wall;
		cr_expect_eq(ocb_suspect_check(&r, 0.02, tab[i].ncpus), tab[i].flagged, "case %zu", i);
		cr_expect_eq(strstr(r.suspect, "host busy") != NULL, tab[i].flagged, "%s", r.suspect);
	}
}

Test(suspect, n_threads_slower_than_one)
{
	struct ocb_result r1 = ok_result(1, 1.05e-3, 1.0e-3, 1.1e-3);
	struct ocb_result r2 = ok_result(2, 7.99e-3, 7.9e-3, 8.1e-3);
	cr_expect_eq(ocb_suspect_scaling(&r2, &r1), 1);
	cr_expect(strstr(r2.suspect, "2 threads slower than 1 (7.99 ms vs 1.05 ms, x7.61)"), "%s",
		  r2.suspect);
	struct ocb_result fast = ok_result(2, 0.6e-3, 0.5e-3, 0.7e-3);
	cr_expect_eq(ocb_suspect_scaling(&fast, &r1), 0);
	cr_expect_str_eq(fast.suspect, "");
	struct ocb_result same = ok_result(2, 1.05e-3, 1e-3, 1.1e-3);
	cr_expect_eq(ocb_suspect_scaling(&same, &r1), 0, "equal is not worse");
	struct ocb_result failed = ok_result(2, 9e-3, 9e-3, 9e-3);
	snprintf(failed.status, sizeof failed.status, "failed");
	cr_expect_eq(ocb_suspect_scaling(&failed, &r1), 0);
	struct ocb_result wrong = ok_result(1, 9e-3, 9e-3, 9e-3); /* not an N-thread result */
	cr_expect_eq(ocb_suspect_scaling(&wrong, &r1), 0);
	/* reasons accumulate, "; "-separated */
	struct ocb_result both = ok_result(2, 7.99e-3, 1e-3, 20e-3);
	cr_expect_eq(ocb_suspect_check(&both, 0.02, 0), 1);
	cr_expect_eq(ocb_suspect_scaling(&both, &r1), 1);
	cr_expect(strstr(both.suspect, "target; 2 threads slower"), "%s", both.suspect);
	/* a kernel that ran the 2-thread case on one thread, slower beyond both CIs: still
	 * flagged, and said */
	struct ocb_result one = ok_result(2, 1.155e-3, 1.12e-3, 1.18e-3);
	one.team = 1;
	cr_expect_eq(ocb_suspect_scaling(&one, &r1), 1);
	cr_expect(strstr(one.suspect, "x1.10): the kernel ran it on 1 thread, too small a product "
			 "to split"), "%s", one.suspect);
	cr_expect(!strstr(r2.suspect, "the kernel ran"), "%s", r2.suspect);
	/* on one thread, within the 1-thread case's CI: the same work timed twice, not worse;
	 * the same medians on two real threads are flagged */
	struct ocb_result tie = ok_result(2, 1.07e-3, 1.06e-3, 1.08e-3);
	tie.team = 1;
	cr_expect_eq(ocb_suspect_scaling(&tie, &r1), 0, "%s", tie.suspect);
	cr_expect_str_eq(tie.suspect, "");
	struct ocb_result two = ok_result(2, 1.07e-3, 1.06e-3, 1.08e-3);
	cr_expect_eq(ocb_suspect_scaling(&two, &r1), 1);
}

Test(suspect, failed_results_are_not_flagged)
{
	struct ocb_result r = ok_result(2, 1.0, 0.1, 9.0);
	snprintf(r.status, sizeof r.status, "failed");
	r.bound_frac = 3;
	cr_expect_eq(ocb_suspect_check(&r, 0.02, 2), 0);
	cr_expect_str_eq(r.suspect, "");
}

Test(suspect, long_reasons_are_cut_not_overflowed)
{
	struct ocb_result r = ok_result(2, 1.0, 1.0, 1.0);
	for (int i = 0; i < 40; i++)
		ocb_suspect_add(&r, "reason number %d is long enough", i);
	cr_expect_lt(strlen(r.suspect), sizeof r.suspect);
	cr_expect(strncmp(r.suspect, "reason number 0 is long enough; reason number 1", 47) == 0);
}
