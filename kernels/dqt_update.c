/* dqt_update: fused AdamW + stochastic rounding onto an int8 grid (see dqt_update.h). */
#include "dqt_update.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "../common/ocb_cpu.h"
#include "lowp_float.h"
#include "sr_rng.h"

#define AVX2 __attribute__((target("avx2,fma")))

const char *dqt_mfmt_name(enum dqt_mfmt f)
{
	return f == DQT_M_BF16 ? "bf16" : f == DQT_M_FP8 ? "fp8" : "fp32";
}

size_t dqt_mfmt_bytes(enum dqt_mfmt f)
{
	return f == DQT_M_BF16 ? 2 : f == DQT_M_FP8 ? 1 : 4;
}

int dqt_mfmt_parse(const char *s)
{
	for (int f = DQT_M_F32; f <= DQT_M_FP8; f++)
		if (!strcasecmp(s, dqt_mfmt_name((enum dqt_mfmt)f)))
			return f;
	return -1;
}

/* Moment i of a tile, decoded to fp32 (v as the second moment itself). */
static inline void load_mv(const struct dqt_moments *mo, size_t i, float *m, float *v)
{
	switch (mo->fmt) {
	case DQT_M_F32:
		*m = ((const float *)mo->m)[i];
		*v = ((const float *)mo->v)[i];
		break;
	case DQT_M_BF16:
		*m = ocb_bf16_to_f32(((const uint16_t *)mo->m)[i]);
		*v = ocb_bf16_to_f32(((const uint16_t *)mo->v)[i]);
		break;
	case DQT_M_FP8: {
		float sv = ocb_e4m3_to_f32(((const uint8_t *)mo->v)[i]) * mo->v_dec;
		*m = ocb_e4m3_to_f32(((const uint8_t *)mo->m)[i]) * mo->m_dec;
		*v = sv * sv;
		break;
	}
	}
}

static inline void store_mv(struct dqt_moments *mo, size_t i, float m, float v)
{
	switch (mo->fmt) {
	case DQT_M_F32:
		((float *)mo->m)[i] = m;
		((float *)mo->v)[i] = v;
		break;
	case DQT_M_BF16:
		((uint16_t *)mo->m)[i] = ocb_f32_to_bf16(m);
		((uint16_t *)mo->v)[i] = ocb_f32_to_bf16(v);
		break;
	case DQT_M_FP8: {
		float sv = sqrtf(v);
		mo->amax_m = fmaxf(mo->amax_m, fabsf(m));
		mo->amax_sv = fmaxf(mo->amax_sv, sv);
		/* enc == 0: no scale yet (first step): the moments are not kept */
		float im = mo->m_enc > 0.0f ? 1.0f / mo->m_enc : 0.0f;
		float iv = mo->v_enc > 0.0f ? 1.0f / mo->v_enc : 0.0f;
		((uint8_t *)mo->m)[i] = ocb_f32_to_e4m3(m * im);
		((uint8_t *)mo->v)[i] = ocb_f32_to_e4m3(sv * iv);
		break;
	}
	}
}

void dqt_update_ref(int8_t *codes, const float *g, size_t n, uint64_t index0,
		    const struct dqt_hyper *h, struct dqt_moments *mo)
{
	const float decay = 1.0f - h->lr * h->wd, step = h->lr / h->scale;
	const float qmax = (float)h->qmax;
	for (size_t i = 0; i < n; i++) {
		float m = 0.0f, v = 0.0f;
		load_mv(mo, i, &m, &v);
		m = h->b1 * m + (1.0f - h->b1) * g[i];
		v = h->b2 * v + (1.0f - h->b2) * (g[i] * g[i]);
		store_mv(mo, i, m, v);
		float u = (m * h->c1) / (sqrtf(v * h->c2) + h->eps);
		float w = (float)codes[i] * decay - step * u;
		float c = sr_round(w, sr_uniform(h->key, index0 + i));
		c = c < -qmax ? -qmax : c > qmax ? qmax : c;
		codes[i] = (int8_t)c;
	}
}

/* ---- AVX2: 8 elements per iteration; fp32/bf16 moments in registers, fp8 through a
 * small buffer (scalar encode/decode, the arithmetic still vectorised) ---- */

static inline AVX2 __m256i mix32_v(__m256i x)
{
	x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
	x = _mm256_mullo_epi32(x, _mm256_set1_epi32(0x7feb352d));
	x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
	x = _mm256_mullo_epi32(x, _mm256_set1_epi32((int)0x846ca68bu));
	return _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
}

static inline AVX2 __m256 bf16x8_load(const uint16_t *p)
{
	__m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
	return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

/* RNE to bf16 (finite inputs: the moments), 8 lanes -> 8 uint16. */
static inline AVX2 void bf16x8_store(uint16_t *p, __m256 f)
{
	__m256i u = _mm256_castps_si256(f);
	__m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
	u = _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
	u = _mm256_srli_epi32(u, 16);
	__m128i lo = _mm256_castsi256_si128(u), hi = _mm256_extracti128_si256(u, 1);
	_mm_storeu_si128((__m128i *)p, _mm_packus_epi32(lo, hi));
}

AVX2 void dqt_update_avx2(int8_t *codes, const float *g, size_t n, uint64_t index0,
			  const struct dqt_hyper *h, struct dqt_moments *mo)
{
	const __m256 b1 = _mm256_set1_ps(h->b1), b2 = _mm256_set1_ps(h->b2);
	const __m256 ob1 = _mm256_set1_ps(1.0f - h->b1), ob2 = _mm256_set1_ps(1.0f - h->b2);
	const __m256 c1 = _mm256_set1_ps(h->c1), c2 = _mm256_set1_ps(h->c2);
	const __m256 eps = _mm256_set1_ps(h->eps);
	const __m256 decay = _mm256_set1_ps(1.0f - h->lr * h->wd);
	const __m256 step = _mm256_set1_ps(h->lr / h->scale);
	const __m256 qmax = _mm256_set1_ps((float)h->qmax), qmin = _mm256_set1_ps(-(float)h->qmax);
	const __m256 one = _mm256_set1_ps(1.0f), u24 = _mm256_set1_ps(0x1p-24f);
	const __m256i klo = _mm256_set1_epi32((int)(uint32_t)h->key);
	const __m256i khi = _mm256_set1_epi32((int)(uint32_t)(h->key >> 32));
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 m, v;
		float mb[8], vb[8];
		if (mo->fmt == DQT_M_F32) {
			m = _mm256_loadu_ps((const float *)mo->m + i);
			v = _mm256_loadu_ps((const float *)mo->v + i);
		} else if (mo->fmt == DQT_M_BF16) {
			m = bf16x8_load((const uint16_t *)mo->m + i);
			v = bf16x8_load((const uint16_t *)mo->v + i);
		} else {
			for (int j = 0; j < 8; j++)
				load_mv(mo, i + j, &mb[j], &vb[j]);
			m = _mm256_loadu_ps(mb);
			v = _mm256_loadu_ps(vb);
		}
		__m256 gv = _mm256_loadu_ps(g + i);
		m = _mm256_add_ps(_mm256_mul_ps(b1, m), _mm256_mul_ps(ob1, gv));
		v = _mm256_add_ps(_mm256_mul_ps(b2, v), _mm256_mul_ps(ob2, _mm256_mul_ps(gv, gv)));
		if (mo->fmt == DQT_M_F32) {
			_mm256_storeu_ps((float *)mo->m + i, m);
			_mm256_storeu_ps((float *)mo->v + i, v);
		} else if (mo->fmt == DQT_M_BF16) {
			bf16x8_store((uint16_t *)mo->m + i, m);
			bf16x8_store((uint16_t *)mo->v + i, v);
		} else {
			_mm256_storeu_ps(mb, m);
			_mm256_storeu_ps(vb, v);
			for (int j = 0; j < 8; j++)
				store_mv(mo, i + j, mb[j], vb[j]);
		}
		__m256 u = _mm256_div_ps(_mm256_mul_ps(m, c1),
					 _mm256_add_ps(_mm256_sqrt_ps(_mm256_mul_ps(v, c2)), eps));
		__m256i c8 = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(codes + i)));
		__m256 w = _mm256_sub_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(c8), decay),
					 _mm256_mul_ps(step, u));
		/* the counter-based uniforms of elements index0+i .. +7 (sr_u32) */
		__m256i idx = _mm256_add_epi32(_mm256_set1_epi32((int)(uint32_t)(index0 + i)), lane);
		__m256i r = mix32_v(_mm256_xor_si256(klo, mix32_v(_mm256_add_epi32(idx, khi))));
		__m256 rnd = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(r, 8)), u24);
		__m256 f = _mm256_floor_ps(w);
		__m256 up = _mm256_and_ps(_mm256_cmp_ps(rnd, _mm256_sub_ps(w, f), _CMP_LT_OQ), one);
		__m256 c = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(f, up), qmin), qmax);
		__m256i ci = _mm256_cvtps_epi32(c);
		__m128i c16 = _mm_packs_epi32(_mm256_castsi256_si128(ci),
					      _mm256_extracti128_si256(ci, 1));
		_mm_storel_epi64((__m128i *)(codes + i), _mm_packs_epi16(c16, c16));
	}
	if (i < n) {
		struct dqt_moments tail = *mo;
		size_t b = dqt_mfmt_bytes(mo->fmt);
		tail.m = (char *)mo->m + i * b;
		tail.v = (char *)mo->v + i * b;
		dqt_update_ref(codes + i, g + i, n - i, index0 + i, h, &tail);
		mo->amax_m = tail.amax_m;
		mo->amax_sv = tail.amax_sv;
	}
}

void dqt_update(int8_t *codes, const float *g, size_t n, uint64_t index0,
		const struct dqt_hyper *h, struct dqt_moments *mo)
{
	if (ocb_cpu_avx2())
		dqt_update_avx2(codes, g, n, index0, h, mo);
	else
		dqt_update_ref(codes, g, n, index0, h, mo);
}
