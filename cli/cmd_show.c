/* ocbench show RUN: one run's header, its results and its metrics summary. Read-only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../db/store_query.h"
#include "cli.h"
#include "listing.h"

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

/* Text of column `k` of row i of r, "-" when NULL. */
#define TXT(r, i, k) ocb_rows_text(r, i, k, "-")

static void print_header(const struct ocb_rows *r)
{
	printf("run %s  ", TXT(r, 0, "id"));
	printf("%s\n", TXT(r, 0, "uuid"));
	printf("  suite     %s\n", TXT(r, 0, "suite"));
	printf("  label     %s\n", TXT(r, 0, "label"));
	printf("  status    %s\n", TXT(r, 0, "status"));
	printf("  started   %s\n", TXT(r, 0, "started_at"));
	printf("  finished  %s\n", TXT(r, 0, "finished_at"));
	printf("  machine   %s: ", TXT(r, 0, "machine_id"));
	printf("%s, ", TXT(r, 0, "hostname"));
	printf("%s\n", TXT(r, 0, "cpu_model"));
	printf("  ocbench   %s ", TXT(r, 0, "ocbench_version"));
	printf("(%s)\n", TXT(r, 0, "git_sha"));
	printf("  seed      %llu\n", (unsigned long long)ocb_rows_int(r, 0, "seed"));
	printf("  cmdline   %s\n", TXT(r, 0, "cmdline"));
}

/* The status cell of result row i: suspect reasons of an ok result, the error of a
 * failed one, else the status (timing-only marked). */
static int add_status(struct listing *t, const struct ocb_rows *r, size_t i)
{
	const char *status = TXT(r, i, "status");
	if (strcmp(status, "ok") == 0 && !ocb_rows_is_null(r, i, "suspect"))
		return listing_addf(t, "suspect: %s", TXT(r, i, "suspect")); /* collect/suspect.h */
	if (!ocb_rows_is_null(r, i, "error"))
		return listing_addf(t, "%s: %s", status, TXT(r, i, "error"));
	return listing_addf(t, "%s%s", status,
			    ocb_rows_int(r, i, "timing_only") ? " (timing-only)" : "");
}

/* One results-table row from result row i. */
static int add_result_row(struct listing *t, const struct ocb_rows *r, size_t i)
{
	char med[32];
	const char *unit = TXT(r, i, "unit");
	double m = ocb_rows_real(r, i, "median"), lo = ocb_rows_real(r, i, "ci_low");
	double hi = ocb_rows_real(r, i, "ci_high"), bf = ocb_rows_real(r, i, "bound_frac");
	int rc = listing_addf(t, "%s", TXT(r, i, "bench"));
	/* Long parameter sets (training hyper-parameters) are cut: --json has them whole. */
	const char *pj = TXT(r, i, "params_json");
	rc = rc ? rc : strlen(pj) > 60 ? listing_addf(t, "%.57s...", pj) : listing_addf(t, "%s", pj);
	rc = rc ? rc : listing_addf(t, "%s", TXT(r, i, "variant"));
	rc = rc ? rc : listing_addf(t, "%d", (int)ocb_rows_int(r, i, "threads"));
	if (strcmp(unit, "s") == 0)
		listing_fmt_seconds(m, med, sizeof med);
	else if (isfinite(m))
		snprintf(med, sizeof med, "%.4g %s", m, unit);
	else
		snprintf(med, sizeof med, "-");
	rc = rc ? rc : listing_addf(t, "%s", med);
	rc = rc ? rc : add_num(t, "+-%.1f%%", m > 0 ? 50.0 * (hi - lo) / m : NAN);
	rc = rc ? rc : listing_addf(t, "%lld", (long long)ocb_rows_int(r, i, "n"));
	rc = rc ? rc : add_rate(t, ocb_rows_real(r, i, "gflops"));
	rc = rc ? rc : add_rate(t, ocb_rows_real(r, i, "gbs"));
	if (!rc) {
		if (isfinite(bf))
			rc = listing_addf(t, "%.0f%% %s", 100.0 * bf, TXT(r, i, "bound"));
		else if (!ocb_rows_is_null(r, i, "bound")) /* a roof never measured */
			rc = listing_addf(t, "no roof %s", TXT(r, i, "bound"));
		else
			rc = listing_addf(t, "-");
	}
	return rc ? rc : add_status(t, r, i);
}

static int add_metric_row(struct listing *t, const struct ocb_rows *r, size_t i)
{
	return listing_addf(t, "%s", TXT(r, i, "workload")) ||
	       listing_addf(t, "%s", TXT(r, i, "key")) ||
	       add_num(t, "%.6g", ocb_rows_real(r, i, "value")) ||
	       listing_addf(t, "%s", TXT(r, i, "unit")) ||
	       listing_addf(t, "%s", TXT(r, i, "step")) ||
	       listing_addf(t, "%lld", (long long)ocb_rows_int(r, i, "points"));
}

/* {run, results, metrics} as indented JSON on stdout. */
static int print_json(const struct ocb_rows *run, const struct ocb_rows *res,
		      const struct ocb_rows *met)
{
	cJSON *root = cJSON_CreateObject(), *o = NULL, *ra = NULL, *ma = NULL;
	char *text = NULL;
	int rc = OCB_ENOMEM;
	if (!root || !(o = listing_row_json(run, 0)) || !cJSON_AddItemToObject(root, "run", o)) {
		cJSON_Delete(o);
		goto out;
	}
	if (!(ra = cJSON_AddArrayToObject(root, "results")) || listing_rows_json(res, ra) ||
	    !(ma = cJSON_AddArrayToObject(root, "metrics")) || listing_rows_json(met, ma) ||
	    !(text = cJSON_Print(root)))
		goto out;
	puts(text);
	rc = 0;
out:
	cJSON_free(text);
	cJSON_Delete(root);
	return rc ? cli_fail("show", ocb_seterr(OCB_ENOMEM, "out of memory")) : 0;
}

/* The run's header, results table and metrics table on stdout. */
static int print_text(const struct ocb_rows *run, const struct ocb_rows *res,
		      const struct ocb_rows *met)
{
	static const char *const rhead[] = {"BENCH",   "PARAMS", "VARIANT", "THR",
					    "MEDIAN",  "CI95",   "N",       "GFLOP/S",
					    "GB/S",    "BOUND",  "STATUS"};
	static const char *const mhead[] = {"WORKLOAD", "KEY", "LAST", "UNIT", "STEP", "POINTS"};
	struct listing rt, mt;
	int rc = 0;
	listing_init(&rt, 11, rhead, 1u << 3 | 1u << 4 | 1u << 5 | 1u << 6 | 1u << 7 | 1u << 8);
	listing_init(&mt, 6, mhead, 1u << 2 | 1u << 4 | 1u << 5);
	for (size_t i = 0; !rc && i < res->nrow; i++)
		rc = add_result_row(&rt, res, i);
	for (size_t i = 0; !rc && i < met->nrow; i++)
		rc = add_metric_row(&mt, met, i);
	if (rc) {
		rc = cli_fail("show", ocb_seterr(OCB_ENOMEM, "out of memory"));
		goto out;
	}
	print_header(run);
	printf("\nresults (%zu)\n", rt.nrow);
	if (rt.nrow)
		listing_print(&rt, stdout);
	if (mt.nrow) {
		printf("\nmetrics (last value of each)\n");
		listing_print(&mt, stdout);
	}
out:
	listing_release(&rt);
	listing_release(&mt);
	return rc;
}

int cmd_show(const struct ocb_global *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct ocb_store *s = NULL;
	struct ocb_rows run = {0}, res = {0}, met = {0};
	int64_t run_id = 0;
	int rc = 0, c;

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
	if ((rc = ocb_store_run_resolve(s, argv[optind], &run_id)) ||
	    (rc = ocb_db_show_run(s, run_id, &run)) || (rc = ocb_db_show_results(s, run_id, &res)) ||
	    (rc = ocb_db_show_metrics(s, run_id, &met)) ||
	    (!run.nrow && (rc = ocb_seterr(OCB_ENOENT, "no run %lld", (long long)run_id)))) {
		rc = cli_fail("show", rc);
		goto out;
	}
	rc = g->json ? print_json(&run, &res, &met) : print_text(&run, &res, &met);
out:
	ocb_rows_release(&run);
	ocb_rows_release(&res);
	ocb_rows_release(&met);
	ocb_store_close(s);
	return rc;
}
