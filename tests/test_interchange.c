/* interchange: export (Google Benchmark JSON, CSV, JSON), import of Google Benchmark
 * JSON (round trip; malformed -> OCB_EFORMAT, nothing written), merge (both machines
 * kept; a second merge adds nothing; foreign files refused). */
#include <cJSON.h>

#include "../cli/cli.h"
#include "../report/export.h"
#include "../db/import.h"
#include "../db/merge.h"
#include "report_fixture.h"

static int64_t one_run(const char *db, const char *host, const char *fp, uint64_t seed)
{
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, host, fp);
	int64_t r = fx_run(s, m, "baseline", host);
	fx_result(s, r, "baseline", "sgemm", "{\"n\":256}", 1e-3, 0.01, 12, seed, 3.4e7, 7.9e5);
	fx_result(s, r, "baseline", "triad", "{}", 2e-3, 0.01, 10, seed + 1, 2e6, 2.4e7);
	ocb_store_metric(s, r, "mlp", 1, "train_loss", 0.5, "nats");
	ocb_store_run_finish(s, r, "complete");
	ocb_store_close(s);
	return r;
}

static char *export_text(const char *db, int64_t run, enum ocb_export_fmt fmt)
{
	struct ocb_store *s = NULL;
	char *buf = NULL;
	size_t len = 0;
	cr_assert_eq(ocb_store_open(db, OCB_STORE_READ, &s), OCB_OK);
	FILE *m = open_memstream(&buf, &len);
	cr_assert_eq(ocb_export_run(s, run, fmt, m), OCB_OK, "%s", ocb_lasterr());
	fclose(m);
	ocb_store_close(s);
	return buf;
}

Test(interchange, gbench_export_has_the_schema)
{
	char dir[256], db[300];
	fx_tmpdir(dir, sizeof dir, "gb");
	snprintf(db, sizeof db, "%s/x.db", dir);
	int64_t r = one_run(db, "hostA", "aaaa1111", 1);
	char *text = export_text(db, r, OCB_EXPORT_GBENCH);
	cJSON *j = cJSON_Parse(text);
	cr_assert_not_null(j, "not JSON");
	cJSON *ctx = cJSON_GetObjectItem(j, "context");
	cr_assert(cJSON_IsObject(ctx));
	const char *keys[] = {"date", "host_name", "executable", "num_cpus", "mhz_per_cpu",
			      "cpu_scaling_enabled", "caches", "load_avg", "library_build_type"};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		cr_assert_not_null(cJSON_GetObjectItem(ctx, keys[i]), "context.%s missing", keys[i]);
	cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(ctx, "host_name")), "hostA");
	cr_assert(cJSON_IsArray(cJSON_GetObjectItem(ctx, "caches")));
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(ctx, "caches")), 3);
	cJSON *b = cJSON_GetObjectItem(j, "benchmarks");
	/* per case: one entry per repetition + mean, median, stddev, cv */
	cr_assert_eq(cJSON_GetArraySize(b), 12 + 4 + 10 + 4);
	int iters = 0, aggs = 0, medians = 0;
	cJSON *e;
	cJSON_ArrayForEach(e, b)
	{
		const char *rt = cJSON_GetStringValue(cJSON_GetObjectItem(e, "run_type"));
		cr_assert_not_null(rt);
		cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(e, "real_time")));
		cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(e, "cpu_time")));
		cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(e, "iterations")));
		cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(e, "threads")));
		cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(e, "repetitions")));
		cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(e, "time_unit")), "ns");
		cr_assert_not_null(cJSON_GetStringValue(cJSON_GetObjectItem(e, "run_name")));
		if (!strcmp(rt, "iteration")) {
			iters++;
			cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(e, "repetition_index")));
		} else {
			aggs++;
			const char *an = cJSON_GetStringValue(cJSON_GetObjectItem(e, "aggregate_name"));
			cr_assert_not_null(an);
			if (!strcmp(an, "median")) {
				medians++;
				if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "run_name")),
					    "sgemm/{\"n\":256}/threads:1")) {
					double ns = cJSON_GetObjectItem(e, "real_time")->valuedouble;
					cr_assert(ns > 0.9e6 && ns < 1.1e6, "median %g ns", ns);
				}
			}
		}
	}
	cr_assert_eq(iters, 22);
	cr_assert_eq(aggs, 8);
	cr_assert_eq(medians, 2);
	cJSON_Delete(j);
	free(text);

	text = export_text(db, r, OCB_EXPORT_CSV);
	cr_assert_eq(strncmp(text, "run_uuid,machine,suite,bench,params", 35), 0);
	cr_assert_not_null(strstr(text, "\"{\"\"n\"\":256}\""), "%s", text); /* RFC 4180 quoting */
	free(text);
	text = export_text(db, r, OCB_EXPORT_JSON);
	j = cJSON_Parse(text);
	cr_assert_not_null(j);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "results")), 2);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "metrics")), 1);
	cJSON_Delete(j);
	free(text);
	fx_rmdir(dir);
}

Test(interchange, import_round_trip_and_malformed)
{
	char dir[256], db[300], gb[300], bad[300], bad2[300];
	fx_tmpdir(dir, sizeof dir, "imp");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(gb, sizeof gb, "%s/gb.json", dir);
	snprintf(bad, sizeof bad, "%s/bad.json", dir);
	snprintf(bad2, sizeof bad2, "%s/bad2.json", dir);
	int64_t r = one_run(db, "hostA", "aaaa1111", 1);
	char *text = export_text(db, r, OCB_EXPORT_GBENCH);
	FILE *f = fopen(gb, "w");
	fputs(text, f);
	fclose(f);
	free(text);
	f = fopen(bad, "w");
	fputs("{\"context\": {}, \"benchmarks\": [ {\"name\": \"x\", \"real_time\": 1", f);
	fclose(f);
	f = fopen(bad2, "w"); /* JSON, but an entry without real_time after a good one */
	fputs("{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 5, \"time_unit\": \"us\"},"
	      " {\"name\": \"b\", \"time_unit\": \"ns\"}]}",
	      f);
	fclose(f);

	struct ocb_store *s = fx_open(db);
	sqlite3 *h = ocb_store_handle(s);
	long runs = fx_count(h, "run"), results = fx_count(h, "result"), samples = fx_count(h, "sample");
	struct ocb_import_opts io = {.machine_id = 1, .label = "imported", .version = "0.1.0"};
	cr_assert_eq(ocb_import_gbench(s, bad, &io, NULL, NULL), OCB_EFORMAT);
	cr_assert_eq(ocb_import_gbench(s, bad2, &io, NULL, NULL), OCB_EFORMAT);
	cr_assert_not_null(strstr(ocb_lasterr(), "benchmarks[1]"), "%s", ocb_lasterr());
	cr_assert_eq(fx_count(h, "run"), runs);
	cr_assert_eq(fx_count(h, "result"), results);
	cr_assert_eq(fx_count(h, "sample"), samples);

	int64_t rid = 0;
	size_t n = 0;
	cr_assert_eq(ocb_import_gbench(s, gb, &io, &rid, &n), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(n, 2);
	cr_assert_eq(fx_count(h, "run"), runs + 1);
	cr_assert_eq(fx_count(h, "sample"), 2 * samples);
	/* the imported sgemm has the same median and params as the original */
	sqlite3_stmt *st = NULL;
	cr_assert_eq(sqlite3_prepare_v2(h, "SELECT a.median, b.median, b.suite, b.threads FROM result a"
					   " JOIN result b ON b.bench = a.bench AND b.params_json = a.params_json"
					   " WHERE a.run_id = ?1 AND b.run_id = ?2 AND a.bench = 'sgemm'",
					   -1, &st, NULL),
		     SQLITE_OK);
	sqlite3_bind_int64(st, 1, r);
	sqlite3_bind_int64(st, 2, rid);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_float_eq(sqlite3_column_double(st, 1), sqlite3_column_double(st, 0), 1e-12);
	cr_assert_str_eq((const char *)sqlite3_column_text(st, 2), "import");
	cr_assert_eq(sqlite3_column_int(st, 3), 1);
	sqlite3_finalize(st);
	ocb_store_close(s);
	fx_rmdir(dir);
}

Test(interchange, merge_is_idempotent)
{
	char dir[256], a[300], b[300], junk[300];
	fx_tmpdir(dir, sizeof dir, "merge");
	snprintf(a, sizeof a, "%s/a.db", dir);
	snprintf(b, sizeof b, "%s/b.db", dir);
	snprintf(junk, sizeof junk, "%s/junk.db", dir);
	one_run(a, "hostA", "aaaa1111", 1);
	one_run(b, "hostB", "bbbb2222", 2);
	one_run(b, "hostB", "bbbb2222", 3); /* b: two runs on one machine */
	sqlite3 *rb = NULL; /* one of b's ceilings carries its trials, spread and a flag */
	cr_assert_eq(sqlite3_open(b, &rb), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(rb, "UPDATE ceiling SET trials = 5, spread = 0.03,"
				      " suspect = 'cores: a thread got 0.5 of its core'"
				      " WHERE id = (SELECT min(id) FROM ceiling)", NULL, NULL, NULL),
		     SQLITE_OK);
	sqlite3_close(rb);
	struct ocb_store *s = fx_open(a);
	sqlite3 *h = ocb_store_handle(s);
	struct ocb_merge_stats st;
	cr_assert_eq(ocb_merge_db(s, b, &st), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(st.machines, 1);
	cr_assert_eq(st.runs, 2);
	cr_assert_eq(st.results, 4);
	cr_assert_eq(st.samples, 44);
	cr_assert_eq(st.metrics, 2);
	cr_assert_eq(st.ceilings, 10, "%ld", st.ceilings); /* b measured its ceilings twice */
	const char *tables[] = {"machine", "run", "result", "sample", "counter", "metric", "ceiling"};
	long before[7];
	for (int i = 0; i < 7; i++)
		before[i] = fx_count(h, tables[i]);
	cr_assert_eq(before[0], 2);
	cr_assert_eq(before[1], 3);
	cr_assert_eq(fx_count(h, "ceiling WHERE trials = 5 AND spread = 0.03 AND suspect LIKE 'cores:%'"),
		     1, "merge keeps a ceiling's trials, spread and flag");
	/* every merged result points at a merged run of hostB */
	cr_assert_eq(fx_count(h, "result r JOIN run u ON u.id = r.run_id JOIN machine m"
				 " ON m.id = u.machine_id WHERE m.hostname = 'hostB'"),
		     4);
	cr_assert_eq(ocb_merge_db(s, b, &st), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(st.runs, 0);
	cr_assert_eq(st.runs_skipped, 2);
	for (int i = 0; i < 7; i++)
		cr_assert_eq(fx_count(h, tables[i]), before[i], "%s changed", tables[i]);
	/* not ocbench's: refused, nothing changes */
	FILE *f = fopen(junk, "w");
	fputs("this is not a database\n", f);
	fclose(f);
	cr_assert_eq(ocb_merge_db(s, junk, &st), OCB_ENOTOURS);
	cr_assert_eq(fx_count(h, "run"), before[1]);
	ocb_store_close(s);

	/* through the command */
	struct ocb_global g = {.db_path = a, .quiet = 1};
	char *argv[] = {"merge", b, NULL};
	cr_assert_eq(cmd_merge(&g, 2, argv), 0);
	char *argv2[] = {"merge", junk, NULL};
	cr_assert_eq(cmd_merge(&g, 2, argv2), 2);
	fx_rmdir(dir);
}

/* A case at `threads` with n samples center * (1 + 0.01 k) and CPU times threads x them
 * (or none when cpu is 0). */
static void case_at(struct ocb_store *s, int64_t run, const char *params, int threads,
		    double center, size_t n, int cpu, double bytes)
{
	struct ocb_result r;
	memset(&r, 0, sizeof r);
	snprintf(r.suite, sizeof r.suite, "baseline");
	snprintf(r.bench, sizeof r.bench, "sgemv");
	r.params_json = (char *)params;
	static int calls;
	snprintf(r.variant, sizeof r.variant, "%s", ++calls % 4 == 0 ? "ref" : "openblas");
	r.threads = threads;
	snprintf(r.unit, sizeof r.unit, "s");
	r.samples = calloc(n, sizeof *r.samples);
	r.cpu_samples = cpu ? calloc(n, sizeof *r.cpu_samples) : NULL;
	for (size_t k = 0; k < n; k++) {
		r.samples[k] = center * (1 + 0.01 * (double)k);
		if (cpu)
			r.cpu_samples[k] = threads * r.samples[k] * 0.97;
	}
	r.nsamples = n;
	r.st = (struct ocb_stats){.n = (long)n, .min = center, .median = r.samples[n / 2],
				  .mean = r.samples[n / 2], .ci_low = center,
				  .ci_high = r.samples[n - 1]};
	r.flops = 2.0 * 1024 * 1024;
	r.bytes = bytes;
	r.check_err = NAN;
	r.bound_frac = NAN;
	snprintf(r.status, sizeof r.status, "ok");
	struct ocb_counter_val c = {.event = "perf::TASK-CLOCK", .value = 1234.5, .available = 1,
				    .multiplex_ratio = 1};
	r.counters = &c;
	r.ncounters = 1;
	cr_assert_eq(ocb_store_result(s, run, &r, NULL), OCB_OK, "%s", ocb_lasterr());
	free(r.samples);
	free(r.cpu_samples);
}

/* A run with sgemv at 1 and 2 threads (the 2-thread one with CPU times) and another
 * shape, with its run_context. */
static int64_t threads_run(const char *db, const char *host, const char *fp, double scale)
{
	struct ocb_store *s = fx_open(db);
	int64_t m = fx_machine(s, host, fp);
	int64_t r = fx_run(s, m, "baseline", host);
	case_at(s, r, "{\"m\":1024,\"n\":1024}", 1, 1e-3 * scale, 9, 0, 4.2e6);
	case_at(s, r, "{\"m\":1024,\"n\":1024}", 2, 0.6e-3 * scale, 9, 1, 4.2e6);
	case_at(s, r, "{\"m\":256,\"n\":4096}", 2, 0.2e-3 * scale, 9, 1, 4.2e6);
	case_at(s, r, "{\"m\":256,\"n\":4096}", 2, 0.25e-3 * scale, 9, 1, 4.2e6);
	ocb_store_metric(s, r, "run_context", -1, "load_avg_1m", 0.25, "1");
	ocb_store_metric(s, r, "run_context", -1, "load_avg_5m", 0.5, "1");
	ocb_store_metric(s, r, "run_context", -1, "load_avg_15m", 0.75, "1");
	ocb_store_metric(s, r, "run_context", -1, "cpu_mhz", 2599.7, "MHz");
	ocb_store_run_finish(s, r, "complete");
	ocb_store_close(s);
	return r;
}

static cJSON *entry(cJSON *benches, const char *name, int rep)
{
	cJSON *e;
	cJSON_ArrayForEach(e, benches)
	{
		cJSON *ri = cJSON_GetObjectItem(e, "repetition_index");
		if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "name")), name) &&
		    (rep < 0 ? !ri : ri && ri->valueint == rep))
			return e;
	}
	return NULL;
}

/* Google Benchmark's schema (src/json_reporter.cc, tools/gbench/report.py): names with
 * /threads:N, family and instance indices, each repetition its own values, aggregates
 * over the repetitions, process CPU time, load average and MHz in the context. */
Test(interchange, gbench_threads_repetitions_and_context)
{
	char dir[256], db[300];
	fx_tmpdir(dir, sizeof dir, "gbt");
	snprintf(db, sizeof db, "%s/x.db", dir);
	int64_t r = threads_run(db, "hostA", "aaaa1111", 1.0);
	char *text = export_text(db, r, OCB_EXPORT_GBENCH);
	cJSON *j = cJSON_Parse(text);
	cr_assert_not_null(j);
	cJSON *ctx = cJSON_GetObjectItem(j, "context"), *b = cJSON_GetObjectItem(j, "benchmarks");
	cJSON *load = cJSON_GetObjectItem(ctx, "load_avg");
	cr_assert_eq(cJSON_GetArraySize(load), 3);
	cr_expect_float_eq(cJSON_GetArrayItem(load, 2)->valuedouble, 0.75, 1e-12);
	cr_expect_eq(cJSON_GetObjectItem(ctx, "mhz_per_cpu")->valuedouble, 2600);
	const char *date = cJSON_GetStringValue(cJSON_GetObjectItem(ctx, "date"));
	cr_expect(date && strlen(date) == 25 && !strcmp(date + 19, "+00:00"), "date %s", date);

	const char *n1 = "sgemv/{\"m\":1024,\"n\":1024}/threads:1";
	const char *n2 = "sgemv/{\"m\":1024,\"n\":1024}/threads:2";
	const char *n3 = "sgemv/{\"m\":256,\"n\":4096}/threads:2";
	cJSON *a = entry(b, n1, 0), *c = entry(b, n2, 0), *d = entry(b, n3, 0);
	cr_assert(a && c && d, "%s", text);
	cr_expect_eq(cJSON_GetObjectItem(a, "family_index")->valueint, 0);
	cr_expect_eq(cJSON_GetObjectItem(c, "family_index")->valueint, 0);
	cr_expect_eq(cJSON_GetObjectItem(a, "per_family_instance_index")->valueint, 0);
	cr_expect_eq(cJSON_GetObjectItem(c, "per_family_instance_index")->valueint, 1);
	cr_expect_eq(cJSON_GetObjectItem(d, "per_family_instance_index")->valueint, 2);
	cr_expect_eq(cJSON_GetObjectItem(c, "threads")->valueint, 2);
	/* repetition k carries its own time and rate, not the case's mean */
	for (int k = 0; k < 9; k++) {
		cJSON *e = entry(b, n2, k);
		cr_assert_not_null(e);
		double real = cJSON_GetObjectItem(e, "real_time")->valuedouble;
		cr_expect_float_eq(real, 0.6e-3 * (1 + 0.01 * k) * 1e9, 1e-3);
		cr_expect_float_eq(cJSON_GetObjectItem(e, "cpu_time")->valuedouble, 2 * 0.97 * real,
				   1e-3);
		cr_expect_float_eq(cJSON_GetObjectItem(e, "bytes_per_second")->valuedouble,
				   4.2e6 / (real * 1e-9), 1e-3);
		cr_expect_null(cJSON_GetObjectItem(e, "perf::TASK-CLOCK"), "counter on a repetition");
	}
	/* no CPU time recorded: cpu_time = real_time */
	cr_expect_float_eq(cJSON_GetObjectItem(a, "cpu_time")->valuedouble,
			   cJSON_GetObjectItem(a, "real_time")->valuedouble, 1e-9);
	cJSON *mean = entry(b, "sgemv/{\"m\":1024,\"n\":1024}/threads:2_mean", -1);
	cJSON *cv = entry(b, "sgemv/{\"m\":1024,\"n\":1024}/threads:2_cv", -1);
	cr_assert(mean && cv);
	cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(mean, "run_name")), n2);
	cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cv, "aggregate_unit")),
			 "percentage");
	cr_expect_float_eq(cJSON_GetObjectItem(mean, "real_time")->valuedouble,
			   0.6e-3 * 1.04 * 1e9, 1e-3);
	cr_expect_float_eq(cJSON_GetObjectItem(mean, "perf::TASK-CLOCK")->valuedouble, 1234.5,
			   1e-9);
	cr_expect_eq(cJSON_GetObjectItem(mean, "iterations")->valueint, 9);
	/* a second variant of one case gets a name of its own */
	cr_expect_not_null(entry(b, "sgemv/{\"m\":256,\"n\":4096}/threads:2/variant:ref", 0),
			   "%s", text);
	cJSON_Delete(j);
	free(text);
	fx_rmdir(dir);
}

/* import of our own export: every case comes back with its thread count, samples, work
 * (bytes from bytes_per_second) and the file's date as the run's start. */
Test(interchange, import_keeps_threads_rates_and_date)
{
	char dir[256], db[300], gb[300];
	fx_tmpdir(dir, sizeof dir, "gbi");
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(gb, sizeof gb, "%s/gb.json", dir);
	int64_t r = threads_run(db, "hostA", "aaaa1111", 1.0);
	char *text = export_text(db, r, OCB_EXPORT_GBENCH);
	/* a date from elsewhere, in local time with an offset as Google Benchmark writes */
	char *at = strstr(text, "\"date\":");
	cr_assert_not_null(at);
	char *q1 = strchr(at + 7, '"'), *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
	cr_assert(q2 && q2 - q1 - 1 == 25);
	memcpy(q1 + 1, "2024-03-05T10:20:30+02:00", 25);
	FILE *f = fopen(gb, "w");
	fputs(text, f);
	fclose(f);
	free(text);

	struct ocb_store *s = fx_open(db);
	sqlite3 *h = ocb_store_handle(s);
	struct ocb_import_opts io = {.machine_id = 1, .version = "0.1.0"};
	int64_t rid = 0;
	size_t n = 0;
	cr_assert_eq(ocb_import_gbench(s, gb, &io, &rid, &n), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(n, 4);
	char sql[512], t[64];
	snprintf(sql, sizeof sql, "SELECT started_at FROM run WHERE id = %lld", (long long)rid);
	sqlite3_stmt *st = NULL;
	cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	snprintf(t, sizeof t, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	cr_expect_str_eq(t, "2024-03-05T08:20:30Z");
	/* every case pairs with its original by (bench, params, threads) */
	cr_assert_eq(sqlite3_prepare_v2(
			     h,
			     "SELECT a.threads, a.median, b.median, a.bytes, b.bytes, a.n, b.n,"
			     " (SELECT value FROM counter WHERE result_id = b.id AND"
			     " event = 'perf::TASK-CLOCK') FROM result a JOIN result b"
			     " ON b.bench = a.bench AND b.params_json = a.params_json"
			     " AND b.threads = a.threads AND b.variant = a.variant"
			     " WHERE a.run_id = ?1 AND b.run_id = ?2"
			     " ORDER BY a.id",
			     -1, &st, NULL),
		     SQLITE_OK);
	sqlite3_bind_int64(st, 1, r);
	sqlite3_bind_int64(st, 2, rid);
	int rows = 0, threads_seen = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		rows++;
		threads_seen |= 1 << sqlite3_column_int(st, 0);
		cr_expect_float_eq(sqlite3_column_double(st, 2), sqlite3_column_double(st, 1), 1e-12);
		cr_expect_float_eq(sqlite3_column_double(st, 4), sqlite3_column_double(st, 3), 1e-3);
		cr_expect_eq(sqlite3_column_int(st, 6), sqlite3_column_int(st, 5));
		cr_expect_float_eq(sqlite3_column_double(st, 7), 1234.5, 1e-9);
	}
	sqlite3_finalize(st);
	cr_expect_eq(rows, 4);
	cr_expect_eq(threads_seen, (1 << 1) | (1 << 2));
	ocb_store_close(s);
	fx_rmdir(dir);
}
