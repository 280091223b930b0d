/* mixed_precision: per-layer bit-width / format assignment under a storage budget
 * (OneComp's "AutoBit", REFERENCE.md §1): choose one candidate c_l per layer minimising
 * sum_l e_l(c_l) subject to sum_l bits_l(c_l) <= budget, exactly.
 *
 * Costs are exact integers (bits of storage incl. scales and zeros: quant_cost_bits(),
 * quant_ternary_cost_bits(), or a ggml block format's bytes*8 per block), so the
 * constraint sum bpw_l n_l <= B sum n_l is checked without rounding. The solver is a
 * dynamic program over layers that keeps, after each layer, the Pareto frontier of
 * partial plans (cost, error) — cheaper-or-equal and strictly-better-error states only,
 * and only those that can still be completed within the budget. It is exact for any
 * integer costs; its state count never exceeds that of a knapsack DP over costs scaled
 * by their gcd (at most one state per distinct reachable cost), and at our sizes (<= ~100
 * layers x ~8 options) it is tiny.
 *
 * Fused groups: layers with the same fuse id >= 0 (q/k/v; gate/up) must take the same
 * option index; they must list the same number of options, in the same order. */
#ifndef MIXED_PRECISION_H
#define MIXED_PRECISION_H

#include <cJSON.h>
#include <stdint.h>

struct mixprec_option {
	char name[32];     /* candidate, e.g. "gptq_b3_g128", "q4_0" */
	int bits;          /* nominal code bits (information for the plan) */
	int group;         /* group size (information; 0 if not applicable) */
	int64_t cost_bits; /* exact storage of this layer with this candidate, > 0 */
	double err;        /* e_l(c) >= 0 (output-aware or Frobenius, see below) */
};

struct mixprec_layer {
	char name[64];
	int64_t n;                      /* weights in the layer (> 0) */
	int fuse;                       /* -1: alone; same id >= 0: same option index */
	int nopt;                       /* >= 1 */
	const struct mixprec_option *opt; /* [nopt], borrowed */
};

struct mixprec_plan {
	int nlayers;
	int *choice;         /* [nlayers] chosen option index; owned, freed by _release */
	double err;          /* sum of the chosen errors (the predicted error) */
	int64_t bits;        /* sum of the chosen costs */
	int64_t budget_bits;
	double bpw;          /* bits / sum n */
};

/* The budget in bits for `bpw` bits per weight over all layers: floor(bpw * sum n). */
int64_t mixprec_budget_bits(const struct mixprec_layer *l, int nl, double bpw);

/* Exact optimum. On OCB_OK *plan is filled (caller calls mixprec_plan_release).
 * OCB_EINVAL: bad layers / fuse groups with different option counts, or no plan fits the
 * budget (detail names the minimum cost). OCB_ENOMEM if the frontier would exceed
 * 2^24 states. */
int mixprec_solve(const struct mixprec_layer *l, int nl, int64_t budget_bits,
		  struct mixprec_plan *plan);

/* The same optimum by enumerating every assignment (tests; prod(nopt) must be <= 2^24). */
int mixprec_bruteforce(const struct mixprec_layer *l, int nl, int64_t budget_bits,
		       struct mixprec_plan *plan);

void mixprec_plan_release(struct mixprec_plan *plan);

/* Output-aware error (OneComp; the diagonal approximation of ||X W^T - X Q^T||^2):
 * sum_j xsq[j] * sum_i (w - q)_ij^2, w, q [out][in], xsq [in] = diag(X^T X).
 * xsq == NULL: the Frobenius error ||W - Q||_F^2. */
double mixprec_layer_err(const float *w, const float *q, int out, int in, const float *xsq);

/* The plan as JSON: {"budget_bits","budget_bpw","total_bits","total_bpw",
 * "predicted_error","layers":[{"name","n","method","bits","group","bpw","cost_bits",
 * "error"}]}. Caller frees with cJSON_Delete(); NULL on allocation failure. */
cJSON *mixprec_plan_json(const struct mixprec_layer *l, int nl, const struct mixprec_plan *p);

/* Writes mixprec_plan_json() to `path` (pretty-printed). OCB_OK, OCB_EPERM/OCB_EIO,
 * OCB_ENOMEM. */
int mixprec_plan_save(const char *path, const struct mixprec_layer *l, int nl,
		      const struct mixprec_plan *p);

#endif
