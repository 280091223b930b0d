/* rctx: what the report's sections share while one report is built (internal to
 * report/). The context owns its tables and plot records; report.c releases them. */
#ifndef OCB_RCTX_H
#define OCB_RCTX_H

#include "rdata.h"
#include "report.h"
#include "table.h"

struct ocb_rplot {
	char base[64];  /* file-safe base name: out_dir/base.{png,svg} */
	char *title;    /* may hold database text */
	int drawn;      /* 1 if gnuplot wrote both files */
	char *why;      /* why not drawn, or NULL */
};

struct ocb_rctx {
	struct ocb_store *db;
	const struct ocb_report_opts *o;
	const char *out;             /* output directory */
	struct ocb_rset rs;          /* the selected results (all statuses) */
	struct ocb_mceil *mc;        /* ceilings of the machines in rs */
	size_t nmc;
	struct ocb_table *tables;
	size_t ntables;
	struct ocb_rplot *plots;
	size_t nplots;
	struct ocb_run *runs;        /* the runs the report covers (sec_runs.c) */
	size_t nruns;
	char covers[1024];           /* one line: how many runs, machines, commits, modes */
	char **heads;                /* headline figures for the page's summary (owned) */
	size_t nheads;
};

/* Adds a headline figure (printf) to the summary. OCB_ENOMEM. */
int ocb_rctx_headline(struct ocb_rctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends a table (zeroed) and returns it in *t; ocb_table_init() it next. */
int ocb_rctx_table(struct ocb_rctx *x, struct ocb_table **t);
/* Drops the last table (after a failed init or when it stayed empty). */
void ocb_rctx_table_drop(struct ocb_rctx *x);
/* Records a plot (drawn or not; why copied when not). */
int ocb_rctx_plot(struct ocb_rctx *x, const char *base, const char *title, int drawn,
		  const char *why);

/* OCB_EINVAL naming every run when r[0..n) holds both quick and full runs and
 * !allow_mixed; else OCB_OK. */
int ocb_runs_check_mixed(const struct ocb_run *r, size_t n, int allow_mixed);
/* "N run(s) on M machine(s) (hosts); commits ...; modes ..." into buf. */
void ocb_runs_summary(const struct ocb_run *r, size_t n, char *buf, size_t len);

/* The provenance caption of the covered runs with ids[0..n) (every covered run when n
 * is 0): "host (CPU); runs 1 e5147def, 2 ...; 2026-12-01; commit abc; ocbench 0.1.0".
 * *out malloc'd (caller frees). OCB_ENOMEM. */
int ocb_rctx_prov(const struct ocb_rctx *x, const int64_t *ids, size_t n, char **out);

/* index.html (report/html.c) into f. OCB_EIO. */
int ocb_report_html(struct ocb_rctx *x, const char *when, const char *what, FILE *f);

/* Sections, each adds tables and plots to x. */
int ocb_rsec_runs(struct ocb_rctx *x);
int ocb_rsec_results(struct ocb_rctx *x);
int ocb_rsec_kernels(struct ocb_rctx *x);
int ocb_rsec_history(struct ocb_rctx *x);
int ocb_rsec_quant(struct ocb_rctx *x);
int ocb_rsec_compress(struct ocb_rctx *x);
int ocb_rsec_inspect(struct ocb_rctx *x);
int ocb_rsec_curves(struct ocb_rctx *x);
int ocb_rsec_mlperf(struct ocb_rctx *x);
int ocb_rsec_roofline(struct ocb_rctx *x);
int ocb_rsec_ternary(struct ocb_rctx *x);
int ocb_rsec_sparse(struct ocb_rctx *x);

#endif
