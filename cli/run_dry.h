/* run_dry: `ocbench run --dry-run`, the cases a run would measure (see run_dry.c). */
#ifndef OCB_RUN_DRY_H
#define OCB_RUN_DRY_H

#include "../collect/runner.h"

/* Plans o's cases (suites, filter, threads, quick) and prints them, one per line (with
 * json: one JSON array); nothing is measured and no database is opened. The exit code:
 * 0, or 2 when no case matches or the plan fails. */
int run_dry(const struct ocb_run_opts *o, int json);

#endif
