/* ceilings: the FMA (AVX2 and AVX-512), int8 and STREAM kernels against _ref, the CPU
 * dispatch, the band/plateau
 * logic, ocb_ceiling_find and the roofline bound, the pinned team runner, the
 * consistency rules (table-driven), a disturbed 2-thread measurement and --verify's
 * replacement of a flagged value. Small sizes only: no timing is asserted. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collect/ceiling_rules.h"
#include "../collect/ceiling_team.h"
#include "../collect/ceilings.h"
#include "../collect/ceilings_store.h"
#include "../collect/runner.h"
#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../db/store.h"
#include "../db/store_int.h" /* the test reads the database directly */
#include "../kernels/peak_fma.h"
#include "../kernels/peak_int8.h"
#include "../kernels/stream.h"
#include "cli_util.h"

#define KIB 1024.0
#define MIB (1024.0 * 1024.0)

static void need_avx2(void)
{
	if (!ocb_cpu_avx2())
		cr_skip_test("no AVX2+FMA here (or OCB_FORCE_SCALAR set)");
}

Test(ceilings, fma_avx2_matches_ref)
{
	need_avx2();
	const long iters[] = {0, 1, 3, 17, 200};
	for (size_t k = 0; k < sizeof iters / sizeof iters[0]; k++)
		for (int t = 1; t <= 2; t++) {
			double sa = -1, sr = -2;
			double fa = ocb_peak_fma_avx2(iters[k], t, &sa);
			double fr = ocb_peak_fma_ref(iters[k], t, &sr);
			cr_assert_eq(fa, fr);
			cr_assert_eq(fa, (double)t * (double)iters[k] * OCB_FMA_FLOPS_PER_ITER);
			/* FMA rounds once, a*b+c in C twice: equal to a few ulps. */
			cr_assert(fabs(sa - sr) <= 1e-5 * fabs(sr), "iters %ld threads %d: %.9g vs %.9g",
				  iters[k], t, sa, sr);
		}
}

Test(ceilings, fma_accumulators_stay_bounded)
{
	double s = 0;
	cr_assert_eq(ocb_peak_fma(100000, 1, &s), 100000 * ocb_peak_fma_flops_per_iter());
	/* every lane (96 AVX2, 256 AVX-512) converges to 1 */
	double lanes = ocb_peak_fma_flops_per_iter() / 2;
	cr_assert(fabs(s - lanes) < 1e-3, "sink %g, %g lanes", s, lanes);
}

static void need_avx512f(void)
{
	if (!ocb_cpu_avx512f())
		cr_skip_test("no AVX-512F with OS zmm state here (or OCB_FORCE_AVX2 set)");
}

Test(ceilings, fma_avx512_matches_ref)
{
	need_avx512f();
	const long iters[] = {0, 1, 3, 17, 200};
	for (size_t k = 0; k < sizeof iters / sizeof iters[0]; k++)
		for (int t = 1; t <= 2; t++) {
			double sa = -1, sr = -2;
			double fa = ocb_peak_fma_avx512(iters[k], t, &sa);
			double fr = ocb_peak_fma_avx512_ref(iters[k], t, &sr);
			cr_assert_eq(fa, fr);
			cr_assert_eq(fa, (double)t * (double)iters[k] * OCB_FMA512_FLOPS_PER_ITER);
			cr_assert_eq(OCB_FMA512_FLOPS_PER_ITER, 2 * 16 * 16);
			/* 256 lanes per thread start in [0.5, 2): the sum says the init is right */
			if (iters[k] == 0)
				cr_assert(fabs(sr - t * (256 * 0.5 + 1.5 * 255 / 2)) < 1e-3, "%g", sr);
			/* FMA rounds once, a*b+c in C twice: equal to a few ulps. */
			cr_assert(fabs(sa - sr) <= 1e-5 * fabs(sr), "iters %ld threads %d: %.9g vs %.9g",
				  iters[k], t, sa, sr);
		}
}

/* Where the CPU (or OS) says no, the dispatch never takes the zmm path. */
Test(ceilings, fma_dispatch_without_avx512)
{
	/* the raw decision: CPUID bit, OSXSAVE, XCR0 bits 1, 2, 5, 6, 7 */
	cr_assert_eq(ocb_cpu_zmm_usable(1, 1, 0xE7), 1);
	cr_assert_eq(ocb_cpu_zmm_usable(1, 1, 0x2E7), 1);
	cr_assert_eq(ocb_cpu_zmm_usable(0, 1, 0xE7), 0); /* AVX2-only CPU (Zen 3) */
	cr_assert_eq(ocb_cpu_zmm_usable(1, 0, 0xE7), 0); /* no XGETBV */
	cr_assert_eq(ocb_cpu_zmm_usable(1, 1, 0x07), 0); /* OS saves ymm, not zmm */
	cr_assert_eq(ocb_cpu_zmm_usable(1, 1, 0x67), 0); /* no Hi16_ZMM */
	cr_assert_eq(ocb_cpu_zmm_usable(1, 1, 0xE3), 0); /* no AVX state */
	/* agrees with the compiler's own check (which also asks the OS) */
	ocb_cpu_reset();
	__builtin_cpu_init();
	if (!getenv("OCB_FORCE_AVX2") && !getenv("OCB_FORCE_SCALAR"))
		cr_assert_eq(ocb_cpu_avx512f(),
			     ocb_cpu_avx2() && __builtin_cpu_supports("avx512f"));
	/* forced AVX2: the AVX2 variant runs, whatever this CPU has */
	setenv("OCB_FORCE_AVX2", "1", 1);
	ocb_cpu_reset();
	int avx2 = ocb_cpu_avx2();
	cr_assert_eq(ocb_cpu_avx512f(), 0);
	cr_assert_eq(ocb_peak_fma_flops_per_iter(), OCB_FMA_FLOPS_PER_ITER);
	double s = 0, r = 0;
	cr_assert_eq(ocb_peak_fma(30, 2, &s), 2 * 30 * OCB_FMA_FLOPS_PER_ITER);
	ocb_peak_fma_ref(30, 2, &r);
	cr_assert(fabs(s - r) <= 1e-5 * r, "%g vs %g (the 96-lane kernel)", s, r);
	cr_assert(strstr(ocb_peak_fma_isa(), avx2 ? "AVX2" : "plain-C"), "%s",
		  ocb_peak_fma_isa());
	unsetenv("OCB_FORCE_AVX2");
	ocb_cpu_reset();
	if (ocb_cpu_avx512f())
		cr_assert(strstr(ocb_peak_fma_isa(), "AVX-512F"), "%s", ocb_peak_fma_isa());
}

/* Integer arithmetic without saturation is exact in any order, so the AVX2 chain, the
 * plain-C twin and the closed form agree bit for bit by construction. */
Test(ceilings, int8_avx2_matches_ref_and_closed_form)
{
	need_avx2();
	const long iters[] = {0, 1, 3, 17, 200, 100000};
	for (size_t k = 0; k < sizeof iters / sizeof iters[0]; k++)
		for (int t = 1; t <= 2; t++) {
			uint64_t sa = 1, sr = 2;
			double oa = ocb_peak_int8_avx2(iters[k], t, &sa);
			double orf = ocb_peak_int8_ref(iters[k], t, &sr);
			/* 8 accumulators x 32 int8 products x 2 ops per step and thread */
			cr_assert_eq(oa, (double)t * (double)iters[k] * 512.0);
			cr_assert_eq(orf, oa);
			cr_assert_eq(sa, sr, "iters %ld threads %d", iters[k], t);
			cr_assert_eq(sa, ocb_peak_int8_expect(iters[k], t));
		}
}

Test(ceilings, int8_accumulators_move_every_step)
{
	/* each step adds a nonzero amount to some lane: the sink changes with iters */
	cr_assert_neq(ocb_peak_int8_expect(1, 1), ocb_peak_int8_expect(0, 1));
	cr_assert_neq(ocb_peak_int8_expect(2, 1), ocb_peak_int8_expect(1, 1));
	uint64_t a = 0;
	ocb_peak_int8(1000, 1, &a);
	cr_assert_eq(a, ocb_peak_int8_expected(1000, 1));
}

Test(ceilings, slices_cover_the_range)
{
	const size_t ns[] = {0, 1, 15, 16, 17, 1000, 100003};
	for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
		for (int nt = 1; nt <= 5; nt++) {
			size_t next = 0;
			for (int t = 0; t < nt; t++) {
				size_t lo, hi;
				ocb_stream_slice(ns[k], nt, t, &lo, &hi);
				cr_assert_eq(lo, next);
				cr_assert_leq(lo, hi);
				cr_assert(lo % 16 == 0 || lo == ns[k]);
				next = hi;
			}
			cr_assert_eq(next, ns[k]);
		}
}

/* One SIMD sum variant against the plain-C twin and the exact sum, at 1-3 threads, on n
 * not a multiple of either unrolled step (tails run), then on one float and on 128 (one
 * zmm step, two ymm ones). */
static void check_sum_variant(const char *name,
			      double (*sum)(const float *, size_t, long, int))
{
	const size_t n = 100003;
	float *x = ocb_alloc(n * sizeof(float));
	cr_assert_not_null(x);
	ocb_stream_fill(x, n, 0.5f, 0.25f, 2);
	double exact = 0.0;
	for (size_t i = 0; i < n; i++)
		exact += 0.5 + 0.25 * (double)(i % 1024);
	for (int t = 1; t <= 3; t++) {
		double a = sum(x, n, 3, t), r = ocb_stream_sum_ref(x, n, 3, t);
		cr_assert(fabs(r - exact) <= 1e-9 * exact, "ref %.17g exact %.17g", r, exact);
		cr_assert(fabs(a - exact) <= 1e-5 * exact, "%s %.17g exact %.17g", name, a, exact);
	}
	for (size_t m = 1; m <= 128; m += 127)
		cr_assert(fabs(sum(x, m, 1, 1) - ocb_stream_sum_ref(x, m, 1, 1)) <=
			  1e-5 * ocb_stream_sum_ref(x, m, 1, 1), "%s, %zu floats", name, m);
	ocb_free(x);
}

Test(ceilings, stream_sum_avx2_matches_ref_and_exact)
{
	need_avx2();
	check_sum_variant("avx2", ocb_stream_sum_avx2);
}

Test(ceilings, stream_sum_avx512_matches_ref_and_exact)
{
	need_avx512f();
	check_sum_variant("avx512", ocb_stream_sum_avx512);
}

static int sum_variant_v; /* the variant sum_variant runs */

static double sum_variant(const float *x, size_t n, long reps, int threads)
{
	return ocb_stream_sum_variant(sum_variant_v, x, n, reps, threads);
}

/* The read ceiling's loops: one stream on zmm and ymm exactly where the CPU has AVX-512F,
 * then 2 and 4 streams, and 4 with a prefetch; each sums right, on sizes that do not
 * split evenly into the streams' parts as well (check_sum_variant's 1 and 128 floats, and
 * 100003). */
Test(ceilings, stream_sum_variants_per_cpu)
{
	need_avx2();
	cr_assert_eq(ocb_stream_sum_variants(), ocb_cpu_avx512f() ? 5 : 4);
	for (sum_variant_v = 0; sum_variant_v < ocb_stream_sum_variants(); sum_variant_v++) {
		char name[32];
		snprintf(name, sizeof name, "variant %d", sum_variant_v);
		check_sum_variant(name, sum_variant);
	}
	cr_assert_str_eq(ocb_stream_isa(1),
			 ocb_cpu_avx512f() ? "AVX-512F or AVX2 on 1, 2 or 4 streams per thread (4 also "
					     "with a prefetch), the best"
					   : "AVX2 on 1, 2 or 4 streams per thread (4 also with a "
					     "prefetch), the best");
}

Test(ceilings, stream_triad_and_copy_avx2_equal_ref)
{
	need_avx2();
	const size_t n = 10007;
	float *buf = ocb_alloc(5 * n * sizeof(float));
	cr_assert_not_null(buf);
	float *b = buf, *c = b + n, *a1 = c + n, *a2 = a1 + n, *a3 = a2 + n;
	ocb_stream_fill(b, n, 0.1f, 0.37f, 2);
	ocb_stream_fill(c, n, -3.0f, 0.011f, 2);
	for (int t = 1; t <= 3; t++) {
		ocb_stream_triad_avx2(a1, b, c, 1.7f, n, 2, t);
		ocb_stream_triad_ref(a2, b, c, 1.7f, n, 2, t);
		cr_assert(memcmp(a1, a2, n * sizeof(float)) == 0, "triad threads %d", t);
		for (size_t i = 0; i < n; i += 997)
			cr_assert_float_eq(a1[i], b[i] + 1.7f * c[i], 1e-5f * (1 + fabsf(a1[i])));
		memset(a1, 0, n * sizeof(float));
		memset(a3, 0, n * sizeof(float));
		ocb_stream_copy_avx2(a1, b, n, 2, t);
		ocb_stream_copy_ref(a3, b, n, 1, t);
		cr_assert(memcmp(a1, b, n * sizeof(float)) == 0, "copy avx2 threads %d", t);
		cr_assert(memcmp(a3, b, n * sizeof(float)) == 0, "copy ref threads %d", t);
	}
	ocb_free(buf);
}

static void need_vnni512(void)
{
	if (!ocb_cpu_avx512vnni())
		cr_skip_test("no AVX-512 VNNI here (or OCB_FORCE_AVX2 set)");
}

Test(ceilings, int8_vnni512_matches_ref)
{
	need_vnni512();
	const long iters[] = {0, 1, 3, 17, 200};
	for (size_t k = 0; k < sizeof iters / sizeof iters[0]; k++)
		for (int t = 1; t <= 2; t++) {
			uint64_t sa = 1, sr = 2;
			double oa = ocb_peak_int8_vnni512(iters[k], t, &sa);
			double orf = ocb_peak_int8_vnni512_ref(iters[k], t, &sr);
			cr_assert_eq(oa, orf);
			cr_assert_eq(oa, (double)t * (double)iters[k] * OCB_INT8_512_OPS_PER_ITER);
			cr_assert_eq(OCB_INT8_512_OPS_PER_ITER, 2 * 16 * 64);
			/* integers: vpdpbusd and the C sums are equal exactly */
			cr_assert_eq(sa, sr, "iters %ld threads %d", iters[k], t);
			cr_assert_eq(sa, ocb_peak_int8_vnni512_expect(iters[k], t));
		}
}

Test(ceilings, int8_vnni512_ref_counts_every_step)
{
	/* the closed form moves with iters and differs from the AVX2 shape's */
	cr_assert_neq(ocb_peak_int8_vnni512_expect(1, 1), ocb_peak_int8_vnni512_expect(0, 1));
	cr_assert_neq(ocb_peak_int8_vnni512_expect(1, 1), ocb_peak_int8_expect(1, 1));
	uint64_t a = 0;
	cr_assert_eq(ocb_peak_int8_vnni512_ref(7, 2, &a), 2 * 7 * OCB_INT8_512_OPS_PER_ITER);
	cr_assert_eq(a, ocb_peak_int8_vnni512_expect(7, 2));
}

Test(ceilings, int8_avxvnni_matches_ref)
{
	if (!ocb_cpu_avxvnni())
		cr_skip_test("no AVX-VNNI here (or OCB_FORCE_AVX2 set)");
	const long iters[] = {0, 1, 3, 17, 200};
	for (size_t k = 0; k < sizeof iters / sizeof iters[0]; k++)
		for (int t = 1; t <= 2; t++) {
			uint64_t sa = 1, sr = 2;
			double oa = ocb_peak_int8_avxvnni(iters[k], t, &sa);
			cr_assert_eq(oa, ocb_peak_int8_ref(iters[k], t, &sr));
			cr_assert_eq(sa, sr, "iters %ld threads %d", iters[k], t);
			cr_assert_eq(sa, ocb_peak_int8_expect(iters[k], t));
		}
}

/* Forced AVX2 (or a CPU without AVX-512 VNNI): the int8 dispatch runs the AVX2 chain. */
Test(ceilings, int8_dispatch_without_vnni512)
{
	setenv("OCB_FORCE_AVX2", "1", 1);
	ocb_cpu_reset();
	cr_assert_eq(ocb_cpu_avx512vnni(), 0);
	cr_assert_eq(ocb_cpu_avxvnni(), 0);
	if (ocb_cpu_avx2())
		cr_assert(strstr(ocb_peak_int8_isa(), "AVX2 int8"), "%s", ocb_peak_int8_isa());
	cr_assert_eq(ocb_peak_int8_ops_per_iter(), OCB_INT8_OPS_PER_ITER);
	uint64_t k = 0;
	cr_assert_eq(ocb_peak_int8(10, 2, &k), 2 * 10 * OCB_INT8_OPS_PER_ITER);
	cr_assert_eq(k, ocb_peak_int8_expect(10, 2));
	cr_assert_eq(ocb_peak_int8_expected(10, 2), ocb_peak_int8_expect(10, 2));
	unsetenv("OCB_FORCE_AVX2");
	ocb_cpu_reset();
	k = 0;
	ocb_peak_int8(10, 2, &k);
	cr_assert_eq(k, ocb_peak_int8_expected(10, 2));
	if (ocb_cpu_avx512vnni())
		cr_assert(strstr(ocb_peak_int8_isa(), "VNNI"), "%s", ocb_peak_int8_isa());
}

Test(ceilings, scalar_fallback_dispatch)
{
	setenv("OCB_FORCE_SCALAR", "1", 1);
	ocb_cpu_reset();
	cr_assert_eq(ocb_cpu_avx2(), 0);
	const size_t n = 4099;
	float *x = ocb_alloc(2 * n * sizeof(float));
	cr_assert_not_null(x);
	ocb_stream_fill(x, n, 1.0f, 0.0f, 2);
	cr_assert_float_eq(ocb_stream_sum(x, n, 1, 2), (double)n, 1e-9);
	ocb_stream_copy(x + n, x, n, 1, 2);
	cr_assert(memcmp(x, x + n, n * sizeof(float)) == 0);
	double s = 0;
	cr_assert_eq(ocb_peak_fma(10, 2, &s), 2 * 10 * OCB_FMA_FLOPS_PER_ITER);
	uint64_t k = 0;
	cr_assert_eq(ocb_peak_int8(10, 2, &k), 2 * 10 * OCB_INT8_OPS_PER_ITER);
	cr_assert_eq(k, ocb_peak_int8_expect(10, 2));
	ocb_free(x);
	unsetenv("OCB_FORCE_SCALAR");
	ocb_cpu_reset();
}

static struct ocb_ceiling mk(const char *kind, int threads, double v)
{
	struct ocb_ceiling c;
	memset(&c, 0, sizeof c);
	snprintf(c.kind, sizeof c.kind, "%s", kind);
	c.threads = threads;
	c.value = v;
	snprintf(c.unit, sizeof c.unit, "%s", kind[0] == 'f' ? "GFLOP/s" : "GB/s");
	return c;
}

Test(ceilings, find)
{
	struct ocb_ceiling c[] = {mk("flops_fp32", 1, 90), mk("flops_fp32", 2, 180),
				  mk("bw_dram", 1, 14), mk("bw_dram_triad", 2, 28)};
	size_t n = sizeof c / sizeof c[0];
	cr_assert_eq(ocb_ceiling_find(c, n, "flops_fp32", 2), &c[1]);
	cr_assert_eq(ocb_ceiling_find(c, n, "bw_dram", 1), &c[2]);
	cr_assert_null(ocb_ceiling_find(c, n, "bw_dram", 2)); /* bw_dram_triad is not bw_dram */
	cr_assert_null(ocb_ceiling_find(c, n, "bw_l1", 1));
	cr_assert_null(ocb_ceiling_find(NULL, 0, "bw_l1", 1));
}

Test(ceilings, bands_follow_the_caches)
{
	struct ocb_machine m;
	struct ocb_bands b;
	memset(&m, 0, sizeof m);
	m.threads = 2;
	m.l1d_bytes = 48 * 1024;
	m.l2_bytes = 2 << 20;
	m.l3_bytes = 260LL << 20; /* share 130 MiB per core */
	ocb_ceilings_bands(&m, 0, &b);
	cr_assert_float_eq(b.hi[0], 36 * KIB, 1e-6);
	cr_assert_float_eq(b.lo[1], 96 * KIB, 1e-6);
	cr_assert_float_eq(b.hi[1], 1 * MIB, 1e-6);
	cr_assert_float_eq(b.lo[2], 4 * MIB, 1e-6);
	cr_assert_float_eq(b.hi[2], 65 * MIB, 1e-6);
	cr_assert_float_eq(b.lo[3], 1024 * MIB, 1e-6); /* 4 x 260 MiB, at most 1 GiB */
	m.l3_bytes = 100LL << 20;
	ocb_ceilings_bands(&m, 0, &b);
	cr_assert_float_eq(b.lo[3], 400 * MIB, 1e-6); /* 4 x the whole L3, not 4 x a share */
	m.l3_bytes = 260LL << 20;
	cr_assert(isinf(b.hi[3]));
	ocb_ceilings_bands(&m, 1, &b); /* quick: DRAM from 192 MiB, L3 below half of it */
	cr_assert_float_eq(b.lo[3], 192 * MIB, 1e-6);
	cr_assert_float_eq(b.hi[2], 65 * MIB, 1e-6);
	m.l3_bytes = 0; /* unknown L3: empty band */
	ocb_ceilings_bands(&m, 0, &b);
	cr_assert_gt(b.lo[2], b.hi[2]);
	cr_assert_float_eq(b.lo[3], 64 * MIB, 1e-6);
}

Test(ceilings, plateau_is_median_of_top_three_in_band)
{
	size_t ws[] = {16384, 32768, 65536, 131072, 262144, 524288};
	double v[] = {100, 110, 50, 60, 90, 70};
	/* 1 thread, band 64K..512K: {50, 60, 90, 70} -> top three 90, 70, 60 -> 70 */
	cr_assert_float_eq(ocb_ceilings_plateau(ws, v, 6, 1, 65536, 524288), 70.0, 1e-12);
	/* band with two points: the max */
	cr_assert_float_eq(ocb_ceilings_plateau(ws, v, 6, 1, 0, 32768), 110.0, 1e-12);
	/* 2 threads: per-thread sizes are halved; 16K..32K/thread = ws 32K, 64K */
	cr_assert_float_eq(ocb_ceilings_plateau(ws, v, 6, 2, 16384, 32768), 110.0, 1e-12);
	cr_assert(isnan(ocb_ceilings_plateau(ws, v, 6, 1, 1e9, INFINITY)));
}

Test(ceilings, measuring_pieces_give_positive_rates)
{
	double g = 0, bw = 0, sg = 0;
	cr_assert_eq(ocb_ceilings_fma(1, 2, 0.002, &g), 0);
	cr_assert(g > 0 && isfinite(g));
	cr_assert_eq(ocb_ceilings_stream_triad(1 << 16, 2, 3, &bw), 0);
	cr_assert(bw > 0 && isfinite(bw));
	cr_assert_eq(ocb_ceilings_sgemm(64, 1, 1, &sg), 0);
	cr_assert(sg > 0 && isfinite(sg));
	cr_assert_neq(ocb_ceilings_stream_triad(1 << 10, 1, 1, &bw), 0); /* needs 2 trials */
	cr_assert_neq(ocb_ceilings_sgemm(0, 1, 1, &sg), 0);
}

/* ---- the team runner: distinct cores, per-thread rates ----------------------------- */

static double count_body(int t, int nt, void *arg)
{
	(void)nt;
	double sink = 0;
	ocb_peak_fma(*(long *)arg, 1, &sink);
	return 1000.0 * (t + 1); /* thread t "did" 1000 (t + 1) units */
}

static int allowed_cpus(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

Test(ceilings, team_runs_on_distinct_cores_and_times_each_thread)
{
	long iters = 20000;
	double agg = 0, rate[2] = {0, 0}, share[2] = {-1, -1};
	int cpu[2] = {-2, -2}, pinned = -1;
	cr_assert_eq(ocb_team_run(2, count_body, &iters, &agg, rate, cpu, share, &pinned), OCB_OK);
	cr_assert(agg > 0 && isfinite(agg));
	cr_assert(rate[0] > 0 && rate[1] > 0);
	/* CPU time over wall time: in (0, 1] whatever else runs */
	cr_assert(share[0] > 0 && share[0] <= 1 && share[1] > 0 && share[1] <= 1);
	cr_assert_eq(pinned, allowed_cpus() >= 2);
	if (pinned)
		cr_assert_neq(cpu[0], cpu[1], "pinned threads on one CPU %d", cpu[0]);
	/* the affinity mask is given back */
	cr_assert_eq(ocb_team_run(1, count_body, &iters, &agg, rate, cpu, NULL, &pinned), OCB_OK);
	cr_assert_eq(pinned, 0);
	cr_assert_eq(allowed_cpus(), allowed_cpus());
	cr_assert_neq(ocb_team_run(0, count_body, &iters, &agg, NULL, NULL, NULL, NULL), OCB_OK);
}

Test(ceilings, team_balance)
{
	double even[] = {100, 98, 101}, one_slow[] = {100, 48}, zero[] = {100, 0};
	cr_assert_float_eq(ocb_team_balance(even, 3), 98.0 / 101.0, 1e-12);
	cr_assert_float_eq(ocb_team_balance(one_slow, 2), 0.48, 1e-12);
	cr_assert(isnan(ocb_team_balance(zero, 2)));
	cr_assert(isnan(ocb_team_balance(even, 0)));
}

/* ---- consistency rules ------------------------------------------------------------- */

/* A plausible 2-thread machine (numbers of the AMD and Intel VMs): every rule holds. */
static size_t good_set(struct ocb_ceiling *c)
{
	static const struct {
		const char *kind;
		int th;
		double v;
	} g[] = {
		{"flops_fp32", 1, 100},  {"flops_fp32", 2, 199},    {"ops_int8", 1, 200},
		{"ops_int8", 2, 398},    {"flops_sgemm", 1, 85},    {"flops_sgemm", 2, 170},
		{"bw_l1", 1, 200},       {"bw_l2", 1, 100},         {"bw_l3", 1, 40},
		{"bw_dram", 1, 20},      {"bw_l1_triad", 1, 180},   {"bw_l2_triad", 1, 90},
		{"bw_l3_triad", 1, 35},  {"bw_dram_triad", 1, 19},  {"bw_l1", 2, 400},
		{"bw_l2", 2, 200},       {"bw_l3", 2, 60},          {"bw_dram", 2, 32},
		{"bw_l1_triad", 2, 360}, {"bw_l2_triad", 2, 180},   {"bw_l3_triad", 2, 55},
		{"bw_dram_triad", 2, 33},
	};
	size_t n = sizeof g / sizeof g[0];
	for (size_t i = 0; i < n; i++) {
		c[i] = mk(g[i].kind, g[i].th, g[i].v);
		c[i].trials = 5;
		c[i].spread = 0.04;
		c[i].balance = g[i].th > 1 ? 0.97 : 0;
		c[i].cpu_share = 0.99;
	}
	return n;
}

static const struct ocb_ceiling_xcheck good_xc[] = {{1, 20.0}, {2, 34.0}};

static struct ocb_ceiling *get(struct ocb_ceiling *c, size_t n, const char *kind, int th)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].threads == th && strcmp(c[i].kind, kind) == 0)
			return &c[i];
	cr_assert_fail("no %s at %d", kind, th);
	return NULL;
}

Test(ceilings, rules_pass_a_good_set)
{
	struct ocb_ceiling c[32];
	struct ocb_ceiling_rules r;
	ocb_ceiling_rules_default(&r);
	size_t n = good_set(c);
	snprintf(c[0].suspect, sizeof c[0].suspect, "stale reason"); /* replaced */
	cr_assert_eq(ocb_ceilings_check(c, n, good_xc, 2, &r), 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_str_empty(c[i].suspect, "%s/%d: %s", c[i].kind, c[i].threads, c[i].suspect);
	/* old rows (trials 0, balance 0) and no cross-check: nothing to object to either */
	for (size_t i = 0; i < n; i++)
		c[i].trials = 0, c[i].spread = NAN, c[i].balance = 0, c[i].cpu_share = 0;
	cr_assert_eq(ocb_ceilings_check(c, n, NULL, 0, &r), 0);
}

/* One broken fact per row: what to change, which ceilings must be flagged (all of
 * them, no other: " kind/threads " words) and a word the changed one's reason holds. */
struct rule_case {
	const char *name, *kind;
	int threads;
	double value, spread, balance;
	int trials;
	const char *flags;
	const char *why;
	double xc1; /* STREAM triad at 1 thread (0: the good one) */
};

static const struct rule_case rule_cases[] = {
	{"spread", "flops_fp32", 2, 199, 0.23, 0.97, 5, " flops_fp32/2 ", "spread", 0},
	{"few trials", "bw_l2", 1, 100, 0.01, 0, 2, " bw_l2/1 ", "trial", 0},
	{"one slow thread", "ops_int8", 2, 398, 0.04, 0.48, 5, " ops_int8/2 ", "slowest thread",
	 0},
	{"core shared (busy host)", "bw_l1", 1, 200, 0.04, 0, 5, " bw_l1/1 ", "of its core", 0},
	{"2 threads < 1 (fp32, issue 8)", "flops_fp32", 2, 86.2, 0.04, 0.97, 5,
	 " flops_fp32/2 flops_sgemm/2 ", "below 1 thread", 0},
	{"2 threads < 1 (L2 triad, issue 8)", "bw_l2_triad", 2, 7.7, 0.04, 0.97, 5,
	 " bw_l2_triad/2 bw_l3_triad/2 bw_dram_triad/2 ", "below 1 thread", 0},
	{"2 threads < 1 (int8)", "ops_int8", 2, 150, 0.04, 0.97, 5, " ops_int8/2 ",
	 "below 1 thread", 0},
	{"sgemm above FMA peak (issue 8)", "flops_fp32", 2, 102.7, 0.04, 0.97, 5,
	 " flops_fp32/2 flops_sgemm/2 ", "below sgemm", 0},
	{"sgemm far below FMA peak", "flops_sgemm", 1, 30, 0.04, 0, 5, " flops_sgemm/1 ",
	 "far below", 0},
	{"L3 above L2", "bw_l3", 1, 120, 0.04, 0, 5, " bw_l3/1 bw_l2/1 ", "above bw_l2", 0},
	{"DRAM above L3", "bw_dram_triad", 2, 70, 0.04, 0.97, 5,
	 " bw_dram_triad/2 bw_l3_triad/2 ", "above bw_l3_triad", 0},
	{"triad vs STREAM", "bw_dram_triad", 1, 19, 0.04, 0, 5, " bw_dram_triad/1 ", "STREAM",
	 14.0},
	{"read vs STREAM", "bw_dram", 1, 20, 0.04, 0, 5, " bw_dram/1 ", "STREAM", 30.0},
	/* 1.75x: past what write-allocate (4/3) and more read streams explain */
	{"read far above STREAM", "bw_dram", 1, 35, 0.04, 0, 5, " bw_dram/1 ", "STREAM", 20.0},
};

Test(ceilings, rules_detect_each_violation)
{
	struct ocb_ceiling_rules r;
	ocb_ceiling_rules_default(&r);
	for (size_t k = 0; k < sizeof rule_cases / sizeof rule_cases[0]; k++) {
		const struct rule_case *t = &rule_cases[k];
		struct ocb_ceiling c[32];
		struct ocb_ceiling_xcheck xc[2] = {good_xc[0], good_xc[1]};
		size_t n = good_set(c), want_n = 0;
		struct ocb_ceiling *x = get(c, n, t->kind, t->threads);
		x->value = t->value;
		x->spread = t->spread;
		x->balance = t->balance;
		x->trials = t->trials;
		if (strcmp(t->name, "core shared (busy host)") == 0)
			x->cpu_share = 0.55;
		if (t->xc1 > 0)
			xc[0].stream_triad = t->xc1;
		if (t->xc1 > 0 && strcmp(t->kind, "bw_dram") == 0) /* keep the triad rule quiet */
			get(c, n, "bw_dram_triad", 1)->value = t->xc1;
		size_t bad = ocb_ceilings_check(c, n, xc, 2, &r);
		for (size_t i = 0; i < n; i++) {
			char id[48];
			snprintf(id, sizeof id, " %s/%d ", c[i].kind, c[i].threads);
			int want = strstr(t->flags, id) != NULL;
			want_n += (size_t)want;
			cr_expect_eq(c[i].suspect[0] != '\0', want, "%s:%s flagged '%s'", t->name, id,
				     c[i].suspect);
		}
		cr_expect_eq(bad, want_n, "%s: %zu flagged", t->name, bad);
		cr_expect(strstr(x->suspect, t->why), "%s: reason '%s' lacks '%s'", t->name,
			  x->suspect, t->why);
	}
}

/* issue 8: sgemm <= the fp32 peak (+2%), with no allowance for a wider BLAS (the peak
 * is measured with the widest FMA); only a plain-C FMA kernel (not a peak) lifts it. */
Test(ceilings, rules_sgemm_bounded_by_fp32_peak)
{
	struct ocb_ceiling c[32];
	struct ocb_ceiling_rules r;
	ocb_ceiling_rules_default(&r);
	size_t n = good_set(c);
	double fp = get(c, n, "flops_fp32", 1)->value;
	get(c, n, "flops_sgemm", 1)->value = 1.01 * fp; /* within 2% */
	cr_assert_eq(ocb_ceilings_check(c, n, good_xc, 2, &r), 0);
	get(c, n, "flops_sgemm", 1)->value = 1.6 * fp; /* AVX-512 sgemm vs an AVX2 peak */
	cr_assert_eq(ocb_ceilings_check(c, n, good_xc, 2, &r), 2);
	cr_assert(strstr(get(c, n, "flops_sgemm", 1)->suspect, "above the FMA peak"));
	cr_assert(strstr(get(c, n, "flops_fp32", 1)->suspect, "below sgemm"));
	r.sgemm_peak_max = INFINITY;
	cr_assert_eq(ocb_ceilings_check(c, n, good_xc, 2, &r), 0);
}

/* ---- a disturbed measurement ------------------------------------------------------ */

static volatile int spin_stop;

static void *spin(void *arg)
{
	(void)arg;
	while (!spin_stop)
		__asm__ volatile("" ::: "memory");
	return NULL;
}

static double fma_body(int t, int nt, void *arg)
{
	(void)t, (void)nt;
	double sink = 0;
	return ocb_peak_fma(*(long *)arg, 1, &sink);
}

/* A busy loop pinned to the CPU of the team's thread 1 while the FMA peak runs on 2
 * pinned threads: that thread gets about half its core, so the detector must flag the
 * ceiling unless the rates came out even after all (timing is not asserted). */
Test(ceilings, disturbed_two_thread_peak_is_flagged)
{
	cpu_set_t set, one;
	int cpus[2], k = 0;
	CPU_ZERO(&set);
	cr_assert_eq(sched_getaffinity(0, sizeof set, &set), 0);
	for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[k++] = c;
	if (k < 2)
		cr_skip_test("needs 2 CPUs");
	pthread_t th;
	pthread_attr_t at;
	pthread_attr_init(&at);
	CPU_ZERO(&one);
	CPU_SET(cpus[1], &one);
	pthread_attr_setaffinity_np(&at, sizeof one, &one);
	spin_stop = 0;
	cr_assert_eq(pthread_create(&th, &at, spin, NULL), 0);
	long iters = 0;
	double agg = 0, rate[2], share[2], worst = 1, least = 1;
	int cpu[2], pinned = 0;
	/* about 20 ms per trial at 100 GFLOP/s per core (length does not matter) */
	iters = (long)(2e9 / ocb_peak_fma_flops_per_iter());
	for (int trial = 0; trial < 3; trial++) {
		cr_assert_eq(ocb_team_run(2, fma_body, &iters, &agg, rate, cpu, share, &pinned),
			     OCB_OK);
		cr_assert(pinned);
		cr_assert_eq(cpu[1], cpus[1], "thread 1 ran on CPU %d, not %d", cpu[1], cpus[1]);
		double b = ocb_team_balance(rate, 2);
		worst = fmin(worst, b);
		least = fmin(least, fmin(share[0], share[1]));
		cr_log_info("disturbed trial %d: %.1f / %.1f GFLOP/s per thread (balance %.2f, "
			    "CPU share %.2f / %.2f)", trial, rate[0] * 1e-9, rate[1] * 1e-9, b,
			    share[0], share[1]);
	}
	spin_stop = 1;
	pthread_join(th, NULL);
	pthread_attr_destroy(&at);

	struct ocb_ceiling c[32];
	struct ocb_ceiling_rules r;
	ocb_ceiling_rules_default(&r);
	size_t n = good_set(c);
	get(c, n, "flops_fp32", 2)->balance = worst;
	get(c, n, "flops_fp32", 2)->cpu_share = least;
	size_t bad = ocb_ceilings_check(c, n, good_xc, 2, &r);
	const char *why = get(c, n, "flops_fp32", 2)->suspect;
	int flagged = strstr(why, "slowest thread") || strstr(why, "of its core");
	cr_expect(flagged || (worst >= r.balance_min && least >= r.share_min),
		  "balance %.2f, CPU share %.2f not flagged", worst, least);
	cr_expect_eq(bad, (size_t)flagged);
}

/* ---- --verify replaces a flagged value -------------------------------------------- */

Test(ceilings, verify_replaces_a_flagged_value)
{
	char dir[128], path[256];
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb-ceil")));
	snprintf(path, sizeof path, "%s/c.db", dir);
	struct ocb_store *s = NULL;
	cr_assert_eq(ocb_store_open(path, OCB_STORE_WRITE, &s), OCB_OK, "%s", ocb_lasterr());
	struct ocb_machine m;
	memset(&m, 0, sizeof m);
	snprintf(m.fingerprint, sizeof m.fingerprint, "feedc0de");
	m.threads = 2;
	int64_t mid = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	/* stored: a good 1-thread FMA peak and a flagged 2-thread one */
	struct ocb_ceiling st[2] = {mk("flops_fp32", 1, 1.0), mk("flops_fp32", 2, 0.5)};
	st[0].trials = st[1].trials = 3;
	st[1].spread = 0.5;
	snprintf(st[1].suspect, sizeof st[1].suspect, "trials spread 50%% (> 10%%)");
	cr_assert_eq(ocb_ceilings_store(s, mid, 0, st, 2, 0), OCB_OK);

	struct ocb_ceiling *cur = NULL, *fl = NULL, *fresh = NULL;
	size_t ncur = 0, nfl = 0, nfresh = 0;
	cr_assert_eq(ocb_store_ceilings_get(s, mid, &cur, &ncur), OCB_OK);
	cr_assert_eq(ocb_store_ceilings_flagged(s, mid, &fl, &nfl), OCB_OK);
	cr_assert_eq(nfl, 1);
	cr_assert_eq(fl[0].threads, 2);
	cr_assert_eq(ocb_ceilings_verify(&m, 1, cur, ncur, fl, nfl, &fresh, &nfresh, NULL), OCB_OK,
		     "%s", ocb_lasterr());
	/* exactly the flagged (kind, threads) comes back, newly measured */
	cr_assert_eq(nfresh, 1);
	cr_assert_str_eq(fresh[0].kind, "flops_fp32");
	cr_assert_eq(fresh[0].threads, 2);
	cr_assert_geq(fresh[0].trials, 3);
	cr_assert(fresh[0].value > 0.5 && isfinite(fresh[0].spread));
	cr_assert_eq(ocb_ceilings_store(s, mid, 0, fresh, nfresh, 1), OCB_OK);

	/* the flagged row is gone; the new one is what readers get */
	free(cur);
	cur = NULL;
	cr_assert_eq(ocb_store_ceilings_get(s, mid, &cur, &ncur), OCB_OK);
	cr_assert_eq(ncur, 2);
	const struct ocb_ceiling *x = ocb_ceiling_find(cur, ncur, "flops_fp32", 2);
	cr_assert_not_null(x);
	cr_assert_float_eq(x->value, fresh[0].value, 1e-9 * fresh[0].value);
	cr_assert_str_eq(x->suspect, fresh[0].suspect);
	int64_t left = -1;
	sqlite3_stmt *q = NULL;
	cr_assert_eq(sqlite3_prepare_v2(ocb_store_handle(s), "SELECT count(*) FROM ceiling WHERE"
					" value = 0.5", -1, &q, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
	left = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	cr_assert_eq(left, 0);
	free(cur);
	free(fl);
	free(fresh);
	ocb_store_close(s);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

Test(ceilings, help_documents_verify_and_the_rules)
{
	const char *argv[] = {"", "ceilings", "--help", NULL};
	struct cli_out o;
	cr_assert_eq(cli_run(&o, argv, NULL), 0);
	cr_assert_eq(o.status, 0);
	cr_expect(strstr(o.out, "--verify"), "%s", o.out);
	cr_expect(strstr(o.out, "ops_int8") && strstr(o.out, "GOP/s"), "%s", o.out);
	cr_expect(strstr(o.out, "suspect") && strstr(o.out, "spread"), "%s", o.out);
	const char *both[] = {"", "ceilings", "--show", "--verify", NULL};
	cr_assert_eq(cli_run(&o, both, NULL), 0);
	cr_expect_eq(o.status, 2);
	cr_expect_eq(cli_lines(o.err), 1, "%s", o.err);
}
