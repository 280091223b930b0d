#include "sigfig.h"

#include <math.h>
#include <stdio.h>

/* v rounded to 10^place, printed with max(0, -place) decimals. */
static void at_place(double v, int place, char *buf, size_t len)
{
	if (place >= 0) {
		double p = pow(10, place);
		snprintf(buf, len, "%.0f", round(v / p) * p);
	} else {
		snprintf(buf, len, "%.*f", -place, v);
	}
}

char *ocb_sigfig(double v, double lo, double hi, int sig, char *buf, size_t len)
{
	if (!len)
		return buf;
	buf[0] = '\0';
	if (isnan(v))
		return buf;
	if (isinf(v)) {
		snprintf(buf, len, "%s", v > 0 ? "inf" : "-inf");
		return buf;
	}
	double a = fabs(v);
	if (a == 0) {
		snprintf(buf, len, "0");
		return buf;
	}
	if (a < 1e-4 || a >= 1e9) {
		snprintf(buf, len, "%.*g", sig < 1 ? 1 : sig, v);
		return buf;
	}
	int lead = (int)floor(log10(a)); /* place of v's first significant digit */
	int place = lead - ((sig < 1 ? 1 : sig) - 1);
	double half = (hi - lo) / 2;
	if (!isnan(lo) && !isnan(hi) && half > 0 && isfinite(half)) {
		place = (int)floor(log10(half));
		if (place < lead - 5) /* at most 6 from a CI */
			place = lead - 5;
	}
	if (place > lead - 1) /* at least 2 significant digits */
		place = lead - 1;
	if (place < lead - 16)
		place = lead - 16;
	at_place(v, place, buf, len);
	/* rounding may carry into a new digit ("9.96" at place -1 -> "10.0"): harmless */
	return buf;
}

const char *ocb_time_unit(double seconds, double *scale)
{
	double a = fabs(seconds);
	if (!(a > 0) || a >= 1) {
		*scale = 1;
		return "s";
	}
	if (a >= 1e-3) {
		*scale = 1e3;
		return "ms";
	}
	if (a >= 1e-6) {
		*scale = 1e6;
		return "us";
	}
	*scale = 1e9;
	return "ns";
}
