/* ab_child: result lines of `run --json` parsed into keyed medians, the --filter regex
 * that selects exactly a step's cases, and a child process's stdout and exit code. */
#include <criterion/criterion.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/ab_child.h"
#include "../common/ocb_error.h"

Test(ab_child, parse_result_lines)
{
	struct ocb_ab_obs o;
	/* Keys of params come back canonical (sorted), whatever order the line used. */
	cr_assert_eq(ocb_ab_parse_line("{\"suite\":\"quant\",\"bench\":\"quant_gemv\",\"params\":"
				       "{\"n\":4096,\"k\":4096,\"format\":\"q4_0\"},\"variant\":"
				       "\"avx2\",\"threads\":2,\"status\":\"ok\",\"median_s\":0.0021}",
				       &o),
		     1);
	cr_assert_str_eq(o.unit, "quant/quant_gemv/{\"format\":\"q4_0\",\"k\":4096,\"n\":4096}");
	cr_assert_str_eq(o.key,
			 "quant/quant_gemv/{\"format\":\"q4_0\",\"k\":4096,\"n\":4096}|avx2|2");
	cr_assert_float_eq(o.median, 0.0021, 0);
	free(o.unit);
	free(o.key);
	/* Failed cases, other lines and garbage are not observations. */
	cr_assert_eq(ocb_ab_parse_line("{\"suite\":\"b\",\"bench\":\"x\",\"params\":{},\"variant\":"
				       "\"v\",\"threads\":1,\"status\":\"failed\",\"error\":\"e\"}",
				       &o),
		     0);
	cr_assert_eq(ocb_ab_parse_line("run 1: 3 cases, 3 ok, 0 failed", &o), 0);
	cr_assert_eq(ocb_ab_parse_line("{\"suite\":\"b\"}", &o), 0);
	cr_assert_eq(ocb_ab_parse_line("", &o), 0);
	cr_assert_null(o.unit);
}

Test(ab_child, filter_regex_selects_exactly_the_units)
{
	const char *units[] = {"baseline/sgemm/{\"n\":256}",
			       "quant/quant_gemv/{\"format\":\"q4_0\",\"k\":4096,\"n\":4096}",
			       "x/a.b/{\"s\":\"(|)*+?^$[]\\\\\"}"};
	char *re = ocb_ab_filter_regex(units, 3);
	cr_assert_not_null(re);
	regex_t r;
	cr_assert_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0, "%s", re);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(regexec(&r, units[i], 0, NULL, 0), 0, "%s", units[i]);
	const char *others[] = {"baseline/sgemm/{\"n\":2560}", "baseline/sgemm/{\"n\":25}",
				"xbaseline/sgemm/{\"n\":256}",
				"quant/quant_gemv/{\"format\":\"q4_1\",\"k\":4096,\"n\":4096}",
				"x/aXb/{\"s\":\"(|)*+?^$[]\\\\\"}"};
	for (int i = 0; i < 5; i++)
		cr_assert_neq(regexec(&r, others[i], 0, NULL, 0), 0, "%s", others[i]);
	regfree(&r);
	free(re);
	cr_assert_null(ocb_ab_filter_regex(units, 0));
}

struct lines {
	char buf[256];
	int n;
};

static int collect(void *ctx, const char *line)
{
	struct lines *l = ctx;
	strncat(l->buf, line, sizeof l->buf - strlen(l->buf) - 2);
	strcat(l->buf, ";");
	l->n++;
	return OCB_OK;
}

static int stop_first(void *ctx, const char *line)
{
	(void)line;
	((struct lines *)ctx)->n++;
	return OCB_ERUNTIME;
}

Test(ab_child, child_output_and_status)
{
	char *argv[] = {"/bin/sh", "-c", "echo one; echo two >&2; echo three; exit 3", NULL};
	struct lines l = {"", 0};
	int st;
	cr_assert_eq(ocb_ab_child_run(argv, "/dev/null", collect, &l, &st), OCB_OK);
	cr_assert_str_eq(l.buf, "one;three;");
	cr_assert_eq(st, 3);
	/* A callback error stops reading; the child is still reaped. */
	char *loop[] = {"/bin/sh", "-c", "while :; do echo x; done", NULL};
	struct lines m = {"", 0};
	cr_assert_eq(ocb_ab_child_run(loop, "/dev/null", stop_first, &m, &st), OCB_ERUNTIME);
	cr_assert_eq(m.n, 1);
	/* A missing binary: exit 127 from the child. */
	char *none[] = {"/nonexistent/ocbench", NULL};
	cr_assert_eq(ocb_ab_child_run(none, "/dev/null", collect, &l, &st), OCB_OK);
	cr_assert_eq(st, 127);
}
