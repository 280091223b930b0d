/* mllog_rules: a checker of MLLOG files against the MLPerf HPC 3.0 common rules
 * (mlcommons/logging, mlperf_logging/compliance_checker/hpc_3.0.0/common.yaml;
 * REFERENCE.md §4), so that every log ocbench writes is verified by a test:
 *
 *   - every line starting with ":::MLLOG " is one JSON object with namespace, time_ms,
 *     event_type, key, value, metadata (object);
 *   - exactly one: submission_org (non-empty), submission_platform (non-empty),
 *     submission_division (closed|open), submission_status (cloud|onprem|preview|
 *     research), submission_benchmark, train_samples, eval_samples, init_stop, run_start,
 *     run_stop;
 *   - cache_clear at least once, each with a "value" member;
 *   - init_start at least once, never after init_stop or run_start; init_stop after an
 *     init_start, before run_start, within 30 minutes of the first init_start;
 *   - staging_stop only after a staging_start;
 *   - run_start after init_stop; run_stop after run_start with metadata.status;
 *   - block_start (after run_start; metadata epoch_count > 0 and first_epoch_num) /
 *     block_stop (metadata first_epoch_num), or epoch_start/epoch_stop (metadata
 *     epoch_num): at least one start and one stop of either kind;
 *   - eval_start / eval_stop carry metadata.epoch_num.
 * The official checker also requires submission_benchmark in {deepcam, cosmoflow, oc20,
 * openfold}; ocbench's workloads are none of these, so that one rule is not checked. */
#ifndef OCB_MLLOG_RULES_H
#define OCB_MLLOG_RULES_H

#include <stdio.h>

#define OCB_MLLOG_MAXVIOL 16

struct ocb_mllog_verdict {
	int events;     /* :::MLLOG lines read */
	int nviol;      /* violations found (may exceed the ones kept) */
	char viol[OCB_MLLOG_MAXVIOL][160]; /* "line 12: run_start before init_stop", ... */
};

/* Checks the stream from its current position. Always OCB_OK (violations are in *v). */
int ocb_mllog_check_stream(FILE *f, struct ocb_mllog_verdict *v);
/* Checks a file; OCB_ENOENT if it cannot be opened. */
int ocb_mllog_check_file(const char *path, struct ocb_mllog_verdict *v);

#endif
