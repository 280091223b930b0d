/* export: one run out of the store in formats other tools read.
 *   gbench  Google Benchmark JSON (REFERENCE.md §4) so its tools/compare.py can read
 *           ocbench runs: "context" {date, host_name, executable, num_cpus,
 *           mhz_per_cpu, cpu_scaling_enabled, caches[], load_avg, library_build_type}
 *           and "benchmarks": per result one run_type "iteration" entry per sample and
 *           "aggregate" entries mean/median/stddev; name "bench/params" (just "bench"
 *           when params are {}), real_time = cpu_time = the sample in time_unit "ns"
 *           (ocbench times wall clock only), iterations 1 (a sample is one repetition),
 *           available counters flattened as numeric fields, plus bytes_per_second and
 *           flops_per_second from the static work model. Results whose unit is not a
 *           time are left out (gbench has only time units).
 *   csv     one row per result with statistics, throughput and roofline fraction.
 *   json    the run, its machine, every result with samples and counters, metrics.
 * Four set-based queries per export. */
#ifndef OCB_EXPORT_H
#define OCB_EXPORT_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

enum ocb_export_fmt { OCB_EXPORT_GBENCH = 0, OCB_EXPORT_CSV, OCB_EXPORT_JSON };

/* Parses "gbench" | "csv" | "json". OCB_EINVAL otherwise. */
int ocb_export_format(const char *name, enum ocb_export_fmt *out);

/* The newest complete run. OCB_ENOENT if there is none. */
int ocb_export_latest(sqlite3 *db, int64_t *run_id);

/* Writes run `run_id` to f. Errors: OCB_ENOENT (no run), OCB_EDB, OCB_ENOMEM, OCB_EIO. */
int ocb_export_run(sqlite3 *db, int64_t run_id, enum ocb_export_fmt fmt, FILE *f);

#endif
