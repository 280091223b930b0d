/* bench_quant_gemm: batched Y[n][m] = X[n][k] W^T with quantized weights (prefill), every
 * format, batch 8/32/128, on the layout the GEMV runs (repacked at set-up, timed apart:
 * qgemm_r8; plain blocks and qgemm where the GEMV runs them); fp32 OpenBLAS sgemm (format
 * "f32") as the reference point.
 * Shared state and helpers: bench_quant_gemv.c (bench_quant.h). */
#include "bench_quant.h"

static const char *const all_formats[] = { "q8_0", "q4_0", "q4_1", "q3_g", "q2_g", "tq2_0", "tq1_0", "f32" };

static void add_case(cJSON *a, const char *fmt, int m, int k, int n)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "format", fmt);
	cJSON_AddNumberToObject(c, "m", m);
	cJSON_AddNumberToObject(c, "k", k);
	cJSON_AddNumberToObject(c, "n", n);
	cJSON_AddItemToArray(a, c);
}

/* full: 4096x4096 at batch 8, 32, 128; quick: 1024x1024 at batch 8 (at 512x512 the GEMM
 * took ~9 us on the Zen 5 VM, too short for a second thread to pay for its team) */
static cJSON *gemm_cases(const struct ocb_ctx *ctx)
{
	static const int batch[] = { 8, 32, 128 };
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < sizeof all_formats / sizeof *all_formats; i++) {
		if (ctx && ctx->quick) {
			add_case(a, all_formats[i], 1024, 1024, 8);
			continue;
		}
		for (size_t b = 0; b < sizeof batch / sizeof *batch; b++)
			add_case(a, all_formats[i], 4096, 4096, batch[b]);
	}
	return a;
}

static int gemm_setup(const cJSON *params, const struct ocb_ctx *ctx, void **state)
{
	return qbench_setup(params, ctx, 1, state);
}
static int gemm_run(void *state) { return qbench_run(state, 1); }
static int gemm_check(void *state, double *err) { return qbench_check(state, 1, err); }
static int gemm_work(const cJSON *params, struct ocb_work *w) { return qbench_work(params, 1, w); }

/* Declared parameters (collect/params.h). */
static const char *const gemm_formats[] = {"q8_0", "q4_0", "q4_1", "q3_g", "q2_g", "tq2_0",
					   "tq1_0", "f32", NULL};
static const struct ocb_param gemm_params[] = {
	{"format", OCB_P_ENUM, "\"q4_0\"", 0, 0, gemm_formats, "", "weight format (f32: OpenBLAS sgemm)"},
	{"m", OCB_P_INT, "4096", 1, 1 << 20, NULL, "rows", "rows of W (outputs)"},
	{"k", OCB_P_INT, "4096", 1, 1 << 20, NULL, "columns", "columns of W (inputs); a multiple of the format's block"},
	{"n", OCB_P_INT, "1", 1, 65536, NULL, "rows", "activation rows (the batch)"},
	{0},
};

const struct ocb_bench ocb_bench_quant_gemm = {
	.name = "quant_gemm",
	.doc = "batched GEMM (prefill) with quantized weights on the GEMV's repacked layout, each decoded weight vector used for 4 activation rows; f32 = OpenBLAS sgemm",
	.kind = OCB_KERNEL,
	.params = gemm_params,
	.cases = gemm_cases,
	.setup = gemm_setup,
	.run = gemm_run,
	.check = gemm_check,
	.work = gemm_work,
	.variant = qbench_variant,
	.teardown = qbench_teardown,
	.sweep_threads = 1,
};
