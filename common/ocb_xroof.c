/* ocb_xroof: extended roofline of a training step (see ocb_xroof.h). */
#include "ocb_xroof.h"

#include <math.h>

const char *ocb_xroof_name(enum ocb_xroof_kind k)
{
	static const char *const n[OCB_XROOF_N] = {"compute", "memory", "network", "staging"};
	return (unsigned)k < OCB_XROOF_N ? n[k] : "?";
}

static double bound(double work, double rate)
{
	return work > 0 && rate > 0 && isfinite(rate) ? work / rate : NAN;
}

void ocb_xroof_place(const struct ocb_xroof_work *w, const struct ocb_xroof_ceil *c,
		     double measured_s, struct ocb_xroof *o)
{
	o->t[OCB_XROOF_COMPUTE] = bound(w->flops, c->flops_per_s);
	o->t[OCB_XROOF_MEMORY] = bound(w->mem_bytes, c->mem_bytes_per_s);
	o->t[OCB_XROOF_NETWORK] = bound(w->net_bytes, c->net_bytes_per_s);
	o->t[OCB_XROOF_STAGING] = bound(w->io_bytes, c->io_bytes_per_s);
	o->bound = OCB_XROOF_COMPUTE;
	o->t_bound = NAN;
	for (int k = 0; k < OCB_XROOF_N; k++)
		if (!isnan(o->t[k]) && (isnan(o->t_bound) || o->t[k] > o->t_bound)) {
			o->t_bound = o->t[k];
			o->bound = (enum ocb_xroof_kind)k;
		}
	o->fraction = measured_s > 0 ? o->t_bound / measured_s : NAN;
}
