/* End-to-end: `kill -9` of `ocbench run` in the middle of a run leaves a database that
 * passes PRAGMA integrity_check, keeps the earlier complete run intact, and shows the
 * killed run as 'aborted' after the next write-open (DESIGN.md "The store"). */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"
#include "san.h"

Test(cli_kill, kill_9_mid_run_keeps_the_store_sound, .timeout = OCB_TIMEOUT(240))
{
	char dir[64], db[128], dbopt[160], out[160];
	cr_assert(cli_tmpdir(dir, sizeof dir));
	snprintf(db, sizeof db, "%s/k.db", dir);
	snprintf(dbopt, sizeof dbopt, "--db=%s", db);
	snprintf(out, sizeof out, "%s/out", dir);

	/* Run 1: short and complete. */
	const char *first[] = {"", dbopt, "--quiet", "run", "--suite", "baseline", "--quick",
			       "--filter", "sgemm/\\{\"n\":256", "--threads", "1", "--budget", "0.05",
			       "--out", out, NULL};
	struct cli_out o;
	cr_assert_eq(cli_run(&o, first, NULL), 0);
	cr_assert_eq(o.status, 0, "first run: exit %d: %s", o.status, o.err);
	long long results1 = cli_query_int(db, "SELECT count(*) FROM result WHERE run_id = 1");
	long long samples1 = cli_query_int(db, "SELECT count(*) FROM sample s JOIN result r ON"
					   " r.id = s.result_id WHERE r.run_id = 1");
	cr_assert(results1 >= 1 && samples1 >= 5);

	/* Run 2: long cases; killed once it has stored a result. */
	const char *second[] = {"", dbopt, "--quiet", "run", "--suite", "baseline", "--quick",
				"--budget", "3", "--threads", "1", "--passes", "1", "--out", out,
				NULL};
	int pid = cli_spawn(second);
	cr_assert(pid > 0);
	long long got = 0;
	for (int i = 0; i < 600 && got < 1; i++) {
		usleep(100000);
		got = cli_query_int(db, "SELECT count(*) FROM result WHERE run_id = 2");
	}
	cr_assert(got >= 1, "the second run stored nothing in 60 s");
	usleep(300000); /* well inside the next case's repetitions */
	cr_assert_eq(kill(pid, SIGKILL), 0);
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	char ok[64];
	cli_query_text(db, "PRAGMA integrity_check", ok, sizeof ok);
	cr_expect_str_eq(ok, "ok");
	char status[32];
	cli_query_text(db, "SELECT status FROM run WHERE id = 1", status, sizeof status);
	cr_expect_str_eq(status, "complete");
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM result WHERE run_id = 1"), results1);
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM sample s JOIN result r ON"
				   " r.id = s.result_id WHERE r.run_id = 1"), samples1);
	/* Every stored result of the killed run is whole: its samples are all there. */
	cr_expect_eq(cli_query_int(db, "SELECT count(*) FROM result r WHERE run_id = 2 AND"
				   " n != (SELECT count(*) FROM sample s WHERE s.result_id = r.id)"), 0);

	/* The next write-open marks the dead run aborted. */
	const char *third[] = {"", dbopt, "--quiet", "run", "--suite", "baseline", "--quick",
			       "--filter", "sgemm/\\{\"n\":256", "--threads", "1", "--budget", "0.05",
			       "--out", out, NULL};
	cr_assert_eq(cli_run(&o, third, NULL), 0);
	cr_assert_eq(o.status, 0, "third run: exit %d: %s", o.status, o.err);
	cli_query_text(db, "SELECT status FROM run WHERE id = 2", status, sizeof status);
	cr_expect_str_eq(status, "aborted");
	const char *runs[] = {"", dbopt, "runs", NULL};
	cr_assert_eq(cli_run(&o, runs, NULL), 0);
	cr_expect(strstr(o.out, "aborted"), "runs does not show the aborted run: %s", o.out);
}
