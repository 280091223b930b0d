/* Concurrency of the store: 4 `ocbench run` processes writing one database at once, for
 * 3 rounds, while a reader makes reports, lists runs and exports: every writer exits 0,
 * no SQLITE_BUSY / "locked" reaches a user, the rows in the database are the sum of what
 * each writer printed, and every result is whole (db/busy.h: busy timeout + retry).
 * And a read-only store sees one snapshot for its life (store.h OCB_STORE_READ).
 * The machine's ceilings are a stand-in row stored first, so no run spends a minute
 * measuring them (a --quick run uses any cached ceiling). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../db/rows.h"
#include "../db/store.h"
#include "cli_util.h"
#include "san.h"

#define WRITERS 4
#define ROUNDS 3
#define CASES 3 /* of the suite below */

static const char suite_json[] =
	"{\"name\":\"conc\",\"threads\":[1],\"budget\":0.02,\"passes\":1,\"min_reps\":3,"
	"\"max_reps\":20,\"benches\":[{\"bench\":\"sgemv\",\"cases\":[{\"m\":64,\"n\":64},"
	"{\"m\":128,\"n\":64},{\"m\":64,\"n\":128}]}]}";

static int said_busy(const char *err)
{
	return strstr(err, "busy") || strstr(err, "locked") || strstr(err, "BUSY");
}

/* A forked writer: exit code = result lines it printed, 90 if it said busy/locked, 100 +
 * its exit code if it failed. */
static pid_t writer(const char *dbopt, const char *suite, const char *out)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	static struct cli_out o;
	const char *argv[] = {"", dbopt, "--quiet", "run", "--suite", suite, "--quick",
			      "--out", out, NULL};
	if (cli_run(&o, argv, NULL) != 0)
		_exit(127);
	if (o.status != 0) {
		fprintf(stderr, "writer: exit %d: %s\n", o.status, o.err);
		_exit(100 + (o.status & 0x1f));
	}
	if (said_busy(o.err)) {
		fprintf(stderr, "writer said: %s\n", o.err);
		_exit(90);
	}
	_exit(cli_lines(o.out));
}

/* A forked reader: report, runs --json and export in turn until `stop` exists; writes
 * "<reads> <failures>" to `tally`. */
static pid_t reader(const char *dbopt, const char *dir, const char *stop, const char *tally)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	static struct cli_out o;
	char rep[200];
	snprintf(rep, sizeof rep, "%s/report", dir);
	const char *cmds[3][10] = {
		{"", dbopt, "report", "--format", "md,json", "--out", rep, "--allow-mixed", NULL},
		{"", dbopt, "runs", "--json", NULL},
		{"", dbopt, "export", "--format", "json", NULL},
	};
	long reads = 0, fails = 0;
	while (access(stop, F_OK) != 0) {
		const char **argv = cmds[reads % 3];
		if (cli_run(&o, argv, NULL) != 0 || o.status != 0 || said_busy(o.err)) {
			fprintf(stderr, "reader: %s: exit %d: %s\n", argv[2], o.status, o.err);
			fails++;
		}
		reads++;
	}
	FILE *f = fopen(tally, "w");
	if (f) {
		fprintf(f, "%ld %ld\n", reads, fails);
		fclose(f);
	}
	_exit(0);
}

Test(concurrency, four_writers_three_rounds_and_a_reader, .timeout = OCB_TIMEOUT(900))
{
	char dir[64], db[128], dbopt[160], suite[160], out[160], stop[160], tally[160];
	cr_assert(cli_tmpdir(dir, sizeof dir));
	snprintf(db, sizeof db, "%s/c.db", dir);
	snprintf(dbopt, sizeof dbopt, "--db=%s", db);
	snprintf(suite, sizeof suite, "%s/conc.json", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	snprintf(stop, sizeof stop, "%s/stop", dir);
	snprintf(tally, sizeof tally, "%s/tally", dir);
	FILE *f = fopen(suite, "w");
	cr_assert(f);
	fputs(suite_json, f);
	fclose(f);
	cli_seed_machine(db);

	/* one run first, so that the reader has a complete run to report */
	int st;
	pid_t w0 = writer(dbopt, suite, out);
	cr_assert_eq(waitpid(w0, &st, 0), w0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == CASES, "first run: status %d", st);
	long printed = CASES;

	pid_t rd = reader(dbopt, dir, stop, tally);
	for (int round = 0; round < ROUNDS; round++) {
		pid_t w[WRITERS];
		for (int i = 0; i < WRITERS; i++)
			w[i] = writer(dbopt, suite, out);
		for (int i = 0; i < WRITERS; i++) {
			cr_assert_eq(waitpid(w[i], &st, 0), w[i]);
			cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == CASES,
				  "round %d writer %d: exit code %d (90: said busy, >= 100: failed)",
				  round, i, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			if (WIFEXITED(st) && WEXITSTATUS(st) < 90)
				printed += WEXITSTATUS(st);
		}
	}
	f = fopen(stop, "w");
	cr_assert(f);
	fclose(f);
	cr_assert_eq(waitpid(rd, &st, 0), rd);
	long reads = -1, fails = -1;
	f = fopen(tally, "r");
	cr_assert(f);
	cr_assert_eq(fscanf(f, "%ld %ld", &reads, &fails), 2);
	fclose(f);
	cr_expect(reads >= 1, "the reader never ran");
	cr_expect_eq(fails, 0, "%ld of %ld reads failed or said busy", fails, reads);

	long runs = 1 + WRITERS * ROUNDS;
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM run WHERE status = 'complete'"), runs);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM run"), runs);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM result"), printed,
		     "rows in the database != result lines the writers printed");
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM result"), runs * CASES);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM result r WHERE"
				   " n != (SELECT count(*) FROM sample s WHERE s.result_id = r.id)"), 0);
	cr_expect_eq(cli_query_int(db, "SELECT count(DISTINCT uuid) FROM run"), runs);
	char ok[32];
	cli_query_text(db, "PRAGMA integrity_check", ok, sizeof ok);
	cr_expect_str_eq(ok, "ok");
	fprintf(stderr, "concurrency: %ld runs, %ld results, reader: %ld reads, %ld failures\n",
		runs, printed, reads, fails);
}

/* Number of runs a store lists. */
static size_t nruns(struct ocb_store *s)
{
	struct ocb_rows r = {0};
	cr_assert_eq(ocb_db_list_runs(s, NULL, NULL, 1000, &r), OCB_OK, "%s", ocb_lasterr());
	size_t n = r.nrow;
	ocb_rows_release(&r);
	return n;
}

static void add_run(struct ocb_store *w, int64_t mid, const char *uuid)
{
	struct ocb_run_info ri = {0};
	int64_t rid;
	ri.uuid = uuid;
	ri.machine_id = mid;
	ri.suite = "snap";
	cr_assert_eq(ocb_store_run_begin(w, &ri, &rid), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_store_run_finish(w, rid, "complete"), OCB_OK, "%s", ocb_lasterr());
}

Test(concurrency, a_reader_sees_one_snapshot)
{
	char dir[64], db[128];
	struct ocb_store *w = NULL, *r = NULL;
	struct ocb_machine m = {0};
	int64_t mid;
	cr_assert(cli_tmpdir(dir, sizeof dir));
	snprintf(db, sizeof db, "%s/snap.db", dir);
	strcpy(m.fingerprint, "5a5a");
	cr_assert_eq(ocb_store_open(db, OCB_STORE_WRITE, &w), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_store_machine(w, &m, &mid), OCB_OK);
	add_run(w, mid, "snap-1");
	cr_assert_eq(ocb_store_open(db, OCB_STORE_READ, &r), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(nruns(r), 1);
	add_run(w, mid, "snap-2"); /* committed by another connection meanwhile */
	cr_expect_eq(nruns(r), 1, "a reader's second query saw a write made after its first");
	ocb_store_close(r);
	cr_assert_eq(ocb_store_open(db, OCB_STORE_READ, &r), OCB_OK, "%s", ocb_lasterr());
	cr_expect_eq(nruns(r), 2, "a new reader does not see the committed run");
	ocb_store_close(r);
	ocb_store_close(w);
}
