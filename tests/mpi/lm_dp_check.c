/* lm_dp_check: the data-parallel LM under mpirun on a synthetic corpus. Prints on rank 0
 *   lmdp ranks N first %.9g final %.9g val %.9g comm %.6f
 * Args: STEPS GLOBAL_BATCH. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../common/ocb_error.h"
#include "../../workloads/data_synth.h"
#include "../../workloads/trainer_lm_dp.h"
#include "dist_check.h"

int dist_check_lm_dp(int rank, int nranks, int argc, char **argv)
{
	unsigned char *text = NULL;
	size_t n;
	struct ocb_lm_dp_spec sp = {0};
	struct lm_config mc;
	struct ocb_train_cfg tc;
	struct ocb_train_result res;
	void *st = NULL;
	int rc;
	if (argc < 2)
		return ocb_seterr(OCB_EINVAL, "lmdp: STEPS GLOBAL_BATCH");
	if ((rc = ocb_synth_text(5, 3000, &text, &n)))
		return rc;
	/* a tiny model: the test is about the data parallelism, not the LM */
	lm_config_default(&mc);
	mc.d_model = 32, mc.n_layers = 2, mc.n_heads = 2, mc.ctx = 32, mc.ffn = lm_ffn_width(32);
	lm_train_spec_defaults(&sp.lm, &mc);
	sp.lm.train = text, sp.lm.ntrain = n * 9 / 10;
	sp.lm.val = text + n * 9 / 10, sp.lm.nval = n / 10;
	sp.lm.eval_windows = 8;
	sp.comm = MPI_COMM_WORLD;
	sp.bucket_bytes = 16 << 10;
	lm_train_defaults(&tc);
	tc.steps = atol(argv[0]);
	tc.batch = atoi(argv[1]);
	tc.warmup_steps = 5, tc.lr = 5e-3f, tc.eval_every = 0, tc.threads = 1;
	if ((rc = ocb_trainer_lm_dp.create(&sp, &tc, &st)) ||
	    (rc = ocb_trainer_run(&ocb_trainer_lm_dp, st, &tc, &(struct ocb_train_cb){0}, &res)))
		goto out;
	if (rank == 0)
		printf("lmdp ranks %d first %.9g final %.9g val %.9g comm %.6f\n", nranks,
		       res.first_loss, res.final_train_loss, res.final_eval.loss,
		       ocb_lm_dp_comm_s(st));
out:
	ocb_trainer_lm_dp.free(st);
	free(text);
	return rc;
}
