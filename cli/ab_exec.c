/* ab_exec: the children of `ocbench ab` (see ab.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/ab_child.h"
#include "../collect/ab_plan.h"
#include "../collect/host.h"
#include "../common/ocb_error.h"
#include "../common/ocb_log.h"
#include "../common/ocb_time.h"
#include "../report/mde.h"
#include "ab.h"

#define MAX_ARGS 40

/* argv of one child of `side` running the cases `filter` matches (NULL: all). The
 * strings live in buf. The same seed on both sides: both measure the same inputs. */
static void child_argv(const struct ab *a, int side, const char *filter, char *argv[MAX_ARGS],
		       char buf[4][32])
{
	int k = 0;
	argv[k++] = (char *)a->side[side].bin;
	argv[k++] = "run";
	argv[k++] = "--suite";
	argv[k++] = (char *)(a->o.suite ? a->o.suite : "all");
	if (filter) {
		argv[k++] = "--filter";
		argv[k++] = (char *)filter;
	}
	snprintf(buf[0], 32, "%g", a->o.budget);
	snprintf(buf[1], 32, "%ld", a->o.min_reps);
	snprintf(buf[2], 32, "%llu", (unsigned long long)a->o.seed);
	argv[k++] = "--passes";
	argv[k++] = "1";
	argv[k++] = "--budget";
	argv[k++] = buf[0];
	argv[k++] = "--min-reps";
	argv[k++] = buf[1];
	argv[k++] = "--seed";
	argv[k++] = buf[2];
	argv[k++] = "--no-papi";
	argv[k++] = "--db";
	argv[k++] = (char *)a->db[side];
	argv[k++] = "--out";
	argv[k++] = (char *)a->out[side];
	argv[k++] = "--json";
	k = ab_argv_common(a, side, argv, k);
	argv[k] = NULL;
}

int ab_argv_common(const struct ab *a, int side, char **argv, int k)
{
	if (a->o.quick)
		argv[k++] = "--quick";
	if (a->o.threads) {
		argv[k++] = "--threads";
		argv[k++] = (char *)a->o.threads;
	}
	if (side == OCB_AB_CAND && a->o.inject) {
		argv[k++] = "--inject-slowdown";
		argv[k++] = (char *)a->o.inject;
	}
	return k;
}

/* ---- discovery: the keys each side produces ---- */

struct seen {
	char **key, **unit;
	unsigned *mask;
	size_t n, cap;
	unsigned side_bit;
};

static int on_discover(void *ctx, const char *line)
{
	struct seen *s = ctx;
	struct ocb_ab_obs o;
	int rc = ocb_ab_parse_line(line, &o);
	if (rc <= 0)
		return rc;
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->key[i], o.key) == 0) {
			s->mask[i] |= s->side_bit;
			free(o.key);
			free(o.unit);
			return OCB_OK;
		}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		char **k = realloc(s->key, cap * sizeof *k), **u = k ? realloc(s->unit, cap * sizeof *u) : NULL;
		unsigned *m = u ? realloc(s->mask, cap * sizeof *m) : NULL;
		if (k)
			s->key = k;
		if (u)
			s->unit = u;
		if (!m) {
			free(o.key);
			free(o.unit);
			return ocb_seterr(OCB_ENOMEM, "ab: %zu cases", cap);
		}
		s->mask = m;
		s->cap = cap;
	}
	s->key[s->n] = o.key;
	s->unit[s->n] = o.unit;
	s->mask[s->n++] = s->side_bit;
	return OCB_OK;
}

/* Index of unit u in a->units, adding it. */
static size_t unit_index(struct ab *a, char **u)
{
	for (size_t i = 0; i < a->nunits; i++)
		if (strcmp(a->units[i], *u) == 0)
			return i;
	a->units[a->nunits] = *u;
	*u = NULL;
	return a->nunits++;
}

static int keep_common(struct ab *a, struct seen *s)
{
	a->units = calloc(s->n ? s->n : 1, sizeof *a->units);
	a->c = calloc(s->n ? s->n : 1, sizeof *a->c);
	if (!a->units || !a->c)
		return ocb_seterr(OCB_ENOMEM, "ab: %zu cases", s->n);
	for (size_t i = 0; i < s->n; i++) {
		if (s->mask[i] != 3)
			continue;
		struct ab_case *c = &a->c[a->n++];
		c->key = s->key[i];
		s->key[i] = NULL;
		c->unit = unit_index(a, &s->unit[i]);
		for (int side = 0; side < 2; side++) {
			c->med[side] = malloc(a->cap_rounds * sizeof(double));
			if (!c->med[side])
				return ocb_seterr(OCB_ENOMEM, "ab: rounds");
			for (size_t r = 0; r < a->cap_rounds; r++)
				c->med[side][r] = NAN;
		}
	}
	return OCB_OK;
}

static int run_child(struct ab *a, int side, const char *filter,
		     int (*on_line)(void *, const char *), void *ctx)
{
	char *argv[MAX_ARGS], buf[4][32];
	int st, rc;
	child_argv(a, side, filter, argv, buf);
	rc = ocb_ab_child_run(argv, a->log, on_line, ctx, &st);
	a->steps++;
	if (rc != OCB_OK)
		return rc;
	if (st == 2 || st == 127)
		return ocb_seterr(OCB_EINVAL, "%s: %s refused the run (exit %d; see %s)",
				  side ? "cand" : "base", a->side[side].bin, st, a->log);
	if (st != 0)
		a->failed_steps++; /* exit 3: a case failed; the others still count */
	return OCB_OK;
}

int ab_discover(struct ab *a)
{
	struct seen s = {0};
	int rc = OCB_OK;
	for (int side = 0; side < 2 && rc == OCB_OK && !ab_stop; side++) {
		ocb_info("ab: discovery and warm-up: %s", side ? "cand" : "base");
		s.side_bit = 1u << side;
		rc = run_child(a, side, a->o.filter, on_discover, &s);
	}
	if (rc == OCB_OK && ab_stop)
		rc = ocb_seterr(OCB_ERUNTIME, "interrupted during discovery");
	if (rc == OCB_OK)
		rc = keep_common(a, &s);
	if (rc == OCB_OK && a->n == 0)
		rc = ocb_seterr(OCB_EINVAL, "no case ran ok on both sides (see %s)", a->log);
	for (size_t i = 0; i < s.n; i++) {
		free(s.key[i]);
		free(s.unit[i]);
	}
	free(s.key);
	free(s.unit);
	free(s.mask);
	return rc;
}

/* ---- rounds ---- */

struct step_ctx {
	struct ab *a;
	int side;
	size_t round;
};

static int on_step(void *ctx, const char *line)
{
	struct step_ctx *x = ctx;
	struct ocb_ab_obs o;
	int rc = ocb_ab_parse_line(line, &o);
	if (rc <= 0)
		return rc;
	/* the fastest sample by default: interference on a shared machine only adds time
	 * (Chen & Revels, "Robust benchmarking in noisy environments", 2016) */
	double v = !x->a->o.use_median && o.min > 0 ? o.min : o.median;
	for (size_t i = 0; i < x->a->n; i++)
		if (strcmp(x->a->c[i].key, o.key) == 0)
			x->a->c[i].med[x->side][x->round] = v;
	free(o.key);
	free(o.unit);
	return OCB_OK;
}

static int run_step(struct ab *a, const struct ocb_ab_plan *p, const struct ocb_ab_step *s,
		    size_t round0, const size_t *sub)
{
	const size_t *idx = ocb_ab_step_cases(p, s);
	const char **u = malloc(s->count * sizeof *u);
	if (!u)
		return ocb_seterr(OCB_ENOMEM, "ab: step");
	for (size_t i = 0; i < s->count; i++)
		u[i] = a->units[sub ? sub[idx[i]] : idx[i]];
	char *re = ocb_ab_filter_regex(u, s->count);
	free(u);
	if (!re)
		return ocb_seterr(OCB_ENOMEM, "ab: filter");
	struct step_ctx x = {a, s->side, round0 + s->round};
	int rc = run_child(a, s->side, re, on_step, &x);
	free(re);
	return rc;
}

int ab_rounds(struct ab *a, size_t n, uint64_t seed, size_t mid, const size_t *sub,
	      size_t nsub)
{
	struct ocb_ab_plan p;
	size_t round0 = a->rounds;
	int rc;
	if (n == 0)
		return OCB_OK;
	if (a->serve)
		return ab_serve_rounds(a, n, seed, mid, sub, nsub);
	if (round0 + n > a->cap_rounds)
		return ocb_seterr(OCB_EINVAL, "ab: %zu rounds > %zu", round0 + n, a->cap_rounds);
	if ((rc = ocb_ab_plan_make(sub ? nsub : a->nunits, n, a->o.block, seed, &p)) != OCB_OK)
		return rc;
	for (size_t i = 0; i < p.nsteps && rc == OCB_OK; i++) {
		rc = run_step(a, &p, &p.steps[i], round0, sub);
		int round_done = i + 1 == p.nsteps || p.steps[i + 1].round != p.steps[i].round;
		if (rc != OCB_OK || !round_done)
			continue;
		a->rounds = round0 + p.steps[i].round + 1;
		ocb_info("ab: round %zu done (%.0f s)", a->rounds, ocb_now_s() - a->wall_s);
		if (a->rounds == mid)
			ab_canary_point(a, OCB_CANARY_MID);
		if (ab_stop)
			rc = ocb_seterr(OCB_ERUNTIME, "interrupted after round %zu", a->rounds);
	}
	ocb_ab_plan_release(&p);
	return rc;
}

static int cmp_size(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	return (a > b) - (a < b);
}

size_t ab_plan_rounds(struct ab *a)
{
	size_t *need = malloc((a->n ? a->n : 1) * sizeof *need), k = 0;
	double *d = malloc((a->rounds ? a->rounds : 1) * sizeof *d);
	size_t rounds = a->rounds;
	if (!need || !d)
		goto out;
	for (size_t i = 0; i < a->n; i++) {
		size_t m = 0;
		for (size_t r = 0; r < a->rounds; r++)
			if (a->c[i].med[0][r] > 0 && a->c[i].med[1][r] > 0)
				d[m++] = log(a->c[i].med[1][r] / a->c[i].med[0][r]);
		size_t nr = ocb_mde_rounds(a->o.target_mde, ocb_mde_var_robust(d, m),
					   a->o.stat.alpha, a->o.stat.power);
		if (nr > 0)
			need[k++] = nr;
	}
	if (k == 0)
		goto out;
	qsort(need, k, sizeof *need, cmp_size);
	size_t p90 = need[(size_t)ceil(0.9 * (double)k) - 1];
	ocb_info("ab: pilot of %zu rounds: rounds for a %.3g%% MDE per case: median %zu, 90th "
		 "percentile %zu, max %zu", a->rounds, 100 * a->o.target_mde, need[k / 2], p90,
		 need[k - 1]);
	rounds = p90 < a->rounds ? a->rounds : p90;
	if (rounds > a->o.max_rounds) {
		ocb_info("ab: capped at --max-rounds %zu: some cases will not reach the target",
			 a->o.max_rounds);
		rounds = a->o.max_rounds;
	}
out:
	free(need);
	free(d);
	return rounds;
}

/* What more rounds would do for a case, from its rounds so far (one evaluation per case
 * per adaptive round). */
enum need { NEED_FAILED = -1, NEED_NONE, NEED_UNDECIDED, NEED_LEANING };

static void classify(struct ab *a, signed char *need)
{
	for (size_t i = 0; i < a->n; i++) {
		struct ocb_ab_stats st;
		need[i] = NEED_NONE;
		if (a->c[i].failed)
			need[i] = NEED_FAILED;
		else if (ocb_ab_eval(a->c[i].med[0], a->c[i].med[1], a->rounds, &a->o.stat,
				     &st) == OCB_OK)
			need[i] = ocb_ab_leaning(&st, &a->o.stat)     ? NEED_LEANING
				  : ocb_ab_undecided(&st, &a->o.stat) ? NEED_UNDECIDED
								      : NEED_NONE;
	}
}

/* Adds to sub[0..n) the units of the cases whose need is at least `want`, not already
 * there, until sub holds `upto` units; the cases are scanned from a rotating start so
 * that padding is spread over them. Returns the new count; *ncases (when not NULL)
 * counts the cases selected. */
static size_t add_units(struct ab *a, const signed char *need, int want, size_t *sub,
			size_t n, size_t upto, size_t *ncases)
{
	size_t start = a->n ? (a->rounds * 7919) % a->n : 0;
	for (size_t t = 0; t < a->n && n < upto; t++) {
		size_t i = (start + t) % a->n;
		if (need[i] < want)
			continue;
		if (ncases)
			(*ncases)++;
		size_t k = 0;
		while (k < n && sub[k] != a->c[i].unit)
			k++;
		if (k == n)
			sub[n++] = a->c[i].unit;
	}
	return n;
}

/* The units of an adaptive round into sub[] (room for a->nunits); returns how many.
 * The leaning cases come first (a verdict that more rounds would most likely settle);
 * when none leans, every undecided case. A round of a few units is padded, with
 * undecided units and then any, to a quarter of the units: in rounds of one or two
 * units both sides of a case read 1.3-1.9x slower than in full rounds on the 2-vCPU
 * VM (sgemm_thin 4096 x 4096 x 16, 1 thread: 15.5-17 ms against 10.6-11.1 ms; with or
 * without --respawn), a regime the planned rounds never saw, and three such rounds made
 * one A/A case "faster". */
static size_t adaptive_units(struct ab *a, const signed char *need, size_t *sub,
			     size_t *ncases, const char **what)
{
	size_t floor_units = (a->nunits + 3) / 4;
	*ncases = 0;
	*what = "leaning";
	size_t n = add_units(a, need, NEED_LEANING, sub, 0, a->nunits, ncases);
	if (n == 0) {
		*what = "undecided";
		n = add_units(a, need, NEED_UNDECIDED, sub, 0, a->nunits, ncases);
		if (n == 0)
			return 0;
	}
	n = add_units(a, need, NEED_UNDECIDED, sub, n, floor_units, NULL);
	return add_units(a, need, NEED_NONE, sub, n, floor_units, NULL);
}

int ab_adaptive(struct ab *a, uint64_t seed)
{
	size_t *sub = malloc((a->nunits ? a->nunits : 1) * sizeof *sub), ncases;
	signed char *need = malloc(a->n ? a->n : 1);
	double last_unit_s = 0;
	int rc = OCB_OK;
	if (!sub || !need) {
		free(sub);
		free(need);
		return ocb_seterr(OCB_ENOMEM, "ab: adaptive rounds");
	}
	while (rc == OCB_OK && !ab_stop && a->rounds < a->o.max_rounds &&
	       a->rounds < a->cap_rounds) {
		double spent = ocb_now_s() - a->wall_s;
		const char *what;
		classify(a, need);
		size_t nsub = adaptive_units(a, need, sub, &ncases, &what);
		/* a unit's share of a round: the planned rounds' average, or what the last
		 * adaptive round took per unit when more (a restart and a set-up per round
		 * weigh more in a short round); stop when the next round might overrun */
		double per_unit = spent / (double)(a->rounds + 1) / (double)a->nunits;
		per_unit = last_unit_s > per_unit ? last_unit_s : per_unit;
		if (nsub == 0 || spent + per_unit * (double)nsub > a->o.time_limit)
			break;
		ocb_info("ab: adaptive round %zu: %zu %s case(s); %zu unit(s) with the padding",
			 a->rounds + 1, ncases, what, nsub);
		rc = ab_rounds(a, 1, seed + a->rounds, SIZE_MAX, sub, nsub);
		last_unit_s = (ocb_now_s() - a->wall_s - spent) / (double)nsub;
		a->extra_rounds++;
	}
	free(sub);
	free(need);
	return rc;
}

void ab_canary_point(struct ab *a, int point)
{
	struct ocb_machine m;
	if (!a->have_canary)
		return;
	/* set up for each checkpoint and released after it: the DRAM canary's buffer (4
	 * L3 shares) is not held during the rounds */
	ocb_host_probe(&m);
	m.llc_bytes = a->llc_bytes;
	if (ocb_canaries_init(&a->can, &m) != OCB_OK) {
		ocb_info("ab: canaries at checkpoint %s: %s", ocb_canary_point[point],
			 ocb_lasterr());
		return;
	}
	ocb_canaries_measure(&a->can, a->canary[point]);
	ocb_canaries_release(&a->can);
}

void ab_release(struct ab *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->c[i].key);
		free(a->c[i].med[0]);
		free(a->c[i].med[1]);
	}
	for (size_t i = 0; i < a->nunits; i++)
		free(a->units[i]);
	free(a->c);
	free(a->units);
	ab_side_release(&a->side[0]);
	ab_side_release(&a->side[1]);
}
