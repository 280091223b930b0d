/* canary_run: see canary_run.h. */
#include "canary_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_log.h"

int ocb_canary_run_disabled(void)
{
	const char *e = getenv("OCBENCH_NO_CANARIES");
	return e && *e && strcmp(e, "0") != 0;
}

void ocb_canary_run_init(struct ocb_canary_run *cr, const struct ocb_machine *m, int quick)
{
	memset(cr, 0, sizeof *cr);
	if (ocb_canary_run_disabled())
		return;
	cr->m = *m;
	cr->quick = quick;
	cr->on = 1;
}

int ocb_canary_store_point(struct ocb_store *s, int64_t run_id, int point,
			   const double rate[OCB_CANARY_N])
{
	int rc = OCB_OK;
	for (int k = 0; k < OCB_CANARY_N && rc == OCB_OK; k++)
		if (isfinite(rate[k]))
			rc = ocb_store_metric(s, run_id, "canary", point, ocb_canary_name[k], rate[k],
					      ocb_canary_unit[k]);
	return rc;
}

int ocb_canary_run_point(struct ocb_canary_run *cr, struct ocb_store *s, int64_t run_id,
			 int point)
{
	double rate[OCB_CANARY_N];
	struct ocb_canaries can;
	if (!cr->on || (cr->stored & (1 << point)))
		return OCB_OK;
	cr->stored |= 1 << point;
	if (ocb_canaries_init_reps(&can, &cr->m, cr->quick, cr->reps[0] > 0 ? cr->reps : NULL) !=
	    OCB_OK) {
		ocb_info("canaries: %s not measured: %s", ocb_canary_point[point], ocb_lasterr());
		return OCB_OK;
	}
	memcpy(cr->reps, can.reps, sizeof cr->reps);
	ocb_canaries_measure(&can, rate);
	ocb_canaries_release(&can);
	return ocb_canary_store_point(s, run_id, point, rate);
}

void ocb_canary_run_release(struct ocb_canary_run *cr)
{
	cr->on = 0;
}
