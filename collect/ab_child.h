/* ab_child: one step of `ocbench ab` as a child process, and what comes back from it.
 *
 * A step runs `BINARY run --filter <regex of the step's cases> --passes 1 --json ...`:
 * the plain `run` interface every ocbench build has, so BASE may be any older revision.
 * Each `--json` result line (collect/runner.c print_result: suite, bench, params,
 * variant, threads, status, median_s) becomes one observation keyed by
 * "suite/bench/params|variant|threads" with its median and, where the build prints it,
 * its fastest sample (min_s; NaN from builds before it); its unit, "suite/bench/params" (params in
 * canonical form), is what `run --filter` matches, so the parent can ask for it again.
 * Pure parsing and regex building; the spawn is fork + execv with stdout on a pipe. */
#ifndef OCB_AB_CHILD_H
#define OCB_AB_CHILD_H

#include <stddef.h>
#include <stdio.h>

struct ocb_ab_obs {
	char *unit;    /* "suite/bench/params", malloc'd */
	char *key;     /* unit "|" variant "|" threads, malloc'd */
	double median; /* seconds */
	double min;    /* seconds; NaN when the line has no min_s (an older build) */
};

/* Parses one output line. Returns 1 with *o filled (caller frees unit and key) for an
 * ok result with a positive median, 0 for any other line (not JSON, a failed case, a
 * summary), OCB_ENOMEM. */
int ocb_ab_parse_line(const char *line, struct ocb_ab_obs *o);

/* "^(u1|u2|...)$" with every ERE metacharacter of the units escaped: a POSIX extended
 * regex (what `run --filter` compiles) matching exactly those units. malloc'd; NULL on
 * allocation failure or n == 0. */
char *ocb_ab_filter_regex(const char *const *units, size_t n);

/* Runs argv[0] (a path) with argv, stdin from /dev/null, stderr appended to log_path
 * (NULL: inherited), and calls on_line(ctx, line) for each stdout line (without its
 * newline; a non-zero return stops reading and is returned after the child is
 * reaped). *status: the child's exit code, or 128 + signal. Returns OCB_OK, OCB_EIO
 * (fork/pipe failed) or on_line's status. */
int ocb_ab_child_run(char *const argv[], const char *log_path,
		     int (*on_line)(void *ctx, const char *line), void *ctx, int *status);

/* A long-lived child (`BINARY run ... --serve`, collect/serve.h): requests written to
 * its stdin, one reply line read from its stdout per request. */
struct ocb_ab_proc {
	int pid;       /* 0: not running */
	FILE *to, *from;
	char *line;    /* the last line read (getline buffer) */
	size_t cap;
};

/* Starts argv[0] with argv, stdin and stdout on pipes, stderr appended to log_path.
 * OCB_OK or OCB_EIO. The caller reads the first line (the case list) with _recv. */
int ocb_ab_proc_open(char *const argv[], const char *log_path, struct ocb_ab_proc *p);

/* Sends one request line (a newline is added). OCB_OK, or OCB_EIO when the child is
 * gone (SIGPIPE must be ignored by the caller). */
int ocb_ab_proc_send(struct ocb_ab_proc *p, const char *request);

/* Reads one reply line into p->line (without its newline). OCB_OK, or OCB_EIO at EOF
 * (the child exited: an older build refusing --serve exits 2 before any line). */
int ocb_ab_proc_recv(struct ocb_ab_proc *p);

/* Sends quit, closes the pipes, reaps the child; *status (may be NULL) as in
 * ocb_ab_child_run. Safe on a proc never opened. */
void ocb_ab_proc_close(struct ocb_ab_proc *p, int *status);

#endif
