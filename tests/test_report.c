/* report: a database with baseline + train + quant runs -> every format; escaping of
 * hostile names in gnuplot, HTML, LaTeX and Markdown; best-per-column bold. */
#include <sys/stat.h>

#include "../cli/cli.h"
#include "../report/escape.h"
#include "../report/report.h"
#include "../report/table.h"
#include "report_fixture.h"

static int exists(const char *dir, const char *name)
{
	char p[4200];
	struct stat sb;
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return stat(p, &sb) == 0 && sb.st_size > 0;
}

/* baseline (2 kernels), train (curves + time-to-train), quant accuracy metrics */
static void fill(struct ocb_store *s, const char *evil)
{
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	int64_t r1 = fx_run(s, m, "baseline", "base");
	fx_result(s, r1, "baseline", "sgemm", "{\"n\":512}", 4e-3, 0.01, 15, 1, 2.0 * 512 * 512 * 512,
		  3.0 * 4 * 512 * 512);
	fx_result(s, r1, "baseline", "stream_triad", "{\"n\":1000000}", 2.6e-3, 0.01, 15, 2, 2e6,
		  24e6);
	if (evil)
		fx_result(s, r1, "baseline", evil, "{\"k\":\"<b>x</b>\"}", 1e-3, 0.01, 9, 3, 1e6, 1e6);
	cr_assert_eq(ocb_store_run_finish(s, r1, "complete"), OCB_OK);

	int64_t r2 = fx_run(s, m, "train", NULL);
	for (long step = 0; step < 20; step++) {
		ocb_store_metric(s, r2, "mlp_fashion", step, "train_loss", 2.3 * exp(-0.1 * step), "nats");
		ocb_store_metric(s, r2, "mlp_fashion", step, "wall_time", 0.5 * step, "s");
	}
	for (long ep = 1; ep <= 3; ep++)
		ocb_store_metric(s, r2, "mlp_fashion", ep, "test_accuracy", 0.8 + 0.02 * ep, "1");
	/* a workload without a per-step clock: loss vs time from the mean step time */
	for (long step = 0; step < 10; step++)
		ocb_store_metric(s, r2, "zz_lm", step, "train_loss", 5.5 - 0.3 * step, "nats");
	ocb_store_metric(s, r2, "zz_lm", 1, "test_loss", 3.0, "nats");
	ocb_store_metric(s, r2, "zz_lm", -1, "train_step_time", 2.0, "s"); /* sum of 10 steps */
	ocb_store_metric(s, r2, "zz_lm", -1, "train_steps", 10, "steps");
	ocb_store_metric(s, r2, "mlp_fashion", -1, "train_time", 95.0, "s");
	ocb_store_metric(s, r2, "mlp_fashion", -1, "global_batch_size", 128, "1");
	ocb_store_metric(s, r2, "mlp_fashion", -1, "train_samples", 240000, "1");
	cr_assert_eq(ocb_store_run_finish(s, r2, "complete"), OCB_OK);

	int64_t r3 = fx_run(s, m, "quant", NULL);
	struct { const char *wl; double acc, bpw, bytes; } q[] = {
		{"quant_acc:mlp:fp32:32:-", 0.884, 32, 1e6},
		{"quant_acc:mlp:rtn:4:128", 0.861, 4.16, 1.4e5},
		{"quant_acc:mlp:gptq:4:128", 0.879, 4.16, 1.4e5},
		{"quant_acc:mlp:gptq:3:128", 0.850, 3.16, 1.1e5},
		{"quant_acc:mlp:rtn:4:pc", 0.855, 4.01, 1.3e5},
	};
	for (size_t i = 0; i < 5; i++) {
		ocb_store_metric(s, r3, q[i].wl, -1, "test_accuracy", q[i].acc, "1");
		ocb_store_metric(s, r3, q[i].wl, -1, "effective_bpw", q[i].bpw, "bit");
		ocb_store_metric(s, r3, q[i].wl, -1, "model_bytes", q[i].bytes, "B");
	}
	ocb_store_metric(s, r3, "quant_acc:mlp:fp32:32:-", -1, "calib_rows", 512, "rows");
	ocb_store_metric(s, r3, "quant_acc_check", -1, "mlp_gptq_gain_b4_g128", 1.8, "points");
	cr_assert_eq(ocb_store_run_finish(s, r3, "complete"), OCB_OK);
}

Test(report, all_formats_from_three_suites)
{
	char dir[256], db[300], out[300];
	fx_tmpdir(dir, sizeof dir, "report");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	struct ocb_store *s = fx_open(db);
	fill(s, NULL);
	struct ocb_report_opts o = {.out_dir = out, .version = "0.1.0"};
	struct ocb_report_summary sum;
	cr_assert_eq(ocb_report_write(s, &o, &sum), OCB_OK, "%s", ocb_lasterr());
	ocb_store_close(s);
	cr_assert_geq(sum.ntables, 4); /* results, quant, mlperf summary + detail */
	cr_assert_eq(sum.nresults, 2);
	const char *files[] = {"report.md", "report.tex", "report.json", "index.html",
			       "csv/results_baseline_0.csv", "csv/quant_accuracy_0.csv",
			       "csv/mlperf_summary.csv"};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++)
		cr_assert(exists(out, files[i]), "missing %s", files[i]);
	if (access("/usr/bin/gnuplot", X_OK) == 0) {
		cr_assert_eq(sum.nskipped, 0, "skipped: %s", sum.skipped);
		cr_assert(exists(out, "roofline.png") && exists(out, "roofline.svg"));
		cr_assert(exists(out, "curve_0_step.png") && exists(out, "curve_0_time.svg"));
		cr_assert(exists(out, "curve_0_acc.svg"));
		cr_assert(exists(out, "curve_1_step.svg") && exists(out, "curve_1_time.svg"));
		cr_assert_not(exists(out, "curve_1_acc.svg"));
	}
	char p[400];
	snprintf(p, sizeof p, "%s/report.md", out);
	char *md = fx_slurp(p);
	/* best accuracy (gptq 4b 0.8790 is below fp32 0.8840) and smallest bpw in bold */
	cr_assert_not_null(strstr(md, "**0.8840**"), "%s", md);
	cr_assert_not_null(strstr(md, "**3.160**"));
	cr_assert_null(strstr(md, "**0.8790**"));
	cr_assert_not_null(strstr(md, "| rtn | 4 | per-channel | 0.8550 |"), "%s", md);
	cr_assert_not_null(strstr(md, "| fp32 | 32 | - | **0.8840** |"), "%s", md);
	cr_assert_null(strstr(md, "calib")); /* not a paper column */
	cr_assert_not_null(strstr(md, "| mlp\\_gptq\\_gain\\_b4\\_g128 | 1.8 | yes |"), "%s", md);
	/* time to train in minutes: 95 s -> 1.583 */
	cr_assert_not_null(strstr(md, "1.583"));
	free(md);
	snprintf(p, sizeof p, "%s/report.tex", out);
	char *tex = fx_slurp(p);
	cr_assert_not_null(strstr(tex, "\\textbf{0.8840}"));
	cr_assert_not_null(strstr(tex, "\\toprule"));
	cr_assert_not_null(strstr(tex, "\\bottomrule"));
	free(tex);
	/* report.tex compiles standalone, every tex/<id>.tex in a two-column article, with
	 * no overfull box over 10 pt (tests/latex_check.sh) */
	if (access("/usr/bin/pdflatex", X_OK) == 0) {
		char cmd[700];
		snprintf(cmd, sizeof cmd, "sh tests/latex_check.sh '%s' >'%s/latex.txt' 2>&1", out, out);
		snprintf(p, sizeof p, "%s/latex.txt", out);
		int st = system(cmd);
		char *why = fx_slurp(p);
		cr_assert_eq(st, 0, "LaTeX check failed: %s", why ? why : "?");
		free(why);
	} else {
		/* stderr, not cr_log_warn: a Criterion warning makes the binary exit 1 */
		fprintf(stderr, "[SKIP] pdflatex not installed: the LaTeX compile check is skipped "
			"(apt-get install texlive-latex-base texlive-latex-recommended)\n");
	}
	snprintf(p, sizeof p, "%s/report.json", out);
	char *js = fx_slurp(p);
	cJSON *j = cJSON_Parse(js);
	cr_assert_not_null(j);
	cr_assert(cJSON_IsArray(cJSON_GetObjectItem(j, "tables")));
	cJSON_Delete(j);
	free(js);
	if (!getenv("OCB_KEEP")) fx_rmdir(dir); else printf("kept %s\n", dir);
}

Test(report, hostile_names_are_escaped)
{
	char dir[256], db[300], out[300], owned[300], evil[700];
	fx_tmpdir(dir, sizeof dir, "evil");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	snprintf(owned, sizeof owned, "%s/owned", dir);
	/* The issue's name, aimed at a file in our temp dir, plus backquote and macro. */
	snprintf(evil, sizeof evil, "x\"; system(\"touch %s\"); \"`touch %s`'@", owned, owned);
	struct ocb_store *s = fx_open(db);
	fill(s, evil);
	/* a hostile machine name and label reach the plots too */
	sqlite3_exec(ocb_store_handle(s), "UPDATE machine SET hostname = 'h''; system(\"id\") `id`'",
		     NULL, NULL, NULL);
	struct ocb_report_opts o = {.out_dir = out, .version = "0.1.0"};
	struct ocb_report_summary sum;
	cr_assert_eq(ocb_report_write(s, &o, &sum), OCB_OK, "%s", ocb_lasterr());
	ocb_store_close(s);
	cr_assert_neq(access(owned, F_OK), 0, "gnuplot ran a command from the database");
	if (access("/usr/bin/gnuplot", X_OK) == 0)
		cr_assert_eq(sum.nskipped, 0, "skipped: %s", sum.skipped);
	char p[400];
	snprintf(p, sizeof p, "%s/index.html", out);
	char *html = fx_slurp(p);
	cr_assert_not_null(strstr(html, "x&quot;; system(&quot;touch "), "name not escaped");
	cr_assert_null(strstr(html, "<b>x</b>"));
	cr_assert_not_null(strstr(html, "&lt;b&gt;x&lt;/b&gt;"));
	free(html);
	if (!getenv("OCB_KEEP")) fx_rmdir(dir); else printf("kept %s\n", dir);
}

Test(report, escapers)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	ocb_esc_gnuplot(m, "a'b`c\nd@e");
	fclose(m);
	cr_assert_str_eq(buf, "'a''b''c d(at)e'");
	free(buf);
	m = open_memstream(&buf, &len);
	ocb_esc_latex(m, "50% a_b & {c} $d #e ~ ^ \\");
	fclose(m);
	cr_assert_str_eq(buf, "50\\% a\\_b \\& \\{c\\} \\$d \\#e \\textasciitilde{} "
			      "\\textasciicircum{} \\textbackslash{}");
	free(buf);
	m = open_memstream(&buf, &len);
	ocb_esc_md(m, "a|b*c\nd<e");
	fclose(m);
	cr_assert_str_eq(buf, "a\\|b\\*c d&lt;e");
	free(buf);
	m = open_memstream(&buf, &len);
	ocb_esc_csv(m, "a,\"b\"");
	fclose(m);
	cr_assert_str_eq(buf, "\"a,\"\"b\"\"\"");
	free(buf);
}

Test(report, best_per_column_bold)
{
	struct ocb_table t;
	const char *cols[] = {"method", "ppl", "acc"};
	cr_assert_eq(ocb_table_init(&t, "t1", "T", 3, cols), OCB_OK);
	t.best[1] = OCB_BEST_MIN;
	t.best[2] = OCB_BEST_MAX;
	double ppl[] = {12.5, 6.7, 9.1}, acc[] = {0.81, 0.86, 0.86};
	for (size_t i = 0; i < 3; i++) {
		size_t r;
		cr_assert_eq(ocb_table_add_row(&t, &r), OCB_OK);
		ocb_table_printf(&t, r, 0, "m%zu", i);
		ocb_table_num(&t, r, 1, ppl[i], "%.2f");
		ocb_table_num(&t, r, 2, acc[i], "%.2f");
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	cr_assert_eq(ocb_table_write_md(&t, m), OCB_OK);
	fclose(m);
	cr_assert_not_null(strstr(buf, "| m1 | **6.70** | **0.86** |"), "%s", buf);
	cr_assert_not_null(strstr(buf, "| m2 | 9.10 | **0.86** |"), "%s", buf); /* a tie */
	cr_assert_not_null(strstr(buf, "| m0 | 12.50 | 0.81 |"), "%s", buf);
	free(buf);
	m = open_memstream(&buf, &len);
	cr_assert_eq(ocb_table_write_latex(&t, m), OCB_OK);
	fclose(m);
	cr_assert_not_null(strstr(buf, "m1 & \\textbf{6.70} & \\textbf{0.86} \\\\"), "%s", buf);
	cr_assert_not_null(strstr(buf, "\\begin{tabular}{lrr}"));
	free(buf);
	ocb_table_release(&t);
}

Test(report, two_machines_overlay_and_cli)
{
	char dir[256], db[300], out[300], p[400];
	fx_tmpdir(dir, sizeof dir, "overlay");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	struct ocb_store *s = fx_open(db);
	int64_t ma = fx_machine(s, "hostA", "aaaa1111"), mb = fx_machine(s, "hostB", "bbbb2222");
	int64_t ra = fx_run(s, ma, "baseline", "a"), rb = fx_run(s, mb, "baseline", "b");
	fx_result(s, ra, "baseline", "sgemm", "{}", 4e-3, 0.01, 9, 1, 1.3e8, 3e6);
	fx_result(s, rb, "baseline", "sgemm", "{}", 2e-3, 0.01, 9, 2, 1.3e8, 3e6);
	ocb_store_run_finish(s, ra, "complete");
	ocb_store_run_finish(s, rb, "complete");
	ocb_store_close(s);

	struct ocb_global g = {.db_path = db, .quiet = 1};
	char *argv[] = {"report", "--machine", "hostA,bbbb", "--out", out, "--format", "md,html", NULL};
	cr_assert_eq(cmd_report(&g, 7, argv), 0);
	snprintf(p, sizeof p, "%s/report.md", out);
	char *md = fx_slurp(p);
	/* both machines' rows, with a machine column */
	cr_assert_not_null(strstr(md, "| machine |"), "%s", md);
	cr_assert_not_null(strstr(md, "| hostA |"));
	cr_assert_not_null(strstr(md, "| hostB |"));
	free(md);
	snprintf(p, sizeof p, "%s/report.tex", out);
	cr_assert_neq(access(p, F_OK), 0, "latex written though not asked for");
	if (access("/usr/bin/gnuplot", X_OK) == 0) {
		snprintf(p, sizeof p, "%s/index.html", out);
		char *html = fx_slurp(p);
		cr_assert_not_null(strstr(html, "<svg"), "SVG not embedded");
		cr_assert_not_null(strstr(html, "baseline on hostB"), "legend per machine: %s", out);
		free(html);
	}
	/* the default selection sees both runs too; one run only with --run */
	char *argv2[] = {"report", "--run", "a", "--out", out, "--format", "json", NULL};
	cr_assert_eq(cmd_report(&g, 7, argv2), 0);
	char *bad1[] = {"report", "--format", "pdf", NULL};
	cr_assert_eq(cmd_report(&g, 3, bad1), 2);
	char *bad2[] = {"report", "--machine", "nosuchhost", "--out", out, NULL};
	cr_assert_eq(cmd_report(&g, 5, bad2), 2);
	char *bad3[] = {"report", "--run", "1", "--latest", NULL};
	cr_assert_eq(cmd_report(&g, 4, bad3), 2);
	fx_rmdir(dir);
}

Test(report, empty_database_still_writes)
{
	char dir[256], db[300], out[300], p[400];
	fx_tmpdir(dir, sizeof dir, "empty");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	ocb_store_close(fx_open(db));
	struct ocb_store *s = NULL;
	cr_assert_eq(ocb_store_open(db, OCB_STORE_READ, &s), OCB_OK);
	struct ocb_report_opts o = {.out_dir = out};
	struct ocb_report_summary sum;
	cr_assert_eq(ocb_report_write(s, &o, &sum), OCB_OK, "%s", ocb_lasterr());
	ocb_store_close(s);
	cr_assert_eq(sum.ntables, 0);
	snprintf(p, sizeof p, "%s/index.html", out);
	char *html = fx_slurp(p);
	cr_assert_not_null(strstr(html, "No results"));
	free(html);
	fx_rmdir(dir);
}

/* The x values of the first datablock after the plot titled `title` in a captured
 * gnuplot script; their count in *n, the largest returned. */
static double block_max_x(const char *script, const char *title, int *n)
{
	const char *p = strstr(script, title);
	double mx = -1;
	*n = 0;
	if (!p || !(p = strstr(p, "<< EOD\n")))
		return mx;
	p += 7;
	while (*p && strncmp(p, "EOD", 3)) {
		double xv = strtod(p, NULL);
		mx = xv > mx ? xv : mx;
		(*n)++;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	return mx;
}

/* A stand-in gnuplot in dir that records what it is fed into log (dir/gp.log) and draws
 * nothing, made the report's gnuplot through $OCB_GNUPLOT */
static void fake_gnuplot(const char *dir, char *log, size_t len)
{
	char gp[300];
	snprintf(gp, sizeof gp, "%s/fake-gnuplot", dir);
	snprintf(log, len, "%s/gp.log", dir);
	FILE *f = fopen(gp, "w");
	cr_assert_not_null(f);
	fprintf(f, "#!/bin/sh\n[ \"$1\" = -e ] && exit 0\ncat >> '%s'\nexit 0\n", log);
	fclose(f);
	cr_assert_eq(chmod(gp, 0755), 0);
	setenv("OCB_GNUPLOT", gp, 1);
}

/* Loss vs wall time: train_step_time is the SUM of the steps' time (25 s for 1000
 * steps), so step k sits at k x 25 ms, not k x 25 s; a per-step elapsed_s wins. */
Test(report, loss_vs_time_axis)
{
	char dir[256], db[300], out[300], log[300];
	fx_tmpdir(dir, sizeof dir, "curves");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	fake_gnuplot(dir, log, sizeof log);

	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	int64_t r = fx_run(s, m, "train", NULL);
	cr_assert_eq(ocb_store_begin(s), OCB_OK);
	for (long step = 0; step < 1000; step++)
		ocb_store_metric(s, r, "mlp_sum", step, "train_loss", 2.0 - 1e-3 * step, "nats");
	ocb_store_metric(s, r, "mlp_sum", -1, "train_step_time", 25.0, "s");
	ocb_store_metric(s, r, "mlp_sum", -1, "train_steps", 1000, "steps");
	for (long step = 0; step < 50; step++) {
		ocb_store_metric(s, r, "mlp_wall", step, "train_loss", 2.0 - 1e-2 * step, "nats");
		ocb_store_metric(s, r, "mlp_wall", step, "elapsed_s", 0.1 * (step + 1), "s");
	}
	ocb_store_metric(s, r, "mlp_wall", -1, "train_step_time", 4.0, "s");
	ocb_store_metric(s, r, "mlp_wall", -1, "train_steps", 50, "steps");
	cr_assert_eq(ocb_store_commit(s), OCB_OK);
	ocb_store_run_finish(s, r, "complete");
	struct ocb_report_opts o = {.out_dir = out, .formats = OCB_FMT_JSON};
	cr_assert_eq(ocb_report_write(s, &o, NULL), OCB_OK, "%s", ocb_lasterr());
	ocb_store_close(s);

	char *script = fx_slurp(log);
	int n = 0;
	double mx = block_max_x(script, "mlp_sum: loss vs wall time", &n);
	cr_expect_eq(n, 1000);
	cr_expect(mx > 24.9 && mx < 25.0, "last step at %g s, the training took 25 s", mx);
	mx = block_max_x(script, "mlp_wall: loss vs wall time", &n);
	cr_expect_eq(n, 50);
	cr_expect_float_eq(mx, 5.0, 1e-9, "elapsed_s is the axis: %g", mx);
	free(script);
	fx_rmdir(dir);
}

static int64_t moded_run(struct ocb_store *s, int64_t m, const char *suite, const char *uuid,
			 int quick)
{
	struct ocb_run_info ri = {.uuid = uuid, .machine_id = m, .suite = suite,
				  .ocbench_version = "0.1.0", .git_sha = "c0ffee",
				  .config_json = quick ? "{\"quick\":true}" : "{\"quick\":false}",
				  .seed = 1};
	int64_t id;
	cr_assert_eq(ocb_store_run_begin(s, &ri, &id), OCB_OK, "%s", ocb_lasterr());
	return id;
}

/* The report names the runs it covers (uuid, suite, mode, machine, commit) and refuses
 * a quick baseline next to a full training run unless --allow-mixed (exit 2, one line
 * naming both runs). */
Test(report, states_runs_and_refuses_mixed_modes)
{
	char dir[256], db[300], out[300], p[400];
	fx_tmpdir(dir, sizeof dir, "mixed");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	int64_t q = moded_run(s, m, "baseline", "11111111-0000-4000-8000-000000000001", 1);
	fx_result(s, q, "baseline", "sgemm", "{\"n\":256}", 1e-3, 0.01, 9, 1, 3.4e7, 8e5);
	ocb_store_run_finish(s, q, "complete");
	int64_t f = moded_run(s, m, "train", "22222222-0000-4000-8000-000000000002", 0);
	ocb_store_metric(s, f, "mlp", 0, "train_loss", 2.0, "nats");
	ocb_store_metric(s, f, "mlp", -1, "train_time", 60.0, "s");
	ocb_store_run_finish(s, f, "complete");
	ocb_store_close(s);

	cr_assert_eq(ocb_store_open(db, OCB_STORE_READ, &s), OCB_OK);
	struct ocb_report_opts o = {.out_dir = out, .formats = OCB_FMT_MD};
	cr_assert_eq(ocb_report_write(s, &o, NULL), OCB_EINVAL);
	const char *e = ocb_lasterr();
	cr_expect(strstr(e, "quick runs 1 (11111111)") && strstr(e, "full runs 2 (22222222)") &&
			  strstr(e, "--allow-mixed") && !strchr(e, '\n'),
		  "%s", e);
	snprintf(p, sizeof p, "%s/report.md", out);
	cr_expect_neq(access(p, F_OK), 0, "a refused report wrote %s", p);
	o.allow_mixed = 1;
	cr_assert_eq(ocb_report_write(s, &o, NULL), OCB_OK, "%s", ocb_lasterr());
	ocb_store_close(s);
	char *md = fx_slurp(p);
	cr_expect_not_null(strstr(md, "Runs covered by this report"), "%s", md);
	cr_expect_not_null(strstr(md, "11111111-0000-4000-8000-000000000001"));
	cr_expect_not_null(strstr(md, "| quick |"), "%s", md);
	cr_expect_not_null(strstr(md, "| full |"));
	cr_expect_not_null(strstr(md, "2 run(s) on 1 machine(s) (hostA); commits c0ffee; modes "),
			   "%s", md);
	free(md);

	/* the CLI: exit 2 and one line; --allow-mixed writes it */
	struct ocb_global g = {.db_path = db, .quiet = 1};
	char *argv[] = {"report", "--out", out, "--format", "md", NULL};
	cr_expect_eq(cmd_report(&g, 5, argv), 2);
	char *argv2[] = {"report", "--out", out, "--format", "md", "--allow-mixed", NULL};
	cr_expect_eq(cmd_report(&g, 6, argv2), 0);
	fx_rmdir(dir);
}

#include "../common/ocb_natcmp.h"

Test(report, params_order_by_value)
{
	cr_expect_lt(ocb_natcmp("{\"n\":256}", "{\"n\":2048}"), 0);
	cr_expect_gt(ocb_natcmp("{\"n\":2048}", "{\"n\":256}"), 0);
	cr_expect_lt(ocb_natcmp("{\"k\":-8}", "{\"k\":4}"), 0);
	cr_expect_lt(ocb_natcmp("{\"x\":0.25}", "{\"x\":0.5}"), 0);
	cr_expect_lt(ocb_natcmp("q4_0", "q16_0"), 0);
	cr_expect_lt(ocb_natcmp("{\"m\":4096,\"n\":8}", "{\"m\":4096,\"n\":32}"), 0);
	cr_expect_neq(ocb_natcmp("{\"n\":1.0}", "{\"n\":1}"), 0, "only identical strings tie");
	cr_expect_eq(ocb_natcmp("{\"n\":7}", "{\"n\":7}"), 0);

	/* the report's result table lists n = 256, 512, 2048 in that order */
	char dir[256], db[300], out[300], p[400];
	fx_tmpdir(dir, sizeof dir, "order");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	int64_t r = fx_run(s, m, "baseline", NULL);
	fx_result(s, r, "baseline", "sgemm", "{\"n\":2048}", 1e-1, 0.01, 9, 1, 1.7e10, 5e7);
	fx_result(s, r, "baseline", "sgemm", "{\"n\":256}", 1e-3, 0.01, 9, 2, 3.4e7, 8e5);
	fx_result(s, r, "baseline", "sgemm", "{\"n\":512}", 4e-3, 0.01, 9, 3, 2.7e8, 3e6);
	ocb_store_run_finish(s, r, "complete");
	struct ocb_report_opts o = {.out_dir = out, .formats = OCB_FMT_MD};
	cr_assert_eq(ocb_report_write(s, &o, NULL), OCB_OK, "%s", ocb_lasterr());
	ocb_store_close(s);
	snprintf(p, sizeof p, "%s/report.md", out);
	char *md = fx_slurp(p);
	/* the paper table's columns: n=256, n=512, n=2048 */
	char *a = strstr(md, "n=256,"), *b = strstr(md, "n=512,"), *c = strstr(md, "n=2048,");
	cr_expect(a && b && c && a < b && b < c, "%s", md);
	free(md);
	/* the long form's rows (CSV) likewise */
	o.formats = OCB_FMT_CSV;
	cr_assert_eq(ocb_store_open(db, OCB_STORE_READ, &s), OCB_OK);
	cr_assert_eq(ocb_report_write(s, &o, NULL), OCB_OK, "%s", ocb_lasterr());
	ocb_store_close(s);
	snprintf(p, sizeof p, "%s/csv/results_baseline_0.csv", out);
	md = fx_slurp(p);
	a = strstr(md, "{\"\"n\"\":256}");
	b = strstr(md, "{\"\"n\"\":512}");
	c = strstr(md, "{\"\"n\"\":2048}");
	cr_expect(a && b && c && a < b && b < c, "%s", md);
	free(md);
	fx_rmdir(dir);
}

/* Every point group of a roofline is drawn apart: 12 (suite, roof) groups on one
 * machine, more than the palette's 10 colours (and gnuplot's own 8 line types, which
 * drew two groups of a full run alike), get 12 different (marker, colour) pairs */
Test(report, roofline_groups_drawn_apart)
{
	char dir[256], db[300], out[300], log[300];
	fx_tmpdir(dir, sizeof dir, "roofcol");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	fake_gnuplot(dir, log, sizeof log);

	enum { NSUITE = 12 };
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	for (int i = 0; i < NSUITE; i++) {
		char suite[24];
		snprintf(suite, sizeof suite, "suite%02d", i);
		int64_t r = fx_run(s, m, suite, NULL);
		fx_result(s, r, suite, "kern", "{\"n\":1}", 1e-3 * (i + 1), 0.01, 9, 7 + i, 1e6,
			  1e5 * (i + 1));
		ocb_store_run_finish(s, r, "complete");
	}
	struct ocb_report_opts o = {.out_dir = out, .formats = OCB_FMT_JSON};
	cr_assert_eq(ocb_report_write(s, &o, NULL), OCB_OK, "%s", ocb_lasterr());
	ocb_store_close(s);

	char *script = fx_slurp(log);
	cr_assert_not_null(script);
	const char *p = strstr(script, "Roofline");
	cr_assert_not_null(p, "no roofline plot in the script");
	char styles[NSUITE + 1][48];
	int n = 0;
	const char *key = "with labels hypertext point pt ";
	p = strstr(p, key);
	cr_assert_not_null(p, "no points");
	const char *end = strchr(p, '\n'); /* the one plot command (each terminal repeats it) */
	cr_assert_not_null(end);
	while ((p = strstr(p, key)) && p < end && n <= NSUITE) {
		int pt = 0;
		char rgb[16] = "";
		cr_assert_eq(sscanf(p + strlen(key), "%d ps 1.3 lc rgb '%15[^']'", &pt, rgb), 2,
			     "%.80s", p);
		snprintf(styles[n++], sizeof styles[0], "%d %s", pt, rgb);
		p += strlen(key);
	}
	cr_expect_eq(n, NSUITE, "one point group per suite");
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			cr_expect(strcmp(styles[i], styles[j]), "groups %d and %d both drawn as %s", j,
				  i, styles[i]);
	free(script);
	fx_rmdir(dir);
}
