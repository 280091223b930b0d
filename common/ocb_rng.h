/* ocb_rng: explicit-seed pseudo-random numbers (xoshiro256**, seeded by splitmix64,
 * Blackman & Vigna 2018). Every random choice in ocbench goes through one of these so
 * that the same seed gives the same numbers. Not thread-shared: one state per thread. */
#ifndef OCB_RNG_H
#define OCB_RNG_H

#include <stdint.h>

struct ocb_rng { uint64_t s[4]; };

void ocb_rng_seed(struct ocb_rng *r, uint64_t seed);
uint64_t ocb_rng_u64(struct ocb_rng *r);
/* Uniform in [0, 1) with 24 random bits (float) / 53 bits (double). */
float ocb_rng_uniformf(struct ocb_rng *r);
double ocb_rng_uniform(struct ocb_rng *r);
/* Standard normal (Box-Muller). */
double ocb_rng_normal(struct ocb_rng *r);
/* Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; tiny bias is irrelevant here). */
uint64_t ocb_rng_below(struct ocb_rng *r, uint64_t n);

#endif
