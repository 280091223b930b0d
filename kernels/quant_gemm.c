/* quant_gemm: the batch-n GEMM driver (prefill): each weight row decoded once to int8 and
 * reused for 4 activation rows at a time in registers, plus qmatmul (fp32 activations in).
 * See quant_gemm.h. */
#include "quant_gemm.h"

#include <immintrin.h>
#include <omp.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "quant_args.h"
#include "quant_gemv.h"

int qgemm_ref(const struct qformat *f, const void *w, int64_t m, int64_t k, const void *xq,
	      int64_t n, float *y, int threads)
{
	int rc = qk_check_args(f, w, m, k, xq, n, y, "qgemm_ref");
	if (rc)
		return rc;
	const size_t rb = qformat_row_bytes(f, k);
	const size_t ab = qformat_act_bytes(f, 1, k);
	const char *wb = w;
#pragma omp parallel for schedule(static) num_threads(qk_threads(threads))
	for (int64_t r = 0; r < m; r++)
		for (int64_t j = 0; j < n; j++)
			y[j * m + r] = f->vec_dot_ref(k, wb + (size_t)r * rb, (const char *)xq + (size_t)j * ab);
	return OCB_OK;
}

/* ---- AVX2 GEMM: one decoded weight row x 4 activation rows ----
 * Activation blocks of B int8 (B = 32 or 256) sit at a stride of `ab` bytes: fp32 d at
 * offset 0, then fp32 ds = d*sum (block_qa32) or int32 s (block_qa256) at 4, qs at 8. */

#define AVX2 __attribute__((target("avx2,fma,f16c")))

static inline AVX2 float hsum8(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

struct act_view {
	const char *p; /* activation row 0 */
	size_t row;    /* bytes per activation row */
	size_t ab;     /* bytes per block */
};

#define ACT_D(v, j, b) (*(const float *)((v)->p + (j) * (v)->row + (b) * (v)->ab))
#define ACT_S(v, j, b) (*(const int32_t *)((v)->p + (j) * (v)->row + (b) * (v)->ab + 4))
#define ACT_DS(v, j, b) (*(const float *)((v)->p + (j) * (v)->row + (b) * (v)->ab + 4))
#define ACT_Q(v, j, b) ((const int8_t *)((v)->p + (j) * (v)->row + (b) * (v)->ab + 8))

/* Y[j][r] for j in [j0, j0+NT) from the decoded row (d, m, q); B int8 per act block.
 * The weight vector and its |w| are loaded once per 32 and used for NT activations. */
static inline AVX2 void gemm_tile(int B, int NT, int64_t nbA, const float *d, const float *mm,
				  const int8_t *q, const struct act_view *v, int64_t j0, float *y,
				  int64_t m, int64_t r)
{
	__m256 acc[4];
	float corr[4] = { 0 };
	const __m256i ones = _mm256_set1_epi16(1);
	for (int t = 0; t < NT; t++)
		acc[t] = _mm256_setzero_ps();
	for (int64_t b = 0; b < nbA; b++) {
		__m256i is[4];
		for (int t = 0; t < NT; t++)
			is[t] = _mm256_setzero_si256();
		for (int c = 0; c < B; c += 32) {
			__m256i wq = _mm256_loadu_si256((const __m256i *)(q + b * B + c));
			__m256i aw = _mm256_abs_epi8(wq);
			for (int t = 0; t < NT; t++) {
				__m256i a = _mm256_loadu_si256((const __m256i *)(ACT_Q(v, j0 + t, b) + c));
				__m256i p = _mm256_maddubs_epi16(aw, _mm256_sign_epi8(a, wq));
				is[t] = _mm256_add_epi32(is[t], _mm256_madd_epi16(p, ones));
			}
		}
		for (int t = 0; t < NT; t++) {
			float da = ACT_D(v, j0 + t, b);
			acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d[b] * da), _mm256_cvtepi32_ps(is[t]), acc[t]);
			corr[t] += mm[b] * (B == 32 ? ACT_DS(v, j0 + t, b) : da * (float)ACT_S(v, j0 + t, b));
		}
	}
	for (int t = 0; t < NT; t++)
		y[(j0 + t) * m + r] = hsum8(acc[t]) + corr[t];
}

/* Blocks of 32, 4 activation rows: the per-block int32 sums of the 4 rows are reduced
 * with hadd into one vector [S0 S1 S2 S3] and scaled together, so the fp32 work per block
 * is a handful of 128-bit ops instead of 4 broadcasts, 4 fmadds and 4 scalar offsets.
 * da4/ds4: the 4 rows' activation d and ds per block, transposed (4 floats per block). */
static inline AVX2 void gemm_tile4_b32(int64_t nbA, const float *d, const float *mm,
				       const int8_t *q, const struct act_view *v, int64_t j0,
				       const float *da4, const float *ds4, float *y, int64_t m,
				       int64_t r)
{
	const __m256i ones = _mm256_set1_epi16(1);
	const int8_t *a0 = ACT_Q(v, j0, 0), *a1 = ACT_Q(v, j0 + 1, 0);
	const int8_t *a2 = ACT_Q(v, j0 + 2, 0), *a3 = ACT_Q(v, j0 + 3, 0);
	__m128 acc = _mm_setzero_ps(), corr = _mm_setzero_ps();
	for (int64_t b = 0; b < nbA; b++) {
		const size_t o = (size_t)b * v->ab;
		__m256i wq = _mm256_loadu_si256((const __m256i *)(q + 32 * b));
		__m256i aw = _mm256_abs_epi8(wq);
#define DOT4(ap) _mm256_madd_epi16(_mm256_maddubs_epi16(aw, _mm256_sign_epi8(               \
				_mm256_loadu_si256((const __m256i *)((ap) + o)), wq)), ones)
		__m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(DOT4(a0), DOT4(a1)),
					      _mm256_hadd_epi32(DOT4(a2), DOT4(a3)));
#undef DOT4
		__m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
		acc = _mm_fmadd_ps(_mm_mul_ps(_mm_set1_ps(d[b]), _mm_loadu_ps(da4 + 4 * b)),
				   _mm_cvtepi32_ps(s4), acc);
		corr = _mm_fmadd_ps(_mm_set1_ps(mm[b]), _mm_loadu_ps(ds4 + 4 * b), corr);
	}
	float out[4];
	_mm_storeu_ps(out, _mm_add_ps(acc, corr));
	for (int t = 0; t < 4; t++)
		y[(j0 + t) * m + r] = out[t];
}

/* Blocks of 256 (the ternary formats: decoded |q| <= 1, offsets m = 0), 4 activation
 * rows: products of one 32-chunk are <= 2*127 per int16 lane, so the 8 chunks of a block
 * accumulate in int16 before one madd per row; then the same hadd reduction as above. */
static inline AVX2 void gemm_tile4_b256(int64_t nbA, const float *d, const int8_t *q,
					const struct act_view *v, int64_t j0, float *y, int64_t m,
					int64_t r)
{
	const __m256i ones = _mm256_set1_epi16(1);
	const int8_t *a[4] = { ACT_Q(v, j0, 0), ACT_Q(v, j0 + 1, 0), ACT_Q(v, j0 + 2, 0),
			       ACT_Q(v, j0 + 3, 0) };
	__m128 acc = _mm_setzero_ps();
	for (int64_t b = 0; b < nbA; b++) {
		const size_t o = (size_t)b * v->ab;
		__m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
		for (int c = 0; c < 256; c += 32) {
			__m256i wq = _mm256_loadu_si256((const __m256i *)(q + 256 * b + c));
			__m256i aw = _mm256_abs_epi8(wq);
#define P16(t) _mm256_maddubs_epi16(aw, _mm256_sign_epi8(                                    \
				_mm256_loadu_si256((const __m256i *)(a[t] + o + c)), wq))
			s0 = _mm256_add_epi16(s0, P16(0));
			s1 = _mm256_add_epi16(s1, P16(1));
			s2 = _mm256_add_epi16(s2, P16(2));
			s3 = _mm256_add_epi16(s3, P16(3));
#undef P16
		}
		__m256i h = _mm256_hadd_epi32(
			_mm256_hadd_epi32(_mm256_madd_epi16(s0, ones), _mm256_madd_epi16(s1, ones)),
			_mm256_hadd_epi32(_mm256_madd_epi16(s2, ones), _mm256_madd_epi16(s3, ones)));
		__m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
		__m128 da = _mm_set_ps(ACT_D(v, j0 + 3, b), ACT_D(v, j0 + 2, b), ACT_D(v, j0 + 1, b),
				       ACT_D(v, j0, b));
		acc = _mm_fmadd_ps(_mm_mul_ps(_mm_set1_ps(d[b]), da), _mm_cvtepi32_ps(s4), acc);
	}
	float out[4];
	_mm_storeu_ps(out, acc);
	for (int t = 0; t < 4; t++)
		y[(j0 + t) * m + r] = out[t];
}

/* da4/ds4: NULL unless B == 32 (then per 4-row tile, nbA * 4 floats each) */
static AVX2 void gemm_row_avx2(int B, int64_t nbA, const float *d, const float *mm,
			       const int8_t *q, const struct act_view *v, int64_t n, float *y,
			       int64_t m, int64_t r, const float *da4, const float *ds4)
{
	int64_t j = 0;
	if (B == 32) {
		for (; j + 4 <= n; j += 4)
			gemm_tile4_b32(nbA, d, mm, q, v, j, da4 + j * nbA, ds4 + j * nbA, y, m, r);
		for (; j < n; j++)
			gemm_tile(32, 1, nbA, d, mm, q, v, j, y, m, r);
	} else {
		for (; j + 4 <= n; j += 4)
			gemm_tile4_b256(nbA, d, q, v, j, y, m, r);
		for (; j < n; j++)
			gemm_tile(256, 1, nbA, d, mm, q, v, j, y, m, r);
	}
}

int qgemm(const struct qformat *f, const void *w, int64_t m, int64_t k, const void *xq,
	  int64_t n, float *y, int threads)
{
	int rc = qk_check_args(f, w, m, k, xq, n, y, "qgemm");
	if (rc)
		return rc;
	if (!ocb_cpu_avx2())
		return qgemm_ref(f, w, m, k, xq, n, y, threads);

	const size_t rb = qformat_row_bytes(f, k);
	const int64_t nbA = k / f->act_block;
	const struct act_view v = { xq, qformat_act_bytes(f, 1, k), qformat_act_bytes(f, 1, f->act_block) };
	/* 32-blocks: the activation scales of each 4-row tile, transposed (see gemm_tile4_b32) */
	float *da4 = NULL, *ds4 = NULL;
	const int64_t n4 = n / 4 * 4;
	if (f->act_block == 32 && n4 > 0) {
		da4 = ocb_alloc(2 * sizeof(float) * (size_t)(n4 * nbA));
		if (!da4)
			return ocb_seterr(OCB_ENOMEM, "qgemm: activation scale table");
		ds4 = da4 + n4 * nbA;
		for (int64_t j = 0; j < n4; j += 4)
			for (int64_t b = 0; b < nbA; b++)
				for (int t = 0; t < 4; t++) {
					da4[j * nbA + 4 * b + t] = ACT_D(&v, j + t, b);
					ds4[j * nbA + 4 * b + t] = ACT_DS(&v, j + t, b);
				}
	}
	int failed = 0;
#pragma omp parallel num_threads(qk_threads(threads))
	{
		/* per thread: decoded row q[k] and d[nbA], m[nbA] in one allocation */
		char *mem = ocb_alloc((size_t)k + 2 * sizeof(float) * (size_t)nbA + 64);
		if (!mem) {
#pragma omp atomic write
			failed = 1;
		}
		int8_t *q = (int8_t *)mem;
		float *d = mem ? (float *)(mem + ocb_round_up((size_t)k, 64)) : NULL;
		float *mm = d ? d + nbA : NULL;
#pragma omp for schedule(static)
		for (int64_t r = 0; r < m; r++) {
			if (!mem)
				continue;
			f->decode_row_avx2(k, (const char *)w + (size_t)r * rb, d, mm, q);
			gemm_row_avx2(f->act_block, nbA, d, mm, q, &v, n, y, m, r, da4, ds4);
		}
		ocb_free(mem);
	}
	ocb_free(da4);
	if (failed)
		return ocb_seterr(OCB_ENOMEM, "qgemm: no memory for a %lld-byte decode row", (long long)k);
	return OCB_OK;
}

int qmatmul(const struct qformat *f, const void *w, int64_t m, int64_t k, const float *x,
	    int64_t n, float *y, void *act, int threads)
{
	int rc = qformat_quantize_act(f, x, act, n, k);
	if (rc)
		return rc;
	return n == 1 ? qgemv(f, w, m, k, act, y, threads) : qgemm(f, w, m, k, act, n, y, threads);
}
