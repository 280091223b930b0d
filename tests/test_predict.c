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
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, &k, &p), OCB_OK);
	cr_assert_float_eq(p.t_mem, bytes / 12.5e9, 1e-15);
	cr_assert_float_eq(p.t_compute, ops / 400e9, 1e-15);
	cr_assert_float_eq(p.predicted_s, bytes / 12.5e9, 1e-15);
	cr_assert_str_eq(p.binds, "bw_dram");
	cr_assert_eq(p.roof, 12.5);
	cr_assert_eq(p.roof_threads, 1);
	cr_assert_float_eq(p.ratio, 0.015 / (bytes / 12.5e9), 1e-12);
	/* 2 threads: the aggregate roofs */
	k.threads = 2;
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, &k, &p), OCB_OK);
	cr_assert_float_eq(p.predicted_s, bytes / 20e9, 1e-15);
	cr_assert_eq(p.roof_threads, 2);
}

Test(predict, compute_binds_when_intensity_is_high)
{
	/* 1e9 ops over 1 MB from L3: 2.5 ms compute vs 40 us memory */
	struct ocb_pvm_case k = {"decode_pass", "roofline:ops_int8,bw_l3", 1, 1e9, 1e6, 0.003};
	struct ocb_pvm p;
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, &k, &p), OCB_OK);
	cr_assert_str_eq(p.binds, "ops_int8");
	cr_assert_float_eq(p.predicted_s, 1e9 / 400e9, 1e-15);
	cr_assert_float_eq(p.ratio, 1.2, 1e-12);
	cr_assert(ocb_pvm_within(p.ratio, 0.25));
	/* a 2-thread case with only a 1-thread L3 roof: the largest count below is used */
	k.threads = 2;
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, &k, &p), OCB_OK);
	cr_assert_float_eq(p.t_mem, 1e6 / 25e9, 1e-15);
	cr_assert_float_eq(p.t_compute, 1e9 / 800e9, 1e-15);
}

Test(predict, missing_roof_and_bad_input)
{
	struct ocb_pvm_case k = {"quant_gemv", "roofline:ops_int8,bw_l2", 1, 1e6, 1e6, 1e-3};
	struct ocb_pvm p;
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, &k, &p), OCB_OK);
	cr_assert(isnan(p.predicted_s) && isnan(p.ratio));
	cr_assert_str_eq(p.binds, "no bw_l2");
	cr_assert_not(ocb_pvm_within(p.ratio, 0.25));
	k.bound = "";
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, &k, &p), OCB_EINVAL);
	k.bound = "bw_dram";
	k.bytes = 0;
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, &k, &p), OCB_EINVAL);
	/* a lone bandwidth bound: bytes over the roof, whatever the ops */
	k.bytes = 25e6;
	k.ops = NAN;
	cr_assert_eq(ocb_pvm_predict(ceil_fix, NCEIL, &k, &p), OCB_OK);
	cr_assert_float_eq(p.predicted_s, 2e-3, 1e-15);
	cr_assert_float_eq(p.ratio, 0.5, 1e-12);
	cr_assert_not(ocb_pvm_within(p.ratio, 0.25));
	cr_assert_eq(ocb_pvm_predict(NULL, 0, &k, &p), OCB_OK);
	cr_assert(isnan(p.predicted_s));
}

Test(predict, pairing_rule)
{
	cr_assert(ocb_pvm_wanted("decode_pass", "roofline:ops_int8,bw_l3"));
	cr_assert(ocb_pvm_wanted("quant_gemv", "roofline:ops_int8,bw_dram"));
	cr_assert(ocb_pvm_wanted("quant_gemv", "roofline:flops_fp32,bw_dram"));
	cr_assert_not(ocb_pvm_wanted("quant_gemv", "roofline:ops_int8,bw_l3"));
	cr_assert_not(ocb_pvm_wanted("quant_gemm", "roofline:ops_int8,bw_dram"));
	cr_assert_not(ocb_pvm_wanted("quant_gemv", NULL));
	cr_assert(ocb_pvm_within(0.75, 0.25) && ocb_pvm_within(1.25, 0.25));
	cr_assert_not(ocb_pvm_within(1.2501, 0.25) || ocb_pvm_within(0.7499, 0.25));
}
