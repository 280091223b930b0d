/* mixed_precision: exact per-layer candidate choice under a bit budget (see header). */
#include "mixed_precision.h"

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIXPREC_MAX_STATES (1L << 24)

int64_t mixprec_budget_bits(const struct mixprec_layer *l, int nl, double bpw)
{
	int64_t n = 0;
	for (int i = 0; i < nl; i++)
		n += l[i].n;
	/* long double: bpw * n exact for every bpw we use (dyadic, n < 2^40) */
	return (int64_t)floorl((long double)bpw * (long double)n);
}

void mixprec_plan_release(struct mixprec_plan *p)
{
	if (!p)
		return;
	free(p->choice);
	p->choice = NULL;
}

static int check_layers(const struct mixprec_layer *l, int nl)
{
	if (!l || nl <= 0)
		return ocb_seterr(OCB_EINVAL, "mixprec: no layers");
	for (int i = 0; i < nl; i++) {
		if (l[i].nopt <= 0 || !l[i].opt || l[i].n <= 0)
			return ocb_seterr(OCB_EINVAL, "mixprec: layer %d (%s) has no options or no "
					  "weights", i, l[i].name);
		for (int k = 0; k < l[i].nopt; k++)
			if (l[i].opt[k].cost_bits <= 0 || !(l[i].opt[k].err >= 0.0))
				return ocb_seterr(OCB_EINVAL, "mixprec: layer %s option %d: cost %lld, "
						  "error %g", l[i].name, k,
						  (long long)l[i].opt[k].cost_bits, l[i].opt[k].err);
		for (int j = 0; j < i; j++)
			if (l[i].fuse >= 0 && l[j].fuse == l[i].fuse && l[j].nopt != l[i].nopt)
				return ocb_seterr(OCB_EINVAL, "mixprec: fused layers %s and %s list "
						  "%d and %d options", l[j].name, l[i].name, l[j].nopt,
						  l[i].nopt);
	}
	return OCB_OK;
}

static void plan_totals(const struct mixprec_layer *l, int nl, struct mixprec_plan *p)
{
	int64_t n = 0;
	p->bits = 0;
	for (int i = 0; i < nl; i++) {
		p->bits += l[i].opt[p->choice[i]].cost_bits;
		n += l[i].n;
	}
	p->bpw = (double)p->bits / (double)n;
}

/* A partial plan over units 0..u: its cost, error, and how it was reached. */
struct state {
	int64_t cost;
	double err;
	int parent; /* index into the previous unit's frontier (-1 at the root) */
	int opt;
};

static int cmp_state(const void *a, const void *b)
{
	const struct state *x = a, *y = b;
	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	if (x->err != y->err)
		return x->err < y->err ? -1 : 1;
	return 0;
}

int mixprec_solve(const struct mixprec_layer *l, int nl, int64_t budget_bits,
		  struct mixprec_plan *plan)
{
	int st = check_layers(l, nl);
	if (st)
		return st;
	memset(plan, 0, sizeof *plan);

	/* Units: a fused group or a lone layer, in order of first appearance. */
	int *unit_of = NULL, *lead = NULL, *level = NULL;
	int64_t *ucost = NULL, *minrest = NULL;
	double *uerr = NULL;
	struct state *fr = NULL, *cand = NULL;
	int maxopt = 0, nu = 0;
	unit_of = malloc((size_t)nl * sizeof *unit_of);
	lead = malloc((size_t)nl * sizeof *lead);
	if (!unit_of || !lead)
		goto nomem;
	for (int i = 0; i < nl; i++) {
		maxopt = l[i].nopt > maxopt ? l[i].nopt : maxopt;
		unit_of[i] = -1;
		for (int j = 0; j < i && l[i].fuse >= 0; j++)
			if (l[j].fuse == l[i].fuse) {
				unit_of[i] = unit_of[j];
				break;
			}
		if (unit_of[i] < 0) {
			lead[nu] = i;
			unit_of[i] = nu++;
		}
	}
	ucost = calloc((size_t)nu * maxopt, sizeof *ucost);
	uerr = calloc((size_t)nu * maxopt, sizeof *uerr);
	minrest = calloc((size_t)nu + 1, sizeof *minrest);
	level = calloc((size_t)nu + 2, sizeof *level);
	if (!ucost || !uerr || !minrest || !level)
		goto nomem;
	for (int i = 0; i < nl; i++)
		for (int k = 0; k < l[i].nopt; k++) {
			ucost[(size_t)unit_of[i] * maxopt + k] += l[i].opt[k].cost_bits;
			uerr[(size_t)unit_of[i] * maxopt + k] += l[i].opt[k].err;
		}
	for (int u = nu - 1; u >= 0; u--) {
		int64_t m = INT64_MAX;
		for (int k = 0; k < l[lead[u]].nopt; k++)
			m = ucost[(size_t)u * maxopt + k] < m ? ucost[(size_t)u * maxopt + k] : m;
		minrest[u] = minrest[u + 1] + m;
	}
	if (minrest[0] > budget_bits) {
		st = ocb_seterr(OCB_EINVAL, "mixprec: budget %lld bits is below the cheapest plan "
				"(%lld bits)", (long long)budget_bits, (long long)minrest[0]);
		goto out;
	}

	/* Frontiers of all levels live in fr; level[u]..level[u+1] is the frontier after
	 * unit u-1 (level 0: the empty plan). */
	size_t cap = 1024, nfr = 1;
	fr = malloc(cap * sizeof *fr);
	if (!fr)
		goto nomem;
	fr[0] = (struct state){0, 0.0, -1, -1};
	level[0] = 0;
	level[1] = 1;
	for (int u = 0; u < nu; u++) {
		int p0 = level[u], p1 = level[u + 1], nopt = l[lead[u]].nopt;
		size_t nc = 0, want = (size_t)(p1 - p0) * nopt;
		if (want > (size_t)MIXPREC_MAX_STATES) {
			st = ocb_seterr(OCB_ENOMEM, "mixprec: frontier too large (%zu states)", want);
			goto out;
		}
		free(cand);
		cand = malloc(want * sizeof *cand);
		if (!cand)
			goto nomem;
		for (int s = p0; s < p1; s++)
			for (int k = 0; k < nopt; k++) {
				int64_t c = fr[s].cost + ucost[(size_t)u * maxopt + k];
				if (c + minrest[u + 1] > budget_bits)
					continue; /* cannot be completed within the budget */
				cand[nc++] = (struct state){c, fr[s].err + uerr[(size_t)u * maxopt + k],
							    s, k};
			}
		qsort(cand, nc, sizeof *cand, cmp_state);
		/* Pareto sweep: keep a state only if its error beats every cheaper one. */
		double best = INFINITY;
		for (size_t i = 0; i < nc; i++) {
			if (!(cand[i].err < best))
				continue;
			best = cand[i].err;
			if (nfr == cap) {
				struct state *t = realloc(fr, 2 * cap * sizeof *fr);
				if (!t)
					goto nomem;
				fr = t;
				cap *= 2;
			}
			fr[nfr++] = cand[i];
		}
		level[u + 2] = (int)nfr;
	}

	/* The last state of the final frontier has the smallest error. */
	plan->choice = malloc((size_t)nl * sizeof *plan->choice);
	if (!plan->choice)
		goto nomem;
	int s = level[nu + 1] - 1;
	plan->err = fr[s].err;
	for (int u = nu - 1; u >= 0; u--) {
		for (int i = 0; i < nl; i++)
			if (unit_of[i] == u)
				plan->choice[i] = fr[s].opt;
		s = fr[s].parent;
	}
	plan->nlayers = nl;
	plan->budget_bits = budget_bits;
	plan_totals(l, nl, plan);
	st = OCB_OK;
	goto out;
nomem:
	st = ocb_seterr(OCB_ENOMEM, "mixprec: out of memory");
out:
	free(unit_of);
	free(lead);
	free(level);
	free(ucost);
	free(minrest);
	free(uerr);
	free(fr);
	free(cand);
	if (st)
		mixprec_plan_release(plan);
	return st;
}

int mixprec_bruteforce(const struct mixprec_layer *l, int nl, int64_t budget_bits,
		       struct mixprec_plan *plan)
{
	int st = check_layers(l, nl);
	if (st)
		return st;
	memset(plan, 0, sizeof *plan);
	double combos = 1.0;
	for (int i = 0; i < nl; i++)
		combos *= l[i].nopt;
	if (combos > (double)MIXPREC_MAX_STATES)
		return ocb_seterr(OCB_EINVAL, "mixprec: %g assignments are too many to enumerate",
				  combos);
	int *idx = calloc((size_t)nl, sizeof *idx);
	plan->choice = malloc((size_t)nl * sizeof *plan->choice);
	if (!idx || !plan->choice) {
		free(idx);
		mixprec_plan_release(plan);
		return ocb_seterr(OCB_ENOMEM, "mixprec: out of memory");
	}
	double best = INFINITY;
	int64_t best_cost = 0;
	for (;;) {
		int ok = 1;
		int64_t c = 0;
		double e = 0.0;
		for (int i = 0; i < nl && ok; i++) {
			for (int j = 0; j < i; j++)
				if (l[i].fuse >= 0 && l[j].fuse == l[i].fuse && idx[j] != idx[i])
					ok = 0;
			c += l[i].opt[idx[i]].cost_bits;
			e += l[i].opt[idx[i]].err;
		}
		if (ok && c <= budget_bits && (e < best || (e == best && c < best_cost))) {
			best = e;
			best_cost = c;
			memcpy(plan->choice, idx, (size_t)nl * sizeof *idx);
		}
		int i = 0; /* mixed-radix increment */
		while (i < nl && ++idx[i] == l[i].nopt)
			idx[i++] = 0;
		if (i == nl)
			break;
	}
	free(idx);
	if (best == INFINITY) {
		mixprec_plan_release(plan);
		return ocb_seterr(OCB_EINVAL, "mixprec: no assignment fits %lld bits",
				  (long long)budget_bits);
	}
	plan->nlayers = nl;
	plan->err = best;
	plan->budget_bits = budget_bits;
	plan_totals(l, nl, plan);
	return OCB_OK;
}

double mixprec_layer_err(const float *w, const float *q, int out, int in, const float *xsq)
{
	double total = 0.0;
	for (int j = 0; j < in; j++) {
		double col = 0.0;
		for (int i = 0; i < out; i++) {
			double d = (double)w[(size_t)i * in + j] - q[(size_t)i * in + j];
			col += d * d;
		}
		total += (xsq ? xsq[j] : 1.0) * col;
	}
	return total;
}

cJSON *mixprec_plan_json(const struct mixprec_layer *l, int nl, const struct mixprec_plan *p)
{
	int64_t n = 0;
	for (int i = 0; i < nl; i++)
		n += l[i].n;
	cJSON *root = cJSON_CreateObject(), *arr = NULL;
	if (!root)
		return NULL;
	cJSON_AddNumberToObject(root, "budget_bits", (double)p->budget_bits);
	cJSON_AddNumberToObject(root, "budget_bpw", (double)p->budget_bits / (double)n);
	cJSON_AddNumberToObject(root, "total_bits", (double)p->bits);
	cJSON_AddNumberToObject(root, "total_bpw", p->bpw);
	cJSON_AddNumberToObject(root, "predicted_error", p->err);
	arr = cJSON_AddArrayToObject(root, "layers");
	if (!arr)
		goto fail;
	for (int i = 0; i < nl; i++) {
		const struct mixprec_option *o = &l[i].opt[p->choice[i]];
		cJSON *e = cJSON_CreateObject();
		if (!e)
			goto fail;
		cJSON_AddItemToArray(arr, e);
		cJSON_AddStringToObject(e, "name", l[i].name);
		cJSON_AddNumberToObject(e, "n", (double)l[i].n);
		cJSON_AddStringToObject(e, "method", o->name);
		cJSON_AddNumberToObject(e, "bits", o->bits);
		cJSON_AddNumberToObject(e, "group", o->group);
		cJSON_AddNumberToObject(e, "bpw", (double)o->cost_bits / (double)l[i].n);
		cJSON_AddNumberToObject(e, "cost_bits", (double)o->cost_bits);
		if (!cJSON_AddNumberToObject(e, "error", o->err))
			goto fail;
	}
	return root;
fail:
	cJSON_Delete(root);
	return NULL;
}

int mixprec_plan_save(const char *path, const struct mixprec_layer *l, int nl,
		      const struct mixprec_plan *p)
{
	int st = OCB_OK;
	char *text = NULL;
	FILE *f = NULL;
	cJSON *j = mixprec_plan_json(l, nl, p);
	if (!j || !(text = cJSON_Print(j))) {
		st = ocb_seterr(OCB_ENOMEM, "mixprec: cannot build the plan JSON");
		goto out;
	}
	f = fopen(path, "w");
	if (!f) {
		st = ocb_seterr(errno == EACCES ? OCB_EPERM : OCB_EIO, "%s: %s", path,
				strerror(errno));
		goto out;
	}
	if (fputs(text, f) < 0 || fputc('\n', f) == EOF) {
		st = ocb_seterr(OCB_EIO, "%s: write failed", path);
		goto out;
	}
out:
	if (f && fclose(f) != 0 && st == OCB_OK)
		st = ocb_seterr(OCB_EIO, "%s: close failed", path);
	free(text);
	cJSON_Delete(j);
	return st;
}
