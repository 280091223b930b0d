/* ab_plan: the round schedule of `ocbench ab BASE CAND`, randomized multiple
 * interleaved trials (Abedi & Brecht, "Conducting Repeatable Experiments in Highly
 * Variable Cloud Computing Environments", ICPE 2017): instead of all of BASE then all of
 * CAND, both builds run the same cases alternately over many short rounds, in an order
 * drawn anew each round, so that whatever the host does (other tenants, frequency, a
 * neighbour's cache traffic) hits both sides alike and cancels in the per-round ratio.
 *
 * Round r: a fresh permutation of the case indices, cut into blocks of `block`
 * consecutive cases (the last may be shorter); each block is one step per side, the two
 * steps back to back, the side that goes first drawn by a fair coin. A step is one child
 * process (`BINARY run --filter <the block's cases> --passes 1 ...`), so `block` trades
 * process start-up against how far apart in time the two sides of a case run.
 * Every (round, case, side) appears in exactly one step. Pure: same seed, same plan. */
#ifndef OCB_AB_PLAN_H
#define OCB_AB_PLAN_H

#include <stddef.h>
#include <stdint.h>

enum { OCB_AB_BASE = 0, OCB_AB_CAND = 1 };

struct ocb_ab_step {
	size_t round;
	int side;     /* OCB_AB_BASE or OCB_AB_CAND */
	size_t first; /* the step's cases are order[round * ncases + first .. + count) */
	size_t count;
};

struct ocb_ab_plan {
	size_t ncases, rounds, block;
	size_t *order;             /* rounds x ncases: each row a permutation of 0..ncases) */
	struct ocb_ab_step *steps; /* nsteps = rounds x 2 x ceil(ncases / block), in order */
	size_t nsteps;
};

/* Builds the plan (block == 0 means one block: all cases). ncases == 0 or rounds == 0 is
 * OCB_EINVAL. *p owns its arrays; release with ocb_ab_plan_release. */
int ocb_ab_plan_make(size_t ncases, size_t rounds, size_t block, uint64_t seed,
		     struct ocb_ab_plan *p);
void ocb_ab_plan_release(struct ocb_ab_plan *p);

/* The cases of step s: a pointer into p->order, s->count long. */
static inline const size_t *ocb_ab_step_cases(const struct ocb_ab_plan *p,
					      const struct ocb_ab_step *s)
{
	return p->order + s->round * p->ncases + s->first;
}

#endif
