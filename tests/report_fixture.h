/* report_fixture: small databases for the report/compare/history/interchange tests,
 * written through the store API (db/store.h) as `ocbench run` would. Header-only,
 * static functions: included by those test files only. */
#ifndef OCB_REPORT_FIXTURE_H
#define OCB_REPORT_FIXTURE_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../db/store.h"
#include "../db/store_int.h" /* the test reads the database directly */

/* A fresh directory under /tmp; the caller removes it with fx_rmdir(). */
static inline void fx_tmpdir(char *buf, size_t len, const char *tag)
{
	snprintf(buf, len, "/tmp/ocb-%s-XXXXXX", tag);
	cr_assert_not_null(mkdtemp(buf));
}

static inline void fx_rmdir(const char *dir)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

static inline struct ocb_store *fx_open(const char *path)
{
	struct ocb_store *s = NULL;
	int rc = ocb_store_open(path, OCB_STORE_WRITE, &s);
	cr_assert_eq(rc, OCB_OK, "open %s: %s", path, ocb_lasterr());
	return s;
}

/* A machine with ceilings: peak 100 GFLOP/s (sgemm, 1 thread), L1 200 / DRAM 10 GB/s. */
static inline int64_t fx_machine(struct ocb_store *s, const char *host, const char *fp)
{
	struct ocb_machine m;
	memset(&m, 0, sizeof m);
	snprintf(m.fingerprint, sizeof m.fingerprint, "%s", fp);
	snprintf(m.hostname, sizeof m.hostname, "%s", host);
	snprintf(m.cpu_model, sizeof m.cpu_model, "Test CPU 9000");
	m.cores = 2;
	m.threads = 2;
	m.l1d_bytes = 32768;
	m.l2_bytes = 512 << 10;
	m.l3_bytes = 32 << 20;
	int64_t id;
	cr_assert_eq(ocb_store_machine(s, &m, &id), OCB_OK, "%s", ocb_lasterr());
	struct ocb_ceiling c[] = {
		{.kind = "flops_sgemm", .threads = 1, .value = 100, .unit = "GFLOP/s", .method = "test"},
		{.kind = "flops_fp32", .threads = 1, .value = 80, .unit = "GFLOP/s", .method = "test"},
		{.kind = "bw_l1", .threads = 1, .value = 200, .unit = "GB/s", .method = "test"},
		{.kind = "bw_l2", .threads = 1, .value = 80, .unit = "GB/s", .method = "test"},
		{.kind = "bw_dram", .threads = 1, .value = 10, .unit = "GB/s", .method = "test"},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++)
		cr_assert_eq(ocb_store_ceiling(s, id, 0, &c[i]), OCB_OK, "%s", ocb_lasterr());
	return id;
}

static inline int64_t fx_run(struct ocb_store *s, int64_t machine, const char *suite,
			     const char *label)
{
	static int counter;
	char uuid[64];
	snprintf(uuid, sizeof uuid, "00000000-0000-4000-8000-%06d%06d", (int)getpid() % 1000000,
		 ++counter);
	struct ocb_run_info ri = {.uuid = uuid, .machine_id = machine, .suite = suite,
				  .label = label, .ocbench_version = "0.1.0", .git_sha = "test",
				  .cmdline = "test", .config_json = "{\"threads\":1}", .seed = 1};
	int64_t id;
	cr_assert_eq(ocb_store_run_begin(s, &ri, &id), OCB_OK, "%s", ocb_lasterr());
	return id;
}

/* A result with n samples around `center` seconds (normal noise of relative sd `rsd`),
 * statistics computed here (median, CI from the sorted samples). */
static inline int64_t fx_result(struct ocb_store *s, int64_t run, const char *suite,
				const char *bench, const char *params, double center, double rsd,
				size_t n, uint64_t seed, double flops, double bytes)
{
	struct ocb_result r;
	struct ocb_rng rng;
	memset(&r, 0, sizeof r);
	snprintf(r.suite, sizeof r.suite, "%s", suite);
	snprintf(r.bench, sizeof r.bench, "%s", bench);
	r.params_json = (char *)params;
	snprintf(r.variant, sizeof r.variant, "ref");
	r.threads = 1;
	snprintf(r.unit, sizeof r.unit, "s");
	double *x = calloc(n, sizeof *x);
	cr_assert_not_null(x);
	ocb_rng_seed(&rng, seed);
	for (size_t i = 0; i < n; i++)
		x[i] = center * (1 + rsd * ocb_rng_normal(&rng));
	double *sorted = calloc(n, sizeof *sorted);
	memcpy(sorted, x, n * sizeof *x);
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && sorted[j] < sorted[j - 1]; j--) {
			double t = sorted[j];
			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	r.samples = x;
	r.nsamples = n;
	r.st.n = (long)n;
	r.st.min = sorted[0];
	r.st.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
	r.st.mean = r.st.median;
	r.st.ci_low = sorted[n / 4];
	r.st.ci_high = sorted[(3 * n) / 4];
	r.flops = flops;
	r.bytes = bytes;
	r.check_err = NAN;
	r.bound_frac = NAN;
	snprintf(r.status, sizeof r.status, "ok");
	int64_t id;
	cr_assert_eq(ocb_store_result(s, run, &r, &id), OCB_OK, "%s", ocb_lasterr());
	free(sorted);
	free(x);
	return id;
}

static inline long fx_count(sqlite3 *db, const char *table)
{
	char sql[128];
	sqlite3_stmt *st = NULL;
	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	long n = (long)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static inline char *fx_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = '\0';
	fclose(f);
	return b;
}

#endif
