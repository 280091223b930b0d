/* The one ceiling path shared by the runner and `ocbench ceilings`: measure (or
 * re-measure the flagged values), store, and for the command the whole session around it
 * (machine row, run row, the "nothing flagged" case). */
#ifndef OCB_CEILINGS_STORE_H
#define OCB_CEILINGS_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "../db/store.h"
#include "ceilings.h"

/* Stores ceilings c[0..n) of a machine (run_id may be 0: none) in one transaction;
 * replace: each first deletes the flagged rows of its (kind, threads) (a re-measured
 * value replaces them: `ceilings --verify`). */
int ocb_ceilings_store(struct ocb_store *s, int64_t machine_id, int64_t run_id,
		       const struct ocb_ceiling *c, size_t n, int replace);

/* Measures all ceilings now (nflag == 0), or re-measures flagged[0..nflag) against the
 * current set cur[0..ncur) (`--verify`), stores the new values under run_id (re-measured
 * ones replace the flagged rows) and returns them in *out (malloc'd, caller frees),
 * flagged ones included. rep may be NULL. */
int ocb_ceilings_measure_store(struct ocb_store *s, int64_t machine_id, int64_t run_id,
			       const struct ocb_machine *m, int threads_all, int quick,
			       const struct ocb_ceiling *cur, size_t ncur,
			       const struct ocb_ceiling *flagged, size_t nflag,
			       struct ocb_ceiling **out, size_t *n,
			       struct ocb_ceilings_report *rep);

/* What one `ocbench ceilings` session did. c[0..n) is malloc'd (ocb_ceilings_session_free). */
struct ocb_ceilings_session {
	char uuid[40];      /* the run row's uuid ("" when nothing was run) */
	struct ocb_ceiling *c;
	size_t n;
	size_t nflag;       /* verify: the flagged values found (0: nothing ran) */
	struct ocb_ceilings_report rep;
};

/* `ocbench ceilings [--verify]`: stores the machine, and unless verify finds nothing
 * flagged, opens a run row (suite "ceilings"), measures or re-measures, stores and
 * finishes the run ("failed" on error). cmdline goes to the run row. */
int ocb_ceilings_session_run(struct ocb_store *s, const struct ocb_machine *m, int threads,
			     int quick, int verify, const char *cmdline,
			     struct ocb_ceilings_session *out);
void ocb_ceilings_session_free(struct ocb_ceilings_session *x);

#endif
