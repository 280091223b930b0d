/* Tests of collect/mpi_launch: launcher detection from the environment, the mpirun
 * command line, and the deadline that ends a hanging job. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/mpi_launch.h"

static void clear_env(void)
{
	const char *v[] = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
			   "PMIX_RANK", "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_NTASKS",
			   "SLURM_NPROCS"};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++)
		unsetenv(v[i]);
}

Test(mpi_launch, detects_launchers)
{
	struct ocb_mpi_env e;
	clear_env();
	ocb_mpi_detect(&e);
	cr_expect(e.launcher == OCB_MPI_NONE && e.rank == 0 && e.size == 1);
	setenv("SLURM_PROCID", "3", 1);
	setenv("SLURM_NTASKS", "8", 1);
	ocb_mpi_detect(&e);
	cr_expect_eq(e.launcher, OCB_MPI_NONE, "a batch shell is no task (no SLURM_STEP_ID)");
	setenv("SLURM_STEP_ID", "0", 1);
	ocb_mpi_detect(&e);
	cr_expect(e.launcher == OCB_MPI_SLURM && e.rank == 3 && e.size == 8);
	setenv("OMPI_COMM_WORLD_RANK", "1", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
	ocb_mpi_detect(&e);
	cr_expect(e.launcher == OCB_MPI_OMPI && e.rank == 1 && e.size == 2, "mpirun wins");
	cr_expect_str_eq(ocb_mpi_launcher_name(e.launcher), "mpirun (Open MPI)");
	clear_env();
	setenv("PMI_RANK", "x", 1);
	setenv("PMI_SIZE", "4", 1);
	ocb_mpi_detect(&e);
	cr_expect_eq(e.launcher, OCB_MPI_NONE, "garbage is not a rank");
	setenv("PMI_RANK", "2", 1);
	ocb_mpi_detect(&e);
	cr_expect(e.launcher == OCB_MPI_PMI && e.rank == 2 && e.size == 4);
	clear_env();
}

Test(mpi_launch, relaunch_command_line)
{
	const char *out[16], *args[] = {"run", "--suite", "dist"};
	char np[16];
	cr_assert_eq(ocb_mpi_relaunch_argv(4, 2, 1, "/x/ocbench", args, 3, np, out, 16), 0);
	const char *want[] = {"mpirun", "-np", "4", "--oversubscribe", "--allow-run-as-root",
			      "/x/ocbench", "run", "--suite", "dist", NULL};
	for (int i = 0; want[i]; i++)
		cr_expect_str_eq(out[i], want[i]);
	cr_expect_null(out[9]);
	cr_assert_eq(ocb_mpi_relaunch_argv(2, 2, 0, "/x/ocbench", args, 3, np, out, 16), 0);
	cr_expect_str_eq(out[3], "/x/ocbench", "no oversubscription, not root");
	cr_expect_neq(ocb_mpi_relaunch_argv(0, 2, 0, "o", args, 3, np, out, 16), 0);
	cr_expect_neq(ocb_mpi_relaunch_argv(2, 2, 0, "o", args, 3, np, out, 8), 0);
}

Test(mpi_launch, deadline_ends_a_hanging_job)
{
	const char *hang[] = {"sh", "-c", "sleep 30 & sleep 30", NULL};
	const char *fail[] = {"sh", "-c", "exit 3", NULL};
	int st;
	cr_assert_eq(ocb_mpi_run(hang, 0.3, &st), 0);
	cr_expect_eq(st, -1, "timed out");
	cr_assert_eq(ocb_mpi_run(fail, 30, &st), 0);
	cr_expect_eq(st, 3);
}

Test(mpi_launch, a_killed_rank_fails_the_job, .timeout = 120)
{
	/* a real mpirun whose second rank dies: mpirun ends the job, non-zero */
	setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
	setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
	const char *argv[] = {"mpirun", "-np", "2", "--oversubscribe", "sh", "-c",
			      "if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then kill -9 $$; fi; sleep 20",
			      NULL};
	int st;
	cr_assert_eq(ocb_mpi_run(argv, 60, &st), 0);
	cr_expect(st != 0 && st != -1, "mpirun status %d (the job ended early, not hung)", st);
}
