/* ocb_json: JSON file and canonical-form helpers on top of cJSON. */
#ifndef OCB_JSON_H
#define OCB_JSON_H

#include <cJSON.h>

/* Parses the file at `path`. On success *out is a tree the caller frees with
 * cJSON_Delete(). On failure returns OCB_ENOENT (cannot open) or OCB_EFORMAT (not JSON,
 * detail names the file and byte offset) and *out is NULL. */
int ocb_json_read_file(const char *path, cJSON **out);

/* Canonical text of `v`: object keys sorted, no white space. Returns a malloc'd string
 * the caller frees with free(), or NULL on allocation failure. `v` is not modified. */
char *ocb_json_canonical(const cJSON *v);

/* Number field `key` of object `o`, or `dflt` if absent or not a number. */
double ocb_json_num(const cJSON *o, const char *key, double dflt);
/* String field `key` of object `o`, or `dflt`. Borrowed from `o`. */
const char *ocb_json_str(const cJSON *o, const char *key, const char *dflt);

/* A float parameter as the short decimal it was written as (0.001f -> 0.001, not
 * 0.0010000000474974513), so params_json reads as typed and stays canonical. */
double ocb_json_f32(float f);

#endif
