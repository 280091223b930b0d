/* ceiling_llc: see ceiling_llc.h. */
#include "ceiling_llc.h"

#include <math.h>
#include <string.h>

#include "ceilings.h"

#define MIB (1024.0 * 1024.0)

int ocb_llc_find(const size_t *ws, const double *bw, size_t n, double floor, double *cap,
		 double *thr_out)
{
	*cap = 0;
	if (n < 3 || !(bw[n - 1] > 0) || !isfinite(bw[n - 1]))
		return 0;
	double dram = bw[n - 1], cache = 0;
	for (size_t k = 0; k + 1 < n; k++) /* the fastest rate past the floor */
		if ((double)ws[k] > floor && bw[k] > cache && isfinite(bw[k]))
			cache = bw[k];
	if (!(cache >= OCB_LLC_ABOVE_DRAM * dram))
		return 0; /* no level past the floor stands out of the DRAM band */
	double thr = sqrt(cache * dram);
	size_t i = n - 1;
	while (i > 0 && !(bw[i - 1] >= thr)) /* NaN counts as not above */
		i--;
	/* bw[i-1] >= thr > bw[i]: the crossing, interpolated in log(ws) */
	double lo = log((double)ws[i - 1]), hi = log((double)ws[i]);
	double f = (bw[i - 1] - thr) / (bw[i - 1] - bw[i]);
	double c = exp(lo + f * (hi - lo));
	if (!(c > floor) || !isfinite(c))
		return 0;
	*cap = c;
	if (thr_out)
		*thr_out = thr;
	return (int)i;
}
