/* ocbench merge OTHER.db: runs of another database into this one (db/merge.h). */
#include <stdio.h>

#include "../common/ocb_error.h"
#include "../db/merge.h"
#include "cli.h"

static void help(void)
{
	printf("usage: ocbench merge OTHER.db\n\n"
	       "Copies the machines (by fingerprint), runs (by uuid), results, samples,\n"
	       "counters, metrics and ceilings of OTHER.db into the database (--db), with new\n"
	       "row ids, in one transaction. Runs already present are skipped, so merging the\n"
	       "same file twice adds nothing. OTHER.db is opened read-only; a file that is\n"
	       "not an ocbench database, or is from another schema version, is refused.\n");
}

int cmd_merge(const struct ocb_global *g, int argc, char **argv)
{
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	struct ocb_store *s = NULL;
	struct ocb_merge_stats st;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'h') {
			help();
			return 0;
		}
		return cli_bad_option("merge", argc, argv);
	}
	if (argc - optind != 1)
		return cli_usage_error("merge", "wants one OTHER.db (see 'ocbench merge --help')");
	if ((rc = cli_open_store(g, "merge", OCB_STORE_WRITE, &s)))
		return rc;
	if ((rc = ocb_merge_db(s, argv[optind], &st))) {
		rc = cli_fail("merge", rc);
		goto out;
	}
	if (g->json)
		printf("{\"machines\":%ld,\"runs\":%ld,\"runs_skipped\":%ld,\"results\":%ld,"
		       "\"samples\":%ld,\"counters\":%ld,\"metrics\":%ld,\"ceilings\":%ld}\n",
		       st.machines, st.runs, st.runs_skipped, st.results, st.samples, st.counters,
		       st.metrics, st.ceilings);
	else
		printf("merged %s: +%ld machines, +%ld runs (%ld already here), +%ld results, "
		       "+%ld samples, +%ld counters, +%ld metrics, +%ld ceilings\n",
		       argv[optind], st.machines, st.runs, st.runs_skipped, st.results, st.samples,
		       st.counters, st.metrics, st.ceilings);
	rc = 0;
out:
	ocb_store_close(s);
	return rc;
}
