/* ocbench inspect MODEL: static analysis of a model spec, checkpoint or GGUF file
 * (analysis/model_spec.h, model_cost.h) with the roofline prediction on a machine of the
 * database. Read-only; the database is optional (no prediction without it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../workloads/gguf.h"
#include "../analysis/model_cost_out.h"
#include "../workloads/model_spec_load.h"
#include "cli.h"
#include "machine_roof.h"

#define CMD "inspect"

static void help(void)
{
	printf("usage: ocbench inspect MODEL [--ctx N] [--batch N] [--machine ID] [--threads N]\n"
	       "                      [--format F] [--json]\n\n"
	       "MODEL is a model spec (examples/models/*.json), an ocbench checkpoint or a GGUF\n"
	       "file (header, metadata and tensor table only; no tensor data is read).\n"
	       "Prints per layer and in total: parameters, FLOPs per token (decode at a KV\n"
	       "length of ctx; prefill averaged over a causal prompt of ctx), weight bytes per\n"
	       "format (f32 f16 q8_0 q4_0 q4_1 tq2_0 tq1_0 q3_g q2_g; matrices in the format,\n"
	       "norms and biases f32), KV-cache (f16) and activation (fp32) bytes; then, from the\n"
	       "machine's measured ceilings ('ocbench ceilings'), the roofline-predicted decode\n"
	       "tokens/s and prefill time per format, with the roof that bounds each layer.\n\n"
	       "  --ctx N       context length (default min(2048, the model's))\n"
	       "  --batch N     sequences (default 1)\n"
	       "  --machine ID  predict for machine ID of the database (default: this machine)\n"
	       "  --threads N   ceilings at N threads (default 1)\n"
	       "  --format F    also print every layer's predicted times and bound in format F\n"
	       "  --level L     stream weights from l1, l2, l3 or dram instead of the level the\n"
	       "                roofline rule picks from their size (on a VM the L3 the CPU\n"
	       "                reports is shared with other guests)\n"
	       "  --json        machine-readable output\n");
}

struct inspect_opts {
	const char *model;
	long ctx, batch, machine, threads;
	int detail; /* format index or -1 */
	int level;  /* -1 or a forced enum ocb_level */
	int json;
};

static int parse(const struct ocb_global *g, int argc, char **argv, struct inspect_opts *o)
{
	static const struct option opts[] = {
		{"ctx", required_argument, NULL, 'c'},     {"batch", required_argument, NULL, 'b'},
		{"machine", required_argument, NULL, 'm'}, {"threads", required_argument, NULL, 't'},
		{"format", required_argument, NULL, 'f'},  {"json", no_argument, NULL, 'j'},
		{"level", required_argument, NULL, 'L'},
		{"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
	int c, rc;
	*o = (struct inspect_opts){.threads = 1, .detail = -1, .level = -1, .json = g->json};
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:b:m:t:f:L:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'c': rc = cli_parse_long(CMD, "--ctx", optarg, 1, 1 << 24, &o->ctx); break;
		case 'b': rc = cli_parse_long(CMD, "--batch", optarg, 1, 1 << 20, &o->batch); break;
		case 'm': rc = cli_parse_long(CMD, "--machine", optarg, 1, 1l << 40, &o->machine); break;
		case 't': rc = cli_parse_long(CMD, "--threads", optarg, 1, 4096, &o->threads); break;
		case 'f':
			o->detail = ocb_wfmt_find(optarg);
			rc = o->detail < 0 ? cli_usage_error(CMD, "--format: unknown format '%s'",
							     optarg) : 0;
			break;
		case 'j': o->json = 1; rc = 0; break;
		case 'L':
			for (int l = 0; l < OCB_NLEVELS; l++)
				if (strcmp(optarg, ocb_level_kind((enum ocb_level)l) + 3) == 0)
					o->level = l;
			rc = o->level < 0 ? cli_usage_error(CMD, "--level: '%s' (l1, l2, l3 or "
							    "dram)", optarg) : 0;
			break;
		case 'h': help(); return -1;
		default: return cli_bad_option(CMD, argc, argv);
		}
		if (rc)
			return rc;
	}
	if (argc - optind != 1)
		return cli_usage_error(CMD, "wants one MODEL (see 'ocbench inspect --help')");
	o->model = argv[optind];
	return 0;
}

/* A GGUF model's tensor table by ggml type: tensors and bytes of each stored type, as
 * text or into j. Other files: nothing. */
static int gguf_summary(const char *path, int json, cJSON *j)
{
	struct gguf_file *g = NULL;
	FILE *f = fopen(path, "rb");
	char head[4] = {0};
	size_t got = f ? fread(head, 1, 4, f) : 0;
	if (f)
		fclose(f);
	if (got != 4 || memcmp(head, GGUF_MAGIC, 4) != 0)
		return OCB_OK;
	int rc = gguf_read(path, &g);
	if (rc)
		return rc;
	cJSON *o = json ? cJSON_AddObjectToObject(j, "gguf_types") : NULL;
	if (!json)
		printf("\nGGUF v%u: %llu tensors, %llu key-values, data %llu bytes from offset %llu; "
		       "stored types:", g->version, (unsigned long long)g->n_tensors,
		       (unsigned long long)g->n_kv,
		       (unsigned long long)(g->file_size - g->data_offset),
		       (unsigned long long)g->data_offset);
	for (uint32_t t = 0; t < 64; t++) {
		uint64_t n = 0, b = 0;
		for (uint64_t i = 0; i < g->n_tensors; i++)
			if (g->t[i].type == t)
				n++, b += g->t[i].nbytes;
		if (!n)
			continue;
		if (o)
			cJSON_AddNumberToObject(o, ggml_type_name(t), (double)b);
		else
			printf(" %s %llu (%llu B)", ggml_type_name(t), (unsigned long long)n,
			       (unsigned long long)b);
	}
	if (!json)
		printf("\n");
	gguf_free(g);
	return OCB_OK;
}

/* Prints (text or JSON) the cost and, with ceilings, the predictions of every format. */
static int emit(const struct inspect_opts *o, const struct ocb_cost *c,
		const struct ocb_roof_ceil *ce, size_t n, const struct ocb_roof_caches *caches,
		const char *what)
{
	struct ocb_pred p[WF_N];
	int np = 0, rc = 0;
	memset(p, 0, sizeof p);
	for (int f = 0; n && f < WF_N; f++, np++)
		if ((rc = ocb_cost_predict(c, f, ce, n, caches, (int)o->threads, &p[f])))
			goto out;
	if (o->json) {
		cJSON *j = ocb_cost_json(c, p, np);
		if (j && np)
			cJSON_AddStringToObject(j, "machine", what);
		if (j && (rc = gguf_summary(o->model, 1, j))) {
			cJSON_Delete(j);
			goto out;
		}
		char *txt = j ? cJSON_Print(j) : NULL;
		if (!txt) {
			cJSON_Delete(j);
			rc = ocb_seterr(OCB_ENOMEM, "JSON");
			goto out;
		}
		printf("%s\n", txt);
		free(txt);
		cJSON_Delete(j);
		goto out;
	}
	ocb_cost_print(c, stdout);
	if ((rc = gguf_summary(o->model, 0, NULL)))
		goto out;
	if (!np) {
		printf("\n(no prediction: no ceilings for this machine in the database; run "
		       "'ocbench ceilings')\n");
		goto out;
	}
	printf("\npredicted on %s, %ld thread(s), roofline max(ops / compute, bytes / "
	       "bandwidth) per layer:\n", what, o->threads);
	ocb_pred_print(c, p, np, o->detail, stdout);
out:
	for (int f = 0; f < np; f++)
		ocb_pred_release(&p[f]);
	return rc;
}

int cmd_inspect(const struct ocb_global *g, int argc, char **argv)
{
	struct inspect_opts o;
	struct ocb_model_spec spec;
	struct ocb_cost cost = {0};
	struct ocb_roof_ceil *ce = NULL;
	struct ocb_ceiling *rows = NULL;
	struct ocb_roof_caches caches = {0};
	char what[600] = "";
	size_t n = 0;
	int ec = parse(g, argc, argv, &o), rc;
	if (ec)
		return ec < 0 ? 0 : ec;
	if ((rc = ocb_spec_load(o.model, &spec)))
		return cli_fail(CMD, rc);
	long ctx = o.ctx ? o.ctx : (spec.arch == OCB_ARCH_LLAMA && spec.ctx < 2048 ? spec.ctx : 2048);
	if ((rc = ocb_cost_compute(&spec, ctx, o.batch ? o.batch : 1, &cost))) {
		ec = cli_fail(CMD, rc);
		goto out;
	}
	cost.level = o.level;
	if ((ec = cli_machine_roof(g, CMD, o.machine, &ce, &rows, &n, &caches, what,
				   sizeof what)))
		goto out;
	if ((rc = emit(&o, &cost, ce, n, &caches, what)))
		ec = cli_fail(CMD, rc);
out:
	ocb_cost_release(&cost);
	free(ce);
	free(rows);
	return ec;
}
