/* ocbench runs: list the runs in the database, newest first. Read-only. */
#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "cli.h"
#include "listing.h"

static const char usage_text[] =
	"usage: ocbench runs [--suite S] [--machine M] [--limit N]\n"
	"\n"
	"Lists the runs in the database, newest first: id, start time (UTC), suite, label,\n"
	"status (running|complete|failed|aborted), machine and number of results.\n"
	"A run whose process (pid, host, boot) is gone shows 'aborted' at once; one\n"
	"written on another host shows 'running(other host)'.\n"
	"\n"
	"  --suite S    only runs that included suite S\n"
	"  --machine M  only runs on machine M (its id, hostname or fingerprint prefix)\n"
	"  --limit N    at most N runs (default 50)\n"
	"  --json       a JSON array on stdout (global option)\n";

int cmd_runs(const struct ocb_global *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{"suite", required_argument, NULL, 's'},
		{"machine", required_argument, NULL, 'm'},
		{"limit", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const char *const head[] = {"ID", "STARTED", "SUITE", "LABEL", "STATUS",
					   "MACHINE", "RESULTS"};
	const char *suite = NULL, *mach = NULL;
	long limit = 50;
	struct ocb_store *s = NULL;
	struct ocb_rows rows = {0};
	cJSON *arr = NULL;
	struct listing t;
	int rc = 0, c;

	listing_init(&t, 7, head, 1u << 0 | 1u << 6);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:m:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': suite = optarg; break;
		case 'm': mach = optarg; break;
		case 'n':
			if ((rc = cli_parse_long("runs", "--limit", optarg, 1, 1000000000L, &limit)))
				goto out;
			break;
		case 'h': fputs(usage_text, stdout); goto out;
		case ':':
			rc = cli_usage_error("runs", "%s needs a value", argv[optind - 1]);
			goto out;
		default: rc = cli_bad_option("runs", argc, argv); goto out;
		}
	}
	if (optind < argc) {
		rc = cli_usage_error("runs", "unexpected argument '%s' (see 'ocbench runs --help')",
				     argv[optind]);
		goto out;
	}
	if ((rc = cli_open_store(g, "runs", OCB_STORE_READ, &s)))
		goto out;
	if ((rc = ocb_db_list_runs(s, suite, mach, limit, &rows))) {
		rc = cli_fail("runs", rc);
		goto out;
	}
	if (g->json && (!(arr = cJSON_CreateArray()) || listing_rows_json(&rows, arr))) {
		rc = cli_fail("runs", ocb_seterr(OCB_ENOMEM, "out of memory"));
		goto out;
	}
	for (size_t i = 0; !g->json && i < rows.nrow; i++) {
		if (listing_addf(&t, "%lld", (long long)ocb_rows_int(&rows, i, "id")) ||
		    listing_addf(&t, "%s", ocb_rows_text(&rows, i, "started_at", "")) ||
		    listing_addf(&t, "%s", ocb_rows_text(&rows, i, "suite", "")) ||
		    listing_addf(&t, "%s", ocb_rows_text(&rows, i, "label", "-")) ||
		    listing_addf(&t, "%s", ocb_rows_text(&rows, i, "status", "")) ||
		    listing_addf(&t, "%s (%lld)", ocb_rows_text(&rows, i, "hostname", "?"),
				 (long long)ocb_rows_int(&rows, i, "machine_id")) ||
		    listing_addf(&t, "%lld", (long long)ocb_rows_int(&rows, i, "results"))) {
			rc = cli_fail("runs", OCB_ENOMEM);
			goto out;
		}
	}
	char empty[4200];
	snprintf(empty, sizeof empty, "no runs%s in %s", suite || mach ? " match" : "",
		 ocb_store_path(s));
	rc = listing_emit("runs", g->json, arr, &t, empty);
out:
	ocb_rows_release(&rows);
	cJSON_Delete(arr);
	listing_release(&t);
	ocb_store_close(s);
	return rc;
}
