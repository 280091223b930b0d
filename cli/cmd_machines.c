/* ocbench machines: list the machines in the database. Read-only. */
#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "cli.h"
#include "listing.h"

static const char usage_text[] =
	"usage: ocbench machines\n"
	"\n"
	"Lists the machines that have runs or ceilings in the database: id, fingerprint\n"
	"prefix (the machine's identity across databases), hostname, CPU, cores/threads,\n"
	"whether it is a virtual machine, and its number of runs.\n"
	"  --json       a JSON array with every machine column on stdout (global option)\n";

int cmd_machines(const struct ocb_global *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const char *const head[] = {"ID",    "FINGERPRINT", "HOSTNAME", "CPU",
					   "CORES", "VM",          "RUNS"};
	struct ocb_store *s = NULL;
	struct ocb_rows rows = {0};
	cJSON *arr = NULL;
	struct listing t;
	int rc = 0, c;

	listing_init(&t, 7, head, 1u << 0 | 1u << 4 | 1u << 6);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(usage_text, stdout); goto out;
		default: rc = cli_bad_option("machines", argc, argv); goto out;
		}
	}
	if (optind < argc) {
		rc = cli_usage_error("machines", "takes no arguments, not '%s'", argv[optind]);
		goto out;
	}
	if ((rc = cli_open_store(g, "machines", OCB_STORE_READ, &s)))
		goto out;
	if ((rc = ocb_db_list_machines(s, &rows))) {
		rc = cli_fail("machines", rc);
		goto out;
	}
	if (g->json && (!(arr = cJSON_CreateArray()) || listing_rows_json(&rows, arr))) {
		rc = cli_fail("machines", ocb_seterr(OCB_ENOMEM, "out of memory"));
		goto out;
	}
	for (size_t i = 0; !g->json && i < rows.nrow; i++) {
		const char *fp = ocb_rows_text(&rows, i, "fingerprint", "");
		const char *host = ocb_rows_text(&rows, i, "hostname", "");
		const char *cpu = ocb_rows_text(&rows, i, "cpu_model", "");
		if (listing_addf(&t, "%lld", (long long)ocb_rows_int(&rows, i, "id")) ||
		    listing_addf(&t, "%.12s", fp) ||
		    listing_addf(&t, "%s", *host ? host : "-") ||
		    listing_addf(&t, "%s", *cpu ? cpu : "-") ||
		    listing_addf(&t, "%d/%d", (int)ocb_rows_int(&rows, i, "cores"),
				 (int)ocb_rows_int(&rows, i, "threads")) ||
		    listing_addf(&t, "%s", ocb_rows_int(&rows, i, "is_vm") ? "yes" : "no") ||
		    listing_addf(&t, "%lld", (long long)ocb_rows_int(&rows, i, "runs"))) {
			rc = cli_fail("machines", OCB_ENOMEM);
			goto out;
		}
	}
	char empty[4200];
	snprintf(empty, sizeof empty, "no machines in %s", ocb_store_path(s));
	rc = listing_emit("machines", g->json, arr, &t, empty);
out:
	ocb_rows_release(&rows);
	cJSON_Delete(arr);
	listing_release(&t);
	ocb_store_close(s);
	return rc;
}
