/* train_bsr_lm: the block-sparse LM trainer (workloads/trainer_bsr_lm.h) against the dense
 * LM trainer on the fortunes corpus: validation perplexity at each target block sparsity
 * of the SwiGLU weights, and the mean step time. A design check of issue 11.
 *
 *   OPENBLAS_CORETYPE=Haswell build/perf/train_bsr_lm [steps block threads target%...]
 *   defaults: 100 8 2 50 (as `make bench` runs it; the design run was 300 8 2 50 70 90 95)
 * The final evaluation scores final_windows = 64 validation windows (the protocol is
 * printed). Exit 2 without the corpus. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../common/ocb_error.h"
#include "../../workloads/data_text.h"
#include "../../workloads/trainer_bsr_lm.h"

static int run_one(const struct ocb_trainer *t, const void *spec, struct ocb_train_cfg *cfg,
		   double *ppl, double *step_ms, struct ocb_bsr_train_stats *st)
{
	void *s = NULL;
	struct ocb_train_result res;
	int rc = t->create(spec, cfg, &s);
	if (!rc)
		rc = ocb_trainer_run(t, s, cfg, NULL, &res);
	if (rc) {
		fprintf(stderr, "ocbench: %s: %s\n", t->name, ocb_lasterr());
		t->free(s);
		return rc;
	}
	*ppl = res.final_eval.ppl;
	*step_ms = res.step_time / res.steps * 1e3;
	if (st)
		ocb_bsr_lm_stats(s, st);
	t->free(s);
	return OCB_OK;
}

int main(int argc, char **argv)
{
	if (!getenv("OMP_WAIT_POLICY")) { /* see tests/perf/bsr_spmm.c */
		setenv("OMP_WAIT_POLICY", "passive", 1);
		execv("/proc/self/exe", argv);
	}
	long steps = argc > 1 ? atol(argv[1]) : 100;
	int block = argc > 2 ? atoi(argv[2]) : 8, threads = argc > 3 ? atoi(argv[3]) : 2;
	struct ocb_text text;
	if (ocb_text_load(NULL, &text)) {
		fprintf(stderr, "ocbench: fortunes: %s\n", ocb_lasterr());
		return 2;
	}
	struct lm_config mc;
	lm_config_default(&mc);
	struct ocb_bsr_lm_spec sp = {0};
	lm_train_spec_defaults(&sp.lm, &mc);
	sp.lm.train = text.train, sp.lm.ntrain = text.ntrain;
	sp.lm.val = text.val, sp.lm.nval = text.nval;
	sp.lm.final_eval_windows = 64;
	struct ocb_train_cfg cfg;
	lm_train_defaults(&cfg);
	cfg.steps = steps, cfg.warmup_steps = steps / 10, cfg.threads = threads;
	cfg.eval_every = 0;
	double ppl_d, ms_d, ppl, ms;
	if (run_one(&lm_trainer, &sp.lm, &cfg, &ppl_d, &ms_d, NULL))
		return 3;
	printf("# LM d %d, %d layers, ffn %d; %ld steps of %dx%d tokens; SwiGLU in %dx%d blocks; "
	       "%d threads; final eval %ld windows of %d (stride %d)\n", mc.d_model, mc.n_layers,
	       mc.ffn, steps, cfg.batch, sp.lm.seq, block, block, threads,
	       sp.lm.final_eval_windows, sp.lm.eval_window, sp.lm.eval_stride);
	printf("# target  val_ppl  dense_ppl  sparsity  mlp_bsr_KiB  mlp_dense_KiB  step_ms  "
	       "dense_step_ms\n");
	for (int a = 4; a < argc || a == 4; a++) {
		struct ocb_bsr_train_stats st;
		double target = (argc > 4 ? atof(argv[a]) : 50.0) / 100.0;
		sp.prune = (struct ocb_prune_cfg){.block = block, .target = target,
						  .t0 = steps / 10, .t1 = steps * 4 / 10};
		sp.prune.every = (sp.prune.t1 - sp.prune.t0) / 20 > 0 ? (sp.prune.t1 - sp.prune.t0) / 20
								       : 1;
		if (run_one(&ocb_trainer_bsr_lm, &sp, &cfg, &ppl, &ms, &st))
			return 3;
		printf("%6.0f%% %8.3f %9.3f %9.3f %12.1f %14.1f %8.2f %13.2f\n", target * 100, ppl,
		       ppl_d, st.sparsity, st.bsr_bytes / 1024.0, st.dense_bytes / 1024.0, ms, ms_d);
		fflush(stdout);
	}
	ocb_text_release(&text);
	return 0;
}
