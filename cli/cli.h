/* cli: what every `ocbench CMD` shares: global options, the usage-error convention
 * (one line on stderr, exit 2), and opening the store. Only cli/ and ocbench.c exit. */
#ifndef OCB_CLI_H
#define OCB_CLI_H

#include <getopt.h>

#include "../db/store.h"

struct ocb_global {
	const char *db_path; /* --db, $OCBENCH_DB, or "ocbench.db" */
	int quiet;           /* --quiet */
	int json;            /* --json: machine-readable output on stdout */
	const char *argv0;
	char cmdline[4096];  /* the whole command line, for run.cmdline */
};

/* A subcommand: argv[0] is the command name; returns the process exit code. */
typedef int (*ocb_cmd_fn)(const struct ocb_global *g, int argc, char **argv);

struct ocb_cmd {
	const char *name;
	ocb_cmd_fn fn;
	const char *help; /* one line */
};

/* Prints "ocbench: CMD: MSG" on stderr and returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "ocbench: CMD: <ocb_lasterr() or strerror>" and returns ocb_exit_code(status). */
int cli_fail(const char *cmd, int status);
/* Prints j (indented, or on one line when compact) and a newline on stdout, then deletes
 * it. 0, or cli_fail's code when j is NULL (building it failed) or it cannot be printed
 * or written. */
struct cJSON;
int cli_print_json(const char *cmd, struct cJSON *j, int compact);

/* Handles getopt_long's '?' and ':' results for `cmd`: one line, returns 2. */
int cli_bad_option(const char *cmd, int argc, char **argv);

/* Opens the store of g for `mode`; on failure prints one line and returns the exit code
 * (2 or 3) with *out NULL; on success returns 0. */
int cli_open_store(const struct ocb_global *g, const char *cmd, enum ocb_store_mode mode,
		   struct ocb_store **out);

/* Parses a positive integer option value; 0 on success, else prints and returns 2. */
int cli_parse_long(const char *cmd, const char *opt, const char *s, long lo, long hi, long *out);
int cli_parse_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
		     double *out);

/* `run --list` and `run --describe BENCH` (run_list.c); describe returns the exit code. */
void run_list_suites(void);
int run_describe(const char *name);

/* Every command. */
int cmd_run(const struct ocb_global *g, int argc, char **argv);
int cmd_runs(const struct ocb_global *g, int argc, char **argv);
int cmd_show(const struct ocb_global *g, int argc, char **argv);
int cmd_machines(const struct ocb_global *g, int argc, char **argv);
int cmd_ceilings(const struct ocb_global *g, int argc, char **argv);
int cmd_events(const struct ocb_global *g, int argc, char **argv);
int cmd_report(const struct ocb_global *g, int argc, char **argv);
int cmd_compare(const struct ocb_global *g, int argc, char **argv);
int cmd_history(const struct ocb_global *g, int argc, char **argv);
int cmd_export(const struct ocb_global *g, int argc, char **argv);
int cmd_import(const struct ocb_global *g, int argc, char **argv);
int cmd_merge(const struct ocb_global *g, int argc, char **argv);
int cmd_inspect(const struct ocb_global *g, int argc, char **argv);
int cmd_plan(const struct ocb_global *g, int argc, char **argv);
int cmd_compress(const struct ocb_global *g, int argc, char **argv);
int cmd_ab(const struct ocb_global *g, int argc, char **argv);

#endif
