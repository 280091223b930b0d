#include "ab_child.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"

int ocb_ab_parse_line(const char *line, struct ocb_ab_obs *o)
{
	int rc = 0;
	char *pj = NULL;
	memset(o, 0, sizeof *o);
	cJSON *j = cJSON_Parse(line);
	if (!cJSON_IsObject(j))
		goto out;
	const char *suite = ocb_json_str(j, "suite", NULL), *bench = ocb_json_str(j, "bench", NULL);
	const char *variant = ocb_json_str(j, "variant", ""), *status = ocb_json_str(j, "status", "");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(j, "params");
	double med = ocb_json_num(j, "median_s", -1), threads = ocb_json_num(j, "threads", 0);
	if (!suite || !bench || !params || strcmp(status, "ok") != 0 || !(med > 0))
		goto out;
	if (!(pj = ocb_json_canonical(params))) {
		rc = OCB_ENOMEM;
		goto out;
	}
	size_t nu = strlen(suite) + strlen(bench) + strlen(pj) + 3;
	size_t nk = nu + strlen(variant) + 32;
	o->unit = malloc(nu);
	o->key = malloc(nk);
	if (!o->unit || !o->key) {
		free(o->unit);
		free(o->key);
		memset(o, 0, sizeof *o);
		rc = OCB_ENOMEM;
		goto out;
	}
	snprintf(o->unit, nu, "%s/%s/%s", suite, bench, pj);
	snprintf(o->key, nk, "%s|%s|%d", o->unit, variant, (int)threads);
	o->median = med;
	o->min = ocb_json_num(j, "min_s", NAN);
	if (!(o->min > 0 && o->min <= med))
		o->min = NAN;
	rc = 1;
out:
	free(pj);
	cJSON_Delete(j);
	return rc;
}

char *ocb_ab_filter_regex(const char *const *units, size_t n)
{
	if (n == 0)
		return NULL;
	size_t len = 8;
	for (size_t i = 0; i < n; i++)
		len += 2 * strlen(units[i]) + 1;
	char *re = malloc(len), *w = re;
	if (!re)
		return NULL;
	*w++ = '^';
	*w++ = '(';
	for (size_t i = 0; i < n; i++) {
		if (i)
			*w++ = '|';
		for (const char *c = units[i]; *c; c++) {
			if (strchr(".[]{}()\\*+?^$|", *c))
				*w++ = '\\';
			*w++ = *c;
		}
	}
	*w++ = ')';
	*w++ = '$';
	*w = 0;
	return re;
}

/* In the child: stdin in_fd (-1: /dev/null), stdout out_fd, stderr the log; then exec. */
static void child_exec(char *const argv[], int in_fd, int out_fd, const char *log_path)
{
	if (in_fd < 0)
		in_fd = open("/dev/null", O_RDONLY);
	if (in_fd >= 0)
		dup2(in_fd, STDIN_FILENO);
	dup2(out_fd, STDOUT_FILENO);
	if (log_path) {
		int lf = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (lf >= 0)
			dup2(lf, STDERR_FILENO);
	}
	execv(argv[0], argv);
	_exit(127);
}

int ocb_ab_child_run(char *const argv[], const char *log_path,
		     int (*on_line)(void *ctx, const char *line), void *ctx, int *status)
{
	int fd[2], rc = OCB_OK;
	*status = -1;
	if (pipe(fd) != 0)
		return ocb_seterr(OCB_EIO, "ab: pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return ocb_seterr(OCB_EIO, "ab: fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(fd[0]);
		child_exec(argv, -1, fd[1], log_path);
	}
	close(fd[1]);
	FILE *f = fdopen(fd[0], "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while (f && rc == OCB_OK && (len = getline(&line, &cap, f)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			line[len - 1] = 0;
		rc = on_line(ctx, line);
	}
	free(line);
	if (rc != OCB_OK)
		kill(pid, SIGTERM);
	if (f)
		fclose(f);
	else
		close(fd[0]);
	int ws;
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
	return rc;
}

int ocb_ab_proc_open(char *const argv[], const char *log_path, struct ocb_ab_proc *p)
{
	int to[2], from[2];
	memset(p, 0, sizeof *p);
	if (pipe(to) != 0)
		return ocb_seterr(OCB_EIO, "ab: pipe: %s", strerror(errno));
	if (pipe(from) != 0) {
		close(to[0]);
		close(to[1]);
		return ocb_seterr(OCB_EIO, "ab: pipe: %s", strerror(errno));
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(to[1]);
		close(from[0]);
		child_exec(argv, to[0], from[1], log_path);
	}
	close(to[0]);
	close(from[1]);
	if (pid < 0) {
		close(to[1]);
		close(from[0]);
		return ocb_seterr(OCB_EIO, "ab: fork: %s", strerror(errno));
	}
	/* the write end must not leak into later children: they would keep it open */
	fcntl(to[1], F_SETFD, FD_CLOEXEC);
	fcntl(from[0], F_SETFD, FD_CLOEXEC);
	p->pid = (int)pid;
	p->to = fdopen(to[1], "w");
	p->from = fdopen(from[0], "r");
	if (!p->to || !p->from) {
		if (!p->to)
			close(to[1]);
		if (!p->from)
			close(from[0]);
		ocb_ab_proc_close(p, NULL);
		return ocb_seterr(OCB_EIO, "ab: fdopen: %s", strerror(errno));
	}
	return OCB_OK;
}

int ocb_ab_proc_send(struct ocb_ab_proc *p, const char *request)
{
	if (!p->to || fprintf(p->to, "%s\n", request) < 0 || fflush(p->to) != 0)
		return ocb_seterr(OCB_EIO, "ab: the serving child is gone");
	return OCB_OK;
}

int ocb_ab_proc_recv(struct ocb_ab_proc *p)
{
	ssize_t len = p->from ? getline(&p->line, &p->cap, p->from) : -1;
	if (len < 0)
		return ocb_seterr(OCB_EIO, "ab: the serving child exited");
	if (len > 0 && p->line[len - 1] == '\n')
		p->line[len - 1] = 0;
	return OCB_OK;
}

void ocb_ab_proc_close(struct ocb_ab_proc *p, int *status)
{
	int ws = 0;
	if (p->to) {
		fputs("quit\n", p->to);
		fclose(p->to);
	}
	if (p->from)
		fclose(p->from);
	if (p->pid > 0)
		while (waitpid((pid_t)p->pid, &ws, 0) < 0 && errno == EINTR)
			;
	if (status)
		*status = p->pid <= 0 ? -1
			  : WIFEXITED(ws) ? WEXITSTATUS(ws)
					  : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
	free(p->line);
	memset(p, 0, sizeof *p);
}
