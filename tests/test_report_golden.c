/* report_golden: the report of one fixed database (tests/fixtures/report.sql, a dump of
 * a real `run --suite baseline,quant,train --quick`) is compared byte for byte with the
 * committed files under tests/fixtures/report-golden/ (Markdown, every CSV, JSON). The
 * golden files were written by the code before the db/ API refactor (issue 9), so this
 * proves the refactor changed no byte of the report. SOURCE_DATE_EPOCH pins the one
 * volatile field ("generated"). To regenerate after a deliberate change:
 *   OCB_GOLDEN_WRITE=1 ./build/ocbench-tests --filter 'report_golden/ *'
 * (without the space). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "san.h"

#define FIXTURE "tests/fixtures/report.sql"
#define GOLDEN "tests/fixtures/report-golden"

/* The dump into a fresh database at path (the test opens SQLite directly to load it). */
static void load_fixture(const char *path)
{
	size_t len = 0;
	char *sql = cli_slurp(FIXTURE, &len);
	cr_assert_not_null(sql, "cannot read %s", FIXTURE);
	sqlite3 *db = NULL;
	char *err = NULL;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
	cr_assert_eq(rc, SQLITE_OK, "loading %s: %s", FIXTURE, err ? err : "?");
	sqlite3_close(db);
	free(sql);
}

/* The files the report wrote that are compared: report.md, report.json, csv/ *.csv
 * (relative names, into names[]; returns how many). */
static int list_outputs(const char *dir, char names[][256], int max)
{
	int n = 0;
	snprintf(names[n++], 256, "report.md");
	snprintf(names[n++], 256, "report.json");
	char p[4200];
	cr_assert_lt(snprintf(p, sizeof p, "%s/csv", dir), (int)sizeof p);
	DIR *d = opendir(p);
	cr_assert_not_null(d, "%s: no csv folder", p);
	struct dirent *e;
	while ((e = readdir(d)) && n < max)
		if (strstr(e->d_name, ".csv") &&
		    snprintf(names[n], 256, "csv/%s", e->d_name) < 256)
			n++;
	closedir(d);
	return n;
}

static void write_golden(const char *from, const char *name, const char *data, size_t len)
{
	char p[4200];
	snprintf(p, sizeof p, "mkdir -p %s/csv", GOLDEN);
	cr_assert_eq(system(p), 0);
	cr_assert_lt(snprintf(p, sizeof p, "%s/%s", GOLDEN, name), (int)sizeof p);
	FILE *f = fopen(p, "wb");
	cr_assert_not_null(f, "%s", p);
	cr_assert_eq(fwrite(data, 1, len, f), len);
	fclose(f);
	(void)from;
}

Test(report_golden, fixed_database_gives_the_committed_report, .timeout = OCB_TIMEOUT(120))
{
	char dir[256], db[512], out[512];
	cli_tmpdir(dir, sizeof dir);
	snprintf(db, sizeof db, "%s/report.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	load_fixture(db);

	struct cli_out *o = calloc(1, sizeof *o);
	const char *argv[] = {"ocbench", "--db", db, "report", "--out", out,
			      "--format", "md,csv,json,latex", NULL};
	const char *env[] = {"SOURCE_DATE_EPOCH=1700000000", NULL};
	cr_assert_eq(cli_run(o, argv, env), 0);
	cr_assert_eq(o->status, 0, "report failed: %s", o->err);

	static char names[64][256];
	int n = list_outputs(out, names, 64);
	cr_assert_gt(n, 3, "too few report files");
	int writing = getenv("OCB_GOLDEN_WRITE") != NULL;
	for (int i = 0; i < n; i++) {
		char p[4200];
		size_t glen = 0, len = 0;
		cr_assert_lt(snprintf(p, sizeof p, "%s/%s", out, names[i]), (int)sizeof p);
		char *got = cli_slurp(p, &len);
		cr_assert_not_null(got, "%s not written", p);
		if (writing)
			write_golden(out, names[i], got, len);
		cr_assert_lt(snprintf(p, sizeof p, "%s/%s", GOLDEN, names[i]), (int)sizeof p);
		char *want = cli_slurp(p, &glen);
		cr_assert_not_null(want, "%s: no golden file (the report wrote a new one?)", p);
		cr_assert(len == glen && memcmp(got, want, len) == 0,
			  "%s differs from %s (got %zu bytes, golden %zu): diff them", names[i], p,
			  len, glen);
		free(got);
		free(want);
	}
	/* and no golden file the report stopped writing */
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "test $(ls %s/csv | wc -l) -eq $(ls %s/csv | wc -l)", GOLDEN, out);
	cr_assert_eq(system(cmd), 0, "the report wrote a different set of CSV files");
	/* the real report's LaTeX: report.tex standalone and each tex/<id>.tex in a
	 * two-column article compile, no overfull box over 10 pt */
	if (access("/usr/bin/pdflatex", X_OK) == 0) {
		snprintf(cmd, sizeof cmd, "sh tests/latex_check.sh '%s' >'%s/latex.txt' 2>&1", out, dir);
		int st = system(cmd);
		snprintf(cmd, sizeof cmd, "%s/latex.txt", dir);
		size_t ll = 0;
		char *why = cli_slurp(cmd, &ll);
		cr_assert_eq(st, 0, "LaTeX check failed:\n%s", why ? why : "?");
		free(why);
	} else {
		/* stderr, not cr_log_warn: a Criterion warning makes the binary exit 1 */
		fprintf(stderr, "[SKIP] pdflatex not installed: the LaTeX compile check is skipped\n");
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	free(o);
}

/* The fixture's HTML page in headless Chromium (tests/html_shots.js over the DevTools
 * protocol) at 1,400 px: a header click sorts, no console error, no outside request, no
 * URL, ids unique. Skipped (with a warning) without chromium or a node with WebSocket. */
Test(report_golden, html_page_in_headless_chromium, .timeout = OCB_TIMEOUT(180))
{
	if (system("command -v chromium >/dev/null 2>&1 && node --experimental-websocket -e "
		   "\"process.exit(typeof WebSocket === 'function' ? 0 : 1)\" >/dev/null 2>&1")) {
		cr_skip_test("chromium, or node >= 20.10 (WebSocket), not installed: the HTML "
			     "page check is skipped");
	}
	char dir[256], db[512], out[512], cmd[2400];
	cli_tmpdir(dir, sizeof dir);
	snprintf(db, sizeof db, "%s/report.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	load_fixture(db);
	struct cli_out *o = calloc(1, sizeof *o);
	const char *argv[] = {"ocbench", "--db", db, "report", "--out", out, "--format", "html", NULL};
	cr_assert_eq(cli_run(o, argv, NULL), 0);
	cr_assert_eq(o->status, 0, "report failed: %s", o->err);
	snprintf(cmd, sizeof cmd, "node --experimental-websocket tests/html_shots.js '%s' '%s/shots' "
		 "k_quant_gemv_6 1 >'%s/shots.txt' 2>&1", out, dir, dir);
	int st = system(cmd);
	snprintf(cmd, sizeof cmd, "%s/shots.txt", dir);
	size_t len = 0;
	char *log = cli_slurp(cmd, &len);
	cr_assert_eq(st, 0, "html_shots failed:\n%s", log ? log : "?");
	cr_assert_not_null(strstr(log, "sorted k_quant_gemv_6 by column 1 -> descending: tq2_0"), "%s", log);
	cr_assert_not_null(strstr(log, "no console errors"), "%s", log);
	free(log);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	free(o);
}
