/* registry: the one table of benchmarks and the built-in suites (DESIGN.md "The
 * registry"). Adding a benchmark is its own file (bench_*.c, holding a `const struct
 * ocb_bench` with its parameter table) plus one line in OCB_BENCHES below. A bench
 * states its suite there, once; a built-in suite is every bench of that suite in table
 * order, built as a suite description (suite_def.h) through the same loader as a
 * `--suite FILE.json`. */
#ifndef OCB_REGISTRY_H
#define OCB_REGISTRY_H

#include "bench.h"

/* X(symbol suffix, home suite): one line per bench, run in this order within its suite. */
#define OCB_BENCHES(X)                  \
	X(sgemm, "baseline")            \
	X(sgemv, "baseline")            \
	X(stream_copy, "baseline")      \
	X(stream_triad, "baseline")     \
	X(sgemm_thin, "baseline")       \
	X(train_mlp, "train")           \
	X(train_lm, "train")            \
	X(quant_gemv, "quant")          \
	X(quant_gemm, "quant")          \
	X(quant_accuracy, "quant")      \
	X(decode_pass, "compress")      \
	X(compress, "compress")         \
	X(dist_coll, "dist")            \
	X(dist_train, "dist")           \
	X(ternary_gemm, "ternary")      \
	X(ternary_mlp, "ternary")       \
	X(ternary_lm, "ternary")        \
	X(ternary_lm_width, "ternary")  \
	X(bsr_spmm, "sparse")           \
	X(sparse_mlp, "sparse")         \
	X(sparse_lm, "sparse")

/* extern const struct ocb_bench ocb_bench_sgemm; ... : every bench, declared here only. */
#define OCB_BENCH_EXTERN(sym, suite) extern const struct ocb_bench ocb_bench_##sym;
OCB_BENCHES(OCB_BENCH_EXTERN)
#undef OCB_BENCH_EXTERN

struct ocb_bench_entry {
	const struct ocb_bench *bench;
	const char *suite; /* its home suite: result.suite when a suite file names no other */
};
extern const struct ocb_bench_entry ocb_benches[];
extern const size_t ocb_nbenches;

/* A built-in suite: its name and one line for `run --list`; `--suite all` runs them in
 * this order. */
struct ocb_suite_info {
	const char *name;
	const char *doc;
};
extern const struct ocb_suite_info ocb_suites[];
extern const size_t ocb_nsuites;

/* The bench registered as `name`, or NULL. */
const struct ocb_bench *ocb_bench_find(const char *name);
/* The home suite of b ("" if b is not in the table). */
const char *ocb_bench_home(const struct ocb_bench *b);
/* The built-in suite named `name`, or NULL. */
const struct ocb_suite_info *ocb_suite_find(const char *name);
/* The built-in suite `name` as a suite description (JSON, the suite-file format of
 * suite_def.h): {"name": ..., "benches": [{"bench": ...}, ...]}. Caller cJSON_Delete()s;
 * NULL if there is no such suite or no memory. */
cJSON *ocb_suite_builtin_json(const char *name);

#endif
