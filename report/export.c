#define _GNU_SOURCE
#include "export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "../common/ocb_error.h"
#include "../common/ocb_time.h"
#include "../db/run_dump.h"
#include "escape.h"
#include "rdata.h"

int ocb_export_format(const char *name, enum ocb_export_fmt *out)
{
	if (!strcmp(name, "gbench"))
		*out = OCB_EXPORT_GBENCH;
	else if (!strcmp(name, "csv"))
		*out = OCB_EXPORT_CSV;
	else if (!strcmp(name, "json"))
		*out = OCB_EXPORT_JSON;
	else
		return ocb_seterr(OCB_EINVAL, "--format: '%s' is not gbench, csv or json", name);
	return OCB_OK;
}

int ocb_export_latest(struct ocb_store *db, int64_t *run_id)
{
	return ocb_db_latest_complete_run(db, run_id);
}

/* Everything exported about one run, loaded with four queries. */
struct xres {
	struct ocb_rrow r;
	double min, mean, stddev, mad, check_err;
	char error[256];
	size_t s0, ns;   /* samples[s0 .. s0+ns) */
	size_t c0, nc;   /* counters[c0 .. c0+nc) */
};
struct xcnt {
	char event[64];
	double value, multiplex;
	int available;
	char reason[160];
};
struct xrun {
	int64_t run_id, machine_id;
	cJSON *run, *machine;   /* column -> value objects */
	struct xres *res;
	size_t nres;
	double *samples, *cpu;  /* cpu[i]: process CPU s of samples[i], NaN if not recorded */
	size_t nsamples;
	double load[3], mhz;    /* run_context metrics at run start; NaN if not recorded */
	struct xcnt *cnt;
	size_t ncnt;
	struct ocb_mceil mc;
};

static void xrun_release(struct xrun *x)
{
	cJSON_Delete(x->run);
	cJSON_Delete(x->machine);
	for (size_t i = 0; i < x->nres; i++)
		free(x->res[i].r.params);
	free(x->res);
	free(x->samples);
	free(x->cpu);
	free(x->cnt);
	ocb_mceil_release(&x->mc);
}

/* The counters of r appended to x->cnt (available: stored available and a value). */
static int add_counters(struct xrun *x, struct xres *e, const struct ocb_result *r)
{
	if (!r->ncounters)
		return OCB_OK;
	struct xcnt *nc = realloc(x->cnt, (x->ncnt + r->ncounters) * sizeof *nc);
	if (!nc)
		return ocb_seterr(OCB_ENOMEM, "export");
	x->cnt = nc;
	e->c0 = x->ncnt;
	e->nc = r->ncounters;
	for (size_t k = 0; k < r->ncounters; k++) {
		const struct ocb_counter_val *v = &r->counters[k];
		struct xcnt *c = &x->cnt[x->ncnt++];
		snprintf(c->event, sizeof c->event, "%s", v->event);
		c->available = v->available && !isnan(v->value);
		c->value = c->available ? v->value : NAN;
		snprintf(c->reason, sizeof c->reason, "%s", v->reason);
		c->multiplex = v->multiplex_ratio;
	}
	return OCB_OK;
}

/* The samples of r appended to x->samples / x->cpu (NaN where not recorded). */
static int add_samples(struct xrun *x, struct xres *e, const struct ocb_result *r)
{
	if (!r->nsamples)
		return OCB_OK;
	size_t n = x->nsamples + r->nsamples;
	double *ns = realloc(x->samples, n * sizeof *ns);
	if (ns)
		x->samples = ns;
	double *nc = realloc(x->cpu, n * sizeof *nc);
	if (nc)
		x->cpu = nc;
	if (!ns || !nc)
		return ocb_seterr(OCB_ENOMEM, "export");
	e->s0 = x->nsamples;
	e->ns = r->nsamples;
	for (size_t k = 0; k < r->nsamples; k++) {
		x->cpu[x->nsamples] = r->cpu_samples ? r->cpu_samples[k] : NAN;
		x->samples[x->nsamples++] = r->samples[k];
	}
	return OCB_OK;
}

/* Run run_id as export shows it: the store's dump of the run (db/run_dump.h) with each
 * result as a report row plus its statistics, samples and counters, and the machine's
 * ceilings. */
static int xrun_load(struct ocb_store *db, int64_t run_id, struct xrun *x)
{
	struct ocb_run_dump d;
	int rc;
	memset(x, 0, sizeof *x);
	x->run_id = run_id;
	if ((rc = ocb_db_run_dump(db, run_id, &d)))
		return rc;
	x->run = d.run;
	x->machine = d.machine;
	d.run = d.machine = NULL;
	x->machine_id = d.machine_id;
	memcpy(x->load, d.load, sizeof x->load);
	x->mhz = d.mhz;
	const char *host = cJSON_GetStringValue(cJSON_GetObjectItem(x->machine, "hostname"));
	if (!(x->res = calloc(d.nres + 1, sizeof *x->res))) {
		rc = ocb_seterr(OCB_ENOMEM, "export");
		goto out;
	}
	for (size_t i = 0; i < d.nres && !rc; i++) {
		const struct ocb_result *r = &d.res[i].r;
		struct xres *e = &x->res[i];
		ocb_rrow_of_result(r, d.res[i].id, &e->r);
		if (!(e->r.params = strdup(r->params_json))) {
			rc = ocb_seterr(OCB_ENOMEM, "export");
			break;
		}
		x->nres++;
		e->r.run_id = run_id;
		e->r.machine_id = x->machine_id;
		snprintf(e->r.host, sizeof e->r.host, "%s", host ? host : "");
		e->min = r->st.min;
		e->mean = r->st.mean;
		e->stddev = r->st.stddev;
		e->mad = r->st.mad;
		e->check_err = r->check_err;
		snprintf(e->error, sizeof e->error, "%s", r->error);
		rc = add_samples(x, e, r);
		if (!rc)
			rc = add_counters(x, e, r);
	}
	if (!rc)
		rc = ocb_mceil_load(db, &x->machine_id, 1, &x->mc);
out:
	ocb_run_dump_release(&d);
	if (rc)
		xrun_release(x);
	return rc;
}

static void jnum(cJSON *o, const char *k, double v)
{
	if (isnan(v) || isinf(v))
		cJSON_AddNullToObject(o, k);
	else
		cJSON_AddNumberToObject(o, k, v);
}

static const char *mstr(const struct xrun *x, const char *k)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(x->machine, k));
	return s ? s : "";
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double mnum(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* Google Benchmark's statistics of one repetition series (src/statistics.cc): mean,
 * median (mean of the middle two when even), sample standard deviation (n - 1), and the
 * coefficient of variation stddev / mean. out[4] in that order. */
static void gb_stats(const double *v, size_t n, double out[4])
{
	double *t = malloc(n * sizeof *t), sum = 0, sq = 0;
	out[0] = out[1] = out[2] = out[3] = NAN;
	if (!t || !n) {
		free(t);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		t[i] = v[i];
		sum += v[i];
	}
	double mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (v[i] - mean) * (v[i] - mean);
	qsort(t, n, sizeof *t, cmp_dbl);
	out[0] = mean;
	out[1] = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
	out[2] = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	out[3] = mean != 0 ? out[2] / mean : NAN;
	free(t);
}

static const char *const gb_agg[4] = {"mean", "median", "stddev", "cv"};

/* The per-repetition series of one case: [0] real ns, [1] cpu ns, [2] bytes/s, [3] flops/s
 * (NaN where the work model has none), each e->ns long, in one allocation. */
static double *gb_series(const struct xrun *x, const struct xres *e, int *have_cpu)
{
	const struct ocb_rrow *r = &e->r;
	double unit_ns = ocb_unit_seconds(r->unit) * 1e9, *v = malloc(4 * e->ns * sizeof *v);
	*have_cpu = e->ns > 0;
	if (!v)
		return NULL;
	for (size_t k = 0; k < e->ns; k++)
		*have_cpu &= !isnan(x->cpu[e->s0 + k]);
	for (size_t k = 0; k < e->ns; k++) {
		double real = x->samples[e->s0 + k] * unit_ns, sec = real * 1e-9;
		v[k] = real;
		/* no CPU time recorded (older runs, imports): cpu_time = real_time, and the
		 * context says so */
		v[e->ns + k] = *have_cpu ? x->cpu[e->s0 + k] * 1e9 : real;
		v[2 * e->ns + k] = r->bytes > 0 && sec > 0 ? r->bytes / sec : NAN;
		v[3 * e->ns + k] = r->flops > 0 && sec > 0 ? r->flops / sec : NAN;
	}
	return v;
}

/* One benchmark entry with the fields every entry has. NULL on allocation failure. */
static cJSON *gb_entry(cJSON *benches, const char *name, const struct ocb_rrow *r, int family,
		       int instance, size_t reps)
{
	cJSON *b = cJSON_CreateObject();
	if (!b || !cJSON_AddItemToArray(benches, b)) {
		cJSON_Delete(b);
		return NULL;
	}
	cJSON_AddStringToObject(b, "name", name);
	cJSON_AddNumberToObject(b, "family_index", family);
	cJSON_AddNumberToObject(b, "per_family_instance_index", instance);
	cJSON_AddStringToObject(b, "run_name", name);
	cJSON_AddStringToObject(b, "run_type", "iteration");
	cJSON_AddNumberToObject(b, "repetitions", (double)reps);
	cJSON_AddNumberToObject(b, "threads", r->threads > 0 ? r->threads : 1);
	return b;
}

/* Entries of one case: one "iteration" entry per repetition with its own values, then,
 * with >= 2 repetitions, the aggregates mean, median, stddev, cv as Google Benchmark
 * writes them (name "<run_name>_<aggregate>", statistics of the repetitions' values,
 * cv with aggregate_unit "percentage"). PAPI counters are per call averaged over every
 * repetition, so they go on the mean aggregate only. */
/* 1 if an earlier exported result of x has e's bench, params and threads (another
 * variant of the same case): its name then also carries "/variant:X". */
static int gb_dup(const struct xrun *x, const struct xres *e)
{
	for (const struct xres *o = x->res; o < e; o++)
		if (!strcmp(o->r.bench, e->r.bench) && !strcmp(o->r.params, e->r.params) &&
		    o->r.threads == e->r.threads && !strcmp(o->r.status, "ok"))
			return 1;
	return 0;
}

static int gb_case(const struct xrun *x, const struct xres *e, int family, int instance,
		   cJSON *benches, int *have_cpu)
{
	const struct ocb_rrow *r = &e->r;
	char *name = NULL, *an = NULL;
	double *v = gb_series(x, e, have_cpu);
	int rc = OCB_ENOMEM;
	int has_params = strcmp(r->params, "{}") != 0;
	int dup = gb_dup(x, e);
	if (!v || asprintf(&name, "%s%s%s/threads:%d%s%s", r->bench, has_params ? "/" : "",
			   has_params ? r->params : "", r->threads > 0 ? r->threads : 1,
			   dup ? "/variant:" : "", dup ? r->variant : "") < 0) {
		name = NULL;
		goto out;
	}
	size_t n = e->ns;
	for (size_t k = 0; k < n; k++) {
		cJSON *b = gb_entry(benches, name, r, family, instance, n);
		if (!b)
			goto out;
		cJSON_AddNumberToObject(b, "repetition_index", (double)k);
		cJSON_AddNumberToObject(b, "iterations", 1);
		jnum(b, "real_time", v[k]);
		jnum(b, "cpu_time", v[n + k]);
		cJSON_AddStringToObject(b, "time_unit", "ns");
		if (!isnan(v[2 * n + k]))
			cJSON_AddNumberToObject(b, "bytes_per_second", v[2 * n + k]);
		if (!isnan(v[3 * n + k]))
			cJSON_AddNumberToObject(b, "flops_per_second", v[3 * n + k]);
		cJSON_AddStringToObject(b, "label", r->variant);
	}
	double st[4][4]; /* [series][statistic] */
	for (int q = 0; q < 4; q++)
		gb_stats(v + q * n, n, st[q]);
	for (int a = 0; n >= 2 && a < 4; a++) {
		cJSON *b = gb_entry(benches, name, r, family, instance, n);
		if (!b || asprintf(&an, "%s_%s", name, gb_agg[a]) < 0)
			goto out;
		cJSON_ReplaceItemInObject(b, "name", cJSON_CreateString(an));
		free(an);
		an = NULL;
		cJSON_ReplaceItemInObject(b, "run_type", cJSON_CreateString("aggregate"));
		cJSON_AddStringToObject(b, "aggregate_name", gb_agg[a]);
		cJSON_AddStringToObject(b, "aggregate_unit", a == 3 ? "percentage" : "time");
		cJSON_AddNumberToObject(b, "iterations", (double)n);
		jnum(b, "real_time", st[0][a]);
		jnum(b, "cpu_time", st[1][a]);
		cJSON_AddStringToObject(b, "time_unit", "ns");
		if (!isnan(st[2][a]))
			cJSON_AddNumberToObject(b, "bytes_per_second", st[2][a]);
		if (!isnan(st[3][a]))
			cJSON_AddNumberToObject(b, "flops_per_second", st[3][a]);
		for (size_t c = e->c0; a == 0 && c < e->c0 + e->nc; c++)
			if (x->cnt[c].available && !cJSON_GetObjectItem(b, x->cnt[c].event))
				cJSON_AddNumberToObject(b, x->cnt[c].event, x->cnt[c].value);
		cJSON_AddStringToObject(b, "label", r->variant);
	}
	rc = OCB_OK;
out:
	free(an);
	free(name);
	free(v);
	return rc;
}

/* context.date as Google Benchmark writes it: RFC 3339 with a numeric offset. */
static void gb_date(const struct xrun *x, char *buf, size_t len)
{
	const char *d = cJSON_GetStringValue(cJSON_GetObjectItem(x->run, "started_at"));
	double t = ocb_iso8601_parse(d);
	if (isnan(t)) {
		snprintf(buf, len, "%s", d ? d : "");
		return;
	}
	ocb_utc_stamp(t, buf, len);
	size_t n = strlen(buf);
	if (n && buf[n - 1] == 'Z' && n + 6 <= len)
		memcpy(buf + n - 1, "+00:00", 7);
}

static int gb_context(const struct xrun *x, cJSON *ctx)
{
	char date[40];
	cJSON *caches, *load;
	gb_date(x, date, sizeof date);
	cJSON_AddStringToObject(ctx, "date", date);
	cJSON_AddStringToObject(ctx, "host_name", mstr(x, "hostname"));
	cJSON_AddStringToObject(ctx, "executable", "ocbench");
	double thr = mnum(x->machine, "threads");
	cJSON_AddNumberToObject(ctx, "num_cpus", isnan(thr) ? 0 : thr);
	/* MHz recorded at run start (/proc/cpuinfo); older runs: the "@ 2.45GHz" of the model
	 * name if any, else 0 as Google Benchmark writes when it cannot tell */
	double mhz = x->mhz;
	const char *at = strstr(mstr(x, "cpu_model"), "@ ");
	if (isnan(mhz))
		mhz = at ? 1000 * atof(at + 2) : 0;
	cJSON_AddNumberToObject(ctx, "mhz_per_cpu", round(mhz));
	cJSON_AddBoolToObject(ctx, "cpu_scaling_enabled", 0);
	if (!(caches = cJSON_AddArrayToObject(ctx, "caches")))
		return OCB_ENOMEM;
	static const struct { const char *col, *type; int level; } cl[] = {
		{"l1d_bytes", "Data", 1}, {"l2_bytes", "Unified", 2}, {"l3_bytes", "Unified", 3}};
	for (size_t i = 0; i < 3; i++) {
		double sz = mnum(x->machine, cl[i].col);
		if (!(sz > 0))
			continue;
		cJSON *c = cJSON_CreateObject();
		if (!c || !cJSON_AddItemToArray(caches, c)) {
			cJSON_Delete(c);
			return OCB_ENOMEM;
		}
		cJSON_AddStringToObject(c, "type", cl[i].type);
		cJSON_AddNumberToObject(c, "level", cl[i].level);
		cJSON_AddNumberToObject(c, "size", sz);
		cJSON_AddNumberToObject(c, "num_sharing", cl[i].level == 3 && thr > 0 ? thr : 1);
	}
	/* load averages at run start; [] when the run did not record them */
	if (!(load = cJSON_AddArrayToObject(ctx, "load_avg")))
		return OCB_ENOMEM;
	for (int i = 0; i < 3 && !isnan(x->load[0]); i++)
		cJSON_AddItemToArray(load, cJSON_CreateNumber(x->load[i]));
	cJSON_AddStringToObject(ctx, "library_build_type", "release");
	cJSON_AddNumberToObject(ctx, "json_schema_version", 1);
	const char *ver = cJSON_GetStringValue(cJSON_GetObjectItem(x->run, "ocbench_version"));
	cJSON_AddStringToObject(ctx, "ocbench_version", ver ? ver : "");
	const char *uuid = cJSON_GetStringValue(cJSON_GetObjectItem(x->run, "uuid"));
	cJSON_AddStringToObject(ctx, "ocbench_run_uuid", uuid ? uuid : "");
	cJSON_AddStringToObject(ctx, "ocbench_names",
				"bench/<params as canonical JSON>/threads:N; family = bench");
	cJSON_AddStringToObject(ctx, "ocbench_counters",
				"PAPI counters are per call averaged over all repetitions: on the "
				"_mean aggregate only; bytes_per_second and flops_per_second come "
				"from the static work model and each repetition's time");
	return OCB_OK;
}

static cJSON *gbench(const struct xrun *x)
{
	cJSON *root = cJSON_CreateObject(), *ctx, *benches;
	char (*fam)[64] = NULL;
	int *ninst = NULL, nfam = 0, cpu_all = 1, cpu_none = 1;
	if (!root || !(ctx = cJSON_AddObjectToObject(root, "context")) || gb_context(x, ctx) ||
	    !(benches = cJSON_AddArrayToObject(root, "benchmarks")))
		goto fail;
	fam = calloc(x->nres + 1, sizeof *fam);
	ninst = calloc(x->nres + 1, sizeof *ninst);
	if (!fam || !ninst)
		goto fail;
	for (size_t i = 0; i < x->nres; i++) {
		const struct xres *e = &x->res[i];
		if (!(ocb_unit_seconds(e->r.unit) > 0) || strcmp(e->r.status, "ok") || !e->ns)
			continue;
		/* family: one per bench, in order of appearance; instance: its cases in order */
		int f = 0;
		while (f < nfam && strcmp(fam[f], e->r.bench))
			f++;
		if (f == nfam)
			snprintf(fam[nfam++], sizeof *fam, "%s", e->r.bench);
		int have_cpu = 0;
		if (gb_case(x, e, f, ninst[f]++, benches, &have_cpu))
			goto fail;
		cpu_all &= have_cpu;
		cpu_none &= !have_cpu;
	}
	cJSON_AddStringToObject(ctx, "ocbench_cpu_time",
				cpu_all ? "process CPU time of all threads per call "
					  "(CLOCK_PROCESS_CPUTIME_ID, like MeasureProcessCPUTime)"
				: cpu_none ? "not recorded by this run: cpu_time = real_time"
					   : "process CPU time where recorded; elsewhere cpu_time = "
					     "real_time");
	free(fam);
	free(ninst);
	return root;
fail:
	free(fam);
	free(ninst);
	cJSON_Delete(root);
	return NULL;
}

static cJSON *full_json(const struct xrun *x)
{
	cJSON *root = cJSON_CreateObject(), *arr;
	if (!root)
		return NULL;
	cJSON_AddItemToObject(root, "run", cJSON_Duplicate(x->run, 1));
	cJSON_AddItemToObject(root, "machine", cJSON_Duplicate(x->machine, 1));
	if (!(arr = cJSON_AddArrayToObject(root, "results")))
		goto fail;
	for (size_t i = 0; i < x->nres; i++) {
		const struct xres *e = &x->res[i];
		const struct ocb_rrow *r = &e->r;
		cJSON *o = cJSON_CreateObject(), *smp, *cnt;
		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			goto fail;
		}
		cJSON_AddStringToObject(o, "suite", r->suite);
		cJSON_AddStringToObject(o, "bench", r->bench);
		cJSON *pj = cJSON_Parse(r->params);
		cJSON_AddItemToObject(o, "params", pj ? pj : cJSON_CreateString(r->params));
		cJSON_AddStringToObject(o, "variant", r->variant);
		cJSON_AddNumberToObject(o, "threads", r->threads);
		cJSON_AddStringToObject(o, "unit", r->unit);
		cJSON_AddNumberToObject(o, "n", (double)r->n);
		jnum(o, "min", e->min);
		jnum(o, "median", r->median);
		jnum(o, "mean", e->mean);
		jnum(o, "stddev", e->stddev);
		jnum(o, "mad", e->mad);
		jnum(o, "ci_low", r->ci_low);
		jnum(o, "ci_high", r->ci_high);
		jnum(o, "flops", r->flops);
		jnum(o, "bytes", r->bytes);
		jnum(o, "check_err", e->check_err);
		cJSON_AddStringToObject(o, "bound", r->bound);
		jnum(o, "roofline_frac", ocb_rrow_roof_frac(r, &x->mc));
		cJSON_AddStringToObject(o, "status", r->status);
		if (e->error[0])
			cJSON_AddStringToObject(o, "error", e->error);
		if (!(smp = cJSON_AddArrayToObject(o, "samples")) ||
		    !(cnt = cJSON_AddArrayToObject(o, "counters")))
			goto fail;
		for (size_t k = 0; k < e->ns; k++)
			cJSON_AddItemToArray(smp, cJSON_CreateNumber(x->samples[e->s0 + k]));
		for (size_t c = e->c0; c < e->c0 + e->nc; c++) {
			cJSON *co = cJSON_CreateObject();
			if (!co || !cJSON_AddItemToArray(cnt, co)) {
				cJSON_Delete(co);
				goto fail;
			}
			cJSON_AddStringToObject(co, "event", x->cnt[c].event);
			cJSON_AddBoolToObject(co, "available", x->cnt[c].available);
			jnum(co, "value", x->cnt[c].value);
			if (!x->cnt[c].available)
				cJSON_AddStringToObject(co, "reason", x->cnt[c].reason);
			jnum(co, "multiplex_ratio", x->cnt[c].multiplex);
		}
	}
	return root;
fail:
	cJSON_Delete(root);
	return NULL;
}

static int metrics_json(struct ocb_store *db, int64_t run_id, cJSON *root)
{
	cJSON *arr = cJSON_AddArrayToObject(root, "metrics");
	if (!arr)
		return ocb_seterr(OCB_ENOMEM, "export");
	return ocb_db_run_metrics_json(db, run_id, arr);
}

static void csv_num(FILE *f, double v)
{
	if (!isnan(v))
		fprintf(f, "%.17g", v);
}

static int write_csv(const struct xrun *x, FILE *f)
{
	const char *uuid = cJSON_GetStringValue(cJSON_GetObjectItem(x->run, "uuid"));
	fputs("run_uuid,machine,suite,bench,params,variant,threads,unit,n,min,median,mean,stddev,"
	      "mad,ci_low,ci_high,flops,bytes,gflops_per_s,gbytes_per_s,bound,roofline_frac,status\r\n",
	      f);
	for (size_t i = 0; i < x->nres; i++) {
		const struct xres *e = &x->res[i];
		const struct ocb_rrow *r = &e->r;
		ocb_esc_csv(f, uuid ? uuid : "");
		fputc(',', f);
		ocb_esc_csv(f, r->host);
		fputc(',', f);
		ocb_esc_csv(f, r->suite);
		fputc(',', f);
		ocb_esc_csv(f, r->bench);
		fputc(',', f);
		ocb_esc_csv(f, r->params);
		fputc(',', f);
		ocb_esc_csv(f, r->variant);
		fprintf(f, ",%d,", r->threads);
		ocb_esc_csv(f, r->unit);
		fprintf(f, ",%ld", r->n);
		double v[] = {e->min, r->median, e->mean, e->stddev, e->mad, r->ci_low, r->ci_high,
			      r->flops, r->bytes, ocb_rrow_gflops(r), ocb_rrow_gbs(r)};
		for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
			fputc(',', f);
			csv_num(f, v[k]);
		}
		fputc(',', f);
		ocb_esc_csv(f, r->bound);
		fputc(',', f);
		csv_num(f, ocb_rrow_roof_frac(r, &x->mc));
		fputc(',', f);
		ocb_esc_csv(f, r->status);
		fputs("\r\n", f);
	}
	return OCB_OK;
}

int ocb_export_run(struct ocb_store *db, int64_t run_id, enum ocb_export_fmt fmt, FILE *f)
{
	struct xrun x;
	cJSON *j = NULL;
	char *text = NULL;
	int rc = xrun_load(db, run_id, &x);
	if (rc)
		return rc;
	if (fmt == OCB_EXPORT_CSV) {
		rc = write_csv(&x, f);
	} else {
		j = fmt == OCB_EXPORT_GBENCH ? gbench(&x) : full_json(&x);
		if (!j)
			rc = ocb_seterr(OCB_ENOMEM, "export");
		else if (fmt == OCB_EXPORT_JSON)
			rc = metrics_json(db, run_id, j);
		if (!rc && !(text = cJSON_Print(j)))
			rc = ocb_seterr(OCB_ENOMEM, "export");
		if (!rc) {
			fputs(text, f);
			fputc('\n', f);
		}
	}
	if (!rc && (fflush(f) != 0 || ferror(f)))
		rc = ocb_seterr(OCB_EIO, "export: write failed");
	free(text);
	cJSON_Delete(j);
	xrun_release(&x);
	return rc;
}
