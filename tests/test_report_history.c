/* report_history: a store with four runs of one suite on one machine, the last one 30%
 * slower in one case: the report's history table lists the covered cases with their
 * runs, first and last median and the change, and the comparison with the run before
 * flags that case slower (the verdict coloured on the HTML page); a store with one run
 * has neither table. */
#include "../report/report.h"
#include "report_fixture.h"
#include "san.h"

Test(report_history, history_and_compare_with_the_run_before, .timeout = OCB_TIMEOUT(120))
{
	char dir[256], db[300], out[300], p[400];
	fx_tmpdir(dir, sizeof dir, "hist");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(out, sizeof out, "%s/rep", dir);
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, "hostA", "aaaa1111");
	for (int k = 0; k < 4; k++) {
		int64_t r = fx_run(s, m, "baseline", NULL);
		double slow = k == 3 ? 1.3 : 1.0;
		fx_result(s, r, "baseline", "sgemm", "{\"n\":512}", 4e-3 * slow, 0.005, 15,
			  (uint64_t)(10 + k), 2.7e8, 3e6);
		fx_result(s, r, "baseline", "sgemv", "{\"m\":1024,\"n\":1024}", 1e-4, 0.005, 15,
			  (uint64_t)(20 + k), 2e6, 4e6);
		cr_assert_eq(ocb_store_run_finish(s, r, "complete"), OCB_OK);
	}
	struct ocb_report_opts o = {.out_dir = out, .version = "0.1.0",
				    .formats = OCB_FMT_MD | OCB_FMT_HTML};
	cr_assert_eq(ocb_report_write(s, &o, NULL), OCB_OK, "%s", ocb_lasterr());
	ocb_store_close(s);
	snprintf(p, sizeof p, "%s/report.md", out);
	char *md = fx_slurp(p);
	const char *h = strstr(md, "### History: median per run, change points");
	cr_assert_not_null(h, "%s", md);
	cr_assert_not_null(strstr(h, "| sgemm ref | n=512, 1 thr | hostA | 4 | "), "%.1500s", h);
	cr_assert_not_null(strstr(h, "| +29.9% |"), "the change first -> last: %.1500s", h);
	const char *c = strstr(md, "### Compare: run 4");
	cr_assert_not_null(c, "%s", md);
	cr_assert_not_null(strstr(c, "n=512, 1 thr |"), "%.1500s", c);
	cr_assert_not_null(strstr(c, "| 4.007 ms | 5.192 ms | 1.296 |"), "%.1500s", c);
	cr_assert_not_null(strstr(c, "| slower |"), "%.1500s", c);
	cr_assert_not_null(strstr(c, "| same |"), "%.1500s", c);
	free(md);
	snprintf(p, sizeof p, "%s/index.html", out);
	char *html = fx_slurp(p);
	cr_assert_not_null(strstr(html, "<td class=\"v-slower\">slower</td>"));
	free(html);
	fx_rmdir(dir);
}
