/* predict: see predict.h for the model. */
#include "predict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"

/* The level of a "bw_l1" .. "bw_dram" kind (a "_triad" suffix allowed), or -1. */
static int level_of(const char *bk)
{
	for (int l = 0; l < OCB_NLEVELS; l++) {
		size_t n = strlen(ocb_level_kind((enum ocb_level)l));
		if (strncmp(bk, ocb_level_kind((enum ocb_level)l), n) == 0 &&
		    (bk[n] == 0 || bk[n] == '_'))
			return l;
	}
	return -1;
}

int ocb_pvm_level(const struct ocb_pvm_case *k, const struct ocb_roof_caches *caches)
{
	char ck[32], bk[32];
	if (!k || !k->bound || ocb_roof_parse(k->bound, ck, bk, sizeof ck) != 0)
		return -1;
	int stored = level_of(bk);
	if (stored < 0 || !caches || !(k->bytes > 0))
		return stored;
	int now = (int)ocb_roof_level(caches, k->bytes, k->threads);
	return now > stored ? now : stored; /* the slower (higher) level */
}

int ocb_pvm_wanted(const struct ocb_pvm_case *k, const struct ocb_roof_caches *caches)
{
	if (!k || !k->bench || !k->bound)
		return 0;
	if (strcmp(k->bench, "decode_pass") == 0)
		return 1;
	return strcmp(k->bench, "quant_gemv") == 0 && ocb_pvm_level(k, caches) == OCB_LEVEL_DRAM;
}

/* Seconds of `work` (G-units) at the ceiling of `kind`; NaN and "no <kind>" when absent. */
static double roof_time(const struct ocb_roof_ceil *c, size_t n, const char *kind, int threads,
			double work, const struct ocb_roof_ceil **hit)
{
	*hit = ocb_roof_find(c, n, kind, threads);
	if (!*hit || !((*hit)->value > 0))
		return NAN;
	return work / ((*hit)->value * 1e9);
}

int ocb_pvm_predict(const struct ocb_roof_ceil *c, size_t n, const struct ocb_roof_caches *caches,
		    const struct ocb_pvm_case *k, struct ocb_pvm *out)
{
	char ck[32], bk[32];
	*out = (struct ocb_pvm){NAN, NAN, NAN, NAN, "", NAN, 0, 0};
	if (!k || !k->bound || ocb_roof_parse(k->bound, ck, bk, sizeof ck) != 0)
		return ocb_seterr(OCB_EINVAL, "predict: unparsable bound '%s'",
				  k && k->bound ? k->bound : "(null)");
	if ((bk[0] && !(k->bytes > 0)) || (ck[0] && !(k->ops > 0)))
		return ocb_seterr(OCB_EINVAL, "predict: %s: no work model (ops %g, bytes %g)",
				  k->bench ? k->bench : "?", k->ops, k->bytes);
	int stored = level_of(bk), lv = ocb_pvm_level(k, caches);
	if (stored >= 0 && lv > stored) { /* the same roof family at the slower level */
		const char *tail = bk + strlen(ocb_level_kind((enum ocb_level)stored));
		char moved[32];
		snprintf(moved, sizeof moved, "%s%s", ocb_level_kind((enum ocb_level)lv), tail);
		snprintf(bk, sizeof bk, "%s", moved);
		out->relevelled = 1;
	}
	const struct ocb_roof_ceil *cm = NULL, *cc = NULL;
	if (bk[0])
		out->t_mem = roof_time(c, n, bk, k->threads, k->bytes, &cm);
	if (ck[0])
		out->t_compute = roof_time(c, n, ck, k->threads, k->ops, &cc);
	if ((bk[0] && !cm) || (ck[0] && !cc)) {
		snprintf(out->binds, sizeof out->binds, "no %s", bk[0] && !cm ? bk : ck);
		return OCB_OK; /* a missing roof: NaN, never another roof in its place */
	}
	/* the larger time binds; a lone roof binds alone */
	int mem = bk[0] && (!ck[0] || out->t_mem >= out->t_compute);
	const struct ocb_roof_ceil *hit = mem ? cm : cc;
	out->predicted_s = mem ? out->t_mem : out->t_compute;
	snprintf(out->binds, sizeof out->binds, "%s", hit->kind);
	out->roof = hit->value;
	out->roof_threads = hit->threads;
	if (k->measured_s > 0 && out->predicted_s > 0)
		out->ratio = k->measured_s / out->predicted_s;
	return OCB_OK;
}

int ocb_pvm_within(double ratio, double tol)
{
	return isfinite(ratio) && fabs(ratio - 1.0) <= tol;
}
