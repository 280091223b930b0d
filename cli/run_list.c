/* run_list: `ocbench run --list` (suites, their benches and parameter names) and
 * `ocbench run --describe BENCH` (a bench's declared parameters, params.h). */
#include <stdio.h>
#include <string.h>

#include "../collect/registry.h"
#include "cli.h"

/* "n=4096 m=4096 format=q4_0 ..." on one line. */
static void param_line(const struct ocb_param *p)
{
	printf("      params:");
	for (; p && p->name; p++)
		printf(" %s=%s", p->name, p->dflt ? p->dflt : "(derived)");
	putchar('\n');
}

void run_list_suites(void)
{
	for (size_t i = 0; i < ocb_nsuites; i++) {
		printf("%s: %s\n", ocb_suites[i].name, ocb_suites[i].doc);
		for (size_t k = 0; k < ocb_nbenches; k++) {
			const struct ocb_bench *b = ocb_benches[k].bench;
			if (strcmp(ocb_benches[k].suite, ocb_suites[i].name) != 0)
				continue;
			printf("  %-24s %s %s\n", b->name,
			       b->kind == OCB_WORKLOAD ? "[workload]" : "[kernel]  ",
			       b->doc ? b->doc : "");
			param_line(b->params);
		}
	}
	printf("\n'ocbench run --describe BENCH' lists a bench's parameters; "
	       "'--suite FILE.json' runs a suite file (examples/suites/).\n");
}

int run_describe(const char *name)
{
	const struct ocb_bench *b = ocb_bench_find(name);
	if (!b)
		return cli_usage_error("run", "--describe: no bench '%s' (see 'ocbench run --list')",
				       name);
	printf("%s (suite %s, %s): %s\n", b->name, ocb_bench_home(b),
	       b->kind == OCB_WORKLOAD ? "workload" : "kernel", b->doc ? b->doc : "");
	printf("  %-20s %-8s %-18s %-24s %-9s %s\n", "PARAMETER", "TYPE", "DEFAULT",
	       "ALLOWED", "UNIT", "DOC");
	ocb_params_describe(stdout, b->params);
	return 0;
}
