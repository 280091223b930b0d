/* Criterion suite `block_prune`: the BLaST-style pruning rules (workloads/block_prune.h):
 * the cubic schedule and its events, block Frobenius norms, deterministic top-k with ties,
 * a prune event with gradient regrowth, the recorded configuration, bad configurations. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../workloads/block_prune.h"

Test(block_prune, cubic_schedule_and_events)
{
	struct ocb_prune_cfg c = {.block = 16, .target = 0.9, .t0 = 100, .t1 = 300, .every = 50};
	cr_assert_eq(ocb_prune_sparsity(&c, 0), 0.0);
	cr_assert_eq(ocb_prune_sparsity(&c, 100), 0.0);
	/* half way: 1 - (1/2)^3 = 7/8 of the target */
	cr_assert_float_eq(ocb_prune_sparsity(&c, 200), 0.9 * 7.0 / 8.0, 1e-12);
	cr_assert_eq(ocb_prune_sparsity(&c, 300), 0.9);
	cr_assert_eq(ocb_prune_sparsity(&c, 5000), 0.9);
	double prev = -1;
	for (long t = 0; t <= 320; t++) {
		double s = ocb_prune_sparsity(&c, t);
		cr_assert_geq(s, prev);
		prev = s;
	}
	int due = 0;
	for (long t = 0; t < 1000; t++)
		due += ocb_prune_due(&c, t);
	cr_assert_eq(due, 5); /* 100, 150, 200, 250, 300 */
	cr_assert(ocb_prune_due(&c, 300) && !ocb_prune_due(&c, 301) && !ocb_prune_due(&c, 99));
	struct ocb_prune_cfg once = {.block = 8, .target = 0.5, .t0 = 0, .t1 = 0, .every = 1};
	cr_assert(ocb_prune_due(&once, 0) && !ocb_prune_due(&once, 1));
	cr_assert_eq(ocb_prune_sparsity(&once, 0), 0.5);
}

Test(block_prune, bad_configurations)
{
	struct ocb_prune_cfg ok = {.block = 16, .target = 0.9, .t0 = 0, .t1 = 10, .every = 1};
	cr_assert_eq(ocb_prune_cfg_check(&ok), OCB_OK);
	struct ocb_prune_cfg c = ok;
	c.target = 1.0;
	cr_assert_eq(ocb_prune_cfg_check(&c), OCB_EINVAL);
	c = ok, c.t1 = -1;
	cr_assert_eq(ocb_prune_cfg_check(&c), OCB_EINVAL);
	c = ok, c.every = 0;
	cr_assert_eq(ocb_prune_cfg_check(&c), OCB_EINVAL);
	c = ok, c.regrow = 1.0;
	cr_assert_eq(ocb_prune_cfg_check(&c), OCB_EINVAL);
	c = ok, c.block = 0;
	cr_assert_eq(ocb_prune_cfg_check(&c), OCB_EINVAL);
}

Test(block_prune, block_frobenius_norms)
{
	/* 4 x 6 matrix, 2 x 2 blocks: block (0,1) holds 3,4 / 0,0 -> 5 */
	float w[4 * 6] = {0};
	w[0 * 6 + 2] = 3, w[0 * 6 + 3] = 4;
	w[3 * 6 + 5] = -2;
	float n[2 * 3];
	ocb_block_norms(w, 4, 6, 2, n);
	float want[6] = {0, 5, 0, 0, 0, 2};
	for (int i = 0; i < 6; i++)
		cr_assert_float_eq(n[i], want[i], 1e-6);
}

Test(block_prune, keep_top_is_deterministic_on_ties)
{
	float s[6] = {1, 3, 3, 0, 2, 3};
	uint8_t m[6];
	cr_assert_eq(ocb_block_keep_top(s, 6, 2, m), OCB_OK);
	uint8_t want[6] = {0, 1, 1, 0, 0, 0}; /* the three 3s: lowest indices first */
	cr_assert_eq(memcmp(m, want, 6), 0);
	cr_assert_eq(ocb_block_keep_top(s, 6, 0, m), OCB_OK);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(m[i], 0);
	cr_assert_eq(ocb_block_keep_top(s, 6, 7, m), OCB_EINVAL);
}

Test(block_prune, event_with_regrowth)
{
	/* 8 blocks, 4 alive before (weights), keep 3, swap 1: the weakest kept goes, the
	 * dead block with the largest gradient comes back */
	float w[8] = {5, 0, 4, 0, 3, 0, 1, 0};
	float g[8] = {0, 0.1f, 0, 0.9f, 0, 0.5f, 0, 0.2f};
	uint8_t m[8];
	int back = -1;
	cr_assert_eq(ocb_block_prune_event(w, g, 8, 3, 1, m, &back), OCB_OK);
	uint8_t want[8] = {1, 0, 1, 1, 0, 0, 0, 0};
	cr_assert_eq(memcmp(m, want, 8), 0);
	cr_assert_eq(back, 1);
	int kept = 0;
	for (int i = 0; i < 8; i++)
		kept += m[i];
	cr_assert_eq(kept, 3);
	/* without a gradient: plain magnitude */
	cr_assert_eq(ocb_block_prune_event(w, NULL, 8, 3, 1, m, &back), OCB_OK);
	uint8_t mag[8] = {1, 0, 1, 0, 1, 0, 0, 0};
	cr_assert_eq(memcmp(m, mag, 8), 0);
	cr_assert_eq(back, 0);
}

Test(block_prune, configuration_is_recorded)
{
	struct ocb_prune_cfg c = {.block = 32, .target = 0.95, .t0 = 10, .t1 = 90, .every = 4,
				  .regrow = 0.1};
	cJSON *j = ocb_prune_cfg_to_json(&c);
	cr_assert_not_null(j);
	char *s = cJSON_PrintUnformatted(j);
	cr_assert(strstr(s, "\"rule\":\"block_frobenius_magnitude\""), "%s", s);
	cr_assert(strstr(s, "\"schedule\":\"cubic\""), "%s", s);
	cr_assert(strstr(s, "\"block\":32"), "%s", s);
	cr_assert(strstr(s, "\"regrow_rule\":\"gradient_frobenius\""), "%s", s);
	cJSON_free(s);
	cJSON_Delete(j);
}

Test(block_prune, kth_score_threshold)
{
	float s[5] = {0.5f, 2, 1, 2, 0};
	cr_assert_eq(ocb_block_kth_score(s, 5, 1), 2.0f);
	cr_assert_eq(ocb_block_kth_score(s, 5, 2), 2.0f);
	cr_assert_eq(ocb_block_kth_score(s, 5, 3), 1.0f);
	cr_assert(isinf(ocb_block_kth_score(s, 5, 0)) && ocb_block_kth_score(s, 5, 0) > 0);
	cr_assert(isinf(ocb_block_kth_score(s, 5, 5)) && ocb_block_kth_score(s, 5, 5) < 0);
}
