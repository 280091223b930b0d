/* dist_check: a small MPI program the Criterion tests run under
 * `mpirun -np N --oversubscribe` (tests/test_dist.c). It prints one line per result on
 * rank 0's stdout, as `key value ...` words the test parses:
 *
 *   dist_check coll                 every op, in/out-of-place, 8 B .. 1 MiB: #wrong, busbw
 *   dist_check plain BYTES          the core's allreduce and the plain MPI loop, s/call
 *   dist_check dp DIR OPT GBATCH EPOCHS data-parallel MLP (dp_check.c)
 *   dist_check lmdp STEPS BATCH     data-parallel LM (lm_dp_check.c)
 *   dist_check train DATA OUT EPOCHS BATCH [MAX_TRAIN [LR [WARMUP]]]  collect/dist_train.c
 *                                   files in OUT: one "train ..." line
 *   dist_check sweep MAX_BYTES BUDGET  the suite's sweep (collect/dist_sweep.c): one line
 *                                   per point, one per fit, the plain loop
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/ocb_error.h"
#include "../../kernels/coll.h"
#include "../../kernels/coll_model.h"
#include "../../collect/dist_sweep.h"
#include "../../collect/dist_train.h"
#include "dist_check.h"

static int run_coll(int rank, int n)
{
	struct ocb_coll_bufs b;
	int rc = ocb_coll_bufs_init(&b, 1 << 20);
	if (rc)
		return rc;
	for (int op = 0; op < OCB_COLL_NOPS && !rc; op++) {
		double xs[16], ts[16];
		int np = 0;
		for (size_t bytes = 8; bytes <= (1u << 20) && !rc; bytes *= 8) {
			size_t fb = ocb_coll_fit_bytes(op, n, bytes);
			for (int inplace = 0; inplace < 2 && fb && !rc; inplace++) {
				struct ocb_coll_point p;
				rc = ocb_coll_measure(MPI_COMM_WORLD, &b, op, fb, inplace, 5, 2, &p);
				if (!rc && rank == 0)
					printf("coll %s inplace %d bytes %zu wrong %ld time %.3e "
					       "busbw %.4e\n", ocb_coll_name(op), inplace, fb, p.wrong,
					       p.time_s, p.busbw);
				if (!rc && !inplace) {
					xs[np] = (double)fb;
					ts[np++] = p.time_s;
				}
			}
		}
		struct ocb_coll_model m;
		if (!rc && ocb_coll_model_fit(op, n, xs, ts, np, 0.0, &m) == OCB_OK && rank == 0)
			printf("fit %s alpha %.3e beta %.3e rms %.3f\n", ocb_coll_name(op), m.alpha,
			       m.beta, m.rms_rel_err);
	}
	ocb_coll_bufs_release(&b);
	return rc;
}

static int run_plain(int rank, size_t bytes)
{
	struct ocb_coll_bufs b;
	struct ocb_coll_point p;
	double plain;
	int rc = ocb_coll_bufs_init(&b, bytes);
	if (!rc)
		rc = ocb_coll_measure(MPI_COMM_WORLD, &b, OCB_COLL_ALLREDUCE, bytes, 0, 5, 3, &p);
	if (!rc)
		rc = ocb_coll_plain_allreduce(MPI_COMM_WORLD, bytes, 5, 3, &plain);
	if (!rc && rank == 0)
		printf("plain core %.6e plain %.6e wrong %ld\n", p.time_s, plain, p.wrong);
	ocb_coll_bufs_release(&b);
	return rc;
}

static int run_sweep(int rank, size_t max_bytes, double budget)
{
	struct ocb_dist_sweep_cfg c;
	struct ocb_dist_sweep s;
	ocb_dist_sweep_defaults(&c);
	c.max_bytes = max_bytes;
	c.plain_bytes = max_bytes;
	c.budget_s = budget;
	int rc = ocb_dist_sweep_run(MPI_COMM_WORLD, &c, &s);
	if (rc || rank)
		return rc;
	for (int i = 0; i < s.npt; i++)
		printf("point %s %d %zu %.4e %.4e %.4e %ld\n", ocb_coll_name(s.pt[i].op),
		       s.pt[i].inplace, s.pt[i].bytes, s.pt[i].time_s, s.pt[i].algbw,
		       s.pt[i].busbw, s.pt[i].wrong);
	for (int op = 0; op < OCB_COLL_NOPS; op++)
		if (s.fit_ok[op])
			printf("fit %s alpha %.3e beta %.3e gamma %.3e rms %.3f max %.3f\n",
			       ocb_coll_name(op), s.fit[op].alpha, s.fit[op].beta, s.fit[op].gamma,
			       s.fit[op].rms_rel_err, s.fit[op].max_rel_err);
	printf("plain core %.6e plain %.6e ratio %.3f paired %.3f lo %.3f hi %.3f rounds %d "
	       "wrong %ld\n", s.core_s, s.plain_s, s.plain_s / s.core_s, s.plain_ratio,
	       s.plain_ratio_lo, s.plain_ratio_hi, s.plain_rounds, s.wrong);
	ocb_dist_sweep_release(&s);
	return OCB_OK;
}

static int run_train(int rank, int argc, char **argv)
{
	struct ocb_dist_train_cfg c;
	struct ocb_dist_train_result r;
	ocb_dist_train_defaults(&c);
	c.data_dir = argv[0];
	c.out_dir = argv[1];
	c.epochs = atoi(argv[2]);
	c.global_batch = atoi(argv[3]);
	c.max_train = argc > 4 ? atoi(argv[4]) : 0;
	if (argc > 5)
		c.lr = (float)atof(argv[5]);
	if (argc > 6)
		c.warmup_epochs = (float)atof(argv[6]);
	int rc = ocb_dist_train(MPI_COMM_WORLD, &c, &r);
	if (!rc && rank == 0)
		printf("train ranks %d reached %d epochs %d acc %.4f staging %.3f init %.3f run %.3f "
		       "steps %ld step %.5f sps %.1f cps %.3e\n", r.nranks, r.reached, r.epochs,
		       r.accuracy, r.staging_s, r.init_s, r.run_s, r.steps, r.step_s,
		       r.samples_per_s, r.compute_per_sample_s);
	return rc;
}

int main(int argc, char **argv)
{
	int rank, n, rc = OCB_EINVAL;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (argc >= 2 && strcmp(argv[1], "coll") == 0)
		rc = run_coll(rank, n);
	else if (argc >= 3 && strcmp(argv[1], "plain") == 0)
		rc = run_plain(rank, (size_t)atol(argv[2]));
	else if (argc >= 6 && strcmp(argv[1], "train") == 0)
		rc = run_train(rank, argc - 2, argv + 2);
	else if (argc >= 4 && strcmp(argv[1], "sweep") == 0)
		rc = run_sweep(rank, (size_t)atol(argv[2]), atof(argv[3]));
	else if (argc >= 2 && strcmp(argv[1], "lmdp") == 0)
		rc = dist_check_lm_dp(rank, n, argc - 2, argv + 2);
	else if (argc >= 2 && strcmp(argv[1], "dp") == 0)
		rc = dist_check_dp(rank, n, argc - 2, argv + 2);
	if (rc)
		fprintf(stderr, "dist_check rank %d: %s: %s\n", rank, ocb_strerror(rc),
			ocb_lasterr());
	fflush(stdout);
	MPI_Finalize();
	return rc ? 3 : 0;
}
