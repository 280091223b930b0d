/* suite_def: a suite described as data — what `ocbench run --suite FILE.json` reads and
 * what every built-in suite is built as (registry.h), so both take one path.
 *
 * File format (JSON object; every key but "benches"/"suites" optional):
 *   "name":     "paper-gemv"              stored as the run's suite
 *   "label":    "before-patch"            run label (the command line's wins)
 *   "threads":  [1, 2]                    thread counts of every case
 *   "budget":   1.5                       seconds of repetitions per case
 *   "passes":   3                         interleaved passes (runner.h)
 *   "target_ci": 0.02, "min_reps": 5, "max_reps": 1000, "quick": false
 *   "suites":   ["baseline", "train"]     every bench of these built-in suites
 *   "benches":  [ {                       and/or these entries, in order:
 *       "bench":  "quant_gemv",           a registered bench (ocbench run --list)
 *       "suite":  "quant",                result.suite (default: the bench's home suite)
 *       "threads": [1],                   this entry's thread counts
 *       "params": {"k": 4096},            keys common to every case
 *       "grid":   {"format": ["q4_0", "q8_0"], "m": [4096, 11008]},
 *                                         the cartesian product of the listed values
 *       "cases":  [{"m": 4096}, ...]      explicit cases (params and grid apply to each)
 *     } ]
 * An entry with none of params/grid/cases runs the bench's own cases (honouring
 * --quick). Every case is checked against the bench's declared parameters (params.h). */
#ifndef OCB_SUITE_DEF_H
#define OCB_SUITE_DEF_H

#include <cJSON.h>
#include <stddef.h>

#include "bench.h"

struct ocb_suite_entry {
	const struct ocb_bench *bench;
	char suite[64];     /* result.suite of its cases */
	cJSON *cases;       /* array of param objects as listed (already checked), or NULL:
			       the bench's own cases(ctx) */
	int threads[8];     /* nthreads == 0: the run's */
	int nthreads;
};

struct ocb_suite_def {
	char name[64];
	char source[300];   /* file path, or "built-in suite NAME": where errors point */
	struct ocb_suite_entry *e;
	size_t n;
	/* Run settings the file gives; 0 / -1 / "" where it gives none. */
	char label[128];
	int threads[8], nthreads;
	double budget_s;     /* < 0: unset */
	double target_ci;    /* 0: unset */
	long min_reps, max_reps; /* 0: unset */
	int passes;          /* 0: unset */
	int quick;           /* -1: unset */
};

/* Reads a suite description from its JSON tree. `source` names it in errors
 * ("<source>: benches[1].grid.m: ..."). OCB_EINVAL on any bad key, value, bench or
 * parameter; *out is then released. */
int ocb_suite_def_parse(const cJSON *j, const char *source, struct ocb_suite_def *out);
/* Reads the file at path. Syntax errors name the line: "<path>:<line>: not JSON". */
int ocb_suite_def_load(const char *path, struct ocb_suite_def *out);
/* The built-in suite `name` (registry.h), through ocb_suite_def_parse. */
int ocb_suite_def_builtin(const char *name, struct ocb_suite_def *out);
void ocb_suite_def_release(struct ocb_suite_def *d);

/* What `--suite SPEC` names: a comma list of built-in suites and suite files (a name
 * ending in ".json" or holding a '/'), or "all" (every built-in suite). Fills defs[0..*n)
 * (release each); OCB_EINVAL naming the bad one (nothing to release then). */
int ocb_suite_defs_resolve(const char *spec, struct ocb_suite_def *defs, int max, int *n);

#endif
