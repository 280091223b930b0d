/* quant_gptq: GPTQ post-training quantization of one linear layer (Frantar, Ashkboos,
 * Hoefler, Alistarh, "GPTQ: Accurate Post-Training Quantization for Generative
 * Pre-trained Transformers", ICLR 2023; steps in REFERENCE.md §1), on the same b-bit
 * group grid as RTN (quant_rtn.h), so the two differ only in how codes are chosen.
 *
 * Shapes: W [out][in] row-major, calibration activations X [n][in] (the layer's inputs),
 * Hessian H [in][in] = 2 X^T X summed over calibration rows (its scale does not matter:
 * damping is relative to mean(diag H)).
 *
 * Steps: dead columns (diag H == 0) get diag 1 and a zero weight column; optional
 * act-order permutes columns by descending diag H (with groups, the scales are then
 * fitted up front on the natural column groups — GPTQ's "static groups" — so the result
 * is stored in the ordinary group layout with no column index); H += damp * mean(diag H)
 * * I; U = upper Cholesky factor of H^-1; columns are quantized in blocks of `block`
 * (128) with the error of each column spread over the rest of the block
 * (err = (w_i - q_i) / U_ii, w_{i+1:} -= err U_{i,i+1:}) and one lazy sgemm update of all
 * later columns per block; without act-order the group scale/zero is refitted at every
 * group boundary on the already-updated weights. */
#ifndef QUANT_GPTQ_H
#define QUANT_GPTQ_H

#include <stdint.h>

#include "quant_rtn.h"

struct quant_gptq_cfg {
	struct quant_cfg q; /* bits, group, sym: the grid */
	int act_order;      /* 1: process columns by descending diag H */
	int block;          /* columns per lazy-update block; <= 0 -> 128 */
	float damp;         /* relative dampening; <= 0 -> 0.01 */
};

/* h [in][in] += 2 x^T x for x [n][in] (cblas_ssyrk; both triangles are written).
 * Call repeatedly to accumulate calibration batches; zero h first. */
void quant_hessian_add(float *h, int in, const float *x, int n);

/* GPTQ on w [out][in] with Hessian h [in][in] (not modified; a working copy is made).
 * wq [out][in] receives the dequantized weights (wq may equal w). scales/zeros, when not
 * NULL, receive [out][ngroups] in natural column-group order, as quant_rtn does.
 * *loss (may be NULL) receives GPTQ's error estimate sum_i (w_i - q_i)^2 / U_ii^2 / 2,
 * the proxy for the increase of ||X W^T - X Q^T||^2 / 2 per unit of H.
 * Returns OCB_OK, OCB_EINVAL (bad cfg/shape), OCB_ENOMEM, or OCB_ERUNTIME when the
 * Cholesky factorisation fails (H not positive definite even after damping). */
int quant_gptq(const float *w, int out, int in, const float *h, const struct quant_gptq_cfg *c,
	       float *wq, float *scales, uint8_t *zeros, double *loss);

/* Output error of replacing w by q on calibration inputs, via the Hessian:
 * sum_r (w_r - q_r)^T H (w_r - q_r) / 2 = ||X W^T - X Q^T||_F^2 when h = 2 X^T X. */
double quant_output_err(const float *w, const float *q, int out, int in, const float *h);

/* The same per output row: rows[r] = (w_r - q_r)^T H (w_r - q_r) / 2 (rows [out]); returns
 * their sum, or NAN (rows untouched) when out of memory. */
double quant_output_err_rows(const float *w, const float *q, int out, int in, const float *h,
			     double *rows);

#endif
