/* quant_apply: dispatch of one weight matrix to a quantization method (see header). */
#include "quant_apply.h"

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "quant_ternary.h"

#include <string.h>

static int padded_in(const struct qformat *f, int in)
{
	return (in + f->block - 1) / f->block * f->block;
}

int64_t quant_apply_cost_bits(const struct quant_method *m, int out, int in)
{
	switch (m->kind) {
	case QA_RTN:
	case QA_GPTQ:
		return quant_cost_bits(&m->q, out, in);
	case QA_FORMAT:
		return (int64_t)out * (padded_in(m->fmt, in) / m->fmt->block) *
		       (int64_t)m->fmt->block_bytes * 8;
	case QA_TERNARY:
		return quant_ternary_cost_bits(out, in, m->per_row);
	case QA_FP32:
	default:
		return (int64_t)out * in * 32;
	}
}

const char *quant_method_name(const struct quant_method *m)
{
	switch (m->kind) {
	case QA_RTN:
		return "rtn";
	case QA_GPTQ:
		return "gptq";
	case QA_FORMAT:
		return m->fmt ? m->fmt->name : "format";
	case QA_TERNARY:
		return m->per_row ? "ternary_row" : "ternary";
	case QA_FP32:
	default:
		return "fp32";
	}
}

/* Block format: pad rows to the block, quantize (rounding r), dequantize_row, unpad. */
static int apply_format(const struct qformat *f, enum qformat_rounding r, const float *w,
			int out, int in, float *wq)
{
	int st = OCB_OK, inp = padded_in(f, in);
	size_t rb = qformat_row_bytes(f, inp);
	float *pad = NULL;
	void *blk = NULL;
	pad = ocb_alloc((size_t)out * inp * sizeof *pad);
	blk = ocb_alloc((size_t)out * rb);
	if (!pad || !blk) {
		st = OCB_ENOMEM;
		goto out;
	}
	for (int r = 0; r < out; r++) /* padding stays 0 (ocb_alloc zeroes) */
		memcpy(pad + (size_t)r * inp, w + (size_t)r * in, (size_t)in * sizeof *pad);
	if ((st = qformat_quantize_as(f, r, pad, blk, out, inp)) != OCB_OK)
		goto out;
	if ((st = qformat_dequantize(f, blk, pad, out, inp)) != OCB_OK)
		goto out;
	for (int r = 0; r < out; r++)
		memcpy(wq + (size_t)r * in, pad + (size_t)r * inp, (size_t)in * sizeof *wq);
out:
	ocb_free(pad);
	ocb_free(blk);
	return st;
}

int quant_apply(const struct quant_method *m, const float *w, int out, int in, const float *h,
		float *wq, int64_t *cost_bits, double *loss)
{
	int st;
	if (!m || !w || !wq || out <= 0 || in <= 0)
		return ocb_seterr(OCB_EINVAL, "quant_apply: bad arguments");
	if (loss)
		*loss = 0.0;
	switch (m->kind) {
	case QA_FP32:
		if (wq != w)
			memcpy(wq, w, (size_t)out * in * sizeof *wq);
		st = OCB_OK;
		break;
	case QA_RTN:
		st = quant_rtn(w, out, in, &m->q, wq, NULL, NULL);
		break;
	case QA_GPTQ: {
		if (!h)
			return ocb_seterr(OCB_EINVAL, "quant_apply: GPTQ needs calibration (H)");
		struct quant_gptq_cfg c = {m->q, m->act_order, 128, 0.01f};
		st = quant_gptq(w, out, in, h, &c, wq, NULL, NULL, loss);
		break;
	}
	case QA_FORMAT:
		if (!m->fmt)
			return ocb_seterr(OCB_EINVAL, "quant_apply: no block format given");
		st = apply_format(m->fmt, m->rounding, w, out, in, wq);
		break;
	case QA_TERNARY:
		st = quant_ternary(w, out, in, m->per_row, wq, NULL, NULL);
		break;
	default:
		return ocb_seterr(OCB_EINVAL, "quant_apply: unknown method %d", (int)m->kind);
	}
	if (st == OCB_OK && cost_bits)
		*cost_bits = quant_apply_cost_bits(m, out, in);
	return st;
}
