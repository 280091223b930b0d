/* pairs: the typed reads behind `ocbench compare` and `history`: the same case in two
 * runs, the cases one run has and the other lacks, a result's samples, and a case's
 * medians over earlier runs. A case is (bench, params_json, threads); variant breaks
 * ties. Reads only. Errors: OCB_ENOMEM, OCB_EDB (detail in ocb_lasterr()); on error the
 * outputs own nothing. */
#ifndef OCB_PAIRS_H
#define OCB_PAIRS_H

#include <stddef.h>
#include <stdint.h>

#include "select.h"
#include "store.h"

/* The newest complete run of the machine named `spec` (hostname, or a fingerprint
 * prefix of >= 4 characters). OCB_ENOENT when there is none. */
int ocb_db_machine_latest_run(struct ocb_store *s, const char *spec, int64_t *run_id);

/* One case of a run. params is owned (ocb_case_rows_release). */
struct ocb_case_row {
	char bench[64], variant[32], status[16];
	char *params;
	int threads;
};

/* The cases of run a with no ok counterpart (bench, params, threads) in run b (failed
 * ones included), ordered by bench, params, threads, id. *out malloc'd, *n long;
 * release with ocb_case_rows_release(*out, *n). */
int ocb_db_unpaired(struct ocb_store *s, int64_t a, int64_t b, struct ocb_case_row **out,
		    size_t *n);
void ocb_case_rows_release(struct ocb_case_row *r, size_t n);

/* The same ok case in runs base and cand. b and c are the two results (machine_id,
 * host, run_id and status not filled); b.params is owned, c.params is NULL. */
struct ocb_result_pair {
	int64_t base_id, cand_id;
	struct ocb_rrow b, c;
};

/* Every (base result, cand result) pair of the same case, ordered by bench, params,
 * threads, base variant, base id, then same variant first and cand id: the caller keeps
 * the first pair of each base result and uses each cand result once. *out malloc'd, *n
 * long; release with ocb_result_pairs_release(*out, *n). */
int ocb_db_result_pairs(struct ocb_store *s, int64_t base, int64_t cand,
			struct ocb_result_pair **out, size_t *n);
void ocb_result_pairs_release(struct ocb_result_pair *p, size_t n);

/* The samples of result `result_id` in rep order into *buf (grown with realloc, *cap
 * its room; the caller frees *buf), *n of them. */
int ocb_db_samples(struct ocb_store *s, int64_t result_id, double **buf, size_t *cap,
		   size_t *n);

/* The medians (> 0) of case (bench, params, threads, variant) in the complete runs of
 * `machine` other than `exclude_run`, newest first, at most max into v; *n how many. */
int ocb_db_case_medians(struct ocb_store *s, int64_t machine, const char *bench,
			const char *params, int threads, const char *variant,
			int64_t exclude_run, double *v, int max, int *n);

/* One point of a case's history: an ok result of a complete run. params owned. */
struct ocb_history_row {
	char *params;
	char variant[32], unit[16], host[64];
	int threads;
	int64_t machine_id, run_id;
	char started_at[32], label[64];
	double median, ci_low, ci_high;   /* NaN when NULL */
};

/* Every ok result of `bench` (with params_json == params when params is not NULL) in
 * complete runs (of machines[0..nmachines) when nmachines > 0), ordered by params,
 * variant, threads, machine, run start, run id, result id: one series after another.
 * *out malloc'd, *n long; release with ocb_history_rows_release(*out, *n). */
int ocb_db_history(struct ocb_store *s, const char *bench, const char *params,
		   const int64_t *machines, size_t nmachines, struct ocb_history_row **out,
		   size_t *n);
void ocb_history_rows_release(struct ocb_history_row *r, size_t n);

#endif
