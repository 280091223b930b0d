/* mllog_rules: MLPerf HPC 3.0 common-rule checker (see mllog_rules.h). */
#include "mllog_rules.h"

#include <cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"

#define PREFIX ":::MLLOG "
#define INIT_LIMIT_MS (30.0 * 60.0 * 1e3)

/* Keys that must appear exactly once, in the order their counters are kept. */
static const char *const once[] = {"submission_org", "submission_platform",
				   "submission_division", "submission_status",
				   "submission_benchmark", "train_samples", "eval_samples",
				   "init_stop", "run_start", "run_stop"};
#define NONCE (sizeof once / sizeof *once)

struct state {
	struct ocb_mllog_verdict *v;
	int line;
	int count[NONCE];
	int cache_clear, init_start, block_start, block_stop, epoch_start, epoch_stop;
	int init_stopped, run_started, staging_started;
	double first_init;
};

static void violate(struct state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void violate(struct state *s, const char *fmt, ...)
{
	struct ocb_mllog_verdict *v = s->v;
	if (v->nviol < OCB_MLLOG_MAXVIOL) {
		va_list ap;
		int n = snprintf(v->viol[v->nviol], sizeof v->viol[0], "line %d: ", s->line);
		va_start(ap, fmt);
		vsnprintf(v->viol[v->nviol] + n, sizeof v->viol[0] - (size_t)n, fmt, ap);
		va_end(ap);
	}
	v->nviol++;
}

static int has_meta(const cJSON *meta, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(meta, k) != NULL;
}

static int str_in(const cJSON *val, const char *const *set, int n)
{
	const char *x = cJSON_GetStringValue(val);
	for (int i = 0; x && i < n; i++)
		if (strcmp(x, set[i]) == 0)
			return 1;
	return 0;
}

/* Value checks of the submission_* keys. */
static void check_submission(struct state *s, const char *key, const cJSON *val)
{
	static const char *const div[] = {"closed", "open"};
	static const char *const st[] = {"cloud", "onprem", "preview", "research"};
	const char *x = cJSON_GetStringValue(val);
	if ((!strcmp(key, "submission_org") || !strcmp(key, "submission_platform")) &&
	    (!x || !*x))
		violate(s, "%s is empty", key);
	if (!strcmp(key, "submission_division") && !str_in(val, div, 2))
		violate(s, "submission_division is not closed|open");
	if (!strcmp(key, "submission_status") && !str_in(val, st, 4))
		violate(s, "submission_status is not cloud|onprem|preview|research");
}

/* The order rules of one event (common.yaml's CHECK and POST code, in file order). */
static void check_event(struct state *s, const char *key, const cJSON *val, const cJSON *meta,
			double t, int has_value)
{
	if (!strcmp(key, "cache_clear")) {
		s->cache_clear++;
		if (!has_value)
			violate(s, "cache_clear without a value");
	} else if (!strcmp(key, "init_start")) {
		s->init_start++;
		if (s->init_stopped || s->run_started)
			violate(s, "init_start after init_stop or run_start");
		if (t < s->first_init)
			s->first_init = t;
	} else if (!strcmp(key, "init_stop")) {
		if (!s->init_start || s->run_started)
			violate(s, "init_stop without init_start, or after run_start");
		else if (t - s->first_init >= INIT_LIMIT_MS)
			violate(s, "init_stop %.0f s after the first init_start (limit 1800 s)",
				(t - s->first_init) / 1e3);
		s->init_stopped = 1;
	} else if (!strcmp(key, "staging_start")) {
		s->staging_started = 1;
	} else if (!strcmp(key, "staging_stop")) {
		if (!s->staging_started)
			violate(s, "staging_stop before any staging_start");
	} else if (!strcmp(key, "run_start")) {
		if (!s->init_stopped)
			violate(s, "run_start before init_stop");
		s->run_started = 1;
	} else if (!strcmp(key, "run_stop")) {
		if (!s->run_started || !has_meta(meta, "status"))
			violate(s, "run_stop before run_start or without metadata.status");
	} else if (!strcmp(key, "block_start")) {
		s->block_start++;
		const cJSON *ec = cJSON_GetObjectItemCaseSensitive(meta, "epoch_count");
		if (!s->run_started || !has_meta(meta, "first_epoch_num") || !cJSON_IsNumber(ec) ||
		    !(ec->valuedouble > 0))
			violate(s, "block_start needs run_start before it and metadata "
				   "epoch_count > 0, first_epoch_num");
	} else if (!strcmp(key, "block_stop")) {
		s->block_stop++;
		if (!has_meta(meta, "first_epoch_num"))
			violate(s, "block_stop without metadata.first_epoch_num");
	} else if (!strcmp(key, "epoch_start") || !strcmp(key, "epoch_stop") ||
		   !strcmp(key, "eval_start") || !strcmp(key, "eval_stop")) {
		s->epoch_start += !strcmp(key, "epoch_start");
		s->epoch_stop += !strcmp(key, "epoch_stop");
		if (!has_meta(meta, "epoch_num"))
			violate(s, "%s without metadata.epoch_num", key);
	}
	(void)val;
}

/* One line: format, counts, order. */
static void check_line(struct state *s, const char *text)
{
	cJSON *j = cJSON_Parse(text);
	const char *need[] = {"namespace", "time_ms", "event_type", "key", "value", "metadata"};
	for (int i = 0; j && i < 6; i++)
		if (!cJSON_HasObjectItem(j, need[i])) {
			violate(s, "no \"%s\" member", need[i]);
			goto out;
		}
	const cJSON *key = cJSON_GetObjectItemCaseSensitive(j, "key");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(j, "metadata");
	const cJSON *tm = cJSON_GetObjectItemCaseSensitive(j, "time_ms");
	if (!j || !cJSON_IsString(key) || !cJSON_IsObject(meta) || !cJSON_IsNumber(tm)) {
		violate(s, "not an MLLOG event (JSON object with string key, numeric time_ms, "
			   "object metadata)");
		goto out;
	}
	const char *k = key->valuestring;
	const cJSON *val = cJSON_GetObjectItemCaseSensitive(j, "value");
	for (size_t i = 0; i < NONCE; i++)
		if (!strcmp(k, once[i]))
			s->count[i]++;
	if (!strncmp(k, "submission_", 11))
		check_submission(s, k, val);
	check_event(s, k, val, meta, tm->valuedouble, 1);
out:
	cJSON_Delete(j);
}

static void check_totals(struct state *s)
{
	s->line = 0;
	for (size_t i = 0; i < NONCE; i++)
		if (s->count[i] != 1)
			violate(s, "%s appears %d times, exactly one required", once[i], s->count[i]);
	if (!s->cache_clear)
		violate(s, "no cache_clear");
	if (!s->init_start)
		violate(s, "no init_start");
	if (!s->block_start && !s->epoch_start)
		violate(s, "neither block_start nor epoch_start");
	if (!s->block_stop && !s->epoch_stop)
		violate(s, "neither block_stop nor epoch_stop");
}

int ocb_mllog_check_stream(FILE *f, struct ocb_mllog_verdict *v)
{
	struct state s = {.v = v, .first_init = 9e99};
	char *buf = NULL;
	size_t cap = 0;
	ssize_t len;
	memset(v, 0, sizeof *v);
	while ((len = getline(&buf, &cap, f)) >= 0) {
		s.line++;
		if (strncmp(buf, PREFIX, strlen(PREFIX)) != 0)
			continue; /* the official checker skips other lines too */
		v->events++;
		check_line(&s, buf + strlen(PREFIX));
	}
	free(buf);
	check_totals(&s);
	return OCB_OK;
}

int ocb_mllog_check_file(const char *path, struct ocb_mllog_verdict *v)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		memset(v, 0, sizeof *v);
		return ocb_seterr(OCB_ENOENT, "%s: %s", path, strerror(errno));
	}
	int rc = ocb_mllog_check_stream(f, v);
	fclose(f);
	return rc;
}
