/* select: the typed reads behind `ocbench report`, over a selection of runs.
 *
 * A selection says which runs a report covers:
 *   OCB_SEL_RUN      one run (all of its results and metrics)
 *   OCB_SEL_LATEST   the newest complete run
 *   OCB_SEL_EACH     for every suite (result.suite) the newest complete run holding it,
 *                    and for every workload (metric.workload) the newest complete run
 *                    holding it; restricted to some machines when machine ids are given,
 *                    then per machine (so `--machine A,B` overlays A's and B's latest).
 * Inside db/ it becomes two SQL common table expressions, sel(suite, run_id) and
 * msel(workload, run_id), that every query below joins: a whole report is a handful of
 * set-based queries however many runs the store holds (no per-run queries).
 *
 * Every function reads only, on a store opened READ or WRITE. Errors: OCB_ENOMEM,
 * OCB_EDB (detail in ocb_lasterr()); on error the output owns nothing. */
#ifndef OCB_SELECT_H
#define OCB_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "records.h"
#include "store.h"

enum ocb_sel_mode { OCB_SEL_EACH = 0, OCB_SEL_RUN, OCB_SEL_LATEST };

#define OCB_SEL_MAX_MACHINES 16

struct ocb_sel {
	enum ocb_sel_mode mode;
	int64_t run_id;                            /* OCB_SEL_RUN */
	int64_t machine[OCB_SEL_MAX_MACHINES];     /* OCB_SEL_EACH filter; nmachines 0: all */
	size_t nmachines;
};

/* Resolves a comma-separated list of machine specs (hostname, or a fingerprint prefix of
 * >= 4 hex digits, or a machine id) into sel->machine. A spec matching several machines
 * adds them all. Errors: OCB_ENOENT (a spec matches nothing), OCB_EINVAL (too many),
 * OCB_EDB. */
int ocb_sel_machines(struct ocb_store *s, const char *specs, struct ocb_sel *sel);

/* One result as the report shows it (a view of the result row joined with its run's
 * machine: the columns a report needs, not the samples). */
struct ocb_rrow {
	int64_t id, run_id, machine_id;
	char suite[32], bench[64], variant[32], unit[16], bound[32];
	char host[64];
	char *params;           /* canonical JSON; owned by the ocb_rset */
	int threads;
	long n;
	double median, ci_low, ci_high; /* in `unit` */
	double flops, bytes;    /* static work of one repetition */
	double bound_frac;      /* as stored; NaN if NULL */
	char status[16];
	char suspect[256];      /* result.suspect: why an ok result is doubtful; "" if NULL */
};

/* The report view of a stored result: r's columns into *out (id, suite, bench, variant,
 * threads, unit, n, median, CI, work, bound, status, suspect). out->params borrows
 * r->params_json; run_id, machine_id and host are left 0 / "". */
void ocb_rrow_of_result(const struct ocb_result *r, int64_t id, struct ocb_rrow *out);

struct ocb_rset {
	struct ocb_rrow *r;
	size_t n;
};

/* Loads the results of the selection (status 'ok' only when ok_only), ordered by suite,
 * bench, params, variant, threads, host. Caller releases with ocb_rset_release(). */
int ocb_rset_load(struct ocb_store *s, const struct ocb_sel *sel, int ok_only,
		  struct ocb_rset *out);
/* Frees what out owns and zeroes it; NULL-safe. */
void ocb_rset_release(struct ocb_rset *rs);

/* The current ceiling of each (kind, threads) of one machine (newest unflagged row,
 * else the newest flagged one: the rule of ocb_store_ceilings_get). */
struct ocb_mceil {
	int64_t machine_id;
	char host[64];
	char cpu[128];
	struct ocb_ceiling *c; /* owned */
	struct ocb_roof_ceil *view; /* owned: c[0..n) as the roofline module reads them */
	size_t n;
	struct ocb_roof_caches caches; /* the machine record's, as ocb_machine_caches gives them */
};

/* Loads ceilings for every machine id in ids[0..n) into out[0..n) (same order).
 * Caller releases each with ocb_mceil_release(). One query. */
int ocb_mceil_load(struct ocb_store *s, const int64_t *ids, size_t n, struct ocb_mceil *out);
void ocb_mceil_release(struct ocb_mceil *m);
/* The entry of `machine_id` in m[0..n), or NULL. */
const struct ocb_mceil *ocb_mceil_find(const struct ocb_mceil *m, size_t n, int64_t machine_id);

/* The runs whose data a report of `sel` uses (sel, msel, the run it names, and the
 * complete training runs the MLPerf summary scores): *out (malloc'd, caller frees, *n
 * long) in id order, loaded as ocb_run_load does. */
int ocb_sel_runs(struct ocb_store *s, const struct ocb_sel *sel, struct ocb_run **out,
		 size_t *n);

/* One counter of a selected result. */
struct ocb_sel_counter {
	int64_t result_id;
	char event[64];
	double value;   /* NaN when unavailable */
	int available;  /* stored available and a value present */
};

/* Every counter of the selection's results, sorted by (result_id, event). *out
 * malloc'd (caller frees), *n long. */
int ocb_sel_counters(struct ocb_store *s, const struct ocb_sel *sel,
		     struct ocb_sel_counter **out, size_t *n);

/* One metric row of the selection (msel), with its workload's stored identity. */
struct ocb_metric_row {
	int64_t id, run_id;
	char *workload;  /* owned by the set */
	char *key;       /* owned by the set; "" when NULL */
	long step;       /* -1: NULL (a final value) */
	double value;    /* NaN when NULL */
	char unit[16];
	char *ident;     /* workload_ident.ident JSON (owned), or NULL */
};

struct ocb_metric_set {
	struct ocb_metric_row *r;
	size_t n;
};

enum ocb_mq_steps { OCB_MQ_ANY_STEP = 0, OCB_MQ_STEPPED, OCB_MQ_FINAL };
enum ocb_mq_quant {
	OCB_MQ_QUANT_ANY = 0,  /* every workload */
	OCB_MQ_QUANT_NONE,     /* not the PTQ sweep's rows (named quant_acc:...) */
	OCB_MQ_QUANT_ONLY,     /* only them: identity kind `quant_kind`, or the old name */
};
enum ocb_mq_order {
	OCB_MQ_BY_ID = 0,          /* insertion order */
	OCB_MQ_BY_WL_KEY_STEP,     /* workload, key, step, id */
	OCB_MQ_BY_WL_KEY,          /* workload, key, id */
	OCB_MQ_BY_KEY,             /* key, id */
};

/* Which metric rows: every field narrows; zero-initialised = all rows, by id. */
struct ocb_metric_query {
	enum ocb_mq_steps steps;
	int value_present;            /* only rows whose value is not NULL */
	const char *workload;         /* exactly this workload, or NULL */
	const char *const *keys;      /* NULL-terminated key list, or NULL: any key */
	enum ocb_mq_quant quant;
	const char *quant_kind;       /* the identity "kind" for OCB_MQ_QUANT_ONLY */
	enum ocb_mq_order order;
};

/* The metric rows of the selection matching q. Caller releases with
 * ocb_metric_set_release(). */
int ocb_sel_metrics(struct ocb_store *s, const struct ocb_sel *sel,
		    const struct ocb_metric_query *q, struct ocb_metric_set *out);
void ocb_metric_set_release(struct ocb_metric_set *ms);

/* One final training metric of a complete run, with the system it ran on (MLPerf
 * summary). Rows: every complete run of the selection's machines (the one run with
 * OCB_SEL_RUN / OCB_SEL_LATEST), keys time_to_target, train_time, samples_to_converge,
 * train_samples, global_batch_size, threads, ranks; no quant_acc: workloads; ordered by
 * run, workload, id. */
struct ocb_train_row {
	int64_t run_id, machine_id;
	char host[64], cpu[128], version[32];
	int cores;
	double cfg_threads, cfg_ranks; /* run config_json $.threads / $.ranks; NaN if none */
	char workload[128];
	char key[32];
	double value;
};

/* *out malloc'd (caller frees), *n long. */
int ocb_sel_train_metrics(struct ocb_store *s, const struct ocb_sel *sel,
			  struct ocb_train_row **out, size_t *n);

#endif
