/* End-to-end CLI cases: every bad usage or bad input exits 2 with exactly one line on
 * stderr, and leaves what is stored unchanged. Data-driven: one row per case. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <zlib.h>

#include "cli_util.h"
#include "san.h"

struct bad_case {
	const char *argv[8];
	const char *expect; /* a word the one line must contain */
};

static const struct bad_case bad_usage[] = {
	{{"", NULL}, "no command"},
	{{"", "frobnicate", NULL}, "not a command"},
	{{"", "--db", NULL}, "needs a path"},
	{{"", "run", "--bogus", NULL}, "bad option"},
	{{"", "run", "--suite", "nosuch", NULL}, "no suite"},
	{{"", "run", "--seed", "abc", NULL}, "--seed"},
	{{"", "run", "--threads", "0", NULL}, "--threads"},
	{{"", "run", "--threads", "1,x", NULL}, "--threads"},
	{{"", "run", "--target-ci", "-1", NULL}, "--target-ci"},
	{{"", "run", "--budget", NULL}, "needs a value"},
	{{"", "run", "--filter", "(", NULL}, "regular expression"},
	{{"", "run", "stray", NULL}, "unexpected argument"},
	{{"", "run", "--min-reps", "9", "--max-reps", "3", NULL}, "min-reps"},
	{{"", "run", "--data-dir", "/nonexistent-ocbench-data", NULL}, "--data-dir"},
	{{"", "run", "--inject-slowdown", "sgemm", NULL}, "BENCH:FRACTION"},
	{{"", "version", "extra", NULL}, "no arguments"},
	{{"", "help", "nosuch", NULL}, "no command"},
	{{"", "runs", "--bogus", NULL}, "bad option"},
	{{"", "show", NULL}, ""},
	{{"", "machines", "extra", NULL}, ""},
	{{"", "ceilings", "--bogus", NULL}, "bad option"},
	{{"", "events", "--bogus", NULL}, "bad option"},
};

Test(cli, bad_usage_exits_2_with_one_line)
{
	char dir[64], db[128];
	cr_assert(cli_tmpdir(dir, sizeof dir));
	snprintf(db, sizeof db, "OCBENCH_DB=%s/x.db", dir);
	const char *env[] = {db, NULL};
	for (size_t i = 0; i < sizeof bad_usage / sizeof bad_usage[0]; i++) {
		struct cli_out o;
		cr_assert_eq(cli_run(&o, bad_usage[i].argv, env), 0);
		cr_expect_eq(o.status, 2, "case %zu (%s): exit %d, stderr: %s", i,
			     bad_usage[i].argv[1] ? bad_usage[i].argv[1] : "-", o.status, o.err);
		cr_expect_eq(cli_lines(o.err), 1, "case %zu: stderr has %d lines: %s", i,
			     cli_lines(o.err), o.err);
		cr_expect(strstr(o.err, bad_usage[i].expect), "case %zu: '%s' not in: %s", i,
			  bad_usage[i].expect, o.err);
	}
}

/* A malformed OCB_CPU_AS (common/ocb_cpu.h) is bad input too: refused as the program
 * loads (the GEMV settings are settled then), one line naming it, exit 2 */
Test(cli, bad_cpu_as_exits_2_with_one_line)
{
	char dir[64], db[128];
	cr_assert(cli_tmpdir(dir, sizeof dir));
	snprintf(db, sizeof db, "OCBENCH_DB=%s/x.db", dir);
	const char *env[] = {db, "OCB_CPU_AS=Intel:6", NULL};
	const char *argv[] = {"", "runs", NULL};
	struct cli_out o;
	cr_assert_eq(cli_run(&o, argv, env), 0);
	cr_expect_eq(o.status, 2, "exit %d: %s", o.status, o.err);
	cr_expect_eq(cli_lines(o.err), 1, "%s", o.err);
	cr_expect(strstr(o.err, "OCB_CPU_AS='Intel:6' is not VENDOR:FAMILY:MODEL"), "%s", o.err);
}

Test(cli, help_on_every_command)
{
	static const char *const cmds[] = {"run", "runs", "show", "machines", "ceilings",
					   "events", "version", "help"};
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		const char *argv[] = {"", cmds[i], "--help", NULL};
		struct cli_out o;
		cr_assert_eq(cli_run(&o, argv, NULL), 0);
		cr_expect_eq(o.status, 0, "%s --help: exit %d: %s", cmds[i], o.status, o.err);
		cr_expect(strstr(o.out, "usage: ocbench"), "%s --help: no usage line", cmds[i]);
	}
}

/* Bad databases are refused with exit 2 and left byte-for-byte unchanged. */
static void expect_refused(const char *path, const char *word)
{
	size_t n0 = 0, n1 = 0;
	char *before = cli_slurp(path, &n0);
	cr_assert(before);
	const char *const cmds[][4] = {{"", "runs", NULL}, {"", "run", "--quick", NULL}};
	for (int i = 0; i < 2; i++) {
		char dbopt[256];
		snprintf(dbopt, sizeof dbopt, "--db=%s", path);
		const char *argv[] = {"", dbopt, cmds[i][1], cmds[i][2], NULL};
		struct cli_out o;
		cr_assert_eq(cli_run(&o, argv, NULL), 0);
		cr_expect_eq(o.status, 2, "%s on %s: exit %d: %s", cmds[i][1], path, o.status, o.err);
		cr_expect_eq(cli_lines(o.err), 1, "%s", o.err);
		cr_expect(strstr(o.err, word), "'%s' not in: %s", word, o.err);
	}
	char *after = cli_slurp(path, &n1);
	cr_assert(after);
	cr_expect(n0 == n1 && memcmp(before, after, n0) == 0, "%s was modified", path);
	free(before);
	free(after);
}

Test(cli, refuses_foreign_and_newer_databases)
{
	char dir[64], path[128], cmd[512];
	cr_assert(cli_tmpdir(dir, sizeof dir));

	snprintf(path, sizeof path, "%s/notes.txt", dir);
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs("these are not the bytes of a database\n", f);
	fclose(f);
	expect_refused(path, "not");

	snprintf(path, sizeof path, "%s/other.db", dir);
	snprintf(cmd, sizeof cmd, "sqlite3 %s 'CREATE TABLE t(x); INSERT INTO t VALUES (1);'", path);
	cr_assert_eq(system(cmd), 0);
	expect_refused(path, "not");

	/* An ocbench database whose schema version is ahead of this build. */
	snprintf(path, sizeof path, "%s/newer.db", dir);
	char dbopt[160];
	snprintf(dbopt, sizeof dbopt, "--db=%s", path);
	const char *mk[] = {"", dbopt, "runs", NULL};
	struct cli_out o;
	cr_assert_eq(cli_run(&o, mk, NULL), 0);
	/* `runs` opens read-only and must not create it... */
	struct stat st;
	cr_expect(stat(path, &st) != 0, "read-only command created %s", path);
	snprintf(cmd, sizeof cmd,
		 "sqlite3 %s \"CREATE TABLE ocbench_meta(key TEXT PRIMARY KEY, value TEXT);"
		 " INSERT INTO ocbench_meta VALUES ('app','ocbench'); PRAGMA user_version=99;\"",
		 path);
	cr_assert_eq(system(cmd), 0);
	expect_refused(path, "newer");
}

Test(cli, unwritable_paths_exit_2)
{
	const char *a1[] = {"", "--db=/nonexistent-dir/x.db", "run", "--quick", NULL};
	struct cli_out o;
	cr_assert_eq(cli_run(&o, a1, NULL), 0);
	cr_expect_eq(o.status, 2, "exit %d: %s", o.status, o.err);
	cr_expect_eq(cli_lines(o.err), 1, "%s", o.err);

	char dir[64], db[160];
	cr_assert(cli_tmpdir(dir, sizeof dir));
	snprintf(db, sizeof db, "--db=%s/x.db", dir);
	const char *a2[] = {"", db, "run", "--quick", "--out", "/proc/ocbench-out", NULL};
	cr_assert_eq(cli_run(&o, a2, NULL), 0);
	cr_expect_eq(o.status, 2, "exit %d: %s", o.status, o.err);
	cr_expect_eq(cli_lines(o.err), 1, "%s", o.err);
}

/* A JSON answer that cannot be written (stdout is /dev/full, where a buffered write fails
 * only when flushed) is an error: one line on stderr and exit 3, not a silent 0. */
Test(cli, json_to_a_full_stdout_fails)
{
	const char *bin = getenv("OCB_BIN");
	char dir[64], cmd[512], errf[160];
	cr_assert(cli_tmpdir(dir, sizeof dir));
	snprintf(errf, sizeof errf, "%s/err", dir);
	snprintf(cmd, sizeof cmd, "%s --db=%s/x.db run --dry-run --json --suite baseline --quick "
		 ">/dev/full 2>%s", bin && *bin ? bin : "./ocbench", dir, errf);
	int st = system(cmd);
	cr_assert(WIFEXITED(st));
	cr_expect_eq(WEXITSTATUS(st), 3);
	size_t len = 0;
	char *err = cli_slurp(errf, &len);
	cr_assert(err);
	cr_expect_eq(cli_lines(err), 1, "%s", err);
	cr_expect(strstr(err, "writing the JSON to stdout"), "%s", err);
	free(err);
}
/* A truncated dataset is bad input too: one line on stderr naming the file, exit 2.
 * The IDX file is made here (zlib), so the test does not need the dataset package. */
Test(cli, truncated_dataset_exits_2, .timeout = OCB_TIMEOUT(120))
{
	char dir[64], path[160], dbopt[160], data[160], out[160];
	cr_assert(cli_tmpdir(dir, sizeof dir));
	snprintf(path, sizeof path, "%s/train-images-idx3-ubyte.gz", dir);
	gzFile g = gzopen(path, "wb");
	cr_assert(g);
	/* magic 0x00000803, 100 images of 28 x 28, then only 10 of the 78,400 pixels */
	const unsigned char hdr[16] = {0, 0, 8, 3, 0, 0, 0, 100, 0, 0, 0, 28, 0, 0, 0, 28};
	unsigned char px[10] = {0};
	cr_assert_eq(gzwrite(g, hdr, sizeof hdr), (int)sizeof hdr);
	cr_assert_eq(gzwrite(g, px, sizeof px), (int)sizeof px);
	gzclose(g);
	snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte.gz", dir); /* whole: 100 labels */
	cr_assert(g = gzopen(path, "wb"));
	const unsigned char lhdr[8] = {0, 0, 8, 1, 0, 0, 0, 100};
	unsigned char labels[100] = {0};
	cr_assert_eq(gzwrite(g, lhdr, sizeof lhdr), (int)sizeof lhdr);
	cr_assert_eq(gzwrite(g, labels, sizeof labels), (int)sizeof labels);
	gzclose(g);
	snprintf(dbopt, sizeof dbopt, "--db=%s/x.db", dir);
	snprintf(data, sizeof data, "--data-dir=%s", dir);
	snprintf(out, sizeof out, "--out=%s/out", dir);
	const char *argv[] = {"", dbopt, "--quiet", "run", "--suite", "train", "--quick",
			      "--filter", "train_mlp", data, out, NULL};
	struct cli_out o;
	cr_assert_eq(cli_run(&o, argv, NULL), 0);
	cr_expect_eq(o.status, 2, "exit %d: %s", o.status, o.err);
	cr_expect_eq(cli_lines(o.err), 1, "%s", o.err);
	cr_expect(strstr(o.err, "train-images-idx3-ubyte.gz") && strstr(o.err, "truncated"), "%s",
		  o.err);
}
