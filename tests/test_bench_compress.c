/* The compress suite's benches driven directly (as the runner does): decode_pass's work
 * model equals what the step reads, its quick case runs and checks; the compress
 * workload on a tiny LM placed as the quick lm_fp32 artifact emits every stage's metrics
 * with consistent acceptance and writes the stage checkpoints. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collect/bench.h"
#include "../common/ocb_error.h"
#include "../workloads/decode_pass.h"
#include "../workloads/model_lm.h"
#include "cli_util.h"
#include "san.h"

extern const struct ocb_bench ocb_bench_decode_pass;
extern const struct ocb_bench ocb_bench_compress;

struct rec {
	char workload[64], key[32];
	long step;
	double v;
};
static struct rec recs[256];
static int nrec;

static int put(void *ctx, const char *workload, long step, const char *key, double value,
	       const char *unit)
{
	(void)ctx, (void)unit;
	if (nrec < 256) {
		snprintf(recs[nrec].workload, sizeof recs[nrec].workload, "%s", workload);
		snprintf(recs[nrec].key, sizeof recs[nrec].key, "%s", key);
		recs[nrec].step = step;
		recs[nrec++].v = value;
	}
	return 0;
}

static double get(const char *key, long step)
{
	for (int i = 0; i < nrec; i++)
		if (recs[i].step == step && strcmp(recs[i].key, key) == 0)
			return recs[i].v;
	return NAN;
}

Test(bench_compress, decode_pass_quick_case)
{
	struct ocb_ctx ctx = {.threads = 1, .seed = 3, .quick = 1};
	cJSON *cases = ocb_bench_decode_pass.cases(&ctx);
	cr_assert_eq(cJSON_GetArraySize(cases), 1);
	const cJSON *p = cJSON_GetArrayItem(cases, 0);
	struct ocb_work w;
	cr_assert_eq(ocb_bench_decode_pass.work(p, &w), OCB_OK, "%s", ocb_lasterr());
	void *st = NULL;
	cr_assert_eq(ocb_bench_decode_pass.setup(p, &ctx, &st), OCB_OK, "%s", ocb_lasterr());
	double err;
	cr_assert_eq(ocb_bench_decode_pass.check(st, &err), OCB_OK);
	cr_assert_eq(ocb_bench_decode_pass.run(st), OCB_OK);
	cr_assert_eq(w.bytes, decode_pass_bytes(st)); /* struct dp_state starts with the pass */
	cr_assert_gt(w.flops, 2.0 * 1 * (2048.0 * 2048 * 2 + 2048.0 * 512 * 2 + 3 * 2048.0 * 8192));
	cr_assert_str_eq(w.compute, "ops_int8");
	ocb_bench_decode_pass.teardown(st);
	cJSON_Delete(cases);
	cJSON *bad = cJSON_Parse("{\"model\":\"llama-3.2-1b\",\"format\":\"q9\"}");
	cr_assert_eq(ocb_bench_decode_pass.work(bad, &w), OCB_EINVAL);
	cJSON_Delete(bad);
}

Test(bench_compress, workload_on_a_tiny_lm, .timeout = OCB_TIMEOUT(600))
{
	char dir[128], path[256];
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb-bcomp")));
	snprintf(path, sizeof path, "%s/lm_fp32_quick.ckpt", dir);
	struct lm_config c;
	struct lm_model *m = NULL;
	lm_config_default(&c);
	c.d_model = 32, c.n_layers = 1, c.n_heads = 2, c.ctx = 32, c.ffn = 96;
	cr_assert_eq(lm_create(&c, 0, 5, &m), OCB_OK);
	cr_assert_eq(lm_save(m, path), OCB_OK);
	lm_free(m);
	struct ocb_ctx ctx = {.threads = 1, .seed = 2, .quick = 1, .out_dir = dir,
			      .metrics = {.put = put}};
	cJSON *cases = ocb_bench_compress.cases(&ctx);
	cr_assert_eq(cJSON_GetArraySize(cases), 2);
	for (int i = 0; i < 2; i++) {
		void *st = NULL;
		nrec = 0;
		cr_assert_eq(ocb_bench_compress.setup(cJSON_GetArrayItem(cases, i), &ctx, &st),
			     OCB_OK, "%s", ocb_lasterr());
		cr_assert_eq(ocb_bench_compress.workload(st, &ctx), OCB_OK, "%s", ocb_lasterr());
		ocb_bench_compress.teardown(st);
		double best = get("val_ppl", 1);
		cr_assert(isfinite(get("val_ppl", 0)) && isfinite(best));
		cr_assert_eq(get("accepted", 1), 1);
		for (long k = 2; k <= 3; k++) {
			double v = get("val_ppl", k);
			cr_assert_eq(get("accepted", k), v < best, "stage %ld", k);
			if (v < best)
				best = v;
			cr_assert_eq(get("bpw", k), get("bpw", 1));
		}
		cr_assert_leq(get("bpw", 1), 3.0 + 19.0 / 32 + 1e-9); /* group 128 = the row (32) */
	}
	char ck[256];
	snprintf(ck, sizeof ck, "%s/compress_mixed3_g128_pivot.ckpt", dir);
	cr_assert_eq(access(ck, R_OK), 0, "%s", ck);
	cJSON_Delete(cases);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}
