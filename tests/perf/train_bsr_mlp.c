/* train_bsr_mlp: the block-sparse MLP trainer (workloads/trainer_bsr_mlp.h) against the
 * dense one on Fashion-MNIST, outside the runner: a design check of issue 11.
 *
 *   OPENBLAS_CORETYPE=Haswell build/perf/train_bsr_mlp [epochs block threads max_train
 *        hidden1 hidden2 target%...]
 *   defaults: 1 16 2 10000 512 256 90
 * Per target: test accuracy (dense run first, same seed and recipe), block sparsity
 * reached, sparse layers' bytes (BSR values + indices) vs dense fp32, and the mean step
 * time of a run at that sparsity from the first step (schedule t0 = t1 = 0) against the
 * dense trainer's. Exit 2 on bad data. Knobs in the environment: OCB_REGROW, OCB_T1,
 * OCB_GLOBAL, OCB_DENSE_ACC, OCB_DENSE_ONLY (see main). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../common/ocb_error.h"
#include "../../workloads/trainer_bsr_mlp.h"

struct run { double acc, step_ms; struct ocb_bsr_train_stats st; };

static int run_one(const struct ocb_trainer *t, const void *spec, struct ocb_train_cfg *cfg,
		   struct run *out)
{
	void *st = NULL;
	struct ocb_train_result res;
	int rc = t->create(spec, cfg, &st);
	if (!rc)
		rc = ocb_trainer_run(t, st, cfg, NULL, &res);
	if (rc) {
		fprintf(stderr, "ocbench: %s: %s\n", t->name, ocb_lasterr());
		t->free(st);
		return rc;
	}
	out->acc = res.final_eval.accuracy;
	out->step_ms = res.step_time / res.steps * 1e3;
	if (t == &ocb_trainer_bsr_mlp)
		ocb_bsr_mlp_stats(st, &out->st);
	t->free(st);
	return OCB_OK;
}

int main(int argc, char **argv)
{
	/* libgomp reads its wait policy at load time: re-exec once with passive waiting, or
	 * idle OpenMP workers spin against OpenBLAS and the other team on a shared 2-core VM
	 * (measured here: 3-8x slower steps under load) */
	if (!getenv("OMP_WAIT_POLICY")) {
		setenv("OMP_WAIT_POLICY", "passive", 1);
		execv("/proc/self/exe", argv);
	}
	int epochs = argc > 1 ? atoi(argv[1]) : 1, block = argc > 2 ? atoi(argv[2]) : 16;
	int threads = argc > 3 ? atoi(argv[3]) : 2, max_train = argc > 4 ? atoi(argv[4]) : 10000;
	int h1 = argc > 5 ? atoi(argv[5]) : 512, h2 = argc > 6 ? atoi(argv[6]) : 256;
	struct ocb_idx_set tr, te;
	if (ocb_fmnist_load(NULL, 1, &tr) || ocb_fmnist_load(NULL, 0, &te)) {
		fprintf(stderr, "ocbench: fashion-mnist: %s\n", ocb_lasterr());
		return 2;
	}
	ocb_idx_standardize(&tr);
	te.mean = tr.mean, te.std = tr.std;
	struct ocb_bsr_mlp_spec sp = {0};
	sp.mlp.model = (struct ocb_mlp_cfg){.nlayers = 3, .dims = {784, h1, h2, 10}};
	sp.mlp.train = &tr, sp.mlp.test = &te, sp.mlp.max_train = max_train;
	struct ocb_train_cfg cfg;
	ocb_mlp_train_defaults(&cfg);
	cfg.epochs = epochs, cfg.threads = threads, cfg.eval_every = 0;
	cfg.warmup_epochs = epochs > 1 ? 1.0f : 0.2f;
	long steps = (long)epochs * (max_train > 0 ? max_train : tr.n) / cfg.batch;
	struct run dense = {0}, sparse, fixed, dstep;
	/* design knobs: OCB_REGROW (fraction), OCB_T1 (ramp end, fraction of training),
	 * OCB_GLOBAL (set: one ranking over both layers),
	 * OCB_DENSE_ACC (skip the dense run, use this accuracy), OCB_DENSE_ONLY (stop after it) */
	double regrow = getenv("OCB_REGROW") ? atof(getenv("OCB_REGROW")) : 0.0;
	double t1 = getenv("OCB_T1") ? atof(getenv("OCB_T1")) : 0.4;
	if (getenv("OCB_DENSE_ACC"))
		dense.acc = atof(getenv("OCB_DENSE_ACC"));
	else if (run_one(&ocb_trainer_mlp, &sp.mlp, &cfg, &dense))
		return 3;
	printf("# 784-%d-%d-10, %d epochs, %ld steps, %dx%d blocks, %d threads\n", h1, h2,
	       epochs, steps, block, block, threads);
	printf("# target  acc  d_acc_pts  sparsity  bsr_KiB  dense_KiB  x_mem  step_ms(fixed)  "
	       "dense_step_ms  x_step  (dense acc %.4f)\n", dense.acc);
	if (getenv("OCB_DENSE_ONLY")) /* the dense reference of a recipe alone */
		return 0;
	for (int a = 7; a < argc || a == 7; a++) {
		double target = (argc > 7 ? atof(argv[a]) : 90.0) / 100.0;
		ocb_bsr_mlp_default_prune(&sp.prune, steps, block, target);
		sp.prune.regrow = regrow;
		sp.prune.global = getenv("OCB_GLOBAL") != NULL;
		sp.prune.t1 = (long)(t1 * steps);
		sp.prune.every = (sp.prune.t1 - sp.prune.t0) / 20 > 0 ? (sp.prune.t1 - sp.prune.t0) / 20
								       : 1;
		if (run_one(&ocb_trainer_bsr_mlp, &sp, &cfg, &sparse))
			return 3;
		/* step times: one epoch at the target from the first step, and dense */
		struct ocb_train_cfg one = cfg;
		one.epochs = 1, one.warmup_epochs = 0.2f;
		sp.prune.t0 = sp.prune.t1 = 0;
		if (run_one(&ocb_trainer_bsr_mlp, &sp, &one, &fixed) ||
		    run_one(&ocb_trainer_mlp, &sp.mlp, &one, &dstep))
			return 3;
		printf("%6.0f%% %6.4f %8.2f %9.3f %8.1f %9.1f %6.2f %12.3f %13.3f %7.2f\n",
		       target * 100, sparse.acc, (dense.acc - sparse.acc) * 100, sparse.st.sparsity,
		       sparse.st.bsr_bytes / 1024.0, sparse.st.dense_bytes / 1024.0,
		       (double)sparse.st.dense_bytes / sparse.st.bsr_bytes, fixed.step_ms,
		       dstep.step_ms, dstep.step_ms / fixed.step_ms);
		fflush(stdout);
	}
	ocb_idx_release(&tr), ocb_idx_release(&te);
	return 0;
}
