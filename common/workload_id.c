/* workload_id: encoding of struct ocb_quant_id (see the header for the formats). */
#include "workload_id.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocb_error.h"

void ocb_quant_id_label(const struct ocb_quant_id *id, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", id->method, id->rounding[0] ? "/" : "", id->rounding);
}

int ocb_quant_id_name(const struct ocb_quant_id *id, char *buf, size_t len)
{
	char label[48];
	ocb_quant_id_label(id, label, sizeof label);
	int n = snprintf(buf, len, OCB_QACC_KIND ":%s:%s:%s:%s", id->model, label, id->bits,
			 id->group);
	if (n < 0 || (size_t)n >= len)
		return ocb_seterr(OCB_EINVAL, "quant workload name longer than %zu bytes", len);
	return OCB_OK;
}

char *ocb_quant_id_to_json(const struct ocb_quant_id *id)
{
	cJSON *o = cJSON_CreateObject();
	char *s = NULL;
	if (o && cJSON_AddStringToObject(o, "kind", OCB_QACC_KIND) &&
	    cJSON_AddStringToObject(o, "model", id->model) &&
	    cJSON_AddStringToObject(o, "method", id->method) &&
	    cJSON_AddStringToObject(o, "rounding", id->rounding) &&
	    cJSON_AddStringToObject(o, "bits", id->bits) &&
	    cJSON_AddStringToObject(o, "group", id->group))
		s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* Copies string field `key` of o into dst[len]; absent reads as "". */
static int get_field(const cJSON *o, const char *key, char *dst, size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	const char *s = cJSON_IsString(v) ? v->valuestring : "";
	if (strlen(s) >= len)
		return ocb_seterr(OCB_EFORMAT, "quant workload ident: %s \"%s\" too long", key, s);
	memcpy(dst, s, strlen(s) + 1);
	return OCB_OK;
}

int ocb_quant_id_from_json(const char *json, struct ocb_quant_id *id)
{
	int rc;
	cJSON *o = json ? cJSON_Parse(json) : NULL;
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kind");
	memset(id, 0, sizeof *id);
	if (!cJSON_IsObject(o) || !cJSON_IsString(k) || strcmp(k->valuestring, OCB_QACC_KIND)) {
		rc = ocb_seterr(OCB_EFORMAT, "quant workload ident: not a %s object",
				OCB_QACC_KIND);
		goto out;
	}
	if ((rc = get_field(o, "model", id->model, sizeof id->model)) ||
	    (rc = get_field(o, "method", id->method, sizeof id->method)) ||
	    (rc = get_field(o, "rounding", id->rounding, sizeof id->rounding)) ||
	    (rc = get_field(o, "bits", id->bits, sizeof id->bits)) ||
	    (rc = get_field(o, "group", id->group, sizeof id->group)))
		goto out;
out:
	cJSON_Delete(o);
	return rc;
}

/* Copies the field up to the next ':' (or the end) into dst[len], truncating. */
static void next_field(const char **p, char *dst, size_t len)
{
	const char *s = *p, *e = strchr(s, ':');
	size_t n = e ? (size_t)(e - s) : strlen(s);
	snprintf(dst, len, "%.*s", (int)n, s);
	*p = e ? e + 1 : s + n;
}

int ocb_quant_id_parse_name(const char *name, struct ocb_quant_id *id)
{
	static const char prefix[] = OCB_QACC_KIND ":";
	char method[48];
	memset(id, 0, sizeof *id);
	if (!name || strncmp(name, prefix, sizeof prefix - 1))
		return ocb_seterr(OCB_EFORMAT, "\"%s\": not a %s workload name", name ? name : "",
				  OCB_QACC_KIND);
	const char *p = name + sizeof prefix - 1;
	next_field(&p, id->model, sizeof id->model);
	next_field(&p, method, sizeof method);
	next_field(&p, id->bits, sizeof id->bits);
	next_field(&p, id->group, sizeof id->group);
	size_t n = strcspn(method, "/");
	if (n >= sizeof id->method || (method[n] && strlen(method + n + 1) >= sizeof id->rounding))
		return ocb_seterr(OCB_EFORMAT, "\"%s\": method too long", name);
	memcpy(id->method, method, n);
	if (method[n])
		memcpy(id->rounding, method + n + 1, strlen(method + n + 1) + 1);
	return OCB_OK;
}
