/* ocbench history CASE: a case's medians over runs with change points (report/history.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../report/history.h"
#include "cli.h"

static void help(void)
{
	printf("usage: ocbench history CASE [--machine M[,M2]] [--out DIR] [--json]\n\n"
	       "Shows the median of CASE in every complete run, oldest first, and marks the\n"
	       "change points found by E-Divisive means (Matteson & James 2014, as in Apache\n"
	       "Otava) with a permutation test (199 shuffles, fixed seed, alpha 0.05).\n"
	       "CASE is a bench name ('gemv_q4_0': every parameter set, one series each) or\n"
	       "a bench with parameters ('gemv_q4_0:{\"k\":4096,\"n\":4096}').\n\n"
	       "  --machine M   only these machines (hostname or fingerprint prefix)\n"
	       "  --out DIR     also plot each series to DIR/history_<n>.png and .svg\n"
	       "  --json        machine-readable output\n");
}

int cmd_history(const struct ocb_global *g, int argc, char **argv)
{
	static const struct option opts[] = {{"machine", required_argument, NULL, 'm'},
					     {"out", required_argument, NULL, 'o'},
					     {"json", no_argument, NULL, 'j'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct ocb_store *s = NULL;
	struct ocb_hist h = {0};
	struct ocb_sel sel = {0};
	const char *machines = NULL, *out = NULL;
	int json = g->json, c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":m:o:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'm': machines = optarg; break;
		case 'o': out = optarg; break;
		case 'j': json = 1; break;
		case 'h': help(); return 0;
		default: return cli_bad_option("history", argc, argv);
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("history", "wants one CASE (see 'ocbench history --help')");
	if (out && !*out)
		return cli_usage_error("history", "--out needs a directory");
	if ((rc = cli_open_store(g, "history", OCB_STORE_READ, &s)))
		return rc;
	if ((machines && (rc = ocb_sel_machines(s, machines, &sel))) ||
	    (rc = ocb_hist_load(s, argv[optind], &sel, &h)) || (rc = ocb_hist_detect(&h, NULL))) {
		rc = cli_fail("history", rc);
		goto out;
	}
	if (json) {
		if ((rc = cli_print_json("history", ocb_hist_json(&h), 0)) != 0)
			goto out;
	} else {
		ocb_hist_print(&h, stdout);
	}
	if (out) {
		int drawn = 0;
		rc = ocb_hist_plot(&h, out, &drawn);
		if (rc == OCB_EUNAVAIL) {
			fprintf(stderr, "ocbench: history: %s\n", ocb_lasterr());
		} else if (rc) {
			rc = cli_fail("history", rc);
			goto out;
		} else if (!g->quiet) {
			fprintf(stderr, "history: %d plot(s) in %s/\n", drawn, out);
		}
	}
	rc = 0;
out:
	ocb_hist_release(&h);
	ocb_store_close(s);
	return rc;
}
