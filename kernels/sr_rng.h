/* sr_rng: the counter-based random numbers of stochastic rounding. A number is a pure
 * function of (seed, step, tensor, index) — no state, no order — so a parallel update
 * gives the same codes for any thread count or tile order (as Philox/Threefry, Salmon et
 * al., SC 2011, "Parallel random numbers: as easy as 1, 2, 3"; here a cheaper hash).
 *   key   = fmix64(seed ^ fmix64(step * K1 ^ tensor * K2))        (MurmurHash3's finaliser)
 *   u32   = mix32(lo32(key) ^ mix32(index32 + hi32(key)))          (Wellons' lowbias32)
 *   u     = (u32 >> 8) * 2^-24, uniform in [0, 1) on 24 bits
 * index is taken mod 2^32 (a tensor larger than 4 G elements would repeat numbers). The
 * 32-bit mixer uses only 32-bit multiplies, so the AVX2 path (vpmulld) computes the same
 * integers. */
#ifndef OCB_SR_RNG_H
#define OCB_SR_RNG_H

#include <stdint.h>

static inline uint64_t sr_fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

static inline uint32_t sr_mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

static inline uint64_t sr_key(uint64_t seed, uint64_t step, uint64_t tensor)
{
	return sr_fmix64(seed ^ sr_fmix64(step * 0x9e3779b97f4a7c15ULL ^
					  tensor * 0xd1b54a32d192ed03ULL));
}

static inline uint32_t sr_u32(uint64_t key, uint64_t index)
{
	return sr_mix32((uint32_t)key ^ sr_mix32((uint32_t)index + (uint32_t)(key >> 32)));
}

/* Uniform in [0, 1) with 24 bits. */
static inline float sr_uniform(uint64_t key, uint64_t index)
{
	return (float)(sr_u32(key, index) >> 8) * 0x1p-24f;
}

/* Stochastic rounding of x to an integer: floor(x) + 1 with probability x - floor(x),
 * decided by u in [0, 1): E[result] = x exactly when u is uniform. */
static inline float sr_round(float x, float u)
{
	float f = __builtin_floorf(x);
	return f + (u < x - f ? 1.0f : 0.0f);
}

#endif
