/* liveness: a 'running' run whose process is gone is shown as aborted by every reader
 * at once, without any write (db/run_live.h). The verdict table, then a real writer
 * killed with SIGKILL and read back through runs, show, report and compare. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_time.h"
#include "../db/run_live.h"
#include "../db/store.h"
#include "../db/store_query.h"
#include "cli_util.h"
#include "san.h"

Test(liveness, verdict_table)
{
	const struct {
		struct ocb_live_facts f;
		enum ocb_live want;
	} t[] = {
		{{.same_host = 0, .boot = 1, .pid_exists = 1, .proc_start = NAN, .run_start = NAN},
		 OCB_LIVE_OTHER_HOST},
		{{.same_host = 1, .boot = 0, .pid_exists = 1, .proc_start = NAN, .run_start = NAN},
		 OCB_LIVE_DEAD},
		{{.same_host = 1, .boot = 1, .pid_exists = 0, .proc_start = NAN, .run_start = NAN},
		 OCB_LIVE_DEAD},
		{{.same_host = 1, .boot = -1, .pid_exists = 0, .proc_start = NAN, .run_start = NAN},
		 OCB_LIVE_DEAD},
		{{.same_host = 1, .boot = 1, .pid_exists = 1, .proc_start = 1000, .run_start = 1002},
		 OCB_LIVE_RUNNING},
		/* the pid was reused by a process that began after the run */
		{{.same_host = 1, .boot = 1, .pid_exists = 1, .proc_start = 2000, .run_start = 1000},
		 OCB_LIVE_DEAD},
		{{.same_host = 1, .boot = -1, .pid_exists = 1, .proc_start = NAN, .run_start = 1000},
		 OCB_LIVE_RUNNING},
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		cr_expect_eq(ocb_live_decide(&t[i].f), t[i].want, "case %zu", i);
}

/* The facts about this very process: alive; under another boot id, or with a start
 * long before this process began (pid reuse), it reads as aborted. */
Test(liveness, facts_of_this_process)
{
	const struct ocb_host_id *self = ocb_host_id_self();
	cr_assert(self->hostname[0]);
	char now[32];
	ocb_utc_now(now, sizeof now);
	int64_t me = getpid();
	cr_expect_str_eq(ocb_live_status("running", me, self->hostname, self->boot_id, now),
			 "running");
	cr_expect_str_eq(ocb_live_status("running", me, self->hostname,
					 "00000000-0000-0000-0000-000000000000", now),
			 self->boot_id[0] ? "aborted" : "running");
	cr_expect_str_eq(ocb_live_status("running", me, self->hostname, self->boot_id,
					 "2000-01-01T00:00:00Z"),
			 "aborted");
	cr_expect_str_eq(ocb_live_status("running", me, "elsewhere.invalid", self->boot_id, now),
			 "running(other host)");
	cr_expect_str_eq(ocb_live_status("complete", 1, "x", "y", now), "complete");
}

/* A writer process begins a run and is killed with SIGKILL: runs, show, report and
 * compare show 'aborted' at once, and the stored row still says 'running' (readers do
 * not write). */
Test(liveness, killed_writer_reads_as_aborted, .timeout = OCB_TIMEOUT(60))
{
	char dir[64], db[128], dbopt[160], out[160];
	cr_assert(cli_tmpdir(dir, sizeof dir));
	snprintf(db, sizeof db, "%s/l.db", dir);
	snprintf(dbopt, sizeof dbopt, "--db=%s", db);
	snprintf(out, sizeof out, "%s/rep", dir);

	struct ocb_store *s = NULL;
	cr_assert_eq(ocb_store_open(db, OCB_STORE_WRITE, &s), OCB_OK, "%s", ocb_lasterr());
	struct ocb_machine m = {.fingerprint = "feedbeef", .hostname = "h", .cores = 1};
	int64_t mid = 0, done = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	struct ocb_run_info ri = {.uuid = "aaaaaaaa-0000-4000-8000-000000000001", .machine_id = mid,
				  .suite = "baseline", .config_json = "{\"quick\":true}"};
	cr_assert_eq(ocb_store_run_begin(s, &ri, &done), OCB_OK);
	cr_assert_eq(ocb_store_run_finish(s, done, "complete"), OCB_OK);
	ocb_store_close(s);

	int ready[2];
	cr_assert_eq(pipe(ready), 0);
	pid_t child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) { /* the writer: a run that stays 'running' until it is killed */
		struct ocb_store *w = NULL;
		struct ocb_run_info wi = {.uuid = "bbbbbbbb-0000-4000-8000-000000000002",
					  .machine_id = mid, .suite = "baseline",
					  .config_json = "{\"quick\":true}"};
		int64_t id = 0;
		if (ocb_store_open(db, OCB_STORE_WRITE, &w) || ocb_store_run_begin(w, &wi, &id))
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	char c;
	cr_assert_eq(read(ready[0], &c, 1), 1, "the writer did not begin its run");
	struct cli_out o;
	const char *runs[] = {"", dbopt, "runs", NULL};
	cr_assert_eq(cli_run(&o, runs, NULL), 0);
	cr_expect(strstr(o.out, "running"), "live writer not shown running: %s", o.out);

	cr_assert_eq(kill(child, SIGKILL), 0);
	int st;
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	cr_assert_eq(cli_run(&o, runs, NULL), 0);
	cr_expect(strstr(o.out, "aborted") && !strstr(o.out, "running"), "runs: %s", o.out);
	const char *show[] = {"", dbopt, "show", "2", NULL};
	cr_assert_eq(cli_run(&o, show, NULL), 0);
	cr_expect(strstr(o.out, "status    aborted"), "show: %s", o.out);
	const char *cmp[] = {"", dbopt, "compare", "1", "2", NULL};
	cr_assert_eq(cli_run(&o, cmp, NULL), 0);
	cr_expect(strstr(o.err, "2 (aborted)"), "compare: %s%s", o.out, o.err);
	const char *rep[] = {"", dbopt, "report", "--run", "2", "--out", out, "--format", "md",
			     NULL};
	cr_assert_eq(cli_run(&o, rep, NULL), 0);
	cr_expect_eq(o.status, 0, "%s", o.err);
	char path[256];
	snprintf(path, sizeof path, "%s/report.md", out);
	size_t len = 0;
	char *md = cli_slurp(path, &len);
	cr_assert_not_null(md);
	cr_expect(strstr(md, "| aborted |"), "report: %s", md);
	free(md);
	/* nothing was written by the readers */
	char stored[32];
	cli_query_text(db, "SELECT status FROM run WHERE id = 2", stored, sizeof stored);
	cr_expect_str_eq(stored, "running");
	/* the SQL function gives the same verdict as ocb_run_load */
	cr_assert_eq(ocb_store_open(db, OCB_STORE_READ, &s), OCB_OK);
	struct ocb_run r;
	cr_assert_eq(ocb_run_load(s, 2, &r), OCB_OK);
	cr_expect_str_eq(r.status, "running");
	cr_expect_str_eq(r.shown, "aborted");
	cr_expect(r.boot_id[0] || !ocb_host_id_self()->boot_id[0], "boot id not stored");
	ocb_store_close(s);
}
