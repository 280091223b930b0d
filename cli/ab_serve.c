/* ab_serve: `ocbench ab` with long-lived children (see ab.h and collect/serve.h).
 *
 * Both builds run `run --serve` once. A case is set up once per side (both sides at the
 * same time: set-up is not measured) and then timed on request; a round of a case is
 * ABAB (or BABA, the first side drawn at random), each request `budget / 2` seconds of
 * samples (at least ceil(--min-reps / 2) samples), so the two sides of a case are
 * measured within milliseconds of each other and drift cancels in their ratio.
 *
 * Memory: set up at once, the cases hold ~10 GiB per side (a 16384 x 16384 GEMV
 * alone 0.3-1.1 GiB per thread count). So the cases are set up in groups whose RSS growth
 * fits a->mem_cap per side (--mem-cap, default a quarter of MemAvailable at the start),
 * and a group runs all its rounds before the next is set up; what the last group holds
 * stays set up for the next call (adaptive rounds start with it). */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/ab_plan.h"
#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_log.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_time.h"
#include "ab.h"

#define MAX_ARGS 24
#define ALTERNATIONS 2   /* ABAB */
#define MAX_ROUND_SAMPLES 4096

/* argv of side's serving child (the same seed on both sides: the same inputs). */
static void serve_argv(const struct ab *a, int side, char *argv[MAX_ARGS], char seed[32])
{
	int k = 0;
	argv[k++] = (char *)a->side[side].bin;
	argv[k++] = "run";
	argv[k++] = "--suite";
	argv[k++] = (char *)(a->o.suite ? a->o.suite : "all");
	if (a->o.filter) {
		argv[k++] = "--filter";
		argv[k++] = (char *)a->o.filter;
	}
	snprintf(seed, 32, "%llu", (unsigned long long)a->o.seed);
	argv[k++] = "--seed";
	argv[k++] = seed;
	argv[k++] = "--out";
	argv[k++] = (char *)a->out[side];
	k = ab_argv_common(a, side, argv, k);
	argv[k++] = "--serve";
	argv[k] = NULL;
}

/* A fair coin from the run's seed and salt: which side is started, or asked to set up,
 * first, so that an advantage of going first falls on both sides alike. */
static int coin(const struct ab *a, uint64_t salt)
{
	struct ocb_rng r;
	ocb_rng_seed(&r, a->o.seed ^ (salt * 0x9e3779b97f4a7c15ULL) ^ 0x5eedULL);
	return (int)(ocb_rng_u64(&r) >> 63);
}

/* MemAvailable of /proc/meminfo in bytes; 0 when unknown. */
static double mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	double kb = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

/* "suite/bench/params" of a listed case (as ocb_ab_parse_line builds it), malloc'd. */
static char *case_unit(const cJSON *c)
{
	const char *suite = ocb_json_str(c, "suite", NULL), *bench = ocb_json_str(c, "bench", NULL);
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(c, "params");
	char *pj = params ? ocb_json_canonical(params) : NULL, *u = NULL;
	if (suite && bench && pj) {
		size_t n = strlen(suite) + strlen(bench) + strlen(pj) + 3;
		if ((u = malloc(n)))
			snprintf(u, n, "%s/%s/%s", suite, bench, pj);
	}
	free(pj);
	return u;
}

/* The id of the case (unit, threads) in cand's list, -1 if none. */
static long find_case(const cJSON *list, const char *unit, int threads)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, list) {
		char *u = case_unit(c);
		int same = u && strcmp(u, unit) == 0 && (int)ocb_json_num(c, "threads", 0) == threads;
		free(u);
		if (same)
			return (long)ocb_json_num(c, "id", -1);
	}
	return -1;
}

/* One more case (unit, threads) with its ids on both sides. The key's variant is
 * filled at the first set-up ("?" until then). */
static int add_case(struct ab *a, char *unit, int threads, long id0, long id1)
{
	size_t n = strlen(unit) + 40;
	struct ab_case *c = &a->c[a->n];
	memset(c, 0, sizeof *c);
	if (!(c->key = malloc(n)))
		return ocb_seterr(OCB_ENOMEM, "ab: case");
	snprintf(c->key, n, "%s|?|%d", unit, threads);
	size_t u = 0;
	while (u < a->nunits && strcmp(a->units[u], unit) != 0)
		u++;
	if (u == a->nunits) {
		if (!(a->units[a->nunits++] = strdup(unit)))
			return ocb_seterr(OCB_ENOMEM, "ab: case");
	}
	c->unit = u;
	c->id[0] = id0;
	c->id[1] = id1;
	for (int side = 0; side < 2; side++) {
		if (!(c->med[side] = malloc(a->cap_rounds * sizeof(double))))
			return ocb_seterr(OCB_ENOMEM, "ab: rounds");
		for (size_t r = 0; r < a->cap_rounds; r++)
			c->med[side][r] = NAN;
	}
	a->n++;
	return OCB_OK;
}

/* The kernel cases both lists have (workloads run once: not served; `--no-serve`). */
static int common_cases(struct ab *a, const cJSON *list0, const cJSON *list1)
{
	int n = cJSON_GetArraySize(list0), rc = OCB_OK;
	size_t skipped = 0;
	a->units = calloc(n > 0 ? (size_t)n : 1, sizeof *a->units);
	a->c = calloc(n > 0 ? (size_t)n : 1, sizeof *a->c);
	if (!a->units || !a->c)
		return ocb_seterr(OCB_ENOMEM, "ab: %d cases", n);
	const cJSON *c;
	cJSON_ArrayForEach(c, list0) {
		int threads = (int)ocb_json_num(c, "threads", 0);
		char *u = case_unit(c);
		long id1 = u ? find_case(list1, u, threads) : -1;
		if (!u)
			rc = ocb_seterr(OCB_ENOMEM, "ab: case list");
		else if (!cJSON_IsTrue(cJSON_GetObjectItem(c, "kernel")))
			skipped++;
		else if (id1 >= 0)
			rc = add_case(a, u, threads, (long)ocb_json_num(c, "id", -1), id1);
		free(u);
		if (rc != OCB_OK)
			return rc;
	}
	if (skipped)
		ocb_info("ab: %zu workload case(s) skipped: they run once, not on request "
			 "(--no-serve runs them)", skipped);
	if (a->n == 0)
		return ocb_seterr(OCB_EINVAL, "no kernel case planned on both sides (see %s)",
				  a->log);
	return OCB_OK;
}

/* Reads a side's first line: its case list, or NULL (an older build: no --serve). */
static cJSON *read_list(struct ab *a, int side)
{
	if (ocb_ab_proc_recv(&a->proc[side]) != OCB_OK)
		return NULL;
	cJSON *j = cJSON_Parse(a->proc[side].line);
	cJSON *l = j && ocb_json_num(j, "serve", 0) >= 1 ? cJSON_DetachItemFromObject(j, "cases")
							 : NULL;
	cJSON_Delete(j);
	if (l && !cJSON_IsArray(l)) {
		cJSON_Delete(l);
		l = NULL;
	}
	return l;
}

/* Starts side's serving child and reads its case list (NULL when the build does not
 * serve; the caller deletes it). OCB_OK or OCB_EIO (it could not be started). */
static int start_side(struct ab *a, int side, cJSON **list)
{
	char *argv[MAX_ARGS], seed[32];
	serve_argv(a, side, argv, seed);
	int rc = ocb_ab_proc_open(argv, a->log, &a->proc[side]);
	*list = rc == OCB_OK ? read_list(a, side) : NULL;
	return rc;
}

void ab_child_env(void)
{
	setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
}

int ab_serve_start(struct ab *a)
{
	cJSON *list[2] = {NULL, NULL};
	int rc = OCB_OK;
	a->serve = 0;
	if (a->o.no_serve)
		return OCB_OK;
	ab_child_env();
	for (int side = 0; side < 2 && rc == OCB_OK; side++)
		rc = start_side(a, side, &list[side]);
	if (rc == OCB_OK && (!list[0] || !list[1])) {
		ocb_info("ab: %s does not serve (an older build, or no case): one `run` child "
			 "per block of cases instead (see %s)", !list[0] ? "base" : "cand", a->log);
		ab_serve_stop(a);
		goto out;
	}
	if (rc == OCB_OK)
		rc = common_cases(a, list[0], list[1]);
	if (rc == OCB_OK) {
		a->serve = 1;
		a->mem_cap = a->o.mem_cap > 0 ? a->o.mem_cap : mem_available() / 4;
		if (!(a->mem_cap > 0))
			a->mem_cap = 1.0 * (1 << 30);
		ocb_info("ab: serving children: %zu cases on both sides, set up at most %.2f GiB "
			 "per side at a time", a->n, a->mem_cap / (1 << 30));
	} else {
		ab_serve_stop(a);
	}
out:
	cJSON_Delete(list[0]);
	cJSON_Delete(list[1]);
	return rc;
}

void ab_serve_stop(struct ab *a)
{
	for (int side = 0; side < 2; side++)
		ocb_ab_proc_close(&a->proc[side], NULL);
}

/* ---- requests ---- */

/* Sends req to side and parses the reply into *j (caller deletes). OCB_OK with *j an
 * object, else OCB_EIO (the child is gone or answered garbage). */
static int ask(struct ab *a, int side, const char *req, cJSON **j)
{
	int rc = ocb_ab_proc_send(&a->proc[side], req);
	if (rc == OCB_OK)
		rc = ocb_ab_proc_recv(&a->proc[side]);
	*j = rc == OCB_OK ? cJSON_Parse(a->proc[side].line) : NULL;
	if (rc == OCB_OK && !cJSON_IsObject(*j)) {
		cJSON_Delete(*j);
		*j = NULL;
		rc = ocb_seterr(OCB_EIO, "ab: %s: unreadable reply '%.80s'", side ? "cand" : "base",
				a->proc[side].line);
	}
	return rc;
}

static int reply_ok(const cJSON *j)
{
	return strcmp(ocb_json_str(j, "status", ""), "ok") == 0;
}

/* A failed case: logged once, never timed again. */
static void case_failed(struct ab *a, struct ab_case *c, int side, const cJSON *j)
{
	if (!c->failed)
		ocb_info("ab: %s: %s failed: %s", c->key, side ? "cand" : "base",
			 ocb_json_str(j, "error", "?"));
	c->failed = 1;
	a->failed_steps++;
}

static int teardown(struct ab *a, struct ab_case *c)
{
	char req[64];
	for (int side = 0; side < 2; side++) {
		cJSON *j;
		if (!c->held[side])
			continue;
		snprintf(req, sizeof req, "teardown %ld", c->id[side]);
		int rc = ask(a, side, req, &j);
		if (rc != OCB_OK)
			return rc;
		a->rss[side] = ocb_json_num(j, "rss_bytes", a->rss[side]);
		a->held[side] -= c->foot[side];
		c->held[side] = 0;
		cJSON_Delete(j);
	}
	return OCB_OK;
}

/* The key's variant from the first set-up (base's; a different cand variant is said). */
static int set_variant(struct ab_case *c, const char *v0, const char *v1)
{
	char *q = strstr(c->key, "|?|");
	if (!q)
		return OCB_OK;
	size_t n = strlen(c->key) + strlen(v0) + 1;
	char *k = malloc(n);
	if (!k)
		return ocb_seterr(OCB_ENOMEM, "ab: case");
	snprintf(k, n, "%.*s|%s%s", (int)(q - c->key), c->key, v0, q + 2);
	free(c->key);
	c->key = k;
	if (strcmp(v0, v1) != 0)
		ocb_info("ab: %s: cand runs variant %s", c->key, v1);
	return OCB_OK;
}

/* The set-up request of c on side: `setup ID again` (no check, a short warm-up;
 * collect/serve.h) when that side's build already set c up and checked it in this run,
 * with the same seed, hence the same inputs: this halves what a --respawn round spends
 * on set-up (quiet 2 vCPU, the 128 cases: checks 4 s and warm-ups 14 s of a
 * 36 s set-up, beside 29 s of timing). */
static int setup_again(const struct ab *a, const struct ab_case *c, int side)
{
	return c->checked[side] && !a->no_again[side];
}

/* A build older than `setup ID again` says "error" (a malformed request): it is then
 * asked plainly, now and for the rest of the run. */
static int retry_plain(struct ab *a, struct ab_case *c, int side, cJSON **j)
{
	char req[64];
	if (!setup_again(a, c, side) || strcmp(ocb_json_str(*j, "status", ""), "error") != 0)
		return OCB_OK;
	a->no_again[side] = 1;
	ocb_info("ab: %s: its build has no `setup ID again`: every set-up checks and warms up "
		 "in full", side ? "cand" : "base");
	cJSON_Delete(*j);
	snprintf(req, sizeof req, "setup %ld", c->id[side]);
	return ask(a, side, req, j);
}

/* Sets case c up on both sides at once (each child on its own core; set-up is not
 * timed). Marks it failed when either side fails. */
static int setup(struct ab *a, struct ab_case *c)
{
	char req[2][64];
	cJSON *j[2] = {NULL, NULL};
	int rc = OCB_OK, first = coin(a, 2 * a->setups + 1);
	for (int k = 0; k < 2 && rc == OCB_OK; k++) {
		int side = k ^ first;
		snprintf(req[side], sizeof req[side],
			 setup_again(a, c, side) ? "setup %ld again" : "setup %ld", c->id[side]);
		rc = ocb_ab_proc_send(&a->proc[side], req[side]);
	}
	for (int side = 0; side < 2 && rc == OCB_OK; side++) {
		if ((rc = ocb_ab_proc_recv(&a->proc[side])) != OCB_OK)
			break;
		j[side] = cJSON_Parse(a->proc[side].line);
		if (!cJSON_IsObject(j[side]))
			rc = ocb_seterr(OCB_EIO, "ab: unreadable set-up reply '%.80s'",
					a->proc[side].line);
	}
	for (int side = 0; side < 2 && rc == OCB_OK; side++)
		rc = retry_plain(a, c, side, &j[side]);
	for (int side = 0; side < 2 && rc == OCB_OK; side++) {
		int again = setup_again(a, c, side);
		if (!reply_ok(j[side])) {
			case_failed(a, c, side, j[side]);
			continue;
		}
		double rss = ocb_json_num(j[side], "rss_bytes", a->rss[side]);
		c->foot[side] = rss > a->rss[side] ? rss - a->rss[side] : 0;
		a->rss[side] = rss;
		a->held[side] += c->foot[side];
		c->held[side] = 1;
		c->checked[side] = 1;
		a->setups_again += (size_t)again;
		double smp = ocb_json_num(j[side], "per_call_s", NAN) *
			     ocb_json_num(j[side], "batch", 1);
		if (smp > c->sample_s)
			c->sample_s = smp;
	}
	a->setups += 2;
	if (rc == OCB_OK && !c->failed)
		rc = set_variant(c, ocb_json_str(j[0], "variant", "default"),
				 ocb_json_str(j[1], "variant", "default"));
	if (rc == OCB_OK && c->failed) /* what one side holds of a failed case goes */
		rc = teardown(a, c);
	cJSON_Delete(j[0]);
	cJSON_Delete(j[1]);
	return rc;
}

/* One `time` request of reps samples on side; the samples are appended to buf[*nb..).
 * A failed case is marked (not an error of ab). */
static int time_once(struct ab *a, struct ab_case *c, int side, long reps, double max_s,
		     double *buf, size_t *nb)
{
	char req[64];
	cJSON *j;
	/* at most twice the request's share of the budget (a sample stretched by a busy
	 * host ends the request early; at least one sample) */
	if (max_s > 0)
		snprintf(req, sizeof req, "time %ld %ld %.6g", c->id[side], reps, max_s);
	else /* --budget 0: no time cap, the --min-reps floor */
		snprintf(req, sizeof req, "time %ld %ld", c->id[side], reps);
	int rc = ask(a, side, req, &j);
	if (rc != OCB_OK)
		return rc;
	if (!reply_ok(j)) {
		case_failed(a, c, side, j);
		c->held[side] = 0; /* the child released it */
		a->held[side] -= c->foot[side];
	}
	const cJSON *s, *arr = cJSON_GetObjectItem(j, "samples_s");
	cJSON_ArrayForEach(s, arr)
		if (*nb < MAX_ROUND_SAMPLES && cJSON_IsNumber(s) && s->valuedouble > 0)
			buf[(*nb)++] = s->valuedouble;
	cJSON_Delete(j);
	return OCB_OK;
}

/* ---- rounds ---- */

/* One round of case c: ABAB starting with side `first`, each request budget / 2 of
 * samples but at least ceil(--min-reps / 2) samples, so that a side has >= --min-reps
 * samples in the round however long one is; each side's value is the fastest of its
 * samples of the round (or their median, --stat median). Why the floor: on a shared
 * 2-vCPU VM the host takes a vCPU away for ~10-100 ms at a time (steal), which doubles
 * a 2-thread kernel's time; with one or two 20-80 ms samples per side, whole rounds read
 * 2x (seen in 15-25% of the rounds of 2-thread 16384 x 16384 GEMVs at the old rule of
 * one AB request when a sample exceeds half the budget); four samples in two requests
 * seldom all fall in such a window. */
static int case_round(struct ab *a, struct ab_case *c, int first, size_t round, double *buf[2])
{
	double budget = a->o.budget, smp = c->sample_s > 0 ? c->sample_s : 1e-3;
	double want = ceil(budget / ALTERNATIONS / smp);
	double floor_reps = ceil((double)a->o.min_reps / ALTERNATIONS);
	want = want < floor_reps ? floor_reps : want;
	long reps = want < 1 ? 1 : want > 256 ? 256 : (long)want; /* 2 x 2 x 256 < buffer */
	/* a request ends early past twice its expected time (a stretched sample) */
	double max_s = 2 * fmax(budget / ALTERNATIONS, (double)reps * smp);
	size_t nb[2] = {0, 0};
	int rc = OCB_OK;
	for (int k = 0; k < 2 * ALTERNATIONS && rc == OCB_OK && !c->failed; k++) {
		int side = k % 2 ? !first : first;
		rc = time_once(a, c, side, reps, budget > 0 ? max_s : 0, buf[side], &nb[side]);
	}
	a->steps += 2 * ALTERNATIONS;
	if (rc != OCB_OK || c->failed || !nb[0] || !nb[1])
		return rc;
	for (int side = 0; side < 2; side++) {
		double v = buf[side][0];
		for (size_t i = 1; i < nb[side]; i++)
			v = buf[side][i] < v ? buf[side][i] : v;
		c->med[side][round] = a->o.use_median ? ocb_median(buf[side], nb[side]) : v;
	}
	return OCB_OK;
}

/* The selected cases (not failed; of the units sub[], or all) into sel[], those set up
 * now first (they need no new set-up); returns how many. */
static size_t select_cases(const struct ab *a, const size_t *sub, size_t nsub, size_t *sel)
{
	size_t n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < a->n; i++) {
			const struct ab_case *c = &a->c[i];
			int in = !sub;
			for (size_t k = 0; sub && k < nsub && !in; k++)
				in = sub[k] == c->unit;
			if (in && !c->failed && (c->held[0] && c->held[1]) == (pass == 0))
				sel[n++] = i;
		}
	return n;
}

/* The next group sel[*pos..): what is held and not in sel[*pos..) is torn down, then
 * cases are set up until a side holds more than the cap (a case known to take it past
 * the cap starts the next group; a group has at least one case). Returns the group's
 * first index; *pos moves past it. */
static int next_group(struct ab *a, const size_t *sel, size_t nsel, size_t *pos, size_t *g0)
{
	int rc = OCB_OK;
	for (size_t i = 0; i < a->n && rc == OCB_OK; i++) {
		int keep = 0;
		for (size_t k = *pos; k < nsel && !keep; k++)
			keep = sel[k] == i;
		if (!keep && (a->c[i].held[0] || a->c[i].held[1]))
			rc = teardown(a, &a->c[i]);
	}
	*g0 = *pos;
	while (rc == OCB_OK && *pos < nsel && !ab_stop) {
		struct ab_case *c = &a->c[sel[*pos]];
		int held = c->held[0] && c->held[1];
		if (*pos > *g0 && !held && (a->held[0] + c->foot[0] > a->mem_cap ||
					   a->held[1] + c->foot[1] > a->mem_cap))
			break;
		if (!held && (rc = setup(a, c)) != OCB_OK)
			break;
		(*pos)++;
		if (a->held[0] > a->mem_cap || a->held[1] > a->mem_cap)
			break;
	}
	return rc;
}

/* --respawn: both serving children started anew (the same argv: the same case list,
 * each case's ids looked up again); nothing is set up in them yet. */
static int respawn(struct ab *a)
{
	int rc = OCB_OK, first = coin(a, 2 * a->respawns);
	ab_serve_stop(a);
	for (int k = 0; k < 2 && rc == OCB_OK; k++) {
		int side = k ^ first;
		cJSON *list;
		if ((rc = start_side(a, side, &list)) != OCB_OK)
			break;
		if (!list)
			rc = ocb_seterr(OCB_EIO, "ab: %s: no case list after a restart (see %s)",
					side ? "cand" : "base", a->log);
		for (size_t i = 0; i < a->n && rc == OCB_OK; i++) {
			struct ab_case *c = &a->c[i];
			const char *bar = strrchr(c->key, '|');
			c->held[side] = 0;
			if (c->failed)
				continue;
			c->id[side] = find_case(list, a->units[c->unit], bar ? atoi(bar + 1) : 0);
			if (c->id[side] < 0)
				rc = ocb_seterr(OCB_EIO, "ab: %s: %s not planned after a restart",
						side ? "cand" : "base", c->key);
		}
		cJSON_Delete(list);
		a->held[side] = a->rss[side] = 0;
	}
	a->respawns++;
	a->since_spawn = 0;
	return rc;
}

/* A --respawn restart is due: the pair served N rounds since it started. */
static int respawn_due(const struct ab *a)
{
	return a->o.respawn && a->since_spawn >= a->o.respawn;
}

/* Before a round of the group sel[g0..g1): --respawn N restarts both children every N
 * rounds they served, --resetup N sets every case up anew every N rounds of the group,
 * so that what one process or one set-up holds (code and data placement, huge pages,
 * physical pages and their cache sets) varies across rounds instead of biasing all of
 * them alike. */
static int renew(struct ab *a, const size_t *sel, size_t g0, size_t g1, size_t round)
{
	int rc = OCB_OK, fresh = respawn_due(a);
	int again = a->o.resetup && round && round % a->o.resetup == 0;
	if (fresh)
		rc = respawn(a);
	a->since_spawn++;
	for (size_t k = g0; k < g1 && rc == OCB_OK && (fresh || again); k++) {
		struct ab_case *c = &a->c[sel[k]];
		if (c->failed)
			continue;
		if (!fresh)
			rc = teardown(a, c);
		if (rc == OCB_OK)
			rc = setup(a, c);
	}
	return rc;
}

/* All n rounds of the group sel[g0..g1): a fresh order each round, the first side of
 * each case by a coin (collect/ab_plan with blocks of one case). */
static int group_rounds(struct ab *a, const size_t *sel, size_t g0, size_t g1, size_t n,
			uint64_t seed, size_t round0, double *buf[2])
{
	struct ocb_ab_plan p;
	int rc = ocb_ab_plan_make(g1 - g0, n, 1, seed + g0, &p);
	if (rc != OCB_OK)
		return rc;
	for (size_t i = 0; rc == OCB_OK && i + 1 < p.nsteps && !ab_stop; i += 2) {
		const struct ocb_ab_step *s = &p.steps[i];
		if ((i == 0 || p.steps[i - 1].round != s->round) &&
		    (rc = renew(a, sel, g0, g1, s->round)) != OCB_OK)
			break;
		struct ab_case *c = &a->c[sel[g0 + p.order[s->round * p.ncases + s->first]]];
		if (!c->failed)
			rc = case_round(a, c, s->side, round0 + s->round, buf);
	}
	ocb_ab_plan_release(&p);
	return rc;
}

int ab_serve_rounds(struct ab *a, size_t n, uint64_t seed, size_t mid, const size_t *sub,
		    size_t nsub)
{
	size_t round0 = a->rounds, pos = 0, g0 = 0;
	size_t *sel = malloc((a->n ? a->n : 1) * sizeof *sel);
	double *buf[2] = {malloc(MAX_ROUND_SAMPLES * sizeof(double)),
			  malloc(MAX_ROUND_SAMPLES * sizeof(double))};
	int rc = OCB_OK, mid_due = mid > round0 && mid <= round0 + n;
	if (!sel || !buf[0] || !buf[1]) {
		rc = ocb_seterr(OCB_ENOMEM, "ab: rounds");
		goto out;
	}
	if (round0 + n > a->cap_rounds) {
		rc = ocb_seterr(OCB_EINVAL, "ab: %zu rounds > %zu", round0 + n, a->cap_rounds);
		goto out;
	}
	size_t nsel = select_cases(a, sub, nsub, sel);
	while (rc == OCB_OK && pos < nsel && !ab_stop) {
		/* a restart due is done before the group is set up, not right after */
		if (respawn_due(a) && (rc = respawn(a)) != OCB_OK)
			break;
		if ((rc = next_group(a, sel, nsel, &pos, &g0)) != OCB_OK)
			break;
		rc = group_rounds(a, sel, g0, pos, n, seed, round0, buf);
		ocb_info("ab: cases %zu-%zu of %zu (%.2f / %.2f GiB set up): rounds %zu-%zu done "
			 "(%.0f s)", g0 + 1, pos, nsel, a->held[0] / (1 << 30),
			 a->held[1] / (1 << 30), round0 + 1, round0 + n, ocb_now_s() - a->wall_s);
		if (rc == OCB_OK && mid_due && 2 * pos >= nsel) {
			ab_canary_point(a, OCB_CANARY_MID);
			mid_due = 0;
		}
	}
	if (rc == OCB_OK)
		a->rounds = round0 + n;
	if (rc == OCB_OK && ab_stop)
		rc = ocb_seterr(OCB_ERUNTIME, "interrupted in rounds %zu-%zu", round0 + 1,
				round0 + n);
out:
	free(sel);
	free(buf[0]);
	free(buf[1]);
	return rc;
}

void ab_serve_finish(struct ab *a)
{
	size_t k = 0;
	ab_serve_stop(a);
	for (size_t i = 0; i < a->n; i++) {
		if (strstr(a->c[i].key, "|?|")) { /* never set up on both sides */
			free(a->c[i].key);
			free(a->c[i].med[0]);
			free(a->c[i].med[1]);
			continue;
		}
		a->c[k++] = a->c[i];
	}
	a->n = k;
}
