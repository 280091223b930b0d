#include "suite_def.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "registry.h"

#define MAX_CASES 4096 /* per entry: a grid larger than this is a typo */

void ocb_suite_def_release(struct ocb_suite_def *d)
{
	for (size_t i = 0; d && i < d->n; i++)
		cJSON_Delete(d->e[i].cases);
	if (d) {
		free(d->e);
		d->e = NULL;
		d->n = 0;
	}
}

/* A list of thread counts at `key` of o (absent: *n = 0). */
static int read_threads(const cJSON *o, const char *src, const char *path, int *out, int *n)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "threads"), *x;
	*n = 0;
	if (!a)
		return OCB_OK;
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1 || cJSON_GetArraySize(a) > 8)
		return ocb_seterr(OCB_EINVAL, "%s: %sthreads: wants a list of 1 to 8 counts", src,
				  path);
	cJSON_ArrayForEach(x, a) {
		if (!cJSON_IsNumber(x) || x->valuedouble < 1 || x->valuedouble > 1024 ||
		    x->valuedouble != (int)x->valuedouble)
			return ocb_seterr(OCB_EINVAL, "%s: %sthreads[%d]: wants a whole number 1..1024",
					  src, path, *n);
		out[(*n)++] = (int)x->valuedouble;
	}
	return OCB_OK;
}

/* A number at `key` in [lo, hi] (absent: *v unchanged). */
static int read_num(const cJSON *o, const char *key, const char *src, double lo, double hi,
		    double *v)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!x)
		return OCB_OK;
	if (!cJSON_IsNumber(x) || x->valuedouble < lo || x->valuedouble > hi)
		return ocb_seterr(OCB_EINVAL, "%s: %s: wants a number %g..%g", src, key, lo, hi);
	*v = x->valuedouble;
	return OCB_OK;
}

static int check_keys(const cJSON *o, const char *const *keys, const char *src,
		      const char *path)
{
	const cJSON *kv;
	if (!cJSON_IsObject(o))
		return ocb_seterr(OCB_EINVAL, "%s: %s: wants an object", src, *path ? path : "top");
	cJSON_ArrayForEach(kv, o) {
		const char *const *k = keys;
		while (*k && strcmp(*k, kv->string))
			k++;
		if (!*k)
			return ocb_seterr(OCB_EINVAL, "%s: %s%s: unknown key", src, path, kv->string);
	}
	return OCB_OK;
}

/* The run settings of the top level. */
static int read_settings(const cJSON *j, struct ocb_suite_def *d)
{
	static const char *const keys[] = {"name", "label", "threads", "budget", "passes",
					   "target_ci", "min_reps", "max_reps", "quick",
					   "suites", "benches", "doc", NULL};
	const char *src = d->source;
	double passes = 0, minr = 0, maxr = 0;
	int rc = check_keys(j, keys, src, "");
	const cJSON *x;
	if (rc)
		return rc;
	if ((x = cJSON_GetObjectItemCaseSensitive(j, "name"))) {
		if (!cJSON_IsString(x) || !*x->valuestring || strlen(x->valuestring) >= sizeof d->name)
			return ocb_seterr(OCB_EINVAL, "%s: name: wants a short string", src);
		snprintf(d->name, sizeof d->name, "%s", x->valuestring);
	}
	if ((x = cJSON_GetObjectItemCaseSensitive(j, "label"))) {
		if (!cJSON_IsString(x) || strlen(x->valuestring) >= sizeof d->label)
			return ocb_seterr(OCB_EINVAL, "%s: label: wants a short string", src);
		snprintf(d->label, sizeof d->label, "%s", x->valuestring);
	}
	if ((x = cJSON_GetObjectItemCaseSensitive(j, "quick"))) {
		if (!cJSON_IsBool(x))
			return ocb_seterr(OCB_EINVAL, "%s: quick: wants true or false", src);
		d->quick = cJSON_IsTrue(x);
	}
	if ((rc = read_threads(j, src, "", d->threads, &d->nthreads)) ||
	    (rc = read_num(j, "budget", src, 0, 86400, &d->budget_s)) ||
	    (rc = read_num(j, "target_ci", src, 1e-4, 1, &d->target_ci)) ||
	    (rc = read_num(j, "passes", src, 1, 100, &passes)) ||
	    (rc = read_num(j, "min_reps", src, 1, 1e6, &minr)) ||
	    (rc = read_num(j, "max_reps", src, 1, 1e7, &maxr)))
		return rc;
	d->passes = (int)passes;
	d->min_reps = (long)minr;
	d->max_reps = (long)maxr;
	return OCB_OK;
}

/* dst gets a copy of every key of src; a key already in dst is an error. */
static int merge_into(cJSON *dst, const cJSON *src, const char *where, const char *bench)
{
	const cJSON *kv;
	cJSON_ArrayForEach(kv, src) {
		if (cJSON_GetObjectItemCaseSensitive(dst, kv->string))
			return ocb_seterr(OCB_EINVAL, "%s: bench %s: key %s: given twice", where, bench,
					  kv->string);
		cJSON *c = cJSON_Duplicate(kv, 1);
		if (!c)
			return ocb_seterr(OCB_ENOMEM, "%s: no memory", where);
		cJSON_AddItemToObject(dst, kv->string, c);
	}
	return OCB_OK;
}

/* One case: params + base case + the grid point idx, checked against the bench. */
static int one_case(const struct ocb_bench *b, const cJSON *params, const cJSON *base,
		    const cJSON *grid, const int *idx, const char *where, cJSON *out)
{
	cJSON *c = cJSON_CreateObject(), *full = NULL, *g;
	int rc = c ? OCB_OK : ocb_seterr(OCB_ENOMEM, "%s: no memory", where), k = 0;
	if (rc == OCB_OK && params)
		rc = merge_into(c, params, where, b->name);
	if (rc == OCB_OK && base)
		rc = merge_into(c, base, where, b->name);
	cJSON_ArrayForEach(g, grid) {
		cJSON *pt = cJSON_CreateObject();
		if (rc == OCB_OK && pt)
			cJSON_AddItemToObject(pt, g->string,
					      cJSON_Duplicate(cJSON_GetArrayItem(g, idx[k]), 1));
		if (rc == OCB_OK)
			rc = merge_into(c, pt, where, b->name);
		cJSON_Delete(pt);
		k++;
	}
	if (rc == OCB_OK)
		rc = ocb_params_check(b->params, b->name, where, c, &full);
	cJSON_Delete(full);
	if (rc == OCB_OK)
		cJSON_AddItemToArray(out, c);
	else
		cJSON_Delete(c);
	return rc;
}

/* Checks the grid's shape: an object of non-empty arrays; *npoints its product. */
static int grid_shape(const cJSON *grid, const char *where, long *npoints, int *ndims)
{
	const cJSON *g;
	*npoints = 1;
	*ndims = 0;
	if (!grid)
		return OCB_OK;
	if (!cJSON_IsObject(grid))
		return ocb_seterr(OCB_EINVAL, "%s.grid: wants an object of lists", where);
	cJSON_ArrayForEach(g, grid) {
		if (!cJSON_IsArray(g) || cJSON_GetArraySize(g) < 1)
			return ocb_seterr(OCB_EINVAL, "%s.grid.%s: wants a non-empty list", where,
					  g->string);
		if (++*ndims > 16 || (*npoints *= cJSON_GetArraySize(g)) > MAX_CASES)
			return ocb_seterr(OCB_EINVAL, "%s.grid: more than %d cases", where, MAX_CASES);
	}
	return OCB_OK;
}

/* Every case of one entry: for each listed case (one empty case when none), each grid
 * point (last key fastest), merged with the entry's params. */
static int expand_entry(const cJSON *e, const struct ocb_bench *b, const char *where,
			cJSON **out)
{
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(e, "params");
	const cJSON *grid = cJSON_GetObjectItemCaseSensitive(e, "grid");
	const cJSON *cases = cJSON_GetObjectItemCaseSensitive(e, "cases");
	char at[400];
	long npts;
	int ndims, idx[16] = {0}, rc;
	*out = NULL;
	if (!params && !grid && !cases)
		return OCB_OK;
	if (params && !cJSON_IsObject(params))
		return ocb_seterr(OCB_EINVAL, "%s.params: wants an object", where);
	if (cases && (!cJSON_IsArray(cases) || cJSON_GetArraySize(cases) < 1))
		return ocb_seterr(OCB_EINVAL, "%s.cases: wants a non-empty list", where);
	if ((rc = grid_shape(grid, where, &npts, &ndims)))
		return rc;
	cJSON *a = cJSON_CreateArray();
	int ncase = cases ? cJSON_GetArraySize(cases) : 1;
	for (int c = 0; a && rc == OCB_OK && c < ncase; c++) {
		const cJSON *base = cases ? cJSON_GetArrayItem(cases, c) : NULL;
		if (base && !cJSON_IsObject(base)) {
			rc = ocb_seterr(OCB_EINVAL, "%s.cases[%d]: wants an object", where, c);
			break;
		}
		snprintf(at, sizeof at, "%s%s", where, cases ? "" : grid ? ".grid" : ".params");
		if (cases)
			snprintf(at + strlen(at), sizeof at - strlen(at), ".cases[%d]", c);
		memset(idx, 0, sizeof idx);
		for (long p = 0; rc == OCB_OK && p < npts; p++) {
			rc = one_case(b, params, base, grid, idx, at, a);
			for (int k = ndims - 1; k >= 0; k--) { /* odometer, last key fastest */
				cJSON *g = cJSON_GetArrayItem(grid, k);
				if (++idx[k] < cJSON_GetArraySize(g))
					break;
				idx[k] = 0;
			}
		}
	}
	if (!a)
		return ocb_seterr(OCB_ENOMEM, "%s: no memory", where);
	if (rc == OCB_OK && cJSON_GetArraySize(a) > MAX_CASES)
		rc = ocb_seterr(OCB_EINVAL, "%s: more than %d cases", where, MAX_CASES);
	if (rc)
		cJSON_Delete(a);
	else
		*out = a;
	return rc;
}

static int push_entry(struct ocb_suite_def *d, const struct ocb_bench *b, const char *suite,
		      cJSON *cases, struct ocb_suite_entry **slot)
{
	struct ocb_suite_entry *e = realloc(d->e, (d->n + 1) * sizeof *e);
	if (!e) {
		cJSON_Delete(cases);
		return ocb_seterr(OCB_ENOMEM, "%s: no memory", d->source);
	}
	d->e = e;
	e = &d->e[d->n++];
	memset(e, 0, sizeof *e);
	e->bench = b;
	e->cases = cases;
	snprintf(e->suite, sizeof e->suite, "%s", suite);
	if (slot)
		*slot = e;
	return OCB_OK;
}

/* "suites": every bench of each named built-in suite, with its own cases. */
static int read_suites(const cJSON *j, struct ocb_suite_def *d)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "suites"), *x;
	int i = 0, rc = OCB_OK;
	if (!a)
		return OCB_OK;
	if (!cJSON_IsArray(a))
		return ocb_seterr(OCB_EINVAL, "%s: suites: wants a list of suite names", d->source);
	cJSON_ArrayForEach(x, a) {
		if (!cJSON_IsString(x) || !ocb_suite_find(x->valuestring))
			return ocb_seterr(OCB_EINVAL, "%s: suites[%d]: no built-in suite '%s' (see "
					  "'ocbench run --list')", d->source, i,
					  cJSON_IsString(x) ? x->valuestring : "?");
		for (size_t k = 0; rc == OCB_OK && k < ocb_nbenches; k++)
			if (strcmp(ocb_benches[k].suite, x->valuestring) == 0)
				rc = push_entry(d, ocb_benches[k].bench, ocb_benches[k].suite, NULL,
						NULL);
		i++;
	}
	return rc;
}

static int read_entry(const cJSON *e, int i, struct ocb_suite_def *d)
{
	static const char *const keys[] = {"bench", "suite", "threads", "params", "grid",
					   "cases", NULL};
	char where[360], path[64];
	snprintf(path, sizeof path, "benches[%d].", i);
	int rc = check_keys(e, keys, d->source, path);
	if (rc)
		return rc;
	const cJSON *bn = cJSON_GetObjectItemCaseSensitive(e, "bench");
	const cJSON *su = cJSON_GetObjectItemCaseSensitive(e, "suite");
	const struct ocb_bench *b = cJSON_IsString(bn) ? ocb_bench_find(bn->valuestring) : NULL;
	if (!b)
		return ocb_seterr(OCB_EINVAL, "%s: %sbench: %s%s%s (see 'ocbench run --list')",
				  d->source, path, cJSON_IsString(bn) ? "no bench '" : "missing",
				  cJSON_IsString(bn) ? bn->valuestring : "",
				  cJSON_IsString(bn) ? "'" : "");
	if (su && (!cJSON_IsString(su) || !*su->valuestring || strlen(su->valuestring) >= 64))
		return ocb_seterr(OCB_EINVAL, "%s: %ssuite: wants a short name", d->source, path);
	snprintf(where, sizeof where, "%s: benches[%d]", d->source, i);
	cJSON *cases = NULL;
	struct ocb_suite_entry *slot = NULL;
	if ((rc = expand_entry(e, b, where, &cases)))
		return rc;
	rc = push_entry(d, b, su ? su->valuestring : ocb_bench_home(b), cases, &slot);
	if (rc == OCB_OK)
		rc = read_threads(e, d->source, path, slot->threads, &slot->nthreads);
	return rc;
}

int ocb_suite_def_parse(const cJSON *j, const char *source, struct ocb_suite_def *out)
{
	memset(out, 0, sizeof *out);
	out->budget_s = -1;
	out->quick = -1;
	snprintf(out->source, sizeof out->source, "%s", source);
	snprintf(out->name, sizeof out->name, "custom");
	int rc = read_settings(j, out), i = 0;
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "benches"), *e;
	if (rc == OCB_OK)
		rc = read_suites(j, out);
	if (rc == OCB_OK && a && !cJSON_IsArray(a))
		rc = ocb_seterr(OCB_EINVAL, "%s: benches: wants a list", source);
	cJSON_ArrayForEach(e, a) {
		if (rc)
			break;
		rc = read_entry(e, i++, out);
	}
	if (rc == OCB_OK && out->n == 0)
		rc = ocb_seterr(OCB_EINVAL, "%s: no benches (give \"benches\" or \"suites\")", source);
	if (rc)
		ocb_suite_def_release(out);
	return rc;
}

/* 1-based line of byte `off` in text. */
static int line_of(const char *text, size_t off)
{
	int line = 1;
	for (size_t i = 0; i < off && text[i]; i++)
		line += text[i] == '\n';
	return line;
}

int ocb_suite_def_load(const char *path, struct ocb_suite_def *out)
{
	memset(out, 0, sizeof *out);
	FILE *f = fopen(path, "rb");
	if (!f)
		return ocb_seterr(OCB_ENOENT, "%s: cannot open", path);
	char *text = NULL;
	size_t len = 0, cap = 0, k;
	char buf[4096];
	while ((k = fread(buf, 1, sizeof buf, f)) > 0) {
		if (len + k + 1 > cap) {
			char *t = realloc(text, cap = 2 * (len + k + 1));
			if (!t) {
				free(text);
				fclose(f);
				return ocb_seterr(OCB_ENOMEM, "%s: no memory", path);
			}
			text = t;
		}
		memcpy(text + len, buf, k);
		len += k;
	}
	fclose(f);
	if (!text)
		return ocb_seterr(OCB_EINVAL, "%s:1: empty file, not JSON", path);
	text[len] = '\0';
	const char *end = NULL;
	cJSON *j = cJSON_ParseWithOpts(text, &end, 1);
	int rc;
	if (!j)
		rc = ocb_seterr(OCB_EINVAL, "%s:%d: not JSON (syntax error near here)", path,
				line_of(text, end ? (size_t)(end - text) : len));
	else
		rc = ocb_suite_def_parse(j, path, out);
	cJSON_Delete(j);
	free(text);
	return rc;
}

int ocb_suite_def_builtin(const char *name, struct ocb_suite_def *out)
{
	char src[96];
	memset(out, 0, sizeof *out);
	cJSON *j = ocb_suite_builtin_json(name);
	if (!j)
		return ocb_seterr(OCB_EINVAL, "no suite '%s' (see 'ocbench run --list')", name);
	snprintf(src, sizeof src, "built-in suite %s", name);
	int rc = ocb_suite_def_parse(j, src, out);
	cJSON_Delete(j);
	return rc;
}

static int is_file_spec(const char *s)
{
	size_t n = strlen(s);
	return strchr(s, '/') || (n > 5 && strcmp(s + n - 5, ".json") == 0);
}

int ocb_suite_defs_resolve(const char *spec, struct ocb_suite_def *defs, int max, int *n)
{
	char buf[1024], *save = NULL;
	int rc = OCB_OK;
	*n = 0;
	if (strcmp(spec, "all") == 0) {
		for (size_t i = 0; rc == OCB_OK && i < ocb_nsuites && *n < max; i++)
			if ((rc = ocb_suite_def_builtin(ocb_suites[i].name, &defs[*n])) == OCB_OK)
				++*n;
		goto out;
	}
	if (strlen(spec) >= sizeof buf)
		return ocb_seterr(OCB_EINVAL, "--suite: list too long");
	snprintf(buf, sizeof buf, "%s", spec);
	for (char *t = strtok_r(buf, ",", &save); t && rc == OCB_OK; t = strtok_r(NULL, ",", &save)) {
		if (*n == max) {
			rc = ocb_seterr(OCB_EINVAL, "--suite: more than %d suites", max);
			break;
		}
		if (is_file_spec(t))
			rc = ocb_suite_def_load(t, &defs[*n]);
		else
			rc = ocb_suite_def_builtin(t, &defs[*n]);
		if (rc == OCB_OK)
			++*n;
	}
	if (rc == OCB_OK && *n == 0)
		rc = ocb_seterr(OCB_EINVAL, "--suite wants a list of suites or suite files");
out:
	if (rc) {
		for (int i = 0; i < *n; i++)
			ocb_suite_def_release(&defs[i]);
		*n = 0;
		if (rc != OCB_EINVAL && rc != OCB_ENOENT)
			return rc;
		char why[512];
		snprintf(why, sizeof why, "%s", ocb_lasterr());
		return ocb_seterr(OCB_EINVAL, "%s", why);
	}
	return OCB_OK;
}
