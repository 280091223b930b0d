/* decode_pass: see decode_pass.h. */
#include "decode_pass.h"

#include <math.h>
#include <stdlib.h>
#include <omp.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../kernels/quant_gemv.h"
#include "../kernels/quant_repack.h"

static int64_t pad_to(int64_t k, int b)
{
	return (k + b - 1) / b * b;
}

/* rows x k random weights (uniform in [-1/sqrt(k), 1/sqrt(k)], zero padding up to kp)
 * quantized into dst. */
static int fill_matrix(const struct qformat *f, uint8_t *dst, int64_t rows, int64_t k,
		       int64_t kp, struct ocb_rng *r, float *row)
{
	float a = 2.0f / sqrtf((float)k);
	size_t rb = qformat_row_bytes(f, kp);
	for (int64_t i = 0; i < rows; i++) {
		for (int64_t j = 0; j < kp; j++)
			row[j] = j < k ? a * ((float)(ocb_rng_u64(r) >> 40) * 0x1p-24f - 0.5f) : 0.0f;
		int rc = qformat_quantize(f, row, dst + (size_t)i * rb, 1, kp);
		if (rc)
			return rc;
	}
	return OCB_OK;
}

static int layout(struct decode_pass *p)
{
	const struct ocb_model_spec *s = &p->s;
	int64_t qd = s->n_heads * s->head_dim, kvd = s->n_kv_heads * s->head_dim;
	int b = p->f->block;
	p->kd = pad_to(s->d_model > qd ? s->d_model : qd, b);
	p->kf = pad_to(s->ffn, b);
	const int64_t rows[7] = {qd, kvd, kvd, s->d_model, s->ffn, s->ffn, s->d_model};
	const int64_t ks[7] = {p->kd, p->kd, p->kd, p->kd, p->kd, p->kd, p->kf};
	size_t o = 0;
	for (int i = 0; i < 7; i++) {
		p->off[i] = o;
		o += (size_t)rows[i] * qformat_row_bytes(p->f, ks[i]);
	}
	p->block_bytes = o;
	size_t emb = (size_t)s->vocab * qformat_row_bytes(p->f, p->kd);
	p->head_off = (size_t)s->n_layers * o + emb;
	p->wbytes = p->head_off + (s->tied ? 0 : emb);
	if (s->tied)
		p->head_off -= emb; /* the head is the embedding */
	return OCB_OK;
}

static int alloc_all(struct decode_pass *p)
{
	const struct ocb_model_spec *s = &p->s;
	int64_t qd = s->n_heads * s->head_dim, kvd = s->n_kv_heads * s->head_dim;
	size_t big = (size_t)(p->kd > p->kf ? p->kd : p->kf);
	size_t nsc = 6 * big + (size_t)(qd + 2 * kvd) + (size_t)s->vocab;
	/* huge pages, as the quant bench's GEMV weights and the bandwidth roof (ocb_alloc.h):
	 * with 4 KiB pages the pass's 0.7 GB stream is TLB-bound */
	p->w = ocb_alloc_huge(p->wbytes);
	if (p->w)
		memset(p->w, 0, p->wbytes);
	p->kv = ocb_alloc((size_t)s->n_layers * 2 * (p->ctx + 1) * kvd * sizeof(float));
	p->x = ocb_alloc(nsc * sizeof(float));
	p->act = ocb_alloc(qformat_act_bytes(p->f, 1, (int64_t)big));
	if (!p->w || !p->kv || !p->x || !p->act)
		return ocb_seterr(OCB_ENOMEM, "decode pass: %zu bytes of weights", p->wbytes);
	memset(p->x, 0, nsc * sizeof(float));
	/* x, xn, tmp, att, g, u: `big` each, so inputs stay zero-padded to kd / kf */
	p->xn = p->x + big, p->tmp = p->xn + big, p->att = p->tmp + big;
	p->g = p->att + big, p->u = p->g + big;
	p->q = p->u + big, p->k = p->q + qd, p->v = p->k + kvd, p->logits = p->v + kvd;
	return OCB_OK;
}

/* The GEMV this CPU runs (qgemv_choose): when it wants the r8 layout, every matrix the
 * GEMVs read is repacked in place at init, as the quant bench and llama.cpp's load-time
 * repack do, so the pass streams its weights through the same kernel as the measured
 * quant_gemv cases. Only where the r8 layout has the plain layout's size (not TQ1_0,
 * which it transcodes). The untied embedding stays plain (it is only looked up). */
static int repack_all(struct decode_pass *p, const int64_t rows[7])
{
	const struct ocb_model_spec *s = &p->s;
	p->kind = qgemv_choose(p->f);
	if (!qgemv_kind_r8(p->kind) ||
	    qrepack_bytes(p->f, 16, p->kd) != 16 * qformat_row_bytes(p->f, p->kd)) {
		p->kind = ocb_cpu_avx2() ? QGEMV_AVX2 : QGEMV_REF;
		return OCB_OK;
	}
	size_t most = (size_t)s->vocab * qformat_row_bytes(p->f, p->kd);
	most = p->block_bytes > most ? p->block_bytes : most;
	uint8_t *tmp = ocb_alloc(most);
	int rc = tmp ? OCB_OK : ocb_seterr(OCB_ENOMEM, "decode pass: repack buffer");
	for (int64_t l = 0; l < s->n_layers && !rc; l++)
		for (int i = 0; i < 7 && !rc; i++) {
			uint8_t *w = p->w + (size_t)l * p->block_bytes + p->off[i];
			int64_t k = i == 6 ? p->kf : p->kd;
			if (!(rc = qrepack_pack(p->f, w, rows[i], k, tmp, p->threads)))
				memcpy(w, tmp, qrepack_bytes(p->f, rows[i], k));
		}
	if (!rc && !(rc = qrepack_pack(p->f, p->w + p->head_off, s->vocab, p->kd, tmp, p->threads)))
		memcpy(p->w + p->head_off, tmp, qrepack_bytes(p->f, s->vocab, p->kd));
	ocb_free(tmp);
	return rc;
}

int decode_pass_init(struct decode_pass *p, const struct ocb_model_spec *s,
		     const struct qformat *f, int ctx, int threads, uint64_t seed)
{
	struct ocb_rng r;
	memset(p, 0, sizeof *p);
	if (s->arch != OCB_ARCH_LLAMA || ctx < 1 || !f)
		return ocb_seterr(OCB_EINVAL, "decode pass: needs a llama spec, a format, ctx >= 1");
	p->s = *s, p->f = f, p->ctx = ctx;
	p->threads = threads > 0 ? threads : omp_get_max_threads();
	int rc = layout(p);
	if (!rc)
		rc = alloc_all(p);
	if (rc)
		return rc;
	ocb_rng_seed(&r, seed);
	int64_t qd = s->n_heads * s->head_dim, kvd = s->n_kv_heads * s->head_dim;
	const int64_t rows[7] = {qd, kvd, kvd, s->d_model, s->ffn, s->ffn, s->d_model};
	const int64_t ks[7] = {s->d_model, s->d_model, s->d_model, qd, s->d_model, s->d_model,
			       s->ffn};
	float *row = malloc((size_t)(p->kd > p->kf ? p->kd : p->kf) * sizeof *row);
	if (!row)
		return ocb_seterr(OCB_ENOMEM, "decode pass: row");
	for (int64_t l = 0; l < s->n_layers && !rc; l++)
		for (int i = 0; i < 7 && !rc; i++)
			rc = fill_matrix(f, p->w + l * p->block_bytes + p->off[i], rows[i], ks[i],
					 i == 6 ? p->kf : p->kd, &r, row);
	size_t emb_off = (size_t)s->n_layers * p->block_bytes;
	if (!rc)
		rc = fill_matrix(f, p->w + emb_off, s->vocab, s->d_model, p->kd, &r, row);
	if (!rc && !s->tied)
		rc = fill_matrix(f, p->w + p->head_off, s->vocab, s->d_model, p->kd, &r, row);
	free(row);
	size_t nkv = (size_t)s->n_layers * 2 * (p->ctx + 1) * kvd;
	for (size_t i = 0; i < nkv; i++)
		p->kv[i] = (float)(ocb_rng_u64(&r) >> 40) * 0x1p-24f - 0.5f;
	if (!rc)
		rc = repack_all(p, rows);
	return rc;
}

static void rmsnorm(const float *x, int64_t d, float *y)
{
	double ss = 0;
	for (int64_t i = 0; i < d; i++)
		ss += (double)x[i] * x[i];
	float r = 1.0f / sqrtf((float)(ss / (double)d) + 1e-5f);
	for (int64_t i = 0; i < d; i++)
		y[i] = x[i] * r; /* norm gains are 1: random init */
}

/* Rotates each pair (2i, 2i+1) of every head of x by pos theta^(-2i/hd) (RoFormer). */
static void rope(float *x, int64_t heads, int64_t hd, int pos)
{
	for (int64_t i = 0; i < hd / 2; i++) {
		float a = (float)pos * powf(10000.0f, -2.0f * (float)i / (float)hd);
		float c = cosf(a), sn = sinf(a);
		for (int64_t h = 0; h < heads; h++) {
			float *e = x + h * hd + 2 * i;
			float x0 = e[0], x1 = e[1];
			e[0] = x0 * c - x1 * sn;
			e[1] = x0 * sn + x1 * c;
		}
	}
}

/* Dot product of n floats in 8 independent partial sums: a single running sum makes
 * every add wait on the previous one (a latency-bound chain ~4 cycles per element); eight
 * independent sums vectorize and keep the adder busy. */
static float dot8(const float *a, const float *b, int64_t n)
{
	float s[8] = {0};
	int64_t j = 0;
	for (; j + 8 <= n; j += 8)
		for (int u = 0; u < 8; u++)
			s[u] += a[j + u] * b[j + u];
	float t = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
	for (; j < n; j++)
		t += a[j] * b[j];
	return t;
}

/* Grouped-query attention of q over the n cached positions of K, V [n][kvd], the heads
 * split over the threads (each head's arithmetic is the same whatever the split, so 1 and
 * N threads agree exactly). sc: n scores per thread. Why parallel: a serial attention is
 * a stretch where all but one thread idle between the GEMVs (Amdahl: it was ~3.3 ms of
 * scalar work per Llama-3.2-1B step beside a ~28 ms 2-thread weight stream). */
void decode_pass_attend(const struct ocb_model_spec *s, const float *q, const float *K,
			const float *V, int n, float *out, float *sc, int threads)
{
	int64_t hd = s->head_dim, grp = s->n_heads / s->n_kv_heads, kvd = s->n_kv_heads * hd;
	float scale = 1.0f / sqrtf((float)hd);
#pragma omp parallel for schedule(static) num_threads(threads)
	for (int64_t h = 0; h < s->n_heads; h++) {
		const float *qh = q + h * hd;
		int64_t kh = (h / grp) * hd;
		float *st = sc + (size_t)omp_get_thread_num() * (size_t)n;
		float mx = -INFINITY, sum = 0;
		for (int t = 0; t < n; t++) {
			st[t] = dot8(qh, K + (size_t)t * kvd + kh, hd) * scale;
			mx = st[t] > mx ? st[t] : mx;
		}
		for (int t = 0; t < n; t++)
			sum += (st[t] = expf(st[t] - mx));
		float *o = out + h * hd;
		memset(o, 0, (size_t)hd * sizeof *o);
		for (int t = 0; t < n; t++) {
			float w = st[t] / sum;
			const float *vt = V + (size_t)t * kvd + kh;
			/* o never overlaps V: vectorize (-O2 alone leaves it scalar) */
#pragma omp simd
			for (int64_t j = 0; j < hd; j++)
				o[j] += w * vt[j];
		}
	}
}

static int gemv(struct decode_pass *p, size_t off, int64_t m, int64_t k, const float *x,
		float *y)
{
	if (!qgemv_kind_r8(p->kind))
		return qmatmul(p->f, p->w + off, m, k, x, 1, y, p->act, p->threads);
	int rc = qformat_quantize_act(p->f, x, p->act, 1, k);
	return rc ? rc : qgemv_r8(p->f, p->w + off, m, k, p->act, y, p->threads);
}

/* Embedding row tok, dequantized into out (kd floats). A tied embedding in the r8 / r16
 * layout (it is the head) is read by unpacking the R-row group that holds tok. */
static int embed_row(struct decode_pass *p, int tok, float *out)
{
	const struct ocb_model_spec *s = &p->s;
	size_t rb = qformat_row_bytes(p->f, p->kd);
	const uint8_t *e = p->w + (size_t)s->n_layers * p->block_bytes;
	const int R = qrepack_rows(p->f);
	int64_t g = tok / R, ng = s->vocab / R;
	if (!qgemv_kind_r8(p->kind) || !s->tied || g >= ng) /* the remainder rows stay plain */
		return qformat_dequantize(p->f, e + (size_t)tok * rb, out, 1, p->kd);
	uint8_t *grp = malloc((size_t)R * rb);
	if (!grp)
		return ocb_seterr(OCB_ENOMEM, "decode pass: embedding group");
	int rc = qrepack_unpack(p->f, e + (size_t)g * (size_t)R * rb, R, p->kd, grp);
	if (!rc)
		rc = qformat_dequantize(p->f, grp + (size_t)(tok % R) * rb, out, 1, p->kd);
	free(grp);
	return rc;
}

static int block(struct decode_pass *p, int64_t l, float *sc)
{
	const struct ocb_model_spec *s = &p->s;
	int64_t d = s->d_model, qd = s->n_heads * s->head_dim, kvd = s->n_kv_heads * s->head_dim;
	size_t b = (size_t)l * p->block_bytes;
	float *K = p->kv + (size_t)l * 2 * (p->ctx + 1) * kvd, *V = K + (p->ctx + 1) * kvd;
	int rc;
	rmsnorm(p->x, d, p->xn);
	if ((rc = gemv(p, b + p->off[0], qd, p->kd, p->xn, p->q)) ||
	    (rc = gemv(p, b + p->off[1], kvd, p->kd, p->xn, p->k)) ||
	    (rc = gemv(p, b + p->off[2], kvd, p->kd, p->xn, p->v)))
		return rc;
	rope(p->q, s->n_heads, s->head_dim, p->ctx);
	rope(p->k, s->n_kv_heads, s->head_dim, p->ctx);
	memcpy(K + (size_t)p->ctx * kvd, p->k, (size_t)kvd * sizeof(float));
	memcpy(V + (size_t)p->ctx * kvd, p->v, (size_t)kvd * sizeof(float));
	decode_pass_attend(s, p->q, K, V, p->ctx + 1, p->att, sc, p->threads);
	if ((rc = gemv(p, b + p->off[3], d, p->kd, p->att, p->tmp)))
		return rc;
	for (int64_t i = 0; i < d; i++)
		p->x[i] += p->tmp[i];
	rmsnorm(p->x, d, p->xn);
	if ((rc = gemv(p, b + p->off[4], s->ffn, p->kd, p->xn, p->g)) ||
	    (rc = gemv(p, b + p->off[5], s->ffn, p->kd, p->xn, p->u)))
		return rc;
	float *g = p->g, *u = p->u; /* SwiGLU: ffn expf, split like the GEMVs */
#pragma omp parallel for schedule(static) num_threads(p->threads)
	for (int64_t i = 0; i < s->ffn; i++)
		g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
	if ((rc = gemv(p, b + p->off[6], d, p->kf, p->g, p->tmp)))
		return rc;
	for (int64_t i = 0; i < d; i++)
		p->x[i] += p->tmp[i];
	return OCB_OK;
}

int decode_pass_step(struct decode_pass *p, int tok)
{
	const struct ocb_model_spec *s = &p->s;
	if (tok < 0 || tok >= s->vocab)
		return ocb_seterr(OCB_EINVAL, "decode pass: token %d outside vocab", tok);
	int rc = embed_row(p, tok, p->tmp);
	float *sc = malloc((size_t)p->threads * (size_t)(p->ctx + 1) * sizeof *sc);
	if (!sc)
		return ocb_seterr(OCB_ENOMEM, "decode pass: scores");
	memcpy(p->x, p->tmp, (size_t)s->d_model * sizeof(float));
	for (int64_t l = 0; l < s->n_layers && !rc; l++)
		rc = block(p, l, sc);
	free(sc);
	if (rc)
		return rc;
	rmsnorm(p->x, s->d_model, p->xn);
	return gemv(p, p->head_off, s->vocab, p->kd, p->xn, p->logits);
}

double decode_pass_bytes(const struct decode_pass *p)
{
	const struct ocb_model_spec *s = &p->s;
	double kvd = (double)(s->n_kv_heads * s->head_dim);
	double rb = (double)qformat_row_bytes(p->f, p->kd), emb = (double)s->vocab * rb;
	/* every block's matrices, the head (or the tied embedding), one embedding row */
	double w = (double)s->n_layers * (double)p->block_bytes + emb + rb;
	return w + (double)s->n_layers * 2.0 * (double)(p->ctx + 1) * kvd * 4.0;
}

double decode_pass_static_bytes(const struct ocb_model_spec *s, const struct qformat *f,
				int ctx)
{
	struct decode_pass p;
	memset(&p, 0, sizeof p);
	if (s->arch != OCB_ARCH_LLAMA || !f || ctx < 1)
		return NAN;
	p.s = *s, p.f = f, p.ctx = ctx;
	layout(&p);
	return decode_pass_bytes(&p);
}

const char *decode_pass_variant(const struct decode_pass *p)
{
	return qgemv_kind_r8((enum qgemv_kind)p->kind) ? qgemv_variant(p->f)
						       : qgemv_kind_name((enum qgemv_kind)p->kind);
}

void decode_pass_release(struct decode_pass *p)
{
	if (!p)
		return;
	ocb_free(p->w);
	ocb_free(p->kv);
	ocb_free(p->x);
	ocb_free(p->act);
	memset(p, 0, sizeof *p);
}
