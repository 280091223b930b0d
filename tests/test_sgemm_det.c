/* sgemm_det: the thread-independent fp32 GEMM (kernels/sgemm_det.h). Against plain loops
 * for every transpose pair, beta 0 / 1 and leading dimensions wider than the operands;
 * the tiling is the same at 1..4 threads (each element written by one tile, the same
 * tile whatever the team); the product is bit-identical at 1..4 threads and equals its
 * own tiles computed one by one (identical by construction); the fp32 MLP trainer at the
 * suite's shapes gives the same losses, accuracy and weights bit for bit at 1 and 2
 * threads. */
#include <cblas.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_rng.h"
#include "cli_util.h"
#include "../kernels/sgemm_det.h"
#include "../workloads/trainer_mlp.h"

static float *rand_mat(size_t n, uint64_t seed)
{
	struct ocb_rng r;
	float *a = malloc(n * sizeof *a);
	ocb_rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++)
		a[i] = ocb_rng_uniformf(&r) * 2.0f - 1.0f;
	return a;
}

/* The operands of op(A) [m][k] and op(B) [k][n] with lda/ldb 3 wider than needed. */
struct prob {
	enum CBLAS_TRANSPOSE ta, tb;
	int m, n, k, lda, ldb, ldc;
	float *a, *b, *c0;
};

static void prob_make(struct prob *p, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m,
		      int n, int k, uint64_t seed)
{
	p->ta = ta, p->tb = tb, p->m = m, p->n = n, p->k = k;
	p->lda = (ta == CblasNoTrans ? k : m) + 3;
	p->ldb = (tb == CblasNoTrans ? n : k) + 3;
	p->ldc = n + 3;
	p->a = rand_mat((size_t)(ta == CblasNoTrans ? m : k) * p->lda, seed);
	p->b = rand_mat((size_t)(tb == CblasNoTrans ? k : n) * p->ldb, seed + 1);
	p->c0 = rand_mat((size_t)m * p->ldc, seed + 2);
}

static float *prob_run(const struct prob *p, float beta, int threads)
{
	float *c = malloc((size_t)p->m * p->ldc * sizeof *c);
	memcpy(c, p->c0, (size_t)p->m * p->ldc * sizeof *c);
	ocb_sgemm_det(p->ta, p->tb, p->m, p->n, p->k, 0.75f, p->a, p->lda, p->b, p->ldb, beta, c,
		      p->ldc, threads);
	return c;
}

static void prob_free(struct prob *p) { free(p->a), free(p->b), free(p->c0); }

Test(sgemm_det, matches_plain_loops)
{
	const enum CBLAS_TRANSPOSE tr[2] = {CblasNoTrans, CblasTrans};
	for (int x = 0; x < 4; x++)
		for (int bi = 0; bi < 2; bi++) {
			struct prob p;
			float beta = bi ? 1.0f : 0.0f;
			prob_make(&p, tr[x & 1], tr[x >> 1], 301, 517, 203, 10 + x);
			float *c = prob_run(&p, beta, 2), *r = malloc((size_t)p.m * p.ldc * 4);
			memcpy(r, p.c0, (size_t)p.m * p.ldc * 4);
			ocb_sgemm_det_ref(p.ta, p.tb, p.m, p.n, p.k, 0.75f, p.a, p.lda, p.b, p.ldb,
					  beta, r, p.ldc);
			double worst = 0.0;
			for (int i = 0; i < p.m; i++)
				for (int j = 0; j < p.ldc; j++) {
					size_t o = (size_t)i * p.ldc + j;
					if (j >= p.n) /* the ldc padding is not touched */
						cr_assert(c[o] == p.c0[o], "padding (%d,%d) changed", i, j);
					else
						worst = fmax(worst, fabs(c[o] - r[o]));
				}
			/* |terms| < 1, k = 203: fp32 sums within ~1e-4 of the double reference */
			cr_expect(worst < 1e-3, "trans %d beta %g: max |diff| %g", x, beta, worst);
			free(c), free(r), prob_free(&p);
		}
}

/* Marks every element with the tile that wrote it: (i0, j0, tm, tn) packed. */
struct mark {
	long long *map;
	int n;
	int *writes;
};

static void mark_tile(void *ctx, int i0, int j0, int tm, int tn)
{
	struct mark *mk = ctx;
	long long id = (((long long)i0 * 4096 + j0) * 4096 + tm) * 4096 + tn;
	for (int i = i0; i < i0 + tm; i++)
		for (int j = j0; j < j0 + tn; j++) {
			mk->map[(size_t)i * mk->n + j] = id;
#pragma omp atomic
			mk->writes[(size_t)i * mk->n + j]++;
		}
}

/* The tiling a product gets is the same at 1, 2, 3 and 4 threads, and covers the output
 * exactly once: this fails if the tile shapes or positions depended on the team. */
Test(sgemm_det, tiling_independent_of_threads)
{
	const int shape[][3] = {{256, 512, 784}, {512, 784, 256}, {1024, 64, 64},
				{64, 64, 1024},  {256, 10, 256},  {37, 1001, 999}};
	for (size_t s = 0; s < sizeof shape / sizeof shape[0]; s++) {
		int m = shape[s][0], n = shape[s][1], k = shape[s][2];
		struct sd_plan p;
		long long *ref = NULL;
		sd_plan(m, n, k, &p);
		cr_assert(p.tm >= 1 && p.tn >= 1 && p.ntm * p.tm >= m && p.ntn * p.tn >= n);
		for (int th = 1; th <= 4; th++) {
			struct mark mk = {calloc((size_t)m * n, sizeof(long long)), n,
					  calloc((size_t)m * n, sizeof(int))};
			sd_for_tiles(&p, mark_tile, &mk, th);
			for (size_t e = 0; e < (size_t)m * n; e++)
				cr_assert_eq(mk.writes[e], 1, "%dx%d: element %zu written %d times",
					     m, n, e, mk.writes[e]);
			if (!ref)
				ref = mk.map;
			else {
				cr_expect(!memcmp(ref, mk.map, (size_t)m * n * sizeof *ref),
					  "%dx%dx%d: tiling at %d threads differs from 1 thread", m, n,
					  k, th);
				free(mk.map);
			}
			free(mk.writes);
		}
		free(ref);
	}
}

/* Bit-identical at 1..4 threads and to its tiles computed one at a time by
 * single-threaded OpenBLAS (identical by construction: the same calls, same operands). */
Test(sgemm_det, bit_identical_at_any_thread_count)
{
	struct prob p;
	struct sd_plan pl;
	int ob = openblas_get_num_threads();
	prob_make(&p, CblasNoTrans, CblasTrans, 256, 512, 784, 77);
	sd_plan(p.m, p.n, p.k, &pl);
	cr_assert_gt(pl.ntm * pl.ntn, 1, "the suite's forward shape is tiled");
	float *c1 = prob_run(&p, 1.0f, 1);
	for (int th = 2; th <= 4; th++) {
		openblas_set_num_threads(th); /* the caller's count must not matter either */
		float *c = prob_run(&p, 1.0f, th);
		cr_expect(!memcmp(c, c1, (size_t)p.m * p.ldc * sizeof *c), "%d threads differ", th);
		cr_expect_eq(openblas_get_num_threads(), th, "OpenBLAS's count restored");
		free(c);
	}
	openblas_set_num_threads(1);
	float *t = malloc((size_t)p.m * p.ldc * sizeof *t);
	memcpy(t, p.c0, (size_t)p.m * p.ldc * sizeof *t);
	for (int bi = 0; bi < pl.ntm; bi++)
		for (int bj = 0; bj < pl.ntn; bj++) {
			int i0 = bi * pl.tm, j0 = bj * pl.tn;
			int tm = p.m - i0 < pl.tm ? p.m - i0 : pl.tm, tn = p.n - j0 < pl.tn ? p.n - j0 : pl.tn;
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, tm, tn, p.k, 0.75f,
				    p.a + (size_t)i0 * p.lda, p.lda, p.b + (size_t)j0 * p.ldb, p.ldb,
				    1.0f, t + (size_t)i0 * p.ldc + j0, p.ldc);
		}
	cr_expect(!memcmp(t, c1, (size_t)p.m * p.ldc * sizeof *t), "tile-by-tile differs");
	openblas_set_num_threads(ob);
	free(t), free(c1), prob_free(&p);
}

/* An in-memory 10-class set of n 28x28 images (the suite's input width). */
static void synth_set(struct ocb_idx_set *s, int n, uint64_t seed)
{
	struct ocb_rng r;
	memset(s, 0, sizeof *s);
	s->n = n, s->rows = s->cols = 28, s->dim = 784, s->nclasses = 10, s->std = 1.0f;
	s->block = malloc((size_t)n * 785);
	s->pixels = s->block, s->labels = s->pixels + (size_t)n * 784;
	ocb_rng_seed(&r, seed);
	for (int i = 0; i < n; i++) {
		s->labels[i] = (uint8_t)(ocb_rng_below(&r, 10));
		for (int d = 0; d < 784; d++) /* class-dependent brightness: learnable */
			s->pixels[(size_t)i * 784 + d] =
				(uint8_t)((ocb_rng_below(&r, 128)) + 12 * s->labels[i] * (d % 7 == 0));
	}
}

/* A few fp32 AdamW steps of the suite's MLP (784-512-256-10, batch 256) at 1 and at 2
 * threads: first / final loss, evaluation and the checkpoint (weights, moments) equal bit
 * for bit. */
Test(sgemm_det, fp32_mlp_same_bits_at_one_and_two_threads)
{
	struct ocb_idx_set set;
	struct ocb_train_result res[2];
	char dir[64], path[2][128], *ck[2];
	long len[2];
	cli_tmpdir(dir, sizeof dir);
	synth_set(&set, 768, 5);
	for (int r = 0; r < 2; r++) {
		struct ocb_mlp_spec sp = {.train = &set, .test = &set};
		struct ocb_train_cfg c;
		void *st;
		ocb_mlp_default_cfg(&sp.model);
		ocb_mlp_train_defaults(&c);
		c.epochs = 0, c.steps = 4, c.warmup_epochs = 0, c.warmup_steps = 1;
		c.eval_every = 0, c.threads = r + 1, c.seed = 3;
		cr_assert_eq(ocb_trainer_mlp.create(&sp, &c, &st), 0);
		cr_assert_eq(ocb_trainer_run(&ocb_trainer_mlp, st, &c, NULL, &res[r]), 0);
		snprintf(path[r], sizeof path[r], "%s/t%d.ckpt", dir, r + 1);
		cr_assert_eq(ocb_trainer_mlp.save(st, path[r]), 0);
		ocb_trainer_mlp.free(st);
		FILE *f = fopen(path[r], "rb");
		cr_assert(f);
		fseek(f, 0, SEEK_END);
		len[r] = ftell(f);
		rewind(f);
		ck[r] = malloc((size_t)len[r]);
		cr_assert_eq(fread(ck[r], 1, (size_t)len[r], f), (size_t)len[r]);
		fclose(f);
	}
	cr_expect(isfinite(res[0].final_train_loss) && res[0].final_eval.accuracy > 0.0);
	cr_expect(!memcmp(&res[0].first_loss, &res[1].first_loss, sizeof(double)));
	cr_expect(!memcmp(&res[0].final_train_loss, &res[1].final_train_loss, sizeof(double)),
		  "%.17g vs %.17g", res[0].final_train_loss, res[1].final_train_loss);
	cr_expect(!memcmp(&res[0].final_eval, &res[1].final_eval, sizeof res[0].final_eval));
	cr_expect(len[0] == len[1] && !memcmp(ck[0], ck[1], (size_t)len[0]), "checkpoints differ");
	free(ck[0]), free(ck[1]);
	free(set.block);
}
