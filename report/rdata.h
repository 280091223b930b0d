/* rdata: what the report reads from the store, and how.
 *
 * A selection says which runs a report covers:
 *   OCB_SEL_RUN      one run (all of its results and metrics)
 *   OCB_SEL_LATEST   the newest complete run
 *   OCB_SEL_EACH     for every suite (result.suite) the newest complete run holding it,
 *                    and for every workload (metric.workload) the newest complete run
 *                    holding it; restricted to some machines when machine ids are given,
 *                    then per machine (so `--machine A,B` overlays A's and B's latest).
 * It becomes two SQL common table expressions, sel(suite, run_id) and
 * msel(workload, run_id), that every report query joins: a whole report is a handful
 * of set-based queries however many runs the store holds (no per-run queries).
 *
 * All functions take the borrowed connection of an open store (ocb_store_handle). */
#ifndef OCB_RDATA_H
#define OCB_RDATA_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "../db/records.h"

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
int ocb_sel_machines(sqlite3 *db, const char *specs, struct ocb_sel *sel);

/* Writes "WITH sel(suite, run_id) AS (...), msel(workload, run_id) AS (...)" for `sel`
 * into buf (len >= 2048). Only integers from sel are embedded. */
int ocb_sel_cte(const struct ocb_sel *sel, char *buf, size_t len);

/* One result as the report shows it. */
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

struct ocb_rset {
	struct ocb_rrow *r;
	size_t n;
};

/* Loads the results of the selection (status 'ok' only when ok_only), ordered by suite,
 * bench, params, variant, threads, host. Caller releases with ocb_rset_release(). */
int ocb_rset_load(sqlite3 *db, const struct ocb_sel *sel, int ok_only, struct ocb_rset *out);
void ocb_rset_release(struct ocb_rset *rs);

/* The newest ceiling of each (kind, threads) of one machine. */
struct ocb_mceil {
	int64_t machine_id;
	char host[64];
	char cpu[128];
	struct ocb_ceiling *c; /* owned */
	struct ocb_roof_ceil *view; /* owned: c[0..n) as the roofline module reads them */
	size_t n;
};

/* Loads ceilings for every machine id in ids[0..n) into out[0..n) (same order).
 * Caller releases each with ocb_mceil_release(). One query. */
int ocb_mceil_load(sqlite3 *db, const int64_t *ids, size_t n, struct ocb_mceil *out);
void ocb_mceil_release(struct ocb_mceil *m);
/* The entry of `machine_id` in m[0..n), or NULL. */
const struct ocb_mceil *ocb_mceil_find(const struct ocb_mceil *m, size_t n, int64_t machine_id);

/* Seconds per unit for a time unit ("s", "ms", "us", "ns"); 0 for anything else. */
double ocb_unit_seconds(const char *unit);

/* Achieved GFLOP/s of a row (flops / median seconds / 1e9); NaN if not a time unit. */
double ocb_rrow_gflops(const struct ocb_rrow *r);
/* Achieved GB/s of a row. */
double ocb_rrow_gbs(const struct ocb_rrow *r);
/* Fraction of the roof: the stored bound_frac if present, else the roofline module's
 * ocb_roof_frac of the stored bound with the machine's ceilings (mc may be NULL -> NaN;
 * a bound whose roof was never measured -> NaN, "no roof"). */
double ocb_rrow_roof_frac(const struct ocb_rrow *r, const struct ocb_mceil *mc);

#endif
