/* ocbench inspect end to end: the Llama parameter counts and per-format weight bytes in
 * the table and the JSON, a GGUF file and an LM checkpoint as models, and malformed
 * models (missing, bad JSON, bad spec, truncated/garbage GGUF, bad options) -> exit 2
 * with one line. No database: static analysis only. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../reference/model_lm.h"
#include "cli_util.h"

static void run_ok(struct cli_out *o, const char *const *argv)
{
	cr_assert_eq(cli_run(o, argv, NULL), 0);
	cr_assert_eq(o->status, 0, "exit %d: %s", o->status, o->err);
}

Test(cli_inspect, llama_counts)
{
	char dir[64], db[128];
	struct cli_out o;
	cli_tmpdir(dir, sizeof dir);
	snprintf(db, sizeof db, "--db=%s/none.db", dir);
	const char *a8[] = {"", db, "inspect", "examples/models/llama-3-8b.json", NULL};
	run_ok(&o, a8);
	cr_expect(strstr(o.out, "Llama-3-8B (llama): 8.03 B parameters"), "%s", o.out);
	cr_expect(strstr(o.out, "q4_0       4.5000      4.52 GB"), "%s", o.out);
	const char *a1[] = {"", db, "inspect", "examples/models/llama-3.2-1b.json", "--json",
			    NULL};
	run_ok(&o, a1);
	cJSON *j = cJSON_Parse(o.out);
	cr_assert_not_null(j, "%s", o.out);
	const cJSON *t = cJSON_GetObjectItem(j, "total");
	cr_assert_eq(cJSON_GetObjectItem(t, "params")->valuedouble, 1235814400.0);
	const cJSON *wb = cJSON_GetObjectItem(t, "weight_bytes");
	double mat = 1235814400.0 - (2 * 16 + 1) * 2048;
	cr_assert_eq(cJSON_GetObjectItem(wb, "tq2_0")->valuedouble,
		     mat * 2.0625 / 8 + (2 * 16 + 1) * 2048 * 4.0);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "layers")), 18);
	cJSON_Delete(j);
}

Test(cli_inspect, checkpoint_as_model)
{
	char dir[64], path[160];
	struct cli_out o;
	struct lm_config c;
	struct lm_model *m = NULL;
	cli_tmpdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/lm.ckpt", dir);
	lm_config_default(&c);
	c.n_layers = 2;
	cr_assert_eq(lm_create(&c, 0, 1, &m), 0);
	cr_assert_eq(lm_save(m, path), 0);
	char want[64];
	snprintf(want, sizeof want, "\"params\":\t%zu", lm_param_count(&c));
	lm_free(m);
	const char *a[] = {"", "inspect", path, "--json", "--ctx", "64", NULL};
	run_ok(&o, a);
	cr_expect(strstr(o.out, want), "'%s' not in %s", want, o.out);
}

Test(cli_inspect, malformed_exit_2_one_line)
{
	char dir[64], f[6][160];
	cli_tmpdir(dir, sizeof dir);
	const char *body[] = {"{\"arch\":", "{\"arch\":\"llama\",\"vocab\":-3}", "GGUF",
			      "GGUF\x03\0\0\0\xff\xff\xff\xff\xff\xff\xff\x7f", "[1,2]",
			      "GGUF\x02\0\0\0"};
	size_t blen[] = {8, 27, 4, 16, 5, 8};
	for (int i = 0; i < 6; i++) {
		snprintf(f[i], sizeof f[i], "%s/m%d", dir, i);
		FILE *fp = fopen(f[i], "wb");
		cr_assert_eq(fwrite(body[i], 1, blen[i], fp), blen[i]);
		fclose(fp);
	}
	const char *cases[][6] = {
		{"", "inspect", "/nonexistent/model.json", NULL},
		{"", "inspect", f[0], NULL},
		{"", "inspect", f[1], NULL},
		{"", "inspect", f[2], NULL},
		{"", "inspect", f[3], NULL},
		{"", "inspect", f[4], NULL},
		{"", "inspect", f[5], NULL},
		{"", "inspect", NULL},
		{"", "inspect", "examples/models/lm.json", "--ctx", "0", NULL},
		{"", "inspect", "examples/models/lm.json", "--format", "q9", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cli_out o;
		cr_assert_eq(cli_run(&o, cases[i], NULL), 0);
		cr_expect_eq(o.status, 2, "case %zu: exit %d: %s", i, o.status, o.err);
		cr_expect_eq(cli_lines(o.err), 1, "case %zu: %s", i, o.err);
		cr_expect(strncmp(o.err, "ocbench: inspect: ", 18) == 0, "case %zu: %s", i, o.err);
	}
}
