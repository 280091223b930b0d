/* quant_formats: fp16 conversion, the format table, row-level quantize/dequantize and the
 * int8 activation quantizer. Layouts and rounding rules: quant_formats.h. */
#include "quant_formats.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "../common/ocb_error.h"
#include "quant_impl.h"

/* ---- fp16 (IEEE 754 binary16) ---- */

uint16_t ocb_fp32_to_fp16(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof x);
	uint32_t sign = (x >> 16) & 0x8000u;
	uint32_t ax = x & 0x7fffffffu;

	if (ax >= 0x7f800000u) /* inf, or NaN kept quiet with its top payload bits */
		return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0));
	if (ax >= 0x477ff000u) /* >= 65520 rounds to infinity */
		return (uint16_t)(sign | 0x7c00u);
	if (ax < 0x38800000u) { /* below 2^-14: a half subnormal (units of 2^-24) or zero */
		if (ax < 0x33000000u) /* < 2^-25 (exactly 2^-25 ties to even -> 0) */
			return (uint16_t)sign;
		uint32_t e = ax >> 23;                      /* 102..112 */
		uint32_t mant = (ax & 0x7fffffu) | 0x800000u; /* value = mant * 2^(e-150) */
		uint32_t shift = 126 - e;                   /* 14..24 */
		uint32_t h = mant >> shift;
		uint32_t rem = mant & ((1u << shift) - 1);
		uint32_t half = 1u << (shift - 1);
		if (rem > half || (rem == half && (h & 1)))
			h++; /* may carry into the smallest normal: still the right encoding */
		return (uint16_t)(sign | h);
	}
	/* normal: rebias the exponent (127 -> 15) and drop 13 mantissa bits, RNE; a carry
	 * out of the mantissa correctly bumps the exponent. */
	uint32_t h = (ax - 0x38000000u) >> 13;
	uint32_t rem = ax & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
		h++;
	return (uint16_t)(sign | h);
}

float ocb_fp16_to_fp32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t e = (h >> 10) & 0x1fu;
	uint32_t mant = h & 0x3ffu;
	uint32_t x;
	if (e == 0) {
		float v = ldexpf((float)mant, -24); /* zero or subnormal */
		return sign ? -v : v;
	}
	if (e == 31)
		x = sign | 0x7f800000u | (mant << 13);
	else
		x = sign | ((e + 112) << 23) | (mant << 13);
	float f;
	memcpy(&f, &x, sizeof f);
	return f;
}

/* ---- shared scalar quantizer ---- */

void qi_quantize_minmax(const float *x, int n, int qmax, uint16_t *d, uint16_t *m, uint8_t *q)
{
	float lo = x[0], hi = x[0];
	for (int i = 1; i < n; i++) {
		lo = x[i] < lo ? x[i] : lo;
		hi = x[i] > hi ? x[i] : hi;
	}
	uint16_t mh = ocb_fp32_to_fp16(lo);
	float mr = ocb_fp16_to_fp32(mh);
	float span = hi - mr; /* hi -> qmax; values below an upward-rounded min clamp to 0 */
	if (span < 0.0f)
		span = 0.0f;
	uint16_t dh = ocb_fp32_to_fp16(span / (float)qmax);
	float dr = ocb_fp16_to_fp32(dh);
	float id = qi_inv(dr);
	for (int i = 0; i < n; i++)
		q[i] = (uint8_t)qi_clamp(qi_round((x[i] - mr) * id), 0, qmax);
	*d = dh;
	*m = mh;
}

/* ---- the table ---- */

/* quant16 is the QF_ROUND_FP16_AWARE quantizer */
#define QF_ENTRY(T, fmt, nm, blk, B, ab, quant16)                                             \
	[T] = { .name = nm, .type = T, .block = blk, .block_bytes = sizeof(B),                 \
		.bpw = 8.0 * (double)sizeof(B) / (double)(blk), .act_block = ab,                \
		.quantize_row_ref = fmt##_quantize_row_ref, .quantize_row_fp16aware = quant16,  \
		.dequantize_row = fmt##_dequantize_row,                                         \
		.vec_dot_ref = fmt##_vec_dot_ref, .vec_dot_avx2 = fmt##_vec_dot_avx2,           \
		.decode_row_ref = fmt##_decode_row_ref, .decode_row_avx2 = fmt##_decode_row_avx2 }

static const struct qformat qformat_table[QF_COUNT] = {
	QF_ENTRY(QF_Q8_0, q8_0, "q8_0", QK8_0, block_q8_0, 32, q8_0_quantize_row_fp16aware),
	QF_ENTRY(QF_Q4_0, q4_0, "q4_0", QK4_0, block_q4_0, 32, q4_0_quantize_row_fp16aware),
	QF_ENTRY(QF_Q4_1, q4_1, "q4_1", QK4_1, block_q4_1, 32, q4_1_quantize_row_fp16aware),
	QF_ENTRY(QF_Q3_G, q3_g, "q3_g", QK3_G, block_q3_g, 32, q3_g_quantize_row_ref),
	QF_ENTRY(QF_Q2_G, q2_g, "q2_g", QK2_G, block_q2_g, 32, q2_g_quantize_row_ref),
	QF_ENTRY(QF_TQ2_0, tq2_0, "tq2_0", QK_TQ, block_tq2_0, 256, tq2_0_quantize_row_fp16aware),
	QF_ENTRY(QF_TQ1_0, tq1_0, "tq1_0", QK_TQ, block_tq1_0, 256, tq1_0_quantize_row_fp16aware),
};

const struct qformat *qformat_find(const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < QF_COUNT; i++)
		if (strcasecmp(qformat_table[i].name, name) == 0)
			return &qformat_table[i];
	return NULL;
}

const struct qformat *qformat_get(enum qformat_type type)
{
	return (int)type >= 0 && type < QF_COUNT ? &qformat_table[type] : NULL;
}

int qformat_count(void)
{
	return QF_COUNT;
}

size_t qformat_row_bytes(const struct qformat *f, int64_t k)
{
	if (!f || k <= 0 || k % f->block)
		return 0;
	return (size_t)(k / f->block) * f->block_bytes;
}

static int check_shape(const struct qformat *f, const void *a, const void *b, int64_t rows,
		       int64_t k, int blk, const char *what)
{
	if (!f || !a || !b)
		return ocb_seterr(OCB_EINVAL, "%s: NULL format or buffer", what);
	if (rows < 0 || k <= 0 || k % blk)
		return ocb_seterr(OCB_EINVAL, "%s %s: k=%lld is not a positive multiple of %d",
				  what, f->name, (long long)k, blk);
	return OCB_OK;
}

int qformat_quantize_as(const struct qformat *f, enum qformat_rounding r, const float *x,
			void *q, int64_t rows, int64_t k)
{
	int rc = check_shape(f, x, q, rows, k, f ? f->block : 1, "quantize");
	if (rc)
		return rc;
	if (!qformat_rounding_name(r))
		return ocb_seterr(OCB_EINVAL, "quantize %s: unknown rounding %d", f->name, (int)r);
	void (*row)(const float *, void *, int64_t) =
		r == QF_ROUND_GGML ? f->quantize_row_ref : f->quantize_row_fp16aware;
	size_t rb = qformat_row_bytes(f, k);
	for (int64_t i = 0; i < rows; i++)
		row(x + i * k, (char *)q + (size_t)i * rb, k);
	return OCB_OK;
}

int qformat_quantize(const struct qformat *f, const float *x, void *q, int64_t rows, int64_t k)
{
	return qformat_quantize_as(f, QF_ROUND_GGML, x, q, rows, k);
}

int qformat_has_fp16aware(const struct qformat *f)
{
	return f && f->quantize_row_fp16aware != f->quantize_row_ref;
}

const char *qformat_rounding_name(enum qformat_rounding r)
{
	switch (r) {
	case QF_ROUND_GGML:
		return "ggml";
	case QF_ROUND_FP16_AWARE:
		return "fp16-aware";
	}
	return NULL;
}

int qformat_dequantize(const struct qformat *f, const void *q, float *x, int64_t rows,
		       int64_t k)
{
	int rc = check_shape(f, q, x, rows, k, f ? f->block : 1, "dequantize");
	if (rc)
		return rc;
	size_t rb = qformat_row_bytes(f, k);
	for (int64_t r = 0; r < rows; r++)
		f->dequantize_row((const char *)q + (size_t)r * rb, x + r * k, k);
	return OCB_OK;
}

/* ---- activations ---- */

size_t qformat_act_bytes(const struct qformat *f, int64_t n, int64_t k)
{
	if (!f || n <= 0 || k <= 0 || k % f->act_block)
		return 0;
	size_t bb = f->act_block == 256 ? sizeof(block_qa256) : sizeof(block_qa32);
	return (size_t)n * (size_t)(k / f->act_block) * bb;
}

/* One block of B activations: d = max|x|/127, q = round(x/d), s = sum q. */
static float quantize_act_block(const float *x, int B, float *d, int32_t *s, int8_t *qs)
{
	float amax = 0.0f;
	for (int i = 0; i < B; i++)
		amax = fmaxf(amax, fabsf(x[i]));
	float dd = amax / 127.0f;
	float id = qi_inv(dd);
	int32_t sum = 0;
	for (int i = 0; i < B; i++) {
		int v = qi_clamp(qi_round(x[i] * id), -127, 127);
		qs[i] = (int8_t)v;
		sum += v;
	}
	*d = dd;
	*s = sum;
	return dd * (float)sum;
}

int qformat_quantize_act(const struct qformat *f, const float *x, void *xq, int64_t n, int64_t k)
{
	int rc = check_shape(f, x, xq, n, k, f ? f->act_block : 1, "quantize activations");
	if (rc)
		return rc;
	int64_t nb = k / f->act_block;
	for (int64_t r = 0; r < n; r++) {
		const float *xr = x + r * k;
		if (f->act_block == 256) {
			block_qa256 *a = (block_qa256 *)xq + r * nb;
			for (int64_t b = 0; b < nb; b++)
				quantize_act_block(xr + b * 256, 256, &a[b].d, &a[b].s, a[b].qs);
		} else {
			block_qa32 *a = (block_qa32 *)xq + r * nb;
			for (int64_t b = 0; b < nb; b++) {
				int32_t s;
				a[b].ds = quantize_act_block(xr + b * 32, 32, &a[b].d, &s, a[b].qs);
			}
		}
	}
	return OCB_OK;
}
