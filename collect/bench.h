/* bench: the one interface through which collect/ knows every benchmark and workload
 * (DESIGN.md "The registry"). A benchmark is a `const struct ocb_bench` in its own file
 * and one line in its suite's table. Nothing here knows the database or the CLI. */
#ifndef OCB_BENCH_H
#define OCB_BENCH_H

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "../db/records.h"
#include "params.h"

/* Static work model of one repetition: from shapes and formats, never measured.
 * The bound is named here and resolved by the roofline module (common/ocb_roofline.h)
 * against this machine's caches and ceilings. */
struct ocb_work {
	double flops;       /* operations of one repetition, counted in the unit of the
			       compute roof: FLOPs for "flops_*", int8 multiply-adds x 2
			       for "ops_int8" */
	double bytes;       /* compulsory memory traffic (weights incl. scales, in, out);
			       also the working set that picks the memory level (but ws) */
	const char *bound;  /* NULL: the roofline, min(compute, level bandwidth x ops/bytes);
			       "bw_*" / "bw_*_triad": the read / triad bandwidth of the level
			       the working set lives in; or one named ceiling kind
			       ("flops_sgemm", "ops_int8", ...) */
	const char *compute; /* the compute roof of the roofline: "flops_fp32" (NULL),
				"flops_sgemm", "ops_int8" */
	double ws;          /* the working set that picks the memory level where it is not
			       bytes (0: bytes): a kernel that streams an in-memory layout
			       larger than the format's blocks (TQ1_0 repacked as TQ2_0
			       codes). bytes stays the format's traffic, so the fraction is
			       of what the format could reach at that level */
	double cycle;       /* bytes streamed before the same bytes are read again (0:
			       unknown, taken as enough; ocb_roof_level_cycle): a case that
			       sweeps the same arrays pass after pass, as STREAM does, sets
			       its working set; one rotating copies past the DRAM cycle
			       leaves 0 */
};

/* The working set of w that picks its memory level: ws where set, else bytes */
static inline double ocb_work_ws(const struct ocb_work *w)
{
	return w->ws > 0 ? w->ws : w->bytes;
}

/* Where workloads send metrics (loss per step, accuracy, ...). step < 0: no step.
 * Keys lower_snake_case, unit in `unit` (DESIGN.md). */
struct ocb_metric_sink {
	void *ctx;
	int (*put)(void *ctx, const char *workload, long step, const char *key, double value,
		   const char *unit);
	/* The identity of `workload` as JSON with a "kind" (common/workload_id.h), stored
	 * beside its metrics so readers need not split the name. NULL: dropped. */
	int (*ident)(void *ctx, const char *workload, const char *ident_json);
};

static inline int ocb_metric(const struct ocb_metric_sink *s, const char *workload, long step,
			     const char *key, double value, const char *unit)
{
	return s && s->put ? s->put(s->ctx, workload, step, key, value, unit) : 0;
}

static inline int ocb_metric_ident(const struct ocb_metric_sink *s, const char *workload,
				   const char *ident_json)
{
	return s && s->ident ? s->ident(s->ctx, workload, ident_json) : 0;
}

/* What a case runs with. All pointers borrowed for the duration of the case. */
struct ocb_ctx {
	int threads;            /* threads for this case (OpenBLAS and our own) */
	uint64_t seed;
	int quick;              /* --quick: small sizes and budgets (CI) */
	const char *data_dir;   /* NULL: the Debian package paths */
	const char *out_dir;    /* run artifacts (MLLOG files, checkpoints); exists */
	const struct ocb_machine *machine;  /* this machine (cache sizes ...); may be NULL */
	const struct ocb_ceiling *ceilings; /* this machine's measured ceilings */
	size_t nceilings;
	struct ocb_metric_sink metrics;
};

enum ocb_bench_kind {
	OCB_KERNEL = 0,   /* run() is a timed region, repeated by the harness */
	OCB_WORKLOAD = 1, /* workload() runs once and reports metrics */
};

struct ocb_bench {
	const char *name;   /* registered name, e.g. "gemv_q4_0"; the store's `bench`. Its
			       suite is stated once, in registry.h's table */
	const char *doc;    /* one line for `ocbench run --list` */
	enum ocb_bench_kind kind;

	/* Every parameter it reads: name, type, default, range, unit, doc (params.h),
	 * terminated by an entry with a NULL name. The runner checks each case against it
	 * and hands setup() and work() the checked object with the defaults filled. */
	const struct ocb_param *params;
	/* The parameter sets to run when a suite lists none: a cJSON array of objects,
	 * honouring ctx->quick. Caller frees with cJSON_Delete(). */
	cJSON *(*cases)(const struct ocb_ctx *ctx);
	/* Builds the state for one parameter set (allocations, data, reference output).
	 * *state is owned by the bench and freed by teardown(). */
	int (*setup)(const cJSON *params, const struct ocb_ctx *ctx, void **state);
	/* KERNEL: the timed region and nothing else. */
	int (*run)(void *state);
	/* Validates the optimized output against the _ref twin or a known answer;
	 * *err = max relative error. NULL: no check. Called before timing. */
	int (*check)(void *state, double *err);
	/* Static work of one run() (KERNEL) or of the whole workload. May be NULL. */
	int (*work)(const cJSON *params, struct ocb_work *w);
	/* The kernel variant the state will run ("avx2", "ref", "openblas"); NULL: "default". */
	const char *(*variant)(void *state);
	/* WORKLOAD: the body; reports through ctx->metrics. */
	int (*workload)(void *state, const struct ocb_ctx *ctx);
	void (*teardown)(void *state);
	/* KERNEL: 1 to run each case at 1 thread and at all threads by default (scaling),
	 * 0 to run at the default thread count only. `--threads LIST` overrides both. */
	int sweep_threads;
	/* Artifacts this bench writes into / reads from ctx->out_dir (names for
	 * ocb_artifact_path in artifact.h, e.g. "mlp_fp32"): NULL-terminated lists, NULL for
	 * none. The runner runs every producer of an artifact before its consumers, so each
	 * model trains once per run; a consumer that finds no artifact makes it itself. */
	const char *const *produces;
	const char *const *consumes;
	/* KERNEL, may be NULL: a time of one run() (s) the bench measured itself in setup()
	 * on the same data, e.g. the GEMV planner's median (0 = none). A timed median far
	 * from it means the host's speed changed between (collect/suspect.h, "setup"). */
	double (*reference_s)(void *state);
	/* KERNEL, may be NULL: the threads run() really runs on where the kernel may take
	 * fewer than the case asks (a product too small for a second thread to pay: the
	 * tiled ternary GEMM's work rule, the GEMV planner's one-thread setting); 0 = as
	 * asked. The scaling rule says so when such a case is slower than its 1-thread
	 * twin (collect/suspect.h). */
	int (*team)(void *state);
};

#endif
