/* roof_beaten: which ceiling a result above its roof beat (ocb_roof_binding), the tally,
 * and the flagged copy stored at the end of a run. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/ceilings_store.h"
#include "../collect/roof_beaten.h"
#include "../common/ocb_error.h"
#include "../common/ocb_roofline.h"
#include "../db/store.h"
#include "cli_util.h"

static struct ocb_ceiling ceil_of(const char *kind, int threads, double v, const char *unit)
{
	struct ocb_ceiling c;
	memset(&c, 0, sizeof c);
	snprintf(c.kind, sizeof c.kind, "%s", kind);
	snprintf(c.unit, sizeof c.unit, "%s", unit);
	c.threads = threads, c.value = v, c.trials = 5, c.spread = 0.03;
	return c;
}

/* A result of `threads` threads bound by `bound`, with ops and bytes per repetition and
 * the fraction of its roof the harness found. */
static struct ocb_result res(const char *bound, int threads, double ops, double bytes, double frac)
{
	struct ocb_result r;
	memset(&r, 0, sizeof r);
	snprintf(r.bound, sizeof r.bound, "%s", bound);
	snprintf(r.status, sizeof r.status, "ok");
	r.threads = threads, r.flops = ops, r.bytes = bytes, r.bound_frac = frac;
	return r;
}

/* Stores a machine of that fingerprint and its ceilings st[0..n) in s; its id. */
static int64_t machine_with_ceilings(struct ocb_store *s, const char *fingerprint,
				     const struct ocb_ceiling *st, size_t n)
{
	struct ocb_machine m;
	memset(&m, 0, sizeof m);
	snprintf(m.fingerprint, sizeof m.fingerprint, "%s", fingerprint);
	m.threads = 2;
	int64_t mid = 0;
	cr_assert_eq(ocb_store_machine(s, &m, &mid), OCB_OK);
	cr_assert_eq(ocb_ceilings_store(s, mid, 0, st, n, 0), OCB_OK, "%s", ocb_lasterr());
	return mid;
}

/* A new database `name` in a fresh folder (dir), open for writing; its path into path. */
static struct ocb_store *fresh_store(char *dir, size_t dlen, const char *name, char *path,
				     size_t plen)
{
	struct ocb_store *s = NULL;
	cr_assert_not_null(cli_tmpdir(dir, dlen));
	snprintf(path, plen, "%s/%s", dir, name);
	cr_assert_eq(ocb_store_open(path, OCB_STORE_WRITE, &s), OCB_OK, "%s", ocb_lasterr());
	return s;
}

Test(roof_beaten, binding_ceiling_of_a_roofline)
{
	const struct ocb_roof_ceil c[] = {
		{"bw_dram", 1, 30}, {"bw_dram", 2, 40}, {"ops_int8", 1, 500}, {"ops_int8", 2, 1000},
	};
	double att;
	/* 2 ops per byte: memory 80 GOP/s < compute 1000: the bandwidth binds */
	const struct ocb_roof_ceil *b = ocb_roof_binding(c, 4, "roofline:ops_int8,bw_dram", 2, 2e9, 1e9, &att);
	cr_assert(b == &c[1]);
	cr_assert_float_eq(att, 80.0, 1e-9);
	cr_assert_float_eq(ocb_roof_attainable(c, 4, "roofline:ops_int8,bw_dram", 2, 2e9, 1e9), att, 1e-12);
	/* 100 ops per byte: 3000 GOP/s of memory > 500 of compute at 1 thread */
	b = ocb_roof_binding(c, 4, "roofline:ops_int8,bw_dram", 1, 100e9, 1e9, &att);
	cr_assert(b == &c[2]);
	cr_assert_float_eq(att, 500.0, 1e-9);
	/* a lone ceiling; thread matching: 3 threads take the largest count below */
	cr_assert(ocb_roof_binding(c, 4, "bw_dram", 3, 0, 1e9, &att) == &c[1]);
	/* a missing roof: none, and no rate */
	cr_assert_null(ocb_roof_binding(c, 4, "roofline:flops_fp32,bw_dram", 1, 1e9, 1e9, &att));
	cr_assert(isnan(att));
}

Test(roof_beaten, tally_and_flagged_copy)
{
	char dir[64], path[96];
	struct ocb_store *s = fresh_store(dir, sizeof dir, "b.db", path, sizeof path);
	struct ocb_ceiling st[] = {
		ceil_of("bw_dram", 1, 30, "GB/s"), ceil_of("bw_dram", 2, 40, "GB/s"),
		ceil_of("ops_int8", 2, 1000, "GOP/s"),
	};
	int64_t mid = machine_with_ceilings(s, "beaten01", st, 3);
	struct ocb_ceiling *cur = NULL;
	size_t ncur = 0;
	cr_assert_eq(ocb_store_ceilings_get(s, mid, &cur, &ncur), OCB_OK);

	struct ocb_beaten b = {.n = 0};
	struct ocb_result rs[] = {
		res("roofline:ops_int8,bw_dram", 2, 2e9, 1e9, 2.5), /* beat bw_dram/2 */
		res("bw_dram", 2, 0, 1e9, 1.2),                     /* beat bw_dram/2 */
		res("bw_dram", 1, 0, 1e9, 1.02),                    /* within 105%: not counted */
		res("ops_int8", 1, 1e9, 0, 1.3),                    /* ops_int8 at 2 (next count up) */
	};
	for (size_t i = 0; i < sizeof rs / sizeof *rs; i++)
		ocb_beaten_note(&b, cur, ncur, &rs[i]);
	struct ocb_result failed = res("bw_dram", 1, 0, 1e9, 3.0);
	snprintf(failed.status, sizeof failed.status, "failed");
	ocb_beaten_note(&b, cur, ncur, &failed); /* not ok: not counted */
	cr_assert_eq(b.n, 2);
	cr_assert_str_eq(b.roof[0].kind, "bw_dram");
	cr_assert_eq(b.roof[0].threads, 2);
	cr_assert_eq(b.roof[0].n, 2);
	cr_assert_float_eq(b.roof[0].max_frac, 2.5, 1e-12);
	cr_assert_str_eq(b.roof[1].kind, "ops_int8");
	cr_assert_eq(b.roof[1].threads, 2);

	int nflag = -1;
	cr_assert_eq(ocb_beaten_flag(&b, s, mid, 0, cur, ncur, &nflag), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(nflag, 2);
	struct ocb_ceiling *fl = NULL, *now = NULL;
	size_t nfl = 0, nnow = 0;
	cr_assert_eq(ocb_store_ceilings_flagged(s, mid, &fl, &nfl), OCB_OK);
	cr_assert_eq(nfl, 2);
	for (size_t i = 0; i < nfl; i++) {
		cr_assert(strstr(fl[i].suspect, "ran above it"), "%s", fl[i].suspect);
		if (!strcmp(fl[i].kind, "bw_dram")) { /* the same value, flagged */
			cr_assert_float_eq(fl[i].value, 40.0, 1e-12);
			cr_assert(strstr(fl[i].suspect, "2 result(s)") && strstr(fl[i].suspect, "250%"),
				  "%s", fl[i].suspect);
		}
	}
	/* readers still get the unflagged values until a re-measure (a --quick run keeps its
	 * roofs); flagging again adds nothing */
	cr_assert_eq(ocb_store_ceilings_get(s, mid, &now, &nnow), OCB_OK);
	cr_assert_eq(nnow, 3);
	for (size_t i = 0; i < nnow; i++)
		cr_assert_str_empty(now[i].suspect, "%s/%d", now[i].kind, now[i].threads);
	cr_assert_eq(ocb_beaten_flag(&b, s, mid, 0, now, nnow, &nflag), OCB_OK);
	cr_assert_eq(nflag, 0);
	free(cur), free(fl), free(now);
	ocb_store_close(s);
}

/* A re-measured value above the one in use replaces it (stored, in place of its flagged
 * copy, and in the caller's set), and the tally of results already stored shrinks to
 * what still beats the new value; a value not above it, or flagged, changes nothing. */
Test(roof_beaten, raise_replaces_only_higher_clean_values)
{
	char dir[64], path[96];
	struct ocb_store *s = fresh_store(dir, sizeof dir, "r.db", path, sizeof path);
	struct ocb_ceiling st[] = {
		ceil_of("bw_dram", 1, 30, "GB/s"), ceil_of("bw_dram", 2, 40, "GB/s"),
		ceil_of("bw_l3", 2, 100, "GB/s"), ceil_of("ops_int8", 2, 1000, "GOP/s"),
	};
	int64_t mid = machine_with_ceilings(s, "raise01", st, 4);
	struct ocb_ceiling *cur = NULL;
	size_t ncur = 0;
	cr_assert_eq(ocb_store_ceilings_get(s, mid, &cur, &ncur), OCB_OK);
	/* stored results: one at 130% of bw_dram/2 and one at 200% of bw_l3/2, one at 120% of
	 * ops_int8/2; the first two flagged their ceilings */
	struct ocb_beaten stored = {.n = 0};
	struct ocb_result rs[] = {
		res("bw_dram", 2, 0, 1e9, 1.3), res("bw_l3", 2, 0, 1e9, 2.0),
		res("ops_int8", 2, 1e9, 0, 1.2),
	};
	for (size_t i = 0; i < 3; i++)
		ocb_beaten_note(&stored, cur, ncur, &rs[i]);
	cr_assert_eq(stored.n, 3);
	struct ocb_beaten two = stored;
	two.n = 2;
	cr_assert_eq(ocb_beaten_flag(&two, s, mid, 0, cur, ncur, NULL), OCB_OK, "%s", ocb_lasterr());

	struct ocb_ceiling fresh[] = {
		ceil_of("bw_dram", 2, 60, "GB/s"),   /* raised: 130% of 40 = 87% of 60 */
		ceil_of("bw_l3", 2, 125, "GB/s"),    /* raised: 200% of 100 = 160% of 125 */
		ceil_of("bw_dram", 1, 25, "GB/s"),   /* below the 30 in use: kept */
		ceil_of("ops_int8", 2, 1500, "GOP/s"), /* higher but flagged: kept */
		ceil_of("bw_l2", 2, 300, "GB/s"),    /* not in use at all: ignored */
	};
	snprintf(fresh[3].suspect, sizeof fresh[3].suspect, "spread 40%% > 10%%");
	int nraised = -1;
	cr_assert_eq(ocb_beaten_raise(fresh, 5, &stored, s, mid, 0, cur, ncur, &nraised), OCB_OK,
		     "%s", ocb_lasterr());
	cr_assert_eq(nraised, 2);
	/* the caller's set */
	cr_assert_float_eq(ocb_ceiling_find(cur, ncur, "bw_dram", 2)->value, 60.0, 1e-12);
	cr_assert_float_eq(ocb_ceiling_find(cur, ncur, "bw_l3", 2)->value, 125.0, 1e-12);
	cr_assert_float_eq(ocb_ceiling_find(cur, ncur, "bw_dram", 1)->value, 30.0, 1e-12);
	cr_assert_float_eq(ocb_ceiling_find(cur, ncur, "ops_int8", 2)->value, 1000.0, 1e-12);
	cr_assert_null(ocb_ceiling_find(cur, ncur, "bw_l2", 2));
	/* the stored tally: bw_dram/2 no longer beaten, bw_l3/2 still (at 160%) */
	cr_assert_eq(stored.n, 2);
	int l3 = -1, i8 = -1;
	for (int i = 0; i < (int)stored.n; i++) {
		l3 = !strcmp(stored.roof[i].kind, "bw_l3") ? i : l3;
		i8 = !strcmp(stored.roof[i].kind, "ops_int8") ? i : i8;
	}
	cr_assert(l3 >= 0 && i8 >= 0);
	cr_assert_float_eq(stored.roof[l3].max_frac, 1.6, 1e-12);
	cr_assert_float_eq(stored.roof[i8].max_frac, 1.2, 1e-12);
	/* the store: the new values are what readers get, their flagged copies are gone */
	struct ocb_ceiling *now = NULL, *fl = NULL;
	size_t nnow = 0, nfl = 0;
	cr_assert_eq(ocb_store_ceilings_get(s, mid, &now, &nnow), OCB_OK);
	cr_assert_eq(nnow, 4);
	cr_assert_float_eq(ocb_ceiling_find(now, nnow, "bw_dram", 2)->value, 60.0, 1e-12);
	cr_assert_float_eq(ocb_ceiling_find(now, nnow, "bw_l3", 2)->value, 125.0, 1e-12);
	cr_assert_float_eq(ocb_ceiling_find(now, nnow, "bw_dram", 1)->value, 30.0, 1e-12);
	cr_assert_float_eq(ocb_ceiling_find(now, nnow, "ops_int8", 2)->value, 1000.0, 1e-12);
	cr_assert_eq(ocb_store_ceilings_flagged(s, mid, &fl, &nfl), OCB_OK);
	cr_assert_eq(nfl, 0, "%zu flagged, first %s", nfl, nfl ? fl[0].kind : "");
	cr_assert_eq(cli_query_int(path, "SELECT count(*) FROM ceiling WHERE value IN (60, 125)"), 2);
	free(cur), free(now), free(fl);
	ocb_store_close(s);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* `ceilings --show` lists, below the values in use, a newer flagged copy of one of them
 * (a roof the run's results beat), as text and as JSON's flagged_newer. */
Test(roof_beaten, show_lists_the_newer_flagged_value)
{
	char dir[64], path[96];
	struct ocb_store *s = fresh_store(dir, sizeof dir, "s.db", path, sizeof path);
	/* the fingerprint --show looks up: the CLI's own (this test process's environment
	 * may differ from the ocbench it starts), read from an empty --show */
	struct cli_out o;
	const char *json[] = {"", "--db", path, "--json", "ceilings", "--show", NULL};
	cr_assert_eq(cli_run(&o, json, NULL), 0);
	cJSON *j = cJSON_Parse(o.out);
	cr_assert(j && cJSON_IsString(cJSON_GetObjectItem(j, "fingerprint")), "%s %s", o.out, o.err);
	struct ocb_ceiling st[] = {ceil_of("bw_dram", 1, 30, "GB/s"), ceil_of("bw_dram", 2, 40, "GB/s")};
	int64_t mid = machine_with_ceilings(s, cJSON_GetObjectItem(j, "fingerprint")->valuestring,
					    st, 2);
	cJSON_Delete(j);
	struct ocb_ceiling *cur = NULL;
	size_t ncur = 0;
	cr_assert_eq(ocb_store_ceilings_get(s, mid, &cur, &ncur), OCB_OK);
	struct ocb_beaten b = {.n = 0};
	struct ocb_result r = res("bw_dram", 2, 0, 1e9, 1.3);
	ocb_beaten_note(&b, cur, ncur, &r);
	cr_assert_eq(ocb_beaten_flag(&b, s, mid, 0, cur, ncur, NULL), OCB_OK, "%s", ocb_lasterr());
	free(cur);
	ocb_store_close(s);

	const char *text[] = {"", "--db", path, "ceilings", "--show", NULL};
	cr_assert_eq(cli_run(&o, text, NULL), 0);
	cr_assert_eq(o.status, 0, "%s", o.err);
	const char *below = strstr(o.out, "newer values flagged suspect");
	cr_assert_not_null(below, "%s", o.out);
	cr_assert(strstr(below, "bw_dram") && strstr(below, "ran above it"), "%s", o.out);
	cr_assert_eq(cli_run(&o, json, NULL), 0);
	cr_assert_eq(o.status, 0, "%s", o.err);
	j = cJSON_Parse(o.out);
	cr_assert_not_null(j, "%s", o.out);
	cJSON *fl = cJSON_GetObjectItem(j, "flagged_newer"), *in_use = cJSON_GetObjectItem(j, "ceilings");
	cr_assert_eq(cJSON_GetArraySize(in_use), 2);
	cr_assert_eq(cJSON_GetArraySize(fl), 1);
	cJSON *f0 = cJSON_GetArrayItem(fl, 0);
	cr_assert_str_eq(cJSON_GetObjectItem(f0, "kind")->valuestring, "bw_dram");
	cr_assert_eq(cJSON_GetObjectItem(f0, "threads")->valueint, 2);
	cr_assert(cJSON_IsString(cJSON_GetObjectItem(f0, "suspect")));
	cJSON_Delete(j);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}
