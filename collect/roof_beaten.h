/* roof_beaten: the ceilings a run's own results ran above. A result above 105% of its roof
 * is flagged suspect at once (collect/suspect.h); but the fault may be the roof's: a
 * ceiling measured in a slower moment of a shared host (on the Zen 5 VM the 2-thread DRAM
 * rate moves between ~40 and ~65-79 GB/s, minutes apart). So the runner notes, per ceiling
 * that set a beaten roof (the bandwidth or the compute one of a roofline, whichever bound
 * the case), how many results beat it and by how much, and at the end of the run stores a
 * flagged copy of that ceiling (with one warning line). Its newest row being flagged, the
 * next full run (or `ceilings --verify`) re-measures it and drops the copy; until then
 * the unflagged row stays the value readers get (db/store_int.h OCB_CEILING_RANKED), so a
 * --quick run keeps its roofs. The results keep their own flags.
 * Before that, the run re-measures the ceilings its results beat, ocb_beaten_remeasure:
 * where a ceiling comes out higher, the kernel results of interleaved passes (stored only
 * after the last pass) are placed under the new value before they are stored, and only
 * what still beats a ceiling flags it. Owns nothing: a fixed-size tally. */
#ifndef OCB_ROOF_BEATEN_H
#define OCB_ROOF_BEATEN_H

#include <stddef.h>
#include <stdint.h>

#include "../db/records.h"
#include "../db/store.h"

#define OCB_BEATEN_MAX 32 /* distinct (kind, threads) ceilings tallied; more are dropped */

struct ocb_beaten_roof {
	char kind[32];
	int threads;     /* the ceiling's own thread count */
	int n;           /* results above it */
	double max_frac; /* the highest of their fractions */
};

struct ocb_beaten {
	struct ocb_beaten_roof roof[OCB_BEATEN_MAX];
	size_t n;
};

/* Counts r in b when it is ok and above OCB_SUSPECT_ROOF_MAX of its roof, against the
 * ceiling of c[0..nc) that set that roof (ocb_roof_binding). */
void ocb_beaten_note(struct ocb_beaten *b, const struct ocb_ceiling *c, size_t nc,
		     const struct ocb_result *r);

/* Re-measures now the ceilings of c[0..nc) that `want` tallies (ocb_ceilings_verify:
 * their families, at every thread count; quick: fewer trials), then ocb_beaten_raise.
 * OCB_OK or the measurement's or the store's error. */
int ocb_beaten_remeasure(const struct ocb_beaten *want, struct ocb_beaten *stored,
			 struct ocb_store *s, int64_t machine_id, int64_t run_id,
			 const struct ocb_machine *m, int quick, struct ocb_ceiling *c, size_t nc,
			 int *nraised);

/* Each fresh[j] (a re-measured ceiling) above the value of its kind and thread count in
 * use in c[0..nc) (ocb_ceiling_find), and not flagged itself, replaces it: stored as run
 * run_id's row (in place of any flagged copy) and written into c, *nraised counting them;
 * `stored`, the tally of results already stored against the old value, is rescaled to
 * the new one (a result at f of the old roof is at f old/new of the new one, or above it
 * where the roof then switches to the other ceiling of its roofline) and loses the
 * ceilings no longer beaten. A fresh value not above the old one is reported (one info
 * line) and dropped: a ceiling is the best rate seen, so the old one stays. OCB_OK or
 * the store's error. */
int ocb_beaten_raise(const struct ocb_ceiling *fresh, size_t nf, struct ocb_beaten *stored,
		     struct ocb_store *s, int64_t machine_id, int64_t run_id,
		     struct ocb_ceiling *c, size_t nc, int *nraised);

/* Stores, for every ceiling in b whose row in c is unflagged and whose newest stored row is
 * not flagged already, a copy of that row with the reason (run_id: this run, 0 = none);
 * prints one warning line per ceiling. *nflagged (may be NULL): how many. OCB_OK or the
 * store's error. */
int ocb_beaten_flag(const struct ocb_beaten *b, struct ocb_store *s, int64_t machine_id,
		    int64_t run_id, const struct ocb_ceiling *c, size_t nc, int *nflagged);

#endif
