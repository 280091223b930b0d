/* ptq_checks: acceptance comparisons of a PTQ sweep (see the header). */
#include "ptq_checks.h"

#include <math.h>
#include <stdio.h>

int ptq_checks(const char *model, int is_lm, const struct ptq_conf *c, const double *metric,
	       int n, struct ptq_check *out)
{
	double sign = is_lm ? -1.0 : 100.0; /* ppl: lower is better; acc in points */
	const char *unit = is_lm ? "ppl" : "points";
	const char *gs[3] = {"32", "128", "pc"}, *bs[2] = {"3", "2"}, *mm[2] = {"rtn", "gptq"};
	int k = 0;
	for (int b = 0; b < 2; b++)
		for (int g = 0; g < 3; g++) {
			double r = ptq_lookup(c, metric, n, "rtn", bs[b], gs[g]);
			double q = ptq_lookup(c, metric, n, "gptq", bs[b], gs[g]);
			if (isnan(r) || isnan(q))
				continue;
			snprintf(out[k].key, sizeof out[k].key, "%s_gptq_gain_b%s_g%s", model, bs[b],
				 gs[g]);
			out[k].value = sign * (q - r);
			out[k++].unit = unit;
		}
	if (!is_lm && n > 0) {
		double q8 = ptq_lookup(c, metric, n, "q8_0", "8", "32");
		if (!isnan(q8)) {
			snprintf(out[k].key, sizeof out[k].key, "mlp_q8_0_margin_points");
			out[k].value = 0.2 - 100.0 * (metric[0] - q8);
			out[k++].unit = "points";
		}
	}
	for (int j = 0; j < 2; j++) {
		char mixed[16];
		snprintf(mixed, sizeof mixed, "mixed_%s", mm[j]);
		double u = ptq_lookup(c, metric, n, mm[j], "3", "128");
		double x = ptq_lookup(c, metric, n, mixed, "3", "128");
		if (isnan(u) || isnan(x))
			continue;
		snprintf(out[k].key, sizeof out[k].key, "%s_mixed_gain_%s", model, mm[j]);
		out[k].value = sign * (x - u);
		out[k++].unit = unit;
	}
	return k;
}
