/* quant_ternary: BitNet b1.58 absmean ternary weights (Ma et al., "The Era of 1-bit
 * LLMs", 2024; REFERENCE.md §1): g = mean|W|, W_t = clamp(round(W / (g + eps)), -1, 1),
 * dequantized W ~= g * W_t. Per tensor (one g) or per output row (one g per row).
 *
 * Shapes: W [out][in] row-major. Storage cost counted as 2 bits per weight (the I2_S /
 * TQ2_0-style 2-bit code) plus one fp32 scale per tensor or fp16 scale per row. */
#ifndef QUANT_TERNARY_H
#define QUANT_TERNARY_H

#include <stdint.h>

#define QUANT_TERNARY_EPS 1e-5f

/* wq [out][in] = g * clamp(round(w / (g + eps)), -1, 1) (wq may equal w).
 * per_row = 0: one g for the tensor, written to scales[0]; per_row = 1: g per row,
 * scales[out]. codes [out][in] (may be NULL) receives the ternary values -1/0/1.
 * scales may be NULL. Returns OCB_OK or OCB_EINVAL. */
int quant_ternary(const float *w, int out, int in, int per_row, float *wq, float *scales,
		  int8_t *codes);

/* Exact storage bits: 2 per weight + 32 (per tensor) or 16 per row. */
int64_t quant_ternary_cost_bits(int out, int in, int per_row);

#endif
