/* run_dist: `ocbench run` across MPI ranks (see run_dist.c). */
#ifndef OCB_RUN_DIST_H
#define OCB_RUN_DIST_H

#include <stddef.h>

#include "cli.h"

/* Outside a job: relaunches `run` (argv without --ranks) under mpirun per rank count;
 * the exit code (0, or 3 when a job failed, hung or could not start). */
int run_dist_launch(const struct ocb_global *g, const int *ranks, int nranks, int quick,
		    int argc, char **argv);
/* 1 inside an MPI job (mpirun, srun, PMI, or the relaunch's OCB_DIST_JOB). */
int run_dist_in_job(void);
/* In a job: MPI_Init; *rank; a non-zero rank gets a private copy of the database at
 * tmp_db, in the relaunch's scratch folder (OCB_DIST_SCRATCH) or $TMPDIR or /tmp (deleted
 * by run_dist_rank_done, and with the scratch folder by the launcher); on more than one
 * rank the drift canaries are off (OCBENCH_NO_CANARIES: the ranks would measure each
 * other). */
int run_dist_rank_setup(const char *db_path, int *rank, char *tmp_db, size_t len);
void run_dist_rank_done(const char *tmp_db);

#endif
