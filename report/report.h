/* report: `ocbench report` — turns the store into the tables and plots papers use.
 *
 * Writes into opts->out_dir (created if missing):
 *   report.md          every table (Markdown, best per column in bold) + plot links
 *   report.tex         every table as a booktabs table float (\usepackage{booktabs})
 *   csv/<table>.csv    one CSV per table
 *   report.json        every table, the plots drawn and skipped, the selection
 *   index.html         one self-contained page: tables + the SVG plots inline
 *   roofline.{png,svg}, curve_<n>_{step,time,acc}.{png,svg}  (gnuplot)
 * Sections: the runs covered (uuid, label, suite, status, mode, machine, commit; a
 * selection mixing quick and full runs is refused, OCB_EINVAL, unless allow_mixed),
 * per-suite result tables (median, CI, GFLOP/s, GB/s, fraction of the
 * roofline bound, counters), compression-vs-accuracy tables (metric rows of the
 * quant_acc workloads, identities of common/workload_id.h), training curves, an MLPerf-style
 * time-to-train summary, and the roofline plot with the machines' measured ceilings.
 * Without gnuplot the tables are still written and the plots are listed as skipped. */
#ifndef OCB_REPORT_H
#define OCB_REPORT_H


#include "rdata.h"

enum {
	OCB_FMT_MD = 1,
	OCB_FMT_LATEX = 2,
	OCB_FMT_CSV = 4,
	OCB_FMT_HTML = 8,
	OCB_FMT_JSON = 16,
	OCB_FMT_ALL = 31,
};

struct ocb_report_opts {
	struct ocb_sel sel;     /* which runs */
	const char *out_dir;    /* default "ocbench-report" */
	unsigned formats;       /* OCB_FMT_*; 0 means all */
	const char *version;    /* ocbench version for the MLPerf "framework" column */
	int allow_mixed;        /* cover quick and full runs together (else refused) */
};

struct ocb_report_summary {
	int ntables;
	int nplots;             /* drawn */
	int nskipped;           /* not drawn (gnuplot missing or failed) */
	char skipped[512];      /* their names, comma-separated */
	int nresults;           /* result rows reported */
};

/* Parses "md,latex,csv,html,json" into OCB_FMT_* bits. OCB_EINVAL names a bad word. */
int ocb_report_formats(const char *list, unsigned *out);

/* Writes the report of the store behind `db`. Errors: OCB_EPERM/OCB_EIO (output),
 * OCB_EDB, OCB_ENOMEM; a selection that matches nothing still writes an (empty)
 * report. *sum may be NULL. */
int ocb_report_write(struct ocb_store *db, const struct ocb_report_opts *o,
		     struct ocb_report_summary *sum);

#endif
