/* dp_check: trains the data-parallel MLP under mpirun and prints, on rank 0,
 *   eval EPOCH ACC LOSS            after every epoch
 *   dp ranks N accum A micro M buckets B hidden H exposed E blocking B compute C
 *   final ACC LOSS0 LOSS           (losses %.9g: determinism is compared textually)
 *   overlap bwd .. hidden H ..     (more than one rank: trainer_dp.h's time-based overlap)
 * Args: DATA_DIR (fashion-mnist layout) OPT (lars|sgd) GBATCH EPOCHS [LR [MAX_TRAIN
 * [THREADS]]]. Warm-up 2 epochs (1 if EPOCHS < 4), polynomial decay power 2, label
 * smoothing 0.1, momentum 0.9, wd 5e-4 (LARS) / 1e-4 (SGD). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/ocb_error.h"
#include "../../workloads/data_idx.h"
#include "../../workloads/trainer_dp.h"
#include "dist_check.h"

struct ctx { int rank; };

static int on_eval(void *c, const struct ocb_eval *ev)
{
	if (((struct ctx *)c)->rank == 0)
		printf("eval %d %.4f %.6f\n", ev->epoch, ev->accuracy, ev->loss);
	fflush(stdout);
	return OCB_OK;
}

int dist_check_dp(int rank, int nranks, int argc, char **argv)
{
	struct ocb_idx_set tr = {0}, te = {0};
	struct ocb_dp_spec sp = {0};
	struct ocb_train_cfg cfg;
	struct ocb_train_result res;
	struct ctx cx = {rank};
	void *st = NULL;
	int rc;
	if (argc < 4)
		return ocb_seterr(OCB_EINVAL, "dp: DATA_DIR OPT GBATCH EPOCHS [LR [MAX_TRAIN]]");
	if ((rc = ocb_fmnist_load(argv[0], 1, &tr)) || (rc = ocb_fmnist_load(argv[0], 0, &te)))
		goto out;
	ocb_idx_standardize(&tr);
	te.mean = tr.mean;
	te.std = tr.std;
	ocb_mlp_default_cfg(&sp.mlp.model);
	sp.mlp.train = &tr;
	sp.mlp.test = &te;
	sp.mlp.max_train = argc > 5 ? atoi(argv[5]) : 0;
	sp.comm = MPI_COMM_WORLD;
	sp.lars = strcmp(argv[1], "lars") == 0;
	sp.lars_eta = 0.001f;
	sp.label_smoothing = 0.1f;
	ocb_train_cfg_defaults(&cfg);
	cfg.opt = OCB_OPTIM_SGD;
	cfg.momentum = 0.9f;
	cfg.weight_decay = sp.lars ? 5e-4f : 1e-4f;
	cfg.batch = atoi(argv[2]);
	cfg.epochs = atoi(argv[3]);
	cfg.lr = argc > 4 ? (float)atof(argv[4]) : (sp.lars ? 10.0f : 0.4f);
	cfg.min_lr = 0.0f;
	cfg.warmup_epochs = cfg.epochs >= 4 ? 2.0f : 1.0f;
	cfg.decay_power = 2.0f;
	cfg.threads = argc > 6 ? atoi(argv[6]) : 1;
	cfg.log_every = 1000;
	cfg.eval_every = 1;
	struct ocb_train_cb cb = {.ctx = &cx, .on_eval = on_eval};
	if ((rc = ocb_trainer_mlp_dp.create(&sp, &cfg, &st)))
		goto out;
	rc = ocb_trainer_run(&ocb_trainer_mlp_dp, st, &cfg, &cb, &res);
	if (rc)
		goto out;
	struct ocb_dp_stats ds;
	ocb_dp_stats(st, &ds);
	if (rank == 0) {
		printf("dp ranks %d accum %d micro %d buckets %d hidden %.4f work %.4f "
		       "exposed %.6f wait %.6f polls %.0f skew %.6f blocking %.6f "
		       "nonblocking %.6f opt %.6f compute %.6f step %.6f\n",
		       ds.nranks, ds.accum, ds.micro, ds.nbuckets, ds.hidden_share,
		       ds.hidden_work, ds.exposed_s, ds.wait_s, ds.polls, ds.skew_s,
		       ds.blocking_s, ds.nonblocking_s, ds.opt_s, ds.compute_s,
		       res.step_time / (res.steps ? res.steps : 1));
		printf("final %.4f %.9g %.9g\n", res.final_eval.accuracy, res.first_loss,
		       res.final_train_loss);
	}
	struct ocb_dp_overlap ov;
	if (nranks > 1 && (rc = ocb_dp_overlap_measure(st, 12, &ov)))
		goto out;
	if (nranks > 1 && rank == 0)
		printf("overlap bwd %.6f bwd_comm %.6f alone %.6f exposed %.6f [%.6f, %.6f] "
		       "hidden %.4f [%.4f, %.4f] hidden_min %.4f\n", ov.bwd_s, ov.bwd_comm_s,
		       ov.alone_s, ov.exposed_s, ov.exposed_lo_s, ov.exposed_hi_s, ov.hidden,
		       ov.hidden_lo, ov.hidden_hi, ov.hidden_min);
out:
	ocb_trainer_mlp_dp.free(st);
	ocb_idx_release(&tr);
	ocb_idx_release(&te);
	return rc;
}
