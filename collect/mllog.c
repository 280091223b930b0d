/* mllog: MLPerf logging lines (REFERENCE.md §4, the format of the MLPerf reference
 * logger that users' compliance checkers and summarizers already parse):
 *
 *   :::MLLOG {"namespace": "", "time_ms": 1712345678901, "event_type": "POINT_IN_TIME",
 *             "key": "seed", "value": 42, "metadata": {"file": "x.c", "lineno": 12}}
 *
 * (one line). The outer object is laid out in that fixed key order with ": " and ", "
 * separators as the reference logger prints it; every value inside is printed by cJSON
 * (strings escaped, numbers round-tripped). Each line is flushed so that a crashed run
 * still leaves its log up to the crash. */
#include "mllog.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_time.h"

struct ocb_mllog {
	FILE *f;
	int owned; /* opened by ocb_mllog_open: closed by ocb_mllog_close */
};

int ocb_mllog_open(const char *path, struct ocb_mllog **out)
{
	*out = NULL;
	FILE *f = fopen(path, "w");
	if (!f) {
		int e = errno;
		int st = (e == EACCES || e == EPERM || e == EROFS || e == ENOENT || e == ENOTDIR)
				 ? OCB_EPERM
				 : OCB_EIO;
		return ocb_seterr(st, "%s: cannot write MLLOG file: %s", path, strerror(e));
	}
	struct ocb_mllog *l = calloc(1, sizeof *l);
	if (!l) {
		fclose(f);
		return ocb_seterr(OCB_ENOMEM, "%s: MLLOG writer", path);
	}
	l->f = f;
	l->owned = 1;
	*out = l;
	return OCB_OK;
}

struct ocb_mllog *ocb_mllog_from_stream(FILE *f)
{
	struct ocb_mllog *l = f ? calloc(1, sizeof *l) : NULL;
	if (l)
		l->f = f;
	return l;
}

void ocb_mllog_close(struct ocb_mllog *l)
{
	if (!l)
		return;
	if (l->owned && l->f)
		fclose(l->f);
	free(l);
}

static const char *type_name(enum ocb_mllog_type t)
{
	switch (t) {
	case OCB_MLLOG_START: return "INTERVAL_START";
	case OCB_MLLOG_END: return "INTERVAL_END";
	default: return "POINT_IN_TIME";
	}
}

/* Writes `"name": <json of v>` (name and v printed, escaped, by cJSON). 0 on success. */
static int put_member(FILE *f, const char *sep, const char *name, const cJSON *v)
{
	cJSON *n = cJSON_CreateString(name ? name : "");
	char *ns = n ? cJSON_PrintUnformatted(n) : NULL;
	char *vs = cJSON_PrintUnformatted(v);
	int rc = ns && vs && fprintf(f, "%s%s: %s", sep, ns, vs) >= 0 ? 0 : -1;
	cJSON_free(vs);
	cJSON_free(ns);
	cJSON_Delete(n);
	return rc;
}

int ocb_mllog_event(struct ocb_mllog *l, enum ocb_mllog_type type, const char *key,
		    cJSON *value, cJSON *metadata, const char *file, int line)
{
	int rc = OCB_OK;
	cJSON *k = NULL;

	if (!value)
		value = cJSON_CreateNull();
	if (!metadata)
		metadata = cJSON_CreateObject();
	if (!l || !l->f || !key || !*key) {
		rc = ocb_seterr(OCB_EINVAL, "mllog: no writer or empty key");
		goto out;
	}
	if (!value || !metadata || !cJSON_IsObject(metadata)) {
		rc = metadata && !cJSON_IsObject(metadata)
			     ? ocb_seterr(OCB_EINVAL, "mllog: %s: metadata is not an object", key)
			     : ocb_seterr(OCB_ENOMEM, "mllog: %s", key);
		goto out;
	}
	/* file/lineno are the call site's; they replace any the caller put in. */
	cJSON_DeleteItemFromObjectCaseSensitive(metadata, "file");
	cJSON_DeleteItemFromObjectCaseSensitive(metadata, "lineno");
	k = cJSON_CreateString(key);
	if (!k || !cJSON_AddStringToObject(metadata, "file", file ? file : "") ||
	    !cJSON_AddNumberToObject(metadata, "lineno", line)) {
		rc = ocb_seterr(OCB_ENOMEM, "mllog: %s", key);
		goto out;
	}

	FILE *f = l->f;
	int bad = fprintf(f, ":::MLLOG {\"namespace\": \"\", \"time_ms\": %lld, \"event_type\": \"%s\"",
			  (long long)ocb_epoch_ms(), type_name(type)) < 0;
	bad = bad || put_member(f, ", ", "key", k) || put_member(f, ", ", "value", value);
	bad = bad || fputs(", \"metadata\": {", f) < 0;
	const char *sep = "";
	for (const cJSON *m = metadata->child; m && !bad; m = m->next, sep = ", ")
		bad = put_member(f, sep, m->string, m);
	bad = bad || fputs("}}\n", f) < 0 || fflush(f) != 0;
	if (bad)
		rc = ocb_seterr(OCB_EIO, "mllog: %s: write failed: %s", key, strerror(errno));
out:
	cJSON_Delete(k);
	cJSON_Delete(value);
	cJSON_Delete(metadata);
	return rc;
}
