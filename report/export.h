/* export: one run out of the store in formats other tools read.
 *   gbench  Google Benchmark JSON as its src/json_reporter.cc writes it and its
 *           tools/compare.py reads it (REFERENCE.md §4). "context": date (run start,
 *           RFC 3339 "+00:00"), host_name, executable, num_cpus, mhz_per_cpu and load_avg
 *           (recorded at run start, metrics of workload "run_context"), cpu_scaling_enabled,
 *           caches[], library_build_type, json_schema_version 1, and ocbench_* notes
 *           saying what cpu_time and the counters are. "benchmarks": per ok result with a
 *           time unit, name = run_name = "bench/<params JSON>/threads:N" ("bench/threads:N"
 *           when params are {}), family_index = the bench's index, per_family_instance_index
 *           = the case's index within it; one run_type "iteration" entry per repetition
 *           (repetition_index k, iterations 1) with that repetition's own real_time,
 *           cpu_time (process CPU time of all threads, or real_time where the run did not
 *           record it), bytes_per_second and flops_per_second (static work model / its
 *           time); then, with >= 2 repetitions, the aggregates mean, median, stddev
 *           (aggregate_unit "time") and cv ("percentage") over the repetitions' values,
 *           named "<run_name>_<aggregate>"; PAPI counters (per call, averaged over all
 *           repetitions) on the mean aggregate only. time_unit "ns"; label = variant.
 *           Results whose unit is not a time are left out (gbench has only time units).
 *   csv     one row per result with statistics, throughput and roofline fraction.
 *   json    the run (status as readers show it), its machine, every result with samples
 *           and counters, metrics.
 * Four set-based queries per export. */
#ifndef OCB_EXPORT_H
#define OCB_EXPORT_H

#include "../db/store.h"
#include <stdint.h>
#include <stdio.h>

enum ocb_export_fmt { OCB_EXPORT_GBENCH = 0, OCB_EXPORT_CSV, OCB_EXPORT_JSON };

/* Parses "gbench" | "csv" | "json". OCB_EINVAL otherwise. */
int ocb_export_format(const char *name, enum ocb_export_fmt *out);

/* The newest complete run. OCB_ENOENT if there is none. */
int ocb_export_latest(struct ocb_store *db, int64_t *run_id);

/* Writes run `run_id` to f. Errors: OCB_ENOENT (no run), OCB_EDB, OCB_ENOMEM, OCB_EIO. */
int ocb_export_run(struct ocb_store *db, int64_t run_id, enum ocb_export_fmt fmt, FILE *f);

#endif
