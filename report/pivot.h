/* pivot: the paper-shaped tables of the report, built from long-form values.
 *
 * A pivot has row keys (one or more label columns: "format", or "method, bits, group"),
 * column keys (e.g. "k512 n4096, 1 thr"; one "" key for a plain table) and measures
 * (headers with their unit: "GB/s", "% of roof"). Every value is put with its 95% CI
 * (NaN when none) and the run it comes from. ocb_pivot_emit() turns it into a report
 * table: one column per (column key, measure), the column key as the group header over
 * its measures (with one measure: the key is the header, the measure spans them all);
 * digits from the CI (sigfig.h); best per column in bold where the measure says which
 * way is better; a caption with the provenance of the runs it used (machine, CPU, run
 * ids, commit, date, ocbench version). Rows and column keys are sorted naturally
 * ("n=512" before "n=4096", common/ocb_natcmp.h) unless the pivot keeps insertion order.
 *
 * Lifecycle: ocb_pivot_init, put..., ocb_pivot_emit (into the report context),
 * ocb_pivot_release. Errors: OCB_ENOMEM, OCB_EINVAL (too many keys or measures). */
#ifndef OCB_PIVOT_H
#define OCB_PIVOT_H

#include <stddef.h>
#include <stdint.h>

#include "table.h"

#define OCB_PIVOT_MAX_KEYS 4
#define OCB_PIVOT_MAX_MEAS 16

struct ocb_rctx;

struct ocb_pmeasure {
	char name[48];     /* column header, unit included: "GB/s", "val. perplexity" */
	signed char best;  /* enum ocb_best */
	int sig;           /* significant digits when a value has no CI (0: 3) */
	const char *fmt;   /* or: printf format (one double) for a value without a CI */
};

struct ocb_pentry {
	size_t row, col, meas;
	double v, lo, hi;
};

struct ocb_pivot {
	char id[64];
	char *title, *note;
	size_t nkey;
	char keyname[OCB_PIVOT_MAX_KEYS][32];
	size_t nmeas;
	struct ocb_pmeasure meas[OCB_PIVOT_MAX_MEAS];
	int keep_order;              /* 1: rows and column keys in insertion order */
	enum ocb_table_form form;    /* of the emitted table (default paper) */
	char **rowkey;               /* [nrows * nkey] */
	size_t nrows;
	char **colkey;               /* [ncolk] */
	size_t ncolk;
	struct ocb_pentry *e;
	size_t ne, cap;
	int64_t *runs;               /* distinct run ids the values come from */
	size_t nruns;
};

/* Sets up p (no allocation of p itself). keynames[0..nkey), measures [0..nmeas). */
int ocb_pivot_init(struct ocb_pivot *p, const char *id, const char *title, size_t nkey,
		   const char *const *keynames, size_t nmeas, const struct ocb_pmeasure *meas);
/* Frees what p owns; NULL-safe. */
void ocb_pivot_release(struct ocb_pivot *p);
/* Puts value v (CI [lo, hi], NaN: none) of measure `meas` at row keys rk[0..nkey) and
 * column key ck (NULL = ""). A second put at the same place replaces the value.
 * run_id < 0: no run. NaN values are ignored (the cell stays empty). */
int ocb_pivot_put(struct ocb_pivot *p, const char *const *rk, const char *ck, size_t meas,
		  double v, double lo, double hi, int64_t run_id);
/* Sets the note under the table (copied). */
int ocb_pivot_note(struct ocb_pivot *p, const char *note);
/* Adds the table to the report context x (nothing when p holds no value). */
int ocb_pivot_emit(const struct ocb_pivot *p, struct ocb_rctx *x);

#endif
