/* serve (`run --serve`, the long-lived child of ab): bad requests get one error line
 * and the child goes on; a case set up once and timed twice gives two consistent
 * replies; a request may cap its time. In-process over memory streams. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/ab_child.h"
#include "../collect/serve.h"
#include "../common/ocb_error.h"

/* Serves `requests` over baseline's sgemm n=256 at 1 thread; the reply lines parsed
 * into out[] (at most max); returns how many. */
static int serve_lines(const char *requests, cJSON **out, int max)
{
	struct ocb_suite_def defs[16];
	struct ocb_run_opts o;
	regex_t re;
	int nd = 0, n = 0;
	char *text = NULL;
	size_t len = 0;
	memset(&o, 0, sizeof o);
	cr_assert_eq(ocb_suite_defs_resolve("baseline", defs, 16, &nd), OCB_OK);
	cr_assert_eq(regcomp(&re, "^baseline/sgemm/\\{\"n\":256\\}$", REG_EXTENDED | REG_NOSUB), 0);
	o.suites[0] = defs[0].name;
	o.defs[0] = &defs[0];
	o.nsuites = 1;
	o.filter = &re;
	o.seed = 1;
	o.threads[0] = 1;
	o.nthreads = 1;
	o.default_threads = 1;
	o.out_dir = "/tmp";
	ocb_harness_defaults(&o.harness);
	o.harness.warmup_s = 0.01;
	FILE *in = fmemopen((void *)requests, strlen(requests), "r");
	FILE *w = open_memstream(&text, &len);
	cr_assert(in && w);
	cr_assert_eq(ocb_serve(&o, in, w), OCB_OK, "%s", ocb_lasterr());
	fclose(in);
	fclose(w);
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l && n < max;
	     l = strtok_r(NULL, "\n", &save)) {
		out[n] = cJSON_Parse(l);
		cr_assert_not_null(out[n], "not JSON: %s", l);
		n++;
	}
	free(text);
	regfree(&re);
	for (int i = 0; i < nd; i++)
		ocb_suite_def_release(&defs[i]);
	return n;
}

static const char *status(const cJSON *j)
{
	const cJSON *s = cJSON_GetObjectItem(j, "status");
	return cJSON_IsString(s) ? s->valuestring : "";
}

static double num(const cJSON *j, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(j, k);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

Test(serve, lists_the_planned_cases_first)
{
	cJSON *l[4];
	int n = serve_lines("quit\n", l, 4);
	cr_assert_eq(n, 1);
	cr_assert_eq(num(l[0], "serve"), OCB_SERVE_VERSION);
	cJSON *cases = cJSON_GetObjectItem(l[0], "cases");
	cr_assert_eq(cJSON_GetArraySize(cases), 1);
	cJSON *c = cJSON_GetArrayItem(cases, 0);
	cr_assert_eq(num(c, "id"), 0);
	cr_assert_eq(num(c, "threads"), 1);
	cr_assert_str_eq(cJSON_GetObjectItem(c, "bench")->valuestring, "sgemm");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(c, "kernel")));
	cJSON_Delete(l[0]);
}

Test(serve, bad_requests_get_an_error_line_and_serving_goes_on)
{
	static const char *const bad[] = {
		"bogus", "time", "time 0", "time 1 3", "time -1 3", "time 0 0", "time 0 100001",
		"time 0 3 -1", "time 0 3 0.1 extra", "time x 3", "setup 0 1", "setup 0 again x",
		"setup again", "teardown", "quit now",
	};
	char req[512] = "";
	size_t nb = sizeof bad / sizeof *bad;
	for (size_t i = 0; i < nb; i++) {
		strcat(req, bad[i]);
		strcat(req, "\n");
	}
	strcat(req, "\ntime 0 2\nquit\ntime 0 2\n"); /* a blank line asks nothing; after quit, nothing */
	cJSON *l[32];
	int n = serve_lines(req, l, 32);
	cr_assert_eq(n, 1 + (int)nb + 1, "%d lines", n);
	for (size_t i = 0; i < nb; i++) {
		cr_assert_str_eq(status(l[1 + i]), "error", "'%s' -> %s", bad[i],
				 cJSON_PrintUnformatted(l[1 + i]));
		cr_assert(cJSON_IsString(cJSON_GetObjectItem(l[1 + i], "error")));
	}
	/* a well-formed request after all of them is served (set up on demand) */
	cr_assert_str_eq(status(l[n - 1]), "ok");
	cr_assert_eq(num(l[n - 1], "n"), 2);
	for (int i = 0; i < n; i++)
		cJSON_Delete(l[i]);
}

Test(serve, a_case_timed_twice_gives_consistent_replies)
{
	cJSON *l[8];
	int n = serve_lines("setup 0\ntime 0 5\ntime 0 5\nteardown 0\ntime 0 1 0.5\nquit\n", l, 8);
	cr_assert_eq(n, 6);
	cJSON *su = l[1], *t[2] = {l[2], l[3]};
	cr_assert_str_eq(status(su), "ok");
	cr_assert_gt(num(su, "per_call_s"), 0);
	cr_assert_geq(num(su, "batch"), 1);
	cr_assert_gt(num(su, "rss_bytes"), 0);
	const char *variant = cJSON_GetObjectItem(su, "variant")->valuestring;
	for (int k = 0; k < 2; k++) {
		cr_assert_str_eq(status(t[k]), "ok");
		cr_assert_str_eq(cJSON_GetObjectItem(t[k], "variant")->valuestring, variant);
		cr_assert_eq(num(t[k], "n"), 5);
		cJSON *s = cJSON_GetObjectItem(t[k], "samples_s"), *x;
		cr_assert_eq(cJSON_GetArraySize(s), 5);
		double lo = INFINITY;
		cJSON_ArrayForEach(x, s) {
			cr_assert_gt(x->valuedouble, 0);
			lo = x->valuedouble < lo ? x->valuedouble : lo;
		}
		cr_assert_eq(num(t[k], "min_s"), lo); /* the min is one of the samples */
		cr_assert_leq(num(t[k], "min_s"), num(t[k], "median_s"));
	}
	/* the same set-up state timed twice: the two fastest samples are the same kernel on
	 * the same data (a factor of 10 apart would be a wrong batch or unit, not noise) */
	double r = num(t[1], "min_s") / num(t[0], "min_s");
	cr_assert(r > 0.1 && r < 10, "min %g then %g", num(t[0], "min_s"), num(t[1], "min_s"));
	cr_assert_str_eq(status(l[4]), "ok"); /* teardown */
	cr_assert_str_eq(status(l[5]), "ok"); /* timed again after teardown: set up anew */
	cr_assert_eq(num(l[5], "n"), 1);
	for (int i = 0; i < n; i++)
		cJSON_Delete(l[i]);
}

Test(serve, proc_pipes_round_trip_and_a_child_that_exits_at_once)
{
	struct ocb_ab_proc p;
	char *cat[] = {"/bin/cat", NULL}, *f[] = {"/bin/false", NULL};
	int st;
	signal(SIGPIPE, SIG_IGN); /* as ab does: a child gone is an EIO, not our death */
	cr_assert_eq(ocb_ab_proc_open(cat, NULL, &p), OCB_OK);
	cr_assert_eq(ocb_ab_proc_send(&p, "setup 3"), OCB_OK);
	cr_assert_eq(ocb_ab_proc_recv(&p), OCB_OK);
	cr_assert_str_eq(p.line, "setup 3");
	ocb_ab_proc_close(&p, &st); /* cat may echo "quit" into a closed pipe: 1 or SIGPIPE */
	cr_assert(st == 0 || st == 1 || st == 128 + 13, "exit %d", st);
	cr_assert_null(p.to); /* closed: closing again is harmless */
	ocb_ab_proc_close(&p, &st);
	cr_assert_eq(st, -1);
	/* an older build refusing --serve exits before its first line: recv says so */
	cr_assert_eq(ocb_ab_proc_open(f, NULL, &p), OCB_OK);
	cr_assert_eq(ocb_ab_proc_recv(&p), OCB_EIO);
	ocb_ab_proc_close(&p, &st);
	cr_assert_eq(st, 1);
}

/* `setup ID again` (ab's re-set-ups after a restart): set up and warmed up without the
 * check against the reference; a plain set-up checks. Both can be timed. */
Test(serve, setup_again_skips_the_check)
{
	cJSON *l[8];
	int n = serve_lines("setup 0\nteardown 0\nsetup 0 again\ntime 0 2\nquit\n", l, 8);
	cr_assert_eq(n, 5);
	cr_assert_str_eq(status(l[1]), "ok");
	cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(l[1], "checked")), "%s",
		  cJSON_PrintUnformatted(l[1]));
	cr_assert_str_eq(status(l[3]), "ok");
	cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(l[3], "checked")), "%s",
		  cJSON_PrintUnformatted(l[3]));
	cr_assert_eq(num(l[3], "check_s"), 0);
	cr_assert_gt(num(l[3], "per_call_s"), 0);
	cr_assert_geq(num(l[3], "batch"), 1);
	cr_assert_str_eq(status(l[4]), "ok");
	cr_assert_eq(num(l[4], "n"), 2);
	for (int i = 0; i < n; i++)
		cJSON_Delete(l[i]);
}
