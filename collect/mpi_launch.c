/* mpi_launch: MPI job detection and relaunch under mpirun (see mpi_launch.h). */
#include "mpi_launch.h"

#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_time.h"

static int env_int(const char *name, int *v)
{
	const char *s = getenv(name);
	char *end;
	if (!s || !*s)
		return 0;
	long x = strtol(s, &end, 10);
	if (*end || x < 0 || x > 1 << 30)
		return 0;
	*v = (int)x;
	return 1;
}

void ocb_mpi_detect(struct ocb_mpi_env *e)
{
	memset(e, 0, sizeof *e);
	e->size = 1;
	if (env_int("OMPI_COMM_WORLD_RANK", &e->rank) && env_int("OMPI_COMM_WORLD_SIZE", &e->size)) {
		e->launcher = OCB_MPI_OMPI;
	} else if (env_int("PMI_RANK", &e->rank) && env_int("PMI_SIZE", &e->size)) {
		e->launcher = OCB_MPI_PMI;
	} else if (env_int("PMIX_RANK", &e->rank)) {
		e->launcher = OCB_MPI_PMIX;
		e->size = 0;
	} else if (getenv("SLURM_STEP_ID") && env_int("SLURM_PROCID", &e->rank) &&
		   (env_int("SLURM_NTASKS", &e->size) || env_int("SLURM_NPROCS", &e->size))) {
		e->launcher = OCB_MPI_SLURM;
	} else {
		e->rank = 0;
		e->size = 1;
	}
}

const char *ocb_mpi_launcher_name(enum ocb_mpi_launcher l)
{
	switch (l) {
	case OCB_MPI_OMPI: return "mpirun (Open MPI)";
	case OCB_MPI_PMIX: return "PMIx";
	case OCB_MPI_PMI: return "PMI (MPICH/Hydra)";
	case OCB_MPI_SLURM: return "srun (Slurm)";
	default: return "none";
	}
}

int ocb_mpi_relaunch_argv(int ranks, int cores, int is_root, const char *self,
			  const char *const *args, int nargs, char np_buf[16], const char **out,
			  int max)
{
	int n = 0;
	if (ranks < 1 || !self || nargs < 0 || 6 + nargs + 1 > max)
		return ocb_seterr(OCB_EINVAL, "mpirun: %d ranks, %d arguments", ranks, nargs);
	snprintf(np_buf, 16, "%d", ranks);
	out[n++] = "mpirun";
	out[n++] = "-np";
	out[n++] = np_buf;
	if (cores > 0 && ranks > cores)
		out[n++] = "--oversubscribe";
	if (is_root)
		out[n++] = "--allow-run-as-root";
	out[n++] = self;
	for (int i = 0; i < nargs; i++)
		out[n++] = args[i];
	out[n] = NULL;
	return OCB_OK;
}

/* Ends the group: SIGTERM, then SIGKILL if it is still there after grace_s. */
static void end_group(pid_t pid, double grace_s)
{
	kill(-pid, SIGTERM);
	double t0 = ocb_now_s();
	while (ocb_now_s() - t0 < grace_s) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return;
		nanosleep(&(struct timespec){0, 20000000}, NULL);
	}
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int ocb_mpi_run(const char *const *argv, double timeout_s, int *exit_status)
{
	*exit_status = -1;
	pid_t pid = fork();
	if (pid < 0)
		return ocb_seterr(OCB_ERUNTIME, "%s: fork: %s", argv[0], strerror(errno));
	if (pid == 0) {
		setpgid(0, 0); /* mpirun and its ranks: one group to end together */
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "ocbench: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	double t0 = ocb_now_s();
	for (;;) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid) {
			*exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			return OCB_OK;
		}
		if (r < 0 && errno != EINTR)
			return ocb_seterr(OCB_ERUNTIME, "%s: wait: %s", argv[0], strerror(errno));
		if (ocb_now_s() - t0 > timeout_s) {
			end_group(pid, 5.0);
			return OCB_OK; /* *exit_status stays -1: timed out */
		}
		nanosleep(&(struct timespec){0, 20000000}, NULL);
	}
}

int ocb_mpi_launch_all(const char *self, const char *const *args, int nargs, const int *ranks,
		       int nranks, int cores, double timeout_s, int *status)
{
	const char *argv[128];
	char np[16];
	int rc = OCB_OK;
	for (int i = 0; i < nranks; i++)
		status[i] = -2;
	setenv("OCB_DIST_JOB", "1", 1); /* the children know they are the job's ranks */
	for (int i = 0; i < nranks && !rc; i++) {
		if ((rc = ocb_mpi_relaunch_argv(ranks[i], cores, geteuid() == 0, self, args, nargs,
						np, argv, 128)))
			break;
		if ((rc = ocb_mpi_run(argv, timeout_s, &status[i])))
			break;
		if (status[i] == -1)
			rc = ocb_seterr(OCB_ERUNTIME, "the %d-rank job did not finish within %.0f s: "
						      "ended", ranks[i], timeout_s);
		else if (status[i] != 0)
			rc = ocb_seterr(OCB_ERUNTIME, "the %d-rank job failed (mpirun exit status "
						      "%d)", ranks[i], status[i]);
	}
	unsetenv("OCB_DIST_JOB");
	return rc;
}

static void finalize_at_exit(void)
{
	int done = 0;
	MPI_Finalized(&done);
	if (!done)
		MPI_Finalize();
}

int ocb_mpi_ensure_init(void)
{
	int up = 0;
	MPI_Initialized(&up);
	if (up)
		return OCB_OK;
	if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
		return ocb_seterr(OCB_ERUNTIME, "MPI_Init failed");
	atexit(finalize_at_exit);
	return OCB_OK;
}
