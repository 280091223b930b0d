#include "ocb_json.h"
#include "ocb_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ocb_json_read_file(const char *path, cJSON **out)
{
	FILE *f = NULL;
	char *buf = NULL;
	long len;
	int rc = OCB_OK;

	*out = NULL;
	f = fopen(path, "rb");
	if (!f) {
		rc = ocb_seterr(OCB_ENOENT, "%s: cannot open", path);
		goto out;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		rc = ocb_seterr(OCB_EIO, "%s: cannot read", path);
		goto out;
	}
	buf = malloc((size_t)len + 1);
	if (!buf) {
		rc = ocb_seterr(OCB_ENOMEM, "%s: %ld bytes", path, len);
		goto out;
	}
	if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
		rc = ocb_seterr(OCB_EIO, "%s: short read", path);
		goto out;
	}
	buf[len] = '\0';
	const char *end = NULL;
	/* length includes the terminating NUL: with require_null_terminated, cJSON
	 * checks the byte after the value, which must lie inside the buffer */
	*out = cJSON_ParseWithLengthOpts(buf, (size_t)len + 1, &end, 1);
	if (!*out)
		rc = ocb_seterr(OCB_EFORMAT, "%s: invalid JSON at byte %ld", path,
				end ? (long)(end - buf) : 0L);
out:
	free(buf);
	if (f)
		fclose(f);
	return rc;
}

static int cmp_keys(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	return strcmp(x->string, y->string);
}

/* Deep copy of v with object members in key order. */
static cJSON *sorted_copy(const cJSON *v)
{
	if (cJSON_IsArray(v)) {
		cJSON *a = cJSON_CreateArray();
		for (const cJSON *e = v->child; a && e; e = e->next)
			cJSON_AddItemToArray(a, sorted_copy(e));
		return a;
	}
	if (!cJSON_IsObject(v))
		return cJSON_Duplicate(v, 1);
	int n = cJSON_GetArraySize(v);
	const cJSON **items = malloc(sizeof *items * (size_t)(n ? n : 1));
	cJSON *o = cJSON_CreateObject();
	if (!items || !o) {
		free(items);
		cJSON_Delete(o);
		return NULL;
	}
	int i = 0;
	for (const cJSON *e = v->child; e; e = e->next)
		items[i++] = e;
	qsort(items, (size_t)n, sizeof *items, cmp_keys);
	for (i = 0; i < n; i++)
		cJSON_AddItemToObject(o, items[i]->string, sorted_copy(items[i]));
	free(items);
	return o;
}

char *ocb_json_canonical(const cJSON *v)
{
	cJSON *c = sorted_copy(v);
	char *s = c ? cJSON_PrintUnformatted(c) : NULL;
	cJSON_Delete(c);
	return s;
}

double ocb_json_num(const cJSON *o, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

const char *ocb_json_str(const cJSON *o, const char *key, const char *dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : dflt;
}

double ocb_json_f32(float f)
{
	char b[32];
	snprintf(b, sizeof b, "%.7g", (double)f); /* 7 significant digits: a float's precision */
	return strtod(b, NULL);
}
