/* ocbench show RUN: one run's header, its results and its metrics summary. Read-only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../db/store_query.h"
#include "cli.h"
#include "listing.h"
#include "../db/column.h"

static const char usage_text[] =
	"usage: ocbench show RUN\n"
	"\n"
	"Shows one run: its header (machine, suite, label, status, version, seed, command\n"
	"line), a table of its results (median time, 95% CI of the median as +-% of it,\n"
	"repetitions, GFLOP/s and GB/s from the static work model, fraction of the bounding\n"
	"ceiling, status; 'suspect: <why>' for an ok result the harness flagged) and the\n"
	"last value of each metric its workloads reported.\n"
	"\n"
	"RUN is a run id, a uuid or its prefix, a label (the newest run with it) or 'latest'.\n"
	"  --json       one JSON object {run, results, metrics} on stdout (global option)\n";

static const char run_sql[] =
	"SELECT r.id, r.uuid, r.suite, r.label,"
	" ocb_status(r.status, r.pid, r.hostname, r.boot_id, r.started_at) AS status,"
	" r.started_at, r.finished_at,"
	" r.ocbench_version, r.git_sha, r.seed, r.cmdline, r.config_json, r.machine_id,"
	" m.hostname, m.cpu_model, m.fingerprint"
	" FROM run r LEFT JOIN machine m ON m.id = r.machine_id WHERE r.id = ?1";

static const char result_sql[] =
	"SELECT id, suite, bench, params_json, variant, threads, unit, n, min, median, mean,"
	" stddev, mad, ci_low, ci_high, outliers, flops, bytes, check_err, bound, bound_frac,"
	" timing_only, status, error,"
	/* no work model (NULL) or none of that kind (0: a copy does no flops, a trainer's
	 * bytes are not modelled): no rate, shown as "-" */
	" CASE WHEN unit = 's' AND median > 0 AND flops > 0 THEN flops / median / 1e9 END AS gflops,"
	" CASE WHEN unit = 's' AND median > 0 AND bytes > 0 THEN bytes / median / 1e9 END AS gbs, suspect"
	" FROM result WHERE run_id = ?1"
	" ORDER BY suite, bench, params_json COLLATE ocb_params, threads, variant, id";

/* Last value written of each (workload, key), with how many points the key has. */
static const char metric_sql[] =
	"SELECT workload, key, value, unit, step, points FROM (SELECT *, row_number() OVER"
	" (PARTITION BY workload, key ORDER BY id DESC) AS rn, count(*) OVER"
	" (PARTITION BY workload, key) AS points FROM metric WHERE run_id = ?1)"
	" WHERE rn = 1 ORDER BY workload, key";

static int db_fail(struct ocb_store *s)
{
	return cli_fail("show", ocb_seterr(OCB_EDB, "%s: %s", ocb_store_path(s),
					   sqlite3_errmsg(ocb_store_handle(s))));
}

static const char *txt(sqlite3_stmt *st, int c)
{
	const unsigned char *t = sqlite3_column_text(st, c);
	return t ? (const char *)t : "-";
}

/* A number or "-" for unknown. */
static int add_num(struct listing *t, const char *fmt, double v)
{
	if (!isfinite(v))
		return listing_addf(t, "-");
	return listing_addf(t, fmt, v);
}

/* A rate with three significant digits (a small one never rounds to 0.00), "-" when
 * unknown. */
static int add_rate(struct listing *t, double v)
{
	if (!isfinite(v))
		return listing_addf(t, "-");
	return listing_addf(t, v >= 100 ? "%.0f" : v >= 1 ? "%.2f" : "%.3g", v);
}

static void print_header(sqlite3_stmt *st)
{
	printf("run %s  %s\n", txt(st, 0), txt(st, 1));
	printf("  suite     %s\n", txt(st, 2));
	printf("  label     %s\n", txt(st, 3));
	printf("  status    %s\n", txt(st, 4));
	printf("  started   %s\n", txt(st, 5));
	printf("  finished  %s\n", txt(st, 6));
	printf("  machine   %s: %s, %s\n", txt(st, 12), txt(st, 13), txt(st, 14));
	printf("  ocbench   %s (%s)\n", txt(st, 7), txt(st, 8));
	printf("  seed      %llu\n", (unsigned long long)sqlite3_column_int64(st, 9));
	printf("  cmdline   %s\n", txt(st, 10));
}

/* One results-table row from result_sql's current row. */
static int add_result_row(struct listing *t, sqlite3_stmt *st)
{
	char med[32];
	const char *unit = txt(st, 6);
	double m = ocb_col_real(st, 9), lo = ocb_col_real(st, 13), hi = ocb_col_real(st, 14), bf = ocb_col_real(st, 20);
	int rc = listing_addf(t, "%s", txt(st, 2));
	/* Long parameter sets (training hyper-parameters) are cut: --json has them whole. */
	const char *pj = txt(st, 3);
	rc = rc ? rc : strlen(pj) > 60 ? listing_addf(t, "%.57s...", pj) : listing_addf(t, "%s", pj);
	rc = rc ? rc : listing_addf(t, "%s", txt(st, 4));
	rc = rc ? rc : listing_addf(t, "%d", sqlite3_column_int(st, 5));
	if (strcmp(unit, "s") == 0)
		listing_fmt_seconds(m, med, sizeof med);
	else if (isfinite(m))
		snprintf(med, sizeof med, "%.4g %s", m, unit);
	else
		snprintf(med, sizeof med, "-");
	rc = rc ? rc : listing_addf(t, "%s", med);
	rc = rc ? rc : add_num(t, "+-%.1f%%", m > 0 ? 50.0 * (hi - lo) / m : NAN);
	rc = rc ? rc : listing_addf(t, "%lld", (long long)sqlite3_column_int64(st, 7));
	rc = rc ? rc : add_rate(t, ocb_col_real(st, 24));
	rc = rc ? rc : add_rate(t, ocb_col_real(st, 25));
	if (!rc) {
		if (isfinite(bf))
			rc = listing_addf(t, "%.0f%% %s", 100.0 * bf, txt(st, 19));
		else if (sqlite3_column_type(st, 19) != SQLITE_NULL) /* a roof never measured */
			rc = listing_addf(t, "no roof %s", txt(st, 19));
		else
			rc = listing_addf(t, "-");
	}
	if (!rc) {
		const char *status = txt(st, 22);
		if (strcmp(status, "ok") == 0 && sqlite3_column_type(st, 26) != SQLITE_NULL)
			rc = listing_addf(t, "suspect: %s", txt(st, 26)); /* collect/suspect.h */
		else if (sqlite3_column_type(st, 23) != SQLITE_NULL)
			rc = listing_addf(t, "%s: %s", status, txt(st, 23));
		else
			rc = listing_addf(t, "%s%s", status,
					  sqlite3_column_int(st, 21) ? " (timing-only)" : "");
	}
	return rc;
}

int cmd_show(const struct ocb_global *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const char *const rhead[] = {"BENCH",   "PARAMS", "VARIANT", "THR",
					    "MEDIAN",  "CI95",   "N",       "GFLOP/S",
					    "GB/S",    "BOUND",  "STATUS"};
	static const char *const mhead[] = {"WORKLOAD", "KEY", "LAST", "UNIT", "STEP", "POINTS"};
	struct ocb_store *s = NULL;
	sqlite3_stmt *st = NULL;
	cJSON *root = NULL, *arr = NULL;
	struct listing rt, mt;
	int64_t run_id = 0;
	int rc = 0, c, step;

	listing_init(&rt, 11, rhead, 1u << 3 | 1u << 4 | 1u << 5 | 1u << 6 | 1u << 7 | 1u << 8);
	listing_init(&mt, 6, mhead, 1u << 2 | 1u << 4 | 1u << 5);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(usage_text, stdout); goto out;
		default: rc = cli_bad_option("show", argc, argv); goto out;
		}
	}
	if (optind >= argc) {
		rc = cli_usage_error("show", "which run? (an id, uuid prefix, label or 'latest')");
		goto out;
	}
	if (optind + 1 < argc) {
		rc = cli_usage_error("show", "one run at a time, not also '%s'", argv[optind + 1]);
		goto out;
	}
	if ((rc = cli_open_store(g, "show", OCB_STORE_READ, &s)))
		goto out;
	if ((rc = ocb_store_run_resolve(s, argv[optind], &run_id))) {
		rc = cli_fail("show", rc);
		goto out;
	}
	if (g->json && !(root = cJSON_CreateObject())) {
		rc = cli_fail("show", ocb_seterr(OCB_ENOMEM, "out of memory"));
		goto out;
	}

	/* header */
	if (sqlite3_prepare_v2(ocb_store_handle(s), run_sql, -1, &st, NULL) != SQLITE_OK) {
		rc = db_fail(s);
		goto out;
	}
	sqlite3_bind_int64(st, 1, run_id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		rc = db_fail(s);
		goto out;
	}
	if (g->json) {
		cJSON *o = listing_row_json(st);
		if (!o || !cJSON_AddItemToObject(root, "run", o)) {
			cJSON_Delete(o);
			rc = cli_fail("show", ocb_seterr(OCB_ENOMEM, "out of memory"));
			goto out;
		}
	} else {
		print_header(st);
	}
	sqlite3_finalize(st);
	st = NULL;

	/* results, then metrics: same shape, different query and table */
	for (int part = 0; part < 2; part++) {
		struct listing *t = part == 0 ? &rt : &mt;
		if (sqlite3_prepare_v2(ocb_store_handle(s), part == 0 ? result_sql : metric_sql, -1,
				       &st, NULL) != SQLITE_OK) {
			rc = db_fail(s);
			goto out;
		}
		sqlite3_bind_int64(st, 1, run_id);
		if (g->json && (!(arr = cJSON_CreateArray()) ||
				!cJSON_AddItemToObject(root, part == 0 ? "results" : "metrics", arr))) {
			cJSON_Delete(arr);
			arr = NULL;
			rc = cli_fail("show", ocb_seterr(OCB_ENOMEM, "out of memory"));
			goto out;
		}
		while ((step = sqlite3_step(st)) == SQLITE_ROW) {
			int bad;
			if (g->json) {
				cJSON *o = listing_row_json(st);
				bad = !o || !cJSON_AddItemToArray(arr, o);
				if (bad)
					cJSON_Delete(o);
			} else if (part == 0) {
				bad = add_result_row(t, st);
			} else {
				bad = listing_addf(t, "%s", txt(st, 0)) ||
				      listing_addf(t, "%s", txt(st, 1)) ||
				      add_num(t, "%.6g", ocb_col_real(st, 2)) ||
				      listing_addf(t, "%s", txt(st, 3)) ||
				      listing_addf(t, "%s", txt(st, 4)) ||
				      listing_addf(t, "%lld", (long long)sqlite3_column_int64(st, 5));
			}
			if (bad) {
				rc = cli_fail("show", ocb_seterr(OCB_ENOMEM, "out of memory"));
				goto out;
			}
		}
		arr = NULL; /* owned by root */
		if (step != SQLITE_DONE) {
			rc = db_fail(s);
			goto out;
		}
		sqlite3_finalize(st);
		st = NULL;
	}

	if (g->json) {
		char *text = cJSON_Print(root);
		if (!text) {
			rc = cli_fail("show", ocb_seterr(OCB_ENOMEM, "out of memory"));
			goto out;
		}
		puts(text);
		cJSON_free(text);
		goto out;
	}
	printf("\nresults (%zu)\n", rt.nrow);
	if (rt.nrow)
		listing_print(&rt, stdout);
	if (mt.nrow) {
		printf("\nmetrics (last value of each)\n");
		listing_print(&mt, stdout);
	}
out:
	sqlite3_finalize(st);
	cJSON_Delete(root);
	listing_release(&rt);
	listing_release(&mt);
	ocb_store_close(s);
	return rc;
}
