#include "cli_util.h"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../collect/host.h"
#include "../common/ocb_error.h"
#include "../db/store.h"

extern char **environ;

int cli_run(struct cli_out *o, const char *const *argv, const char *const *env)
{
	int po[2], pe[2];
	char *args[64];
	char *envp[256];
	int n = 0, ne = 0;
	pid_t pid;
	posix_spawn_file_actions_t fa;

	memset(o, 0, sizeof *o);
	const char *bin = getenv("OCB_BIN"); /* make sanitize points it at its own build */
	args[n++] = (char *)(bin && *bin ? bin : "./ocbench");
	for (int i = 1; argv[i] && n < 63; i++)
		args[n++] = (char *)argv[i];
	args[n] = NULL;
	for (char **e = environ; *e && ne < 200; e++) {
		/* an addition in env replaces the inherited variable of the same name */
		int replaced = strncmp(*e, "OCBENCH_DB=", 11) == 0;
		for (int i = 0; env && env[i] && !replaced; i++) {
			const char *eq = strchr(env[i], '=');
			size_t kl = eq ? (size_t)(eq - env[i]) + 1 : 0;
			replaced = kl && strncmp(*e, env[i], kl) == 0;
		}
		if (!replaced)
			envp[ne++] = *e;
	}
	for (int i = 0; env && env[i] && ne < 255; i++)
		envp[ne++] = (char *)env[i];
	envp[ne] = NULL;

	if (pipe(po) || pipe(pe))
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	posix_spawn_file_actions_addclose(&fa, po[0]);
	posix_spawn_file_actions_addclose(&fa, pe[0]);
	if (posix_spawn(&pid, args[0], &fa, NULL, args, envp) != 0)
		return -1;
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	close(pe[1]);

	size_t lo = 0, le = 0;
	struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
	int open_fds = 2;
	while (open_fds > 0 && poll(fds, 2, -1) > 0) {
		char buf[4096];
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP)))
				continue;
			ssize_t r = read(fds[i].fd, buf, sizeof buf);
			if (r <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
				continue;
			}
			char *dst = i ? o->err : o->out;
			size_t *len = i ? &le : &lo;
			size_t cap = (i ? sizeof o->err : sizeof o->out) - 1;
			size_t take = *len + (size_t)r > cap ? cap - *len : (size_t)r;
			memcpy(dst + *len, buf, take);
			*len += take;
		}
	}
	int st = 0;
	waitpid(pid, &st, 0);
	o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

int cli_spawn(const char *const *argv)
{
	char *args[64];
	int n = 0;
	pid_t pid;
	posix_spawn_file_actions_t fa;
	const char *bin = getenv("OCB_BIN");
	args[n++] = (char *)(bin && *bin ? bin : "./ocbench");
	for (int i = 1; argv[i] && n < 63; i++)
		args[n++] = (char *)argv[i];
	args[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	int rc = posix_spawn(&pid, args[0], &fa, NULL, args, environ);
	posix_spawn_file_actions_destroy(&fa);
	return rc == 0 ? (int)pid : -1;
}

int cli_lines(const char *s)
{
	int n = 0;
	for (const char *p = s; *p; p++)
		if (*p == '\n')
			n++;
	if (*s && s[strlen(s) - 1] != '\n')
		n++;
	return n;
}

char *cli_tmpdir(char *buf, size_t len)
{
	const char *t = getenv("TMPDIR"); /* tests/run.sh's scratch folder */
	if (!t || !*t || strlen(t) + 24 > len)
		t = "/tmp"; /* (callers' buffers are sized for short paths) */
	snprintf(buf, len, "%s/ocbench-test-XXXXXX", t);
	return mkdtemp(buf);
}

int cli_rundir(struct cli_rundir *r, const char *dbname)
{
	if (!cli_tmpdir(r->dir, sizeof r->dir))
		return 0;
	snprintf(r->db, sizeof r->db, "%s/%s", r->dir, dbname);
	snprintf(r->dbopt, sizeof r->dbopt, "--db=%s", r->db);
	snprintf(r->out, sizeof r->out, "%s/out", r->dir);
	return 1;
}

char *cli_tmpname(char *buf, size_t len, const char *stem)
{
	const char *t = getenv("TMPDIR");
	if (!t || !*t || strlen(t) + strlen(stem) + 9 > len) /* "/", "-XXXXXX", NUL */
		t = "/tmp";
	snprintf(buf, len, "%s/%s-XXXXXX", t, stem);
	return buf;
}

char *cli_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	if (b) {
		b[n] = 0;
		*len = (size_t)n;
	}
	return b;
}

long long cli_query_int(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	long long v = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_busy_timeout(db, 5000) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

void cli_query_text(const char *path, const char *sql, char *out, size_t len)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	out[0] = 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_busy_timeout(db, 5000) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		snprintf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
}

void cli_seed_machine_with(const char *path, const struct ocb_ceiling *c, size_t n)
{
	struct ocb_store *s = NULL;
	struct ocb_machine m;
	int64_t mid;
	ocb_host_probe(&m);
	cr_assert_eq(ocb_store_open(path, OCB_STORE_WRITE, &s), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK, "%s", ocb_lasterr());
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(ocb_store_ceiling(s, mid, 0, &c[i]), OCB_OK, "%s", ocb_lasterr());
	ocb_store_close(s);
}

void cli_seed_machine(const char *path)
{
	struct ocb_ceiling c;
	memset(&c, 0, sizeof c);
	strcpy(c.kind, "flops_fp32");
	c.threads = 1;
	c.value = 10.0;
	strcpy(c.unit, "GFLOP/s");
	strcpy(c.method, "test stand-in (quick)");
	cli_seed_machine_with(path, &c, 1);
}
