/* predict: predicted vs measured on fixture data: the roofline time of a DRAM-bound GEMV
 * (bandwidth binds), a compute-bound case, the thread matching of the ceilings (1-thread
 * case against per-thread roofs, 2-thread case against the aggregate), a missing roof,
 * the pairing rule (which cases are shown) and the within-25% test. Expected values by
 * hand from the numbers below. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../analysis/predict.h"
#include "../common/ocb_error.h"

static const struct ocb_roof_ceil ceil_fix[] = {
	{"bw_dram", 1, 12.5},   {"bw_dram", 2, 20.0},   {"bw_l3", 1, 25.0},
	{"ops_int8", 1, 400.0}, {"ops_int8", 2, 800.0}, {"flops_fp32", 1, 100.0},
};
#define NCEIL (sizeof ceil_fix / sizeof ceil_fix[0])

Test(predict, dram_gemv_bandwidth_binds)
{
	/* 16384 x 16384 q4_0: 151 MB of weights read once, 2 x 16384^2 int8 ops */
	const double bytes = 16384.0 * 16384 / 32 * 18, ops = 2.0 * 16384 * 16384;
	struct ocb_pvm_case k = {"quant_gemv", "roofline:ops_int8,bw_dram", 1, ops, bytes, 0.015};
	struct ocb_pvm p;
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, NULL, &k, &p), OCB_OK);
	cr_assert_float_eq(p.t_mem, bytes / 12.5e9, 1e-15);
	cr_assert_float_eq(p.t_compute, ops / 400e9, 1e-15);
	cr_assert_float_eq(p.predicted_s, bytes / 12.5e9, 1e-15);
	cr_assert_str_eq(p.binds, "bw_dram");
	cr_assert_eq(p.roof, 12.5);
	cr_assert_eq(p.roof_threads, 1);
	cr_assert_float_eq(p.ratio, 0.015 / (bytes / 12.5e9), 1e-12);
	/* 2 threads: the aggregate roofs */
	k.threads = 2;
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, NULL, &k, &p), OCB_OK);
	cr_assert_float_eq(p.predicted_s, bytes / 20e9, 1e-15);
	cr_assert_eq(p.roof_threads, 2);
}

Test(predict, compute_binds_when_intensity_is_high)
{
	/* 1e9 ops over 1 MB from L3: 2.5 ms compute vs 40 us memory */
	struct ocb_pvm_case k = {"decode_pass", "roofline:ops_int8,bw_l3", 1, 1e9, 1e6, 0.003};
	struct ocb_pvm p;
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, NULL, &k, &p), OCB_OK);
	cr_assert_str_eq(p.binds, "ops_int8");
	cr_assert_float_eq(p.predicted_s, 1e9 / 400e9, 1e-15);
	cr_assert_float_eq(p.ratio, 1.2, 1e-12);
	cr_assert(ocb_pvm_within(p.ratio, 0.25));
	/* a 2-thread case with only a 1-thread L3 roof: the largest count below is used */
	k.threads = 2;
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, NULL, &k, &p), OCB_OK);
	cr_assert_float_eq(p.t_mem, 1e6 / 25e9, 1e-15);
	cr_assert_float_eq(p.t_compute, 1e9 / 800e9, 1e-15);
}

Test(predict, missing_roof_and_bad_input)
{
	struct ocb_pvm_case k = {"quant_gemv", "roofline:ops_int8,bw_l2", 1, 1e6, 1e6, 1e-3};
	struct ocb_pvm p;
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, NULL, &k, &p), OCB_OK);
	cr_assert(isnan(p.predicted_s) && isnan(p.ratio));
	cr_assert_str_eq(p.binds, "no bw_l2");
	cr_assert_not(ocb_pvm_within(p.ratio, 0.25));
	k.bound = "";
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, NULL, &k, &p), OCB_EINVAL);
	k.bound = "bw_dram";
	k.bytes = 0;
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, NULL, &k, &p), OCB_EINVAL);
	/* a lone bandwidth bound: bytes over the roof, whatever the ops */
	k.bytes = 25e6;
	k.ops = NAN;
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, NULL, &k, &p), OCB_OK);
	cr_assert_float_eq(p.predicted_s, 2e-3, 1e-15);
	cr_assert_float_eq(p.ratio, 0.5, 1e-12);
	cr_assert_not(ocb_pvm_within(p.ratio, 0.25));
	cr_assert_eq(ocb_pvm_predict(NULL, 0, NULL, &k, &p), OCB_OK);
	cr_assert(isnan(p.predicted_s));
}

static int wanted(const char *bench, const char *bound, const struct ocb_roof_caches *m)
{
	const struct ocb_pvm_case k = {bench, bound, 1, 1e6, 40e6, 1e-3};
	return ocb_pvm_wanted(&k, m);
}

Test(predict, pairing_rule)
{
	cr_assert(wanted("decode_pass", "roofline:ops_int8,bw_l3", NULL));
	cr_assert(wanted("quant_gemv", "roofline:ops_int8,bw_dram", NULL));
	cr_assert(wanted("quant_gemv", "roofline:flops_fp32,bw_dram", NULL));
	cr_assert_not(wanted("quant_gemv", "roofline:ops_int8,bw_l3", NULL));
	cr_assert_not(wanted("quant_gemm", "roofline:ops_int8,bw_dram", NULL));
	cr_assert_not(wanted("quant_gemv", NULL, NULL));
	cr_assert(ocb_pvm_within(0.75, 0.25) && ocb_pvm_within(1.25, 0.25));
	cr_assert_not(ocb_pvm_within(1.2501, 0.25) || ocb_pvm_within(0.7499, 0.25));
}

/* The level from the machine's caches. A 40 MB case stored as L3-bound (the run knew a
 * 480 MiB L3): against a 32 MiB last-level cache, 2 MiB L2 and 48 KiB L1d per core,
 * 2 cores, 40e6 > 32 MiB + 2 (2 MiB + 48 KiB) = 37.85e6 bytes, so DRAM: the bandwidth
 * roof moves to bw_dram (12.5 GB/s: 40e6 / 12.5e9 = 3.2 ms) and the GEMV joins the
 * DRAM-bound table; against the 480 MiB it stays at bw_l3 (25 GB/s: 1.6 ms). A stored
 * DRAM level is never raised to a faster one by larger caches, and a triad roof keeps
 * its suffix. */
Test(predict, level_from_the_caches)
{
	const struct ocb_roof_caches small = {48 * 1024.0, 2 * 1048576.0, 32 * 1048576.0, 2, 2, 0};
	const struct ocb_roof_caches big = {48 * 1024.0, 2 * 1048576.0, 480 * 1048576.0, 2, 2, 0};
	struct ocb_pvm_case k = {"quant_gemv", "roofline:ops_int8,bw_l3", 1, 1e6, 40e6, 4e-3};
	struct ocb_pvm p;
	cr_assert_eq(ocb_pvm_level(&k, NULL), OCB_LEVEL_L3);
	cr_assert_eq(ocb_pvm_level(&k, &big), OCB_LEVEL_L3);
	cr_assert_eq(ocb_pvm_level(&k, &small), OCB_LEVEL_DRAM);
	cr_assert(wanted("quant_gemv", "roofline:ops_int8,bw_l3", &small));
	cr_assert_not(wanted("quant_gemv", "roofline:ops_int8,bw_l3", &big));
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, &small, &k, &p), OCB_OK);
	cr_assert_str_eq(p.binds, "bw_dram");
	cr_assert(p.relevelled);
	cr_assert_float_eq(p.predicted_s, 3.2e-3, 1e-15);
	cr_assert_float_eq(p.ratio, 1.25, 1e-12);
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, &big, &k, &p), OCB_OK);
	cr_assert_str_eq(p.binds, "bw_l3");
	cr_assert_not(p.relevelled);
	cr_assert_float_eq(p.predicted_s, 1.6e-3, 1e-15);
	/* 1 MB stored at DRAM (rotated copies): the caches would say L2, DRAM stays */
	k.bound = "roofline:ops_int8,bw_dram";
	k.bytes = 1e6;
	cr_assert_eq(ocb_pvm_level(&k, &big), OCB_LEVEL_DRAM);
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, &big, &k, &p), OCB_OK);
	cr_assert_str_eq(p.binds, "bw_dram");
	cr_assert_not(p.relevelled);
	/* a triad bound moves with its suffix (no such roof here: NaN, named) */
	k.bound = "bw_l3_triad";
	k.bytes = 40e6;
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, &small, &k, &p), OCB_OK);
	cr_assert_str_eq(p.binds, "no bw_dram_triad");
	cr_assert(isnan(p.predicted_s));
	/* a lone compute bound has no level */
	k.bound = "ops_int8";
	cr_assert_eq(ocb_pvm_level(&k, &small), -1);
}
