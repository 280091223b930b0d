/* ceilings: the FMA and STREAM kernels (AVX2 against _ref), the band/plateau logic,
 * ocb_ceiling_find and the roofline bound. Small sizes only: no timing is asserted. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/ceilings.h"
#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../kernels/peak_fma.h"
#include "../kernels/stream.h"

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
	ocb_peak_fma(100000, 1, &s);
	/* 96 lanes, each converging to 1. */
	cr_assert(fabs(s - 96.0) < 1e-3, "sink %g", s);
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

Test(ceilings, stream_sum_avx2_matches_ref_and_exact)
{
	need_avx2();
	const size_t n = 100003; /* not a multiple of 64: tails run */
	float *x = ocb_alloc(n * sizeof(float));
	cr_assert_not_null(x);
	ocb_stream_fill(x, n, 0.5f, 0.25f, 2);
	double exact = 0.0;
	for (size_t i = 0; i < n; i++)
		exact += 0.5 + 0.25 * (double)(i % 1024);
	for (int t = 1; t <= 3; t++) {
		double a = ocb_stream_sum_avx2(x, n, 3, t), r = ocb_stream_sum_ref(x, n, 3, t);
		cr_assert(fabs(r - exact) <= 1e-9 * exact, "ref %.17g exact %.17g", r, exact);
		cr_assert(fabs(a - exact) <= 1e-5 * exact, "avx2 %.17g exact %.17g", a, exact);
	}
	ocb_free(x);
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

Test(ceilings, roofline_bound)
{
	struct ocb_ceiling c[] = {mk("flops_fp32", 1, 100), mk("bw_dram", 1, 10),
				  mk("flops_fp32", 2, 200), mk("flops_sgemm", 2, 250),
				  mk("bw_dram", 2, 20), mk("flops_sgemm", 4, 300)};
	size_t n = sizeof c / sizeof c[0];
	/* intensity 1 flop/byte: memory-bound at 10 GB/s x 1 = 10 GFLOP/s */
	cr_assert_float_eq(ocb_roofline_bound(c, n, 1, 1e9, 1e9), 10.0, 1e-12);
	/* intensity 0.25: 2.5 */
	cr_assert_float_eq(ocb_roofline_bound(c, n, 1, 1e9, 4e9), 2.5, 1e-12);
	/* intensity 100: compute-bound at the FMA peak */
	cr_assert_float_eq(ocb_roofline_bound(c, n, 1, 1e11, 1e9), 100.0, 1e-12);
	/* ridge point: exactly 10 flop/byte gives both */
	cr_assert_float_eq(ocb_roofline_bound(c, n, 1, 1e10, 1e9), 100.0, 1e-12);
	/* 2 threads: sgemm (250) beats the FMA kernel (200) and becomes the roof */
	cr_assert_float_eq(ocb_roofline_bound(c, n, 2, 1e12, 1e9), 250.0, 1e-12);
	cr_assert_float_eq(ocb_roofline_bound(c, n, 2, 1e9, 1e9), 20.0, 1e-12);
	/* no bytes: the compute roof */
	cr_assert_float_eq(ocb_roofline_bound(c, n, 1, 1e9, 0), 100.0, 1e-12);
	/* missing ceilings or no flops: NaN */
	cr_assert(isnan(ocb_roofline_bound(c, n, 3, 1e9, 1e9)));
	cr_assert(isnan(ocb_roofline_bound(c, n, 4, 1e9, 1e9))); /* no bw_dram at 4 */
	cr_assert(isnan(ocb_roofline_bound(c, n, 1, 0, 1e9)));
	cr_assert(isnan(ocb_roofline_bound(NULL, 0, 1, 1e9, 1e9)));
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
	cr_assert_float_eq(b.lo[3], 520 * MIB, 1e-6);
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
