/* Tests of collect/progress: the drawn line, ETA formatting, clearing, disabled bar. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../collect/progress.h"

static size_t slurp(FILE *f, char *buf, size_t len)
{
	fflush(f);
	rewind(f);
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	return n;
}

Test(progress, eta_format)
{
	char b[32];
	cr_expect_str_eq(ocb_progress_eta(0.4, b, sizeof b), "0s");
	cr_expect_str_eq(ocb_progress_eta(45, b, sizeof b), "45s");
	cr_expect_str_eq(ocb_progress_eta(80, b, sizeof b), "1m20s");
	cr_expect_str_eq(ocb_progress_eta(7500, b, sizeof b), "2h05m");
	cr_expect_str_eq(ocb_progress_eta(-1, b, sizeof b), "--");
	cr_expect_str_eq(ocb_progress_eta(1.0 / 0.0, b, sizeof b), "--");
}

Test(progress, draws_and_clears)
{
	FILE *f = tmpfile();
	struct ocb_progress p;
	ocb_progress_init_stream(&p, 40, f, 1, 80);
	ocb_progress_case(&p, "gemv_q4_0", "{\"k\":4096}");
	char buf[2048];
	slurp(f, buf, sizeof buf);
	cr_expect_str_eq(buf, "\r[1/40] gemv_q4_0 {\"k\":4096} ETA --\033[K");
	ocb_progress_case(&p, "gemv_q8_0", NULL);
	slurp(f, buf, sizeof buf);
	cr_expect(strstr(buf, "\r[2/40] gemv_q8_0 ETA ") != NULL, "%s", buf);
	/* 1 case done in ~0 s -> ETA is a number of seconds now, not "--" */
	cr_expect(strstr(buf, "ETA --\033[K\r") != NULL && strstr(buf + 30, "s\033[K"), "%s", buf);
	ocb_progress_finish(&p);
	size_t n = slurp(f, buf, sizeof buf);
	cr_expect(n > 4 && strcmp(buf + n - 4, "\r\033[K") == 0, "finish clears the line");
	ocb_progress_case(&p, "after_finish", NULL);
	cr_expect_eq(slurp(f, buf, sizeof buf), n, "nothing drawn after finish");
	fclose(f);
}

Test(progress, long_params_are_cut)
{
	FILE *f = tmpfile();
	struct ocb_progress p;
	ocb_progress_init_stream(&p, 3, f, 1, 40);
	char params[300];
	memset(params, 'x', sizeof params - 1);
	params[sizeof params - 1] = '\0';
	ocb_progress_case(&p, "bench", params);
	char buf[1024];
	slurp(f, buf, sizeof buf);
	char *end = strstr(buf, "\033[K");
	cr_assert_not_null(end);
	cr_expect_leq(end - buf - 1, 39, "line fits 40 columns: %s", buf);
	cr_expect(strstr(buf, ".. ETA --"), "%s", buf);
	fclose(f);
}

Test(progress, disabled_draws_nothing)
{
	FILE *f = tmpfile();
	struct ocb_progress p;
	ocb_progress_init_stream(&p, 3, f, 0, 80);
	ocb_progress_case(&p, "bench", "{}");
	ocb_progress_clear(&p);
	ocb_progress_finish(&p);
	char buf[64];
	cr_expect_eq(slurp(f, buf, sizeof buf), 0);
	fclose(f);
	/* --quiet, or stderr not a terminal (as under Criterion's redirection) */
	ocb_progress_init(&p, 3, 1);
	cr_expect_eq(p.enabled, 0);
}
