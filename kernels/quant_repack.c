/* quant_repack: the r8 layout (pack, unpack, buffers), its plain-C GEMV and the run-time
 * choice of GEMV kernel. See quant_repack.h; the AVX2 kernels are quant_repack_avx2.c. */
#include "quant_repack.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "quant_args.h"
#include "quant_gemv.h"
#include "quant_impl.h"
#include "quant_repack_impl.h"
#include "qgemv_plan.h"

/* Where the fp16 scales and the codes sit inside one plain block (quant_formats.h). */
int qr_layout(const struct qformat *f, struct qr_layout *l)
{
	memset(l, 0, sizeof *l);
	switch (f->type) {
	case QF_Q8_0:
	case QF_Q4_0:
		l->nscales = 1, l->scale_off[0] = 0, l->payload_off = 2;
		break;
	case QF_Q4_1:
	case QF_Q3_G:
	case QF_Q2_G:
		l->nscales = 2, l->scale_off[0] = 0, l->scale_off[1] = 2, l->payload_off = 4;
		break;
	case QF_TQ2_0:
	case QF_TQ1_0:
		l->nscales = 1, l->payload_off = 0;
		l->scale_off[0] = (int)f->block_bytes - 2;
		break;
	default:
		return ocb_seterr(OCB_EINVAL, "repack: format %s has no r8 layout", f->name);
	}
	l->payload = (int)f->block_bytes - 2 * l->nscales;
	l->units = l->payload / 4;
	l->hbit_unit = f->type == QF_Q3_G ? 2 : -1; /* qh follows qs[8] */
	return OCB_OK;
}

/* The block format the r8 groups of f hold: f itself, except TQ1_0, whose base-3 trits
 * cost ~4x TQ2_0's arithmetic per byte to decode (quant_avx2.c: 5 multiply-by-3 steps per
 * byte), more than any core has to spare at DRAM speed; its groups are transcoded to TQ2_0
 * codes (same values, same fp16 scale: 66 instead of 54 bytes per 256 weights). */
static const struct qformat *r8_fmt(const struct qformat *f)
{
	return f->type == QF_TQ1_0 ? qformat_get(QF_TQ2_0) : f;
}

int qrepack_supported(const struct qformat *f)
{
	return f && qr_avx2_kernel(r8_fmt(f)->type, QR_AVX2) != NULL;
}

int qrepack_rows(const struct qformat *f)
{
	return qgemv_kind_rows(qgemv_choose(f));
}

size_t qrepack_bytes(const struct qformat *f, int64_t m, int64_t k)
{
	if (!f || m <= 0)
		return 0;
	const int R = qrepack_rows(f);
	const int64_t ng = m / R;
	return (size_t)(ng * R) * qformat_row_bytes(r8_fmt(f), k) +
	       (size_t)(m - ng * R) * qformat_row_bytes(f, k);
}

/* n TQ1_0 rows -> TQ2_0 rows with the same codes and scales (r8_fmt). */
static void tq1_to_tq2(const struct qformat *f, const char *src, int64_t n, int64_t k, char *dst)
{
	const int64_t nb = k / QK_TQ;
	int8_t q[QK_TQ];
	float d, mm;
	for (int64_t r = 0; r < n * nb; r++) {
		const block_tq1_0 *in = (const block_tq1_0 *)(const void *)src + r;
		block_tq2_0 *out = (block_tq2_0 *)(void *)dst + r;
		f->decode_row_ref(QK_TQ, in, &d, &mm, q);
		memset(out->qs, 0, sizeof out->qs);
		for (int i = 0; i < QK_TQ; i++) /* element 128h + 32n + m: byte 32h + m, bits 2n */
			out->qs[32 * (i / 128) + i % 32] |= (uint8_t)((q[i] + 1) << (2 * ((i % 128) / 32)));
		out->d = in->d;
	}
}

static int check_shape(const struct qformat *f, const void *a, const void *b, int64_t m,
		       int64_t k, const char *what)
{
	if (!f || !a || !b)
		return ocb_seterr(OCB_EINVAL, "%s: NULL format or buffer", what);
	if (!qrepack_supported(f))
		return ocb_seterr(OCB_EINVAL, "%s: format %s has no r8 layout", what, f->name);
	if (m <= 0 || k <= 0 || k % f->block)
		return ocb_seterr(OCB_EINVAL, "%s %s: bad shape m=%lld k=%lld (k must be a positive "
				  "multiple of %d)", what, f->name, (long long)m, (long long)k, f->block);
	return OCB_OK;
}

/* Q3_G's high-bit plane, re-encoded for the r8 kernel: bit e of the little-endian qh word
 * is bit 2 of element e; in the packed unit, bit n + 4u of byte i is that of element
 * 8n + 4u + i (the element whose low bits sit at bits 2n of qs byte 4u + i), so one shift
 * moves it next to them. decode = 1: the inverse. */
static void q3_hbits(uint8_t *dst, const uint8_t *src, int decode)
{
	uint8_t out[4] = { 0 };
	for (int i = 0; i < 4; i++)
		for (int u = 0; u < 2; u++)
			for (int n = 0; n < 4; n++) {
				int e = 8 * n + 4 * u + i, p = n + 4 * u;
				if (decode)
					out[e / 8] |= (uint8_t)(((src[i] >> p) & 1) << (e % 8));
				else
					out[i] |= (uint8_t)(((src[e / 8] >> (e % 8)) & 1) << p);
			}
	memcpy(dst, out, 4);
}

/* Byte offsets inside one group of R rows (quant_repack.h): scale s and code unit u of
 * block b of row r. r8 keeps a group's scales before its codes; r16 keeps them in pairs
 * of blocks, each pair's scales just before its codes (one stream). */
static size_t grp_scale_off(const struct qr_layout *l, int R, int64_t b, int s, int r)
{
	const size_t S = (size_t)l->nscales;
	if (R == 8)
		return (((size_t)b * S + (size_t)s) * (size_t)R + (size_t)r) * 2;
	const int64_t p0 = b & ~(int64_t)1;
	return (size_t)p0 * qr_block_bytes(l, R) +
	       (((size_t)(b - p0) * S + (size_t)s) * (size_t)R + (size_t)r) * 2;
}

static size_t grp_unit_off(const struct qr_layout *l, int R, int64_t nb, int64_t b, int u, int r)
{
	const size_t S = (size_t)l->nscales, U = (size_t)l->units;
	if (R == 8)
		return (size_t)nb * (size_t)R * 2 * S + ((size_t)b * U + (size_t)u) * 4 * (size_t)R +
		       4 * (size_t)r;
	const int64_t p0 = b & ~(int64_t)1, np = nb - p0 < 2 ? nb - p0 : 2;
	return (size_t)p0 * qr_block_bytes(l, R) + (size_t)np * (size_t)R * 2 * S +
	       ((size_t)(b - p0) * U + (size_t)u) * 4 * (size_t)R + 4 * (size_t)r;
}

/* Q3_G on r16: the 32 3-bit codes c_e of one row's block in three 4-byte units A, B, C
 * (12 bytes, as in the plain block). Byte i of each unit serves the elements 4s + i of
 * the 8 slots s, so one 4-byte activation broadcast serves a slot:
 *   slots 0, 1: A bits 0-2, 3-5;  slots 2, 3: B bits 0-2, 3-5;  slots 4, 5: C bits 0-2, 3-5;
 *   slot 6: its low 2 bits at A 6-7, its high bit at C 6;  slot 7: B 6-7 and C 7.
 * Why: the zmm kernel takes six slots whole with one and each and the last two in two
 * parts, 10 ands and 10 vpdpbusd per block of 16 rows, against 16 and 16 with r8's split
 * planes (quant_repack_avx512.c q3_isum16). plain: qs[8] then qh[4], read and written
 * through q3_g_code / q3_g_pack_codes (quant_impl.h);
 * decode = 1: the inverse. */
static void q3_r16_codes(uint8_t *dst, const uint8_t *src, int decode)
{
	uint8_t c[32], out[12] = { 0 };
	for (int e = 0; e < 32; e++) {
		const int s = e / 4, i = e % 4;
		if (decode) {
			c[e] = (uint8_t)(s < 6 ? (src[4 * (s / 2) + i] >> (3 * (s % 2))) & 7
					       : ((src[4 * (s - 6) + i] >> 6) & 3) |
							 ((src[8 + i] >> s) & 1) << 2);
			continue;
		}
		const int code = q3_g_code(src, src + 8, e);
		if (s < 6) {
			out[4 * (s / 2) + i] |= (uint8_t)(code << (3 * (s % 2)));
		} else {
			out[4 * (s - 6) + i] |= (uint8_t)((code & 3) << 6);
			out[8 + i] |= (uint8_t)((code >> 2) << s);
		}
	}
	if (decode)
		q3_g_pack_codes(c, out, out + 8);
	memcpy(dst, out, sizeof out);
}

/* One block's payload p (plain) <-> its units at g (unit u of row r at
 * grp_unit_off(.., u, r)). */
static void pack_payload(const struct qr_layout *l, const struct qformat *f, int R, int64_t nb,
			 int64_t b, int r, char *p, char *g, int unpack)
{
	if (R == 16 && f->type == QF_Q3_G) { /* the three units encoded together */
		uint8_t u12[12];
		if (!unpack) {
			q3_r16_codes(u12, (const uint8_t *)p, 0);
			for (int u = 0; u < 3; u++)
				memcpy(g + grp_unit_off(l, R, nb, b, u, r), u12 + 4 * u, 4);
			return;
		}
		for (int u = 0; u < 3; u++)
			memcpy(u12 + 4 * u, g + grp_unit_off(l, R, nb, b, u, r), 4);
		q3_r16_codes((uint8_t *)p, u12, 1);
		return;
	}
	for (int u = 0; u < l->units; u++) {
		char *v = g + grp_unit_off(l, R, nb, b, u, r), *pu = p + 4 * u;
		if (u == l->hbit_unit)
			q3_hbits((uint8_t *)(unpack ? pu : v), (const uint8_t *)(unpack ? v : pu), unpack);
		else if (unpack)
			memcpy(pu, v, 4);
		else
			memcpy(v, pu, 4);
	}
}

/* One group of R plain rows (row stride rb) <-> its r8 / r16 bytes at g. */
static void pack_group(const struct qr_layout *l, const struct qformat *f, int R, int64_t nb,
		       const char *rows, size_t rb, char *g, int unpack)
{
	const size_t bb = f->block_bytes;
	for (int64_t b = 0; b < nb; b++)
		for (int r = 0; r < R; r++) {
			char *blk = (char *)rows + (size_t)r * rb + (size_t)b * bb;
			pack_payload(l, f, R, nb, b, r, blk + l->payload_off, g, unpack);
			for (int s = 0; s < l->nscales; s++) {
				char *h = g + grp_scale_off(l, R, b, s, r);
				if (unpack)
					memcpy(blk + l->scale_off[s], h, 2);
				else
					memcpy(h, blk + l->scale_off[s], 2);
			}
		}
}

/* The r16 layout's column panels (quant_repack.h): panel p of a matrix with ng groups of
 * R rows and nb blocks per row holds blocks b0 .. b0 + nb - 1 of every group, group g's
 * part (R rows x nb blocks, pairs as in pack_group) at off + g * gstride. */
struct qr_panel {
	int64_t b0, nb;
	size_t off, gstride;
};

/* Panels of 512 blocks where the 32-block kernels read several groups side by side by
 * default (qr_default_streams: AMD), 64 where they read one (quant_repack.h says why) */
int qr_panel_blocks(const struct ocb_cpu_id *cpu)
{
	return qr_default_streams(QF_Q4_0, cpu) > 1 ? 512 : 64;
}

int qrepack_panel_blocks(void)
{
	return qr_panel_blocks(ocb_cpu_id());
}

/* Blocks per panel: qrepack_panel_blocks for the 32-block formats on r16, else the whole
 * row (r8, and TQ2_0, whose far prefetch does better on whole rows: 93-104% against
 * 76-86% with panels of 8 or 16 blocks). */
static int64_t panel_blocks(const struct qformat *fr, int R, int64_t nb)
{
	const int64_t pb = qrepack_panel_blocks();
	return R == 16 && fr->block == 32 && nb > pb ? pb : nb;
}

static struct qr_panel panel_at(const struct qformat *fr, int R, int64_t nb, int64_t ng,
				int64_t p)
{
	const int64_t pb = panel_blocks(fr, R, nb);
	const size_t rbb = (size_t)R * fr->block_bytes; /* one block of the R rows */
	struct qr_panel pn;
	pn.b0 = p * pb;
	pn.nb = nb - pn.b0 < pb ? nb - pn.b0 : pb;
	pn.off = (size_t)pn.b0 * (size_t)ng * rbb;
	pn.gstride = (size_t)pn.nb * rbb;
	return pn;
}

/* Group g of R plain rows (row stride rb, blocks of fr) <-> its bytes in every panel of the
 * packed matrix at base. */
static void pack_group_panels(const struct qr_layout *l, const struct qformat *fr, int R,
			      int64_t nb, int64_t ng, int64_t g, const char *rows, size_t rb,
			      char *base, int unpack)
{
	const int64_t pb = panel_blocks(fr, R, nb);
	for (int64_t p = 0; p * pb < nb; p++) {
		const struct qr_panel pn = panel_at(fr, R, nb, ng, p);
		pack_group(l, fr, R, pn.nb, rows + (size_t)pn.b0 * fr->block_bytes, rb,
			   base + pn.off + (size_t)g * pn.gstride, unpack);
	}
}

static int pack_all(const struct qformat *f, const void *src, int64_t m, int64_t k, void *dst,
		    int threads, int unpack, const char *what)
{
	int rc = check_shape(f, src, dst, m, k, what);
	if (rc)
		return rc;
	const struct qformat *fr = r8_fmt(f);
	if (unpack && fr != f)
		return ocb_seterr(OCB_EINVAL, "%s: %s's r8 layout holds %s codes", what, f->name, fr->name);
	struct qr_layout l;
	if ((rc = qr_layout(fr, &l)))
		return rc;
	const int R = qrepack_rows(f);
	const size_t rb = qformat_row_bytes(f, k), gb = (size_t)R * qformat_row_bytes(fr, k);
	const int64_t nb = k / f->block, ng = m / R;
	const char *s = src;
	char *d = dst;
	int failed = 0;
#pragma omp parallel num_threads(threads > 0 ? threads : omp_get_max_threads())
	{
		char *tmp = fr != f ? malloc(gb) : NULL; /* one transcoded group */
		if (fr != f && !tmp) {
#pragma omp atomic write
			failed = 1;
		}
#pragma omp for schedule(static)
		for (int64_t g = 0; g < ng; g++) {
			if (unpack) {
				pack_group_panels(&l, fr, R, nb, ng, g, d + (size_t)g * gb, rb, (char *)s, 1);
			} else if (fr == f) {
				pack_group_panels(&l, fr, R, nb, ng, g, s + (size_t)g * gb, rb, d, 0);
			} else if (tmp) {
				tq1_to_tq2(f, s + (size_t)g * (size_t)R * rb, R, k, tmp);
				pack_group_panels(&l, fr, R, nb, ng, g, tmp, gb / (size_t)R, d, 0);
			}
		}
		free(tmp);
	}
	if (failed)
		return ocb_seterr(OCB_ENOMEM, "%s: %zu-byte group buffer", what, gb);
	/* the m % R last rows stay plain (in f) */
	memcpy(d + (size_t)ng * gb, s + (size_t)ng * (unpack ? gb : (size_t)R * rb),
	       (size_t)(m - ng * R) * rb);
	return OCB_OK;
}

int qrepack_pack(const struct qformat *f, const void *w, int64_t m, int64_t k, void *dst,
		 int threads)
{
	return pack_all(f, w, m, k, dst, threads, 0, "repack");
}

int qrepack_unpack(const struct qformat *f, const void *wr, int64_t m, int64_t k, void *dst)
{
	return pack_all(f, wr, m, k, dst, 1, 1, "unpack");
}

void *qrepack_alloc(size_t bytes)
{
	void *p = ocb_alloc_huge(bytes); /* fewer TLB misses while streaming */
	if (!p)
		ocb_seterr(OCB_ENOMEM, "repack: cannot allocate %zu bytes", bytes);
	return p;
}

void qrepack_free(void *p)
{
	free(p);
}

/* ---- GEMV on the r8 layout ---- */

/* Plain C twin: each row of a group is gathered back into plain blocks and multiplied with
 * the format's scalar vec_dot_ref, so the result equals qgemv_ref's bit for bit (same
 * arithmetic in the same order, by construction). TQ1_0 rows come back as TQ2_0 blocks
 * of the same codes and scale, and tq2_0_vec_dot_ref evaluates the same expression as
 * tq1_0_vec_dot_ref (exact int32 block sum, then sum += d_w * d_a * sum). */
int qgemv_r8_ref(const struct qformat *f, const void *wr, int64_t m, int64_t k,
		 const void *xq, float *y, int threads)
{
	int rc = check_shape(f, wr, xq, m, k, "qgemv_r8_ref");
	const struct qformat *fr = f ? r8_fmt(f) : NULL;
	struct qr_layout l;
	if (rc || (rc = qr_layout(fr, &l)))
		return rc;
	if (!y)
		return ocb_seterr(OCB_EINVAL, "qgemv_r8_ref: NULL output");
	const int R = qrepack_rows(f);
	const size_t rb = qformat_row_bytes(f, k), rbr = qformat_row_bytes(fr, k);
	const size_t gb = (size_t)R * rbr;
	const int64_t nb = k / f->block, ng = m / R;
	const char *w = wr;
	int failed = 0;
#pragma omp parallel num_threads(threads > 0 ? threads : omp_get_max_threads())
	{
		char *rows = malloc(gb); /* one group back in plain layout */
		if (!rows) {
#pragma omp atomic write
			failed = 1;
		}
#pragma omp for schedule(static)
		for (int64_t g = 0; g < ng; g++) {
			if (!rows)
				continue;
			pack_group_panels(&l, fr, R, nb, ng, g, rows, rbr, (char *)w, 1);
			for (int r = 0; r < R; r++)
				y[g * R + r] = fr->vec_dot_ref(k, rows + (size_t)r * rbr, xq);
		}
		free(rows);
	}
	if (failed)
		return ocb_seterr(OCB_ENOMEM, "qgemv_r8_ref: %zu-byte group buffer", gb);
	for (int64_t r = ng * R; r < m; r++)
		y[r] = f->vec_dot_ref(k, w + (size_t)ng * gb + (size_t)(r - ng * R) * rb, xq);
	return OCB_OK;
}

/* The best VNNI this CPU offers (QR_AVX2: none; OCB_FORCE_AVX2 counts as none): AVX-512
 * VNNI first (its EVEX vpdpbusd takes the activation broadcast as a memory operand,
 * {1to8}: TQ2_0 hot 30-32 vs 27-30 GB/s with the VEX form on the Xeon, three pairs of
 * runs at load ~38), then AVX-VNNI (Intel client cores without AVX-512). */
static enum qr_isa cpu_vnni(void)
{
	return ocb_cpu_avx512vnni() ? QR_AVX512VNNI : ocb_cpu_avxvnni() ? QR_AVXVNNI : QR_AVX2;
}

static enum qgemv_kind r8_kind_of(enum qr_isa isa)
{
	return isa == QR_AVXVNNI ? QGEMV_VNNI_R8 : isa == QR_AVX512VNNI ? QGEMV_VNNI512_R8
									: QGEMV_AVX2_R8;
}

/* The zmm r16 kernels where the CPU has AVX-512 VNNI and the format has one, else the
 * best r8 kind. */
static enum qgemv_kind zmm_kind_of(const struct qformat *f, enum qr_isa isa)
{
	return isa == QR_AVX512VNNI && qr_zmm_kernel(r8_fmt(f)->type) ? QGEMV_VNNI512_R16
								      : r8_kind_of(isa);
}

static int r16_streams(enum qformat_type type);

/* The instruction set of an r8 kind's kernels (AVX2 also for the plain kind) */
static enum qr_isa r8_isa(enum qgemv_kind kind)
{
	return kind == QGEMV_VNNI_R8 ? QR_AVXVNNI : kind == QGEMV_VNNI512_R8 ? QR_AVX512VNNI : QR_AVX2;
}

/* The one-group kernel of a kernel kind for a kernel format (qr_kernel_type): zmm on
 * r16, else the r8 kernel of the kind's instruction set */
static qr_group_fn group_kernel(enum qgemv_kind kind, enum qformat_type type)
{
	return kind == QGEMV_VNNI512_R16 ? qr_zmm_kernel(type) : qr_avx2_kernel(type, r8_isa(kind));
}

/* The GEMM's kernel for QR_ROWS activation rows per call */
static qr_rows_fn rows_kernel(enum qgemv_kind kind, enum qformat_type type)
{
	return kind == QGEMV_VNNI512_R16 ? qr_zmm_rows_kernel(type)
					 : qr_avx2_rows_kernel(type, r8_isa(kind));
}

/* One thread's share of one panel: groups of R rows at base + g * gstride, k columns of
 * activations at xq; add: add to y (a later panel) rather than set it. */
struct qr_share {
	const char *base;
	size_t gstride;
	int64_t k;
	const char *xq;
	int R, add;
};

static void share_out(const struct qr_share *sh, int64_t g, const float *t, float *y)
{
	for (int i = 0; i < sh->R; i++)
		y[g * sh->R + i] = sh->add ? y[g * sh->R + i] + t[i] : t[i];
}

/* groups g0 .. g1 - 1 in order: one forward stream */
static void share_one_stream(qr_group_fn kern, const struct qr_share *sh, int64_t g0,
			     int64_t g1, float *y)
{
	for (int64_t g = g0; g < g1; g++) {
		float t[16]; /* R <= 16 outputs */
		kern(sh->k, sh->base + (size_t)g * sh->gstride, sh->xq, t);
		share_out(sh, g, t, y);
	}
}

/* groups g0 .. g1 - 1 as ns forward streams, from ns equal parts side by side (the last
 * (g1 - g0) % ns groups alone) */
static void share_streams(qr_group_fn kern, qr_groups_fn kernn, int ns, const struct qr_share *sh,
			  int64_t g0, int64_t g1, float *y)
{
	const int64_t part = (g1 - g0) / ns;
	for (int64_t i = 0; i < part; i++) {
		float t[8][16];
		const void *gs[8];
		float *ys[8];
		for (int s = 0; s < ns; s++) {
			gs[s] = sh->base + (size_t)(g0 + s * part + i) * sh->gstride;
			ys[s] = t[s];
		}
		kernn(sh->k, gs, sh->xq, ys);
		for (int s = 0; s < ns; s++)
			share_out(sh, g0 + s * part + i, t[s], y);
	}
	share_one_stream(kern, sh, g0 + ns * part, g1, y);
}

/* The prefetch distances of the qgemv_r8 call a worker thread is in (set: inside one),
 * which its r16 kernels read through qk_prefetch_r16 */
static __thread int r16_call_set;
static __thread struct qk_pf r16_call_pf;

/* What every thread of one qgemv_r8 call shares */
struct gemv_call {
	const struct qformat *f, *fr;
	const char *w;
	const void *xq;
	float *y;
	qr_group_fn kern;
	qr_groups_fn kernn; /* NULL: one stream */
	int ns, R;
	int64_t ng, nb, np; /* groups, blocks per row, panels */
	size_t ab;          /* bytes of one activation block */
	struct qk_pf pf;
};

/* Thread t of nt: its groups, panel by panel. It keeps the same groups in every panel
 * (its share is a function of its number alone), so its partial sums in y are its own. */
static void gemv_r8_part(const struct gemv_call *c, int t, int nt)
{
	const int64_t g0 = c->ng * t / nt, g1 = c->ng * (t + 1) / nt;
	r16_call_pf = c->pf;
	r16_call_set = 1;
	for (int64_t p = 0; p < c->np; p++) {
		const struct qr_panel pn = panel_at(c->fr, c->R, c->nb, c->ng, p);
		const size_t xo = (size_t)(pn.b0 * c->fr->block / c->f->act_block) * c->ab;
		const struct qr_share sh = {c->w + pn.off, pn.gstride, pn.nb * c->fr->block,
					    (const char *)c->xq + xo, c->R, p > 0};
		if (c->kernn)
			share_streams(c->kern, c->kernn, c->ns, &sh, g0, g1, c->y);
		else
			share_one_stream(c->kern, &sh, g0, g1, c->y);
	}
	r16_call_set = 0;
}

/* qgemv_r8 under setting set (NULL: the defaults, r16_streams and the r16_pf table); the
 * r16 kernels only take its streams (capped at the format's) and prefetch distances */
static int gemv_r8_run(const struct qformat *f, enum qgemv_kind kind, const void *wr, int64_t m,
		       int64_t k, const void *xq, float *y, int threads,
		       const struct qgemv_setting *set)
{
	if (!ocb_cpu_avx2())
		return qgemv_r8_ref(f, wr, m, k, xq, y, threads);
	int rc = check_shape(f, wr, xq, m, k, "qgemv_r8");
	if (rc)
		return rc;
	if (!y)
		return ocb_seterr(OCB_EINVAL, "qgemv_r8: NULL output");
	const int R = qgemv_kind_rows(kind); /* = qrepack_rows(f) */
	const struct qformat *fr = r8_fmt(f);
	const size_t rb = qformat_row_bytes(f, k), gb = (size_t)R * qformat_row_bytes(fr, k);
	const int64_t nb = k / fr->block, pb = panel_blocks(fr, R, nb);
	const int zmm = kind == QGEMV_VNNI512_R16, maxs = qr_max_streams(fr->type);
	const struct qgemv_setting use = set ? *set : qr_default_setting(fr->type);
	int ns = use.streams;
	ns = ns == 2 || ns == 4 || ns == 8 ? (ns < maxs ? ns : maxs) : 1;
	const struct gemv_call c = {
		.f = f, .fr = fr, .w = wr, .xq = xq, .y = y,
		.kern = group_kernel(kind, fr->type),
		.kernn = zmm ? qr_zmm_kernels(fr->type, ns) : NULL, .ns = ns, .R = R,
		.ng = m / R, .nb = nb, .np = (nb + pb - 1) / pb,
		.ab = qformat_act_bytes(f, 1, f->act_block), .pf = {use.pf_l1, use.pf_l2}};
	const int nt = use.threads == 1 ? 1 : threads > 0 ? threads : omp_get_max_threads();
	if (nt == 1) { /* no team: even a team of one ends in a futex wake-up (libgomp's
			* barrier), a system call per GEMV that cost 1-1.5 us of a 6 us
			* 1024 x 1024 TQ2_0 one on the Zen 5 VM */
		gemv_r8_part(&c, 0, 1);
	} else {
#pragma omp parallel num_threads(nt)
		gemv_r8_part(&c, omp_get_thread_num(), omp_get_num_threads());
	}
	const char *rest = (const char *)wr + (size_t)c.ng * gb; /* rows past the groups */
	for (int64_t r = c.ng * R; r < m; r++)
		y[r] = f->vec_dot_avx2(k, rest + (size_t)(r - c.ng * R) * rb, xq);
	return OCB_OK;
}

int qgemv_r8(const struct qformat *f, const void *wr, int64_t m, int64_t k, const void *xq,
	     float *y, int threads)
{
	const enum qgemv_kind kind = qgemv_choose(f); /* once per call: it reads the environment */
	struct qgemv_setting plan;
	const int planned = f && qgemv_plan_find_kind(f, kind, m, k, threads, &plan);
	return gemv_r8_run(f, kind, wr, m, k, xq, y, threads, planned ? &plan : NULL);
}

int qgemv_r8_setting(const struct qformat *f, const void *wr, int64_t m, int64_t k,
		     const void *xq, float *y, int threads, const struct qgemv_setting *set)
{
	return gemv_r8_run(f, qgemv_choose(f), wr, m, k, xq, y, threads, set);
}

/* ---- GEMM on the r8 layout ----
 * Y[n][m] = Xq[n][k] W^T, batch n (prefill). Each thread takes its groups panel by panel as
 * the GEMV does, and runs a tile of a group's part of a panel (at most 16 rows x 64
 * blocks: 35 KiB of Q8_0; TQ2_0's whole part, 17 KiB at k = 4096) against every
 * activation row while it is still in L1 or L2: the weights come from memory once per
 * call, not once per activation row. A kernel takes 4 activation rows per call
 * (qr_zmm_rows_kernel on r16, qr_avx2_rows_kernel on r8: each decoded vector of codes
 * feeds all 4); the rows left over are one call of the GEMV's own group kernel each. */

struct gemm_call {
	const struct qformat *f, *fr;
	const char *w, *xq;
	float *y;
	qr_group_fn kern;  /* one activation row */
	qr_rows_fn kern4; /* QR_ROWS of them, or NULL */
	int R;
	int64_t m, n, ng, nb, np;
	size_t ab, arow; /* bytes of one activation block, of one activation row */
};

/* y[j][g R ..] (+)= the group at grp times activation rows j0 .. j0 + nj - 1 (of xq) */
static void gemm_group_rows(const struct gemm_call *c, int64_t kp, const char *grp,
			    const char *xq, int64_t g, int64_t j0, int nj, int add)
{
	float t[QR_ROWS][16]; /* R <= 16 outputs per row */
	if (nj == QR_ROWS) {
		const void *xs[QR_ROWS];
		float *ys[QR_ROWS];
		for (int i = 0; i < QR_ROWS; i++)
			xs[i] = xq + (size_t)(j0 + i) * c->arow, ys[i] = t[i];
		c->kern4(kp, grp, xs, ys);
	} else {
		for (int i = 0; i < nj; i++)
			c->kern(kp, grp, xq + (size_t)(j0 + i) * c->arow, t[i]);
	}
	for (int i = 0; i < nj; i++) {
		float *yj = c->y + (j0 + i) * c->m + g * c->R;
		for (int r = 0; r < c->R; r++)
			yj[r] = add ? yj[r] + t[i][r] : t[i][r];
	}
}

/* Blocks of a group's part of an r16 panel (32-block formats) that the GEMM multiplies with
 * all n activation rows at a time: 16 rows x 64 blocks, at most 35 KiB (Q8_0), stay in L1
 * over the batch. Even, so a tile starts at a pair and is laid out as a panel part of its
 * own (quant_repack.h); the r8 layout (a group's scales, then its codes) and TQ2_0 take
 * whole panels. */
#define GEMM_TILE_BLOCKS 64

static void gemm_r8_part(const struct gemm_call *c, int t, int nt)
{
	const int64_t g0 = c->ng * t / nt, g1 = c->ng * (t + 1) / nt;
	/* hot data: no software prefetch (the hardware's follows the next group) */
	r16_call_pf = (struct qk_pf){0, 0};
	r16_call_set = 1;
	const int step = c->kern4 ? QR_ROWS : 1; /* activation rows per kernel call */
	const int tiled = c->R == 16 && c->fr->block == 32;
	const size_t rbb = (size_t)c->R * c->fr->block_bytes; /* one block of the R rows */
	for (int64_t p = 0; p < c->np; p++) {
		const struct qr_panel pn = panel_at(c->fr, c->R, c->nb, c->ng, p);
		const int64_t tile = tiled ? GEMM_TILE_BLOCKS : pn.nb;
		/* a group's part front to back: across the groups tile by tile read the
		 * weights at a stride and ran up to 1.21x the time (README, "Zen 5, 6 Dec
		 * 2026") */
		for (int64_t g = g0; g < g1; g++) {
			for (int64_t tb = 0; tb < pn.nb; tb += tile) {
				const int64_t tn = pn.nb - tb < tile ? pn.nb - tb : tile;
				const char *grp = c->w + pn.off + (size_t)g * pn.gstride + (size_t)tb * rbb;
				const char *xt = c->xq + (size_t)((pn.b0 + tb) * c->fr->block /
								  c->f->act_block) * c->ab;
				for (int64_t j = 0; j < c->n; j += step) {
					const int nj = c->n - j < step ? (int)(c->n - j) : step;
					gemm_group_rows(c, tn * c->fr->block, grp, xt, g, j, nj,
							p > 0 || tb > 0);
				}
			}
		}
	}
	r16_call_set = 0;
}

/* qk_check_args (buffers, n, k), then the layout (check_shape) */
static int check_gemm(const struct qformat *f, const void *wr, int64_t m, int64_t k,
		      const void *xq, int64_t n, const float *y, const char *what)
{
	int rc = qk_check_args(f, wr, m, k, xq, n, y, what);
	return rc ? rc : check_shape(f, wr, xq, m, k, what);
}

int qgemm_r8(const struct qformat *f, const void *wr, int64_t m, int64_t k, const void *xq,
	     int64_t n, float *y, int threads)
{
	int rc = check_gemm(f, wr, m, k, xq, n, y, "qgemm_r8");
	if (rc)
		return rc;
	if (!ocb_cpu_avx2())
		return qgemm_r8_ref(f, wr, m, k, xq, n, y, threads);
	const enum qgemv_kind kind = qgemv_choose(f);
	const int R = qgemv_kind_rows(kind); /* = qrepack_rows(f) */
	const struct qformat *fr = r8_fmt(f);
	const size_t rb = qformat_row_bytes(f, k), gb = (size_t)R * qformat_row_bytes(fr, k);
	const int64_t nb = k / fr->block, pb = panel_blocks(fr, R, nb);
	const struct gemm_call c = {
		.f = f, .fr = fr, .w = wr, .xq = xq, .y = y,
		.kern = group_kernel(kind, fr->type),
		.kern4 = rows_kernel(kind, fr->type),
		.R = R, .m = m, .n = n, .ng = m / R, .nb = nb, .np = (nb + pb - 1) / pb,
		.ab = qformat_act_bytes(f, 1, f->act_block), .arow = qformat_act_bytes(f, 1, k)};
	const int nt = threads > 0 ? threads : omp_get_max_threads();
	if (nt == 1) { /* no team (gemv_r8_run) */
		gemm_r8_part(&c, 0, 1);
	} else {
#pragma omp parallel num_threads(nt)
		gemm_r8_part(&c, omp_get_thread_num(), omp_get_num_threads());
	}
	const char *rest = (const char *)wr + (size_t)c.ng * gb; /* rows past the groups */
	for (int64_t j = 0; j < n; j++)
		for (int64_t r = c.ng * R; r < m; r++)
			y[j * m + r] = f->vec_dot_avx2(k, rest + (size_t)(r - c.ng * R) * rb,
						       (const char *)xq + (size_t)j * c.arow);
	return OCB_OK;
}

/* Plain C twin: one qgemv_r8_ref per activation row (bit for bit qgemm_ref's rows) */
int qgemm_r8_ref(const struct qformat *f, const void *wr, int64_t m, int64_t k, const void *xq,
		 int64_t n, float *y, int threads)
{
	int rc = check_gemm(f, wr, m, k, xq, n, y, "qgemm_r8_ref");
	if (rc)
		return rc;
	const size_t arow = qformat_act_bytes(f, 1, k);
	for (int64_t j = 0; j < n && !rc; j++)
		rc = qgemv_r8_ref(f, wr, m, k, (const char *)xq + (size_t)j * arow, y + j * m, threads);
	return rc;
}

/* ---- which kernel ---- */

const char *qgemv_kind_name(enum qgemv_kind kind)
{
	switch (kind) {
	case QGEMV_AVX2:
		return "avx2";
	case QGEMV_AVX2_R8:
		return "avx2-r8";
	case QGEMV_VNNI_R8:
		return "avxvnni-r8";
	case QGEMV_VNNI512_R8:
		return "avx512vnni-r8";
	case QGEMV_VNNI512_R16:
		return "avx512vnni-r16";
	default:
		return "ref";
	}
}

enum qgemv_kind qgemv_choose(const struct qformat *f)
{
	if (!f || !ocb_cpu_avx2())
		return QGEMV_REF;
	const char *env = getenv("OCB_QGEMV");
	if (env && *env) {
		if (strcmp(env, "ref") == 0)
			return QGEMV_REF;
		if (strcmp(env, "plain") == 0)
			return QGEMV_AVX2;
		if (strcmp(env, "r16") == 0)
			return !qrepack_supported(f) ? QGEMV_AVX2 : zmm_kind_of(f, cpu_vnni());
		enum qr_isa want = strcmp(env, "r8-vnni") == 0      ? QR_AVXVNNI
				   : strcmp(env, "r8-vnni512") == 0 ? QR_AVX512VNNI
								    : QR_AVX2;
		if (want != QR_AVX2 || strcmp(env, "r8") == 0) {
			int have = want == QR_AVX2 || (want == QR_AVXVNNI ? ocb_cpu_avxvnni()
									   : ocb_cpu_avx512vnni());
			return !qrepack_supported(f) ? QGEMV_AVX2 : r8_kind_of(have ? want : QR_AVX2);
		}
	}
	return qr_default_kind(f, ocb_cpu_id(), cpu_vnni());
}

/* Software prefetch distance of every GEMV kernel (quant_impl.h). 2048 bytes on every CPU
 * so far: about one core's bandwidth-delay product on both vendors (Xeon: ~16 GB/s x
 * ~125 ns; Zen 3: ~20 GB/s x ~100 ns) and the measured best on the Xeon (quant_avx2.c).
 * OCB_QGEMV_PF=<bytes> (0..65536) overrides it (and the r16 kernels' L1 distance),
 * OCB_QGEMV_PF_L2=<bytes> the r16 kernels' L2 distance, to re-tune on a new machine with
 * quant_gemv_bw without rebuilding. */
int qk_prefetch = 2048;
/* qk_prefetch_r16's answers, settled once per process (its kernels ask once per group,
 * inside the timed GEMV): [format class: the 32-block formats', TQ2_0's][streams: 1, 2,
 * 4, 8], and the environment's overrides (-1: none) */
static struct qk_pf r16_pf[2][4];
static int pf_l1_env = -1, pf_l2_env = -1, pf_tool_set;

/* bytes in 0..65536 from environment variable name, or -1: unset or not such a number
 * (then the default stays, silently: a warning from this constructor would print twice
 * where ocbench re-executes itself for OpenBLAS, collect/host.c) */
static int pf_env(const char *name)
{
	const char *env = getenv(name);
	if (!env || !*env)
		return -1;
	char *end = NULL;
	long v = strtol(env, &end, 10);
	return end && *end == 0 && v >= 0 && v <= 65536 ? (int)v : -1;
}

/* index of ns (1, 2, 4, 8) in r16_pf */
static int ns_index(int ns)
{
	return ns >= 8 ? 3 : ns >= 4 ? 2 : ns >= 2 ? 1 : 0;
}

/* r16_pf from the per-CPU defaults and the overrides l1, l2 (-1: none) */
static void r16_pf_settle(int l1, int l2)
{
	const enum qformat_type cls[2] = { QF_Q4_0, QF_TQ2_0 };
	for (int c = 0; c < 2; c++)
		for (int i = 0; i < 4; i++) {
			struct qk_pf pf = qr_default_prefetch(cls[c], ocb_cpu_id(), 1 << i);
			if (l1 >= 0)
				pf.l1 = l1;
			if (l2 >= 0)
				pf.l2 = l2;
			r16_pf[c][i] = pf;
		}
}

__attribute__((constructor)) static void qk_prefetch_init(void)
{
	pf_l1_env = pf_env("OCB_QGEMV_PF");
	pf_l2_env = pf_env("OCB_QGEMV_PF_L2");
	if (pf_l1_env >= 0)
		qk_prefetch = pf_l1_env;
	r16_pf_settle(pf_l1_env, pf_l2_env);
}

void qk_prefetch_r16_set(int l1, int l2)
{
	pf_tool_set = l1 >= 0 || l2 >= 0;
	r16_pf_settle(l1 >= 0 ? l1 : pf_l1_env, l2 >= 0 ? l2 : pf_l2_env);
}

/* The zmm r16 kernels' prefetches. Intel: 8 KiB ahead into L2 (prefetcht1) and 2 KiB
 * ahead into L1 (1 KiB for TQ2_0). Measured on the Xeon model 0xcf VM (2 Dec 2026, cold
 * 16384^2, against the zmm read loop at the same moment, 1 and 2 threads, Q8_0 / Q4_0 /
 * TQ2_0): none 92-97% / 71-74% / 66-78%; into L1 alone, 2 KiB 83-98% / 77-93% / 71-76%,
 * 8 KiB 97-98% / 88-90% / 68-71%; into L2 alone, 8 KiB 96-97% / 91-95% / 79-84%, 4-32 KiB
 * alike for Q4_0 and TQ2_0 (78-87%); prefetchnta 40-57% for all. 8 KiB into L2 and, on
 * top, into L1 at 1 / 2 / 4 KiB: Q4_0 90-94 / 97-98 / -%, TQ2_0 87-90 / 84-86 / 86-90%
 * (two rounds), Q4_1 93-94 / 98-103 / 98-100%, Q2_G 90-91% and Q3_G 81-83% at each.
 * Why two, as far as we can tell without counters (this VM has no PMU): a prefetch into
 * L1 holds one of the core's few L1 fill buffers for the whole trip from DRAM, one into
 * L2 does not; the near one then moves lines from L2 to L1 before the loads need them.
 * AMD: into L1 only, measured on the Zen 5 VM (2 Dec 2026, cold
 * 16384^2, fraction of a read loop's rate at the same moment). On whole rows, every
 * distance timed in turn within one process: Q8_0 none 86-100%, 2 KiB 84-96%, 8 KiB
 * 74-86%; Q4_0 none 66-94%, 2 KiB 55-86% (worse in every run), 8 KiB 63-90%; TQ2_0 none
 * 50-57%, 2 KiB 81-92%, 8 KiB 90-103%, 16 KiB 86-97%. On the 64-block column panels the
 * 32-block formats used then (quant_repack.h), two alternating rounds at 1 and 2 threads:
 * none 89-102%, 2 KiB 73-84%, 8 KiB 72-80%. A stream the hardware prefetchers follow
 * on their own is only disturbed by the extra requests, unless the loop eats its bytes as
 * slowly as TQ2_0 (4 codes per byte). Q4_1 takes Q4_0's. That held on 1 and 2 streams
 * per thread; on 4 and 8 (qr_default_streams), 1 KiB ahead into L1 is better: each
 * stream is eaten 4-8x more slowly, so 1 KiB is as far ahead in time as 4-8 KiB on
 * one. Measured with every setting timed in turn within one process (quant_gemv_bw's
 * configs; 3 Dec 2026, the Zen 5 VM, cold 16384^2, 1 thread, two to three runs): Q8_0 on
 * 4 streams none 78-81%, 1 KiB 81-84%; Q4_0 on 8 none 70-72%, 1 KiB 77-86%; Q3_G on 8
 * none 63-65%, 1 KiB 79-80%; Q2_G on 8 none 61-63%, 1 KiB 77-78%. Every other line
 * only (every 128 or 256 bytes) did worse than none (Q4_0 on 4 and 8: 45-57%).
 * On 4 streams 2 KiB came out ahead of 1 KiB since (5 Dec 2026, evening, both timed in
 * turn within one process, ten rounds at 1 and 2 threads): Q8_0 in all ten (one a tie), by
 * 0-8%; Q4_0 in all ten, by 1.5-23%. 8 streams keep 1 KiB (2 KiB behind in 8 of 10).
 * TQ2_0 on 2 streams: none; on 4, 2 KiB. Its multi-stream kernels walk each block in a
 * loop (quant_repack_avx512.c tq2_0_r16s says why), which the hardware prefetchers
 * follow; a prefetch of a pair of blocks at once on top cost it (5 Dec 2026, 1 thread: 4
 * streams none 83-86%, 1 KiB 38-41%; 2 streams none 70-85%, 1 KiB 55-57%), one line per
 * line loaded (since that evening) does not: on 4 streams with 2 KiB it comes first at 2
 * threads (qr_default_streams). On one stream it keeps 8 KiB. */
struct qk_pf qr_default_prefetch(enum qformat_type type, const struct ocb_cpu_id *cpu, int ns)
{
	const int intel = strcmp(cpu->vendor, "GenuineIntel") == 0;
	if (intel)
		return (struct qk_pf){.l1 = type == QF_TQ2_0 ? 1024 : 2048, .l2 = 8192};
	if (type == QF_TQ2_0)
		return (struct qk_pf){.l1 = ns == 1 ? 8192 : ns == 4 ? 2048 : 0, .l2 = 0};
	return (struct qk_pf){.l1 = ns == 4 ? 2048 : ns >= 8 ? 1024 : 0, .l2 = 0};
}

/* Streams per thread of the r16 GEMV (quant_repack_impl.h). On AMD: 8 for Q3_G and Q2_G, 4
 * for Q8_0, Q4_0, Q4_1 and TQ2_0 (last paragraph); one elsewhere. Why several: a core's
 * DRAM share is bound by its misses in flight, not by its arithmetic: Q4_0 with its dot
 * products taken out (an xor in place of each vpdpbusd) ran no faster, 66-81% of the read
 * loop on 1-8 streams, where Q8_0 so reduced reached 86-90% on 4; each stream the hardware
 * prefetchers follow keeps its own distance ahead, and Q4_0's loop has twice Q8_0's
 * instructions per byte, so fewer of its lines fit in the core's window. Groups read side
 * by side from next to each other (18 KiB apart) did worse than one stream, so the parts
 * are far apart.
 * Measured on the Zen 5 VM (3 Dec 2026, cold 16384^2, fraction of the best read loop at
 * the same moment, which tries 1, 2 and 4 streams itself: kernels/stream.c), every
 * setting timed in turn within one process (quant_gemv_bw's configs: settings compared
 * across separate runs were swamped by the host's drift), streams 2 / 4 / 8 each with
 * its best prefetch (qr_default_prefetch), four runs at 1 thread and three at 2 in
 * phases where 2 threads read 78-91 GB/s (Q8_0: two and one, TQ2_0: two and two):
 * Q8_0 (2 / 4) 74-75 / 81-84% (1 thread), 78 / 84% (2); Q4_0 73-75 / 75-81 / 77-86%,
 * 77-78 / 78-80 / 76-78%; Q4_1 64-75 / 73-76 / 76-80%, 68-76 / 75-79 / 75-84%; Q3_G
 * 70-73 / 65-68 / 77-80%, 71-75 / 70-71 / 76-84%; Q2_G 68-72 / 71-73 / 76-79%, 69-72 /
 * 72-74 / 81-83%; TQ2_0 (1 / 2 / 4, 8 KiB / 2 KiB / 2 KiB into L1) 79-87 / 78-83 /
 * 61-67%, 74-82 / 69-80 / 57-63% (its 8 KiB ahead, times the streams, crowds L1;
 * without it 40-50%). Q4_0 at 2 threads is as fast on 4 as on 8; one rule is kept.
 * Rechecked at 2 threads the same evening (Q4_0, 2 streams without prefetch against 8
 * with 1 KiB, eight runs): best of 10 75-89% against 74-81%, but the median of paired
 * timings 73-79% against 73-81%; 2 streams won where 2 threads read 90-93 GB/s and
 * lost or tied where they read 83-87. Three runs of Q4_0, Q4_1, Q3_G and Q2_G (2
 * threads reading 77-90 GB/s) against 2 and 4 streams with and without prefetch ranked
 * 8 first in 10 of 12. No setting is ahead across the host's phases, so 8 stays.
 * Rechecked 4 Dec 2026 (README, "Zen 5, 4 Dec 2026"): Q4_0 at 2 threads, 4 streams with
 * 1 KiB led 8 in five of eight interleaved rounds (four by 8-10 points, one by 3) and
 * trailed in three (by 2-7); at 1 thread 8 led in seven of eight. Kernels that take one block
 * or one 64-byte vector per stream per step (the read loop's rate rises as that step
 * shrinks) came within 4 points of these for Q4_0.
 * The Xeon was measured with one stream (qr_default_prefetch's numbers) and keeps it.
 * On 4 Dec 2026, on another instance of the same VM, 2 streams without prefetch led 8
 * by 13-24 points in every round: the best setting depends on the host, so these
 * defaults are now the first candidate of a planner that times the others on the
 * weights at hand (qgemv_plan.h); they stand where nothing is planned.
 * TQ2_0 ran on one stream (8 KiB ahead) until its multi-stream kernels walked each block
 * in a loop (5 Dec 2026, quant_repack_avx512.c tq2_0_r16s); then, every setting timed in
 * turn within one process (`quant_gemv_bw 16384 8 T 1 tq2_0 1:8192,2:0,4:0`), fraction of
 * the best read, 1 / 2 / 4 streams: eight rounds at 1 thread 63-81% / 78-102% / 75-98%
 * (2 first in 5, 4 in 3), eleven at 2 threads 65-81% / 65-92% / 42-92% (4 first in 5, 2
 * in 3, 1 in 3; the 2-thread read rate moved between 55 and 86 GB/s). With 2 KiB ahead
 * asked one line per line loaded (that evening; qr_default_prefetch), 4 streams came
 * first at 2 threads in 7 of 8 rounds (88-118% against 74-94% on 2 without), and at 1
 * thread tied with 2 (4 of 7 rounds; 71-113% against 69-107%): TQ2_0 takes 4.
 * Once 4 streams asked 2 KiB ahead (that evening), 8 with 1 KiB against 4 with 2 KiB,
 * timed in turn within one process in both orders (5 Dec 2026, 19:50 and 20:41 UTC,
 * eighteen rounds at 1 and 2 threads; README, "Zen 5, 5 Dec 2026 (night)"), 4 came
 * ahead for Q4_1 in 15 and 17 of 18 (means 81.3 against 77.9%, 79.5 against 71.4%), for
 * Q4_0 in 8 and 15 (88.0 against 86.9% for 8 at 1 thread: a tie; 84.6 against 80.0% at
 * 2), for Q3_G in 0 and 3, for Q2_G in 4 and 6: Q4_0 and Q4_1 take 4, Q3_G and Q2_G
 * keep 8. */
int qr_default_streams(enum qformat_type type, const struct ocb_cpu_id *cpu)
{
	if (strcmp(cpu->vendor, "AuthenticAMD") != 0)
		return 1;
	return type == QF_Q3_G || type == QF_Q2_G ? 8 : 4;
}

/* Streams a format's zmm kernels exist for, at most: 8 for the 32-block formats, but 4
 * for Q8_0 and TQ2_0, whose kernels on 8 run out of zmm registers (their per-block sums
 * take 4 and 8 accumulators of their own) */
int qr_max_streams(enum qformat_type type)
{
	return type == QF_Q8_0 || type == QF_TQ2_0 ? 4 : 8;
}

/* OCB_QGEMV_STREAMS as a valid choice (1, 2, 4, 8), else 0 */
static int streams_env(void)
{
	const char *env = getenv("OCB_QGEMV_STREAMS");
	return env && (strcmp(env, "1") == 0 || strcmp(env, "2") == 0 || strcmp(env, "4") == 0 ||
		       strcmp(env, "8") == 0)
		       ? env[0] - '0'
		       : 0;
}

int qr_settings_overridden(void)
{
	return streams_env() || pf_l1_env >= 0 || pf_l2_env >= 0 || pf_tool_set;
}

/* The streams per thread in force for a format's r16 kernels: OCB_QGEMV_STREAMS (1, 2, 4
 * or 8, capped at qr_max_streams; read on every call, as OCB_QGEMV is) or the CPU's
 * default. */
static int r16_streams(enum qformat_type type)
{
	const int env = streams_env();
	const int ns = env ? env : qr_default_streams(type, ocb_cpu_id());
	return ns < qr_max_streams(type) ? ns : qr_max_streams(type);
}

int qgemv_streams(const struct qformat *f)
{
	return f && qgemv_choose(f) == QGEMV_VNNI512_R16 && qrepack_supported(f)
		       ? r16_streams(r8_fmt(f)->type)
		       : 1;
}

const char *qr_r16_variant(const struct qformat *f, int ns, int one_thread)
{
	static const char *const name[2][4] = {
		{"avx512vnni-r16", "avx512vnni-r16x2", "avx512vnni-r16x4", "avx512vnni-r16x8"},
		{"avx512vnni-r16-1t", "avx512vnni-r16x2-1t", "avx512vnni-r16x4-1t",
		 "avx512vnni-r16x8-1t"}};
	const int maxs = qr_max_streams(r8_fmt(f)->type);
	ns = ns < maxs ? ns : maxs;
	return name[one_thread != 0][ns == 8 ? 3 : ns == 4 ? 2 : ns == 2 ? 1 : 0];
}

const char *qgemv_variant(const struct qformat *f)
{
	const enum qgemv_kind kind = qgemv_choose(f);
	return kind == QGEMV_VNNI512_R16 ? qr_r16_variant(f, qgemv_streams(f), 0)
					 : qgemv_kind_name(kind);
}

enum qformat_type qr_kernel_type(const struct qformat *f)
{
	return r8_fmt(f)->type;
}

struct qgemv_setting qr_default_setting(enum qformat_type type)
{
	const int ns = r16_streams(type);
	const struct qk_pf pf = qk_prefetch_r16(type, ns);
	return (struct qgemv_setting){ns, pf.l1, pf.l2, 0};
}

struct qk_pf qk_prefetch_r16(enum qformat_type type, int ns)
{
	if (r16_call_set) /* inside a qgemv_r8 call: its setting */
		return r16_call_pf;
	return r16_pf[type == QF_TQ2_0][ns_index(ns)];
}

/* The default GEMV per format and CPU. The Xeon is measured here; Zen 3 is not available,
 * so its column rests on published per-instruction data: LLVM 14's znver3 scheduling
 * model (llvm-mca; latencies, pipes and throughputs as in uops.info's and Agner Fog's
 * Zen 3 tables). Zen 3 runs 256-bit integer/FP vector work on 4 pipes FP0-3: vpmaddubsw
 * and vpmaddwd on FP0/FP3 only (latency 3, 2 per cycle), shifts and shuffles on FP1/FP2,
 * vcvtdq2ps on FP2/FP3, FMA on FP0/FP1, vcvtph2ps 2 uops; broadcasts from memory go
 * through the load pipes. Intel Golden Cove-class cores have 3 vector ALU ports (p0, p1,
 * p5) with maddubs/madd/shifts/cvt/FMA on p0/p1 only. Bytes of weights per cycle of the
 * inner loops gcc -O2 makes (llvm-mca -mcpu=znver3 / icelake-server), and, measured on
 * the Xeon, hot GB/s (1024^2, weights in L2, 1 thread, best of 1000, two runs):
 *
 *   format  layout   Zen 3 B/cycle  Icelake-SP B/cycle  Xeon hot GB/s
 *   Q8_0    plain         9.6             8.4             27-29
 *   Q8_0    r8           18.4            14.6             43-48
 *   Q4_0    plain         5.4             5.9             16-18
 *   Q4_0    r8           12.2            13.0             39-44
 *   Q4_1    plain          -               -              15
 *   Q4_1    r8           12.8            14.0             42-43
 *   Q3_G    plain          -               -               9
 *   Q3_G    r8            6.8             6.4             23-25
 *   Q2_G    plain          -               -               9
 *   Q2_G    r8            7.5             8.0             26-28
 *   TQ2_0   plain         7.5             6.1             15-16
 *   TQ2_0   r8            7.4             7.0             24-26
 *   TQ1_0   plain         3.5             2.7              5
 *   TQ1_0   r8 (as TQ2)   6.0             5.7             19-21 (per TQ1_0 byte)
 *
 * One Zen 3 core's DRAM share is ~20 GB/s = ~6 B/cycle at ~3.3 GHz, and Q8_0's plain
 * loop, which the user measured at 85-88% of DRAM there, runs at 9.6 B/cycle: a loop
 * needs roughly that margin over the memory rate to keep DRAM busy. Q4_0 plain (5.4) is
 * below the memory rate, i.e. compute-bound on Zen 3, as the user found (53-58%); r8
 * more than doubles it (12.2, above Q8_0's plain 9.6): expected at or above Q8_0's
 * 85-88%. Q8_0 itself takes r8 too (18.4: twice the margin it had). The
 * 2-bit formats (Q2_G, Q3_G, TQ2_0: 4 codes per byte, so twice the maddubs per byte of
 * the 4-bit ones) stay near 7 B/cycle with either layout, so on Zen 3 they are expected
 * below the 85% (TQ2_0) target: see the report. For TQ2_0 the model rates r8 and plain
 * alike on Zen 3 (7.4 vs 7.5), so AMD Zen cores keep the plain TQ2_0 loop (no repacking
 * for no gain); on the Xeon r8 measured 1.38x faster hot and is chosen.
 * Zen 3, rechecked on the current loops (llvm-mca 14 -mcpu=znver3, 200 iterations): the
 * AVX2 r8 TQ2_0 loop takes 73 cycles per 512-byte block (7.0 B/cycle), bound by the four
 * FP pipes (each ~71 cycles busy per block with 64 maddubs, 64 and, 61 int16 add, 16
 * shifts and the 65 activation broadcasts, which LLVM's Zen 3 model also puts on FP
 * pipes), below Q8_0 plain's 9.6 B/cycle that reached 85-88% there: TQ2_0 (and TQ1_0 as
 * TQ2_0) on Zen 3 is expected near the user's 74-75% / ~60%, short of the targets. What
 * lifts them on Intel is VNNI (below), which Zen 3 does not have; Zen 4 has AVX-512 VNNI
 * and takes the EVEX kernels (46 cycles per block under the znver3 model, the nearest
 * LLVM 14 has; 52 under icelake-server, against 76 for AVX2).
 * VNNI (vpdpbusd: multiply, pair-add and int32 accumulate in one instruction; AVX-VNNI's
 * VEX form, or AVX-512 VNNI's EVEX form on ymm): an earlier note here had the VNNI r8
 * kernels 1.5-2.5x slower on the Xeon, but that timing was of the plain-layout loop
 * (quant_gemv_bw repacked only for "avx2-r8", so under OCB_QGEMV=r8-vnni it ran qgemv on
 * plain blocks). Timed on the r8 layout (1 thread, hot, best of 300, load ~8), VNNI is
 * at least as fast for every format, and for TQ2_0, with its own shift-free form of 8
 * independent sums (quant_repack_kern.h), 38.5 vs 27 GB/s at 2048^2; llvm-mca
 * -mcpu=icelake-server: 52 instead of 76 cycles per 512-byte block. So a CPU with either
 * VNNI runs the VNNI r8 kernels for every format (which VNNI first: cpu_vnni).
 * AMD with AVX-512 VNNI (Zen 4, Zen 5) runs the zmm kernels on the r16 layout
 * (quant_repack_avx512.c), for every format. Measured on an AMD EPYC Zen 5
 * VM (family 0x1a, 2 vCPU, 2 Dec 2026): hot (256 x 4096, 1 thread, best of 20 x 200)
 * the r8 EVEX-ymm kernels gave Q8_0 46, Q4_0 34, TQ2_0 29 GB/s (the VEX AVX-VNNI form
 * 33 / 22 / 13), the r16 zmm ones 74 / 75 / 56; cold 16384^2 against a DRAM read of
 * 31-40 GB/s per core, that is the difference between 60-77% and 78-96% of it
 * (tests/perf/README.md); with r16's pairs and panels (quant_repack.h), 84-112% for
 * Q8_0, Q4_0, TQ2_0 (five runs at 1 and 2 threads). Q3_G and Q2_G ran on r8 at 54-56%
 * (1 and 2 threads); their zmm kernels (hot 62 / 86 GB/s) at 66-78% / 73-83%. Against
 * the zmm read loop Q3_G then got 62% at 1 thread: its r8 planes cost 16 ands and 16
 * vpdpbusd per block of 16 rows, and hot at 4096^2 it ran at 22 GB/s, below one core's
 * DRAM read (30-34). r16 now has its own Q3_G encoding (q3_r16_codes: 10 and 10): hot
 * 34.5 GB/s, cold 76-89% at 1 thread and 78-101% at 2 against the better of a zmm and a
 * ymm read (five rounds, 2 Dec 2026, 18:33-18:59 UTC; tests/perf/README.md). Zen 4
 * executes zmm as two 256-bit halves: there the r16 kernels do the r8 ones' work in half
 * the instructions (not measured here). Intel's AVX-512 VNNI cores run them too: on a Xeon model 0xcf VM
 * (2 Dec 2026, cold 16384^2, 1 and 2 threads, against the zmm read loop), r16 with its
 * prefetches (qk_prefetch_r16) gave Q8_0 98-100%, Q4_0 97-101%, Q4_1 97-100%, Q3_G 78-82%,
 * Q2_G 90-93%, TQ2_0 83-89%, TQ1_0 69-72% in four rounds, where the r8 EVEX-ymm kernels
 * gave 77-83%, 74-76%, 81-82%, 70-78%, 69-76%, 70-72%, 57-62% (one round). (Against a
 * ymm read loop, as measured before, r8 had looked like 84-96%: on that Xeon the zmm read
 * is 12-24% faster, kernels/stream.c.) */
enum qgemv_kind qr_default_kind(const struct qformat *f, const struct ocb_cpu_id *cpu,
				enum qr_isa vnni)
{
	if (!qrepack_supported(f))
		return QGEMV_AVX2;
	const int amd_zen = strcmp(cpu->vendor, "AuthenticAMD") == 0 && cpu->family >= 0x17;
	if (vnni == QR_AVX512VNNI)
		return zmm_kind_of(f, vnni);
	if (vnni != QR_AVX2)
		return r8_kind_of(vnni);
	if (f->type == QF_TQ2_0 && (amd_zen || ocb_cpu_is_zen3(cpu)))
		return QGEMV_AVX2;
	return QGEMV_AVX2_R8;
}
