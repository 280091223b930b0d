#define _GNU_SOURCE /* asprintf */
#include "rdata.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"

double ocb_unit_seconds(const char *unit)
{
	if (!unit || !*unit || strcmp(unit, "s") == 0)
		return 1;
	if (strcmp(unit, "ms") == 0)
		return 1e-3;
	if (strcmp(unit, "us") == 0)
		return 1e-6;
	if (strcmp(unit, "ns") == 0)
		return 1e-9;
	return 0;
}

double ocb_rrow_gflops(const struct ocb_rrow *r)
{
	double sec = ocb_unit_seconds(r->unit) * r->median;
	return sec > 0 && r->flops > 0 ? r->flops / sec / 1e9 : NAN;
}

double ocb_rrow_gbs(const struct ocb_rrow *r)
{
	double sec = ocb_unit_seconds(r->unit) * r->median;
	return sec > 0 && r->bytes > 0 ? r->bytes / sec / 1e9 : NAN;
}

double ocb_rrow_roof_frac(const struct ocb_rrow *r, const struct ocb_mceil *mc)
{
	if (!isnan(r->bound_frac))
		return r->bound_frac;
	if (!mc || !mc->n || !mc->view)
		return NAN;
	return ocb_roof_frac(mc->view, mc->n, r->bound, r->threads, r->flops, r->bytes,
			     ocb_unit_seconds(r->unit) * r->median);
}

void ocb_param_text(const cJSON *e, char *v, size_t len)
{
	if (cJSON_IsNumber(e)) {
		snprintf(v, len, "%.10g", e->valuedouble);
	} else if (cJSON_IsString(e)) {
		snprintf(v, len, "%s", e->valuestring);
	} else if (e) { /* arrays, objects, booleans: their compact JSON */
		char *j = cJSON_PrintUnformatted(e);
		snprintf(v, len, "%s", j ? j : "?");
		free(j);
	} else {
		snprintf(v, len, "?");
	}
}

void ocb_params_words(const char *json, char *buf, size_t len)
{
	cJSON *j = cJSON_Parse(json ? json : "{}"), *e;
	size_t o = 0;
	if (!len)
		return;
	buf[0] = '\0';
	if (!cJSON_IsObject(j)) {
		snprintf(buf, len, "%s", json ? json : "");
		cJSON_Delete(j);
		return;
	}
	cJSON_ArrayForEach(e, j) {
		char v[256];
		ocb_param_text(e, v, sizeof v);
		if (o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%s=%s", o ? " " : "", e->string, v);
	}
	cJSON_Delete(j);
}
