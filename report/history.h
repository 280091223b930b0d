/* history: one case's median over runs in time order, with change points
 * (changepoint.h, E-Divisive means with a fixed-seed permutation test).
 *
 * CASE is "bench" (every parameter set, variant and thread count of it, one series
 * each) or "bench:{json params}" (that parameter set; the JSON is canonicalized, so key
 * order and spaces do not matter). Only complete runs and 'ok' results count; series
 * are per machine (optionally restricted to named machines). */
#ifndef OCB_HISTORY_H
#define OCB_HISTORY_H

#include <cJSON.h>
#include <stdio.h>

#include "changepoint.h"
#include "rdata.h"

struct ocb_hist_point {
	int64_t run_id;
	char started_at[32];
	char label[64];
	double median, ci_low, ci_high;
	int change;       /* 1: a new segment starts here */
	double p;         /* permutation p of that change point, else NaN */
	double shift;     /* segment mean / previous segment mean - 1 at a change, else NaN */
};

struct ocb_hist_series {
	char bench[64], variant[32], unit[16], host[64];
	char *params;     /* owned */
	int threads;
	int64_t machine_id;
	struct ocb_hist_point *pt; /* owned, time order */
	size_t n;
	size_t ncp;
};

struct ocb_hist {
	struct ocb_hist_series *s;
	size_t n;
};

/* Loads the series of `case_spec` (machines in sel->machine if nmachines > 0). Errors:
 * OCB_EINVAL (bad params JSON), OCB_ENOENT (no such case), OCB_EDB, OCB_ENOMEM. */
int ocb_hist_load(struct ocb_store *db, const char *case_spec, const struct ocb_sel *sel,
		  struct ocb_hist *out);
void ocb_hist_release(struct ocb_hist *h);

/* Marks change points on every series (o NULL: defaults). */
int ocb_hist_detect(struct ocb_hist *h, const struct ocb_cp_opts *o);

int ocb_hist_print(const struct ocb_hist *h, FILE *f);
cJSON *ocb_hist_json(const struct ocb_hist *h);

/* Plots every series into dir/history_<k>.{png,svg}: medians with CI bars vs run
 * order, segment means as steps, change points marked. *drawn = plots written.
 * OCB_EUNAVAIL without gnuplot. */
int ocb_hist_plot(const struct ocb_hist *h, const char *dir, int *drawn);

#endif
