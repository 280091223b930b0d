/* bench_ternary_mlp: the MLP 784-512-256-10 on Fashion-MNIST trained by one method of the
 * ternary suite (fp32, BitNet b1.58 STE, DQT at 8/4/3 bits or ternary with fp32/bf16/fp8
 * moments; workloads/qtrain.h), the recipe of workloads/qt_recipe.h. One case per grid
 * row; metrics, MLLOG, memory, export and checkpoint: ternary_train.h. */
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../workloads/qt_recipe.h"
#include "../workloads/trainer_ternary.h"
#include "ternary_train.h"

struct mstate {
	struct qmlp_spec spec;
	struct ocb_idx_set train, test;
	struct tt_job job;
};

static cJSON *cases(const struct ocb_ctx *ctx)
{
	int n, quick = ctx && ctx->quick, max_train;
	struct ocb_train_cfg t;
	const struct qt_cfg *g = qt_suite_grid(quick, &n);
	qt_mlp_recipe(quick, &t, &max_train);
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < n && a; i++) {
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "method", qt_method_name(g[i].method));
		cJSON_AddNumberToObject(c, "bits", g[i].bits);
		cJSON_AddStringToObject(c, "moments", dqt_mfmt_name(g[i].moments));
		cJSON_AddNumberToObject(c, "epochs", t.epochs);
		cJSON_AddNumberToObject(c, "max_train", max_train);
		cJSON_AddItemToArray(a, c);
	}
	return a;
}

static void teardown(void *st)
{
	struct mstate *s = st;
	if (!s)
		return;
	tt_end(&s->job);
	ocb_idx_release(&s->train);
	ocb_idx_release(&s->test);
	free(s);
}

static int setup(const cJSON *p, const struct ocb_ctx *ctx, void **out)
{
	struct mstate *s = calloc(1, sizeof *s);
	int rc, max_train;
	*out = NULL;
	if (!s)
		return ocb_seterr(OCB_ENOMEM, "ternary_mlp: out of memory");
	struct tt_job *j = &s->job;
	j->model = "mlp";
	j->t = &ocb_trainer_qmlp;
	j->ctx = ctx;
	if ((rc = tt_parse_q(p, &j->q)))
		goto out;
	qt_mlp_recipe(0, &j->cfg, &max_train);
	j->cfg.epochs = (int)ocb_pint(p, "epochs");
	j->cfg.batch = (int)ocb_pint(p, "batch");
	j->cfg.lr = (float)ocb_pfloat(p, "lr");
	j->cfg.seed = ctx->seed;
	j->cfg.threads = ctx->threads;
	j->mem_steps = ocb_pint(p, "mem_steps");
	ocb_mlp_default_cfg(&s->spec.mlp.model);
	s->spec.mlp.max_train = (int)ocb_pint(p, "max_train");
	s->spec.q = j->q;
	if ((rc = ocb_fmnist_load(ctx->data_dir, 1, &s->train)) ||
	    (rc = ocb_fmnist_load(ctx->data_dir, 0, &s->test)))
		goto out;
	s->spec.mlp.train = &s->train;
	s->spec.mlp.test = &s->test;
	j->spec = &s->spec;
	j->test = &s->test;
	int mt = s->spec.mlp.max_train, ntr = mt > 0 && mt < s->train.n ? mt : s->train.n;
	if ((rc = tt_begin(j, ctx, ntr, s->test.n)))
		goto out;
	*out = s;
	s = NULL;
out:
	teardown(s);
	return rc;
}

static int workload(void *st, const struct ocb_ctx *ctx)
{
	struct mstate *s = st;
	s->job.ctx = ctx;
	return tt_run(&s->job);
}

static const struct ocb_param params[] = {
	{"method", OCB_P_ENUM, "\"dqt\"", 0, 0, tt_methods, "", "fp32, BitNet b1.58 STE or DQT"},
	{"bits", OCB_P_INT, "8", 2, 8, NULL, "bits", "DQT weight bits: 8, 4, 3 or 2 (= ternary); STE: 2"},
	{"moments", OCB_P_ENUM, "\"fp32\"", 0, 0, tt_moments, "", "DQT AdamW moment storage"},
	{"epochs", OCB_P_INT, "3", 1, 1000, NULL, "epochs", "passes over the training set"},
	{"max_train", OCB_P_INT, "0", 0, 1e9, NULL, "examples", "first N training examples (0: all)"},
	{"batch", OCB_P_INT, "256", 1, 65536, NULL, "examples", "mini-batch size"},
	{"lr", OCB_P_FLOAT, "0.001", 1e-9, 10, NULL, "", "peak learning rate (AdamW)"},
	{"mem_steps", OCB_P_INT, "3", 1, 1000, NULL, "steps", "steps of the forked memory measurement"},
	{0},
};

const struct ocb_bench ocb_bench_ternary_mlp = {
	.name = "ternary_mlp",
	.doc = "MLP on Fashion-MNIST: fp32 / BitNet STE / DQT (8,4,3,ternary; fp32/bf16/fp8 "
	       "moments): accuracy, curves, bytes/param, TQ2_0/TQ1_0 export",
	.kind = OCB_WORKLOAD,
	.params = params,
	.cases = cases,
	.setup = setup,
	.workload = workload,
	.teardown = teardown,
};
