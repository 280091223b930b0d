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
	sqlite3_stmt *st = NULL;
	cJSON *arr = NULL;
	struct listing t;
	int rc = 0, c, step;

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
	if (sqlite3_prepare_v2(ocb_store_handle(s),
			       "SELECT m.*, (SELECT count(*) FROM run WHERE machine_id = m.id) AS runs"
			       " FROM machine m ORDER BY m.id",
			       -1, &st, NULL) != SQLITE_OK) {
		rc = cli_fail("machines", ocb_seterr(OCB_EDB, "%s: %s", ocb_store_path(s),
						     sqlite3_errmsg(ocb_store_handle(s))));
		goto out;
	}
	if (g->json && !(arr = cJSON_CreateArray())) {
		rc = cli_fail("machines", ocb_seterr(OCB_ENOMEM, "out of memory"));
		goto out;
	}
	/* column positions by name: SELECT m.* follows the table, which may gain columns */
	int ci[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
	static const char *const want[8] = {"id",      "fingerprint", "hostname", "cpu_model",
					    "cores",   "threads",     "is_vm",    "runs"};
	for (int k = 0; k < sqlite3_column_count(st); k++)
		for (int w = 0; w < 8; w++)
			if (strcmp(sqlite3_column_name(st, k), want[w]) == 0)
				ci[w] = k;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (g->json) {
			cJSON *o = listing_row_json(st);
			if (!o || !cJSON_AddItemToArray(arr, o)) {
				cJSON_Delete(o);
				rc = cli_fail("machines", ocb_seterr(OCB_ENOMEM, "out of memory"));
				goto out;
			}
			continue;
		}
		const char *fp = (const char *)sqlite3_column_text(st, ci[1]);
		const char *host = (const char *)sqlite3_column_text(st, ci[2]);
		const char *cpu = (const char *)sqlite3_column_text(st, ci[3]);
		if (listing_addf(&t, "%lld", (long long)sqlite3_column_int64(st, ci[0])) ||
		    listing_addf(&t, "%.12s", fp ? fp : "") ||
		    listing_addf(&t, "%s", host && *host ? host : "-") ||
		    listing_addf(&t, "%s", cpu && *cpu ? cpu : "-") ||
		    listing_addf(&t, "%d/%d", sqlite3_column_int(st, ci[4]),
				 sqlite3_column_int(st, ci[5])) ||
		    listing_addf(&t, "%s", sqlite3_column_int(st, ci[6]) ? "yes" : "no") ||
		    listing_addf(&t, "%lld", (long long)sqlite3_column_int64(st, ci[7]))) {
			rc = cli_fail("machines", OCB_ENOMEM);
			goto out;
		}
	}
	if (step != SQLITE_DONE) {
		rc = cli_fail("machines", ocb_seterr(OCB_EDB, "%s: %s", ocb_store_path(s),
						     sqlite3_errmsg(ocb_store_handle(s))));
		goto out;
	}
	char empty[4200];
	snprintf(empty, sizeof empty, "no machines in %s", ocb_store_path(s));
	rc = listing_emit("machines", g->json, arr, &t, empty);
out:
	sqlite3_finalize(st);
	cJSON_Delete(arr);
	listing_release(&t);
	ocb_store_close(s);
	return rc;
}
