/* report_machines: `report --machines A,B` over a database merged from two machines
 * (the fixture of tests/fixtures/report.sql, and a copy of it given another machine
 * fingerprint, host and CPU, slower results and lower ceilings, merged in with `merge`):
 * one roofline with both machines' ceilings and points, a normalised roofline and one
 * comparison table with a column group per machine. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "san.h"

static void load(const char *path, const char *extra_sql)
{
	size_t len = 0;
	char *sql = cli_slurp("tests/fixtures/report.sql", &len), *err = NULL;
	sqlite3 *db = NULL;
	cr_assert_not_null(sql);
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &err), SQLITE_OK, "%s", err ? err : "?");
	if (extra_sql)
		cr_assert_eq(sqlite3_exec(db, extra_sql, NULL, NULL, &err), SQLITE_OK, "%s",
			     err ? err : "?");
	sqlite3_close(db);
	free(sql);
}

Test(report_machines, merged_two_machines_overlay_and_compare, .timeout = OCB_TIMEOUT(120))
{
	char dir[256], a[512], b[512], out[512], p[700];
	size_t sl = 0;
	cli_tmpdir(dir, sizeof dir);
	snprintf(a, sizeof a, "%s/a.db", dir);
	snprintf(b, sizeof b, "%s/b.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	load(a, NULL);
	load(b, "UPDATE machine SET fingerprint = 'bbbb' || substr(fingerprint, 5), "
		"hostname = 'epyc2', cpu_model = 'AMD EPYC 7B13';"
		"UPDATE run SET uuid = 'f' || substr(uuid, 2);"
		"UPDATE result SET median = median * 1.3, ci_low = ci_low * 1.3, "
		"ci_high = ci_high * 1.3, bound_frac = NULL;"
		"UPDATE ceiling SET value = value * 0.8;");
	struct cli_out *o = calloc(1, sizeof *o);
	const char *merge[] = {"ocbench", "--db", a, "merge", b, NULL};
	cr_assert_eq(cli_run(o, merge, NULL), 0);
	cr_assert_eq(o->status, 0, "merge: %s", o->err);
	const char *rep[] = {"ocbench", "--db", a, "report", "--machines", "vm,epyc2", "--out", out,
			     "--format", "md,html,latex", NULL};
	cr_assert_eq(cli_run(o, rep, NULL), 0);
	cr_assert_eq(o->status, 0, "report: %s", o->err);

	snprintf(p, sizeof p, "%s/report.md", out);
	char *md = cli_slurp(p, &sl);
	cr_assert_not_null(md);
	const char *cmp = strstr(md, "### Machines compared");
	cr_assert_not_null(cmp, "no comparison table");
	cr_assert_not_null(strstr(cmp, "| epyc2 rate | epyc2 % of roof |"), "%.2000s", cmp);
	cr_assert_not_null(strstr(cmp, "| vm rate | vm % of roof |"), "%.2000s", cmp);
	/* epyc2 is 1.3x slower: sgemv m=4096 1 thr 27.8 GB/s on vm, 21.4 on epyc2 */
	cr_assert_not_null(strstr(cmp, "| sgemv openblas | m=4096, 1 thr | GB/s | 21.4 |"),
			   "%.3000s", cmp);
	cr_assert_not_null(strstr(cmp, "AMD EPYC 7B13"), "provenance names both CPUs");
	free(md);
	if (access("/usr/bin/gnuplot", X_OK) == 0) {
		snprintf(p, sizeof p, "%s/roofline.svg", out);
		char *svg = cli_slurp(p, &sl);
		cr_assert_not_null(svg);
		cr_assert_not_null(strstr(svg, "on epyc2"), "epyc2 not in the roofline");
		cr_assert_not_null(strstr(svg, "on vm"), "vm not in the roofline");
		free(svg);
		snprintf(p, sizeof p, "%s/roofline_norm.svg", out);
		svg = cli_slurp(p, &sl);
		cr_assert_not_null(svg, "no normalised roofline");
		cr_assert_not_null(strstr(svg, "thr on epyc2"));
		cr_assert_not_null(strstr(svg, "thr on vm"));
		free(svg);
	}
	snprintf(p, sizeof p, "rm -rf '%s'", dir);
	cr_assert_eq(system(p), 0);
	free(o);
}
