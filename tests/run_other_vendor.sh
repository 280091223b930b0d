#!/bin/sh
# Runs the suites whose kernels choose by CPU vendor/family/model (kernels/quant_repack.c,
# kernels/qgemv_plan.c) once more as the other vendor's CPU (OCB_CPU_AS, common/ocb_cpu.h):
# on AMD as the Xeon model 0xcf (one stream, 64-block panels, Intel's prefetch), elsewhere
# as the Zen 5 (several streams, 512-block panels). The instruction set stays this CPU's,
# so every machine runs both vendors' layouts and settings in `make check`.
set -e
cd "$(dirname "$0")/.."
if grep -q '^vendor_id.*AuthenticAMD' /proc/cpuinfo; then
	as=GenuineIntel:6:0xcf
else
	as=AuthenticAMD:0x1a:0x02
fi
echo "tests/run_other_vendor.sh: the vendor-dependent suites again, as OCB_CPU_AS=$as"
suites='qrepack|qgemm_r8|qgemv_plan|qkernel|quantapply|decode_pass'
OCB_CPU_AS=$as exec tests/run.sh --filter "@($suites)/*"
