/* ocbench import FILE: Google Benchmark JSON as a new run (db/import.h). */
#include <stdio.h>
#include <string.h>

#include "../collect/host.h"
#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../db/import.h"
#include "../report/rdata.h"
#include "cli.h"

static void help(void)
{
	printf("usage: ocbench import FILE [--machine FINGERPRINT] [--label L]\n\n"
	       "Reads Google Benchmark JSON (benchmark --benchmark_format=json or\n"
	       "--benchmark_out=FILE) and stores it as a new run, suite 'import', on this\n"
	       "machine (its fingerprint is probed) or on a machine already in the database\n"
	       "(--machine: fingerprint prefix or hostname). Iterations become samples;\n"
	       "user counters become counters. A malformed file writes nothing (exit 2).\n");
}

int cmd_import(const struct ocb_global *g, int argc, char **argv)
{
	static const struct option opts[] = {{"machine", required_argument, NULL, 'm'},
					     {"label", required_argument, NULL, 'l'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct ocb_store *s = NULL;
	struct ocb_import_opts io = {.version = OCB_VERSION, .cmdline = g->cmdline};
	const char *machine = NULL;
	cJSON *probe = NULL;
	int64_t run_id = 0;
	size_t nres = 0;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":m:l:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': machine = optarg; break;
		case 'l': io.label = optarg; break;
		case 'h': help(); return 0;
		default: return cli_bad_option("import", argc, argv);
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("import", "wants one FILE (see 'ocbench import --help')");
	const char *path = argv[optind];
	/* A file that is not JSON is refused before the database is even opened. */
	if ((rc = ocb_json_read_file(path, &probe)))
		return cli_fail("import", rc);
	cJSON_Delete(probe);
	if ((rc = cli_open_store(g, "import", OCB_STORE_WRITE, &s)))
		return rc;
	if (machine) {
		struct ocb_sel sel = {0};
		if ((rc = ocb_sel_machines(s, machine, &sel))) {
			rc = cli_fail("import", rc);
			goto out;
		}
		if (sel.nmachines != 1) {
			rc = cli_usage_error("import", "--machine '%s' matches %zu machines", machine,
					     sel.nmachines);
			goto out;
		}
		io.machine_id = sel.machine[0];
	} else {
		struct ocb_machine m;
		ocb_host_probe(&m);
		if ((rc = ocb_store_machine(s, &m, &io.machine_id))) {
			rc = cli_fail("import", rc);
			goto out;
		}
	}
	if ((rc = ocb_import_gbench(s, path, &io, &run_id, &nres))) {
		rc = cli_fail("import", rc);
		goto out;
	}
	if (g->json)
		printf("{\"run\":%lld,\"results\":%zu}\n", (long long)run_id, nres);
	else if (!g->quiet)
		printf("imported %zu result(s) from %s as run %lld\n", nres, path, (long long)run_id);
	rc = 0;
out:
	ocb_store_close(s);
	return rc;
}
