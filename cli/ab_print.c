/* ab_print: the verdicts of `ocbench ab` as a table or JSON (see ab.h). */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/ab_plan.h"
#include "ab.h"

/* "suite/bench/params|variant|threads" -> its parts (into caller's buffers). */
static void split_key(const char *key, char *unit, size_t nu, char *variant, size_t nv,
		      int *threads)
{
	const char *b1 = strchr(key, '|'), *b2 = b1 ? strchr(b1 + 1, '|') : NULL;
	snprintf(unit, nu, "%.*s", b1 ? (int)(b1 - key) : (int)strlen(key), key);
	snprintf(variant, nv, "%.*s", b1 && b2 ? (int)(b2 - b1 - 1) : 0, b1 ? b1 + 1 : "");
	*threads = b2 ? atoi(b2 + 1) : 0;
}

static void count_verdicts(const struct ab *a, size_t count[5], size_t *warn)
{
	memset(count, 0, 5 * sizeof *count);
	*warn = 0;
	for (size_t i = 0; i < a->n; i++) {
		count[a->c[i].st.verdict]++;
		*warn += a->c[i].st.mde_warn;
	}
}

static void drift_of(const struct ab *a, struct ocb_canary_drift *d)
{
	ocb_canary_drift((const double(*)[OCB_CANARY_N])a->canary, a->o.stat.threshold, d);
}

static void print_text(const struct ab *a)
{
	size_t count[5], warn;
	char unit[512], variant[64];
	int threads;
	printf("ab: base %s, cand %s: %zu cases, %zu rounds (%zu adaptive), per-round %s, %s "
	       "children, %.0f s\n", a->o.spec[0], a->o.spec[1], a->n, a->rounds, a->extra_rounds,
	       a->o.use_median ? "median" : "min", a->serve ? "serving" : "`run`", a->wall_s);
	printf("%-58s %-7s %3s %3s %7s %17s %9s %6s  %s\n", "case", "variant", "thr", "n",
	       "ratio", "95% CI", "p", "MDE", "verdict");
	for (size_t i = 0; i < a->n; i++) {
		const struct ocb_ab_stats *s = &a->c[i].st;
		split_key(a->c[i].key, unit, sizeof unit, variant, sizeof variant, &threads);
		printf("%-58.58s %-7.7s %3d %3zu %7.4f [%7.4f, %7.4f] %9.2g %5.1f%%  %s%s\n", unit,
		       variant, threads, s->n, s->ratio, s->lo, s->hi, s->p, 100 * s->mde,
		       ocb_verdict_name(s->verdict), s->mde_warn ? " (MDE > threshold)" : "");
	}
	count_verdicts(a, count, &warn);
	printf("%zu slower, %zu faster, %zu noise, %zu same (%zu of them with MDE > threshold "
	       "%.3g%%), %zu n/a\n",
	       count[OCB_V_SLOWER], count[OCB_V_FASTER], count[OCB_V_NOISE], count[OCB_V_SAME],
	       warn, 100 * a->o.stat.threshold, count[OCB_V_NA]);
	if (!a->have_canary)
		return;
	struct ocb_canary_drift d;
	drift_of(a, &d);
	printf("canaries (time ratio vs start, worst of mid/end):");
	for (int k = 0; k < OCB_CANARY_N; k++)
		printf(" %s %.3f", ocb_canary_name[k] + 7, d.ratio[k]);
	printf("\n");
	if (d.drifted)
		printf("warning: the machine drifted during ab: %s changed by x%.3f (> threshold "
		       "%.3g%%); interleaving shares the drift between both sides, but the MDE grows\n",
		       ocb_canary_name[d.worst_k], d.ratio[d.worst_k], 100 * a->o.stat.threshold);
}

static cJSON *case_json(const struct ab_case *c, size_t rounds)
{
	char unit[512], variant[64];
	int threads;
	const struct ocb_ab_stats *s = &c->st;
	cJSON *j = cJSON_CreateObject();
	split_key(c->key, unit, sizeof unit, variant, sizeof variant, &threads);
	cJSON_AddStringToObject(j, "case", unit);
	cJSON_AddStringToObject(j, "variant", variant);
	cJSON_AddNumberToObject(j, "threads", threads);
	cJSON_AddNumberToObject(j, "rounds", (double)s->n);
	cJSON_AddNumberToObject(j, "ratio", s->ratio);
	cJSON_AddNumberToObject(j, "ratio_lo", s->lo);
	cJSON_AddNumberToObject(j, "ratio_hi", s->hi);
	cJSON_AddNumberToObject(j, "p", s->p);
	cJSON_AddNumberToObject(j, "mde", s->mde);
	cJSON_AddNumberToObject(j, "mde_sequential", s->mde_seq);
	cJSON_AddNumberToObject(j, "var_within", s->var_w);
	cJSON_AddNumberToObject(j, "var_between", s->var_b);
	cJSON_AddStringToObject(j, "verdict", ocb_verdict_name(s->verdict));
	cJSON_AddBoolToObject(j, "mde_above_threshold", s->mde_warn);
	/* The per-round medians (null: not measured), for re-analysis. */
	for (int side = 0; side < 2; side++) {
		cJSON *arr = cJSON_AddArrayToObject(j, side ? "cand_s" : "base_s");
		for (size_t r = 0; r < rounds; r++)
			cJSON_AddItemToArray(arr, isnan(c->med[side][r])
							 ? cJSON_CreateNull()
							 : cJSON_CreateNumber(c->med[side][r]));
	}
	return j;
}

static int print_json(const struct ab *a)
{
	size_t count[5], warn;
	cJSON *j = cJSON_CreateObject(), *cs = cJSON_AddArrayToObject(j, "cases");
	cJSON_AddStringToObject(j, "base", a->o.spec[0]);
	cJSON_AddStringToObject(j, "cand", a->o.spec[1]);
	cJSON_AddNumberToObject(j, "rounds", (double)a->rounds);
	cJSON_AddNumberToObject(j, "adaptive_rounds", (double)a->extra_rounds);
	cJSON_AddStringToObject(j, "stat", a->o.use_median ? "median" : "min");
	cJSON_AddNumberToObject(j, "wall_s", a->wall_s);
	/* "serve": long-lived children (run --serve); "run": one `run` child per block */
	cJSON_AddStringToObject(j, "children", a->serve ? "serve" : "run");
	cJSON_AddNumberToObject(j, "setups", (double)a->setups);
	cJSON_AddNumberToObject(j, "setups_again", (double)a->setups_again);
	cJSON_AddNumberToObject(j, "respawns", (double)a->respawns);
	cJSON_AddNumberToObject(j, "threshold", a->o.stat.threshold);
	cJSON_AddNumberToObject(j, "alpha", a->o.stat.alpha);
	cJSON_AddNumberToObject(j, "base_run", (double)a->run_id[0]);
	cJSON_AddNumberToObject(j, "cand_run", (double)a->run_id[1]);
	for (size_t i = 0; i < a->n; i++)
		cJSON_AddItemToArray(cs, case_json(&a->c[i], a->rounds));
	count_verdicts(a, count, &warn);
	cJSON *cnt = cJSON_AddObjectToObject(j, "counts");
	for (int v = 0; v < 5; v++)
		cJSON_AddNumberToObject(cnt, ocb_verdict_name((enum ocb_verdict)v), (double)count[v]);
	cJSON_AddNumberToObject(cnt, "same_mde_above_threshold", (double)warn);
	if (a->have_canary) {
		struct ocb_canary_drift d;
		drift_of(a, &d);
		cJSON *cn = cJSON_AddObjectToObject(j, "canaries");
		for (int k = 0; k < OCB_CANARY_N; k++) {
			cJSON *x = cJSON_AddObjectToObject(cn, ocb_canary_name[k]);
			cJSON_AddStringToObject(x, "unit", ocb_canary_unit[k]);
			for (int p = 0; p < OCB_CANARY_NPOINT; p++)
				cJSON_AddNumberToObject(x, ocb_canary_point[p], a->canary[p][k]);
			cJSON_AddNumberToObject(x, "drift_ratio", d.ratio[k]);
		}
		cJSON_AddBoolToObject(j, "drift_warning", d.drifted);
	}
	return cli_print_json("ab", j, 0);
}

int ab_print(const struct ab *a, int json)
{
	if (json)
		return print_json(a);
	print_text(a);
	return 0;
}
