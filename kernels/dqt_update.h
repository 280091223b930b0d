/* dqt_update: the fused "AdamW update + stochastic round" kernel of direct quantized
 * training (DQT, Zhao, Tabaru, Kobayashi et al., ACML 2025; REFERENCE.md §1). The weight
 * exists only as int8 codes c on the grid {-qmax..qmax} times one per-tensor scale s;
 * per element, in fp32:
 *     m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
 *     u = (m c1) / (sqrt(v c2) + eps)                 c1 = 1/(1-b1^t), c2 = 1/(1-b2^t)
 *     w = c (1 - lr wd) - lr u / s                    (the dequantized weight, in units of s)
 *     c = clamp(SR(w), -qmax, qmax)                   SR: sr_rng.h, keyed by (key, index)
 * so no fp32 weight outlives one element's update. Moments are stored as fp32, bf16 (RNE)
 * or e4m3 (lowp_float.h). e4m3 moments carry a per-tensor scale: m is stored as m / sm and
 * sqrt(v) (not v: half the dynamic range in log2, so small second moments survive) as
 * sqrt(v) / sv. The scales are "delayed": a step decodes with the scale the values were
 * stored with (dec) and encodes with a scale chosen from the previous step's maxima (enc);
 * the kernel returns this step's maxima (amax) for the next step's enc = amax / 448.
 * Encoding saturates at 448 (a moment that grew past last step's max is clipped).
 *
 * Index: the element's index in its tensor (the tile's first index + i), so a tensor
 * updated in tiles, in any order, on any number of threads, gets the same codes.
 * dqt_update picks AVX2 when ocb_cpu_avx2(); _ref is plain C. They agree up to fp32
 * rounding (FMA contraction), so a code can differ by one where the fractional part is
 * within an ulp of the random number (tests bound the differences). */
#ifndef OCB_DQT_UPDATE_H
#define OCB_DQT_UPDATE_H

#include <stddef.h>
#include <stdint.h>

enum dqt_mfmt { DQT_M_F32 = 0, DQT_M_BF16, DQT_M_FP8 };

/* "fp32" / "bf16" / "fp8"; bytes per element of one moment. */
const char *dqt_mfmt_name(enum dqt_mfmt f);
size_t dqt_mfmt_bytes(enum dqt_mfmt f);
/* The format named `s`, or -1. */
int dqt_mfmt_parse(const char *s);

struct dqt_hyper {
	float lr, wd, b1, b2, eps, c1, c2;
	float scale;   /* s: weight = s * code */
	int qmax;      /* grid {-qmax..qmax}: 127 (8 bits), 7, 3, 1 (ternary) */
	uint64_t key;  /* sr_key(seed, step, tensor) */
};

/* One tile's moments: m, v point at the tile's first element in the tensor's arrays
 * (float*, uint16_t* or uint8_t* by fmt). fp8 only: *_dec, *_enc the scales (see above;
 * enc 0 stores zeros); amax_m / amax_sv receive max |m| and max sqrt(v) of the new values
 * (before encoding), max-combined with what they hold. */
struct dqt_moments {
	enum dqt_mfmt fmt;
	void *m, *v;
	float m_dec, v_dec, m_enc, v_enc;
	float amax_m, amax_sv;
};

/* Updates codes[0..n) of the elements index0..index0+n-1 from their gradient g[0..n). */
void dqt_update(int8_t *codes, const float *g, size_t n, uint64_t index0,
		const struct dqt_hyper *h, struct dqt_moments *mo);
void dqt_update_ref(int8_t *codes, const float *g, size_t n, uint64_t index0,
		    const struct dqt_hyper *h, struct dqt_moments *mo);
void dqt_update_avx2(int8_t *codes, const float *g, size_t n, uint64_t index0,
		     const struct dqt_hyper *h, struct dqt_moments *mo);

#endif
