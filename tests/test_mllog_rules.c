/* Tests of collect/mllog_rules: a compliant log passes; each MLPerf HPC 3.0 common rule,
 * broken alone, is reported (with a message naming it). Logs are written through the
 * real writer (collect/mllog.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../collect/mllog.h"
#include "../collect/mllog_rules.h"

struct ev { const char *key; const char *value; const char *meta; };

/* A compliant sequence (values and metadata as JSON text). */
static const struct ev good[] = {
	{"submission_benchmark", "\"mlp_fmnist\"", NULL},
	{"submission_division", "\"open\"", NULL},
	{"submission_org", "\"ocbench\"", NULL},
	{"submission_platform", "\"cpu\"", NULL},
	{"submission_status", "\"research\"", NULL},
	{"init_start", NULL, NULL},
	{"cache_clear", "false", NULL},
	{"staging_start", NULL, NULL},
	{"staging_stop", NULL, NULL},
	{"train_samples", "60000", NULL},
	{"eval_samples", "10000", NULL},
	{"init_stop", NULL, NULL},
	{"run_start", NULL, NULL},
	{"block_start", NULL, "{\"first_epoch_num\":1,\"epoch_count\":1}"},
	{"epoch_start", NULL, "{\"epoch_num\":1}"},
	{"epoch_stop", NULL, "{\"epoch_num\":1}"},
	{"eval_start", NULL, "{\"epoch_num\":1}"},
	{"eval_stop", NULL, "{\"epoch_num\":1}"},
	{"eval_accuracy", "0.88", "{\"epoch_num\":1}"},
	{"block_stop", NULL, "{\"first_epoch_num\":1}"},
	{"run_stop", NULL, "{\"status\":\"success\"}"},
};
#define NGOOD (int)(sizeof good / sizeof *good)

/* Writes evs (skipping index `skip`; `swap` >= 0 swaps it with the next) and checks. */
static void check(const struct ev *evs, int n, int skip, int swap, struct ocb_mllog_verdict *v)
{
	FILE *f = tmpfile();
	cr_assert_not_null(f);
	struct ocb_mllog *l = ocb_mllog_from_stream(f);
	struct ev tmp[64];
	memcpy(tmp, evs, (size_t)n * sizeof *evs);
	if (swap >= 0) {
		struct ev t = tmp[swap];
		tmp[swap] = tmp[swap + 1];
		tmp[swap + 1] = t;
	}
	for (int i = 0; i < n; i++) {
		if (i == skip)
			continue;
		cJSON *val = tmp[i].value ? cJSON_Parse(tmp[i].value) : NULL;
		cJSON *meta = tmp[i].meta ? cJSON_Parse(tmp[i].meta) : NULL;
		cr_assert_eq(OCB_MLLOG(l, OCB_MLLOG_POINT, tmp[i].key, val, meta), 0);
	}
	fputs("a line the checker ignores\n", f);
	ocb_mllog_close(l);
	rewind(f);
	cr_assert_eq(ocb_mllog_check_stream(f, v), 0);
	fclose(f);
}

static int mentions(const struct ocb_mllog_verdict *v, const char *what)
{
	for (int i = 0; i < v->nviol && i < OCB_MLLOG_MAXVIOL; i++)
		if (strstr(v->viol[i], what))
			return 1;
	return 0;
}

Test(mllog_rules, compliant_log_passes)
{
	struct ocb_mllog_verdict v;
	check(good, NGOOD, -1, -1, &v);
	cr_expect_eq(v.nviol, 0, "%s", v.viol[0]);
	cr_expect_geq(v.events, NGOOD - 1);
}

Test(mllog_rules, each_required_key_missing_is_reported)
{
	const char *req[] = {"submission_org", "submission_platform", "submission_division",
			     "submission_status", "submission_benchmark", "train_samples",
			     "eval_samples", "init_stop", "run_start", "run_stop", "cache_clear",
			     "init_start"};
	for (size_t r = 0; r < sizeof req / sizeof *req; r++) {
		int at = -1;
		for (int i = 0; i < NGOOD; i++)
			if (!strcmp(good[i].key, req[r]))
				at = i;
		cr_assert_geq(at, 0);
		struct ocb_mllog_verdict v;
		check(good, NGOOD, at, -1, &v);
		cr_expect_gt(v.nviol, 0, "dropping %s went unnoticed", req[r]);
		cr_expect(mentions(&v, req[r]), "no violation names %s (first: %s)", req[r],
			  v.viol[0]);
	}
}

Test(mllog_rules, duplicates_bad_values_and_missing_metadata)
{
	struct ev e[64];
	struct ocb_mllog_verdict v;
	memcpy(e, good, sizeof good);
	e[NGOOD] = (struct ev){"run_start", NULL, NULL}; /* a second run_start */
	check(e, NGOOD + 1, -1, -1, &v);
	cr_expect(mentions(&v, "run_start appears 2 times"), "%s", v.viol[0]);

	memcpy(e, good, sizeof good);
	e[1].value = "\"closedish\"";
	e[4].value = "\"lab\"";
	e[2].value = "\"\"";
	check(e, NGOOD, -1, -1, &v);
	cr_expect(mentions(&v, "submission_division"));
	cr_expect(mentions(&v, "submission_status"));
	cr_expect(mentions(&v, "submission_org is empty"));

	memcpy(e, good, sizeof good);
	e[16].meta = NULL;                     /* eval_start without epoch_num */
	e[13].meta = "{\"first_epoch_num\":1,\"epoch_count\":0}"; /* epoch_count 0 */
	e[19].meta = NULL;                     /* block_stop without first_epoch_num */
	e[20].meta = NULL;                     /* run_stop without status */
	check(e, NGOOD, -1, -1, &v);
	cr_expect(mentions(&v, "eval_start without metadata.epoch_num"));
	cr_expect(mentions(&v, "block_start needs"));
	cr_expect(mentions(&v, "block_stop without"));
	cr_expect(mentions(&v, "run_stop before run_start or without metadata.status"));

	memcpy(e, good, sizeof good);
	e[6].value = NULL; /* cache_clear with value null: still has a value member */
	check(e, NGOOD, -1, -1, &v);
	cr_expect_eq(v.nviol, 0, "%s", v.viol[0]);
}

Test(mllog_rules, order_rules)
{
	struct ocb_mllog_verdict v;
	check(good, NGOOD, -1, 11, &v); /* run_start before init_stop */
	cr_expect(mentions(&v, "run_start before init_stop"), "%s", v.viol[0]);
	check(good, NGOOD, -1, 7, &v);  /* staging_stop before staging_start */
	cr_expect(mentions(&v, "staging_stop before any staging_start"), "%s", v.viol[0]);
	check(good, NGOOD, -1, 12, &v); /* block_start before run_start */
	cr_expect(mentions(&v, "block_start needs"), "%s", v.viol[0]);

	/* no block and no epoch events at all */
	struct ev e[64];
	int n = 0;
	for (int i = 0; i < NGOOD; i++)
		if (strncmp(good[i].key, "block_", 6) && strncmp(good[i].key, "epoch_", 6))
			e[n++] = good[i];
	check(e, n, -1, -1, &v);
	cr_expect(mentions(&v, "neither block_start nor epoch_start"));
	cr_expect(mentions(&v, "neither block_stop nor epoch_stop"));
}

Test(mllog_rules, init_stop_later_than_30_minutes)
{
	FILE *f = tmpfile();
	cr_assert_not_null(f);
	long long t0 = 1700000000000LL, t1 = t0 + 31LL * 60 * 1000;
	fprintf(f, ":::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, \"event_type\": "
		   "\"INTERVAL_START\", \"key\": \"init_start\", \"value\": null, \"metadata\": {}}\n"
		   ":::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, \"event_type\": "
		   "\"INTERVAL_END\", \"key\": \"init_stop\", \"value\": null, \"metadata\": {}}\n"
		   ":::MLLOG not json\n", t0, t1);
	rewind(f);
	struct ocb_mllog_verdict v;
	cr_assert_eq(ocb_mllog_check_stream(f, &v), 0);
	fclose(f);
	cr_expect_eq(v.events, 3);
	cr_expect(mentions(&v, "limit 1800 s"), "%s", v.viol[0]);
	cr_expect(mentions(&v, "line 3: not an MLLOG event"), "%s %s", v.viol[0], v.viol[1]);
}

Test(mllog_rules, missing_file)
{
	struct ocb_mllog_verdict v;
	cr_expect_neq(ocb_mllog_check_file("/nonexistent/mllog.txt", &v), 0);
}
