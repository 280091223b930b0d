/* ocbench plan MODEL --budget B: the mixed-precision plan under a storage budget (the
 * exact planner of workloads/mixed_precision.h): from per-layer sensitivity measured on
 * calibration data for an LM checkpoint (workloads/mixed_plan_run.h), else from size
 * alone (workloads/compress_plan.h). Prints the plan, its bytes and its predicted speed;
 * --out writes the JSON that `ocbench compress` reads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../workloads/checkpoint.h"
#include "../workloads/compress_plan.h"
#include "../workloads/mixed_plan_run.h"
#include "../analysis/model_cost_out.h"
#include "../workloads/model_spec_load.h"
#include "../workloads/data_text.h"
#include "../workloads/model_lm.h"
#include "cli.h"
#include "machine_roof.h"

#define CMD "plan"

static void help(void)
{
	printf("usage: ocbench plan MODEL --budget 3.2bpw|BYTES [--out FILE] [--group G]\n"
	       "                   [--err fisher|output|probe] [--data PATH] [--seed N]\n"
	       "                   [--machine ID] [--threads N] [--ctx N] [--json]\n\n"
	       "Chooses GPTQ bits per linear layer among {2, 3, 4, 8} (asymmetric, G columns per\n"
	       "fp16 scale, default 32) minimising the summed error under the budget, exactly.\n"
	       "MODEL an LM checkpoint: the error of every candidate is measured on 32\n"
	       "calibration windows of the training text (--err: Fisher-weighted output error,\n"
	       "the default; plain output error; or a loss probe per layer), fused q/k/v and\n"
	       "gate/up share bits. MODEL a spec, a GGUF file or another checkpoint: from size\n"
	       "alone (candidate error n 4^-b; every block's same matrix shares bits).\n"
	       "Budget: bits per planned weight ('3.2bpw') or bytes of the planned linears.\n"
	       "Prints the plan, its storage and the roofline-predicted decode speed on a\n"
	       "machine of the database (as 'inspect'); --out FILE writes the plan JSON.\n"
	       "  --data PATH   the text corpus (default: the fortunes package)\n");
}

struct plan_opts {
	const char *model, *budget, *out, *data;
	long group, machine, threads, ctx, seed;
	enum ptq_plan_err err;
	int json;
};

static int parse(const struct ocb_global *g, int argc, char **argv, struct plan_opts *o)
{
	static const struct option opts[] = {
		{"budget", required_argument, NULL, 'b'}, {"out", required_argument, NULL, 'o'},
		{"group", required_argument, NULL, 'g'},  {"err", required_argument, NULL, 'e'},
		{"data", required_argument, NULL, 'd'},   {"seed", required_argument, NULL, 's'},
		{"machine", required_argument, NULL, 'm'}, {"threads", required_argument, NULL, 't'},
		{"ctx", required_argument, NULL, 'c'},    {"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
	int c, rc = 0;
	*o = (struct plan_opts){.group = 32, .threads = 1, .seed = 1, .json = g->json};
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:o:g:e:d:s:m:t:c:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'b': o->budget = optarg; break;
		case 'o': o->out = optarg; break;
		case 'd': o->data = optarg; break;
		case 'g': rc = cli_parse_long(CMD, "--group", optarg, 1, 1 << 20, &o->group); break;
		case 's': rc = cli_parse_long(CMD, "--seed", optarg, 0, 1l << 62, &o->seed); break;
		case 'm': rc = cli_parse_long(CMD, "--machine", optarg, 1, 1l << 40, &o->machine); break;
		case 't': rc = cli_parse_long(CMD, "--threads", optarg, 1, 4096, &o->threads); break;
		case 'c': rc = cli_parse_long(CMD, "--ctx", optarg, 1, 1 << 24, &o->ctx); break;
		case 'e':
			if (ptq_plan_err_parse(optarg, &o->err))
				rc = cli_usage_error(CMD, "--err: '%s' (fisher, output or probe)", optarg);
			break;
		case 'j': o->json = 1; break;
		case 'h': help(); return -1;
		default: return cli_bad_option(CMD, argc, argv);
		}
		if (rc)
			return rc;
	}
	if (argc - optind != 1)
		return cli_usage_error(CMD, "wants one MODEL (see 'ocbench plan --help')");
	if (!o->budget)
		return cli_usage_error(CMD, "--budget is required ('3.2bpw' or bytes)");
	o->model = argv[optind];
	return 0;
}

/* An LM checkpoint's plan from measured sensitivity. */
static int plan_measured(const struct plan_opts *o, cJSON **plan, char *how, size_t len)
{
	struct lm_model *lm = NULL;
	struct ocb_text text = {0};
	int64_t budget;
	double pred = NAN, uni = NAN;
	int rc;
	if ((rc = lm_load(o->model, 1, &lm)) || (rc = ocb_text_load(o->data, &text)))
		goto out;
	int64_t nw = 0;
	for (int i = 0; i < lm_nlinears(lm); i++) {
		const struct ocb_linear *l = lm_linear(lm, i, NULL);
		nw += (int64_t)l->out * l->in;
	}
	if ((rc = compress_budget_parse(o->budget, nw, &budget)) ||
	    (rc = compress_plan_measured(lm, &text, (int)o->group, (int)o->err, budget, 32,
					 (uint64_t)o->seed, plan, &pred, &uni)))
		goto out;
	snprintf(how, len, "per-layer error measured on 32 calibration windows of %d bytes; "
		 "predicted error %.4g (uniform 4 bits: %.4g)", lm->cfg.ctx < 128 ? lm->cfg.ctx : 128,
		 pred, uni);
out:
	ocb_text_release(&text);
	lm_free(lm);
	return rc;
}

static int is_lm_checkpoint(const char *path)
{
	struct ocb_ckpt *c = NULL;
	char head[8] = {0};
	FILE *f = fopen(path, "rb");
	size_t got = f ? fread(head, 1, 8, f) : 0;
	if (f)
		fclose(f);
	if (got != 8 || memcmp(head, OCB_CKPT_MAGIC, 8) != 0 || ocb_ckpt_load(path, &c))
		return 0;
	int lm = strcmp(c->kind, "lm") == 0;
	ocb_ckpt_free(c);
	return lm;
}

/* The plan table and its totals. */
static void print_plan(const cJSON *plan, const char *how)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(plan, "layers"), *e;
	char b[32];
	printf("%s\n\n%-22s %-16s %4s %6s %8s\n", how, "layer", "method", "bits", "group", "bpw");
	cJSON_ArrayForEach(e, a)
		printf("%-22s %-16s %4.0f %6.0f %8.4f\n", ocb_json_str(e, "name", "?"),
		       ocb_json_str(e, "method", "?"), ocb_json_num(e, "bits", NAN),
		       ocb_json_num(e, "group", NAN), ocb_json_num(e, "bpw", NAN));
	printf("\nbudget %.4f bpw, plan %.4f bpw: %s of planned linears\n",
	       ocb_json_num(plan, "budget_bpw", NAN), ocb_json_num(plan, "total_bpw", NAN),
	       ocb_fmt_bytes(ocb_json_num(plan, "total_bits", NAN) / 8, b, sizeof b));
}

/* Model bytes and the roofline prediction of the plan; adds "model_bytes" and
 * "prediction" to the plan JSON. */
static int predict_plan(const struct ocb_global *g, const struct plan_opts *o,
			const struct ocb_model_spec *s, cJSON *plan)
{
	struct ocb_cost c = {0};
	struct ocb_pred p = {0};
	struct ocb_roof_ceil *ce = NULL;
	struct ocb_ceiling *rows = NULL;
	struct ocb_roof_caches caches = {0};
	char what[600] = "", b[32];
	size_t n = 0;
	double *wb = NULL, tot = 0;
	long ctx = o->ctx ? o->ctx : (s->arch == OCB_ARCH_LLAMA && s->ctx < 2048 ? s->ctx : 2048);
	int rc = ocb_cost_compute(s, ctx, 1, &c), ec = 0;
	if (!rc && !(wb = malloc((size_t)c.nlayers * sizeof *wb)))
		rc = ocb_seterr(OCB_ENOMEM, "plan bytes");
	if (rc || (rc = compress_plan_layer_bytes(&c, plan, wb)))
		goto out;
	for (int i = 0; i < c.nlayers; i++)
		tot += wb[i];
	cJSON_AddNumberToObject(plan, "model_bytes", tot);
	if (!o->json)
		printf("model %s with the plan (embedding and norms f32)\n",
		       ocb_fmt_bytes(tot, b, sizeof b));
	if ((ec = cli_machine_roof(g, CMD, o->machine, &ce, &rows, &n, &caches, what,
				   sizeof what)) || !n)
		goto out;
	if ((rc = ocb_cost_predict_bytes(&c, wb, ce, n, &caches, (int)o->threads, &p)))
		goto out;
	cJSON *pj = cJSON_AddObjectToObject(plan, "prediction");
	cJSON_AddStringToObject(pj, "machine", what);
	cJSON_AddNumberToObject(pj, "ctx", (double)ctx);
	if (isfinite(p.decode_tok_s))
		cJSON_AddNumberToObject(pj, "decode_tok_s", p.decode_tok_s);
	if (!o->json)
		printf("predicted on %s, %ld thread(s), ctx %ld: decode %.4g tokens/s, weights in "
		       "%s\n", what, o->threads, ctx, p.decode_tok_s, p.level);
out:
	if (rc)
		ec = cli_fail(CMD, rc);
	ocb_pred_release(&p);
	ocb_cost_release(&c);
	free(wb);
	free(ce);
	free(rows);
	return ec;
}

int cmd_plan(const struct ocb_global *g, int argc, char **argv)
{
	struct plan_opts o;
	struct ocb_model_spec spec;
	cJSON *plan = NULL;
	char how[256];
	int ec = parse(g, argc, argv, &o), rc;
	if (ec)
		return ec < 0 ? 0 : ec;
	if ((rc = ocb_spec_load(o.model, &spec)))
		return cli_fail(CMD, rc);
	if (is_lm_checkpoint(o.model)) {
		rc = plan_measured(&o, &plan, how, sizeof how);
	} else {
		int64_t budget;
		snprintf(how, sizeof how, "from size alone (no measured sensitivity)");
		rc = compress_budget_parse(o.budget, compress_plan_spec_weights(&spec), &budget);
		if (!rc)
			rc = compress_plan_by_size(&spec, (int)o.group, budget, &plan);
	}
	if (rc) {
		ec = cli_fail(CMD, rc);
		goto out;
	}
	cJSON_AddStringToObject(plan, "model", spec.name);
	cJSON_AddStringToObject(plan, "sensitivity", how);
	if (!o.json)
		print_plan(plan, how);
	if ((ec = predict_plan(g, &o, &spec, plan)))
		goto out;
	if (o.out) {
		char *txt = cJSON_Print(plan);
		FILE *f = txt ? fopen(o.out, "w") : NULL;
		int ok = f && fputs(txt, f) >= 0 && fputc('\n', f) != EOF;
		if (f && fclose(f) != 0)
			ok = 0;
		free(txt);
		if (!ok) {
			ec = cli_fail(CMD, ocb_seterr(OCB_EPERM, "%s: cannot write", o.out));
			goto out;
		}
		if (!o.json)
			printf("wrote %s\n", o.out);
	}
	if (o.json) {
		ec = cli_print_json(CMD, plan, 0);
		plan = NULL;
	}
out:
	cJSON_Delete(plan);
	return ec;
}
