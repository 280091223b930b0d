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

/* epochs and max_train of the (quick) recipe in every case */
static void mlp_keys(cJSON *c, void *arg)
{
	const int *q = arg; /* {epochs, max_train} */
	cJSON_AddNumberToObject(c, "epochs", q[0]);
	cJSON_AddNumberToObject(c, "max_train", q[1]);
}

static cJSON *cases(const struct ocb_ctx *ctx)
{
	int quick = ctx && ctx->quick, keys[2];
	struct ocb_train_cfg t;
	qt_mlp_recipe(quick, &t, &keys[1]);
	keys[0] = t.epochs;
	return tt_grid_cases(quick, mlp_keys, keys);
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
	if ((rc = tt_job_init(j, p, ctx, "mlp", &ocb_trainer_qmlp)))
		goto out;
	qt_mlp_recipe(0, &j->cfg, &max_train);
	tt_job_params(j, p, ctx);
	j->cfg.epochs = (int)ocb_pint(p, "epochs");
	j->cfg.batch = (int)ocb_pint(p, "batch");
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
	TT_PARAMS_METHOD,
	{"epochs", OCB_P_INT, "3", 1, 1000, NULL, "epochs", "passes over the training set"},
	{"max_train", OCB_P_INT, "0", 0, 1e9, NULL, "examples", "first N training examples (0: all)"},
	{"batch", OCB_P_INT, "256", 1, 65536, NULL, "examples", "mini-batch size"},
	{"lr", OCB_P_FLOAT, "0.001", 1e-9, 10, NULL, "", "peak learning rate (AdamW)"},
	TT_PARAM_MEM_STEPS,
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
