/* quant_apply: one entry point that applies any weight-quantization method of the quant
 * suite to one weight matrix and returns the fake-quantized (dequantized) fp32 weights and
 * the exact storage cost — so the accuracy workload can sweep method x bits x group over
 * every linear of a model with one loop.
 *
 * Methods: fp32 (copy), RTN and GPTQ on the b-bit group grid (quant_rtn.h, quant_gptq.h),
 * a ggml-style block format from the quant format table (kernels/quant_formats.h:
 * quantize with the method's rounding — ggml's bytes by default — then dequantize_row, so
 * the values are exactly what the kernels multiply with), BitNet absmean ternary
 * (quant_ternary.h).
 *
 * Block formats need in % block == 0; other rows are zero-padded to the next multiple of
 * the block (the padding quantizes to 0 and does not change any scale), and the padded
 * blocks are counted in the cost. E.g. the MLP's 784-wide input rows take 25 Q8_0 blocks.
 *
 * Shapes: w, wq [out][in] row-major; h [in][in] (2 X^T X, GPTQ only). */
#ifndef QUANT_APPLY_H
#define QUANT_APPLY_H

#include <stddef.h>
#include <stdint.h>

#include "../kernels/quant_formats.h"
#include "quant_gptq.h"
#include "quant_rtn.h"

enum quant_kind { QA_FP32 = 0, QA_RTN, QA_GPTQ, QA_FORMAT, QA_TERNARY };

struct quant_method {
	enum quant_kind kind;
	struct quant_cfg q;        /* RTN, GPTQ: bits, group, sym */
	int act_order;             /* GPTQ */
	const struct qformat *fmt; /* QA_FORMAT */
	enum qformat_rounding rounding; /* QA_FORMAT: QF_ROUND_GGML (0, default) or fp16-aware */
	int per_row;               /* QA_TERNARY: 1 = a scale per output row */
};

/* wq = Q(w) by method m (wq may equal w for every method). *cost_bits (may be NULL):
 * exact storage in bits incl. scales/zeros/padding (fp32: 32 per weight). *loss (may be
 * NULL): GPTQ's error estimate, else 0. h is required for QA_GPTQ (OCB_EINVAL if NULL).
 * Returns OCB_OK or the quantizer's error (detail set). */
int quant_apply(const struct quant_method *m, const float *w, int out, int in, const float *h,
		float *wq, int64_t *cost_bits, double *loss);

/* Storage in bits without quantizing (the planner's costs). */
int64_t quant_apply_cost_bits(const struct quant_method *m, int out, int in);

/* Short names for tables and plans: "fp32", "rtn", "gptq", the format name ("q4_0"),
 * "ternary" / "ternary_row". Never NULL. */
const char *quant_method_name(const struct quant_method *m);

#endif
