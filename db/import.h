/* import: Google Benchmark JSON results (REFERENCE.md §4) as a new ocbench run.
 *
 * The run gets suite "import", status "complete", started_at = the file's context.date
 * (RFC 3339 with an offset, converted to UTC; now when absent or unreadable), and the
 * file's "context" object in config_json. Entries of "benchmarks" are grouped by run_name
 * (else name):
 *   - run_type "iteration" (or absent) entries are the samples: real_time converted
 *     from time_unit (ns, us, ms, s; default ns) to seconds, one per entry (Google
 *     Benchmark's real_time is already per iteration);
 *   - a group with only aggregates uses its "median" (else "mean") as one sample;
 *   - entries with "error_occurred": true are skipped.
 * Statistics are recomputed from the samples (ocb_stats). The name "BENCH/REST" gives
 * bench = BENCH and params = REST without its "threads:N" part when REST is a JSON
 * object (ocbench's own export), else {"args":"REST"}; threads from "threads" (default
 * 1), so cases that differ only in threads stay apart; variant from "label" (else
 * "gbench"). bytes_per_second and flops_per_second become the work model (bytes, flops
 * of one repetition = rate x its real_time, median over the repetitions). Other numeric
 * fields (user counters, items_per_second) become available counters, valued by their
 * median over the group's iterations, or by the mean aggregate's value when only it
 * has them (ocbench's export puts PAPI counters there).
 * The whole file is validated before anything is written, then the run and all its
 * results are written in one transaction: a malformed file adds no row. */
#ifndef OCB_IMPORT_H
#define OCB_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct ocb_import_opts {
	int64_t machine_id;   /* the machine the run is stored on */
	const char *label;    /* run label, may be NULL */
	const char *version;  /* ocbench version for run.ocbench_version */
	const char *cmdline;  /* for run.cmdline, may be NULL */
};

/* Imports `path`. *run_id (may be NULL) = the new run, *nresults (may be NULL) = results
 * written. Errors: OCB_ENOENT (cannot open), OCB_EFORMAT (not JSON or not Google
 * Benchmark's schema; the detail names the file and the entry), OCB_EDB, OCB_ENOMEM. */
int ocb_import_gbench(struct ocb_store *s, const char *path, const struct ocb_import_opts *o,
		      int64_t *run_id, size_t *nresults);

#endif
