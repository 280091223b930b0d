/* Drift canaries: sizes follow the machine's caches, a checkpoint measures every canary,
 * and the drift verdict against values computed by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../collect/canary.h"
#include "../common/ocb_error.h"

#define MIB ((int64_t)1 << 20)

static struct ocb_machine machine(int64_t l2, int64_t l3, int cores)
{
	struct ocb_machine m;
	memset(&m, 0, sizeof m);
	m.l1d_bytes = 48 * 1024;
	m.l2_bytes = l2;
	m.l3_bytes = l3;
	m.cores = m.threads = cores;
	return m;
}

Test(canary, sizes_follow_the_caches)
{
	/* 2 MiB L2, 32 MiB L3, 2 cores: per-thread L3 band [4, 8] MiB (share 16 MiB, DRAM
	 * edge max(64 MiB, 4 x 32 MiB) = 128 MiB), middle sqrt(4 x 8) = 5.66 MiB per thread,
	 * 11.3 MiB for the team; DRAM 128 MiB; sgemm n = floor(sqrt(2 MiB / 12)) = 418 -> 416. */
	struct ocb_machine m = machine(2 * MIB, 32 * MIB, 2);
	struct ocb_canary_plan p;
	ocb_canary_plan(&m, &p);
	cr_assert_eq(p.threads, 2);
	double l3 = (double)p.l3_floats * 4;
	cr_assert(fabs(l3 - 2 * sqrt(32.0) * MIB) < 8192, "%g", l3);
	cr_assert_eq(p.dram_floats * 4, (size_t)(128 * MIB));
	cr_assert_eq(p.sgemm_n, 416);
	cr_assert_leq(3.0 * p.sgemm_n * p.sgemm_n * 4, (double)m.l2_bytes);
	/* Four times the caches: every working set grows (nothing is a constant). */
	struct ocb_machine big = machine(8 * MIB, 512 * MIB, 2);
	struct ocb_canary_plan q;
	ocb_canary_plan(&big, &q);
	cr_assert_gt(q.l3_floats, p.l3_floats);
	cr_assert_gt(q.dram_floats, p.dram_floats);
	cr_assert_gt(q.sgemm_n, p.sgemm_n);
	/* The L3 working set lies past the team's L2 and inside the L3; DRAM is at the band
	 * edge, 4 x the L3 up to 1 GiB (512 MiB -> 1 GiB). */
	cr_assert_gt(q.l3_floats * 4, (size_t)(2 * 8 * MIB));
	cr_assert_lt(q.l3_floats * 4, (size_t)(512 * MIB));
	cr_assert_geq(q.dram_floats * 4, (size_t)(4 * 256 * MIB));
}

Test(canary, a_checkpoint_measures_every_canary)
{
	/* A small machine keeps the buffers small (L3 512 KiB, DRAM 64 MiB). */
	struct ocb_machine m = machine(256 * 1024, 1 * MIB, 1);
	struct ocb_canaries c;
	double rate[OCB_CANARY_N];
	cr_assert_eq(ocb_canaries_init(&c, &m), OCB_OK);
	cr_assert_eq(ocb_canaries_measure(&c, rate), OCB_OK);
	for (int k = 0; k < OCB_CANARY_N; k++) {
		cr_assert_geq(c.reps[k], 1);
		cr_assert(isfinite(rate[k]) && rate[k] > 0, "%s: %g", ocb_canary_name[k], rate[k]);
	}
	ocb_canaries_release(&c);
	ocb_canaries_release(&c); /* twice is harmless */
}

Test(canary, drift_by_hand)
{
	/* Rates at start, mid, end. fma steady; l3 halves at the end (time ratio 50/25 = 2);
	 * dram steady; sgemm 40 -> 44 (time ratio 40/44 = 0.909, faster). Worst: l3. */
	double r[OCB_CANARY_NPOINT][OCB_CANARY_N] = {
		{100, 50, 10, 40}, {100, 50, 10, 40}, {100, 25, 10, 44}};
	struct ocb_canary_drift d;
	ocb_canary_drift(r, 0.10, &d);
	cr_assert_float_eq(d.ratio[OCB_CANARY_FMA], 1.0, 1e-12);
	cr_assert_float_eq(d.ratio[OCB_CANARY_L3], 2.0, 1e-12);
	cr_assert_float_eq(d.ratio[OCB_CANARY_SGEMM], 40.0 / 44.0, 1e-12);
	cr_assert_eq(d.worst_k, OCB_CANARY_L3);
	cr_assert(d.drifted);
	/* |log 2| = 0.693 < log(1 + 1.5) = 0.916: not beyond a 150% threshold. */
	ocb_canary_drift(r, 1.5, &d);
	cr_assert_not(d.drifted);
	/* A speed-up counts too: sgemm 40 -> 50 at mid is 1.25x faster (ratio 0.8). */
	double s[OCB_CANARY_NPOINT][OCB_CANARY_N] = {
		{100, 50, 10, 40}, {100, 50, 10, 50}, {100, 50, 10, 41}};
	ocb_canary_drift(s, 0.10, &d);
	cr_assert_eq(d.worst_k, OCB_CANARY_SGEMM);
	cr_assert_float_eq(d.ratio[OCB_CANARY_SGEMM], 0.8, 1e-12);
	cr_assert(d.drifted);
	ocb_canary_drift(s, 0.30, &d);
	cr_assert_not(d.drifted);
	/* Unmeasured canaries stay out of the verdict. */
	double u[OCB_CANARY_NPOINT][OCB_CANARY_N] = {
		{NAN, NAN, NAN, NAN}, {NAN, NAN, NAN, NAN}, {NAN, NAN, NAN, NAN}};
	ocb_canary_drift(u, 0.10, &d);
	cr_assert_eq(d.worst_k, -1);
	cr_assert_not(d.drifted);
	cr_assert(isnan(d.ratio[0]));
}

Test(canary, between_runs)
{
	double b[OCB_CANARY_N] = {100, 50, 10, 40}, c[OCB_CANARY_N] = {100, 40, 10, 50}, x[4];
	ocb_canary_between(b, c, x);
	cr_assert_float_eq(x[OCB_CANARY_L3], 1.25, 1e-12); /* CAND's machine read slower */
	cr_assert_float_eq(x[OCB_CANARY_SGEMM], 0.8, 1e-12);
}
