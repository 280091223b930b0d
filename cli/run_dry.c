/* ocbench run --dry-run: what `run` with the same options would measure, to check a
 * suite file, a --filter or --threads before spending the run's time. */
#include "run_dry.h"

#include <stdio.h>
#include <stdlib.h>

#include "../collect/host.h"
#include "../common/ocb_error.h"
#include "cli.h"

static const char *kind_name(const struct ocb_planned *p)
{
	return p->bench->kind == OCB_KERNEL ? "kernel" : "workload";
}

/* One planned case as JSON: {suite, bench, kind, params, threads}. */
static cJSON *case_json(const struct ocb_planned *p)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "suite", p->suite);
	cJSON_AddStringToObject(c, "bench", p->bench->name);
	cJSON_AddStringToObject(c, "kind", kind_name(p));
	cJSON_AddItemToObject(c, "params", cJSON_Duplicate(p->params, 1));
	cJSON_AddNumberToObject(c, "threads", p->threads);
	return c;
}

static void print_text(const struct ocb_planned *plan, size_t np)
{
	for (size_t i = 0; i < np; i++) {
		char *params = cJSON_PrintUnformatted(plan[i].params);
		printf("%s/%s/%s  %s  threads %d\n", plan[i].suite, plan[i].bench->name,
		       params ? params : "?", kind_name(&plan[i]), plan[i].threads);
		free(params);
	}
	printf("%zu cases\n", np);
}

static int print_json(const struct ocb_planned *plan, size_t np)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < np; i++)
		cJSON_AddItemToArray(a, case_json(&plan[i]));
	return cli_print_json("run", a, 0);
}

int run_dry(const struct ocb_run_opts *o, int json)
{
	struct ocb_machine m;
	struct ocb_planned *plan = NULL;
	size_t np = 0;
	cJSON *sets = NULL;
	ocb_host_probe(&m); /* the core count and caches some benches size their cases by */
	struct ocb_ctx ctx = {.threads = o->default_threads, .seed = o->seed, .quick = o->quick,
			      .data_dir = o->data_dir, .out_dir = o->out_dir, .machine = &m};
	int rc = ocb_runner_plan(o, &ctx, &plan, &np, &sets);
	if (rc == OCB_OK && np == 0)
		rc = ocb_seterr(OCB_EINVAL, "no case matches the suites and filter given");
	int ec = 0;
	if (rc == OCB_OK) {
		if (json)
			ec = print_json(plan, np);
		else
			print_text(plan, np);
	}
	free(plan);
	cJSON_Delete(sets);
	return rc == OCB_OK ? ec : cli_fail("run", rc);
}
