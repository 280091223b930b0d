/* Tests of collect/mpi_launch: launcher detection from the environment, the mpirun
 * command line, and the deadline that ends a hanging job. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../collect/mpi_launch.h"
#include "cli_util.h"
#include "san.h"

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

Test(mpi_launch, a_killed_rank_fails_the_job, .timeout = OCB_TIMEOUT(120))
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

Test(mpi_launch, launch_all_runs_each_rank_count_and_stops_at_a_failure, .timeout = OCB_TIMEOUT(120))
{
	char dir[128], self[256], log[256], cmd[400];
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb-launch")));
	snprintf(self, sizeof self, "%s/fake.sh", dir);
	snprintf(log, sizeof log, "%s/log", dir);
	FILE *f = fopen(self, "w");
	cr_assert_not_null(f);
	/* each rank appends "size rank job"; the 4-rank job's rank 3 fails */
	fprintf(f, "#!/bin/sh\necho \"$OMPI_COMM_WORLD_SIZE $OMPI_COMM_WORLD_RANK $OCB_DIST_JOB $1\" >> %s\n"
		   "[ \"$OMPI_COMM_WORLD_SIZE\" = 4 ] && [ \"$OMPI_COMM_WORLD_RANK\" = 3 ] && exit 5\n"
		   "exit 0\n", log);
	fclose(f);
	chmod(self, 0755);
	setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
	setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
	const char *args[] = {"run"};
	int ranks[] = {1, 2, 4, 1}, st[4];
	int rc = ocb_mpi_launch_all(self, args, 1, ranks, 4, 2, 60, st);
	cr_expect_neq(rc, 0, "the 4-rank job failed");
	cr_expect(st[0] == 0 && st[1] == 0, "%d %d", st[0], st[1]);
	cr_expect(st[2] != 0 && st[2] != -1, "failed, not hung: %d", st[2]);
	cr_expect_eq(st[3], -2, "not run after the failure");
	size_t len;
	char *text = cli_slurp(log, &len);
	cr_assert_not_null(text);
	cr_expect_not_null(strstr(text, "1 0 1 run"));
	cr_expect_not_null(strstr(text, "2 1 1 run"));
	cr_expect_not_null(strstr(text, "4 3 1 run"));
	cr_expect_null(getenv("OCB_DIST_JOB"));
	free(text);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}
