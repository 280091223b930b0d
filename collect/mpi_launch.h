/* mpi_launch: how ocbench finds out that it runs inside an MPI job, and how it starts
 * itself under mpirun when it does not (`ocbench run --suite dist --ranks 1,2,4`).
 *
 * Detection reads the launcher's environment, before MPI_Init:
 *   Open MPI mpirun/orterun: OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_RANK
 *   PMIx launchers (Open MPI 5, srun --mpi=pmix): PMIX_RANK (size unknown until init)
 *   MPICH/Hydra, Intel MPI: PMI_SIZE, PMI_RANK
 *   Slurm srun: SLURM_NTASKS (or SLURM_NPROCS), SLURM_PROCID (only when SLURM_STEP_ID is
 *   set: a batch script's own shell has SLURM_* too but is no task)
 * Relaunching builds `mpirun -np N [--oversubscribe] [--allow-run-as-root] SELF ARGS...`
 * (Open MPI 4.1: root needs --allow-run-as-root; more ranks than cores need
 * --oversubscribe, REFERENCE.md §6) and runs it with a deadline: a rank that fails makes
 * mpirun end the job with a non-zero status; a rank that hangs is ended by the deadline
 * (SIGTERM to mpirun's process group, SIGKILL 5 s later). */
#ifndef OCB_MPI_LAUNCH_H
#define OCB_MPI_LAUNCH_H

#include <stddef.h>

enum ocb_mpi_launcher {
	OCB_MPI_NONE = 0, /* not inside an MPI job: a single process */
	OCB_MPI_OMPI,
	OCB_MPI_PMIX,
	OCB_MPI_PMI,
	OCB_MPI_SLURM,
};

struct ocb_mpi_env {
	enum ocb_mpi_launcher launcher;
	int rank, size; /* size 0 when the launcher does not say before MPI_Init */
};

/* Reads the environment (getenv). Never fails. */
void ocb_mpi_detect(struct ocb_mpi_env *e);
/* "none", "mpirun (Open MPI)", "PMIx", "PMI (MPICH/Hydra)", "srun (Slurm)". */
const char *ocb_mpi_launcher_name(enum ocb_mpi_launcher l);

/* argv for mpirun: {"mpirun", "-np", N, [--oversubscribe], [--allow-run-as-root], self,
 * args..., NULL} into out[max] with the number text in np_buf. oversubscribe when ranks >
 * cores; root when euid == 0. OCB_EINVAL if it does not fit or ranks < 1. */
int ocb_mpi_relaunch_argv(int ranks, int cores, int is_root, const char *self,
			  const char *const *args, int nargs, char np_buf[16], const char **out,
			  int max);

/* Runs argv (argv[0] looked up in PATH) in its own process group and waits at most
 * timeout_s seconds. *exit_status: the exit code, 128 + signal, or -1 on timeout (the
 * group was ended). OCB_OK when it ran (whatever its status), OCB_ERUNTIME if it could not
 * be started. */
int ocb_mpi_run(const char *const *argv, double timeout_s, int *exit_status);

/* `ocbench run --suite dist --ranks 1,2,4` outside a job: for each rank count, runs
 * `mpirun -np N ... self args...` (ocb_mpi_relaunch_argv) with OCB_DIST_JOB=1 in its
 * environment and a deadline of timeout_s; stops at the first job that fails or times
 * out. status[i] gets each job's exit status (-1: timed out, not run: -2). Returns OCB_OK
 * when every job exited 0, else OCB_ERUNTIME naming the first failed rank count. */
int ocb_mpi_launch_all(const char *self, const char *const *args, int nargs, const int *ranks,
		       int nranks, int cores, double timeout_s, int *status);

/* MPI_Init unless already done (a singleton without mpirun is a job of one rank);
 * MPI_Finalize at exit. OCB_ERUNTIME if MPI cannot start. Benches that use MPI call it
 * in setup. */
int ocb_mpi_ensure_init(void);

#endif
