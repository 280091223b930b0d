/* run_dist: `ocbench run` and MPI (issue 12). Outside a job, `--ranks 1,2,4` relaunches
 * this command under mpirun once per rank count (collect/mpi_launch.h), after making
 * sure the machine's ceilings are cached (measured once if the database has none the run
 * would reuse, so no rank measures them); inside a job
 * (mpirun/srun detected, or OCB_DIST_JOB from the relaunch) every rank runs the same plan
 * in plan order (--passes 1: the ranks' collectives must pair up), rank 0 with the
 * database, every other rank with a private copy that is deleted afterwards: rank 0
 * alone writes the database. The copies live in a scratch folder of the relaunch
 * (OCB_DIST_SCRATCH, under $TMPDIR or /tmp) that the launcher removes when the job ends,
 * so a rank killed mid-run (mpirun ends the job) leaves nothing behind; under a
 * launcher of the user's own they go to $TMPDIR or /tmp. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collect/host.h"
#include "../collect/hostload.h"
#include "../collect/mpi_launch.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../db/machine_get.h"
#include "../db/store.h"
#include "cli.h"
#include "run_dist.h"

/* The run command's own arguments without --ranks, behind the global options. */
static int child_args(const struct ocb_global *g, int argc, char **argv, const char **out,
		      int max)
{
	int n = 0;
	out[n++] = "--db";
	out[n++] = g->db_path;
	if (g->quiet)
		out[n++] = "--quiet";
	for (int i = 0; i < argc && n < max - 1; i++) {
		if (strcmp(argv[i], "--ranks") == 0) {
			i++;
			continue;
		}
		if (strncmp(argv[i], "--ranks=", 8) == 0)
			continue;
		out[n++] = argv[i];
	}
	out[n] = NULL;
	return n;
}

static int self_path(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* 1 when the database already holds ceilings of this machine that the run would reuse
 * (the runner's rule: any for --quick, none from a quick sweep for a full run), so the
 * launcher need not measure them again. */
static int ceilings_cached(const char *db_path, int quick)
{
	struct ocb_store *s = NULL;
	struct ocb_machine self, row;
	struct ocb_ceiling *c = NULL;
	size_t n = 0;
	int64_t id;
	int ok = 0;
	if (access(db_path, R_OK) || ocb_store_open(db_path, OCB_STORE_READ, &s))
		return 0;
	ocb_host_probe(&self);
	if (ocb_store_machine_get(s, 0, self.fingerprint, &row, &id) == OCB_OK &&
	    ocb_store_ceilings_get(s, id, &c, &n) == OCB_OK) {
		ok = n > 0;
		for (size_t i = 0; ok && !quick && i < n; i++)
			ok = strstr(c[i].method, "quick") == NULL;
	}
	free(c);
	ocb_store_close(s);
	return ok;
}

/* $TMPDIR, else /tmp */
static const char *tmp_base(void)
{
	const char *t = getenv("TMPDIR");
	return t && *t ? t : "/tmp";
}

/* Removes the files of the flat folder dir (the ranks' database copies and their -wal
 * and -shm), then dir. */
static void remove_scratch(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		for (struct dirent *e; (e = readdir(d));)
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

int run_dist_launch(const struct ocb_global *g, const int *ranks, int nranks, int quick,
		    int argc, char **argv)
{
	char scratch[4200];
	char self[4096];
	const char *args[128];
	int st[16];
	if (self_path(self, sizeof self))
		return cli_usage_error("run", "--ranks: cannot find this program's path");
	/* the ceilings first (unless cached), by the ceilings command: no rank measures them */
	const char *ceil[] = {self, "--db", g->db_path, "--quiet", "ceilings", quick ? "--quick"
										 : NULL, NULL};
	int cst = 0, rc = ceilings_cached(g->db_path, quick) ? OCB_OK : ocb_mpi_run(ceil, 3600, &cst);
	if (rc || cst != 0) {
		fprintf(stderr, "ocbench: run: --ranks: measuring the ceilings failed (%d)\n", cst);
		return 3;
	}
	int nargs = child_args(g, argc, argv, args, 128);
	snprintf(scratch, sizeof scratch, "%s/ocbench-job-XXXXXX", tmp_base());
	if (!mkdtemp(scratch)) {
		fprintf(stderr, "ocbench: run: --ranks: cannot create a scratch folder in %s: %s\n",
			tmp_base(), strerror(errno));
		return 2;
	}
	setenv("OCB_DIST_SCRATCH", scratch, 1);
	rc = ocb_mpi_launch_all(self, args, nargs, ranks, nranks, ocb_cpu_cores(),
				quick ? 300 : 1800, st);
	unsetenv("OCB_DIST_SCRATCH");
	remove_scratch(scratch);
	if (rc) {
		fprintf(stderr, "ocbench: run: %s\n", ocb_lasterr());
		return 3;
	}
	return 0;
}

int run_dist_in_job(void)
{
	struct ocb_mpi_env e;
	ocb_mpi_detect(&e);
	return e.launcher != OCB_MPI_NONE || getenv("OCB_DIST_JOB") != NULL;
}

/* Copies src to dst (a snapshot of the database for a non-zero rank). */
static int copy_file(const char *src, const char *dst)
{
	char buf[1 << 16];
	int in = open(src, O_RDONLY), out = -1, ok = 1;
	if (in >= 0)
		out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n = 0;
	while (in >= 0 && out >= 0 && ok && (n = read(in, buf, sizeof buf)) > 0)
		ok = write(out, buf, (size_t)n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return in >= 0 && out >= 0 && ok && n == 0 ? 0 : -1;
}

/* Tells hostload the pids of this job's other ranks on this node, so their CPU time is
 * not read as other tenants' (every 2-rank result was flagged "host busy"). */
static void node_siblings(void)
{
	MPI_Comm node;
	int me = (int)getpid(), n = 0, pids[64];
	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
	    MPI_SUCCESS)
		return;
	MPI_Comm_size(node, &n);
	int *all = n > 0 ? malloc((size_t)n * sizeof *all) : NULL;
	if (all && MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, node) == MPI_SUCCESS) {
		int k = 0;
		for (int i = 0; i < n && k < 64; i++)
			if (all[i] != me)
				pids[k++] = all[i];
		ocb_hostload_set_siblings(pids, k);
	}
	free(all);
	MPI_Comm_free(&node);
}

int run_dist_rank_setup(const char *db_path, int *rank, char *tmp_db, size_t len)
{
	int rc = ocb_mpi_ensure_init();
	tmp_db[0] = 0;
	if (rc)
		return rc;
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	/* no drift canaries on more than one rank: every rank ran them at once (the others'
	 * into a store that is thrown away), so they measured the ranks, not the machine's
	 * drift, and cost ~10 s of a 60 s quick budget (a 2-rank quick run: 23 s with them,
	 * 14 s without, load 14); the dist numbers are compared within one job */
	int size = 1;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size > 1)
		setenv("OCBENCH_NO_CANARIES", "1", 1);
	node_siblings();
	if (*rank == 0)
		return OCB_OK;
	const char *dir = getenv("OCB_DIST_SCRATCH");
	snprintf(tmp_db, len, "%s/ocbench-rank%d-%d.db", dir && *dir ? dir : tmp_base(), *rank,
		 (int)getpid());
	if (access(db_path, R_OK) == 0 && copy_file(db_path, tmp_db))
		return ocb_seterr(OCB_EIO, "%s: cannot copy the database for rank %d", tmp_db,
				  *rank);
	return OCB_OK;
}

void run_dist_rank_done(const char *tmp_db)
{
	char p[4200];
	if (!tmp_db || !*tmp_db)
		return;
	unlink(tmp_db);
	snprintf(p, sizeof p, "%s-wal", tmp_db);
	unlink(p);
	snprintf(p, sizeof p, "%s-shm", tmp_db);
	unlink(p);
}
