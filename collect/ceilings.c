/* ceilings: looking ceilings up (find, nearest, the roofline bound, the memory level of
 * a working set) and the band/plateau logic of the bandwidth sweep. The measurement is
 * collect/ceilings_measure.c, the consistency rules collect/ceiling_rules.c. */
#include "ceilings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)

const struct ocb_ceiling *ocb_ceiling_find(const struct ocb_ceiling *c, size_t n,
					   const char *kind, int threads)
{
	const struct ocb_ceiling *flagged = NULL;
	for (size_t i = 0; c && i < n; i++)
		if (c[i].threads == threads && strcmp(c[i].kind, kind) == 0) {
			if (!c[i].suspect[0])
				return &c[i];
			if (!flagged)
				flagged = &c[i];
		}
	return flagged;
}

void ocb_ceilings_bands(const struct ocb_machine *m, int quick, struct ocb_bands *b)
{
	double l1 = m->l1d_bytes > 0 ? (double)m->l1d_bytes : 32.0 * KIB;
	double l2 = m->l2_bytes > 0 ? (double)m->l2_bytes : 256.0 * KIB;
	/* the measured last-level capacity where there is one (ceiling_llc.h) */
	double l3 = m->llc_bytes > 0 ? (double)m->llc_bytes : (double)m->l3_bytes;
	double share = l3 > 0 ? l3 / (m->threads > 0 ? m->threads : 1) : 0.0;
	/* quick: the working set of the quick STREAM cross-check (3 arrays of 64 MiB), so
	 * that bw_dram_triad and STREAM measure the same thing */
	double dram = quick ? 192.0 * MIB : 64.0 * MIB;
	/* 4x the whole last level, not 4x one core's share of it: one thread alone has all
	 * of it, and on a victim L3 (AMD) 2-4x its size still hits in part (AMD EPYC Zen 5
	 * VM, 27 MiB measured: with the band from 64 MiB, 1-thread bw_dram_triad read 1.15-1.20x
	 * an independent STREAM triad over 1 GiB arrays) */
	/* (the same rule as ocb_roof_dram_cycle, which sizes the DRAM cases' copies to
	 * these working sets: keep the two together) */
	if (!quick && 4 * l3 > dram)
		dram = fmin(4 * l3, 1024.0 * MIB); /* a VM may report the host's L3 (480 MiB) */
	b->lo[0] = 0;
	b->hi[0] = 0.75 * l1;
	b->lo[1] = 2 * l1;
	b->hi[1] = l2 / 2;
	b->lo[2] = 2 * l2;
	b->hi[2] = fmin(share / 2, dram / 2); /* share 0: empty band (lo > hi) */
	b->lo[3] = dram;
	b->hi[3] = INFINITY;
}

/* A value of the sweep and its index; sorted by value, largest first (ties: the
 * smaller index first, so the pick does not depend on qsort's order). */
struct pick {
	double v;
	int i;
};

static int cmp_desc(const void *a, const void *b)
{
	const struct pick *x = a, *y = b;
	if (x->v != y->v)
		return (x->v < y->v) - (x->v > y->v);
	return (x->i > y->i) - (x->i < y->i);
}

int ocb_ceilings_plateau_at(const size_t *ws, const double *val, size_t n, int threads,
			    double lo, double hi)
{
	struct pick in[OCB_CEIL_MAX_SIZES];
	size_t k = 0;
	for (size_t i = 0; i < n && k < OCB_CEIL_MAX_SIZES; i++) {
		double w = (double)ws[i] / (threads > 0 ? threads : 1);
		if (w >= lo && w <= hi && !isnan(val[i]))
			in[k++] = (struct pick){val[i], (int)i};
	}
	if (k == 0)
		return -1;
	qsort(in, k, sizeof in[0], cmp_desc);
	return k >= 3 ? in[1].i : in[0].i;
}

double ocb_ceilings_plateau(const size_t *ws, const double *val, size_t n, int threads,
			    double lo, double hi)
{
	int i = ocb_ceilings_plateau_at(ws, val, n, threads, lo, hi);
	return i < 0 ? NAN : val[i];
}
