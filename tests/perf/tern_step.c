/* tern_step: one training step of the ternary suite's MLP (784-512-256-10, batch 256,
 * Fashion-MNIST) and byte LM (the suite's recipe, fortunes) by fp32 AdamW, BitNet STE and
 * DQT-8 (fp32 moments), in one run, rounds interleaved (fp32, STE, DQT-8, fp32-mt, fp32,
 * ...) so that host noise hits all alike. fp32 is the suite's baseline: its products in
 * thread-independent tiles of single-threaded OpenBLAS calls (kernels/sgemm_det.h);
 * fp32-mt the same model with each product one multi-threaded OpenBLAS sgemm (the
 * reference the tiles must not fall behind). OpenBLAS gets `threads` threads. Times are
 * CPU time of the process per step (ocb_process_cpu_s; on a shared VM the wall clock
 * measures the other tenants), best
 * round of ROUNDS x STEPS steps after 3 warm-up steps; run with OMP_WAIT_POLICY=passive
 * when threads > 1 (spinning team members would be counted).
 *
 * usage: tern_step [threads (1)] [rounds (5)] [steps (10)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "../../common/ocb_error.h"
#include "../../common/ocb_time.h"
#include "../../kernels/sgemm_det.h"
#include "../../workloads/data_text.h"
#include "../../workloads/qt_recipe.h"
#include "../../workloads/trainer_ternary.h"

static const struct qt_cfg methods[] = {{QT_FP32, 2, DQT_M_F32},
					{QT_STE, 2, DQT_M_F32},
					{QT_DQT, 8, DQT_M_F32},
					{QT_FP32, 2, DQT_M_F32}};
enum { NM = 4, MT = 3 /* fp32 on multi-threaded OpenBLAS */ };

/* CPU seconds per step of `steps` steps of trainer t (state st), from step `from`. */
static double cpu_per_step(const struct ocb_trainer *t, void *st, long from, int steps,
			   float lr, int mt)
{
	int old = ocb_sgemm_det_bypass(mt);
	double loss, t0 = ocb_process_cpu_s();
	for (int i = 0; i < steps; i++)
		if (t->step(st, from + i, lr, &loss)) {
			fprintf(stderr, "tern_step: %s\n", ocb_lasterr());
			exit(3);
		}
	double s = (ocb_process_cpu_s() - t0) / steps;
	ocb_sgemm_det_bypass(old);
	return s;
}

static void bench(const char *what, const struct ocb_trainer *t, void *const spec[NM],
		  const struct ocb_train_cfg *c, int rounds, int steps)
{
	void *st[NM];
	double best[NM];
	for (int i = 0; i < NM; i++) {
		if (t->create(spec[i], c, &st[i])) {
			fprintf(stderr, "tern_step: %s\n", ocb_lasterr());
			exit(3);
		}
		cpu_per_step(t, st[i], 0, 3, c->lr, i == MT);
		best[i] = 1e30;
	}
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < NM; i++) {
			double s = cpu_per_step(t, st[i], 3 + (long)r * steps, steps, c->lr,
						 i == MT);
			best[i] = s < best[i] ? s : best[i];
		}
	printf("%s, %d thread(s), CPU time per step, best of %d x %d steps:\n", what, c->threads,
	       rounds, steps);
	printf("  fp32 %.2f ms  STE %.2f ms (%.2fx)  DQT-8 %.2f ms (%.2fx fp32)\n", best[0] * 1e3,
	       best[1] * 1e3, best[1] / best[0], best[2] * 1e3, best[2] / best[0]);
	printf("  fp32 tiles %.2f ms vs multi-threaded OpenBLAS %.2f ms: %.2fx\n", best[0] * 1e3,
	       best[MT] * 1e3, best[0] / best[MT]);
	for (int i = 0; i < NM; i++)
		t->free(st[i]);
}

int main(int argc, char **argv)
{
	int th = argc > 1 ? atoi(argv[1]) : 1, rounds = argc > 2 ? atoi(argv[2]) : 5;
	int steps = argc > 3 ? atoi(argv[3]) : 10, max_train;
	struct ocb_idx_set tr, te;
	struct ocb_text text;
	struct qmlp_spec ms[NM];
	struct qlm_spec ls[NM];
	struct ocb_train_cfg mc, lc;
	struct lm_config lmc;
	void *mp[NM], *lp[NM];
	if (ocb_fmnist_load(NULL, 1, &tr) || ocb_fmnist_load(NULL, 0, &te) ||
	    ocb_text_load(NULL, &text)) {
		fprintf(stderr, "tern_step: %s\n", ocb_lasterr());
		return 2;
	}
	qt_mlp_recipe(0, &mc, &max_train);
	mc.threads = th;
	for (int i = 0; i < NM; i++) {
		memset(&ms[i], 0, sizeof ms[i]);
		ocb_mlp_default_cfg(&ms[i].mlp.model);
		ms[i].mlp.train = &tr, ms[i].mlp.test = &te;
		ms[i].q = methods[i];
		mp[i] = &ms[i];
		memset(&ls[i], 0, sizeof ls[i]);
		qt_lm_recipe(0, &lmc, &ls[i].lm, &lc);
		ls[i].lm.train = text.train, ls[i].lm.ntrain = text.ntrain;
		ls[i].lm.val = text.val, ls[i].lm.nval = text.nval;
		ls[i].q = methods[i];
		lp[i] = &ls[i];
	}
	lc.threads = th;
	openblas_set_num_threads(th); /* as ocb_trainer_run does */
	bench("MLP 784-512-256-10, batch 256", &ocb_trainer_qmlp, mp, &mc, rounds, steps);
	bench("byte LM (d 64, 2 layers, ctx 64)", &ocb_trainer_qlm, lp, &lc, rounds, steps);
	ocb_idx_release(&tr), ocb_idx_release(&te), ocb_text_release(&text);
	return 0;
}
