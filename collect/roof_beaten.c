/* roof_beaten: see the header. */
#include "roof_beaten.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_log.h"
#include "../common/ocb_roofline.h"
#include "ceilings.h"
#include "ceilings_store.h"
#include "suspect.h"

/* index of (kind, threads) in b, or b->n */
static size_t tally_find(const struct ocb_beaten *b, const char *kind, int threads)
{
	size_t i = 0;
	while (i < b->n && !(b->roof[i].threads == threads && !strcmp(b->roof[i].kind, kind)))
		i++;
	return i;
}

void ocb_beaten_note(struct ocb_beaten *b, const struct ocb_ceiling *c, size_t nc,
		     const struct ocb_result *r)
{
	if (strcmp(r->status, "ok") != 0 || !(r->bound_frac > OCB_SUSPECT_ROOF_MAX) || !nc)
		return;
	struct ocb_roof_ceil *cv = malloc(nc * sizeof *cv);
	if (!cv)
		return; /* no memory: the result keeps its own flag */
	ocb_ceiling_view(c, nc, cv);
	double att;
	const struct ocb_roof_ceil *bind =
		ocb_roof_binding(cv, nc, r->bound, r->threads, r->flops, r->bytes, &att);
	const struct ocb_ceiling *ce = bind ? &c[bind - cv] : NULL;
	free(cv);
	if (!ce)
		return;
	size_t i = tally_find(b, ce->kind, ce->threads);
	if (i == b->n) {
		if (b->n == OCB_BEATEN_MAX)
			return;
		snprintf(b->roof[i].kind, sizeof b->roof[i].kind, "%s", ce->kind);
		b->roof[i].threads = ce->threads, b->roof[i].n = 0, b->roof[i].max_frac = 0;
		b->n++;
	}
	b->roof[i].n++;
	if (r->bound_frac > b->roof[i].max_frac)
		b->roof[i].max_frac = r->bound_frac;
}

/* The tally of (kind, threads) in b after its ceiling went from old to new (> old). */
static void tally_rescale(struct ocb_beaten *b, const char *kind, int threads, double old,
			  double new)
{
	size_t i = tally_find(b, kind, threads);
	if (i == b->n)
		return;
	b->roof[i].max_frac *= old / new;
	if (!(b->roof[i].max_frac > OCB_SUSPECT_ROOF_MAX)) /* none of them beats it now */
		b->roof[i] = b->roof[--b->n];
}

int ocb_beaten_raise(const struct ocb_ceiling *fresh, size_t nf, struct ocb_beaten *stored,
		     struct ocb_store *s, int64_t machine_id, int64_t run_id,
		     struct ocb_ceiling *c, size_t nc, int *nraised)
{
	int rc = OCB_OK;
	*nraised = 0;
	for (size_t j = 0; j < nf && rc == OCB_OK; j++) {
		const struct ocb_ceiling *f = &fresh[j];
		const struct ocb_ceiling *in_use = ocb_ceiling_find(c, nc, f->kind, f->threads);
		if (!in_use)
			continue;
		struct ocb_ceiling *ce = c + (in_use - c); /* the same element, writable */
		if (f->suspect[0]) {
			ocb_info("ceiling %s at %d thread(s): re-measured %.4g %s, flagged (%s): the "
				 "%.4g in use is kept", f->kind, f->threads, f->value, f->unit,
				 f->suspect, ce->value);
			continue;
		}
		if (!(f->value > ce->value)) {
			ocb_info("ceiling %s at %d thread(s): re-measured %.4g %s, not above the %.4g "
				 "in use: kept", f->kind, f->threads, f->value, f->unit, ce->value);
			continue;
		}
		if ((rc = ocb_ceilings_store(s, machine_id, run_id, f, 1, 1)) != OCB_OK)
			break;
		ocb_info("ceiling %s at %d thread(s): re-measured %.4g %s, above the %.4g in use: "
			 "this run's results are placed under the new value",
			 f->kind, f->threads, f->value, f->unit, ce->value);
		tally_rescale(stored, f->kind, f->threads, ce->value, f->value);
		*ce = *f;
		(*nraised)++;
	}
	return rc;
}

int ocb_beaten_remeasure(const struct ocb_beaten *want, struct ocb_beaten *stored,
			 struct ocb_store *s, int64_t machine_id, int64_t run_id,
			 const struct ocb_machine *m, int quick, struct ocb_ceiling *c, size_t nc,
			 int *nraised)
{
	struct ocb_ceiling tg[OCB_BEATEN_MAX], *fresh = NULL;
	size_t nt = 0, nf = 0;
	*nraised = 0;
	for (size_t i = 0; i < want->n; i++) {
		const struct ocb_ceiling *ce =
			ocb_ceiling_find(c, nc, want->roof[i].kind, want->roof[i].threads);
		if (ce)
			tg[nt++] = *ce;
	}
	if (!nt)
		return OCB_OK;
	ocb_info("re-measuring %zu ceiling(s) that results of this run ran above...", nt);
	int rc = ocb_ceilings_verify(m, quick, c, nc, tg, nt, &fresh, &nf, NULL);
	if (rc == OCB_OK)
		rc = ocb_beaten_raise(fresh, nf, stored, s, machine_id, run_id, c, nc, nraised);
	free(fresh);
	return rc;
}

int ocb_beaten_flag(const struct ocb_beaten *b, struct ocb_store *s, int64_t machine_id,
		    int64_t run_id, const struct ocb_ceiling *c, size_t nc, int *nflagged)
{
	int count = 0;
	if (nflagged)
		*nflagged = 0;
	if (!b->n)
		return OCB_OK;
	struct ocb_ceiling *fl = NULL; /* the (kind, threads) whose newest row is flagged */
	size_t nfl = 0;
	int rc = ocb_store_ceilings_flagged(s, machine_id, &fl, &nfl);
	for (size_t i = 0; i < b->n && rc == OCB_OK; i++) {
		const struct ocb_beaten_roof *br = &b->roof[i];
		const struct ocb_ceiling *ce = ocb_ceiling_find(c, nc, br->kind, br->threads);
		if (!ce || ce->suspect[0] || ocb_ceiling_find(fl, nfl, br->kind, br->threads))
			continue; /* gone, or flagged already: re-measured anyway */
		struct ocb_ceiling f = *ce;
		snprintf(f.suspect, sizeof f.suspect,
			 "%d result(s) of run %lld ran above it, up to %.0f%%: measured in a "
			 "slower moment of the host?", br->n, (long long)run_id, 100 * br->max_frac);
		if ((rc = ocb_store_ceiling(s, machine_id, run_id, &f)) != OCB_OK)
			break;
		count++;
		ocb_info("warning: ceiling %s at %d thread(s) (%.4g %s) flagged suspect: %s; the "
			 "next full run or 'ocbench ceilings --verify' re-measures it",
			 f.kind, f.threads, f.value, f.unit, f.suspect);
	}
	free(fl);
	if (nflagged)
		*nflagged = count;
	return rc;
}
