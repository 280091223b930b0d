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

/* The units of a solve: a fused group or a lone layer, in order of first appearance,
 * with each option's summed cost and error and the cheapest cost of units u.. . */
struct units {
	int nu, maxopt;
	int *unit_of;     /* [nl] layer -> unit */
	int *lead;        /* [nu] unit -> its first layer */
	int64_t *ucost;   /* [nu][maxopt] */
	double *uerr;     /* [nu][maxopt] */
	int64_t *minrest; /* [nu + 1] cheapest cost of units u..nu-1 */
};

static void units_release(struct units *un)
{
	free(un->unit_of);
	free(un->lead);
	free(un->ucost);
	free(un->uerr);
	free(un->minrest);
}

static int units_build(const struct mixprec_layer *l, int nl, struct units *un)
{
	memset(un, 0, sizeof *un);
	un->unit_of = malloc((size_t)nl * sizeof *un->unit_of);
	un->lead = malloc((size_t)nl * sizeof *un->lead);
	if (!un->unit_of || !un->lead)
		return ocb_seterr(OCB_ENOMEM, "mixprec: out of memory");
	for (int i = 0; i < nl; i++) {
		un->maxopt = l[i].nopt > un->maxopt ? l[i].nopt : un->maxopt;
		un->unit_of[i] = -1;
		for (int j = 0; j < i && l[i].fuse >= 0; j++)
			if (l[j].fuse == l[i].fuse) {
				un->unit_of[i] = un->unit_of[j];
				break;
			}
		if (un->unit_of[i] < 0) {
			un->lead[un->nu] = i;
			un->unit_of[i] = un->nu++;
		}
	}
	const int nu = un->nu, maxopt = un->maxopt;
	un->ucost = calloc((size_t)nu * maxopt, sizeof *un->ucost);
	un->uerr = calloc((size_t)nu * maxopt, sizeof *un->uerr);
	un->minrest = calloc((size_t)nu + 1, sizeof *un->minrest);
	if (!un->ucost || !un->uerr || !un->minrest)
		return ocb_seterr(OCB_ENOMEM, "mixprec: out of memory");
	for (int i = 0; i < nl; i++)
		for (int k = 0; k < l[i].nopt; k++) {
			un->ucost[(size_t)un->unit_of[i] * maxopt + k] += l[i].opt[k].cost_bits;
			un->uerr[(size_t)un->unit_of[i] * maxopt + k] += l[i].opt[k].err;
		}
	for (int u = nu - 1; u >= 0; u--) {
		int64_t m = INT64_MAX;
		for (int k = 0; k < l[un->lead[u]].nopt; k++)
			m = un->ucost[(size_t)u * maxopt + k] < m ? un->ucost[(size_t)u * maxopt + k] : m;
		un->minrest[u] = un->minrest[u + 1] + m;
	}
	return OCB_OK;
}

/* The frontiers of all levels, in one growing array: level[u]..level[u+1] is the
 * frontier after unit u-1 (level 0: the empty plan). */
struct frontier {
	struct state *fr;
	size_t nfr, cap;
	int *level; /* [nu + 2] */
};

/* Appends the Pareto frontier after unit u (cand: a scratch buffer the caller frees). */
static int frontier_extend(struct frontier *f, const struct units *un, int u, int nopt,
			   int64_t budget_bits, struct state **cand)
{
	int p0 = f->level[u], p1 = f->level[u + 1];
	size_t nc = 0, want = (size_t)(p1 - p0) * nopt;
	if (want > (size_t)MIXPREC_MAX_STATES)
		return ocb_seterr(OCB_ENOMEM, "mixprec: frontier too large (%zu states)", want);
	free(*cand);
	if (!(*cand = malloc(want * sizeof **cand)))
		return ocb_seterr(OCB_ENOMEM, "mixprec: out of memory");
	struct state *cd = *cand;
	for (int s = p0; s < p1; s++)
		for (int k = 0; k < nopt; k++) {
			int64_t c = f->fr[s].cost + un->ucost[(size_t)u * un->maxopt + k];
			if (c + un->minrest[u + 1] > budget_bits)
				continue; /* cannot be completed within the budget */
			cd[nc++] = (struct state){c, f->fr[s].err + un->uerr[(size_t)u * un->maxopt + k],
						  s, k};
		}
	qsort(cd, nc, sizeof *cd, cmp_state);
	/* Pareto sweep: keep a state only if its error beats every cheaper one. */
	double best = INFINITY;
	for (size_t i = 0; i < nc; i++) {
		if (!(cd[i].err < best))
			continue;
		best = cd[i].err;
		if (f->nfr == f->cap) {
			struct state *t = realloc(f->fr, 2 * f->cap * sizeof *f->fr);
			if (!t)
				return ocb_seterr(OCB_ENOMEM, "mixprec: out of memory");
			f->fr = t;
			f->cap *= 2;
		}
		f->fr[f->nfr++] = cd[i];
	}
	f->level[u + 2] = (int)f->nfr;
	return OCB_OK;
}

int mixprec_solve(const struct mixprec_layer *l, int nl, int64_t budget_bits,
		  struct mixprec_plan *plan)
{
	int st = check_layers(l, nl);
	if (st)
		return st;
	memset(plan, 0, sizeof *plan);

	struct units un;
	struct frontier f = {NULL, 1, 1024, NULL};
	struct state *cand = NULL;
	if ((st = units_build(l, nl, &un)))
		goto out;
	const int nu = un.nu;
	if (un.minrest[0] > budget_bits) {
		st = ocb_seterr(OCB_EINVAL, "mixprec: budget %lld bits is below the cheapest plan "
				"(%lld bits)", (long long)budget_bits, (long long)un.minrest[0]);
		goto out;
	}
	f.level = calloc((size_t)nu + 2, sizeof *f.level);
	f.fr = malloc(f.cap * sizeof *f.fr);
	if (!f.level || !f.fr)
		goto nomem;
	f.fr[0] = (struct state){0, 0.0, -1, -1};
	f.level[0] = 0;
	f.level[1] = 1;
	for (int u = 0; u < nu; u++)
		if ((st = frontier_extend(&f, &un, u, l[un.lead[u]].nopt, budget_bits, &cand)))
			goto out;

	/* The last state of the final frontier has the smallest error. */
	plan->choice = malloc((size_t)nl * sizeof *plan->choice);
	if (!plan->choice)
		goto nomem;
	int s = f.level[nu + 1] - 1;
	plan->err = f.fr[s].err;
	for (int u = nu - 1; u >= 0; u--) {
		for (int i = 0; i < nl; i++)
			if (un.unit_of[i] == u)
				plan->choice[i] = f.fr[s].opt;
		s = f.fr[s].parent;
	}
	plan->nlayers = nl;
	plan->budget_bits = budget_bits;
	plan_totals(l, nl, plan);
	st = OCB_OK;
	goto out;
nomem:
	st = ocb_seterr(OCB_ENOMEM, "mixprec: out of memory");
out:
	units_release(&un);
	free(f.level);
	free(f.fr);
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
