/* End-to-end: a full disk and a read-only database.
 *  - `run` under RLIMIT_FSIZE (the file size limit: a disk that fills up while the run
 *    writes) exits 3 with one line on stderr; the database passes integrity_check,
 *    keeps the earlier complete run whole, and the interrupted run reads 'failed'.
 *  - A database its user cannot write (another user's file in another user's folder;
 *    run as `nobody` when the test runs as root, since root ignores permissions): every
 *    read command works, every writing command exits 2 with one line, and the file is
 *    left byte-for-byte as it was. */
#include <criterion/criterion.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"
#include "san.h"

static const char small_suite[] =
	"{\"name\":\"small\",\"threads\":[1],\"budget\":0.02,\"passes\":1,\"min_reps\":3,"
	"\"max_reps\":20,\"benches\":[{\"bench\":\"sgemv\",\"cases\":[{\"m\":64,\"n\":64},"
	"{\"m\":128,\"n\":64},{\"m\":64,\"n\":128}]}]}";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

/* 30 sgemv cases of 50..200 samples each: far more than the limit lets through. */
static void write_big_suite(const char *path)
{
	char buf[4096];
	size_t o = (size_t)snprintf(buf, sizeof buf,
				    "{\"name\":\"big\",\"threads\":[1],\"budget\":0.05,\"passes\":1,"
				    "\"min_reps\":50,\"max_reps\":200,\"benches\":[{\"bench\":"
				    "\"sgemv\",\"cases\":[");
	for (int m = 16; m <= 96; m += 16)
		for (int n = 16; n <= 80; n += 16)
			o += (size_t)snprintf(buf + o, sizeof buf - o, "%s{\"m\":%d,\"n\":%d}",
					      buf[o - 1] == '[' ? "" : ",", m, n);
	snprintf(buf + o, sizeof buf - o, "]}]}");
	write_file(path, buf);
}

static long file_size(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

Test(cli_diskfull, run_on_a_full_disk_exits_3_and_loses_nothing, .timeout = OCB_TIMEOUT(300))
{
	char dir[64], db[128], dbopt[160], small[160], big[160], out[160];
	cr_assert(cli_tmpdir(dir, sizeof dir));
	snprintf(db, sizeof db, "%s/full.db", dir);
	snprintf(dbopt, sizeof dbopt, "--db=%s", db);
	snprintf(small, sizeof small, "%s/small.json", dir);
	snprintf(big, sizeof big, "%s/big.json", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	write_file(small, small_suite);
	write_big_suite(big);
	cli_seed_machine(db);

	struct cli_out o;
	const char *first[] = {"", dbopt, "--quiet", "run", "--suite", small, "--quick", "--out",
			       out, NULL};
	cr_assert_eq(cli_run(&o, first, NULL), 0);
	cr_assert_eq(o.status, 0, "first run: exit %d: %s", o.status, o.err);
	long long results1 = cli_query_int(db, "SELECT count(*) FROM result WHERE run_id = 1");
	long long samples1 = cli_query_int(db, "SELECT count(*) FROM sample");
	cr_assert_eq(results1, 3);

	/* The second run in a child whose files may grow 72 KiB past the database's size;
	 * SIGXFSZ ignored (inherited through exec), so writes fail with EFBIG. */
	long limit = file_size(db) + 72 * 1024;
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = {(rlim_t)limit, (rlim_t)limit};
		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(120);
		const char *second[] = {"", dbopt, "--quiet", "run", "--suite", big, "--quick",
					"--out", out, NULL};
		static struct cli_out c;
		if (cli_run(&c, second, NULL) != 0)
			_exit(121);
		fprintf(stderr, "%s", c.err);
		/* exit code, and 64 if stderr is not exactly one "ocbench: run: " line */
		int one_line = cli_lines(c.err) == 1 && strncmp(c.err, "ocbench: run: ", 14) == 0;
		_exit((c.status & 0x3f) | (one_line ? 0 : 64));
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "the limited run died: status %d", st);
	cr_expect_eq(WEXITSTATUS(st) & 0x3f, 3, "limited run: exit %d", WEXITSTATUS(st) & 0x3f);
	cr_expect_eq(WEXITSTATUS(st) & 64, 0, "stderr is not one 'ocbench: run:' line");

	char ok[32], status[32];
	cli_query_text(db, "PRAGMA integrity_check", ok, sizeof ok);
	cr_expect_str_eq(ok, "ok");
	cli_query_text(db, "SELECT status FROM run WHERE id = 1", status, sizeof status);
	cr_expect_str_eq(status, "complete");
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM result WHERE run_id = 1"), results1);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM sample s JOIN result r ON"
				   " r.id = s.result_id WHERE r.run_id = 1"), samples1);
	cli_query_text(db, "SELECT status FROM run WHERE id = 2", status, sizeof status);
	cr_expect_str_eq(status, "failed", "the interrupted run reads '%s'", status);
	cr_expect_lt(cli_query_int(db, "SELECT count(*) FROM result WHERE run_id = 2"), 30,
		     "the limit did not stop the second run");
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM result r WHERE"
				   " n != (SELECT count(*) FROM sample s WHERE s.result_id = r.id)"), 0);
}

/* Drops to `nobody` in this (forked) process when it is root; 0 on success or when not
 * root (permissions already apply), -1 when it cannot. */
static int become_unprivileged(void)
{
	if (geteuid() != 0)
		return 0;
	struct passwd *pw = getpwnam("nobody");
	if (!pw)
		return -1;
	if (setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0)
		return -1;
	return geteuid() == 0 ? -1 : 0;
}

/* Runs argv as the unprivileged user; returns exit code | 64 when stderr is not one line
 * (only checked when want_one_line), 125 when the user cannot be switched to, 124 when
 * that user cannot reach ./ocbench or the database (a checkout under a mode-700 folder,
 * e.g. /root or a chroot whose / is 0700). */
static int run_unprivileged(const char *const *argv, int want_one_line)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (become_unprivileged() != 0)
			_exit(125);
		const char *db = strchr(argv[1], '=') ? strchr(argv[1], '=') + 1 : argv[1];
		if (access("./ocbench", X_OK) != 0 || access(db, R_OK) != 0)
			_exit(124);
		static struct cli_out c;
		if (cli_run(&c, argv, NULL) != 0)
			_exit(126);
		if (c.status != 0)
			fprintf(stderr, "%s %s: exit %d: %s", argv[1], argv[2], c.status, c.err);
		int bad = want_one_line && cli_lines(c.err) != 1;
		_exit((c.status & 0x3f) | (bad ? 64 : 0));
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

Test(cli_diskfull, a_read_only_database_serves_reads_and_refuses_writes, .timeout = OCB_TIMEOUT(300))
{
	char dir[64], db[128], dbopt[160], small[160], out[160], rep[160], other[160];
	cr_assert(cli_tmpdir(dir, sizeof dir));
	snprintf(db, sizeof db, "%s/ro.db", dir);
	snprintf(dbopt, sizeof dbopt, "--db=%s", db);
	snprintf(small, sizeof small, "%s/small.json", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	snprintf(rep, sizeof rep, "%s/report", dir);
	snprintf(other, sizeof other, "%s/other.db", dir);
	write_file(small, small_suite);
	cli_seed_machine(db);
	struct cli_out o;
	const char *run[] = {"", dbopt, "--quiet", "run", "--suite", small, "--quick", "--out",
			     out, NULL};
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(cli_run(&o, run, NULL), 0);
		cr_assert_eq(o.status, 0, "run %d: exit %d: %s", i, o.status, o.err);
	}
	cli_seed_machine(other);

	/* the file and its folder: readable, not writable (root: by nobody; else: by us) */
	cr_assert_eq(mkdir(rep, 0777), 0);
	cr_assert_eq(chmod(rep, 0777), 0);
	cr_assert_eq(chmod(db, 0444), 0);
	cr_assert_eq(chmod(other, 0444), 0);
	cr_assert_eq(chmod(small, 0444), 0);
	cr_assert_eq(chmod(dir, 0555), 0);
	long size0 = file_size(db);
	char sum0[64];
	cli_query_text(db, "SELECT sum(value) FROM sample", sum0, sizeof sum0);

	const char *reads[][12] = {
		{"", dbopt, "runs", NULL},
		{"", dbopt, "machines", NULL},
		{"", dbopt, "show", "1", NULL},
		{"", dbopt, "export", "--format", "json", NULL},
		{"", dbopt, "compare", "1", "2", NULL},
		{"", dbopt, "history", "sgemv:{\"m\":64,\"n\":64}", NULL},
		{"", dbopt, "report", "--format", "md,json", "--out", rep, NULL},
	};
	int rc = run_unprivileged(reads[0], 0);
	if (rc == 125 || rc == 124) {
		chmod(dir, 0700);
		if (rc == 125)
			cr_skip_test("cannot switch to the user 'nobody': read-only case not tested");
		cr_skip_test("the user 'nobody' cannot reach ./ocbench or the test database (a folder "
			     "above is not world-searchable): read-only case not tested");
	}
	for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
		rc = run_unprivileged(reads[i], 0);
		/* compare may find a regression (exit 1) between two runs: that is a result */
		cr_expect(rc == 0 || (rc == 1 && strcmp(reads[i][2], "compare") == 0),
			  "read-only %s: exit %d", reads[i][2], rc);
	}
	const char *writes[][12] = {
		{"", dbopt, "run", "--suite", small, "--quick", "--out", out, NULL},
		{"", dbopt, "import", "tests/fuzz/corpus/gbench_import/min.json", NULL},
		{"", dbopt, "merge", other, NULL},
	};
	for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++) {
		rc = run_unprivileged(writes[i], 1);
		cr_expect_eq(rc, 2, "read-only %s: exit %d (| 64: not one line), want 2",
			     writes[i][2], rc);
	}
	char sum1[64];
	cli_query_text(db, "SELECT sum(value) FROM sample", sum1, sizeof sum1);
	cr_expect_eq(file_size(db), size0);
	cr_expect_str_eq(sum1, sum0);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM run"), 2);
	chmod(dir, 0700);
}
