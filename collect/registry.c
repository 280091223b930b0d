#include "registry.h"

#include <string.h>

#define OCB_BENCH_ROW(sym, suite) {&ocb_bench_##sym, suite},
const struct ocb_bench_entry ocb_benches[] = {OCB_BENCHES(OCB_BENCH_ROW)};
#undef OCB_BENCH_ROW
const size_t ocb_nbenches = sizeof ocb_benches / sizeof ocb_benches[0];

const struct ocb_suite_info ocb_suites[] = {
	{"baseline", "OpenBLAS sgemm and sgemv, STREAM copy and triad: the dense and bandwidth "
		     "baselines"},
	{"train", "fp32 reference training: MLP on Fashion-MNIST (and the byte LM); accuracy, "
		  "loss curves, throughput, memory, MLLOG, checkpoints"},
	{"quant", "low-bit formats: GEMV/GEMM kernels at the memory/compute limits, accuracy "
		  "vs bits"},
	{"compress", "static analysis checked (a decode step vs its roofline prediction) and "
		     "progressive compression of the LM (pivot, block-wise, global) at 4/3/2 bits"},
	{"dist", "MPI: collectives (nccl-tests columns, alpha-beta fit) and data-parallel MLP "
		 "training (LARS, overlapped all-reduce, MLLOG per rank); run --ranks 1,2,4"},
	{"ternary", "training with low-bit weights: fp32 vs BitNet b1.58 STE vs DQT (8/4/3 bits, "
		    "ternary; fp32/bf16/fp8 moments): accuracy, curves, bytes/param, TQ export"},
	{"sparse", "block-sparse SpMM (BSR) vs OpenBLAS dense and librsb: density x block x n"},
};
const size_t ocb_nsuites = sizeof ocb_suites / sizeof ocb_suites[0];

const struct ocb_bench *ocb_bench_find(const char *name)
{
	for (size_t i = 0; i < ocb_nbenches; i++)
		if (strcmp(ocb_benches[i].bench->name, name) == 0)
			return ocb_benches[i].bench;
	return NULL;
}

const char *ocb_bench_home(const struct ocb_bench *b)
{
	for (size_t i = 0; i < ocb_nbenches; i++)
		if (ocb_benches[i].bench == b)
			return ocb_benches[i].suite;
	return "";
}

const struct ocb_suite_info *ocb_suite_find(const char *name)
{
	for (size_t i = 0; i < ocb_nsuites; i++)
		if (strcmp(ocb_suites[i].name, name) == 0)
			return &ocb_suites[i];
	return NULL;
}

cJSON *ocb_suite_builtin_json(const char *name)
{
	if (!ocb_suite_find(name))
		return NULL;
	cJSON *s = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(s, "benches");
	if (!cJSON_AddStringToObject(s, "name", name) || !a) {
		cJSON_Delete(s);
		return NULL;
	}
	for (size_t i = 0; i < ocb_nbenches; i++) {
		if (strcmp(ocb_benches[i].suite, name) != 0)
			continue;
		cJSON *e = cJSON_CreateObject();
		cJSON_AddItemToArray(a, e);
		if (!e || !cJSON_AddStringToObject(e, "bench", ocb_benches[i].bench->name)) {
			cJSON_Delete(s);
			return NULL;
		}
	}
	return s;
}
