/* Tests for workloads/mixed_precision: the DP equals brute-force enumeration, the budget
 * holds, fused groups share an option, infeasible budgets are refused, the plan JSON. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_rng.h"
#include "../workloads/mixed_precision.h"
#include "../workloads/quant_rtn.h"
#include "cli_util.h"

enum { MAXL = 8, MAXO = 5 };

struct inst {
	struct mixprec_layer l[MAXL];
	struct mixprec_option o[MAXL][MAXO];
	int nl;
};

/* Random instance: costs are bits of real-looking formats (b in 2..8, groups) so that
 * cheaper options have larger errors most of the time, plus random noise so that is not
 * always so. fused != 0: some layers share a fuse id. */
static void make_inst(struct inst *s, struct ocb_rng *r, int fused)
{
	s->nl = 1 + (int)ocb_rng_below(r, MAXL);
	int nopt = 1 + (int)ocb_rng_below(r, MAXO);
	for (int i = 0; i < s->nl; i++) {
		int out = 8 * (1 + (int)ocb_rng_below(r, 8)), in = 32 * (1 + (int)ocb_rng_below(r, 8));
		struct mixprec_layer *L = &s->l[i];
		snprintf(L->name, sizeof L->name, "layer%d", i);
		L->n = (int64_t)out * in;
		L->fuse = fused ? (int)ocb_rng_below(r, 3) - 1 : -1; /* -1, 0 or 1 */
		L->nopt = fused ? nopt : 1 + (int)ocb_rng_below(r, MAXO);
		L->opt = s->o[i];
		for (int k = 0; k < L->nopt; k++) {
			struct quant_cfg c = {2 + (int)ocb_rng_below(r, 7), 32 << ocb_rng_below(r, 3),
					      (int)ocb_rng_below(r, 2)};
			struct mixprec_option *o = &s->o[i][k];
			snprintf(o->name, sizeof o->name, "rtn_b%d_g%d", c.bits, c.group);
			o->bits = c.bits;
			o->group = c.group;
			o->cost_bits = quant_cost_bits(&c, out, in);
			o->err = L->n * pow(4.0, -c.bits) * (0.5 + ocb_rng_uniform(r));
		}
	}
}

static int64_t cost_range(const struct inst *s, int max)
{
	int64_t t = 0;
	for (int i = 0; i < s->nl; i++) {
		int64_t m = s->l[i].opt[0].cost_bits;
		for (int k = 1; k < s->l[i].nopt; k++) {
			int64_t c = s->l[i].opt[k].cost_bits;
			m = max ? (c > m ? c : m) : (c < m ? c : m);
		}
		t += m;
	}
	return t;
}

static void check_against_bruteforce(int fused)
{
	struct ocb_rng r;
	ocb_rng_seed(&r, 100 + fused);
	int solved = 0, infeasible = 0;
	for (int t = 0; t < 300; t++) {
		struct inst s;
		make_inst(&s, &r, fused);
		int64_t lo = cost_range(&s, 0), hi = cost_range(&s, 1);
		/* budgets from slightly below the cheapest to above the most expensive plan */
		int64_t budget = lo - lo / 20 + (int64_t)(ocb_rng_uniform(&r) * (hi - lo + lo / 10));
		struct mixprec_plan dp, bf;
		int a = mixprec_solve(s.l, s.nl, budget, &dp);
		int b = mixprec_bruteforce(s.l, s.nl, budget, &bf);
		cr_assert_eq(a == OCB_OK, b == OCB_OK, "trial %d: dp %d bf %d", t, a, b);
		if (a != OCB_OK) {
			cr_assert_eq(a, OCB_EINVAL);
			infeasible++;
			continue;
		}
		solved++;
		cr_assert_float_eq(dp.err, bf.err, 1e-9 * (bf.err + 1), "trial %d: dp %.17g bf %.17g",
				   t, dp.err, bf.err);
		cr_assert_leq(dp.bits, budget);
		int64_t bits = 0;
		double err = 0;
		for (int i = 0; i < s.nl; i++) {
			cr_assert(dp.choice[i] >= 0 && dp.choice[i] < s.l[i].nopt);
			bits += s.l[i].opt[dp.choice[i]].cost_bits;
			err += s.l[i].opt[dp.choice[i]].err;
			for (int j = 0; j < i; j++)
				if (s.l[i].fuse >= 0 && s.l[i].fuse == s.l[j].fuse)
					cr_assert_eq(dp.choice[i], dp.choice[j]);
		}
		cr_assert_eq(bits, dp.bits);
		cr_assert_float_eq(err, dp.err, 1e-9 * (err + 1));
		mixprec_plan_release(&dp);
		mixprec_plan_release(&bf);
	}
	cr_assert_gt(solved, 200);
	cr_assert_gt(infeasible, 0);
}

Test(mixprec, dp_equals_bruteforce) { check_against_bruteforce(0); }
Test(mixprec, dp_equals_bruteforce_with_fused_groups) { check_against_bruteforce(1); }

Test(mixprec, uniform_is_feasible_and_plan_is_no_worse)
{
	/* 12 layers, options 2/3/4-bit g128: at the uniform-3-bit budget the optimum costs
	 * at most that and its error is at most the uniform error. */
	struct mixprec_layer l[12];
	struct mixprec_option o[12][3];
	struct ocb_rng r;
	ocb_rng_seed(&r, 5);
	double uni = 0;
	for (int i = 0; i < 12; i++) {
		int out = 128 * (1 + i % 3), in = 256;
		snprintf(l[i].name, sizeof l[i].name, "L%d", i);
		l[i].n = (int64_t)out * in;
		l[i].fuse = i < 3 ? 7 : -1;
		l[i].nopt = 3;
		l[i].opt = o[i];
		double sens = exp(2.0 * ocb_rng_normal(&r)); /* spread sensitivities */
		for (int k = 0; k < 3; k++) {
			struct quant_cfg c = {2 + k, 128, 0};
			snprintf(o[i][k].name, sizeof o[i][k].name, "gptq_b%d_g128", c.bits);
			o[i][k].bits = c.bits;
			o[i][k].group = 128;
			o[i][k].cost_bits = quant_cost_bits(&c, out, in);
			o[i][k].err = sens * l[i].n * pow(4.0, -c.bits);
		}
		uni += o[i][1].err;
	}
	int64_t budget = 0;
	for (int i = 0; i < 12; i++)
		budget += o[i][1].cost_bits;
	cr_assert_eq(mixprec_budget_bits(l, 12, 3.0 + 19.0 / 128), budget);
	struct mixprec_plan p;
	cr_assert_eq(mixprec_solve(l, 12, budget, &p), 0);
	cr_assert_leq(p.bits, budget);
	struct mixprec_plan bf;
	cr_assert_eq(mixprec_bruteforce(l, 12, budget, &bf), 0);
	cr_assert_float_eq(p.err, bf.err, 1e-9 * bf.err);
	mixprec_plan_release(&bf);
	cr_assert_lt(p.err, uni, "plan %g uniform %g bits %lld budget %lld", p.err, uni, (long long)p.bits, (long long)budget);

	char path[128];
	int fd = mkstemp(cli_tmpname(path, sizeof path, "ocb_mixprec"));
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(mixprec_plan_save(path, l, 12, &p), 0);
	cJSON *j = NULL;
	cr_assert_eq(ocb_json_read_file(path, &j), 0, "%s", ocb_lasterr());
	unlink(path);
	cr_assert_float_eq(ocb_json_num(j, "predicted_error", -1), p.err, 1e-9 * p.err);
	cr_assert_float_eq(ocb_json_num(j, "total_bits", -1), (double)p.bits, 0.5);
	cr_assert_float_eq(ocb_json_num(j, "total_bpw", -1), p.bpw, 1e-12);
	cJSON *arr = cJSON_GetObjectItem(j, "layers");
	cr_assert_eq(cJSON_GetArraySize(arr), 12);
	cJSON *e = cJSON_GetArrayItem(arr, 4);
	cr_assert_str_eq(ocb_json_str(e, "name", ""), "L4");
	cr_assert_str_eq(ocb_json_str(e, "method", ""), o[4][p.choice[4]].name);
	cJSON_Delete(j);
	mixprec_plan_release(&p);
}

Test(mixprec, bad_input_and_output_aware_error)
{
	struct mixprec_option o[2] = {{"a", 2, 0, 10, 1.0}, {"b", 4, 0, 20, 0.5}};
	struct mixprec_option o1[1] = {{"c", 3, 0, 15, 0.7}};
	struct mixprec_layer l[2] = {{"x", 5, 3, 2, o}, {"y", 5, 3, 1, o1}};
	struct mixprec_plan p;
	cr_assert_eq(mixprec_solve(l, 2, 100, &p), OCB_EINVAL); /* fused, 2 vs 1 options */
	l[1].fuse = -1;
	cr_assert_eq(mixprec_solve(l, 2, 24, &p), OCB_EINVAL); /* cheapest is 25 */
	cr_assert_eq(mixprec_solve(l, 2, 25, &p), 0);
	cr_assert_eq(p.choice[0], 0);
	mixprec_plan_release(&p);
	cr_assert_eq(mixprec_solve(l, 2, 35, &p), 0);
	cr_assert_eq(p.choice[0], 1);
	cr_assert_float_eq(p.err, 1.2, 1e-12);
	mixprec_plan_release(&p);

	float w[6] = {1, 2, 3, 4, 5, 6}, q[6] = {1, 1, 3, 4, 3, 6}, xsq[3] = {10, 100, 1000};
	/* [2][3]: differences (0,1,0),(0,2,0) -> column 1 squared sum 5 */
	cr_assert_float_eq(mixprec_layer_err(w, q, 2, 3, xsq), 500.0, 1e-9);
	cr_assert_float_eq(mixprec_layer_err(w, q, 2, 3, NULL), 5.0, 1e-9);
}
