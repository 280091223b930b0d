/* ternary kernels: low-precision moment formats, the counter-based stochastic rounding,
 * the fused AdamW + SR update (_ref vs AVX2, thread independence) and the int8 training
 * GEMMs (every blocked path vs _ref vs exact integers, the activation format vs the quant
 * suite's). */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_cpu.h"
#include "../common/ocb_rng.h"
#include "../kernels/dqt_update.h"
#include "../kernels/lowp_float.h"
#include "../kernels/quant_formats.h"
#include "../kernels/sr_rng.h"
#include "../kernels/tern_gemm.h"

Test(ternary_kernels, e4m3_codes_round_trip)
{
	for (int b = 0; b < 256; b++) {
		if ((b & 0x7f) == 0x7f) {
			cr_assert(isnan(ocb_e4m3_to_f32((uint8_t)b)));
			continue;
		}
		float f = ocb_e4m3_to_f32((uint8_t)b);
		uint8_t back = ocb_f32_to_e4m3(f);
		if (b == 0x80) /* -0 */
			cr_assert(back == 0x80 || back == 0);
		else
			cr_assert_eq(back, b, "code 0x%02x -> %g -> 0x%02x", b, f, back);
	}
	cr_assert_eq(ocb_e4m3_to_f32(0x7e), 448.0f);
	cr_assert_eq(ocb_e4m3_to_f32(0x01), 0x1p-9f);
	cr_assert_eq(ocb_f32_to_e4m3(1e6f), 0x7e);     /* saturates */
	cr_assert_eq(ocb_f32_to_e4m3(-1e6f), 0xfe);
	cr_assert_eq(ocb_f32_to_e4m3(1.0625f), 0x38);  /* halfway 1 and 1.125: even (1) */
	cr_assert_eq(ocb_f32_to_e4m3(1.1875f), 0x3a);  /* halfway 1.125 and 1.25: even (1.25) */
	cr_assert_eq(ocb_f32_to_e4m3(0x1p-10f), 0x00); /* half the smallest subnormal: even 0 */
}

Test(ternary_kernels, bf16_round_to_nearest_even)
{
	cr_assert_eq(ocb_f32_to_bf16(1.0f), 0x3f80);
	cr_assert_eq(ocb_bf16_to_f32(0x3f80), 1.0f);
	/* 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even -> 1 */
	cr_assert_eq(ocb_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
	cr_assert_eq(ocb_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
	cr_assert_eq(ocb_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82); /* halfway, odd -> up */
}

/* Mean of 10^5 stochastic roundings of x within 3 standard errors of x, every result on
 * the grid {floor x, floor x + 1}. */
Test(ternary_kernels, stochastic_rounding_unbiased_on_grid)
{
	const float xs[] = {0.3f, -1.75f, 2.01f, -0.999f, 5.5f, 0.0f};
	const long N = 100000;
	for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
		float x = xs[k], f = floorf(x);
		uint64_t key = sr_key(7, 11, k);
		double sum = 0.0;
		for (long i = 0; i < N; i++) {
			float r = sr_round(x, sr_uniform(key, (uint64_t)i));
			cr_assert(r == f || r == f + 1.0f, "%g rounded to %g", x, r);
			sum += r;
		}
		double p = x - f, se = sqrt(p * (1 - p) / N);
		double mean = sum / N;
		cr_assert(fabs(mean - x) <= 3 * se + 1e-12, "x %g mean %.6f se %.2e", x, mean, se);
	}
}

static void fill(float *a, size_t n, uint64_t seed, float scale)
{
	struct ocb_rng r;
	ocb_rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++)
		a[i] = scale * (float)ocb_rng_normal(&r);
}

static struct dqt_hyper hyper(int qmax, uint64_t step)
{
	struct dqt_hyper h = {.lr = 0.05f, .wd = 0.01f, .b1 = 0.9f, .b2 = 0.999f, .eps = 1e-8f,
			      .scale = 0.02f, .qmax = qmax, .key = sr_key(3, step, 5)};
	h.c1 = 1.0f / (1.0f - powf(h.b1, (float)step));
	h.c2 = 1.0f / (1.0f - powf(h.b2, (float)step));
	return h;
}

/* A tensor of N elements updated for a few steps in tiles of 100, the tiles spread
 * over `threads` OpenMP threads; returns codes and moments. */
static void run_tiles(int threads, enum dqt_mfmt fmt, int qmax, int8_t *codes, void *m, void *v,
		      size_t N, int avx2)
{
	size_t mb = dqt_mfmt_bytes(fmt);
	float *g = malloc(N * sizeof(float));
	float mdec = 0, vdec = 0, menc = 0, venc = 0;
	for (uint64_t step = 1; step <= 4; step++) {
		fill(g, N, 100 + step, 0.5f);
		struct dqt_hyper h = hyper(qmax, step);
		float am = 0, asv = 0;
		int nt = (int)((N + 99) / 100);
#pragma omp parallel for schedule(dynamic) num_threads(threads) reduction(max : am, asv)
		for (int t = 0; t < nt; t++) {
			size_t off = (size_t)t * 100, len = N - off < 100 ? N - off : 100;
			struct dqt_moments mo = {.fmt = fmt, .m = (char *)m + off * mb,
						 .v = (char *)v + off * mb, .m_dec = mdec,
						 .v_dec = vdec, .m_enc = menc, .v_enc = venc};
			if (avx2)
				dqt_update_avx2(codes + off, g + off, len, off, &h, &mo);
			else
				dqt_update_ref(codes + off, g + off, len, off, &h, &mo);
			am = fmaxf(am, mo.amax_m);
			asv = fmaxf(asv, mo.amax_sv);
		}
		mdec = menc;
		vdec = venc;
		menc = am / OCB_E4M3_MAX;
		venc = asv / OCB_E4M3_MAX;
	}
	free(g);
}

Test(ternary_kernels, update_identical_across_thread_counts)
{
	enum { N = 5003 };
	for (int fmt = DQT_M_F32; fmt <= DQT_M_FP8; fmt++) {
		size_t mb = dqt_mfmt_bytes(fmt);
		int8_t c1[N], c2[N];
		void *m1 = calloc(N, mb), *v1 = calloc(N, mb), *m2 = calloc(N, mb),
		     *v2 = calloc(N, mb);
		for (int i = 0; i < N; i++)
			c1[i] = c2[i] = (int8_t)(i % 15 - 7);
		int avx = ocb_cpu_avx2();
		run_tiles(1, fmt, 7, c1, m1, v1, N, avx);
		run_tiles(2, fmt, 7, c2, m2, v2, N, avx);
		cr_assert(!memcmp(c1, c2, N), "codes differ (%s)", dqt_mfmt_name(fmt));
		cr_assert(!memcmp(m1, m2, N * mb) && !memcmp(v1, v2, N * mb));
		for (int i = 0; i < N; i++)
			cr_assert(c1[i] >= -7 && c1[i] <= 7, "off the grid: %d", c1[i]);
		free(m1), free(v1), free(m2), free(v2);
	}
}

/* _ref and AVX2 run the same update up to fp32 rounding (FMA contraction): codes differ
 * by at most one, and only rarely; moments agree to ~1e-6 relative (fp32). */
Test(ternary_kernels, update_avx2_matches_ref)
{
	if (!ocb_cpu_avx2())
		cr_skip_test("no AVX2");
	enum { N = 20000 };
	for (int fmt = DQT_M_F32; fmt <= DQT_M_FP8; fmt++) {
		size_t mb = dqt_mfmt_bytes(fmt);
		static int8_t c1[N], c2[N];
		void *m1 = calloc(N, mb), *v1 = calloc(N, mb), *m2 = calloc(N, mb),
		     *v2 = calloc(N, mb);
		for (int i = 0; i < N; i++)
			c1[i] = c2[i] = (int8_t)(i % 255 - 127);
		run_tiles(1, fmt, 127, c1, m1, v1, N, 0);
		run_tiles(1, fmt, 127, c2, m2, v2, N, 1);
		int differ = 0;
		for (int i = 0; i < N; i++) {
			cr_assert(abs(c1[i] - c2[i]) <= 1);
			differ += c1[i] != c2[i];
		}
		cr_assert(differ <= N / 1000, "%d codes differ (%s)", differ, dqt_mfmt_name(fmt));
		if (fmt == DQT_M_F32)
			for (int i = 0; i < N; i++) {
				float a = ((float *)m1)[i], b = ((float *)m2)[i];
				cr_assert(fabsf(a - b) <= 1e-6f, "m %g vs %g", a, b);
			}
		free(m1), free(v1), free(m2), free(v2);
	}
}

/* The fp32-moment update against a double-precision AdamW of the dequantized weight:
 * the expected code (the value before rounding) matches, and clipping holds. */
Test(ternary_kernels, update_follows_adamw)
{
	enum { N = 64 };
	int8_t c[N];
	float g[N], m[N] = {0}, v[N] = {0};
	fill(g, N, 9, 1.0f);
	for (int i = 0; i < N; i++)
		c[i] = (int8_t)(i % 7 - 3);
	struct dqt_hyper h = hyper(3, 1);
	struct dqt_moments mo = {.fmt = DQT_M_F32, .m = m, .v = v};
	int8_t c0[N];
	memcpy(c0, c, N);
	dqt_update_ref(c, g, N, 0, &h, &mo);
	for (int i = 0; i < N; i++) {
		double mm = 0.1 * g[i], vv = 0.001 * (double)g[i] * g[i];
		double u = (mm / 0.1) / (sqrt(vv / 0.001) + 1e-8);
		double w = c0[i] * (1 - 0.05 * 0.01) - 0.05 * u / 0.02;
		double lo = floor(w), hi = lo + 1;
		lo = fmax(-3, fmin(3, lo));
		hi = fmax(-3, fmin(3, hi));
		cr_assert(c[i] == lo || c[i] == hi, "w %g code %d", w, c[i]);
		cr_assert(fabs(m[i] - mm) < 1e-6 && fabs(v[i] - vv) < 1e-6);
	}
}

static void rand_i8(int8_t *a, size_t n, int lim, uint64_t seed)
{
	struct ocb_rng r;
	ocb_rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++)
		a[i] = (int8_t)((int)ocb_rng_below(&r, 2 * lim + 1) - lim);
}

typedef int (*gemm_path_fn)(const int8_t *, const float *, int, const int8_t *, float, int, int,
			    float *, int);

/* Every blocked path this CPU has; lowbit: also the |w| <= 7 AVX2 one. */
static int gemm_paths(gemm_path_fn *f, const char **name, int lowbit)
{
	int np = 0;
	if (tg_have_vnni512())
		f[np] = tg_gemm_vnni512, name[np++] = "avx512vnni";
	if (ocb_cpu_avxvnni())
		f[np] = tg_gemm_avxvnni, name[np++] = "avxvnni";
	if (ocb_cpu_avx2())
		f[np] = tg_gemm_avx2, name[np++] = "avx2";
	if (ocb_cpu_avx2() && lowbit)
		f[np] = tg_gemm_lowbit_avx2, name[np++] = "avx2-lowbit";
	return np;
}

static const int gemm_shapes[][3] = {{7, 5, 300}, {8, 6, 256}, {13, 70, 784}, {4, 2, 32},
				     {1, 3, 1},   {25, 130, 520}, {6, 64, 64},
				     {96, 160, 2100}}; /* the last: big enough for a team of 2 */

/* Unit scales (sw = 1, every xd = 1): y is the integer dot itself (sums < 2^24 are exact
 * in fp32), so every path at 1 and 2 threads must equal the int64 dot and _ref exactly;
 * the paths' integer arithmetic (bias corrections, packing, edge tiles) is exact. */
Test(ternary_kernels, gemm_paths_exact_integers)
{
	gemm_path_fn f[4];
	const char *name[4];
	for (int lowbit = 0; lowbit < 2; lowbit++) {
		int np = gemm_paths(f, name, lowbit);
		for (size_t s = 0; s < sizeof gemm_shapes / sizeof gemm_shapes[0]; s++) {
			int n = gemm_shapes[s][0], m = gemm_shapes[s][1], k = gemm_shapes[s][2];
			int ldk = tg_ldk(k), nb = tg_nblk(k), lim = lowbit ? 7 : 127;
			if ((long)k * 127 * lim >= 1L << 24) /* keep every sum exact in fp32 */
				lim = (int)((1L << 24) / (127L * k));
			float *x = malloc((size_t)n * k * 4), *xd = malloc((size_t)n * nb * 4);
			int8_t *xq = malloc((size_t)n * ldk), *w = calloc((size_t)m, ldk);
			float *yr = malloc((size_t)n * m * 4), *y = malloc((size_t)n * m * 4);
			fill(x, (size_t)n * k, 5 + s, 1.0f);
			tg_quant_act(x, n, k, xq, xd);
			for (int i = 0; i < n * nb; i++)
				xd[i] = 1.0f;
			for (int j = 0; j < m; j++)
				rand_i8(w + (size_t)j * ldk, (size_t)k, lim, 77 + j);
			tg_gemm_ref(xq, xd, n, w, 1.0f, m, k, yr, 1);
			for (int i = 0; i < n; i++)
				for (int j = 0; j < m; j++) {
					long e = 0;
					for (int t = 0; t < k; t++)
						e += (long)xq[(size_t)i * ldk + t] * w[(size_t)j * ldk + t];
					cr_assert_eq(yr[(size_t)i * m + j], (float)e);
				}
			for (int p = 0; p < np; p++)
				for (int th = 1; th <= 2; th++) {
					if (!lowbit && !strcmp(name[p], "avx2-lowbit"))
						continue;
					cr_assert_eq(f[p](xq, xd, n, w, 1.0f, m, k, y, th), 0);
					for (int i = 0; i < n * m; i++)
						cr_assert_eq(y[i], yr[i], "%s %dx%dx%d t%d [%d]: %g vs %g",
							     name[p], n, m, k, th, i, y[i], yr[i]);
				}
			free(x), free(xd), free(xq), free(w), free(yr), free(y);
		}
	}
}

/* Real scales: each path and the dispatching tg_gemm / tg_gemm_lowbit equal _ref up to
 * fp32 rounding of the epilogue (and _ref equals the exact dot, in double); one path at 1
 * and 2 threads gives the same bits (each y element is one tile's, in one order). */
Test(ternary_kernels, gemm_matches_ref_and_integers)
{
	gemm_path_fn f[4];
	const char *name[4];
	int np = gemm_paths(f, name, 0);
	for (size_t s = 0; s < sizeof gemm_shapes / sizeof gemm_shapes[0]; s++) {
		int n = gemm_shapes[s][0], m = gemm_shapes[s][1], k = gemm_shapes[s][2];
		int ldk = tg_ldk(k), nb = tg_nblk(k);
		float *x = malloc((size_t)n * k * 4), *xd = malloc((size_t)n * nb * 4);
		int8_t *xq = malloc((size_t)n * ldk), *w = calloc((size_t)m, ldk);
		float *y1 = malloc((size_t)n * m * 4), *y2 = malloc((size_t)n * m * 4);
		float *y3 = malloc((size_t)n * m * 4);
		fill(x, (size_t)n * k, 5 + s, 1.0f);
		tg_quant_act(x, n, k, xq, xd);
		for (int j = 0; j < m; j++)
			rand_i8(w + (size_t)j * ldk, (size_t)k, 127, 77 + j);
		tg_gemm_ref(xq, xd, n, w, 0.01f, m, k, y1, 1);
		for (int i = 0; i < n; i++)
			for (int j = 0; j < m; j++) {
				double e = 0.0;
				for (int b = 0; b < nb; b++) {
					long is = 0;
					for (int t = b * 256; t < k && t < (b + 1) * 256; t++)
						is += (long)xq[(size_t)i * ldk + t] * w[(size_t)j * ldk + t];
					e += 0.01 * xd[(size_t)i * nb + b] * (double)is;
				}
				float a = y1[(size_t)i * m + j];
				cr_assert(fabs(a - e) <= 1e-5 * (fabs(e) + 1), "%g vs %g", a, e);
			}
		for (int p = 0; p <= np; p++) {
			if (p < np) {
				cr_assert_eq(f[p](xq, xd, n, w, 0.01f, m, k, y2, 1), 0);
				for (int th = 2; th <= 3; th++) { /* 3: capped to 2 on ops */
					cr_assert_eq(f[p](xq, xd, n, w, 0.01f, m, k, y3, th), 0);
					cr_assert(!memcmp(y2, y3, (size_t)n * m * 4), "%s: %d threads",
						  name[p], th);
				}
			} else {
				tg_gemm(xq, xd, n, w, 0.01f, m, k, y2, 2);
			}
			for (int i = 0; i < n * m; i++)
				cr_assert(fabsf(y1[i] - y2[i]) <= 1e-5f * (fabsf(y1[i]) + 1), "%s: %g vs %g",
					  p < np ? name[p] : "tg_gemm", y1[i], y2[i]);
		}
		free(x), free(xd), free(xq), free(w), free(y1), free(y2), free(y3);
	}
}

/* The activation codes and scales are the quant suite's block_qa256 ones, so an exported
 * TQ2_0 layer multiplies the same integers. */
Test(ternary_kernels, activations_equal_qa256)
{
	enum { n = 3, k = 512 };
	float x[n * k], xd[n * 2];
	int8_t xq[n * k];
	fill(x, n * k, 21, 2.0f);
	x[5] = 0.0f;
	tg_quant_act(x, n, k, xq, xd);
	const struct qformat *f = qformat_find("tq2_0");
	block_qa256 a[n * 2];
	cr_assert_eq(qformat_quantize_act(f, x, a, n, k), 0);
	for (int i = 0; i < n; i++)
		for (int b = 0; b < 2; b++) {
			cr_assert_eq(a[i * 2 + b].d, xd[i * 2 + b]);
			cr_assert(!memcmp(a[i * 2 + b].qs, xq + i * k + b * 256, 256));
		}
}

Test(ternary_kernels, backward_products_match_ref)
{
	enum { n = 9, m = 70, k = 45 };
	int ldk = tg_ldk(k);
	float dy[n * m], x[n * k], dx1[n * k], dx2[n * k], g1[10 * k], g2[10 * k];
	int8_t *w = calloc(m, (size_t)ldk);
	fill(dy, n * m, 1, 1.0f);
	fill(x, n * k, 2, 1.0f);
	for (int j = 0; j < m; j++)
		rand_i8(w + (size_t)j * ldk, k, 3, j);
	cr_assert_eq(tg_gemm_dx(dy, n, w, 0.5f, m, k, dx1), 0);
	tg_gemm_dx_ref(dy, n, w, 0.5f, m, k, dx2);
	for (int i = 0; i < n * k; i++)
		cr_assert(fabsf(dx1[i] - dx2[i]) <= 1e-4f * (fabsf(dx2[i]) + 1));
	tg_gemm_dw(dy, n, m, 60, 10, x, k, g1);
	tg_gemm_dw_ref(dy, n, m, 60, 10, x, k, g2);
	for (int i = 0; i < 10 * k; i++)
		cr_assert(fabsf(g1[i] - g2[i]) <= 1e-4f * (fabsf(g2[i]) + 1));
	free(w);
}

/* The low-bit path (|w| <= 7, unsigned maddubs with the 128 x block-sum correction) gives
 * the same integers as the plain one. */
Test(ternary_kernels, gemm_lowbit_matches_ref)
{
	const int shapes[][3] = {{9, 7, 300}, {8, 6, 512}, {4, 2, 32}, {3, 5, 40}};
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		int n = shapes[s][0], m = shapes[s][1], k = shapes[s][2];
		int ldk = tg_ldk(k), nb = tg_nblk(k);
		float *x = malloc((size_t)n * k * 4), *xd = malloc((size_t)n * nb * 4);
		int8_t *xq = malloc((size_t)n * ldk), *w = calloc((size_t)m, ldk);
		float *y1 = malloc((size_t)n * m * 4), *y2 = malloc((size_t)n * m * 4);
		fill(x, (size_t)n * k, 50 + s, 3.0f);
		tg_quant_act(x, n, k, xq, xd);
		for (int j = 0; j < m; j++)
			rand_i8(w + (size_t)j * ldk, (size_t)k, s % 2 ? 7 : 1, 99 + j);
		tg_gemm_ref(xq, xd, n, w, 0.3f, m, k, y1, 1);
		tg_gemm_lowbit(xq, xd, n, w, 0.3f, m, k, y2, 2);
		for (int i = 0; i < n * m; i++)
			cr_assert(fabsf(y1[i] - y2[i]) <= 1e-5f * (fabsf(y1[i]) + 1), "%g vs %g", y1[i],
				  y2[i]);
		free(x), free(xd), free(xq), free(w), free(y1), free(y2);
	}
}

/* The tiled kernels take one thread per 3.2e7 int8 ops: the 256^3 product (3.4e7) runs on
 * one thread whatever is asked, 512 x 512 x 256 (1.3e8) on two */
Test(ternary_kernels, team_from_the_work)
{
	if (strcmp(tg_gemm_path(0), "ref") == 0)
		cr_skip_test("no tiled kernel on this CPU: the _ref loops use every thread");
	for (int lowbit = 0; lowbit < 2; lowbit++) {
		cr_expect_eq(tg_gemm_team(lowbit, 256, 256, 256, 2), 1, "lowbit %d", lowbit);
		cr_expect_eq(tg_gemm_team(lowbit, 512, 512, 256, 2), 2, "lowbit %d", lowbit);
		cr_expect_eq(tg_gemm_team(lowbit, 1024, 1024, 256, 2), 2, "lowbit %d", lowbit);
		cr_expect_eq(tg_gemm_team(lowbit, 1024, 1024, 256, 1), 1, "lowbit %d", lowbit);
	}
}
