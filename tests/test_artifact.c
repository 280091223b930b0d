/* artifact: checkpoint names, and the plan order that runs every producer of a model
 * before its consumers (so `run --suite all` trains each model once), also for the
 * registered benches themselves. */
#include <criterion/criterion.h>
#include <string.h>

#include "../collect/artifact.h"
#include "../collect/registry.h"
#include "../common/ocb_error.h"

static const char *const mlp[] = {"mlp_fp32", NULL};
static const char *const lm[] = {"lm_fp32", NULL};
static const char *const both[] = {"mlp_fp32", "lm_fp32", NULL};

static const struct ocb_bench k1 = {.name = "k1"}, k2 = {.name = "k2"};
static const struct ocb_bench tm = {.name = "train_mlp", .produces = mlp};
static const struct ocb_bench tl = {.name = "train_lm", .produces = lm};
static const struct ocb_bench qa = {.name = "qa", .consumes = both};

/* The names of bench_of[order[i]] joined by spaces. */
static void names(const struct ocb_bench *const *bench_of, const size_t *order, size_t n,
		  char *out)
{
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		strcat(out, i ? " " : "");
		strcat(out, bench_of[order[i]]->name);
	}
}

Test(artifact, path_names_quick_models_apart)
{
	char p[64];
	struct ocb_ctx full = {.out_dir = "/o"}, quick = {.out_dir = "/o", .quick = 1};
	cr_assert_eq(ocb_artifact_path(&full, OCB_ARTIFACT_MLP_FP32, p, sizeof p), OCB_OK);
	cr_assert_str_eq(p, "/o/mlp_fp32.ckpt");
	cr_assert_eq(ocb_artifact_path(&quick, OCB_ARTIFACT_LM_FP32, p, sizeof p), OCB_OK);
	cr_assert_str_eq(p, "/o/lm_fp32_quick.ckpt");
	struct ocb_ctx none = {0};
	cr_assert_eq(ocb_artifact_path(&none, "x", p, sizeof p), OCB_OK);
	cr_assert_str_eq(p, "./x.ckpt");
	cr_assert_eq(ocb_artifact_path(&full, "x", p, 8), OCB_EINVAL);
}

Test(artifact, needs)
{
	cr_assert(ocb_bench_needs(&qa, &tm));
	cr_assert(ocb_bench_needs(&qa, &tl));
	cr_assert_not(ocb_bench_needs(&tm, &qa));
	cr_assert_not(ocb_bench_needs(&qa, &k1));
	cr_assert_not(ocb_bench_needs(&qa, &qa));
}

Test(artifact, consumers_move_behind_their_last_producer)
{
	/* plan index: 0 qa, 1 k1, 2 train_mlp, 3 k2, 4 train_lm, 5 qa (a second case) */
	const struct ocb_bench *bench_of[] = {&qa, &k1, &tm, &k2, &tl, &qa};
	size_t order[] = {0, 1, 2, 3, 4, 5};
	char s[128];
	ocb_order_prerequisites(bench_of, order, 6);
	names(bench_of, order, 6, s);
	cr_assert_str_eq(s, "k1 train_mlp k2 train_lm qa qa");
	cr_assert(order[4] == 0 && order[5] == 5, "otherwise stable");

	/* a shuffled pass: only the consumer moves */
	size_t sh[] = {3, 5, 2, 1, 4, 0};
	ocb_order_prerequisites(bench_of, sh, 6);
	names(bench_of, sh, 6, s);
	cr_assert_str_eq(s, "k2 train_mlp k1 train_lm qa qa");

	/* already in order, or no producer planned: untouched */
	size_t ok[] = {1, 2, 4, 0};
	ocb_order_prerequisites(bench_of, ok, 4);
	cr_assert(ok[0] == 1 && ok[1] == 2 && ok[2] == 4 && ok[3] == 0);
	const struct ocb_bench *alone[] = {&qa, &k1};
	size_t o2[] = {0, 1};
	ocb_order_prerequisites(alone, o2, 2);
	cr_assert(o2[0] == 0 && o2[1] == 1);
}

Test(artifact, a_cycle_terminates)
{
	static const char *const a_art[] = {"a", NULL}, *const b_art[] = {"b", NULL};
	const struct ocb_bench a = {.name = "a", .produces = a_art, .consumes = b_art};
	const struct ocb_bench b = {.name = "b", .produces = b_art, .consumes = a_art};
	const struct ocb_bench *bench_of[] = {&a, &b};
	size_t order[] = {0, 1};
	ocb_order_prerequisites(bench_of, order, 2);
	cr_assert(order[0] != order[1], "still a permutation");
}

static int produced_somewhere(const char *artifact)
{
	for (size_t k = 0; k < ocb_nbenches; k++)
		for (const char *const *p = ocb_benches[k].bench->produces; p && *p; p++)
			if (strcmp(*p, artifact) == 0)
				return 1;
	return 0;
}

/* The registered benches: every consumed artifact has a producer somewhere. */
Test(artifact, registered_consumers_have_producers)
{
	int consumers = 0;
	for (size_t i = 0; i < ocb_nbenches; i++) {
		const struct ocb_bench *c = ocb_benches[i].bench;
		for (const char *const *a = c->consumes; a && *a; a++, consumers++)
			cr_assert(produced_somewhere(*a), "%s consumes %s: nothing produces it",
				  c->name, *a);
	}
	cr_assert(consumers >= 2, "quant_accuracy consumes both fp32 models");
}
