/* Tests of db/store.c and db/store_query.c: schema creation and migration, refusal of
 * files that are not ours (left byte-for-byte unchanged), aborted-run marking, atomic
 * results, ceilings. Every file lives in a fresh mkdtemp directory. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../db/store.h"
#include "../db/store_int.h" /* the test reads the database directly */
#include "../db/store_query.h"
#include "cli_util.h"

static char dir[128];

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(p);
}

static void setup(void)
{
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb-store")));
}

static void teardown(void)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(store, .init = setup, .fini = teardown);

static char *tpath(const char *name)
{
	static char buf[16][256];
	static int k;
	char *p = buf[k++ & 15];
	snprintf(p, 256, "%s/%s", dir, name);
	return p;
}

/* Whole file into a malloc'd buffer, NUL-terminated (callers hand SQL text to
 * sqlite3_exec); *len its size without the NUL. */
static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc((size_t)n + 1);
	cr_assert_not_null(b);
	cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	b[n] = '\0'; /* make sanitize: sqlite3_exec's strlen read past the end */
	*len = (size_t)n;
	return b;
}

static void write_bytes(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(p, 1, n, f), n);
	fclose(f);
}

static int exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

/* One integer from a query on a plain sqlite3 connection. */
static int64_t q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(db));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
	int64_t v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int q_isnull(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sql);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
	int v = sqlite3_column_type(st, 0) == SQLITE_NULL;
	sqlite3_finalize(st);
	return v;
}

static void q_text(sqlite3 *db, const char *sql, char *out, size_t cap)
{
	sqlite3_stmt *st = NULL;
	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sql);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
	const unsigned char *t = sqlite3_column_text(st, 0);
	snprintf(out, cap, "%s", t ? (const char *)t : "(null)");
	sqlite3_finalize(st);
}

static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	char *msg = NULL;
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", sql,
		     msg ? msg : "");
	sqlite3_close(db);
}

static struct ocb_store *open_ok(const char *path, enum ocb_store_mode mode)
{
	struct ocb_store *s = NULL;
	int rc = ocb_store_open(path, mode, &s);
	cr_assert_eq(rc, OCB_OK, "open %s: %d %s", path, rc, ocb_lasterr());
	cr_assert_not_null(s);
	return s;
}

static struct ocb_machine machine(const char *fp)
{
	struct ocb_machine m = {0};
	snprintf(m.fingerprint, sizeof m.fingerprint, "%s", fp);
	snprintf(m.hostname, sizeof m.hostname, "testhost");
	snprintf(m.cpu_model, sizeof m.cpu_model, "Test CPU");
	m.cores = 2;
	m.threads = 2;
	m.l3_bytes = 32 << 20;
	m.is_vm = 1;
	return m;
}

static int64_t new_run(struct ocb_store *s, int64_t mid, const char *uuid, const char *label)
{
	struct ocb_run_info ri = {.uuid = uuid, .machine_id = mid, .suite = "baseline",
				  .label = label, .ocbench_version = "test", .seed = 42};
	int64_t id = 0;
	cr_assert_eq(ocb_store_run_begin(s, &ri, &id), OCB_OK, "%s", ocb_lasterr());
	cr_assert_gt(id, 0);
	return id;
}

/* Opens `path` with `mode`, expects status `want`, and that the file's bytes did not
 * change and no store came back. */
static void expect_refused(const char *path, enum ocb_store_mode mode, int want,
			   const char *msg_part)
{
	size_t n0, n1;
	unsigned char *before = slurp(path, &n0);
	struct ocb_store *s = (struct ocb_store *)1;
	int rc = ocb_store_open(path, mode, &s);
	cr_expect_eq(rc, want, "open %s mode %d: got %d (%s), want %d", path, mode, rc,
		     ocb_lasterr(), want);
	cr_expect_null(s);
	cr_expect(strstr(ocb_lasterr(), path) != NULL, "message names the path: %s",
		  ocb_lasterr());
	if (msg_part)
		cr_expect(strstr(ocb_lasterr(), msg_part) != NULL, "'%s' in '%s'", msg_part,
			  ocb_lasterr());
	unsigned char *after = slurp(path, &n1);
	cr_expect_eq(n0, n1, "size changed %zu -> %zu", n0, n1);
	cr_expect(n0 == n1 && memcmp(before, after, n0) == 0, "bytes changed");
	free(before);
	free(after);
}

Test(store, creates_schema_and_version)
{
	const char *p = tpath("new.db");
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	sqlite3 *db = ocb_store_handle(s);
	cr_expect_eq(q_int(db, "PRAGMA user_version"), OCB_SCHEMA_VERSION);
	char t[64];
	q_text(db, "PRAGMA journal_mode", t, sizeof t);
	cr_expect_str_eq(t, "wal");
	cr_expect_eq(q_int(db, "PRAGMA foreign_keys"), 1);
	cr_expect_eq(q_int(db, "PRAGMA synchronous"), 1); /* NORMAL */
	cr_expect_geq(q_int(db, "PRAGMA busy_timeout"), 1000);
	q_text(db, "SELECT value FROM ocbench_meta WHERE key = 'app'", t, sizeof t);
	cr_expect_str_eq(t, "ocbench");
	cr_expect_eq(q_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name"
			       " IN ('machine','run','ceiling','result','sample','counter','metric',"
			       "'ocbench_meta')"),
		     8);
	cr_expect_str_eq(ocb_store_path(s), p);
	ocb_store_close(s);
	ocb_store_close(NULL);
}

Test(store, reopen_is_idempotent)
{
	const char *p = tpath("re.db");
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	struct ocb_machine m = machine("aaaa1111");
	int64_t id1 = 0, id2 = 0, id3 = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &id1), OCB_OK);
	int64_t nobj = q_int(ocb_store_handle(s), "SELECT count(*) FROM sqlite_master");
	ocb_store_close(s);

	s = open_ok(p, OCB_STORE_WRITE);
	sqlite3 *db = ocb_store_handle(s);
	cr_expect_eq(q_int(db, "PRAGMA user_version"), OCB_SCHEMA_VERSION);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM sqlite_master"), nobj);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM ocbench_meta WHERE key = 'app'"), 1);
	/* upsert by fingerprint: same row, and a new fingerprint is a new row */
	cr_assert_eq(ocb_store_machine(s, &m, &id2), OCB_OK);
	cr_expect_eq(id1, id2);
	struct ocb_machine m2 = machine("bbbb2222");
	cr_assert_eq(ocb_store_machine(s, &m2, &id3), OCB_OK);
	cr_expect_neq(id3, id1);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM machine"), 2);
	ocb_store_close(s);

	s = open_ok(p, OCB_STORE_READ);
	cr_expect_eq(q_int(ocb_store_handle(s), "SELECT count(*) FROM machine"), 2);
	ocb_store_close(s);
}

Test(store, migrates_version0_empty_file)
{
	const char *p = tpath("empty.db");
	write_bytes(p, "", 0);
	/* READ of an empty file: refused, still empty */
	struct ocb_store *s = NULL;
	cr_expect_eq(ocb_store_open(p, OCB_STORE_READ, &s), OCB_ENOTOURS);
	struct stat sb;
	cr_assert_eq(stat(p, &sb), 0);
	cr_expect_eq(sb.st_size, 0);

	/* a hand-made version-0 database: valid SQLite, no table, user_version 0 */
	sqlite3 *raw = NULL;
	cr_assert_eq(sqlite3_open(p, &raw), SQLITE_OK);
	cr_expect_eq(q_int(raw, "PRAGMA user_version"), 0);
	sqlite3_close(raw);

	s = open_ok(p, OCB_STORE_WRITE);
	sqlite3 *db = ocb_store_handle(s);
	cr_expect_eq(q_int(db, "PRAGMA user_version"), OCB_SCHEMA_VERSION);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'result'"), 1);
	ocb_store_close(s);
	cr_assert_eq(stat(p, &sb), 0);
	cr_expect_gt(sb.st_size, 0);
}

Test(store, refuses_text_file_unchanged)
{
	const char *p = tpath("notes.txt");
	const char *text = "these are my notes, not a database\nline two\n";
	write_bytes(p, text, strlen(text));
	expect_refused(p, OCB_STORE_WRITE, OCB_ENOTOURS, "not an SQLite database");
	expect_refused(p, OCB_STORE_READ, OCB_ENOTOURS, "not an SQLite database");
	cr_expect(!exists(tpath("notes.txt-wal")) && !exists(tpath("notes.txt-shm")));
	/* a file that starts like SQLite's magic but is cut short */
	const char *p2 = tpath("short.db");
	write_bytes(p2, "SQLite format", 13);
	expect_refused(p2, OCB_STORE_WRITE, OCB_ENOTOURS, "not an SQLite database");
}

Test(store, refuses_foreign_sqlite_unchanged)
{
	const char *p = tpath("foreign.db");
	raw_exec(p, "CREATE TABLE photos(id INTEGER PRIMARY KEY, name TEXT);"
		    "INSERT INTO photos(name) VALUES ('cat.jpg'), ('dog.jpg');");
	expect_refused(p, OCB_STORE_WRITE, OCB_ENOTOURS, NULL);
	expect_refused(p, OCB_STORE_READ, OCB_ENOTOURS, NULL);

	/* has a table named ocbench_meta, but another app's row */
	const char *p2 = tpath("foreign2.db");
	raw_exec(p2, "CREATE TABLE ocbench_meta(key TEXT PRIMARY KEY, value TEXT);"
		     "INSERT INTO ocbench_meta VALUES ('app', 'somebody-else');");
	expect_refused(p2, OCB_STORE_WRITE, OCB_ENOTOURS, NULL);

	/* no tables but a user_version: some other program's marker */
	const char *p3 = tpath("foreign3.db");
	raw_exec(p3, "PRAGMA user_version = 7;");
	expect_refused(p3, OCB_STORE_WRITE, OCB_ENOTOURS, NULL);
}

Test(store, refuses_newer_version_unchanged)
{
	const char *p = tpath("newer.db");
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	struct ocb_machine m = machine("cccc3333");
	cr_assert_eq(ocb_store_machine(s, &m, NULL), OCB_OK);
	ocb_store_close(s);
	raw_exec(p, "PRAGMA user_version = 99;");
	char want[64];
	snprintf(want, sizeof want, "schema version 99 is newer than this ocbench (%d)",
		 OCB_SCHEMA_VERSION);
	expect_refused(p, OCB_STORE_WRITE, OCB_ENEWER, want);
	expect_refused(p, OCB_STORE_READ, OCB_ENEWER, want);
}

Test(store, read_missing_creates_nothing)
{
	const char *p = tpath("missing.db");
	struct ocb_store *s = NULL;
	int rc = ocb_store_open(p, OCB_STORE_READ, &s);
	cr_expect_eq(rc, OCB_ENOENT);
	cr_expect_null(s);
	cr_expect(strstr(ocb_lasterr(), p) != NULL);
	cr_expect(!exists(p));
	cr_expect(!exists(tpath("missing.db-wal")));
	cr_expect(!exists(tpath("missing.db-shm")));
}

Test(store, read_mode_never_writes)
{
	const char *p = tpath("ro.db");
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	struct ocb_machine m = machine("dddd4444");
	int64_t mid = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	int64_t rid = new_run(s, mid, "11111111-0000-4000-8000-000000000001", NULL);
	ocb_store_close(s);

	size_t n0, n1;
	unsigned char *before = slurp(p, &n0);
	s = open_ok(p, OCB_STORE_READ);
	cr_expect_eq(ocb_store_metric(s, rid, "w", 1, "loss", 1.0, "nats"), OCB_EINVAL);
	cr_expect_eq(ocb_store_machine(s, &m, &mid), OCB_EINVAL);
	char *msg = NULL;
	cr_expect_neq(sqlite3_exec(ocb_store_handle(s), "DELETE FROM run", NULL, NULL, &msg),
		      SQLITE_OK);
	sqlite3_free(msg);
	ocb_store_close(s);
	unsigned char *after = slurp(p, &n1);
	cr_expect(n0 == n1 && memcmp(before, after, n0) == 0, "READ changed the file");
	free(before);
	free(after);
}

Test(store, unwritable_path_is_eperm)
{
	const char *p = tpath("no/such/dir/x.db");
	struct ocb_store *s = NULL;
	int rc = ocb_store_open(p, OCB_STORE_WRITE, &s);
	cr_expect_eq(rc, OCB_EPERM, "got %d: %s", rc, ocb_lasterr());
	cr_expect(strstr(ocb_lasterr(), p) != NULL, "%s", ocb_lasterr());
	cr_expect(strchr(ocb_lasterr(), '\n') == NULL);
	if (geteuid() != 0) { /* root writes anywhere: only testable as a user */
		const char *d = tpath("locked");
		cr_assert_eq(mkdir(d, 0555), 0);
		char q[300];
		snprintf(q, sizeof q, "%s/x.db", d);
		rc = ocb_store_open(q, OCB_STORE_WRITE, &s);
		cr_expect_eq(rc, OCB_EPERM, "got %d: %s", rc, ocb_lasterr());
		chmod(d, 0755);
	}
}

Test(store, marks_dead_running_runs_aborted)
{
	const char *p = tpath("abort.db");
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	struct ocb_machine m = machine("eeee5555");
	int64_t mid = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	int64_t alive = new_run(s, mid, "22222222-0000-4000-8000-000000000001", "alive");
	int64_t dead = new_run(s, mid, "22222222-0000-4000-8000-000000000002", "dead");
	int64_t other = new_run(s, mid, "22222222-0000-4000-8000-000000000003", "otherhost");
	int64_t done = new_run(s, mid, "22222222-0000-4000-8000-000000000004", "done");
	cr_assert_eq(ocb_store_run_finish(s, done, "complete"), OCB_OK);
	cr_expect_eq(ocb_store_run_finish(s, done, "bogus"), OCB_EINVAL);
	cr_expect_eq(ocb_store_run_finish(s, 999999, "failed"), OCB_ENOENT);
	sqlite3 *db = ocb_store_handle(s);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM run WHERE status = 'running' AND pid > 0"
			       " AND hostname IS NOT NULL"),
		     3);

	/* a pid that surely is dead: a child that has exited and been reaped */
	pid_t child = fork();
	cr_assert_geq(child, 0);
	if (child == 0)
		_exit(0);
	cr_assert_eq(waitpid(child, NULL, 0), child);
	char sql[256];
	snprintf(sql, sizeof sql, "UPDATE run SET pid = %d WHERE id IN (%lld, %lld, %lld)",
		 (int)child, (long long)dead, (long long)other, (long long)done);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	snprintf(sql, sizeof sql, "UPDATE run SET hostname = 'elsewhere.invalid' WHERE id = %lld",
		 (long long)other);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	ocb_store_close(s);

	/* READ does not mark */
	s = open_ok(p, OCB_STORE_READ);
	snprintf(sql, sizeof sql, "SELECT status FROM run WHERE id = %lld", (long long)dead);
	char t[32];
	q_text(ocb_store_handle(s), sql, t, sizeof t);
	cr_expect_str_eq(t, "running");
	ocb_store_close(s);

	s = open_ok(p, OCB_STORE_WRITE);
	db = ocb_store_handle(s);
	const struct {
		int64_t id;
		const char *want;
	} cases[] = {{alive, "running"}, {dead, "aborted"}, {other, "running"}, {done, "complete"}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(sql, sizeof sql, "SELECT status FROM run WHERE id = %lld",
			 (long long)cases[i].id);
		q_text(db, sql, t, sizeof t);
		cr_expect_str_eq(t, cases[i].want, "run %lld", (long long)cases[i].id);
	}
	snprintf(sql, sizeof sql, "SELECT finished_at FROM run WHERE id = %lld", (long long)dead);
	cr_expect(!q_isnull(db, sql), "aborted run has finished_at");
	snprintf(sql, sizeof sql, "SELECT finished_at FROM run WHERE id = %lld", (long long)alive);
	cr_expect(q_isnull(db, sql));
	ocb_store_close(s);
}

static struct ocb_result make_result(void)
{
	struct ocb_result r = {0};
	snprintf(r.suite, sizeof r.suite, "baseline");
	snprintf(r.bench, sizeof r.bench, "gemv_q4_0");
	r.params_json = strdup("{\"k\":4096,\"n\":4096}");
	snprintf(r.variant, sizeof r.variant, "avx2");
	r.threads = 1;
	snprintf(r.unit, sizeof r.unit, "s");
	r.nsamples = 3;
	r.samples = malloc(3 * sizeof(double));
	r.samples[0] = 1.0e-3;
	r.samples[1] = 2.0e-3;
	r.samples[2] = 1.5e-3;
	r.st = (struct ocb_stats){.n = 3, .min = 1e-3, .median = 1.5e-3, .mean = 1.5e-3,
				  .stddev = 5e-4, .mad = 5e-4, .ci_low = 1e-3, .ci_high = 2e-3,
				  .outliers = 0};
	r.flops = 2.0 * 4096 * 4096;
	r.bytes = 4096.0 * 4096 * 0.5625;
	r.check_err = NAN;
	snprintf(r.bound, sizeof r.bound, "bw_dram");
	r.bound_frac = NAN;
	snprintf(r.status, sizeof r.status, "ok");
	r.ncounters = 2;
	r.counters = calloc(2, sizeof *r.counters);
	snprintf(r.counters[0].event, sizeof r.counters[0].event, "perf::TASK-CLOCK");
	r.counters[0].value = 1.25e6;
	r.counters[0].available = 1;
	r.counters[0].multiplex_ratio = 1.0;
	snprintf(r.counters[1].event, sizeof r.counters[1].event, "PAPI_TOT_CYC");
	r.counters[1].value = 777; /* must be ignored: not available */
	r.counters[1].available = 0;
	snprintf(r.counters[1].reason, sizeof r.counters[1].reason, "PAPI_ENOEVNT");
	r.counters[1].multiplex_ratio = NAN;
	return r;
}

Test(store, result_roundtrip_with_nulls)
{
	const char *p = tpath("res.db");
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	struct ocb_machine m = machine("ffff6666");
	int64_t mid = 0, rid = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	int64_t run = new_run(s, mid, "33333333-0000-4000-8000-000000000001", NULL);
	struct ocb_result r = make_result();
	cr_assert_eq(ocb_store_result(s, run, &r, &rid), OCB_OK, "%s", ocb_lasterr());
	cr_assert_gt(rid, 0);
	sqlite3 *db = ocb_store_handle(s);
	char sql[256];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM sample WHERE result_id = %lld",
		 (long long)rid);
	cr_expect_eq(q_int(db, sql), 3);
	snprintf(sql, sizeof sql,
		 "SELECT value FROM counter WHERE result_id = %lld AND event = 'PAPI_TOT_CYC'",
		 (long long)rid);
	cr_expect(q_isnull(db, sql), "unavailable counter stored as NULL, not 777");
	snprintf(sql, sizeof sql, "SELECT check_err FROM result WHERE id = %lld", (long long)rid);
	cr_expect(q_isnull(db, sql), "NaN check_err stored as NULL");
	snprintf(sql, sizeof sql, "SELECT bound_frac FROM result WHERE id = %lld", (long long)rid);
	cr_expect(q_isnull(db, sql));
	snprintf(sql, sizeof sql, "SELECT error FROM result WHERE id = %lld", (long long)rid);
	cr_expect(q_isnull(db, sql), "empty error stored as NULL");

	struct ocb_result back;
	cr_assert_eq(ocb_store_result_load(s, rid, &back), OCB_OK, "%s", ocb_lasterr());
	cr_expect_str_eq(back.bench, "gemv_q4_0");
	cr_expect_str_eq(back.params_json, r.params_json);
	cr_expect_str_eq(back.variant, "avx2");
	cr_expect_str_eq(back.bound, "bw_dram");
	cr_expect_eq(back.st.n, 3);
	cr_expect_eq(back.st.median, 1.5e-3);
	cr_expect_eq(back.flops, r.flops);
	cr_expect(isnan(back.check_err));
	cr_expect(isnan(back.bound_frac));
	cr_assert_eq(back.nsamples, 3);
	for (size_t i = 0; i < 3; i++)
		cr_expect_eq(back.samples[i], r.samples[i]);
	cr_assert_eq(back.ncounters, 2);
	/* ordered by event name: "PAPI_TOT_CYC" < "perf::TASK-CLOCK" */
	cr_expect_str_eq(back.counters[0].event, "PAPI_TOT_CYC");
	cr_expect_eq(back.counters[0].available, 0);
	cr_expect(isnan(back.counters[0].value));
	cr_expect_str_eq(back.counters[0].reason, "PAPI_ENOEVNT");
	cr_expect(isnan(back.counters[0].multiplex_ratio));
	cr_expect_eq(back.counters[1].available, 1);
	cr_expect_eq(back.counters[1].value, 1.25e6);
	ocb_result_release(&back);
	cr_expect_null(back.samples);
	cr_expect_eq(ocb_store_result_load(s, rid + 1000, &back), OCB_ENOENT);

	ocb_result_release(&r);
	ocb_store_close(s);
}

Test(store, result_is_atomic_in_and_out_of_group)
{
	const char *p = tpath("atomic.db");
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	struct ocb_machine m = machine("abab7777");
	int64_t mid = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	int64_t run = new_run(s, mid, "44444444-0000-4000-8000-000000000001", NULL);
	sqlite3 *db = ocb_store_handle(s);

	/* a duplicate counter event violates the counter key after the result and its
	 * samples were inserted: all of it must be rolled back */
	struct ocb_result bad = make_result();
	snprintf(bad.counters[1].event, sizeof bad.counters[1].event, "%s", bad.counters[0].event);
	cr_expect_eq(ocb_store_result(s, run, &bad, NULL), OCB_EDB);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM result"), 0);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM sample"), 0);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM counter"), 0);
	cr_expect(sqlite3_get_autocommit(db), "no transaction left open");

	/* NaN samples are refused up front */
	struct ocb_result nan_sample = make_result();
	nan_sample.samples[1] = NAN;
	cr_expect_eq(ocb_store_result(s, run, &nan_sample, NULL), OCB_EINVAL);

	/* inside a group: the bad result is undone, the group and good rows survive */
	struct ocb_result good = make_result();
	cr_assert_eq(ocb_store_begin(s), OCB_OK);
	cr_expect_eq(ocb_store_begin(s), OCB_EINVAL, "no nesting");
	for (long step = 0; step < 5; step++)
		cr_assert_eq(ocb_store_metric(s, run, "mlp", step, "train_loss", 2.0 / (step + 1),
					      "nats"),
			     OCB_OK);
	cr_assert_eq(ocb_store_metric(s, run, "mlp", -1, "test_accuracy", 0.87, NULL), OCB_OK);
	cr_expect_eq(ocb_store_result(s, run, &bad, NULL), OCB_EDB);
	cr_assert_eq(ocb_store_result(s, run, &good, NULL), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_store_commit(s), OCB_OK);
	cr_expect_eq(ocb_store_commit(s), OCB_EINVAL, "commit without begin");
	cr_expect_eq(q_int(db, "SELECT count(*) FROM result"), 1);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM sample"), 3);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM counter"), 2);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM metric"), 6);
	cr_expect(q_isnull(db, "SELECT step FROM metric WHERE key = 'test_accuracy'"));

	/* an uncommitted group is rolled back at close */
	cr_assert_eq(ocb_store_begin(s), OCB_OK);
	cr_assert_eq(ocb_store_metric(s, run, "mlp", 9, "train_loss", 0.1, "nats"), OCB_OK);
	ocb_store_close(s);
	s = open_ok(p, OCB_STORE_READ);
	cr_expect_eq(q_int(ocb_store_handle(s), "SELECT count(*) FROM metric"), 6);
	ocb_store_close(s);
	ocb_result_release(&bad);
	ocb_result_release(&nan_sample);
	ocb_result_release(&good);
}

static void add_ceiling(struct ocb_store *s, int64_t mid, const char *kind, int threads,
			double v)
{
	struct ocb_ceiling c = {0};
	snprintf(c.kind, sizeof c.kind, "%s", kind);
	c.threads = threads;
	c.value = v;
	snprintf(c.unit, sizeof c.unit, "%s", kind[0] == 'f' ? "GFLOP/s" : "GB/s");
	snprintf(c.method, sizeof c.method, "test");
	cr_assert_eq(ocb_store_ceiling(s, mid, 0, &c), OCB_OK, "%s", ocb_lasterr());
}

Test(store, ceilings_get_newest)
{
	const char *p = tpath("ceil.db");
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	struct ocb_machine m = machine("cdcd8888"), m2 = machine("cdcd9999");
	int64_t mid = 0, mid2 = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	cr_assert_eq(ocb_store_machine(s, &m2, &mid2), OCB_OK);
	add_ceiling(s, mid, "bw_l1", 1, 10.0);
	/* a later row with an older stamp (as merge/import could write): not the newest */
	char sql[256];
	snprintf(sql, sizeof sql,
		 "INSERT INTO ceiling (machine_id, kind, threads, value, unit, created_at)"
		 " VALUES (%lld, 'bw_l1', 1, 5.0, 'GB/s', '2000-01-01T00:00:00Z')",
		 (long long)mid);
	cr_assert_eq(sqlite3_exec(ocb_store_handle(s), sql, NULL, NULL, NULL), SQLITE_OK);
	add_ceiling(s, mid, "bw_l1", 1, 20.0);
	add_ceiling(s, mid, "bw_l1", 2, 30.0);
	add_ceiling(s, mid, "flops_fp32", 1, 100.0);
	add_ceiling(s, mid2, "flops_fp32", 1, 1.0);

	struct ocb_ceiling *c = NULL;
	size_t n = 0;
	cr_assert_eq(ocb_store_ceilings_get(s, mid, &c, &n), OCB_OK);
	cr_assert_eq(n, 3);
	cr_expect_str_eq(c[0].kind, "bw_l1");
	cr_expect_eq(c[0].threads, 1);
	cr_expect_eq(c[0].value, 20.0);
	cr_expect_str_eq(c[0].unit, "GB/s");
	cr_expect_eq(c[1].threads, 2);
	cr_expect_eq(c[1].value, 30.0);
	cr_expect_str_eq(c[2].kind, "flops_fp32");
	cr_expect_eq(c[2].value, 100.0);
	free(c);

	cr_assert_eq(ocb_store_ceilings_get(s, mid2 + 100, &c, &n), OCB_OK);
	cr_expect_eq(n, 0);
	free(c);
	ocb_store_close(s);
}

/* trials, spread and suspect go in and come back; NULL trials (an old row) reads 0 */
Test(store, ceiling_trials_spread_suspect_round_trip)
{
	const char *p = tpath("ceilrt.db");
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	struct ocb_machine m = machine("cdcd7777");
	int64_t mid = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	struct ocb_ceiling a = {.kind = "ops_int8", .threads = 2, .value = 448.6, .unit = "GOP/s",
				.method = "m", .trials = 5, .spread = 0.037};
	struct ocb_ceiling b = {.kind = "bw_l2_triad", .threads = 2, .value = 7.7, .unit = "GB/s",
				.trials = 3, .spread = 0.5, .suspect = "2 threads below 1 thread"};
	struct ocb_ceiling old = {.kind = "bw_l1", .threads = 1, .value = 100, .unit = "GB/s"};
	cr_assert_eq(ocb_store_ceiling(s, mid, 0, &a), OCB_OK);
	cr_assert_eq(ocb_store_ceiling(s, mid, 0, &b), OCB_OK);
	cr_assert_eq(ocb_store_ceiling(s, mid, 0, &old), OCB_OK);
	sqlite3 *h = ocb_store_handle(s);
	cr_expect_eq(q_int(h, "SELECT count(*) FROM ceiling WHERE trials IS NULL AND spread IS NULL"
			      " AND suspect IS NULL"), 1); /* the old-style row */
	cr_expect_eq(q_int(h, "SELECT count(*) FROM ceiling WHERE suspect IS NOT NULL"), 1);
	struct ocb_ceiling *c = NULL;
	size_t n = 0;
	cr_assert_eq(ocb_store_ceilings_get(s, mid, &c, &n), OCB_OK);
	cr_assert_eq(n, 3);
	/* ORDER BY kind, threads: bw_l1, bw_l2_triad, ops_int8 */
	cr_expect_eq(c[0].trials, 0);
	cr_expect(isnan(c[0].spread));
	cr_expect_str_empty(c[0].suspect);
	cr_expect_eq(c[1].trials, 3);
	cr_expect_float_eq(c[1].spread, 0.5, 1e-12);
	cr_expect_str_eq(c[1].suspect, "2 threads below 1 thread");
	cr_expect_str_eq(c[2].kind, "ops_int8");
	cr_expect_str_eq(c[2].unit, "GOP/s");
	cr_expect_eq(c[2].trials, 5);
	cr_expect_float_eq(c[2].spread, 0.037, 1e-12);
	cr_expect_str_empty(c[2].suspect);
	free(c);
	ocb_store_close(s);
}

/* Readers prefer the newest value that passed the rules; --verify sees the (kind,
 * threads) whose newest row is flagged and replaces those rows. */
Test(store, ceilings_prefer_unflagged_and_flagged_are_replaced)
{
	const char *p = tpath("ceilflag.db");
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	struct ocb_machine m = machine("cdcd6666");
	int64_t mid = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	struct ocb_ceiling good = {.kind = "flops_fp32", .threads = 2, .value = 201.9,
				   .unit = "GFLOP/s", .trials = 5, .spread = 0.02};
	struct ocb_ceiling bad = good;
	bad.value = 86.2;
	snprintf(bad.suspect, sizeof bad.suspect, "2 threads below 1 thread");
	struct ocb_ceiling only_bad = bad;
	snprintf(only_bad.kind, sizeof only_bad.kind, "bw_l2_triad");
	cr_assert_eq(ocb_store_ceiling(s, mid, 0, &good), OCB_OK);
	cr_assert_eq(ocb_store_ceiling(s, mid, 0, &bad), OCB_OK); /* newer, but flagged */
	cr_assert_eq(ocb_store_ceiling(s, mid, 0, &only_bad), OCB_OK);

	struct ocb_ceiling *c = NULL, *f = NULL;
	size_t n = 0, nf = 0;
	cr_assert_eq(ocb_store_ceilings_get(s, mid, &c, &n), OCB_OK);
	cr_assert_eq(n, 2);
	cr_expect_str_eq(c[0].kind, "bw_l2_triad"); /* no good one: the flagged one, flagged */
	cr_expect_str_neq(c[0].suspect, "");
	cr_expect_str_eq(c[1].kind, "flops_fp32");
	cr_expect_eq(c[1].value, 201.9); /* the older good value wins over the newer flagged */
	cr_expect_str_empty(c[1].suspect);
	free(c);
	cr_assert_eq(ocb_store_ceilings_flagged(s, mid, &f, &nf), OCB_OK);
	cr_assert_eq(nf, 2); /* newest rows of both are flagged */
	free(f);

	/* replace the flagged fp32 row with a re-measured good one */
	struct ocb_ceiling again = good;
	again.value = 199.0;
	cr_assert_eq(ocb_store_begin(s), OCB_OK);
	cr_assert_eq(ocb_store_ceiling_drop_flagged(s, mid, "flops_fp32", 2), OCB_OK);
	cr_assert_eq(ocb_store_ceiling(s, mid, 0, &again), OCB_OK);
	cr_assert_eq(ocb_store_commit(s), OCB_OK);
	sqlite3 *h = ocb_store_handle(s);
	cr_expect_eq(q_int(h, "SELECT count(*) FROM ceiling WHERE kind = 'flops_fp32'"), 2);
	cr_expect_eq(q_int(h, "SELECT count(*) FROM ceiling WHERE kind = 'flops_fp32' AND"
			      " suspect IS NOT NULL"), 0);
	cr_assert_eq(ocb_store_ceilings_flagged(s, mid, &f, &nf), OCB_OK);
	cr_assert_eq(nf, 1);
	cr_expect_str_eq(f[0].kind, "bw_l2_triad");
	free(f);
	cr_assert_eq(ocb_store_ceilings_get(s, mid, &c, &n), OCB_OK);
	cr_expect_eq(c[1].value, 199.0);
	free(c);
	ocb_store_close(s);
}

Test(store, run_resolve)
{
	const char *p = tpath("resolve.db");
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	struct ocb_machine m = machine("efef0000");
	int64_t mid = 0, got = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	cr_expect_eq(ocb_store_run_resolve(s, "latest", &got), OCB_ENOENT);
	int64_t a = new_run(s, mid, "abcd1234-0000-4000-8000-000000000001", "baseline-a");
	int64_t b = new_run(s, mid, "abcd5678-0000-4000-8000-000000000002", "nightly");
	int64_t c = new_run(s, mid, "ffee0000-0000-4000-8000-000000000003", "nightly");
	ocb_store_close(s);

	s = open_ok(p, OCB_STORE_READ);
	cr_assert_eq(ocb_store_run_resolve(s, "latest", &got), OCB_OK);
	cr_expect_eq(got, c);
	char spec[32];
	snprintf(spec, sizeof spec, "%lld", (long long)a);
	cr_assert_eq(ocb_store_run_resolve(s, spec, &got), OCB_OK);
	cr_expect_eq(got, a);
	cr_assert_eq(ocb_store_run_resolve(s, "abcd5", &got), OCB_OK);
	cr_expect_eq(got, b);
	cr_assert_eq(ocb_store_run_resolve(s, "FFEE0000", &got), OCB_OK);
	cr_expect_eq(got, c);
	cr_expect_eq(ocb_store_run_resolve(s, "abcd", &got), OCB_EINVAL, "ambiguous prefix");
	cr_assert_eq(ocb_store_run_resolve(s, "baseline-a", &got), OCB_OK);
	cr_expect_eq(got, a);
	cr_assert_eq(ocb_store_run_resolve(s, "nightly", &got), OCB_OK);
	cr_expect_eq(got, c, "newest run with the label");
	cr_expect_eq(ocb_store_run_resolve(s, "nosuchrun", &got), OCB_ENOENT);
	cr_expect_eq(ocb_store_run_resolve(s, "987654", &got), OCB_ENOENT);
	ocb_store_close(s);
}

/* ---- the read-only commands over a small store ------------------------------------ */

#include <cJSON.h>

#include "../cli/cli.h"

/* Runs cmd in-process with stdout captured into a malloc'd string *out. */
static int capture(ocb_cmd_fn fn, const char *db, int json, char **out, int argc, ...)
{
	char *argv[16] = {0};
	va_list ap;
	va_start(ap, argc);
	for (int i = 0; i < argc && i < 15; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	struct ocb_global g = {.db_path = db, .json = json, .quiet = 1, .argv0 = "ocbench"};
	char cap[256];
	snprintf(cap, sizeof cap, "%s/stdout.txt", dir);
	fflush(stdout);
	int saved = dup(1);
	FILE *f = fopen(cap, "w");
	cr_assert_not_null(f);
	dup2(fileno(f), 1);
	int rc = fn(&g, argc, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	fclose(f);
	size_t n;
	*out = (char *)slurp(cap, &n);
	(*out)[n] = '\0';
	return rc;
}

static void fill_demo(const char *p)
{
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	struct ocb_machine m = machine("0123456789abcdef");
	int64_t mid = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	int64_t r1 = new_run(s, mid, "aaaa0000-0000-4000-8000-000000000001", "first");
	struct ocb_result r = make_result();
	cr_assert_eq(ocb_store_result(s, r1, &r, NULL), OCB_OK);
	cr_assert_eq(ocb_store_metric(s, r1, "mlp", 0, "train_loss", 2.0, "nats"), OCB_OK);
	cr_assert_eq(ocb_store_metric(s, r1, "mlp", 1, "train_loss", 1.5, "nats"), OCB_OK);
	cr_assert_eq(ocb_store_run_finish(s, r1, "complete"), OCB_OK);
	struct ocb_run_info ri = {.uuid = "bbbb0000-0000-4000-8000-000000000002",
				  .machine_id = mid, .suite = "train", .seed = 1};
	cr_assert_eq(ocb_store_run_begin(s, &ri, NULL), OCB_OK);
	ocb_result_release(&r);
	ocb_store_close(s);
}

Test(store, cmd_runs_lists_and_filters)
{
	const char *p = tpath("cli.db");
	fill_demo(p);
	char *out = NULL;
	cr_assert_eq(capture(cmd_runs, p, 1, &out, 1, "runs"), 0);
	cJSON *a = cJSON_Parse(out);
	cr_assert_not_null(a, "runs --json is JSON: %s", out);
	cr_assert_eq(cJSON_GetArraySize(a), 2);
	cJSON *newest = cJSON_GetArrayItem(a, 0);
	cr_expect_str_eq(cJSON_GetObjectItem(newest, "suite")->valuestring, "train");
	cJSON *first = cJSON_GetArrayItem(a, 1);
	cr_expect_eq(cJSON_GetObjectItem(first, "results")->valuedouble, 1.0);
	cr_expect_str_eq(cJSON_GetObjectItem(first, "status")->valuestring, "complete");
	cJSON_Delete(a);
	free(out);

	cr_assert_eq(capture(cmd_runs, p, 1, &out, 3, "runs", "--suite", "train"), 0);
	a = cJSON_Parse(out);
	cr_assert_not_null(a);
	cr_expect_eq(cJSON_GetArraySize(a), 1);
	cJSON_Delete(a);
	free(out);

	cr_assert_eq(capture(cmd_runs, p, 0, &out, 5, "runs", "--machine", "01234", "--limit", "1"),
		     0);
	cr_expect(strstr(out, "train") && !strstr(out, "first"), "%s", out);
	free(out);

	cr_expect_eq(capture(cmd_runs, p, 0, &out, 2, "runs", "--bogus"), 2);
	free(out);
	cr_expect_eq(capture(cmd_runs, p, 0, &out, 2, "runs", "extra"), 2);
	free(out);
	cr_expect_eq(capture(cmd_runs, tpath("nope.db"), 0, &out, 1, "runs"), 2);
	free(out);
	cr_expect(!exists(tpath("nope.db")));
}

Test(store, cmd_show_and_machines)
{
	const char *p = tpath("cli2.db");
	fill_demo(p);
	char *out = NULL;
	cr_assert_eq(capture(cmd_show, p, 0, &out, 2, "show", "first"), 0);
	cr_expect(strstr(out, "gemv_q4_0") != NULL, "%s", out);
	cr_expect(strstr(out, "{\"k\":4096,\"n\":4096}") != NULL, "%s", out);
	cr_expect(strstr(out, "train_loss") != NULL && strstr(out, "1.5") != NULL, "%s", out);
	free(out);

	cr_assert_eq(capture(cmd_show, p, 1, &out, 2, "show", "aaaa"), 0);
	cJSON *o = cJSON_Parse(out);
	cr_assert_not_null(o, "%s", out);
	cJSON *res = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "results"), 0);
	cr_assert_not_null(res);
	/* GFLOP/s = flops / median / 1e9 = 2*4096^2 / 1.5e-3 / 1e9 */
	cr_expect_float_eq(cJSON_GetObjectItem(res, "gflops")->valuedouble,
			   2.0 * 4096 * 4096 / 1.5e-3 / 1e9, 1e-9);
	cr_expect(cJSON_IsNull(cJSON_GetObjectItem(res, "check_err")));
	cr_expect_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "params_json"), "k")->valuedouble,
		     4096.0);
	cJSON *met = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "metrics"), 0);
	cr_assert_not_null(met);
	cr_expect_eq(cJSON_GetObjectItem(met, "value")->valuedouble, 1.5, "last value");
	cr_expect_eq(cJSON_GetObjectItem(met, "points")->valuedouble, 2.0);
	cJSON_Delete(o);
	free(out);

	cr_expect_eq(capture(cmd_show, p, 0, &out, 1, "show"), 2);
	free(out);
	cr_expect_eq(capture(cmd_show, p, 0, &out, 2, "show", "nosuchlabel"), 2);
	free(out);

	cr_assert_eq(capture(cmd_machines, p, 0, &out, 1, "machines"), 0);
	cr_expect(strstr(out, "0123456789ab") != NULL && strstr(out, "testhost") != NULL, "%s",
		  out);
	free(out);
	cr_expect_eq(capture(cmd_machines, p, 0, &out, 2, "machines", "x"), 2);
	free(out);
}

/* A file written by the version-1 schema (tests/fixtures/schema_v1.sql, as released) is
 * migrated forward on a write open: its rows stay, the version-2 columns appear NULL. */
Test(store, migrates_v1_forward_keeping_rows)
{
	const char *p = tpath("v1.db");
	size_t len;
	unsigned char *v1 = slurp("tests/fixtures/schema_v1.sql", &len);
	sqlite3 *raw = NULL;
	cr_assert_eq(sqlite3_open(p, &raw), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(raw, (char *)v1, NULL, NULL, NULL), SQLITE_OK, "%s",
		     sqlite3_errmsg(raw));
	free(v1);
	cr_assert_eq(sqlite3_exec(raw,
				  "INSERT INTO ocbench_meta VALUES ('app','ocbench');"
				  "INSERT INTO machine (id, fingerprint, created_at) VALUES (1,'fp','t');"
				  "INSERT INTO run (id, uuid, machine_id, suite, status, started_at)"
				  " VALUES (1,'u1',1,'baseline','complete','t');"
				  "INSERT INTO ceiling (machine_id, run_id, kind, threads, value, unit,"
				  " created_at) VALUES (1,1,'bw_dram',1,12.5,'GB/s','t');"
				  "PRAGMA user_version = 1;",
				  NULL, NULL, NULL),
		     SQLITE_OK, "%s", sqlite3_errmsg(raw));
	sqlite3_close(raw);

	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	sqlite3 *db = ocb_store_handle(s);
	cr_expect_eq(q_int(db, "PRAGMA user_version"), OCB_SCHEMA_VERSION);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM run WHERE uuid = 'u1' AND boot_id IS NULL"), 1);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM ceiling WHERE value = 12.5 AND suspect IS NULL"
			       " AND trials IS NULL AND spread IS NULL"), 1);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM result WHERE suspect IS NULL"), 0);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM sample WHERE cpu_s IS NOT NULL"), 0); /* v3 */
	ocb_store_close(s);
}

/* Per-sample CPU times go in and come back with their samples (schema 3). */
Test(store, cpu_samples_roundtrip)
{
	const char *p = tpath("cpu.db");
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	struct ocb_machine m = machine("cccc7777");
	int64_t mid = 0, rid = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	int64_t run = new_run(s, mid, "cccc0000-0000-4000-8000-000000000001", NULL);
	struct ocb_result r = make_result(), back;
	r.cpu_samples = malloc(3 * sizeof(double));
	for (int i = 0; i < 3; i++)
		r.cpu_samples[i] = 2 * r.samples[i];
	cr_assert_eq(ocb_store_result(s, run, &r, &rid), OCB_OK);
	cr_assert_eq(ocb_store_result_load(s, rid, &back), OCB_OK, "%s", ocb_lasterr());
	cr_assert_not_null(back.cpu_samples);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(back.cpu_samples[i], 2 * r.samples[i]);
	ocb_result_release(&back);
	free(r.cpu_samples); /* without CPU times: none come back */
	r.cpu_samples = NULL;
	cr_assert_eq(ocb_store_result(s, run, &r, &rid), OCB_OK);
	cr_assert_eq(ocb_store_result_load(s, rid, &back), OCB_OK);
	cr_expect_null(back.cpu_samples);
	cr_expect_eq(back.nsamples, 3);
	ocb_result_release(&back);
	ocb_result_release(&r);
	ocb_store_close(s);
}

/* show prints "-" for a rate that has no work model behind it (flops unknown, bytes not
 * modelled = 0), never 0.00; a small real rate keeps its digits. */
Test(store, show_prints_dash_for_missing_values)
{
	const char *p = tpath("dash.db");
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	struct ocb_machine m = machine("abcd0000");
	int64_t mid = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	int64_t run = new_run(s, mid, "dddd0000-0000-4000-8000-000000000001", "dash");
	struct ocb_result r = make_result();
	snprintf(r.bench, sizeof r.bench, "train_mlp");
	r.flops = NAN;
	r.bytes = 0; /* a trainer: bytes not modelled */
	cr_assert_eq(ocb_store_result(s, run, &r, NULL), OCB_OK);
	snprintf(r.bench, sizeof r.bench, "tiny");
	r.flops = 3e3; /* 3e3 / 1.5e-3 s = 2 MFLOP/s = 0.002 GFLOP/s */
	r.bytes = NAN;
	cr_assert_eq(ocb_store_result(s, run, &r, NULL), OCB_OK);
	ocb_result_release(&r);
	ocb_store_close(s);
	char *out = NULL;
	cr_assert_eq(capture(cmd_show, p, 0, &out, 2, "show", "dash"), 0);
	const char *line = strstr(out, "train_mlp");
	cr_assert_not_null(line, "%s", out);
	char row[512];
	snprintf(row, sizeof row, "%.*s", (int)strcspn(line, "\n"), line);
	cr_expect_not_null(strstr(row, " -  "), "no '-' for the missing rates: %s", row);
	cr_expect_null(strstr(row, "0.00"), "%s", row);
	cr_expect_not_null(strstr(out, "0.002"), "%s", out);
	free(out);
}

/* A version-3 file (v4 without table workload_ident) is migrated on a write open: its
 * metric rows stay, and identities can then be stored, one per (run, workload). */
Test(store, migrates_v3_to_v4_workload_ident)
{
	const char *p = tpath("v3.db");
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	struct ocb_machine m = machine("fp3");
	int64_t mid = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	int64_t run = new_run(s, mid, "u3", NULL);
	cr_assert_eq(ocb_store_metric(s, run, "quant_acc:mlp:rtn:3:128", -1, "test_accuracy", 0.8,
				      "ratio"), OCB_OK);
	ocb_store_close(s);
	raw_exec(p, "DROP TABLE workload_ident; PRAGMA user_version = 3;");

	s = open_ok(p, OCB_STORE_WRITE);
	sqlite3 *db = ocb_store_handle(s);
	cr_expect_eq(q_int(db, "PRAGMA user_version"), 4);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM metric WHERE value = 0.8"), 1);
	cr_expect_eq(q_int(db, "SELECT count(*) FROM workload_ident"), 0);
	cr_expect_eq(ocb_store_workload_ident(s, run, "w", "{\"kind\":\"quant_acc\"}"), OCB_OK,
		     "%s", ocb_lasterr());
	cr_expect_eq(ocb_store_workload_ident(s, run, "w", "{\"kind\":\"quant_acc\",\"bits\":\"3\"}"),
		     OCB_OK, "%s", ocb_lasterr());
	cr_expect_eq(q_int(db, "SELECT count(*) FROM workload_ident WHERE workload = 'w'"
			       " AND json_extract(ident, '$.bits') = '3'"), 1);
	cr_expect_eq(ocb_store_workload_ident(s, run, "w", ""), OCB_EINVAL);
	ocb_store_close(s);
}

/* result.suspect: "" is stored NULL, a reason comes back whole; `show` prints an ok
 * result with a reason as "suspect: <why>" and --json carries the column. */
Test(store, result_suspect_roundtrip_and_show)
{
	const char *p = tpath("suspect.db");
	struct ocb_store *s = open_ok(p, OCB_STORE_WRITE);
	struct ocb_machine m = machine("ffff7777");
	int64_t mid = 0, rid_plain = 0, rid_flag = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	int64_t run = new_run(s, mid, "44444444-0000-4000-8000-000000000001", "sus");
	struct ocb_result r = make_result();
	cr_assert_eq(ocb_store_result(s, run, &r, &rid_plain), OCB_OK, "%s", ocb_lasterr());
	const char *why = "2 threads slower than 1 (7.99 ms vs 1.05 ms, x7.61); CI +-229.8% > 3x "
			  "the 2% target";
	snprintf(r.suspect, sizeof r.suspect, "%s", why);
	r.threads = 2;
	cr_assert_eq(ocb_store_result(s, run, &r, &rid_flag), OCB_OK, "%s", ocb_lasterr());
	sqlite3 *db = ocb_store_handle(s);
	char sql[128];
	snprintf(sql, sizeof sql, "SELECT suspect FROM result WHERE id = %lld", (long long)rid_plain);
	cr_expect(q_isnull(db, sql), "no reason: NULL");
	struct ocb_result back;
	cr_assert_eq(ocb_store_result_load(s, rid_flag, &back), OCB_OK, "%s", ocb_lasterr());
	cr_expect_str_eq(back.suspect, why);
	cr_expect_str_eq(back.status, "ok");
	ocb_result_release(&back);
	cr_assert_eq(ocb_store_result_load(s, rid_plain, &back), OCB_OK);
	cr_expect_str_eq(back.suspect, "");
	ocb_result_release(&back);
	cr_assert_eq(ocb_store_run_finish(s, run, "complete"), OCB_OK);
	ocb_result_release(&r);
	ocb_store_close(s);

	char *out = NULL;
	cr_assert_eq(capture(cmd_show, p, 0, &out, 2, "show", "sus"), 0);
	cr_expect(strstr(out, "suspect: 2 threads slower than 1") != NULL, "%s", out);
	free(out);
	cr_assert_eq(capture(cmd_show, p, 1, &out, 2, "show", "sus"), 0);
	cJSON *o = cJSON_Parse(out);
	cr_assert_not_null(o, "%s", out);
	cJSON *res = cJSON_GetObjectItem(o, "results");
	cr_expect(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(res, 0), "suspect")));
	cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(res, 1), "suspect")->valuestring,
			 why);
	cJSON_Delete(o);
	free(out);
}
