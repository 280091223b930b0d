/* ocbench plan and compress end to end on a tiny random LM checkpoint and a synthetic
 * corpus: a measured-sensitivity plan under a bpw budget and under a byte budget, a
 * size-alone plan of a spec (whose GGUF-style names drive compress of the matching LM),
 * compress writing every stage's checkpoint, and bad input -> exit 2, one line. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../workloads/data_synth.h"
#include "../workloads/model_lm.h"
#include "cli_util.h"
#include "san.h"

static char dir[64], ckpt[128], corpus[128], plan[128], spec[128], db[160];

static void setup(void)
{
	unsigned char *buf = NULL;
	size_t len;
	struct lm_config c;
	struct lm_model *m = NULL;
	cli_tmpdir(dir, sizeof dir);
	snprintf(ckpt, sizeof ckpt, "%s/lm.ckpt", dir);
	snprintf(corpus, sizeof corpus, "%s/text.txt", dir);
	snprintf(plan, sizeof plan, "%s/plan.json", dir);
	snprintf(spec, sizeof spec, "%s/spec.json", dir);
	snprintf(db, sizeof db, "--db=%s/none.db", dir);
	cr_assert_eq(ocb_synth_text(5, 300, &buf, &len), 0);
	FILE *f = fopen(corpus, "wb");
	cr_assert_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
	free(buf);
	lm_config_default(&c);
	c.d_model = 32, c.n_layers = 1, c.n_heads = 2, c.ctx = 32, c.ffn = 96;
	cr_assert_eq(lm_create(&c, 0, 3, &m), 0);
	cr_assert_eq(lm_save(m, ckpt), 0);
	lm_free(m);
	f = fopen(spec, "w");
	fputs("{\"arch\":\"llama\",\"vocab\":256,\"d_model\":32,\"n_layers\":1,\"n_heads\":2,"
	      "\"ffn\":96,\"ctx\":32}", f);
	fclose(f);
}

TestSuite(cli_compress, .init = setup, .timeout = OCB_TIMEOUT(300));

static void run(struct cli_out *o, const char *const *argv, int want)
{
	cr_assert_eq(cli_run(o, argv, NULL), 0);
	cr_assert_eq(o->status, want, "exit %d: %s %s", o->status, o->err, o->out);
}

Test(cli_compress, plan_then_compress)
{
	struct cli_out o;
	const char *p1[] = {"", db, "plan", ckpt, "--budget", "3.5bpw", "--data", corpus,
			    "--out", plan, NULL};
	run(&o, p1, 0);
	cr_expect(strstr(o.out, "measured on 32 calibration windows"), "%s", o.out);
	cJSON *j = NULL;
	size_t n;
	char *txt = cli_slurp(plan, &n);
	cr_assert_not_null(txt);
	j = cJSON_Parse(txt);
	free(txt);
	cr_assert_not_null(j);
	cr_expect_leq(cJSON_GetObjectItem(j, "total_bpw")->valuedouble, 3.5);
	cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "layers")), 8);
	cJSON_Delete(j);

	/* a byte budget: 21504 weights, 64000 bits = 2.98 bpw (2 bits g32 alone: 2.56) */
	const char *p2[] = {"", db, "plan", ckpt, "--budget", "8000", "--data", corpus, "--json",
			    NULL};
	run(&o, p2, 0);
	j = cJSON_Parse(o.out);
	cr_assert_not_null(j, "%s", o.out);
	cr_expect_leq(cJSON_GetObjectItem(j, "total_bits")->valuedouble, 64000);
	cJSON_Delete(j);

	const char *c1[] = {"", "compress", ckpt, "--plan", plan, "--data", corpus, "--quick",
			    "--out", dir, "--block-steps", "3", "--global-steps", "3", NULL};
	run(&o, c1, 0);
	cr_expect(strstr(o.out, "pivot"), "%s", o.out);
	const char *stages[] = {"fp32", "pivot", "block", "global"};
	for (int k = 0; k < 4; k++) {
		char p[192];
		snprintf(p, sizeof p, "%s/compress_%s.ckpt", dir, stages[k]);
		cr_expect_eq(access(p, R_OK), 0, "%s missing", p);
	}
}

Test(cli_compress, spec_plan_drives_the_lm)
{
	struct cli_out o;
	const char *p1[] = {"", db, "plan", spec, "--budget", "3bpw", "--out", plan, NULL};
	run(&o, p1, 0);
	cr_expect(strstr(o.out, "from size alone"), "%s", o.out);
	cr_expect(strstr(o.out, "blk.0.attn_q"), "%s", o.out);
	const char *c1[] = {"", "compress", ckpt, "--plan", plan, "--data", corpus, "--json",
			    "--out", dir, "--block-steps", "0", "--global-steps", "0", NULL};
	run(&o, c1, 0);
	cJSON *j = cJSON_Parse(o.out);
	cr_assert_not_null(j, "%s", o.out);
	cr_expect_eq(cJSON_GetArraySize(j), 2); /* fp32 and pivot; refinement skipped */
	cJSON_Delete(j);
}

Test(cli_compress, bad_input_exit_2)
{
	char badplan[160];
	snprintf(badplan, sizeof badplan, "%s/bad.json", dir);
	FILE *f = fopen(badplan, "w");
	fputs("{\"layers\":[{\"name\":\"layers.0.wq\",\"method\":\"magic\",\"bits\":3,"
	      "\"group\":32}]}", f);
	fclose(f);
	const char *cases[][10] = {
		{"", "plan", ckpt, NULL},
		{"", "plan", ckpt, "--budget", "abc", NULL},
		{"", "plan", spec, "--budget", "0.5bpw", NULL},
		{"", "plan", "/nonexistent.json", "--budget", "3bpw", NULL},
		{"", "compress", ckpt, NULL},
		{"", "compress", ckpt, "--plan", badplan, NULL},
		{"", "compress", ckpt, "--plan", "/nonexistent.json", NULL},
		{"", "compress", spec, "--plan", badplan, NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cli_out o;
		const char *argv[12] = {""};
		argv[1] = db;
		for (int k = 1; k < 10 && cases[i][k]; k++)
			argv[k + 1] = cases[i][k];
		cr_assert_eq(cli_run(&o, argv, NULL), 0);
		cr_expect_eq(o.status, 2, "case %zu: exit %d: %s", i, o.status, o.err);
		cr_expect_eq(cli_lines(o.err), 1, "case %zu: %s", i, o.err);
	}
}

/* The compress suite end to end, --quick, in a temporary database: a tiny LM placed as
 * the quick lm_fp32 artifact, both benches run and store, the report shows the per-stage
 * table and the predicted-vs-measured row of the decode step. */
Test(cli_compress, quick_suite_and_report, .timeout = OCB_TIMEOUT(900))
{
	char out[160], outopt[200], dbq[200], rep[200], lm[220];
	snprintf(out, sizeof out, "%s/out", dir);
	snprintf(outopt, sizeof outopt, "--out=%s", out);
	snprintf(dbq, sizeof dbq, "--db=%s/q.db", dir);
	snprintf(rep, sizeof rep, "--out=%s/rep", dir);
	snprintf(lm, sizeof lm, "%s/lm_fp32_quick.ckpt", out);
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s' '%s'", out, ckpt, lm);
	cr_assert_eq(system(cmd), 0);
	struct cli_out o;
	const char *r1[] = {"", dbq, "--quiet", "run", "--suite", "compress", "--quick", outopt,
			    NULL};
	run(&o, r1, 0);
	const char *r2[] = {"", dbq, "report", rep, "--format", "md", NULL};
	run(&o, r2, 0);
	char md[240];
	size_t n;
	snprintf(md, sizeof md, "%s/rep/report.md", dir);
	char *txt = cli_slurp(md, &n);
	cr_assert_not_null(txt);
	cr_expect(strstr(txt, "Progressive compression of the LM: per stage"), "no stage table");
	cr_expect(strstr(txt, "compress\\_mixed3\\_g128 | pivot"), "no mixed plan row");
	cr_expect(strstr(txt, "| decode\\_pass |"), "no predicted-vs-measured row");
	cr_expect(strstr(txt, "Static analysis: real shapes"), "no static analysis table");
	free(txt);
}
