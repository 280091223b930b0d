#include "ocb_rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void ocb_rng_seed(struct ocb_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t ocb_rng_u64(struct ocb_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

float ocb_rng_uniformf(struct ocb_rng *r)
{
	return (float)(ocb_rng_u64(r) >> 40) * (1.0f / 16777216.0f);
}

double ocb_rng_uniform(struct ocb_rng *r)
{
	return (double)(ocb_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0);
}

double ocb_rng_normal(struct ocb_rng *r)
{
	double u1 = ocb_rng_uniform(r), u2 = ocb_rng_uniform(r);
	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

uint64_t ocb_rng_below(struct ocb_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)ocb_rng_u64(r) * n) >> 64);
}
