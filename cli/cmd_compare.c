/* ocbench compare BASE CAND: per-case statistical comparison of two runs (report/compare.h).
 * Exit 0: no case significantly slower beyond the threshold; 1: at least one; 2: bad
 * input; 3: run-time failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../report/compare.h"
#include "cli.h"

static void help(void)
{
	printf("usage: ocbench compare BASE CAND [--threshold 5%%] [--alpha 0.01] [--json]\n\n"
	       "Compares two runs case by case (bench, params, threads): ratio of medians\n"
	       "CAND/BASE with a CI, Mann-Whitney U p-value on the raw samples, and a verdict:\n"
	       "  same    p >= alpha\n"
	       "  noise   significant but within the threshold (or the 1%% noise floor)\n"
	       "  slower  significant and more than the threshold worse\n"
	       "  faster  significant and more than the threshold better\n"
	       "BASE and CAND are run ids, uuids, labels, 'latest', or machines (hostname or\n"
	       "fingerprint prefix: that machine's newest complete run). Runs on different\n"
	       "machines also show each case's fraction of its machine's roofline bound.\n"
	       "Parameters are shown whole; one longer than the column ends in ...[k] and is\n"
	       "written in full under the table. Cases present (ok) in one run only are\n"
	       "listed as 'in base only' / 'in cand only'. A warning says when a quick run is\n"
	       "compared with a full one, or a run with itself.\n"
	       "MDE: per case, the smallest change the comparison could detect (alpha, 80%%\n"
	       "power) from the samples' spread and the case's earlier runs here ('>=' when\n"
	       "it has none); a warning counts the cases whose MDE is above the threshold.\n"
	       "Canaries: the drift canaries each run measured at its start, middle and end;\n"
	       "a warning when the machine moved by more than the threshold within a run or\n"
	       "between them. The two runs of one 'ocbench ab' pair are judged per round by\n"
	       "ab's paired test (Wilcoxon signed-rank, bootstrap CI of the median ratio).\n\n"
	       "  --threshold X  relative change that matters: 0.05 or 5%% (default 5%%)\n"
	       "  --alpha A      significance level (default 0.01)\n"
	       "  --json         machine-readable output\n\n"
	       "Exit status: 0 no regression, 1 a case is significantly slower, 2 bad input.\n");
}

int cmd_compare(const struct ocb_global *g, int argc, char **argv)
{
	static const struct option opts[] = {{"threshold", required_argument, NULL, 't'},
					     {"alpha", required_argument, NULL, 'a'},
					     {"json", no_argument, NULL, 'j'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct ocb_cmp_opts co;
	struct ocb_cmp cmp;
	struct ocb_store *s = NULL;
	int json = g->json, c, rc;
	int64_t base = 0, cand = 0;

	ocb_cmp_defaults(&co);
	memset(&cmp, 0, sizeof cmp);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:a:jh", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (cli_parse_double("compare", "--threshold", optarg, 0, 10, &co.threshold))
				return 2;
			break;
		case 'a':
			if (cli_parse_double("compare", "--alpha", optarg, 1e-12, 1, &co.alpha))
				return 2;
			break;
		case 'j': json = 1; break;
		case 'h': help(); return 0;
		default: return cli_bad_option("compare", argc, argv);
		}
	}
	if (argc - optind != 2)
		return cli_usage_error("compare", "wants BASE and CAND (see 'ocbench compare --help')");
	if ((rc = cli_open_store(g, "compare", OCB_STORE_READ, &s)))
		return rc;
	if ((rc = ocb_cmp_resolve(s, argv[optind], &base)) ||
	    (rc = ocb_cmp_resolve(s, argv[optind + 1], &cand)) ||
	    (rc = ocb_cmp_runs(s, base, cand, &co, &cmp))) {
		rc = cli_fail("compare", rc);
		goto out;
	}
	if (cmp.n == 0) {
		rc = cli_usage_error("compare",
				     "runs %lld (%s) and %lld (%s) have no case in common (%zu in "
				     "base only, %zu in cand only)",
				     (long long)base, cmp.base.shown, (long long)cand, cmp.cand.shown,
				     cmp.nonly[0], cmp.nonly[1]);
		goto out;
	}
	for (int i = 0; json && i < cmp.nwarn; i++) /* the text output carries them itself */
		fprintf(stderr, "ocbench: compare: warning: %s\n", cmp.warn[i]);
	if (json) {
		if ((rc = cli_print_json("compare", ocb_cmp_json(&cmp), 0)) != 0)
			goto out;
	} else {
		ocb_cmp_print(&cmp, stdout);
	}
	fflush(stdout);
	rc = cmp.count[OCB_V_SLOWER] ? 1 : 0;
out:
	ocb_cmp_release(&cmp);
	ocb_store_close(s);
	return rc;
}
