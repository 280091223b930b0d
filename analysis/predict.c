/* predict: see predict.h for the model. */
#include "predict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"

int ocb_pvm_wanted(const char *bench, const char *bound)
{
	if (!bench || !bound)
		return 0;
	if (strcmp(bench, "decode_pass") == 0)
		return 1;
	char ck[32], bk[32];
	return strcmp(bench, "quant_gemv") == 0 && ocb_roof_parse(bound, ck, bk, sizeof ck) == 0 &&
	       strncmp(bk, "bw_dram", 7) == 0;
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

int ocb_pvm_predict(const struct ocb_roof_ceil *c, size_t n, const struct ocb_pvm_case *k,
		    struct ocb_pvm *out)
{
	char ck[32], bk[32];
	*out = (struct ocb_pvm){NAN, NAN, NAN, NAN, "", NAN, 0};
	if (!k || !k->bound || ocb_roof_parse(k->bound, ck, bk, sizeof ck) != 0)
		return ocb_seterr(OCB_EINVAL, "predict: unparsable bound '%s'",
				  k && k->bound ? k->bound : "(null)");
	if ((bk[0] && !(k->bytes > 0)) || (ck[0] && !(k->ops > 0)))
		return ocb_seterr(OCB_EINVAL, "predict: %s: no work model (ops %g, bytes %g)",
				  k->bench ? k->bench : "?", k->ops, k->bytes);
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
