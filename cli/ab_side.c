#include "ab_side.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../collect/ab_child.h"
#include "../collect/ceilings_store.h"
#include "../collect/host.h"
#include "../collect/runner.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_log.h"
#include "../db/store.h"

static int ignore_line(void *ctx, const char *line)
{
	(void)ctx;
	(void)line;
	return OCB_OK;
}

/* Runs argv (argv[0] a path) with output to log; 0 when it exited 0. */
static int quiet_run(char *const argv[], const char *log)
{
	int st;
	if (ocb_ab_child_run(argv, log, ignore_line, NULL, &st) != OCB_OK)
		return -1;
	return st;
}

/* The commit `spec` names, into rev (40 hex), or -1. */
static int git_commit(const char *spec, char rev[64])
{
	char arg[512], cmd[700];
	snprintf(arg, sizeof arg, "%s^{commit}", spec);
	if (strchr(arg, '\'') || strlen(spec) > 400)
		return -1;
	snprintf(cmd, sizeof cmd, "git rev-parse --verify --quiet '%s' 2>/dev/null", arg);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	int ok = fgets(rev, 64, p) != NULL;
	int st = pclose(p);
	if (!ok || st != 0)
		return -1;
	rev[strcspn(rev, "\n")] = 0;
	return strlen(rev) >= 7 ? 0 : -1;
}

int ab_side_resolve(const char *spec, const char *tmpdir, const char *name, struct ab_side *s)
{
	struct stat sb;
	memset(s, 0, sizeof *s);
	if (stat(spec, &sb) == 0 && S_ISREG(sb.st_mode) && access(spec, X_OK) == 0) {
		if (!realpath(spec, s->bin))
			return ocb_seterr(OCB_EINVAL, "%s: cannot resolve the path", spec);
		return OCB_OK;
	}
	if (git_commit(spec, s->rev) != 0)
		return ocb_seterr(OCB_EINVAL, "%s: neither an executable nor a git revision", spec);
	char log[PATH_MAX + 16], jobs[] = "-j2";
	snprintf(s->worktree, sizeof s->worktree, "%s/%s", tmpdir, name);
	snprintf(log, sizeof log, "%s.build.log", s->worktree);
	char *add[] = {"/usr/bin/git", "worktree", "add", "--detach", s->worktree, s->rev, NULL};
	if (quiet_run(add, log) != 0) {
		s->worktree[0] = 0;
		return ocb_seterr(OCB_ERUNTIME, "git worktree add %s failed (see %s)", spec, log);
	}
	char *make[] = {"/usr/bin/make", "-C", s->worktree, jobs, "ocbench", NULL};
	ocb_info("ab: building %s (%.12s) in %s...", spec, s->rev, s->worktree);
	if (quiet_run(make, log) != 0)
		return ocb_seterr(OCB_ERUNTIME, "building %s failed (see %s)", spec, log);
	snprintf(s->bin, sizeof s->bin, "%s/ocbench", s->worktree);
	return OCB_OK;
}

void ab_side_release(struct ab_side *s)
{
	if (!s->worktree[0])
		return;
	char *rm[] = {"/usr/bin/git", "worktree", "remove", "--force", s->worktree, NULL};
	quiet_run(rm, "/dev/null");
	s->worktree[0] = 0;
}

int ab_user_ceilings(const char *user_db, int quick, struct ocb_ceiling **c, size_t *n)
{
	struct ocb_store *u = NULL;
	struct ocb_machine m;
	int64_t id = 0;
	int rc;

	*c = NULL;
	*n = 0;
	ocb_host_probe(&m);
	if ((rc = ocb_store_open(user_db, OCB_STORE_WRITE, &u)) != OCB_OK)
		goto out;
	if ((rc = ocb_store_machine(u, &m, &id)) != OCB_OK)
		goto out;
	if ((rc = ocb_store_ceilings_get(u, id, c, n)) != OCB_OK || *n > 0)
		goto out;
	free(*c);
	*c = NULL;
	ocb_info("ab: measuring this machine's ceilings into %s (once per machine)...", user_db);
	rc = ocb_ceilings_measure_store(u, id, 0, &m, ocb_cpu_cores(), quick, NULL, 0, NULL, 0, c, n,
					NULL);
out:
	ocb_store_close(u);
	return rc;
}

int ab_scratch_seed(const char *scratch_db, struct ocb_ceiling *c, size_t n)
{
	struct ocb_store *t = NULL;
	struct ocb_machine m;
	int64_t id = 0;
	int rc;

	ocb_host_probe(&m);
	if ((rc = ocb_store_open(scratch_db, OCB_STORE_WRITE, &t)) != OCB_OK)
		goto out;
	if ((rc = ocb_store_machine(t, &m, &id)) != OCB_OK)
		goto out;
	for (size_t i = 0; i < n && rc == OCB_OK; i++) {
		c[i].suspect[0] = 0;
		rc = ocb_store_ceiling(t, id, 0, &c[i]);
	}
out:
	ocb_store_close(t);
	return rc;
}
