#include "params.h"

#include <math.h>
#include <string.h>

#include "../common/ocb_error.h"

const struct ocb_param *ocb_param_find(const struct ocb_param *decl, const char *key)
{
	for (; decl && decl->name; decl++)
		if (strcmp(decl->name, key) == 0)
			return decl;
	return NULL;
}

static const char *type_name(enum ocb_ptype t)
{
	static const char *const n[] = {"int", "float", "string", "enum", "int list"};
	return (unsigned)t < sizeof n / sizeof n[0] ? n[t] : "?";
}

static int whole_in(double v, const struct ocb_param *d)
{
	return v == floor(v) && v >= d->min && v <= d->max;
}

/* Why `v` is not a valid value of d, or NULL when it is. */
static const char *bad_value(const struct ocb_param *d, const cJSON *v, char *why, size_t n)
{
	switch (d->type) {
	case OCB_P_INT:
	case OCB_P_FLOAT:
		if (!cJSON_IsNumber(v))
			break;
		if (d->type == OCB_P_INT && v->valuedouble != floor(v->valuedouble))
			break;
		if (v->valuedouble >= d->min && v->valuedouble <= d->max)
			return NULL;
		snprintf(why, n, "%.15g is out of range %.15g..%.15g", v->valuedouble, d->min,
			 d->max);
		return why;
	case OCB_P_STRING:
		if (cJSON_IsString(v))
			return NULL;
		break;
	case OCB_P_ENUM:
		if (!cJSON_IsString(v))
			break;
		for (const char *const *e = d->values; e && *e; e++)
			if (strcmp(*e, v->valuestring) == 0)
				return NULL;
		snprintf(why, n, "\"%s\" is not one of the allowed values", v->valuestring);
		return why;
	case OCB_P_INTLIST: {
		const cJSON *x;
		if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
			break;
		cJSON_ArrayForEach(x, v) if (!cJSON_IsNumber(x) || !whole_in(x->valuedouble, d))
		{
			snprintf(why, n, "wants whole numbers %.15g..%.15g", d->min, d->max);
			return why;
		}
		return NULL;
	}
	}
	snprintf(why, n, "wrong type: wants %s", type_name(d->type));
	return why;
}

int ocb_params_check(const struct ocb_param *decl, const char *bench, const char *where,
		     const cJSON *case_, cJSON **full)
{
	char why[160];
	const cJSON *kv;
	*full = NULL;
	if (!cJSON_IsObject(case_))
		return ocb_seterr(OCB_EINVAL, "%s: bench %s: params must be an object", where,
				  bench);
	cJSON_ArrayForEach(kv, case_) {
		const struct ocb_param *d = ocb_param_find(decl, kv->string);
		if (!d)
			return ocb_seterr(OCB_EINVAL, "%s: bench %s: key %s: unknown parameter (see "
					  "'ocbench run --describe %s')", where, bench, kv->string,
					  bench);
		if (bad_value(d, kv, why, sizeof why))
			return ocb_seterr(OCB_EINVAL, "%s: bench %s: key %s: %s", where, bench,
					  kv->string, why);
	}
	cJSON *o = cJSON_Duplicate(case_, 1);
	for (const struct ocb_param *d = decl; o && d && d->name; d++) {
		if (!d->dflt || cJSON_GetObjectItemCaseSensitive(o, d->name))
			continue;
		cJSON *v = cJSON_Parse(d->dflt);
		if (!v) {
			cJSON_Delete(o);
			return ocb_seterr(OCB_EINVAL, "bench %s: key %s: default '%s' is not JSON",
					  bench, d->name, d->dflt);
		}
		cJSON_AddItemToObject(o, d->name, v);
	}
	if (!o)
		return ocb_seterr(OCB_ENOMEM, "%s: bench %s: params", where, bench);
	*full = o;
	return OCB_OK;
}

long ocb_pint_or(const cJSON *p, const char *key, long dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, key);
	return cJSON_IsNumber(v) ? (long)v->valuedouble : dflt;
}

long ocb_pint(const cJSON *p, const char *key)
{
	return ocb_pint_or(p, key, 0);
}

double ocb_pfloat_or(const cJSON *p, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, key);
	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

double ocb_pfloat(const cJSON *p, const char *key)
{
	return ocb_pfloat_or(p, key, NAN);
}

const char *ocb_pstr(const cJSON *p, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

void ocb_params_describe(FILE *f, const struct ocb_param *decl)
{
	for (const struct ocb_param *d = decl; d && d->name; d++) {
		char range[256] = "";
		if (d->type == OCB_P_ENUM) {
			size_t k = 0;
			for (const char *const *e = d->values; e && *e && k < sizeof range; e++)
				k += (size_t)snprintf(range + k, sizeof range - k, "%s%s",
						      e == d->values ? "" : "|", *e);
		} else if (d->type != OCB_P_STRING) {
			snprintf(range, sizeof range, "%.15g..%.15g", d->min, d->max);
		}
		fprintf(f, "  %-20s %-8s %-18s %-24s %-9s %s\n", d->name,
			type_name(d->type), d->dflt ? d->dflt : "(derived)", range,
			d->unit && *d->unit ? d->unit : "-", d->doc ? d->doc : "");
	}
}
