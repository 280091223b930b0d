/* The A/B round schedule: every (round, case, side) exactly once, the two sides of a
 * block back to back, a fresh order each round, both sides first about half the time,
 * and the same seed giving the same plan. */
#include <criterion/criterion.h>
#include <string.h>

#include "../collect/ab_plan.h"
#include "../common/ocb_error.h"

Test(ab_plan, every_case_once_per_side_per_round)
{
	struct ocb_ab_plan p;
	cr_assert_eq(ocb_ab_plan_make(10, 7, 4, 5, &p), OCB_OK);
	cr_assert_eq(p.nsteps, 7 * 2 * 3); /* blocks of 4, 4, 2 */
	unsigned seen[7][10][2];
	memset(seen, 0, sizeof seen);
	for (size_t s = 0; s < p.nsteps; s++) {
		const struct ocb_ab_step *st = &p.steps[s];
		const size_t *c = ocb_ab_step_cases(&p, st);
		for (size_t i = 0; i < st->count; i++)
			seen[st->round][c[i]][st->side]++;
		if (s % 2 == 1) { /* the pair: same block, other side */
			const struct ocb_ab_step *a = &p.steps[s - 1];
			cr_assert_eq(a->round, st->round);
			cr_assert_eq(a->first, st->first);
			cr_assert_eq(a->count, st->count);
			cr_assert_eq(a->side, 1 - st->side);
		}
		if (s > 0)
			cr_assert_geq(st->round, p.steps[s - 1].round);
	}
	for (int r = 0; r < 7; r++)
		for (int c = 0; c < 10; c++)
			cr_assert(seen[r][c][0] == 1 && seen[r][c][1] == 1, "round %d case %d", r, c);
	ocb_ab_plan_release(&p);
}

Test(ab_plan, randomized_and_seeded)
{
	struct ocb_ab_plan p, q, o;
	cr_assert_eq(ocb_ab_plan_make(20, 200, 0, 11, &p), OCB_OK);
	cr_assert_eq(ocb_ab_plan_make(20, 200, 0, 11, &q), OCB_OK);
	cr_assert_eq(ocb_ab_plan_make(20, 200, 0, 12, &o), OCB_OK);
	cr_assert_eq(p.nsteps, 400);
	cr_assert_eq(memcmp(p.order, q.order, 20 * 200 * sizeof *p.order), 0);
	cr_assert_neq(memcmp(p.order, o.order, 20 * 200 * sizeof *p.order), 0);
	/* The order changes from round to round, and CAND goes first in about half the
	 * rounds: 200 fair coins, P(outside 60..140) < 1e-8. */
	size_t same = 0, cand_first = 0;
	for (size_t r = 1; r < 200; r++)
		same += memcmp(p.order + r * 20, p.order + (r - 1) * 20, 20 * sizeof *p.order) == 0;
	for (size_t s = 0; s < p.nsteps; s += 2)
		cand_first += p.steps[s].side == OCB_AB_CAND;
	cr_assert_eq(same, 0);
	cr_assert(cand_first > 60 && cand_first < 140, "%zu", cand_first);
	/* Each case lands in first position of a round ~10 times in 200 (uniform). */
	unsigned first[20] = {0};
	for (size_t r = 0; r < 200; r++)
		first[p.order[r * 20]]++;
	for (int c = 0; c < 20; c++)
		cr_assert(first[c] < 40, "case %d first %u times", c, first[c]);
	ocb_ab_plan_release(&p);
	ocb_ab_plan_release(&q);
	ocb_ab_plan_release(&o);
}

Test(ab_plan, bad_sizes)
{
	struct ocb_ab_plan p;
	cr_assert_eq(ocb_ab_plan_make(0, 5, 1, 1, &p), OCB_EINVAL);
	cr_assert_eq(ocb_ab_plan_make(5, 0, 1, 1, &p), OCB_EINVAL);
	ocb_ab_plan_release(&p); /* harmless on a failed plan */
	cr_assert_eq(ocb_ab_plan_make(1, 1, 9, 1, &p), OCB_OK);
	cr_assert_eq(p.nsteps, 2);
	cr_assert_eq(p.steps[0].count, 1);
	ocb_ab_plan_release(&p);
}
