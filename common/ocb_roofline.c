/* ocb_roofline: see the header for the rules; REFERENCE.md §3 for the formula. */
#include "ocb_roofline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ROOFLINE_PREFIX "roofline:"

static const char *const level_kind[OCB_NLEVELS] = {"bw_l1", "bw_l2", "bw_l3", "bw_dram"};

const char *ocb_level_kind(enum ocb_level l)
{
	return l >= OCB_LEVEL_L1 && l < OCB_NLEVELS ? level_kind[l] : "bw_dram";
}

const struct ocb_roof_ceil *ocb_roof_find(const struct ocb_roof_ceil *c, size_t n,
					  const char *kind, int threads)
{
	const struct ocb_roof_ceil *above = NULL, *below = NULL;
	for (size_t i = 0; c && kind && i < n; i++) {
		if (!c[i].kind || strcmp(c[i].kind, kind) != 0 || !(c[i].value > 0) ||
		    !isfinite(c[i].value))
			continue;
		if (c[i].threads == threads)
			return &c[i];
		if (c[i].threads > threads && (!above || c[i].threads < above->threads))
			above = &c[i];
		if (c[i].threads < threads && (!below || c[i].threads > below->threads))
			below = &c[i];
	}
	return above ? above : below;
}

double ocb_roof_llc(const struct ocb_roof_caches *m)
{
	if (!m)
		return 0.0;
	return m->llc > 0 ? m->llc : m->l3 > 0 ? m->l3 : m->l2 > 0 ? m->l2 : 0.0;
}

double ocb_roof_dram_cycle(const struct ocb_roof_caches *m, int threads)
{
	return fmin(4.0 * ocb_roof_llc(m), 1024.0 * 1024 * 1024) * (threads > 0 ? threads : 1);
}

/* The cache sizes the level rules read, with their defaults, and a working set's share
 * per thread: t threads on min(t, cores) cores, SMT siblings splitting one core's L1d
 * and L2 (share = cores / t). */
struct roof_geom {
	double l1, l2, l3, cores, per, share;
};

static struct roof_geom roof_geom(const struct ocb_roof_caches *m, double ws, int threads)
{
	const int t = threads > 0 ? threads : 1;
	struct roof_geom g = {
		.l1 = m && m->l1d > 0 ? m->l1d : 32.0 * 1024,
		.l2 = m && m->l2 > 0 ? m->l2 : 256.0 * 1024,
		.l3 = m && m->llc > 0 ? m->llc : m && m->l3 > 0 ? m->l3 : 0.0,
		.cores = m && m->cores > 0 && m->cores < t ? (double)m->cores : (double)t,
		.per = ws / t};
	g.share = g.cores / t;
	return g;
}

enum ocb_level ocb_roof_level(const struct ocb_roof_caches *m, double ws, int threads)
{
	const struct roof_geom g = roof_geom(m, ws, threads);
	const double priv = g.l1 + g.l2; /* distinct bytes one core's private caches can hold */
	if (!(ws > 0) || g.per <= g.l1 * g.share)
		return OCB_LEVEL_L1;
	if (g.per <= priv * g.share)
		return OCB_LEVEL_L2;
	if (g.l3 > 0 && ws <= g.l3 + g.cores * priv)
		return OCB_LEVEL_L3;
	return OCB_LEVEL_DRAM;
}

enum ocb_level ocb_roof_level_cycle(const struct ocb_roof_caches *m, double ws, double cycle,
				    int threads)
{
	const enum ocb_level lv = ocb_roof_level(m, ws, threads);
	const struct roof_geom g = roof_geom(m, ws, threads);
	if (lv == OCB_LEVEL_L2 && g.per < 2 * g.l1 * g.share)
		return OCB_LEVEL_L1;
	if (lv == OCB_LEVEL_L3 && g.per < 2 * g.l2 * g.share)
		return OCB_LEVEL_L2;
	if (lv == OCB_LEVEL_DRAM && g.l3 > 0 && cycle > 0 && cycle < ocb_roof_dram_cycle(m, threads))
		return OCB_LEVEL_L3;
	return lv;
}

int ocb_roof_bound(const struct ocb_roof_caches *m, const char *wish, const char *compute,
		   double ws, double cycle, int threads, char *out, size_t len)
{
	const char *lv = ocb_level_kind(ocb_roof_level_cycle(m, ws, cycle, threads));
	int k;
	if (!compute || !*compute)
		compute = OCB_ROOF_DEFAULT_COMPUTE;
	if (!wish || !*wish)
		k = snprintf(out, len, ROOFLINE_PREFIX "%s,%s", compute, lv);
	else if (strncmp(wish, "bw_*", 4) == 0)
		k = snprintf(out, len, "%s%s", lv, wish + 4); /* "" or "_triad" */
	else
		k = snprintf(out, len, "%s", wish);
	if (k < 0 || (size_t)k >= len) {
		if (len)
			out[0] = '\0';
		return -1;
	}
	return 0;
}

int ocb_roof_parse(const char *bound, char *compute, char *bw, size_t len)
{
	compute[0] = bw[0] = '\0';
	if (!bound || !*bound)
		return -1;
	size_t np = strlen(ROOFLINE_PREFIX);
	if (strncmp(bound, ROOFLINE_PREFIX, np) == 0) {
		const char *b = bound + np, *comma = strchr(b, ',');
		if (!comma) { /* "roofline:bw_l2": stored before compute roofs were named */
			if (strncmp(b, "bw_", 3) != 0 || strlen(b) >= len)
				return -1;
			snprintf(compute, len, "%s", OCB_ROOF_DEFAULT_COMPUTE);
			snprintf(bw, len, "%s", b);
			return 0;
		}
		size_t cl = (size_t)(comma - b);
		if (cl == 0 || cl >= len || strncmp(comma + 1, "bw_", 3) != 0 ||
		    strlen(comma + 1) >= len)
			return -1;
		memcpy(compute, b, cl);
		compute[cl] = '\0';
		snprintf(bw, len, "%s", comma + 1);
		return 0;
	}
	if (strlen(bound) >= len)
		return -1;
	snprintf(strncmp(bound, "bw_", 3) == 0 ? bw : compute, len, "%s", bound);
	return 0;
}

int ocb_roof_is_bw(const char *bound)
{
	return bound && strncmp(bound, "bw_", 3) == 0;
}

const struct ocb_roof_ceil *ocb_roof_binding(const struct ocb_roof_ceil *c, size_t n,
					     const char *bound, int threads, double ops,
					     double bytes, double *attainable)
{
	char ck[32], bk[32];
	*attainable = NAN;
	if (ocb_roof_parse(bound, ck, bk, sizeof ck) != 0)
		return NULL;
	const struct ocb_roof_ceil *cc = ck[0] ? ocb_roof_find(c, n, ck, threads) : NULL;
	const struct ocb_roof_ceil *bc = bk[0] ? ocb_roof_find(c, n, bk, threads) : NULL;
	if ((ck[0] && !cc) || (bk[0] && !bc))
		return NULL; /* "no roof": never another roof in its place */
	if (!bk[0]) {
		*attainable = cc->value; /* one compute ceiling */
		return cc;
	}
	if (!ck[0]) {
		*attainable = bc->value; /* one bandwidth ceiling (GB/s) */
		return bc;
	}
	if (!(ops > 0) || !(bytes >= 0))
		return NULL;
	if (bytes == 0) {
		*attainable = cc->value;
		return cc;
	}
	double mem = bc->value * ops / bytes; /* GB/s x op/B = Gop/s */
	*attainable = mem < cc->value ? mem : cc->value;
	return mem < cc->value ? bc : cc;
}

double ocb_roof_attainable(const struct ocb_roof_ceil *c, size_t n, const char *bound,
			   int threads, double ops, double bytes)
{
	double att;
	ocb_roof_binding(c, n, bound, threads, ops, bytes, &att);
	return att;
}

double ocb_roof_frac(const struct ocb_roof_ceil *c, size_t n, const char *bound, int threads,
		     double ops, double bytes, double seconds)
{
	if (!(seconds > 0) || !isfinite(seconds))
		return NAN;
	double work = ocb_roof_is_bw(bound) ? bytes : ops;
	if (!(work > 0) || !isfinite(work))
		return NAN;
	double att = ocb_roof_attainable(c, n, bound, threads, ops, bytes);
	if (!(att > 0) || !isfinite(att))
		return NAN;
	return work / seconds * 1e-9 / att;
}
