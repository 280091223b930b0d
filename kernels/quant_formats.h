/* quant_formats: the low-bit weight formats of the `quant` suite (REFERENCE.md §2), their
 * packed block layouts, the format table code iterates by name, fp16 <-> fp32, and the
 * int8 activation blocks the kernels (quant_gemv.h) multiply them with.
 *
 * Layouts (all little-endian, fp16 = IEEE binary16 stored as uint16_t):
 *
 *   Q8_0  (ggml)  32 weights, 34 B, 8.5 bpw:    d fp16 | qs[32] int8;       x = d*q
 *   Q4_0  (ggml)  32 weights, 18 B, 4.5 bpw:    d fp16 | qs[16] nibbles;    x = d*(q-8)
 *                 byte j: element j in the low nibble, element j+16 in the high nibble
 *   Q4_1  (ggml)  32 weights, 20 B, 5.0 bpw:    d fp16 | m fp16 | qs[16];   x = d*q + m
 *                 nibble layout as Q4_0
 *   Q3_G  (ours)  32 weights, 16 B, 4.0 bpw:    d fp16 | m fp16 | qs[8] | qh[4];
 *                 x = d*q + m, q in 0..7. Low two bits in qs: byte j (0..7) holds
 *                 elements j, j+8, j+16, j+24 at bits 0-1, 2-3, 4-5, 6-7. Bit 2 of element i
 *                 is bit i of qh read as a little-endian uint32 (a bit plane, as ggml's
 *                 Q3_K hmask, so AVX2 expands it with one shuffle + compare).
 *   Q2_G  (ours)  32 weights, 12 B, 3.0 bpw:    d fp16 | m fp16 | qs[8];
 *                 x = d*q + m, q in 0..3, qs laid out as Q3_G's low bits.
 *   TQ2_0 (ggml) 256 weights, 66 B, 2.0625 bpw: qs[64] | d fp16;  x = d*(q-1), q in {0,1,2}
 *                 byte 32*h + m (h = 0,1; m = 0..31) holds element 128*h + 32*n + m at
 *                 bits 2n..2n+1 (n = 0..3).
 *   TQ1_0 (ggml) 256 weights, 54 B, 1.6875 bpw: qs[48] | qh[4] | d fp16; x = d*(t-1), t a
 *                 trit in {0,1,2}. A byte holding trits t0..t4 (t0 most significant) stores
 *                 v = ceil(256 * (t0*81 + t1*27 + t2*9 + t3*3 + t4) / 243), so trit n is
 *                 read back as (((v * 3^n) mod 256) * 3) >> 8 (a fixed-point base-3 number;
 *                 ggml's TQ1_0, llama.cpp PR #8151). 48*5 + 4*4 = 256 trits, + 2 B scale:
 *                   qs[0..32):  byte m holds elements m + 32n,        n = 0..4 (0..159)
 *                   qs[32..48): byte 32+m holds elements 160 + m + 16n, n = 0..4 (160..239)
 *                   qh[0..4):   byte j holds elements 240 + j + 4n, n = 0..3, as trits
 *                               t0..t3 with t4 = 0 (240..255)
 *
 * Rounding (enum qformat_rounding). The default, QF_ROUND_GGML, is ggml's reference
 * quantizer (quantize_row_*_ref in ggml/src/ggml-quants.c) byte for byte for Q8_0, Q4_0,
 * Q4_1, TQ2_0 and TQ1_0: the scale is computed and inverted in fp32, the codes are chosen
 * against that fp32 scale (halves away from zero: roundf / lroundf, or up: truncation of
 * + 8.5 / + 0.5), and only then the scale (and Q4_1's min) is stored as fp16 (RNE, overflow
 * to inf, underflow to 0; the codes are written regardless). Where ggml's C is undefined
 * (x*id infinite or NaN, see qi_cvt_i8 in quant_impl.h) its GCC x86-64 build is followed.
 * Q8_0 and TQ*: d = max|x| / 127 (resp. max|x|); Q4_0: d = -(the first signed value of
 * largest magnitude) / 8 so that value maps to q = 0; Q4_1: d = (max - min) / 15, m = min.
 * QF_ROUND_FP16_AWARE rounds the scale (and min) to fp16 first and quantizes against the
 * stored value, halves to even, so dequantize(quantize(x)) is the nearest point of the
 * stored grid: slightly smaller error, other bytes than ggml. Q3_G and Q2_G (ours, no ggml
 * reference) have only that rounding: min/max asymmetric, d = (max - min) / (2^bits - 1),
 * m = min, both fp16 first.
 *
 * Ownership: the table is static and constant. Functions write into caller buffers. */
#ifndef OCB_QUANT_FORMATS_H
#define OCB_QUANT_FORMATS_H

#include <stddef.h>
#include <stdint.h>

/* ---- fp16 ---- */

/* IEEE binary16 from/to fp32, round-to-nearest-even, subnormals, inf and NaN handled.
 * Plain C; the AVX2 kernels use F16C (vcvtph2ps), which gives identical values. */
uint16_t ocb_fp32_to_fp16(float f);
float ocb_fp16_to_fp32(uint16_t h);

/* ---- block layouts ---- */

#define QK8_0 32
#define QK4_0 32
#define QK4_1 32
#define QK3_G 32
#define QK2_G 32
#define QK_TQ 256

typedef struct { uint16_t d; int8_t qs[QK8_0]; } block_q8_0;
typedef struct { uint16_t d; uint8_t qs[QK4_0 / 2]; } block_q4_0;
typedef struct { uint16_t d, m; uint8_t qs[QK4_1 / 2]; } block_q4_1;
typedef struct { uint16_t d, m; uint8_t qs[QK3_G / 4]; uint8_t qh[QK3_G / 8]; } block_q3_g;
typedef struct { uint16_t d, m; uint8_t qs[QK2_G / 4]; } block_q2_g;
typedef struct { uint8_t qs[QK_TQ / 4]; uint16_t d; } block_tq2_0;
typedef struct { uint8_t qs[48]; uint8_t qh[4]; uint16_t d; } block_tq1_0;

_Static_assert(sizeof(block_q8_0) == 34, "Q8_0 block is 34 bytes");
_Static_assert(sizeof(block_q4_0) == 18, "Q4_0 block is 18 bytes");
_Static_assert(sizeof(block_q4_1) == 20, "Q4_1 block is 20 bytes");
_Static_assert(sizeof(block_q3_g) == 16, "Q3_G block is 16 bytes");
_Static_assert(sizeof(block_q2_g) == 12, "Q2_G block is 12 bytes");
_Static_assert(sizeof(block_tq2_0) == 66, "TQ2_0 block is 66 bytes");
_Static_assert(sizeof(block_tq1_0) == 54, "TQ1_0 block is 54 bytes");

/* ---- int8 activations (the kernels' right-hand side) ----
 * One row of k activations is k/B blocks (B = the weight format's act_block): d = max|x|/127
 * (fp32), qs = round(x/d) in [-127, 127]. For offset corrections (the kernels compute
 * sum(q*a) on unsigned codes, then correct per block): blocks of 32 keep ds = d * sum(qs)
 * as fp32 (Q4_0: -8 d_w ds; Q4_1/Q3_G/Q2_G: + m_w ds); blocks of 256 keep the exact
 * integer s = sum(qs) (ternary: sum((t-1) a) = sum(t a) - s in int32). */
typedef struct { float d; float ds; int8_t qs[32]; } block_qa32;
typedef struct { float d; int32_t s; int8_t qs[256]; } block_qa256;
_Static_assert(sizeof(block_qa32) == 40, "qa32 block is 40 bytes");
_Static_assert(sizeof(block_qa256) == 264, "qa256 block is 264 bytes");

/* ---- the format table ---- */

/* How quantize picks codes; see the header comment. */
enum qformat_rounding {
	QF_ROUND_GGML = 0,   /* ggml's quantize_row_*_ref, byte for byte (the default) */
	QF_ROUND_FP16_AWARE, /* the scale rounded to fp16 first, codes against it */
};

enum qformat_type {
	QF_Q8_0 = 0,
	QF_Q4_0,
	QF_Q4_1,
	QF_Q3_G,
	QF_Q2_G,
	QF_TQ2_0,
	QF_TQ1_0,
	QF_COUNT
};

struct qformat {
	const char *name;      /* "q8_0", "q4_0", "q4_1", "q3_g", "q2_g", "tq2_0", "tq1_0" */
	enum qformat_type type;
	int block;             /* weights per block (32 or 256) */
	size_t block_bytes;    /* bytes per block, scales included */
	double bpw;            /* exact bits per weight incl. scales: 8 * block_bytes / block */
	int act_block;         /* activation block the kernels quantize x with (32 or 256) */
	/* fp32 -> blocks, QF_ROUND_GGML (see the header comment). k % block == 0. */
	void (*quantize_row_ref)(const float *x, void *y, int64_t k);
	/* The same, QF_ROUND_FP16_AWARE. Equal to quantize_row_ref (the same function) for
	 * the formats that have only that rounding (Q3_G, Q2_G). */
	void (*quantize_row_fp16aware)(const float *x, void *y, int64_t k);
	/* blocks -> fp32. k % block == 0. */
	void (*dequantize_row)(const void *x, float *y, int64_t k);

	/* Kernel hooks used by quant_gemv.c (all take k % block == 0, a = k/act_block
	 * activation blocks). vec_dot_*: sum_i w[i] * x[i] with the int8 activations. */
	float (*vec_dot_ref)(int64_t k, const void *w, const void *a);
	float (*vec_dot_avx2)(int64_t k, const void *w, const void *a);
	/* decode_row_*: one weight row to int8 codes q[k] with per activation block b a scale
	 * d[b] and offset m[b]: w[i] = d[b] * q[i] + m[b] exactly (GEMM reuses it across the
	 * batch). */
	void (*decode_row_ref)(int64_t k, const void *w, float *d, float *m, int8_t *q);
	void (*decode_row_avx2)(int64_t k, const void *w, float *d, float *m, int8_t *q);
};

/* The format called `name` (case-insensitive: "q4_0", "Q4_0"), or NULL. */
const struct qformat *qformat_find(const char *name);
/* The format of `type`, or NULL if out of range. */
const struct qformat *qformat_get(enum qformat_type type);
/* Number of formats (QF_COUNT); qformat_get(i) for i < qformat_count() iterates them. */
int qformat_count(void);

/* Bytes of one row of k weights (k % block == 0), or 0 if k is not a multiple. */
size_t qformat_row_bytes(const struct qformat *f, int64_t k);

/* rows x k fp32 (row-major) -> rows * row_bytes bytes of blocks at q, QF_ROUND_GGML.
 * OCB_EINVAL (with detail) if k is not a positive multiple of the block or a pointer is
 * NULL. */
int qformat_quantize(const struct qformat *f, const float *x, void *q, int64_t rows, int64_t k);
/* The same with rounding r (OCB_EINVAL also for an unknown r). */
int qformat_quantize_as(const struct qformat *f, enum qformat_rounding r, const float *x,
			void *q, int64_t rows, int64_t k);
/* 1 if f's two roundings are different quantizers (the five ggml formats), else 0. */
int qformat_has_fp16aware(const struct qformat *f);
/* "ggml" or "fp16-aware" (NULL for an unknown r). */
const char *qformat_rounding_name(enum qformat_rounding r);
/* The inverse: blocks -> rows x k fp32. */
int qformat_dequantize(const struct qformat *f, const void *q, float *x, int64_t rows,
		       int64_t k);

/* Bytes of n rows of k activations quantized for format f (k % act_block == 0). */
size_t qformat_act_bytes(const struct qformat *f, int64_t n, int64_t k);
/* n x k fp32 activations -> n rows of block_qa32 / block_qa256 (f->act_block) at xq. */
int qformat_quantize_act(const struct qformat *f, const float *x, void *xq, int64_t n,
			 int64_t k);

#endif
