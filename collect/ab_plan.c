#include "ab_plan.h"

#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"

int ocb_ab_plan_make(size_t ncases, size_t rounds, size_t block, uint64_t seed,
		     struct ocb_ab_plan *p)
{
	memset(p, 0, sizeof *p);
	if (ncases == 0 || rounds == 0)
		return ocb_seterr(OCB_EINVAL, "ab: %zu cases, %zu rounds", ncases, rounds);
	if (block == 0 || block > ncases)
		block = ncases;
	size_t nblocks = (ncases + block - 1) / block;
	p->ncases = ncases;
	p->rounds = rounds;
	p->block = block;
	p->nsteps = rounds * 2 * nblocks;
	p->order = malloc(rounds * ncases * sizeof *p->order);
	p->steps = malloc(p->nsteps * sizeof *p->steps);
	if (!p->order || !p->steps) {
		ocb_ab_plan_release(p);
		return ocb_seterr(OCB_ENOMEM, "ab: plan of %zu x %zu", rounds, ncases);
	}
	struct ocb_rng rng;
	ocb_rng_seed(&rng, seed);
	size_t s = 0;
	for (size_t r = 0; r < rounds; r++) {
		size_t *row = p->order + r * ncases;
		for (size_t i = 0; i < ncases; i++)
			row[i] = i;
		for (size_t i = ncases - 1; i > 0; i--) { /* Fisher-Yates */
			size_t j = (size_t)ocb_rng_below(&rng, i + 1), t = row[i];
			row[i] = row[j];
			row[j] = t;
		}
		for (size_t b = 0; b < nblocks; b++) {
			size_t first = b * block;
			size_t count = first + block <= ncases ? block : ncases - first;
			int side = (int)ocb_rng_below(&rng, 2);
			p->steps[s++] = (struct ocb_ab_step){r, side, first, count};
			p->steps[s++] = (struct ocb_ab_step){r, 1 - side, first, count};
		}
	}
	return OCB_OK;
}

void ocb_ab_plan_release(struct ocb_ab_plan *p)
{
	free(p->order);
	free(p->steps);
	p->order = NULL;
	p->steps = NULL;
	p->nsteps = 0;
}
