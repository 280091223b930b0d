#include "records.h"

#include <stdlib.h>
#include <string.h>

void ocb_result_release(struct ocb_result *r)
{
	if (!r)
		return;
	free(r->params_json);
	free(r->samples);
	free(r->cpu_samples);
	free(r->counters);
	memset(r, 0, sizeof *r);
}

const char *ocb_run_mode(const struct ocb_run *r)
{
	return r->quick > 0 ? "quick" : r->quick == 0 ? "full" : "-";
}
