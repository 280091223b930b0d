/* Criterion suite `qrepack`: the interleaved r8 weight layout and its GEMV
 * (kernels/quant_repack.h): pack/unpack round trip, the plain-C r8 GEMV against qgemv_ref,
 * the AVX2 r8 kernels against qgemv_ref within the fp32 summation-order bound, odd shapes
 * (rows not a multiple of 8 or 16, odd block counts), 1-3 threads, the r16 layout and its
 * zmm kernels, the run-time choice and its overrides, CPU identification. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../kernels/quant_gemv.h"
#include "../kernels/quant_repack.h"
#include "../kernels/quant_repack_impl.h" /* qr_default_kind: the per-CPU rule, pure */
#include "qrepack_prob.h"
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static const char *const all_fmts[] = { "q8_0", "q4_0", "q4_1", "q3_g", "q2_g", "tq2_0", "tq1_0" };
#define NALL (sizeof all_fmts / sizeof all_fmts[0])

/* qgemv_r8_ref on the layout of the current choice against qgemv_ref */
static void ref_on_layout(void)
{
	for (size_t i = 0; i < NALL; i++) {
		const struct qformat *f = qformat_find(all_fmts[i]);
		if (!qrepack_supported(f))
			continue;
		struct rprob p;
		rprob_init(&p, f, 21, f->block == 32 ? 160 : 512, 9);
		float y0[21], y1[21];
		cr_assert_eq(qrepack_pack(f, p.w, p.m, p.k, p.wr, 1), OCB_OK);
		cr_assert_eq(qgemv_ref(f, p.w, p.m, p.k, p.xq, y0, 1), OCB_OK);
		cr_assert_eq(qgemv_r8_ref(f, p.wr, p.m, p.k, p.xq, y1, 3), OCB_OK);
		cr_assert_eq(memcmp(y0, y1, sizeof y0), 0, "%s", f->name);
		rprob_free(&p);
	}
}

/* Both layouts: r8 (OCB_QGEMV=r8) and, on an AVX-512 VNNI CPU, r16 (every format has a
 * zmm kernel). */
static void round_trip(void)
{
	const int64_t ms[] = { 1, 7, 8, 13, 16, 24, 35 };
	for (size_t i = 0; i < NALL; i++) {
		const struct qformat *f = qformat_find(all_fmts[i]);
		for (size_t j = 0; j < sizeof ms / sizeof *ms; j++) {
			struct rprob p;
			/* 32-block formats: 3 blocks, or three column panels on r16 (the last
			 * of 3 blocks) */
			const int64_t k3 = 32 * (2 * qrepack_panel_blocks() + 3);
			int64_t k = f->block == 32 ? (j % 2 ? k3 : 96) : 512;
			rprob_init(&p, f, ms[j], k, 5 + j);
			if (!qrepack_supported(f)) {
				cr_assert_eq(qrepack_pack(f, p.w, p.m, k, p.wr, 1), OCB_EINVAL);
				rprob_free(&p);
				continue;
			}
			size_t bytes = qrepack_bytes(f, p.m, k);
			const int R = qrepack_rows(f);
			cr_assert_eq(qrepack_pack(f, p.w, p.m, k, p.wr, 2), OCB_OK);
			if (f->type == QF_TQ1_0) { /* transcoded to TQ2_0 codes: 66 / 54 bytes per group row */
				int64_t ng = p.m / R;
				cr_assert_eq(bytes, (size_t)(ng * R) * 66 * (k / 256) +
						    (size_t)(p.m - ng * R) * qformat_row_bytes(f, k));
				cr_assert_eq(qrepack_unpack(f, p.wr, p.m, k, p.w), OCB_EINVAL);
				rprob_free(&p);
				continue;
			}
			cr_assert_eq(bytes, (size_t)p.m * qformat_row_bytes(f, k));
			if (p.m >= R) /* a group really is interleaved */
				cr_assert_neq(memcmp(p.w, p.wr, qformat_row_bytes(f, k)), 0, "%s", f->name);
			char *back = malloc(bytes);
			cr_assert_eq(qrepack_unpack(f, p.wr, p.m, k, back), OCB_OK);
			cr_assert_eq(memcmp(back, p.w, bytes), 0, "%s R=%d m=%lld", f->name, R, (long long)p.m);
			free(back);
			rprob_free(&p);
		}
	}
}

Test(qrepack, pack_unpack_round_trip_every_layout)
{
	setenv("OCB_QGEMV", "r8", 1);
	cr_assert_eq(qrepack_rows(qformat_find("q4_0")), 8);
	round_trip();
	if (ocb_cpu_avx512vnni()) {
		setenv("OCB_QGEMV", "r16", 1);
		cr_assert_eq(qrepack_rows(qformat_find("q4_0")), 16);
		cr_assert_eq(qrepack_rows(qformat_find("q3_g")), 16);
		round_trip();
	}
	unsetenv("OCB_QGEMV");
}

/* The plain-C r8 GEMV reuses vec_dot_ref on rows gathered back: identical arithmetic in the
 * same order as qgemv_ref, so equal by construction; on both layouts (r16 where the CPU
 * has its kernels). */
Test(qrepack, ref_on_r8_equals_plain_ref)
{
	for (int layout = 0; layout < 2; layout++) {
		setenv("OCB_QGEMV", layout ? "r16" : "r8", 1);
		ref_on_layout();
	}
	unsetenv("OCB_QGEMV");
}

static void check_r8(const struct qformat *f, int64_t m, int64_t k, int threads)
{
	struct rprob p;
	rprob_init(&p, f, m, k, (uint64_t)(m * 131 + k + threads));
	float *y0 = malloc(sizeof(float) * (size_t)m), *y1 = malloc(sizeof(float) * (size_t)m);
	cr_assert_eq(qrepack_pack(f, p.w, m, k, p.wr, threads), OCB_OK);
	cr_assert_eq(qgemv_ref(f, p.w, m, k, p.xq, y0, 1), OCB_OK);
	cr_assert_eq(qgemv_r8(f, p.wr, m, k, p.xq, y1, threads), OCB_OK);
	int differ = 0;
	for (int64_t r = 0; r < m; r++) {
		double tol = order_bound(&p, r);
		cr_assert_leq(fabs((double)y0[r] - y1[r]), tol, "%s m=%lld k=%lld T=%d row %lld: ref %.9g "
			      "r8 %.9g (bound %.3g)", f->name, (long long)m, (long long)k, threads,
			      (long long)r, y0[r], y1[r], tol);
		differ |= y0[r] != y1[r];
		cr_assert(fabsf(y0[r]) > 0.0f, "degenerate problem: zero output");
	}
	(void)differ; /* the summation orders differ: equal or not, both are fine */
	free(y0), free(y1);
	rprob_free(&p);
}

static void check_all_r8(void)
{
	for (size_t i = 0; i < NALL; i++) {
		const struct qformat *f = qformat_find(all_fmts[i]);
		if (!qrepack_supported(f))
			continue;
		for (int t = 1; t <= 3; t++) {
			if (f->block == 32) {
				check_r8(f, 8, 32, t);    /* one group, one block */
				check_r8(f, 13, 96, t);   /* 3 blocks (odd: the tail), 5 plain rows */
				check_r8(f, 37, 1024, t); /* groups over threads + tail rows */
			}
			check_r8(f, 17, 256, t);
			check_r8(f, 64, 768, t);
		}
	}
}

/* Every format's r8 kernels of one instruction set (OCB_QGEMV=env picks them) against
 * the plain-C reference. */
static void check_kind(const char *env, enum qgemv_kind want)
{
	setenv("OCB_QGEMV", env, 1);
	cr_assert_eq(qgemv_choose(qformat_find("tq2_0")), want, "%s", env);
	check_all_r8();
	unsetenv("OCB_QGEMV");
}

/* AVX2 (the default where the CPU has no VNNI) */
Test(qrepack, avx2_r8_vs_plain_ref_odd_shapes_threads)
{
	if (!ocb_cpu_avx2())
		cr_skip_test("no AVX2 on this CPU (or OCB_FORCE_SCALAR set)");
	check_kind("r8", QGEMV_AVX2_R8);
}

/* AVX-VNNI (the default where the CPU has it) */
Test(qrepack, vnni_r8_kernels)
{
	if (!ocb_cpu_avxvnni())
		cr_skip_test("no AVX-VNNI on this CPU (or OCB_FORCE_SCALAR / OCB_FORCE_AVX2 set)");
	check_kind("r8-vnni", QGEMV_VNNI_R8);
}

/* AVX-512 VNNI, EVEX vpdpbusd on ymm (the default on Intel AVX-512 VNNI CPUs without
 * AVX-VNNI) */
Test(qrepack, vnni512_r8_kernels)
{
	if (!ocb_cpu_avx512vnni())
		cr_skip_test("no AVX-512 VNNI on this CPU (or OCB_FORCE_SCALAR / OCB_FORCE_AVX2 set)");
	check_kind("r8-vnni512", QGEMV_VNNI512_R8);
}

/* AVX-512 VNNI on zmm over the r16 layout (the default on AMD Zen 4 / Zen 5), for every
 * format */
Test(qrepack, vnni512_r16_kernels)
{
	if (!ocb_cpu_avx512vnni())
		cr_skip_test("no AVX-512 VNNI on this CPU (or OCB_FORCE_SCALAR / OCB_FORCE_AVX2 set)");
	check_kind("r16", QGEMV_VNNI512_R16);
	setenv("OCB_QGEMV", "r16", 1);
	cr_assert_eq(qgemv_choose(qformat_find("q2_g")), QGEMV_VNNI512_R16);
	check_r8(qformat_find("q8_0"), 50, 2048, 2); /* 3 groups of 16 + 2 plain rows, 64 blocks */
	check_r8(qformat_find("tq1_0"), 33, 1024, 2);
	/* column panels: 2 whole ones and a tail of 3 blocks (odd), 2 or 1; over 2 and 3
	 * threads */
	const int64_t pk = 32 * 2 * qrepack_panel_blocks();
	for (int t = 2; t <= 3; t++) {
		check_r8(qformat_find("q4_0"), 35, pk + 32 * 3, t);
		check_r8(qformat_find("q4_1"), 48, pk + 32 * 3, t);
		check_r8(qformat_find("q8_0"), 19, pk + 32 * 2, t);
		check_r8(qformat_find("q3_g"), 40, pk + 32 * 3, t);
		check_r8(qformat_find("q2_g"), 33, pk + 32 * 1, t);
	}
	unsetenv("OCB_QGEMV");
}

/* The r16 kernels on 1, 2, 4 and 8 streams per thread (OCB_QGEMV_STREAMS; Q8_0 and TQ2_0
 * capped at 4): 9 or 11 groups over 1-3 threads, so that shares do not split evenly into
 * the streams' parts and the groups left over run alone; each group lands in its own rows
 * (a group placed in the wrong part would break the bound). Every format that has a zmm
 * kernel, panels too. */
Test(qrepack, vnni512_r16_streams)
{
	if (!ocb_cpu_avx512vnni())
		cr_skip_test("no AVX-512 VNNI on this CPU (or OCB_FORCE_SCALAR / OCB_FORCE_AVX2 set)");
	setenv("OCB_QGEMV", "r16", 1);
	const char *fmts[] = { "q8_0", "q4_0", "q4_1", "q3_g", "q2_g", "tq2_0", "tq1_0" };
	const char *names[] = { "avx512vnni-r16", "avx512vnni-r16x2", "", "avx512vnni-r16x4",
				"", "", "", "avx512vnni-r16x8" };
	for (int ns = 1; ns <= 8; ns *= 2) {
		char e[2] = { (char)('0' + ns), 0 };
		setenv("OCB_QGEMV_STREAMS", e, 1);
		cr_assert_eq(qgemv_streams(qformat_find("q4_0")), ns);
		cr_assert_str_eq(qgemv_variant(qformat_find("q4_0")), names[ns - 1]);
		cr_assert_eq(qgemv_streams(qformat_find("q8_0")), ns < 4 ? ns : 4);
		cr_assert_eq(qgemv_streams(qformat_find("tq1_0")), ns < 4 ? ns : 4);
		for (size_t i = 0; i < sizeof fmts / sizeof *fmts; i++) {
			const struct qformat *f = qformat_find(fmts[i]);
			/* 2 panels; 2 or 3 TQ blocks (a pair, and a pair and an odd last block) */
			const int64_t ks[2] = { f->block == 32 ? 32 * 67 : 512, f->block == 32 ? 0 : 768 };
			for (int ki = 0; ki < 2 && ks[ki]; ki++)
				for (int t = 1; t <= 3; t++) {
					check_r8(f, 16 * 9 + 3, ks[ki], t);
					check_r8(f, 16 * 11, ks[ki], t);
					check_r8(f, 16 * 17, ks[ki], t); /* 8 streams over one thread's share */
				}
		}
	}
	setenv("OCB_QGEMV_STREAMS", "3", 1); /* not a choice: the CPU's default stays */
	cr_assert_eq(qgemv_streams(qformat_find("q4_0")), qr_default_streams(QF_Q4_0, ocb_cpu_id()));
	unsetenv("OCB_QGEMV_STREAMS");
	unsetenv("OCB_QGEMV");
}

/* Streams per thread of the r16 GEMV per CPU and format (quant_repack.c's measurements):
 * on AMD 8 for Q3_G and Q2_G, 4 for the others; 1 on Intel. Each default has its kernel. */
Test(qrepack, default_streams_per_cpu)
{
	const struct ocb_cpu_id zen5 = { .vendor = "AuthenticAMD", .family = 0x1a, .model = 0x02 };
	const struct ocb_cpu_id emr = { .vendor = "GenuineIntel", .family = 6, .model = 0xcf };
	const enum qformat_type types[] = { QF_Q8_0, QF_Q4_0, QF_Q4_1, QF_Q3_G, QF_Q2_G, QF_TQ2_0 };
	const int amd[] = { 4, 4, 4, 8, 8, 4 };
	for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
		const int ns = qr_default_streams(types[i], &zen5);
		cr_assert_eq(qr_default_streams(types[i], &emr), 1, "type %d", (int)types[i]);
		cr_assert_eq(ns, amd[i], "type %d", (int)types[i]);
		cr_assert_leq(ns, qr_max_streams(types[i]));
		cr_assert(ns == 1 ? qr_zmm_kernel(types[i]) != NULL : qr_zmm_kernels(types[i], ns) != NULL,
			  "type %d: no kernel for its default streams", (int)types[i]);
	}
	cr_assert_null(qr_zmm_kernels(QF_Q8_0, 8)); /* capped: it would spill */
	cr_assert_null(qr_zmm_kernels(QF_TQ2_0, 8));
}

/* TQ2_0 codes are 0..2 from any quantizer, but a byte may hold 3 (ggml decodes it as +2):
 * every kernel must still agree with the reference (the VNNI form takes a code as 64t,
 * the AVX2 form as 4t through int16 sums: both within their bounds for t = 3). */
Test(qrepack, tq2_code_3_every_kernel)
{
	if (!ocb_cpu_avx2())
		cr_skip_test("no AVX2 on this CPU (or OCB_FORCE_SCALAR set)");
	const struct qformat *f = qformat_find("tq2_0");
	const char *kinds[] = { "r8", "r8-vnni", "r8-vnni512", "r16" };
	struct rprob p;
	rprob_init(&p, f, 16, 512, 41);
	size_t rb = qformat_row_bytes(f, p.k);
	for (int64_t r = 0; r < p.m; r += 3) /* every code of some rows is 3 */
		memset(p.w + (size_t)r * rb, 0xff, 64), memset(p.w + (size_t)r * rb + 66, 0xff, 64);
	float y0[16], y1[16];
	cr_assert_eq(qgemv_ref(f, p.w, p.m, p.k, p.xq, y0, 1), OCB_OK);
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
		setenv("OCB_QGEMV", kinds[i], 1); /* the layout follows the kind: pack under it */
		cr_assert_eq(qrepack_pack(f, p.w, p.m, p.k, p.wr, 1), OCB_OK);
		cr_assert_eq(qgemv_r8(f, p.wr, p.m, p.k, p.xq, y1, 2), OCB_OK);
		for (int r = 0; r < 16; r++)
			cr_assert_leq(fabs((double)y0[r] - y1[r]), order_bound(&p, r), "%s row %d: %g vs %g",
				      kinds[i], r, y0[r], y1[r]);
	}
	unsetenv("OCB_QGEMV");
	rprob_free(&p);
}

/* The per-CPU default, from identifications we do not have (pure function) */
Test(qrepack, default_kind_per_cpu)
{
	const struct ocb_cpu_id zen3 = { .vendor = "AuthenticAMD", .family = 0x19, .model = 0x01 };
	const struct ocb_cpu_id zen4 = { .vendor = "AuthenticAMD", .family = 0x19, .model = 0x11 };
	const struct ocb_cpu_id zen5 = { .vendor = "AuthenticAMD", .family = 0x1a, .model = 0x02 };
	const struct ocb_cpu_id spr = { .vendor = "GenuineIntel", .family = 6, .model = 0x8f };
	for (size_t i = 0; i < NALL; i++) {
		const struct qformat *f = qformat_find(all_fmts[i]);
		cr_assert_eq(qr_default_kind(f, &spr, QR_AVXVNNI), QGEMV_VNNI_R8, "%s", f->name);
		/* AVX-512 VNNI, either vendor: zmm on r16 (every format has a zmm kernel) */
		cr_assert_eq(qr_default_kind(f, &zen4, QR_AVX512VNNI), QGEMV_VNNI512_R16, "%s", f->name);
		cr_assert_eq(qr_default_kind(f, &zen5, QR_AVX512VNNI), QGEMV_VNNI512_R16, "%s", f->name);
		cr_assert_eq(qr_default_kind(f, &spr, QR_AVX512VNNI), QGEMV_VNNI512_R16, "%s", f->name);
		cr_assert_eq(qr_default_kind(f, &spr, QR_AVX2), QGEMV_AVX2_R8, "%s", f->name);
		/* Zen 3 keeps the plain TQ2_0 loop (quant_repack.c: the model rates both alike) */
		cr_assert_eq(qr_default_kind(f, &zen3, QR_AVX2),
			     f->type == QF_TQ2_0 ? QGEMV_AVX2 : QGEMV_AVX2_R8, "%s", f->name);
	}
}

/* The r16 kernels' prefetch per vendor and streams (quant_repack.c's measurements): Intel
 * into L2 8 KiB ahead and into L1 near (TQ2_0 1 KiB, the 32-block formats 2 KiB); AMD into
 * L1 only: TQ2_0 8 KiB on one stream, none on 2, 2 KiB on 4; the 32-block formats none on
 * 1 and 2, 2 KiB on 4, 1 KiB on 8 */
Test(qrepack, default_prefetch_per_cpu)
{
	const struct ocb_cpu_id zen5 = { .vendor = "AuthenticAMD", .family = 0x1a, .model = 0x02 };
	const struct ocb_cpu_id emr = { .vendor = "GenuineIntel", .family = 6, .model = 0xcf };
	for (int ns = 1; ns <= 8; ns *= 2) {
		struct qk_pf p = qr_default_prefetch(QF_Q4_0, &emr, ns);
		cr_assert(p.l1 == 2048 && p.l2 == 8192, "%d %d", p.l1, p.l2);
		p = qr_default_prefetch(QF_TQ2_0, &emr, ns);
		cr_assert(p.l1 == 1024 && p.l2 == 8192, "%d %d", p.l1, p.l2);
		p = qr_default_prefetch(QF_Q8_0, &zen5, ns);
		cr_assert(p.l1 == (ns == 4 ? 2048 : ns == 8 ? 1024 : 0) && p.l2 == 0, "ns %d: %d %d",
			  ns, p.l1, p.l2);
		p = qr_default_prefetch(QF_TQ2_0, &zen5, ns);
		cr_assert(p.l1 == (ns == 1 ? 8192 : ns == 4 ? 2048 : 0) && p.l2 == 0, "ns %d: %d %d",
			  ns, p.l1, p.l2);
	}
}

/* Panels of 512 blocks on AMD (several streams), 64 on Intel (one) */
Test(qrepack, panel_blocks_per_cpu)
{
	const struct ocb_cpu_id zen5 = { .vendor = "AuthenticAMD", .family = 0x1a, .model = 0x02 };
	const struct ocb_cpu_id emr = { .vendor = "GenuineIntel", .family = 6, .model = 0xcf };
	cr_assert_eq(qr_panel_blocks(&zen5), 512);
	cr_assert_eq(qr_panel_blocks(&emr), 64);
	cr_assert_eq(qrepack_panel_blocks(), qr_panel_blocks(ocb_cpu_id()));
	cr_assert_eq(qr_panel_blocks(&zen5) % 64, 0, "a whole number of GEMM tiles");
}

/* A wrong answer must not pass the bound: swap two rows of one group in the packed bytes
 * (16 rows: one group of either layout). */
Test(qrepack, bound_catches_a_misplaced_row)
{
	if (!ocb_cpu_avx2())
		cr_skip_test("no AVX2 on this CPU (or OCB_FORCE_SCALAR set)");
	const struct qformat *f = qformat_find("q4_0");
	struct rprob p;
	rprob_init(&p, f, 16, 256, 77);
	/* rows 0 and 1 swapped before packing: outputs 0 and 1 swap */
	size_t rb = qformat_row_bytes(f, p.k);
	char *sw = malloc(16 * rb), *wr = qrepack_alloc(16 * rb);
	memcpy(sw, p.w + rb, rb), memcpy(sw + rb, p.w, rb), memcpy(sw + 2 * rb, p.w + 2 * rb, 14 * rb);
	cr_assert_eq(qrepack_pack(f, sw, 16, p.k, wr, 1), OCB_OK);
	float y0[16], y1[16];
	cr_assert_eq(qgemv_ref(f, p.w, 16, p.k, p.xq, y0, 1), OCB_OK);
	cr_assert_eq(qgemv_r8(f, wr, 16, p.k, p.xq, y1, 1), OCB_OK);
	cr_assert_gt(fabs((double)y0[0] - y1[0]), order_bound(&p, 0));
	cr_assert_leq(fabs((double)y0[0] - y1[1]), order_bound(&p, 0));
	free(sw);
	qrepack_free(wr);
	rprob_free(&p);
}

Test(qrepack, choice_and_overrides)
{
	const struct qformat *q40 = qformat_find("q4_0"), *tq1 = qformat_find("tq1_0");
	cr_assert_str_eq(qgemv_kind_name(QGEMV_REF), "ref");
	cr_assert_str_eq(qgemv_kind_name(QGEMV_AVX2), "avx2");
	cr_assert_str_eq(qgemv_kind_name(QGEMV_AVX2_R8), "avx2-r8");
	cr_assert_str_eq(qgemv_kind_name(QGEMV_VNNI_R8), "avxvnni-r8");
	cr_assert_str_eq(qgemv_kind_name(QGEMV_VNNI512_R8), "avx512vnni-r8");
	cr_assert_str_eq(qgemv_kind_name(QGEMV_VNNI512_R16), "avx512vnni-r16");
	cr_assert(qgemv_kind_r8(QGEMV_VNNI512_R8) && qgemv_kind_r8(QGEMV_VNNI512_R16));
	cr_assert(!qgemv_kind_r8(QGEMV_AVX2) && !qgemv_kind_r8(QGEMV_REF));
	cr_assert_eq(qgemv_choose(NULL), QGEMV_REF);
	if (ocb_cpu_avx2()) {
		setenv("OCB_QGEMV", "plain", 1);
		cr_assert_eq(qgemv_choose(q40), QGEMV_AVX2);
		setenv("OCB_QGEMV", "r8", 1);
		cr_assert_eq(qgemv_choose(q40), QGEMV_AVX2_R8);
		cr_assert_eq(qgemv_kind_r8(qgemv_choose(tq1)), qrepack_supported(tq1));
		setenv("OCB_QGEMV", "r8-vnni", 1);
		cr_assert_eq(qgemv_choose(q40), ocb_cpu_avxvnni() ? QGEMV_VNNI_R8 : QGEMV_AVX2_R8);
		setenv("OCB_QGEMV", "r8-vnni512", 1);
		cr_assert_eq(qgemv_choose(q40), ocb_cpu_avx512vnni() ? QGEMV_VNNI512_R8 : QGEMV_AVX2_R8);
		setenv("OCB_QGEMV", "r16", 1); /* else the best r8 this CPU has */
		cr_assert(qgemv_choose(q40) == (ocb_cpu_avx512vnni() ? QGEMV_VNNI512_R16 : qgemv_choose(tq1)));
		cr_assert_eq(qrepack_rows(q40), qgemv_choose(q40) == QGEMV_VNNI512_R16 ? 16 : 8);
		setenv("OCB_QGEMV", "ref", 1);
		cr_assert_eq(qgemv_choose(q40), QGEMV_REF);
		unsetenv("OCB_QGEMV");
		enum qgemv_kind k = qgemv_choose(q40);
		cr_assert(k == QGEMV_AVX2 || qgemv_kind_r8(k));
	}
	setenv("OCB_FORCE_SCALAR", "1", 1);
	ocb_cpu_reset();
	cr_assert_eq(qgemv_choose(q40), QGEMV_REF);
	/* the r8 entry point falls back to its plain-C twin */
	struct rprob p;
	rprob_init(&p, q40, 11, 64, 3);
	float y0[11], y1[11];
	cr_assert_eq(qrepack_pack(q40, p.w, p.m, p.k, p.wr, 2), OCB_OK);
	cr_assert_eq(qgemv_ref(q40, p.w, p.m, p.k, p.xq, y0, 1), OCB_OK);
	cr_assert_eq(qgemv_r8(q40, p.wr, p.m, p.k, p.xq, y1, 2), OCB_OK);
	cr_assert_eq(memcmp(y0, y1, sizeof y0), 0);
	rprob_free(&p);
	unsetenv("OCB_FORCE_SCALAR");
	ocb_cpu_reset();
}

Test(qrepack, bad_arguments)
{
	const struct qformat *f = qformat_find("q4_0");
	char w[18 * 16] = { 0 }, wr[18 * 16], xq[40 * 2] = { 0 };
	float y[8];
	cr_assert_eq(qrepack_pack(f, w, 8, 48, wr, 1), OCB_EINVAL); /* k not a multiple of 32 */
	cr_assert(strstr(ocb_lasterr(), "q4_0") != NULL);
	cr_assert_eq(qrepack_pack(f, NULL, 8, 32, wr, 1), OCB_EINVAL);
	cr_assert_eq(qgemv_r8(f, wr, 0, 32, xq, y, 1), OCB_EINVAL);
	cr_assert_eq(qgemv_r8_ref(f, wr, 8, 32, xq, NULL, 1), OCB_EINVAL);
	cr_assert_eq(qrepack_bytes(NULL, 8, 32), 0);
	cr_assert_eq(qrepack_pack(NULL, w, 8, 32, wr, 1), OCB_EINVAL);
	cr_assert_eq(qrepack_supported(NULL), 0);
}

Test(qrepack, cpu_identification)
{
	const struct ocb_cpu_id *c = ocb_cpu_id();
	cr_assert_not_null(c);
	cr_assert_eq(c, ocb_cpu_id(), "cached");
#if defined(__x86_64__) || defined(__i386__)
	cr_assert_gt(strlen(c->vendor), 0);
	cr_assert_gt(c->family, 0);
	__builtin_cpu_init();
	cr_assert_eq(c->avx2 != 0, __builtin_cpu_supports("avx2") != 0);
	cr_assert_eq(c->fma != 0, __builtin_cpu_supports("fma") != 0);
#endif
	struct ocb_cpu_id z = { .vendor = "AuthenticAMD", .family = 0x19, .model = 0x01 };
	cr_assert(ocb_cpu_is_zen3(&z));      /* Milan */
	z.model = 0x11;
	cr_assert_not(ocb_cpu_is_zen3(&z));  /* Genoa (Zen 4) */
	z.model = 0x21;
	cr_assert(ocb_cpu_is_zen3(&z));      /* Vermeer */
	struct ocb_cpu_id i = { .vendor = "GenuineIntel", .family = 6, .model = 0x01 };
	cr_assert_not(ocb_cpu_is_zen3(&i));
}

/* OCB_CPU_AS: the forms it takes and refuses (ocb_cpu.h; a malformed value in the
 * environment: tests/test_cli.c, bad_cpu_as_exits_2_with_one_line) */
Test(qrepack, cpu_as_parse)
{
	struct ocb_cpu_id c = { .vendor = "AuthenticAMD", .family = 0x1a, .model = 2 };
	cr_assert_eq(ocb_cpu_parse_as("GenuineIntel:6:0xcf", &c), 0);
	cr_assert_str_eq(c.vendor, "GenuineIntel");
	cr_assert_eq(c.family, 6);
	cr_assert_eq(c.model, 0xcf);
	cr_assert_eq(ocb_cpu_parse_as("AuthenticAMD:0x19:1", &c), 0);
	cr_assert(ocb_cpu_is_zen3(&c));
	const char *bad[] = { "", "GenuineIntel", "Intel:6:0xcf", "GenuineIntel:6",
			      "GenuineIntel:x:1", "GenuineIntel:6:0xcf:1", "GenuineIntel:0:1",
			      "GenuineIntel:6:256", "GenuineIntel::1", "GenuineIntel:6:-1" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(ocb_cpu_parse_as(bad[i], &c), -1, "accepted '%s'", bad[i]);
		cr_assert_str_eq(c.vendor, "AuthenticAMD", "'%s' changed the id", bad[i]);
	}
	cr_assert_eq(ocb_cpu_parse_as(NULL, &c), -1);
}

/* OCB_CPU_AS makes this process take the other vendor's layout; the ISA and the brand
 * stay this CPU's */
Test(qrepack, cpu_as_changes_the_choices)
{
	const struct ocb_cpu_id *c = ocb_cpu_id();
	char brand[sizeof c->brand];
	memcpy(brand, c->brand, sizeof brand);
	const int avx2 = c->avx2;
	setenv("OCB_CPU_AS", "GenuineIntel:6:0xcf", 1);
	ocb_cpu_reset();
	cr_assert_eq(ocb_cpu_id(), c, "same address");
	cr_assert_str_eq(c->vendor, "GenuineIntel");
	cr_assert_eq(c->model, 0xcf);
	cr_assert_str_eq(c->brand, brand);
	cr_assert_eq(c->avx2, avx2);
	cr_assert_eq(qrepack_panel_blocks(), 64);
	setenv("OCB_CPU_AS", "AuthenticAMD:0x1a:0x02", 1);
	ocb_cpu_reset();
	cr_assert_str_eq(ocb_cpu_id()->vendor, "AuthenticAMD");
	cr_assert_eq(qrepack_panel_blocks(), 512);
	unsetenv("OCB_CPU_AS");
	ocb_cpu_reset();
#if defined(__x86_64__) || defined(__i386__)
	unsigned max, b, cx, d; /* the vendor string again: EBX, EDX, ECX of leaf 0 */
	char vendor[13] = { 0 };
	cr_assert(__get_cpuid(0, &max, &b, &cx, &d));
	memcpy(vendor, &b, 4), memcpy(vendor + 4, &d, 4), memcpy(vendor + 8, &cx, 4);
	cr_assert_str_eq(ocb_cpu_id()->vendor, vendor, "unset: this CPU's vendor again");
#endif
}

/* Where pack puts each byte (quant_repack.h): Q8_0, 2 groups of R rows x nb blocks whose
 * scales and codes all differ, read back at the documented offsets. r8: per group, all
 * scales, then all codes; r16: column panels of qrepack_panel_blocks(), panel by panel; in
 * a panel, group by group; in a group, pairs of blocks, each pair's scales just before its
 * codes, an odd last block alone. */
static void check_layout(int R, int64_t nb)
{
	const struct qformat *f = qformat_find("q8_0");
	const int G = 2, m = G * R;
	const int64_t k = 32 * nb, pb = R == 16 ? qrepack_panel_blocks() : nb;
	const size_t bb = f->block_bytes, rb = bb * (size_t)nb, bbR = (size_t)R * bb;
	unsigned char *w = malloc(rb * (size_t)m), *wr = malloc(rb * (size_t)m);
	cr_assert(w && wr);
	for (int r = 0; r < m; r++)
		for (int64_t b = 0; b < nb; b++) {
			unsigned char *blk = w + (size_t)r * rb + (size_t)b * bb;
			blk[0] = (unsigned char)(7 * b + r), blk[1] = 0x3c; /* fp16 scale */
			for (int i = 0; i < 32; i++)
				blk[2 + i] = (unsigned char)(64 * b + 2 * r + i); /* codes */
		}
	cr_assert_eq(qrepack_rows(f), R);
	cr_assert_eq(qrepack_pack(f, w, m, k, wr, 1), OCB_OK);
	for (int64_t b = 0; b < nb; b++) {
		const int64_t b0 = b / pb * pb, nbp = nb - b0 < pb ? nb - b0 : pb, bl = b - b0;
		const int64_t p0 = R == 16 ? bl & ~(int64_t)1 : 0;
		const int64_t np = R == 16 ? (nbp - p0 < 2 ? 1 : 2) : nb;
		for (int r = 0; r < m; r++) {
			const size_t base = (size_t)b0 * G * bbR + (size_t)(r / R) * (size_t)nbp * bbR +
					    (size_t)p0 * bbR;
			const int rr = r % R;
			size_t s = base + ((size_t)(bl - p0) * (size_t)R + (size_t)rr) * 2;
			cr_assert_eq(wr[s], (unsigned char)(7 * b + r), "R=%d scale of block %lld row %d",
				     R, (long long)b, r);
			for (int u = 0; u < 8; u++) {
				size_t c = base + (size_t)np * (size_t)R * 2 +
					   ((size_t)(bl - p0) * 8 + (size_t)u) * 4 * (size_t)R + 4 * (size_t)rr;
				cr_assert_eq(wr[c], (unsigned char)(64 * b + 2 * r + 4 * u),
					     "R=%d unit %d of block %lld row %d", R, u, (long long)b, r);
			}
		}
	}
	free(w), free(wr);
}

Test(qrepack, layout_offsets_as_documented)
{
	setenv("OCB_QGEMV", "r8", 1);
	check_layout(8, 3);
	if (ocb_cpu_avx512vnni()) {
		setenv("OCB_QGEMV", "r16", 1);
		check_layout(16, 3);
		check_layout(16, 2 * qrepack_panel_blocks() + 3); /* 2 whole panels and 3 blocks */
	}
	unsetenv("OCB_QGEMV");
}

/* Q3_G's r16 code order (quant_repack.c q3_r16_codes), read back from the packed bytes of
 * 16 rows x one pair of blocks: slot s = e / 4 holds element e in byte i = e % 4 of units
 * A, B, C; slots 0-5 at bits 0-2 / 3-5 of A, B, C; slots 6, 7 at A / B bits 6-7 with their
 * high bit at C bit 6 / 7. Codes differ per element, row and block. */
Test(qrepack, q3_g_r16_code_order_as_documented)
{
	if (!ocb_cpu_avx512vnni())
		cr_skip_test("no AVX-512 VNNI: no r16 layout here");
	setenv("OCB_QGEMV", "r16", 1);
	const struct qformat *f = qformat_find("q3_g");
	enum { R = 16, NB = 2, BB = 16, U = 3 }; /* Q3_G block: d, m (fp16), qs[8], qh[4] */
	unsigned char w[R * NB * BB] = { 0 }, wr[R * NB * BB];
#define CODE(r, b, e) (((e) * 5 + (r) + 3 * (b)) % 8)
	for (int r = 0; r < R; r++)
		for (int b = 0; b < NB; b++) {
			unsigned char *blk = w + (r * NB + b) * BB;
			blk[1] = blk[3] = 0x3c; /* d = m = 1 */
			for (int e = 0; e < 32; e++) {
				blk[4 + e % 8] |= (unsigned char)((CODE(r, b, e) & 3) << (2 * (e / 8)));
				blk[12 + e / 8] |= (unsigned char)((CODE(r, b, e) >> 2) << (e % 8));
			}
		}
	cr_assert_eq(qrepack_rows(f), R);
	cr_assert_eq(qrepack_pack(f, w, R, 32 * NB, wr, 1), OCB_OK);
	for (int r = 0; r < R; r++)
		for (int b = 0; b < NB; b++)
			for (int e = 0; e < 32; e++) {
				const int s = e / 4, i = e % 4;
				/* a pair: 2 blocks x 2 scales x 16 rows of fp16, then the units */
				const unsigned char *unit = wr + NB * 2 * R * 2 + (b * U) * 4 * R + 4 * r + i;
				const int A = unit[0], B = unit[4 * R], C = unit[8 * R];
				const int got = s < 6 ? ((s < 2 ? A : s < 4 ? B : C) >> (3 * (s % 2))) & 7
						      : (((s == 6 ? A : B) >> 6) & 3) | ((C >> s) & 1) << 2;
				cr_assert_eq(got, CODE(r, b, e), "row %d block %d element %d", r, b, e);
			}
#undef CODE
	unsetenv("OCB_QGEMV");
}
