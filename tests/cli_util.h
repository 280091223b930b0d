/* cli_util: run ./ocbench as a child process and capture what it says (end-to-end
 * tests). The tests run from the repository root (tests/run.sh changes there). */
#ifndef OCB_TEST_CLI_UTIL_H
#define OCB_TEST_CLI_UTIL_H

#include <stddef.h>

struct cli_out {
	int status;        /* exit code, or 128+signal */
	char out[65536];   /* stdout, NUL-terminated, truncated if longer */
	char err[8192];    /* stderr */
};

/* Runs ./ocbench ($OCB_BIN if set) with argv (NULL-terminated, argv[0] ignored) and env additions
 * ("K=V" strings, NULL-terminated, may be NULL). Returns 0, or -1 if it could not run. */
int cli_run(struct cli_out *o, const char *const *argv, const char *const *env);

/* Starts ./ocbench with argv like cli_run but does not wait: stdout and stderr go to
 * /dev/null. Returns the child's pid, or -1. */
int cli_spawn(const char *const *argv);

/* The first column of the first row of `sql` on the database at `path`, opened
 * read-only (with a busy timeout, so a writer in progress is waited for): as an integer
 * (-1 when there is none) or as text into out ("" when there is none). */
long long cli_query_int(const char *path, const char *sql);
void cli_query_text(const char *path, const char *sql, char *out, size_t len);

/* Number of lines in s (a last line without '\n' counts). */
int cli_lines(const char *s);

/* A fresh temporary folder: mkdtemp under $TMPDIR (tests/run.sh's scratch folder, removed
 * when the tests end), else /tmp. */
char *cli_tmpdir(char *buf, size_t len);

/* The paths of one `ocbench run` in a fresh folder (cli_tmpdir): its database
 * dir/<dbname>, the "--db=" option naming it, and the artifact folder dir/out. */
struct cli_rundir {
	char dir[64], db[128], dbopt[160], out[160];
};
/* Fills *r; 0 when the folder cannot be made, else 1. */
int cli_rundir(struct cli_rundir *r, const char *dbname);

/* "$TMPDIR/<stem>-XXXXXX" into buf (/tmp if TMPDIR is unset, empty or too long for len),
 * for the caller's mkdtemp or mkstemp; returns buf. */
char *cli_tmpname(char *buf, size_t len, const char *stem);

/* Whole file contents into a malloc'd buffer (caller frees), *len its size; NULL if unreadable. */
char *cli_slurp(const char *path, size_t *len);

/* Stores this machine (collect/host.h) with one stand-in ceiling in the database at
 * `path` (created), so that a `run --quick` on it uses the cached ceiling instead of
 * spending a minute measuring them. Asserts on failure. */
void cli_seed_machine(const char *path);

/* cli_seed_machine with the ceilings c[0..n) (flags included) instead of the stand-in. */
struct ocb_ceiling;
void cli_seed_machine_with(const char *path, const struct ocb_ceiling *c, size_t n);

#endif
