#include "serve.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_stats.h"
#include "../common/ocb_time.h"
#include "host.h"
#include "live_case.h"

struct server {
	const struct ocb_run_opts *o;
	struct ocb_planned *plan;
	size_t np;
	cJSON *sets;                /* what plan[] borrows */
	struct ocb_live_case *live; /* [np] */
	double *setup_s;            /* [np] set-up time of the live case, s */
	double *smp;                /* [OCB_SERVE_MAX_REPS] samples of one request */
	struct ocb_machine m;
	struct ocb_ctx ctx;
	FILE *out;
};

/* Resident set of this process in bytes (/proc/self/statm, 2nd field, in pages); -1
 * when unreadable. */
static double rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size, res;
	int ok = f && fscanf(f, "%ld %ld", &size, &res) == 2;
	if (f)
		fclose(f);
	return ok ? (double)res * (double)sysconf(_SC_PAGESIZE) : -1;
}

static void emit(struct server *s, cJSON *j)
{
	char *t = j ? cJSON_PrintUnformatted(j) : NULL;
	fprintf(s->out, "%s\n", t ? t : "{\"status\":\"error\",\"error\":\"no memory\"}");
	fflush(s->out);
	free(t);
	cJSON_Delete(j);
}

static cJSON *reply(long id, const char *status)
{
	cJSON *j = cJSON_CreateObject();
	if (id >= 0)
		cJSON_AddNumberToObject(j, "id", (double)id);
	cJSON_AddStringToObject(j, "status", status);
	return j;
}

static void emit_error(struct server *s, long id, const char *status, const char *msg)
{
	cJSON *j = reply(id, status);
	cJSON_AddStringToObject(j, "error", msg);
	emit(s, j);
}

/* The first line: every planned case, by id. */
static void emit_cases(struct server *s)
{
	cJSON *j = cJSON_CreateObject(), *a;
	cJSON_AddNumberToObject(j, "serve", OCB_SERVE_VERSION);
	a = cJSON_AddArrayToObject(j, "cases");
	for (size_t i = 0; i < s->np; i++) {
		const struct ocb_planned *p = &s->plan[i];
		cJSON *c = cJSON_CreateObject();
		cJSON_AddNumberToObject(c, "id", (double)i);
		cJSON_AddStringToObject(c, "suite", p->suite);
		cJSON_AddStringToObject(c, "bench", p->bench->name);
		cJSON_AddItemToObject(c, "params", cJSON_Duplicate(p->params, 1));
		cJSON_AddNumberToObject(c, "threads", p->threads);
		cJSON_AddBoolToObject(c, "kernel", p->bench->kind == OCB_KERNEL);
		cJSON_AddItemToArray(a, c);
	}
	emit(s, j);
}

/* Warm-up of a set-up `again`, s: an earlier serving process of the same build already
 * set the case up, checked and timed it, so a short warm-up suffices (it faults code and
 * data in, and its doubling batches still pick the batch size); one call at least. */
#define AGAIN_WARMUP_S 0.02

/* Sets case id up when it is not; `again`: without the check, with a short warm-up (see
 * serve.h). OCB_OK or the failure (a "failed" line sent). */
static int ensure_setup(struct server *s, long id, int again)
{
	struct ocb_live_case *lc = &s->live[id];
	const struct ocb_planned *p = &s->plan[id];
	if (lc->ready)
		return OCB_OK;
	const struct ocb_harness_opts *h = &s->o->harness;
	double slow = h->slow_bench && strcmp(h->slow_bench, p->bench->name) == 0 ? h->slow_frac
										    : 0.0;
	s->ctx.threads = p->threads;
	double t0 = ocb_now_s();
	double warm = again && h->warmup_s > AGAIN_WARMUP_S ? AGAIN_WARMUP_S : h->warmup_s;
	int rc = ocb_live_setup(lc, p->bench, p->full, &s->ctx, warm, slow, again);
	s->setup_s[id] = ocb_now_s() - t0;
	if (rc != OCB_OK)
		emit_error(s, id, "failed", ocb_lasterr());
	return rc;
}

static void do_setup(struct server *s, long id, int again)
{
	if (ensure_setup(s, id, again) != OCB_OK)
		return;
	const struct ocb_live_case *lc = &s->live[id];
	cJSON *j = reply(id, "ok");
	cJSON_AddStringToObject(j, "variant", lc->variant);
	cJSON_AddNumberToObject(j, "per_call_s", lc->per_call_s);
	cJSON_AddNumberToObject(j, "batch", (double)lc->batch);
	cJSON_AddNumberToObject(j, "rss_bytes", rss_bytes());
	cJSON_AddNumberToObject(j, "setup_s", s->setup_s[id]);
	cJSON_AddBoolToObject(j, "checked", !isnan(lc->check_err));
	cJSON_AddNumberToObject(j, "check_s", lc->check_s);
	cJSON_AddNumberToObject(j, "warmup_s", lc->warm_s);
	emit(s, j);
}

static void do_time(struct server *s, long id, long reps, double max_s)
{
	struct ocb_live_case *lc = &s->live[id];
	struct ocb_stats st;
	if (ensure_setup(s, id, 0) != OCB_OK)
		return;
	if (ocb_live_time(lc, reps, max_s, s->smp, &reps) != OCB_OK) {
		emit_error(s, id, "failed", ocb_lasterr());
		ocb_live_release(lc); /* a failing case is not kept */
		return;
	}
	if (ocb_stats_compute(s->smp, (size_t)reps, &st) != OCB_OK) {
		emit_error(s, id, "error", ocb_lasterr());
		return;
	}
	cJSON *j = reply(id, "ok");
	cJSON_AddStringToObject(j, "variant", lc->variant);
	cJSON_AddNumberToObject(j, "n", (double)reps);
	cJSON_AddNumberToObject(j, "min_s", st.min);
	cJSON_AddNumberToObject(j, "median_s", st.median);
	cJSON_AddItemToObject(j, "samples_s", cJSON_CreateDoubleArray(s->smp, (int)reps));
	emit(s, j);
}

/* A whole decimal number in [lo, hi] from word w; 0 when it is one. */
static int parse_whole(const char *w, long lo, long hi, long *v)
{
	char *end;
	if (!w || !*w)
		return -1;
	errno = 0;
	*v = strtol(w, &end, 10);
	return errno || *end || *v < lo || *v > hi ? -1 : 0;
}

/* A positive number of seconds from word w; 0 when it is one. */
static int parse_seconds(const char *w, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(w, &end);
	return errno || *end || !(*v > 0) || *v > 86400 ? -1 : 0;
}

/* One request line; returns 1 on quit. */
static int handle(struct server *s, char *line)
{
	char *save = NULL, *verb = strtok_r(line, " \t\r\n", &save);
	char *a1 = strtok_r(NULL, " \t\r\n", &save), *a2 = strtok_r(NULL, " \t\r\n", &save);
	char *a3 = strtok_r(NULL, " \t\r\n", &save), *extra = strtok_r(NULL, " \t\r\n", &save);
	long id = -1, reps = 0;
	double max_s = 0;
	if (!verb)
		return 0; /* blank line: nothing asked */
	if (strcmp(verb, "quit") == 0 && !a1)
		return 1;
	int takes_reps = strcmp(verb, "time") == 0;
	if (strcmp(verb, "setup") && strcmp(verb, "teardown") && !takes_reps) {
		emit_error(s, -1, "error",
			   "unknown request (setup ID [again], time ID REPS, teardown ID, quit)");
		return 0;
	}
	if (parse_whole(a1, 0, (long)s->np - 1, &id)) {
		char msg[96];
		snprintf(msg, sizeof msg, "%s: wants a case id in 0..%ld", verb, (long)s->np - 1);
		emit_error(s, -1, "error", msg);
		return 0;
	}
	int is_setup = strcmp(verb, "setup") == 0, again = is_setup && a2 && !strcmp(a2, "again");
	if (extra || (takes_reps ? parse_whole(a2, 1, OCB_SERVE_MAX_REPS, &reps) != 0 ||
					   (a3 && parse_seconds(a3, &max_s) != 0)
				 : (a2 && !again) || a3)) {
		emit_error(s, id, "error",
			   takes_reps ? "time: wants ID, REPS in 1..100000 and optionally MAX_S > 0"
			   : is_setup ? "setup: wants ID and optionally 'again'"
				      : "too many words");
		return 0;
	}
	if (is_setup) {
		do_setup(s, id, again);
	} else if (takes_reps) {
		do_time(s, id, reps, max_s);
	} else {
		ocb_live_release(&s->live[id]);
		cJSON *j = reply(id, "ok");
		cJSON_AddNumberToObject(j, "rss_bytes", rss_bytes());
		emit(s, j);
	}
	return 0;
}

int ocb_serve(const struct ocb_run_opts *o, FILE *in, FILE *out)
{
	struct server s = {.o = o, .out = out};
	char *line = NULL;
	size_t cap = 0;
	int rc;
	ocb_host_probe(&s.m);
	s.ctx = (struct ocb_ctx){.threads = o->default_threads, .seed = o->seed,
				 .quick = o->quick, .data_dir = o->data_dir,
				 .out_dir = o->out_dir, .machine = &s.m};
	if ((rc = ocb_runner_plan(o, &s.ctx, &s.plan, &s.np, &s.sets)) != OCB_OK)
		goto out;
	if (s.np == 0) {
		rc = ocb_seterr(OCB_EINVAL, "no case matches the suites and filter given");
		goto out;
	}
	s.live = calloc(s.np, sizeof *s.live);
	s.setup_s = calloc(s.np, sizeof *s.setup_s);
	s.smp = malloc(OCB_SERVE_MAX_REPS * sizeof *s.smp);
	if (!s.live || !s.setup_s || !s.smp) {
		rc = ocb_seterr(OCB_ENOMEM, "serve: %zu cases", s.np);
		goto out;
	}
	emit_cases(&s);
	while (getline(&line, &cap, in) >= 0)
		if (handle(&s, line))
			break;
out:
	for (size_t i = 0; s.live && i < s.np; i++)
		ocb_live_release(&s.live[i]);
	free(line);
	free(s.live);
	free(s.setup_s);
	free(s.smp);
	free(s.plan);
	cJSON_Delete(s.sets);
	return rc;
}
