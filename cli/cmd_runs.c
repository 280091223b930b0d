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
	sqlite3_stmt *st = NULL;
	cJSON *arr = NULL;
	struct listing t;
	int rc = 0, c, step;

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
	if (sqlite3_prepare_v2(
		    ocb_store_handle(s),
		    "SELECT r.id, r.uuid, r.started_at, r.finished_at, r.suite, r.label,"
		    " ocb_status(r.status, r.pid, r.hostname, r.boot_id, r.started_at) AS status,"
		    " r.machine_id, m.hostname, (SELECT count(*) FROM result WHERE run_id = r.id)"
		    " AS results FROM run r LEFT JOIN machine m ON m.id = r.machine_id"
		    " WHERE (?1 IS NULL OR instr(',' || r.suite || ',', ',' || ?1 || ',') > 0"
		    "        OR r.suite = 'all')"
		    " AND (?2 IS NULL OR CAST(m.id AS TEXT) = ?2 OR m.hostname = ?2"
		    "      OR substr(m.fingerprint, 1, length(?2)) = lower(?2))"
		    " ORDER BY r.started_at DESC, r.id DESC LIMIT ?3",
		    -1, &st, NULL) != SQLITE_OK) {
		rc = cli_fail("runs", ocb_seterr(OCB_EDB, "%s: %s", ocb_store_path(s),
						 sqlite3_errmsg(ocb_store_handle(s))));
		goto out;
	}
	if (suite)
		sqlite3_bind_text(st, 1, suite, -1, SQLITE_STATIC);
	if (mach)
		sqlite3_bind_text(st, 2, mach, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, limit);
	if (g->json && !(arr = cJSON_CreateArray())) {
		rc = cli_fail("runs", ocb_seterr(OCB_ENOMEM, "out of memory"));
		goto out;
	}
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (g->json) {
			cJSON *o = listing_row_json(st);
			if (!o || !cJSON_AddItemToArray(arr, o)) {
				cJSON_Delete(o);
				rc = cli_fail("runs", ocb_seterr(OCB_ENOMEM, "out of memory"));
				goto out;
			}
			continue;
		}
		const char *label = (const char *)sqlite3_column_text(st, 5);
		const char *host = (const char *)sqlite3_column_text(st, 8);
		if (listing_addf(&t, "%lld", (long long)sqlite3_column_int64(st, 0)) ||
		    listing_addf(&t, "%s", (const char *)sqlite3_column_text(st, 2)) ||
		    listing_addf(&t, "%s", (const char *)sqlite3_column_text(st, 4)) ||
		    listing_addf(&t, "%s", label ? label : "-") ||
		    listing_addf(&t, "%s", (const char *)sqlite3_column_text(st, 6)) ||
		    listing_addf(&t, "%s (%lld)", host ? host : "?",
				 (long long)sqlite3_column_int64(st, 7)) ||
		    listing_addf(&t, "%lld", (long long)sqlite3_column_int64(st, 9))) {
			rc = cli_fail("runs", OCB_ENOMEM);
			goto out;
		}
	}
	if (step != SQLITE_DONE) {
		rc = cli_fail("runs", ocb_seterr(OCB_EDB, "%s: %s", ocb_store_path(s),
						 sqlite3_errmsg(ocb_store_handle(s))));
		goto out;
	}
	char empty[4200];
	snprintf(empty, sizeof empty, "no runs%s in %s", suite || mach ? " match" : "",
		 ocb_store_path(s));
	rc = listing_emit("runs", g->json, arr, &t, empty);
out:
	sqlite3_finalize(st);
	cJSON_Delete(arr);
	listing_release(&t);
	ocb_store_close(s);
	return rc;
}
