/* roofline: the one roofline module (common/ocb_roofline.h): thread matching, memory level,
 * bound names, attainable and fraction; and that the harness (collect/) and the report
 * (report/) give identical bound and fraction for the same result, as both call it. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../collect/ceilings.h"
#include "../collect/harness.h"
#include "../common/ocb_roofline.h"
#include "../report/rdata.h"

#define KIB 1024.0
#define MIB (1024.0 * 1024.0)

static struct ocb_roof_ceil rc(const char *k, int t, double v)
{
	return (struct ocb_roof_ceil){k, t, v};
}

Test(roofline, thread_rule_exact_then_next_up_then_largest_below)
{
	struct ocb_roof_ceil c[] = {rc("bw_dram", 1, 10), rc("bw_dram", 2, 20),
				    rc("bw_dram", 8, 40), rc("bw_dram", 4, NAN),
				    rc("bw_dram", 3, 0), rc("bw_l3", 16, 99)};
	size_t n = sizeof c / sizeof *c;
	static const struct { int threads; double want; } tab[] = {
		{1, 10}, {2, 20}, {3, 40}, /* 3: no usable value at 3 (0), next up is 8 */
		{4, 40},                   /* NaN at 4 ignored: next up 8 */
		{8, 40}, {9, 40}, {64, 40}, /* above every count: the largest below */
		{0, 10},                    /* below every count: the smallest above */
	};
	for (size_t i = 0; i < sizeof tab / sizeof *tab; i++) {
		const struct ocb_roof_ceil *f = ocb_roof_find(c, n, "bw_dram", tab[i].threads);
		cr_assert_not_null(f, "threads %d", tab[i].threads);
		cr_expect_eq(f->value, tab[i].want, "threads %d: %g", tab[i].threads, f->value);
	}
	cr_expect_null(ocb_roof_find(c, n, "bw_l1", 1));
	cr_expect_null(ocb_roof_find(c, n, "bw_dram_triad", 1)); /* kinds match whole */
	cr_expect_null(ocb_roof_find(NULL, 0, "bw_dram", 1));
}

/* Working sets just below / above each level's capacity (L1d; L1d + L2 per core; L3 plus
 * the private caches of the cores in use), 1 and 2 threads, on a Zen 3 VM (32 KiB L1d,
 * 512 KiB L2, 32 MiB L3) and on this Xeon VM (48 KiB, 2 MiB, 480 MiB). */
/* The bytes a DRAM-level case cycles through: 4 x the last level per thread (measured
 * where known, else the reported L3), at most 1 GiB per thread */
Test(roofline, dram_cycle_four_last_levels_per_thread)
{
	const struct ocb_roof_caches zen5 = {48 * KIB, 1 * MIB, 508 * MIB, 2, 2, 43 * MIB};
	struct ocb_roof_caches rep = zen5;
	rep.llc = 0; /* only the reported 508 MiB */
	cr_expect_float_eq(ocb_roof_dram_cycle(&zen5, 1), 172.0 * MIB, 1);
	cr_expect_float_eq(ocb_roof_dram_cycle(&zen5, 2), 344.0 * MIB, 1);
	cr_expect_float_eq(ocb_roof_dram_cycle(&rep, 2), 2048.0 * MIB, 1);
	cr_expect_float_eq(ocb_roof_dram_cycle(&zen5, 0), 172.0 * MIB, 1);
}

/* A DRAM-level working set swept pass after pass (STREAM's arrays) in fewer bytes than the
 * DRAM ceiling's own working sets finds part of its data in the last level: L3. A case
 * that rotates copies past that cycle (cycle 0: unknown, taken as enough) stays DRAM, and
 * so does one where no L3 is known. Zen 5 VM: 43 MiB measured last level, 508 MiB
 * reported. */
Test(roofline, level_cycle_partly_cached)
{
	const struct ocb_roof_caches zen5 = {48 * KIB, 1 * MIB, 508 * MIB, 2, 2, 43 * MIB};
	/* the quick STREAM copy, 2 x 64 MiB: over the last level, under 2 x 4 x 43 MiB */
	cr_expect_eq(ocb_roof_level(&zen5, 128 * MIB, 2), OCB_LEVEL_DRAM);
	cr_expect_eq(ocb_roof_level_cycle(&zen5, 128 * MIB, 128 * MIB, 2), OCB_LEVEL_L3);
	cr_expect_eq(ocb_roof_level_cycle(&zen5, 128 * MIB, 0, 2), OCB_LEVEL_DRAM);
	/* the quick triad, 192 MiB: past 1 thread's 172 MiB cycle, under 2 threads' 344 */
	cr_expect_eq(ocb_roof_level_cycle(&zen5, 192 * MIB, 192 * MIB, 1), OCB_LEVEL_DRAM);
	cr_expect_eq(ocb_roof_level_cycle(&zen5, 192 * MIB, 192 * MIB, 2), OCB_LEVEL_L3);
	cr_expect_eq(ocb_roof_level_cycle(&zen5, 344 * MIB, 344 * MIB, 2), OCB_LEVEL_DRAM);
	/* the full triad, 768 MiB */
	cr_expect_eq(ocb_roof_level_cycle(&zen5, 768 * MIB, 768 * MIB, 2), OCB_LEVEL_DRAM);
	/* a short cycle never moves a cache-level case */
	cr_expect_eq(ocb_roof_level_cycle(&zen5, 512 * KIB, 512 * KIB, 1), OCB_LEVEL_L2);
	/* over a cache, under the next ceiling's band start (2 l1d, 2 l2 per thread): the
	 * faster level. The Q8_0 GEMV of 1024^2 (1.12 MB) at 1 thread ran at 107% of bw_l3 */
	cr_expect_eq(ocb_roof_level(&zen5, 1.12e6, 1), OCB_LEVEL_L3);
	cr_expect_eq(ocb_roof_level_cycle(&zen5, 1.12e6, 0, 1), OCB_LEVEL_L2);
	cr_expect_eq(ocb_roof_level_cycle(&zen5, 2 * MIB - 1, 0, 1), OCB_LEVEL_L2);
	cr_expect_eq(ocb_roof_level_cycle(&zen5, 2 * MIB, 0, 1), OCB_LEVEL_L3);
	cr_expect_eq(ocb_roof_level_cycle(&zen5, 4 * MIB - 2, 0, 2), OCB_LEVEL_L2);
	cr_expect_eq(ocb_roof_level_cycle(&zen5, 4 * MIB, 0, 2), OCB_LEVEL_L3);
	cr_expect_eq(ocb_roof_level(&zen5, 60 * KIB, 1), OCB_LEVEL_L2);
	cr_expect_eq(ocb_roof_level_cycle(&zen5, 60 * KIB, 0, 1), OCB_LEVEL_L1);
	cr_expect_eq(ocb_roof_level_cycle(&zen5, 96 * KIB, 0, 1), OCB_LEVEL_L2);
	/* SMT siblings share a core's caches: 2 threads on 1 core hold one core's worth */
	const struct ocb_roof_caches smt = {48 * KIB, 1 * MIB, 32 * MIB, 1, 2, 0};
	cr_expect_eq(ocb_roof_level_cycle(&smt, 1.5 * MIB, 0, 2), OCB_LEVEL_L2);
	cr_expect_eq(ocb_roof_level_cycle(&smt, 2 * MIB, 0, 2), OCB_LEVEL_L3);
	/* no L3 known: past L2 it is DRAM whatever the cycle */
	const struct ocb_roof_caches none = {0, 0, 0, 0, 0, 0};
	cr_expect_eq(ocb_roof_level_cycle(&none, 1 * MIB, 1 * MIB, 1), OCB_LEVEL_DRAM);
	char b[32];
	cr_assert_eq(ocb_roof_bound(&zen5, "bw_*", NULL, 128 * MIB, 128 * MIB, 2, b, sizeof b), 0);
	cr_expect_str_eq(b, "bw_l3");
	cr_assert_eq(ocb_roof_bound(&zen5, "bw_*", NULL, 128 * MIB, 0, 2, b, sizeof b), 0);
	cr_expect_str_eq(b, "bw_dram");
}

Test(roofline, level_from_the_working_set_and_the_caches)
{
	const struct ocb_roof_caches zen3 = {32 * KIB, 512 * KIB, 32 * MIB, 2, 2, 0};
	const struct ocb_roof_caches xeon = {48 * KIB, 2 * MIB, 480 * MIB, 2, 2, 0};
	static const struct {
		int m; /* 0 zen3, 1 xeon */
		double ws;
		int threads;
		enum ocb_level want;
	} tab[] = {
		{0, 32 * KIB - 1, 1, OCB_LEVEL_L1},   {0, 32 * KIB + 1, 1, OCB_LEVEL_L2},
		{0, 64 * KIB - 2, 2, OCB_LEVEL_L1},   {0, 64 * KIB + 2, 2, OCB_LEVEL_L2},
		{0, 544 * KIB - 1, 1, OCB_LEVEL_L2},  {0, 544 * KIB + 1, 1, OCB_LEVEL_L3},
		{0, 1088 * KIB - 2, 2, OCB_LEVEL_L2}, {0, 1088 * KIB + 2, 2, OCB_LEVEL_L3},
		{0, 32 * MIB + 544 * KIB - 1, 1, OCB_LEVEL_L3},
		{0, 32 * MIB + 544 * KIB + 1, 1, OCB_LEVEL_DRAM},
		{0, 32 * MIB + 1088 * KIB - 1, 2, OCB_LEVEL_L3},
		{0, 32 * MIB + 1088 * KIB + 1, 2, OCB_LEVEL_DRAM},
		/* TQ1_0 16384 x 16384: 56.6 MB of weights, "bw_l3" before on this machine */
		{0, 56.6e6, 1, OCB_LEVEL_DRAM},       {0, 56.6e6, 2, OCB_LEVEL_DRAM},
		{1, 48 * KIB - 1, 1, OCB_LEVEL_L1},   {1, 48 * KIB + 1, 1, OCB_LEVEL_L2},
		{1, 2 * MIB + 48 * KIB - 1, 1, OCB_LEVEL_L2},
		{1, 2 * MIB + 48 * KIB + 1, 1, OCB_LEVEL_L3},
		{1, 4 * MIB + 96 * KIB - 2, 2, OCB_LEVEL_L2},
		{1, 4 * MIB + 96 * KIB + 2, 2, OCB_LEVEL_L3},
		/* sgemv / f32 GEMV 1024 x 1024 (A 4 MiB, x and y 4 KiB each), 2 threads: ran from
		 * L2 at ~230% of the L3 roof while the rule compared 2 MiB + 4 KiB with L2 alone */
		{1, 4 * MIB + 8 * KIB, 2, OCB_LEVEL_L2}, {1, 4 * MIB + 8 * KIB, 1, OCB_LEVEL_L3},
		{1, 56.6e6, 1, OCB_LEVEL_L3},         {1, 480 * MIB - 1, 2, OCB_LEVEL_L3},
		{1, 480 * MIB + 2 * MIB + 48 * KIB + 1, 1, OCB_LEVEL_DRAM},
		{1, 768 * MIB, 2, OCB_LEVEL_DRAM},
	};
	for (size_t i = 0; i < sizeof tab / sizeof *tab; i++) {
		const struct ocb_roof_caches *m = tab[i].m ? &xeon : &zen3;
		enum ocb_level got = ocb_roof_level(m, tab[i].ws, tab[i].threads);
		cr_expect_eq(got, tab[i].want, "%s ws %.0f threads %d: %s, want %s",
			     tab[i].m ? "xeon" : "zen3", tab[i].ws, tab[i].threads,
			     ocb_level_kind(got), ocb_level_kind(tab[i].want));
	}
}

Test(roofline, level_smt_siblings_and_unknown_caches)
{
	/* 1 core, 2 hardware threads: two threads share one L1d and one L2 */
	const struct ocb_roof_caches smt = {32 * KIB, 1 * MIB, 8 * MIB, 1, 2, 0};
	cr_expect_eq(ocb_roof_level(&smt, 32 * KIB - 2, 2), OCB_LEVEL_L1);
	cr_expect_eq(ocb_roof_level(&smt, 40 * KIB, 2), OCB_LEVEL_L2);
	cr_expect_eq(ocb_roof_level(&smt, 34 * KIB, 2), OCB_LEVEL_L2);
	cr_expect_eq(ocb_roof_level(&smt, 30 * KIB, 1), OCB_LEVEL_L1);
	/* nothing known: 32 KiB / 256 KiB, and past L2 nothing says L3: DRAM */
	const struct ocb_roof_caches none = {0, 0, 0, 0, 0, 0};
	cr_expect_eq(ocb_roof_level(&none, 16 * KIB, 1), OCB_LEVEL_L1);
	cr_expect_eq(ocb_roof_level(&none, 200 * KIB, 1), OCB_LEVEL_L2);
	cr_expect_eq(ocb_roof_level(&none, 1 * MIB, 1), OCB_LEVEL_DRAM);
	cr_expect_eq(ocb_roof_level(NULL, 1 * MIB, 1), OCB_LEVEL_DRAM);
}

Test(roofline, bound_names)
{
	const struct ocb_roof_caches zen3 = {32 * KIB, 512 * KIB, 32 * MIB, 2, 2, 0};
	char b[32];
	cr_assert_eq(ocb_roof_bound(&zen3, NULL, NULL, 4 * MIB, 0, 1, b, sizeof b), 0);
	cr_expect_str_eq(b, "roofline:flops_fp32,bw_l3");
	cr_assert_eq(ocb_roof_bound(&zen3, "", "ops_int8", 56.6e6, 0, 2, b, sizeof b), 0);
	cr_expect_str_eq(b, "roofline:ops_int8,bw_dram");
	cr_assert_eq(ocb_roof_bound(&zen3, "bw_*", NULL, 16 * KIB, 0, 1, b, sizeof b), 0);
	cr_expect_str_eq(b, "bw_l1");
	cr_assert_eq(ocb_roof_bound(&zen3, "bw_*_triad", NULL, 768 * MIB, 0, 2, b, sizeof b), 0);
	cr_expect_str_eq(b, "bw_dram_triad");
	cr_assert_eq(ocb_roof_bound(&zen3, "flops_sgemm", "ops_int8", 1, 0, 1, b, sizeof b), 0);
	cr_expect_str_eq(b, "flops_sgemm");
	char tiny[8];
	cr_expect_eq(ocb_roof_bound(&zen3, NULL, "flops_sgemm", 1, 0, 1, tiny, sizeof tiny), -1);
	cr_expect_str_eq(tiny, "");
}

Test(roofline, parse_new_legacy_and_bad)
{
	char c[32], b[32];
	cr_assert_eq(ocb_roof_parse("roofline:ops_int8,bw_dram", c, b, 32), 0);
	cr_expect_str_eq(c, "ops_int8");
	cr_expect_str_eq(b, "bw_dram");
	cr_assert_eq(ocb_roof_parse("roofline:bw_l2", c, b, 32), 0); /* stored before v2 */
	cr_expect_str_eq(c, "flops_fp32");
	cr_expect_str_eq(b, "bw_l2");
	cr_assert_eq(ocb_roof_parse("bw_dram_triad", c, b, 32), 0);
	cr_expect_str_eq(c, "");
	cr_expect_str_eq(b, "bw_dram_triad");
	cr_assert_eq(ocb_roof_parse("flops_sgemm", c, b, 32), 0);
	cr_expect_str_eq(c, "flops_sgemm");
	cr_expect_str_eq(b, "");
	const char *bad[] = {"", "roofline:", "roofline:ops_int8,", "roofline:,bw_l1",
			     "roofline:ops_int8,flops_fp32", "roofline:ops_int8"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		cr_expect_eq(ocb_roof_parse(bad[i], c, b, 32), -1, "'%s'", bad[i]);
	cr_expect_eq(ocb_roof_parse(NULL, c, b, 32), -1);
}

Test(roofline, attainable_and_fraction)
{
	struct ocb_roof_ceil c[] = {rc("flops_fp32", 1, 100), rc("bw_dram", 1, 10),
				    rc("flops_fp32", 2, 200), rc("flops_sgemm", 2, 250),
				    rc("bw_dram", 2, 20), rc("bw_l2", 1, 80)};
	size_t n = sizeof c / sizeof *c;
	const char *fp_dram = "roofline:flops_fp32,bw_dram";
	/* intensity 1: memory-bound, 10 GB/s x 1 */
	cr_expect_float_eq(ocb_roof_attainable(c, n, fp_dram, 1, 1e9, 1e9), 10.0, 1e-12);
	cr_expect_float_eq(ocb_roof_attainable(c, n, fp_dram, 1, 1e9, 4e9), 2.5, 1e-12);
	/* intensity 100: compute-bound; the ridge (10 flop/B) gives the peak */
	cr_expect_float_eq(ocb_roof_attainable(c, n, fp_dram, 1, 1e11, 1e9), 100.0, 1e-12);
	cr_expect_float_eq(ocb_roof_attainable(c, n, fp_dram, 1, 1e10, 1e9), 100.0, 1e-12);
	/* the named compute roof, not the highest one: fp32 200 at 2 threads, sgemm 250 */
	cr_expect_float_eq(ocb_roof_attainable(c, n, fp_dram, 2, 1e12, 1e9), 200.0, 1e-12);
	cr_expect_float_eq(ocb_roof_attainable(c, n, "roofline:flops_sgemm,bw_dram", 2, 1e12,
					       1e9), 250.0, 1e-12);
	/* no bytes: the compute roof */
	cr_expect_float_eq(ocb_roof_attainable(c, n, fp_dram, 1, 1e9, 0), 100.0, 1e-12);
	/* lone ceilings: their value, bandwidth in GB/s */
	cr_expect_float_eq(ocb_roof_attainable(c, n, "bw_l2", 1, 0, 1e6), 80.0, 1e-12);
	cr_expect_float_eq(ocb_roof_attainable(c, n, "flops_sgemm", 2, 1e9, 0), 250.0, 1e-12);
	/* no int8 roof measured: NaN ("no roof"), never the fp32 one in its place */
	cr_expect(isnan(ocb_roof_attainable(c, n, "roofline:ops_int8,bw_dram", 1, 1e9, 1e6)));
	cr_expect(isnan(ocb_roof_frac(c, n, "ops_int8", 1, 1e9, 1e6, 1e-3)));
	cr_expect(isnan(ocb_roof_attainable(c, n, "roofline:flops_fp32,bw_l3", 1, 1e9, 1e6)));
	cr_expect(isnan(ocb_roof_attainable(c, n, fp_dram, 1, 0, 1e9)));
	cr_expect(isnan(ocb_roof_attainable(NULL, 0, fp_dram, 1, 1e9, 1e9)));

	/* fractions: 1e9 ops in 0.5 s = 2 Gop/s of a 10 Gop/s roof (memory) */
	cr_expect_float_eq(ocb_roof_frac(c, n, fp_dram, 1, 1e9, 1e9, 0.5), 0.2, 1e-12);
	/* a lone bandwidth bound compares bytes: 1e9 B in 0.5 s = 2 GB/s of 10 */
	cr_expect_float_eq(ocb_roof_frac(c, n, "bw_dram", 1, 5e12, 1e9, 0.5), 0.2, 1e-12);
	/* memory-bound roofline fraction = bandwidth fraction (ops cancel) */
	cr_expect_float_eq(ocb_roof_frac(c, n, fp_dram, 1, 3e9, 1e9, 0.5),
			   ocb_roof_frac(c, n, "bw_dram", 1, 3e9, 1e9, 0.5), 1e-12);
	cr_expect(isnan(ocb_roof_frac(c, n, fp_dram, 1, 1e9, 1e9, 0)));
	cr_expect(isnan(ocb_roof_frac(c, n, fp_dram, 1, 1e9, 1e9, NAN)));
}

/* The same results through the harness (collect/harness.c) and the report (report/rdata.c
 * ocb_rrow_roof_frac with no stored fraction): identical bound and fraction. */
Test(roofline, harness_and_report_agree)
{
	struct ocb_machine m;
	memset(&m, 0, sizeof m);
	m.cores = m.threads = 2;
	m.l1d_bytes = 32 << 10;
	m.l2_bytes = 512 << 10;
	m.l3_bytes = 32 << 20;
	struct ocb_ceiling c[] = {
		{.kind = "flops_fp32", .threads = 1, .value = 98.4, .unit = "GFLOP/s", .method = "t"},  {.kind = "flops_fp32", .threads = 2, .value = 196.0, .unit = "GFLOP/s", .method = "t"},
		{.kind = "flops_sgemm", .threads = 1, .value = 85.0, .unit = "GFLOP/s", .method = "t"}, {.kind = "flops_sgemm", .threads = 2, .value = 172.0, .unit = "GFLOP/s", .method = "t"},
		{.kind = "ops_int8", .threads = 1, .value = 400.0, .unit = "GOP/s", .method = "t"},     {.kind = "bw_l1", .threads = 1, .value = 300.0, .unit = "GB/s", .method = "t"},
		{.kind = "bw_l2", .threads = 1, .value = 95.0, .unit = "GB/s", .method = "t"},          {.kind = "bw_l2", .threads = 2, .value = 180.0, .unit = "GB/s", .method = "t"},
		{.kind = "bw_l3", .threads = 1, .value = 60.0, .unit = "GB/s", .method = "t"},          {.kind = "bw_dram", .threads = 1, .value = 20.0, .unit = "GB/s", .method = "t"},
		{.kind = "bw_dram", .threads = 2, .value = 33.0, .unit = "GB/s", .method = "t"},        {.kind = "bw_dram_triad", .threads = 2, .value = 36.0, .unit = "GB/s", .method = "t"},
	};
	size_t nc = sizeof c / sizeof *c;
	static const struct {
		double ops, bytes, median;
		int threads;
		const char *bound, *compute;
	} cases[] = {
		{2.0 * 16384 * 16384, 56.6e6, 3.1e-3, 1, NULL, "ops_int8"},   /* DRAM, int8 */
		{2.0 * 16384 * 16384, 56.6e6, 1.9e-3, 2, NULL, "ops_int8"},   /* int8 at 2: next up none -> 1 */
		{2.0 * 4096 * 4096, 9.4e6, 0.4e-3, 2, NULL, "ops_int8"},      /* L3 */
		{2.0 * 512 * 512 * 8, 150e3, 20e-6, 1, NULL, "ops_int8"},     /* L2 */
		{2.0 * 4096 * 4096 * 4096.0, 3.0 * 4096 * 4096 * 4, 0.9, 2, NULL, "flops_sgemm"},
		{2.0 * 1024 * 1024, 4.0 * 1024 * 1024, 0.2e-3, 1, NULL, NULL}, /* sgemv, L3 */
		{2.0 * (1 << 26), 3.0 * 4 * (1 << 26), 25e-3, 2, "bw_*_triad", NULL},
		{0, 2.0 * 4 * (1 << 26), 20e-3, 2, "bw_*", NULL},            /* copy: bytes only */
		{1e9, 0, 0.02, 1, "flops_sgemm", NULL},
	};
	struct ocb_mceil mc = {.machine_id = 1, .c = c, .n = nc};
	struct ocb_roof_ceil view[sizeof c / sizeof *c];
	ocb_ceiling_view(c, nc, view);
	mc.view = view;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct ocb_ctx ctx = {.threads = cases[i].threads, .machine = &m, .ceilings = c,
				      .nceilings = nc};
		struct ocb_work w = {cases[i].ops, cases[i].bytes, cases[i].bound, cases[i].compute, 0, 0};
		struct ocb_result r;
		memset(&r, 0, sizeof r);
		r.threads = cases[i].threads;
		r.st.median = cases[i].median;
		ocb_harness_bound(&r, &w, 1, &ctx);
		cr_assert(r.bound[0], "case %zu: no bound", i);
		cr_expect(isfinite(r.bound_frac), "case %zu (%s): NaN", i, r.bound);

		struct ocb_rrow row;
		memset(&row, 0, sizeof row);
		snprintf(row.bound, sizeof row.bound, "%s", r.bound); /* as the store keeps it */
		snprintf(row.unit, sizeof row.unit, "s");
		row.threads = r.threads;
		row.median = r.st.median;
		row.flops = w.flops;
		row.bytes = w.bytes;
		row.bound_frac = NAN; /* recomputed by the report */
		double rf = ocb_rrow_roof_frac(&row, &mc);
		/* one function on the same inputs: equal by construction */
		cr_expect_eq(rf, r.bound_frac, "case %zu %s: report %.17g vs harness %.17g", i,
			     r.bound, rf, r.bound_frac);
	}
	/* and the names they share */
	struct ocb_ctx ctx = {.threads = 2, .machine = &m, .ceilings = c, .nceilings = nc};
	struct ocb_work w = {cases[0].ops, cases[0].bytes, NULL, "ops_int8", 0, 0};
	struct ocb_result r;
	memset(&r, 0, sizeof r);
	r.threads = 2;
	r.st.median = 1e-3;
	ocb_harness_bound(&r, &w, 1, &ctx);
	cr_expect_str_eq(r.bound, "roofline:ops_int8,bw_dram");
	/* no int8 roof at all: NaN in both, never fp32 */
	struct ocb_ctx noint = {.threads = 1, .machine = &m, .ceilings = c, .nceilings = 4};
	ocb_harness_bound(&r, &w, 1, &noint);
	cr_expect(isnan(r.bound_frac));
	struct ocb_mceil mc4 = {.machine_id = 1, .c = c, .view = view, .n = 4};
	struct ocb_rrow row = {.threads = 1, .median = 1e-3, .flops = w.flops, .bytes = w.bytes,
			       .bound_frac = NAN};
	snprintf(row.bound, sizeof row.bound, "%s", r.bound);
	cr_expect(isnan(ocb_rrow_roof_frac(&row, &mc4)));
}

/* The level rule for measured cases moves a working set to the faster level exactly
 * below the start of the slower level's ceiling band (collect/ceilings.c): the two are
 * written apart and must not drift. Per thread, 1 and 2 threads, full-mode bands. */
Test(roofline, level_cycle_follows_the_ceiling_bands)
{
	struct ocb_machine zen5 = {.cores = 2, .threads = 2, .l1d_bytes = 48 << 10,
				   .l2_bytes = 1 << 20, .l3_bytes = 508LL << 20,
				   .llc_bytes = 43LL << 20};
	struct ocb_bands b;
	struct ocb_roof_caches mc;
	ocb_ceilings_bands(&zen5, 0, &b);
	ocb_machine_caches(&zen5, &mc);
	for (int t = 1; t <= 2; t++) {
		cr_expect_eq(ocb_roof_level_cycle(&mc, t * b.lo[1] - t, 0, t), OCB_LEVEL_L1, "t %d", t);
		cr_expect_eq(ocb_roof_level_cycle(&mc, t * b.lo[1], 0, t), OCB_LEVEL_L2, "t %d", t);
		cr_expect_eq(ocb_roof_level_cycle(&mc, t * b.lo[2] - t, 0, t), OCB_LEVEL_L2, "t %d", t);
		cr_expect_eq(ocb_roof_level_cycle(&mc, t * b.lo[2], 0, t), OCB_LEVEL_L3, "t %d", t);
		/* the DRAM band starts at 4 x the last level per thread, the cycle rule's bound */
		cr_expect_float_eq(ocb_roof_dram_cycle(&mc, t), t * b.lo[3], 1, "t %d", t);
	}
}
