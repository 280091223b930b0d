/* ocbench export: a run as Google Benchmark JSON, CSV or JSON (report/export.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../db/store_query.h"
#include "../report/export.h"
#include "cli.h"

static void help(void)
{
	printf("usage: ocbench export [--run ID] --format gbench|csv|json [--out FILE]\n\n"
	       "Writes one run (default: the newest complete run) to FILE or stdout:\n"
	       "  gbench  Google Benchmark JSON: name \"bench/params/threads:N\" with\n"
	       "          family_index and per_family_instance_index, one 'iteration' entry\n"
	       "          per repetition with its own real_time, cpu_time (process CPU time)\n"
	       "          and rates, aggregates mean/median/stddev/cv, context with load_avg\n"
	       "          and mhz_per_cpu at run start; Google Benchmark's tools/compare.py\n"
	       "          reads it (1- and 2-thread cases stay separate benchmarks)\n"
	       "  csv     one row per result (statistics, GFLOP/s, GB/s, roofline fraction)\n"
	       "  json    the run, its machine, results with samples and counters, metrics\n");
}

int cmd_export(const struct ocb_global *g, int argc, char **argv)
{
	static const struct option opts[] = {{"run", required_argument, NULL, 'r'},
					     {"format", required_argument, NULL, 'f'},
					     {"out", required_argument, NULL, 'o'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct ocb_store *s = NULL;
	const char *run = NULL, *out = NULL, *fmtname = NULL;
	enum ocb_export_fmt fmt;
	FILE *f = NULL;
	int64_t run_id = 0;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":r:f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r': run = optarg; break;
		case 'f': fmtname = optarg; break;
		case 'o': out = optarg; break;
		case 'h': help(); return 0;
		default: return cli_bad_option("export", argc, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("export", "unexpected argument '%s'", argv[optind]);
	if (!fmtname)
		return cli_usage_error("export", "--format gbench|csv|json is required");
	if (ocb_export_format(fmtname, &fmt))
		return cli_usage_error("export", "%s", ocb_lasterr());
	if (out && !*out)
		return cli_usage_error("export", "--out needs a file name");
	if ((rc = cli_open_store(g, "export", OCB_STORE_READ, &s)))
		return rc;
	rc = run ? ocb_store_run_resolve(s, run, &run_id) : ocb_export_latest(s, &run_id);
	if (rc) {
		rc = cli_fail("export", rc);
		goto out;
	}
	f = out ? fopen(out, "w") : stdout;
	if (!f) {
		rc = cli_usage_error("export", "%s: %s", out, strerror(errno));
		goto out;
	}
	if ((rc = ocb_export_run(s, run_id, fmt, f))) {
		rc = cli_fail("export", rc);
		if (out) {
			fclose(f);
			f = NULL;
			unlink(out);
		}
		goto out;
	}
	if (out && fclose(f) != 0) {
		f = NULL;
		rc = cli_fail("export", ocb_seterr(OCB_EIO, "%s: write failed", out));
		goto out;
	}
	f = NULL;
	rc = 0;
out:
	if (f && f != stdout)
		fclose(f);
	ocb_store_close(s);
	return rc;
}
