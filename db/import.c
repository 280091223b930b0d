#define _GNU_SOURCE
#include "import.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <cJSON.h>

#include "../common/ocb_error.h"
#include "../common/ocb_uuid.h"
#include "../common/ocb_json.h"
#include "../common/ocb_stats.h"
#include "../common/ocb_time.h"

/* Fields of a benchmark entry that are not user counters. */
static const char *const std_fields[] = {
	"name", "run_name", "run_type", "repetitions", "repetition_index", "threads",
	"iterations", "real_time", "cpu_time", "time_unit", "aggregate_name", "aggregate_unit",
	"family_index", "per_family_instance_index", "label", "error_occurred", "error_message",
	"big_o", "rms"};

static int is_std(const char *k)
{
	for (size_t i = 0; i < sizeof std_fields / sizeof *std_fields; i++)
		if (!strcmp(k, std_fields[i]))
			return 1;
	return 0;
}

static double unit_scale(const char *u)
{
	if (!u || !strcmp(u, "ns"))
		return 1e-9;
	if (!strcmp(u, "us"))
		return 1e-6;
	if (!strcmp(u, "ms"))
		return 1e-3;
	if (!strcmp(u, "s"))
		return 1;
	return 0;
}

/* One group (a future result) while parsing. */
struct group {
	const char *name;       /* borrowed from the tree */
	struct ocb_result r;
	size_t cap;
	const cJSON *agg_median, *agg_mean; /* aggregate entries, if any */
	const cJSON **iters;    /* iteration entries, for counters */
	size_t niters;
};

static void groups_free(struct group *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(g[i].iters);
		ocb_result_release(&g[i].r);
	}
	free(g);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Splits the group name into bench and canonical params. */
static int name_split(const char *path, struct group *g)
{
	const char *slash = strchr(g->name, '/');
	size_t blen = slash ? (size_t)(slash - g->name) : strlen(g->name);
	if (!blen || blen >= sizeof g->r.bench)
		return ocb_seterr(OCB_EFORMAT, "%s: benchmark name '%.80s' is empty or its first part "
					       "is longer than %zu bytes",
				  path, g->name, sizeof g->r.bench - 1);
	memcpy(g->r.bench, g->name, blen);
	g->r.bench[blen] = '\0';
	cJSON *p = NULL;
	/* "threads:N" is a name part, not a parameter: the entry's "threads" holds it */
	char *rest = slash ? strdup(slash + 1) : NULL;
	if (slash && !rest)
		return ocb_seterr(OCB_ENOMEM, "import");
	char *thr = rest ? strstr(rest, "threads:") : NULL;
	/* a whole component "threads:<digits>"; what follows it ("/variant:X", GB's
	 * "/real_time" ...) names the same case's runs, not parameters */
	while (thr) {
		size_t d = strspn(thr + 8, "0123456789");
		if ((thr == rest || thr[-1] == '/') && d && (thr[8 + d] == '\0' || thr[8 + d] == '/'))
			break;
		thr = strstr(thr + 1, "threads:");
	}
	if (thr)
		*(thr > rest ? thr - 1 : thr) = '\0';
	if (rest && *rest) {
		p = cJSON_Parse(rest);
		if (!cJSON_IsObject(p)) {
			cJSON_Delete(p);
			p = cJSON_CreateObject();
			if (p)
				cJSON_AddStringToObject(p, "args", rest);
		}
	} else {
		p = cJSON_CreateObject();
	}
	g->r.params_json = p ? ocb_json_canonical(p) : NULL;
	cJSON_Delete(p);
	free(rest);
	return g->r.params_json ? OCB_OK : ocb_seterr(OCB_ENOMEM, "import");
}

static int is_rate(const char *k)
{
	return !strcmp(k, "bytes_per_second") || !strcmp(k, "flops_per_second");
}

static double median_of(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The work of one repetition from a rate field (bytes_per_second -> bytes): rate x that
 * entry's real_time, the median over the iterations, else from the mean aggregate; NaN
 * when no entry has the rate. */
static double rate_work(const struct group *q, const char *key)
{
	double *v = malloc((q->niters + 1) * sizeof *v);
	size_t nv = 0;
	if (!v)
		return NAN;
	for (size_t k = 0; k <= q->niters; k++) {
		const cJSON *e = k < q->niters ? q->iters[k] : nv ? NULL : q->agg_mean;
		const cJSON *rate = e ? cJSON_GetObjectItemCaseSensitive(e, key) : NULL;
		double sec = e ? ocb_json_num(e, "real_time", NAN) *
					 unit_scale(ocb_json_str(e, "time_unit", "ns"))
			       : NAN;
		if (cJSON_IsNumber(rate) && sec > 0)
			v[nv++] = rate->valuedouble * sec;
	}
	double w = median_of(v, nv);
	free(v);
	return w;
}

/* User counters: every numeric, non-standard field of the iterations (their median) and
 * those found only on the mean aggregate (ocbench's export puts PAPI counters there).
 * Google Benchmark's rates (bytes_per_second, flops_per_second) became the work model
 * (rate_work); items_per_second and the rest stay counters. */
static int add_counters(struct group *q)
{
	for (size_t src = 0; src <= q->niters; src++) {
		const cJSON *obj = src < q->niters ? q->iters[src] : q->agg_mean, *f;
		if (!obj)
			continue;
		cJSON_ArrayForEach(f, obj)
		{
			if (!cJSON_IsNumber(f) || is_std(f->string) || is_rate(f->string) ||
			    strlen(f->string) >= 64)
				continue;
			int dup = 0;
			for (size_t c = 0; c < q->r.ncounters && !dup; c++)
				dup = !strcmp(q->r.counters[c].event, f->string);
			if (dup)
				continue;
			double *v = malloc((q->niters + 1) * sizeof *v);
			size_t nv = 0;
			if (!v)
				return ocb_seterr(OCB_ENOMEM, "import");
			for (size_t k = 0; k < q->niters; k++) {
				const cJSON *e = cJSON_GetObjectItemCaseSensitive(q->iters[k], f->string);
				if (cJSON_IsNumber(e))
					v[nv++] = e->valuedouble;
			}
			double med = nv ? median_of(v, nv) : f->valuedouble;
			free(v);
			struct ocb_counter_val *nc =
				realloc(q->r.counters, (q->r.ncounters + 1) * sizeof *nc);
			if (!nc)
				return ocb_seterr(OCB_ENOMEM, "import");
			q->r.counters = nc;
			struct ocb_counter_val *c = &nc[q->r.ncounters++];
			memset(c, 0, sizeof *c);
			snprintf(c->event, sizeof c->event, "%s", f->string);
			c->value = med;
			c->available = 1;
			c->multiplex_ratio = 1;
		}
	}
	return OCB_OK;
}

/* Validates the tree and builds the groups; nothing is written. */
/* Over 80 lines: one pass over the gbench "benchmarks" array that validates each entry
 * and groups its iterations and aggregates; the checks share the entry's state. */
static int parse(const char *path, const cJSON *root, struct group **out, size_t *nout)
{
	struct group *g = NULL;
	size_t n = 0, cap = 0;
	int rc = OCB_OK;
	const cJSON *benches = cJSON_GetObjectItemCaseSensitive(root, "benchmarks");

	*out = NULL;
	*nout = 0;
	if (!cJSON_IsObject(root) || !cJSON_IsArray(benches))
		return ocb_seterr(OCB_EFORMAT, "%s: not Google Benchmark JSON (no \"benchmarks\" array)",
				  path);
	const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(root, "context");
	if (ctx && !cJSON_IsObject(ctx))
		return ocb_seterr(OCB_EFORMAT, "%s: \"context\" is not an object", path);
	int idx = -1;
	const cJSON *b;
	cJSON_ArrayForEach(b, benches)
	{
		idx++;
		if (!cJSON_IsObject(b)) {
			rc = ocb_seterr(OCB_EFORMAT, "%s: benchmarks[%d] is not an object", path, idx);
			goto out;
		}
		const char *name = ocb_json_str(b, "name", NULL);
		const char *run_name = ocb_json_str(b, "run_name", name);
		const cJSON *rt = cJSON_GetObjectItemCaseSensitive(b, "real_time");
		const char *tu = ocb_json_str(b, "time_unit", "ns");
		const char *type = ocb_json_str(b, "run_type", "iteration");
		if (!name || !*name || !run_name || !*run_name) {
			rc = ocb_seterr(OCB_EFORMAT, "%s: benchmarks[%d] has no \"name\"", path, idx);
			goto out;
		}
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "error_occurred")))
			continue;
		if (!cJSON_IsNumber(rt) || !(rt->valuedouble >= 0) || isinf(rt->valuedouble)) {
			rc = ocb_seterr(OCB_EFORMAT, "%s: benchmarks[%d] (%.80s): \"real_time\" is not a "
						     "non-negative number",
					path, idx, name);
			goto out;
		}
		if (!unit_scale(tu)) {
			rc = ocb_seterr(OCB_EFORMAT, "%s: benchmarks[%d] (%.80s): time_unit '%.16s' is not "
						     "ns, us, ms or s",
					path, idx, name, tu);
			goto out;
		}
		if (strcmp(type, "iteration") && strcmp(type, "aggregate")) {
			rc = ocb_seterr(OCB_EFORMAT, "%s: benchmarks[%d] (%.80s): run_type '%.16s'", path,
					idx, name, type);
			goto out;
		}
		struct group *cur = NULL;
		for (size_t i = 0; i < n && !cur; i++)
			if (!strcmp(g[i].name, run_name))
				cur = &g[i];
		if (!cur) {
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				struct group *ng = realloc(g, cap * sizeof *ng);
				if (!ng) {
					rc = ocb_seterr(OCB_ENOMEM, "import");
					goto out;
				}
				g = ng;
			}
			cur = &g[n++];
			memset(cur, 0, sizeof *cur);
			cur->name = run_name;
			if ((rc = name_split(path, cur)))
				goto out;
			snprintf(cur->r.suite, sizeof cur->r.suite, "import");
			const char *label = ocb_json_str(b, "label", "gbench");
			snprintf(cur->r.variant, sizeof cur->r.variant, "%s", *label ? label : "gbench");
			snprintf(cur->r.unit, sizeof cur->r.unit, "s");
			snprintf(cur->r.status, sizeof cur->r.status, "ok");
			double thr = ocb_json_num(b, "threads", 1);
			cur->r.threads = thr >= 1 && thr < 1e6 ? (int)thr : 1;
			cur->r.check_err = NAN;
			cur->r.bound_frac = NAN;
			cur->r.flops = NAN;
			cur->r.bytes = NAN;
		}
		double sec = rt->valuedouble * unit_scale(tu);
		if (!strcmp(type, "aggregate")) {
			const char *an = ocb_json_str(b, "aggregate_name", "");
			if (!strcmp(an, "median"))
				cur->agg_median = b;
			else if (!strcmp(an, "mean"))
				cur->agg_mean = b;
			continue;
		}
		if (cur->r.nsamples == cur->cap) {
			size_t nc = cur->cap ? 2 * cur->cap : 16;
			double *ns = realloc(cur->r.samples, nc * sizeof *ns);
			const cJSON **ni = realloc(cur->iters, nc * sizeof *ni);
			if (ns)
				cur->r.samples = ns;
			if (ni)
				cur->iters = ni;
			if (!ns || !ni) {
				rc = ocb_seterr(OCB_ENOMEM, "import");
				goto out;
			}
			cur->cap = nc;
		}
		cur->iters[cur->niters++] = b;
		cur->r.samples[cur->r.nsamples++] = sec;
	}
	/* aggregates-only groups, counters, statistics */
	for (size_t i = 0; i < n; i++) {
		struct group *q = &g[i];
		if (!q->r.nsamples) {
			const cJSON *a = q->agg_median ? q->agg_median : q->agg_mean;
			if (!a)
				continue; /* only stddev etc.: nothing to time; dropped below */
			if (!(q->r.samples = malloc(sizeof *q->r.samples)) ||
			    !(q->iters = malloc(sizeof *q->iters))) {
				rc = ocb_seterr(OCB_ENOMEM, "import");
				goto out;
			}
			q->r.samples[0] = ocb_json_num(a, "real_time", 0) *
					  unit_scale(ocb_json_str(a, "time_unit", "ns"));
			q->r.nsamples = 1;
			q->iters[0] = a;
			q->niters = 1;
		}
		if ((rc = ocb_stats_compute(q->r.samples, q->r.nsamples, &q->r.st)))
			goto out;
		q->r.bytes = rate_work(q, "bytes_per_second");
		q->r.flops = rate_work(q, "flops_per_second");
		if ((rc = add_counters(q)))
			goto out;
	}
	*out = g;
	*nout = n;
	return OCB_OK;
out:
	groups_free(g, n);
	return rc;
}

int ocb_import_gbench(struct ocb_store *s, const char *path, const struct ocb_import_opts *o,
		      int64_t *run_id, size_t *nresults)
{
	cJSON *root = NULL;
	struct group *g = NULL;
	size_t n = 0, written = 0;
	char *cfg = NULL, uuid[37];
	int rc, in_tx = 0;
	int64_t rid = 0;

	if (run_id)
		*run_id = 0;
	if (nresults)
		*nresults = 0;
	if ((rc = ocb_json_read_file(path, &root)))
		goto out;
	if ((rc = parse(path, root, &g, &n)))
		goto out;
	size_t usable = 0;
	for (size_t i = 0; i < n; i++)
		usable += g[i].r.nsamples > 0;
	if (!usable) {
		rc = ocb_seterr(OCB_EFORMAT, "%s: no benchmark with a time to import", path);
		goto out;
	}
	const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(root, "context");
	cJSON *conf = cJSON_CreateObject();
	if (conf) {
		cJSON_AddStringToObject(conf, "source", "gbench");
		cJSON_AddStringToObject(conf, "file", path);
		if (ctx)
			cJSON_AddItemToObject(conf, "context", cJSON_Duplicate(ctx, 1));
		cfg = ocb_json_canonical(conf);
		cJSON_Delete(conf);
	}
	if (!cfg) {
		rc = ocb_seterr(OCB_ENOMEM, "import");
		goto out;
	}
	ocb_uuid_v4(uuid);
	/* the run began when the file's benchmarks ran (context.date, local time with an
	 * offset), not now; no or a bad date: now */
	char started[32] = "";
	double t = ocb_iso8601_parse(ocb_json_str(ctx, "date", NULL));
	if (!isnan(t))
		ocb_utc_stamp(t, started, sizeof started);
	struct ocb_run_info ri = {.uuid = uuid, .machine_id = o->machine_id, .suite = "import",
				  .label = o->label, .ocbench_version = o->version ? o->version : "",
				  .git_sha = "", .cmdline = o->cmdline ? o->cmdline : "",
				  .config_json = cfg, .seed = 0, .started_at = started};
	if ((rc = ocb_store_begin(s)))
		goto out;
	in_tx = 1;
	if ((rc = ocb_store_run_begin(s, &ri, &rid)))
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!g[i].r.nsamples)
			continue;
		if ((rc = ocb_store_result(s, rid, &g[i].r, NULL)))
			goto out;
		written++;
	}
	if ((rc = ocb_store_run_finish(s, rid, "complete")))
		goto out;
	in_tx = 0;
	if ((rc = ocb_store_commit(s)))
		goto out;
	if (run_id)
		*run_id = rid;
	if (nresults)
		*nresults = written;
out:
	if (in_tx) {
		char why[512];
		snprintf(why, sizeof why, "%s", ocb_lasterr());
		ocb_store_rollback(s);
		ocb_seterr(rc, "%s", why);
	}
	groups_free(g, n);
	free(cfg);
	cJSON_Delete(root);
	return rc;
}
