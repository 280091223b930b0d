/* ocbench report: tables and plots from the store (report/report.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../db/store_query.h"
#include "../report/report.h"
#include "cli.h"

static void help(void)
{
	printf("usage: ocbench report [--run ID | --latest | --machines M[,M2]] [--out DIR]\n"
	       "                      [--format md,latex,csv,html,json] [--allow-mixed]\n\n"
	       "Writes the report of the database into DIR (default ./ocbench-report/):\n"
	       "  index.html         one self-contained page: every table, the SVG plots inline\n"
	       "  report.md          Markdown tables (best per column in bold) + plot links\n"
	       "  report.tex         standalone article: pdflatex report.tex (tables + figures)\n"
	       "  tex/<table>.tex    each table alone, fits a two-column article (booktabs)\n"
	       "  csv/<table>.csv    one CSV per table\n"
	       "  report.json        the same tables as JSON, and which plots were drawn\n"
	       "  roofline.png/.svg  measured ceilings + every kernel result (log-log)\n"
	       "  curve_*.png/.svg   training loss vs step and wall time, accuracy vs epoch\n"
	       "Tables: per-suite results (median, CI, GFLOP/s, GB/s, fraction of the roofline\n"
	       "bound, counters), compression vs accuracy, MLPerf-style time to train.\n\n"
	       "  --run ID        one run (id, uuid prefix or label)\n"
	       "  --latest        the newest complete run\n"
	       "  --machine(s) M,M2  the newest complete run of each suite on these machines\n"
	       "                  (hostname or fingerprint prefix): one roofline with every\n"
	       "                  machine's ceilings and points, a normalised roofline (%% of\n"
	       "                  each machine's own roof) and a machines comparison table\n"
	       "  (default)       the newest complete run of each suite\n"
	       "  --out DIR       output directory (created)\n"
	       "  --format LIST   some of md,latex,csv,html,json (default all)\n"
	       "  --allow-mixed   cover quick and full runs together (refused otherwise:\n"
	       "                  their sizes and budgets differ; exit 2 naming the runs)\n"
	       "The report begins with the runs it covers: uuid, label, suite, status, mode\n"
	       "(quick/full), machine and commit.\n"
	       "Plots need gnuplot; without it the tables are written and the plots listed\n"
	       "as skipped.\n");
}

int cmd_report(const struct ocb_global *g, int argc, char **argv)
{
	static const struct option opts[] = {{"run", required_argument, NULL, 'r'},
					     {"latest", no_argument, NULL, 'l'},
					     {"machine", required_argument, NULL, 'm'},
					     {"machines", required_argument, NULL, 'm'},
					     {"out", required_argument, NULL, 'o'},
					     {"format", required_argument, NULL, 'f'},
					     {"allow-mixed", no_argument, NULL, 'x'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct ocb_report_opts o;
	struct ocb_report_summary sum;
	struct ocb_store *s = NULL;
	const char *run = NULL, *machines = NULL;
	int latest = 0, c, rc;

	memset(&o, 0, sizeof o);
	o.out_dir = "ocbench-report";
	o.version = OCB_VERSION;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":r:lm:o:f:xh", opts, NULL)) != -1) {
		switch (c) {
		case 'r': run = optarg; break;
		case 'l': latest = 1; break;
		case 'm': machines = optarg; break;
		case 'o':
			if (!*optarg)
				return cli_usage_error("report", "--out needs a directory");
			o.out_dir = optarg;
			break;
		case 'f':
			if (ocb_report_formats(optarg, &o.formats))
				return cli_usage_error("report", "%s", ocb_lasterr());
			break;
		case 'x': o.allow_mixed = 1; break;
		case 'h': help(); return 0;
		default: return cli_bad_option("report", argc, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("report", "unexpected argument '%s'", argv[optind]);
	if (!!run + latest + !!machines > 1)
		return cli_usage_error("report", "--run, --latest and --machine exclude each other");
	if ((rc = cli_open_store(g, "report", OCB_STORE_READ, &s)))
		return rc;
	if (run) {
		o.sel.mode = OCB_SEL_RUN;
		rc = ocb_store_run_resolve(s, run, &o.sel.run_id);
	} else if (latest) {
		o.sel.mode = OCB_SEL_LATEST;
	} else if (machines) {
		rc = ocb_sel_machines(s, machines, &o.sel);
	}
	if (rc || (rc = ocb_report_write(s, &o, &sum))) {
		rc = cli_fail("report", rc);
		goto out;
	}
	if (!g->quiet) {
		fprintf(stderr, "report: %d table(s) from %d result(s), %d plot(s) in %s/ (open %s/index.html)\n",
			sum.ntables, sum.nresults, sum.nplots, o.out_dir, o.out_dir);
		if (sum.nskipped)
			fprintf(stderr, "report: %d plot(s) skipped: %s\n", sum.nskipped, sum.skipped);
	}
	rc = 0;
out:
	ocb_store_close(s);
	return rc;
}
