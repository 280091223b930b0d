/* Tests of collect/mllog: every line is ":::MLLOG " + JSON that parses back with cJSON
 * and has the MLPerf keys in the reference logger's layout. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collect/mllog.h"
#include "../common/ocb_error.h"
#include "../common/ocb_time.h"
#include "cli_util.h"

#define PREFIX ":::MLLOG "

/* Reads the lines of f (rewound) into lines[]; returns the count. */
static int read_lines(FILE *f, char lines[][1024], int max)
{
	rewind(f);
	int n = 0;
	while (n < max && fgets(lines[n], 1024, f))
		n++;
	return n;
}

static cJSON *parse_line(const char *line)
{
	cr_assert(strncmp(line, PREFIX, strlen(PREFIX)) == 0, "line '%s'", line);
	cr_assert(line[strlen(line) - 1] == '\n', "one event per line");
	cJSON *j = cJSON_Parse(line + strlen(PREFIX));
	cr_assert_not_null(j, "not JSON: %s", line);
	return j;
}

Test(mllog, lines_parse_back)
{
	FILE *f = tmpfile();
	cr_assert_not_null(f);
	struct ocb_mllog *l = ocb_mllog_from_stream(f);
	cr_assert_not_null(l);
	int64_t before = ocb_epoch_ms();

	cr_assert_eq(OCB_MLLOG(l, OCB_MLLOG_POINT, "submission_benchmark",
			       cJSON_CreateString("dqt \"ternary\""), NULL), 0);
	cr_assert_eq(OCB_MLLOG(l, OCB_MLLOG_START, "run_start", NULL, NULL), 0);
	cJSON *meta = cJSON_CreateObject();
	cJSON_AddNumberToObject(meta, "epoch_num", 3);
	cJSON_AddStringToObject(meta, "file", "caller-given, replaced");
	cr_assert_eq(OCB_MLLOG(l, OCB_MLLOG_POINT, "eval_accuracy", cJSON_CreateNumber(0.8833), meta),
		     0);
	cJSON *st = cJSON_CreateObject();
	cJSON_AddStringToObject(st, "status", "success");
	int line_of_stop = __LINE__ + 1;
	cr_assert_eq(OCB_MLLOG(l, OCB_MLLOG_END, "run_stop", NULL, st), 0);
	cr_assert_eq(OCB_MLLOG(l, OCB_MLLOG_POINT, "seed", cJSON_CreateNumber(42), NULL), 0);

	char lines[8][1024];
	int n = read_lines(f, lines, 8);
	cr_assert_eq(n, 5);
	const char *types[] = {"POINT_IN_TIME", "INTERVAL_START", "POINT_IN_TIME", "INTERVAL_END",
			       "POINT_IN_TIME"};
	const char *keys[] = {"submission_benchmark", "run_start", "eval_accuracy", "run_stop",
			      "seed"};
	for (int i = 0; i < n; i++) {
		cJSON *j = parse_line(lines[i]);
		cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "namespace")), "");
		cJSON *t = cJSON_GetObjectItem(j, "time_ms");
		cr_assert(cJSON_IsNumber(t));
		cr_expect(t->valuedouble >= (double)before && t->valuedouble < (double)before + 600e3);
		cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "event_type")), types[i]);
		cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "key")), keys[i]);
		cr_expect(cJSON_HasObjectItem(j, "value"));
		cJSON *m = cJSON_GetObjectItem(j, "metadata");
		cr_assert(cJSON_IsObject(m));
		cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(m, "file")), __FILE__);
		cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(m, "lineno")));
		/* the reference logger's key order */
		const char *order[] = {"namespace", "time_ms", "event_type", "key", "value", "metadata"};
		int k = 0;
		for (cJSON *c = j->child; c; c = c->next, k++)
			cr_expect_str_eq(c->string, order[k]);
		cr_expect_eq(k, 6);
		cJSON_Delete(j);
	}
	/* as users grep them */
	cr_expect(strstr(lines[0], "{\"namespace\": \"\", \"time_ms\": ") == lines[0] + strlen(PREFIX));
	cr_expect(strstr(lines[3], "\"key\": \"run_stop\""));

	cJSON *j = parse_line(lines[0]);
	cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "value")), "dqt \"ternary\"");
	cJSON_Delete(j);
	j = parse_line(lines[1]);
	cr_expect(cJSON_IsNull(cJSON_GetObjectItem(j, "value")));
	cJSON_Delete(j);
	j = parse_line(lines[2]);
	cr_expect_float_eq(cJSON_GetObjectItem(j, "value")->valuedouble, 0.8833, 1e-12);
	cJSON *m = cJSON_GetObjectItem(j, "metadata");
	cr_expect_eq(cJSON_GetObjectItem(m, "epoch_num")->valueint, 3);
	cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(m, "file")), __FILE__);
	cJSON_Delete(j);
	j = parse_line(lines[3]);
	m = cJSON_GetObjectItem(j, "metadata");
	cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(m, "status")), "success");
	cr_expect_eq(cJSON_GetObjectItem(m, "lineno")->valueint, line_of_stop);
	cJSON_Delete(j);

	ocb_mllog_close(l);
	fclose(f); /* the stream stays the caller's */
}

Test(mllog, file_and_errors)
{
	char path[128];
	int fd = mkstemp(cli_tmpname(path, sizeof path, "ocb_mllog"));
	cr_assert(fd >= 0);
	close(fd);
	struct ocb_mllog *l = NULL;
	cr_assert_eq(ocb_mllog_open(path, &l), 0);
	cr_assert_eq(OCB_MLLOG(l, OCB_MLLOG_POINT, "cache_clear", cJSON_CreateTrue(), NULL), 0);
	/* flushed per line: readable before close */
	FILE *r = fopen(path, "r");
	char line[1024] = "";
	cr_assert(fgets(line, sizeof line, r));
	fclose(r);
	cJSON *j = parse_line(line);
	cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(j, "value")));
	cJSON_Delete(j);
	cr_expect_lt(ocb_mllog_event(l, OCB_MLLOG_POINT, "", NULL, NULL, "f", 1), 0);
	cr_expect_eq(ocb_mllog_event(l, OCB_MLLOG_POINT, "x", NULL, cJSON_CreateArray(), "f", 1),
		     OCB_EINVAL);
	ocb_mllog_close(l);
	unlink(path);

	l = (struct ocb_mllog *)1;
	cr_expect_eq(ocb_mllog_open("/nonexistent-dir/x/mllog.txt", &l), OCB_EPERM);
	cr_expect_null(l);
	cr_expect(strstr(ocb_lasterr(), "/nonexistent-dir/x/mllog.txt"));
	ocb_mllog_close(NULL);
}
