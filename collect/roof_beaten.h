/* roof_beaten: the ceilings a run's own results ran above. A result above 105% of its roof
 * is flagged suspect at once (collect/suspect.h); but the fault may be the roof's: a
 * ceiling measured in a slower moment of a shared host (on the Zen 5 VM the 2-thread DRAM
 * rate moves between ~40 and ~65-79 GB/s, minutes apart). So the runner notes, per ceiling
 * that set a beaten roof (the bandwidth or the compute one of a roofline, whichever bound
 * the case), how many results beat it and by how much, and at the end of the run stores a
 * flagged copy of that ceiling (with one warning line). Its newest row being flagged, the
 * next full run (or `ceilings --verify`) re-measures it and drops the copy; until then
 * the unflagged row stays the value readers get (db/store_int.h OCB_CEILING_RANKED), so a
 * --quick run keeps its roofs. The results keep their own flags. Owns nothing: a
 * fixed-size tally. */
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

/* Stores, for every ceiling in b whose row in c is unflagged and whose newest stored row is
 * not flagged already, a copy of that row with the reason (run_id: this run, 0 = none);
 * prints one warning line per ceiling. *nflagged (may be NULL): how many. OCB_OK or the
 * store's error. */
int ocb_beaten_flag(const struct ocb_beaten *b, struct ocb_store *s, int64_t machine_id,
		    int64_t run_id, const struct ocb_ceiling *c, size_t nc, int *nflagged);

#endif
