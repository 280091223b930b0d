/* compare: is run CAND slower than run BASE? Per case, statistically
 * (REFERENCE.md §3; the approach of LNT, asv and Google Benchmark's compare.py).
 *
 * A case is (bench, params_json, threads) present with status 'ok' in both runs (when
 * a run holds several variants of one case, the same variant is paired first). Per case:
 *   ratio     = median(CAND) / median(BASE)
 *   ratio CI  = [CAND ci_low / BASE ci_high, CAND ci_high / BASE ci_low], from the two
 *               stored 95% CIs of the medians: conservative (covers at least ~90%
 *               jointly), needs no resampling and is reproducible
 *   p         = two-sided Mann-Whitney U on the raw samples (mwu.h)
 *   verdict   = same    p >= alpha (no evidence of a change)
 *               slower  p < alpha and the whole ratio CI beyond the threshold band
 *                       1 +- max(threshold, 1% noise floor), worse (time up / rate down)
 *               faster  the same, better
 *               noise   p < alpha but the ratio CI reaches into the band
 * The band of a case is widened by its between-run noise when the store holds >= 3
 * complete runs of it on the base machine (CAND excluded): 3 sigma of the log of their
 * medians, sigma = 1.4826 MAD (robust). The medians of one case drift between runs on a
 * shared machine by more than its within-run samples show (LNT estimates a per-test
 * noise level from earlier runs the same way); with fewer runs the band is the
 * threshold alone.
 *               n/a     a side has no samples
 * When BASE and CAND are the two runs of one `ocbench ab` pair (db/run_ab.h), each case
 * with as many rounds on both sides is judged by the paired test of ab instead
 * (report/ab_verdict.h: Wilcoxon signed-rank on the per-round log ratios, bootstrap CI
 * of the median ratio; the history band is not used). Every case carries its minimal
 * detectable effect (below), and the drift canaries of both runs are compared: a
 * warning when the machine itself moved by more than the threshold.
 * and the geometric mean of the ratios over all cases. Cases without an ok counterpart
 * are listed per side (in base only / in cand only), never dropped silently; comparing
 * a quick run with a full one, or a run with itself, gives a warning. When BASE and CAND ran on
 * different machines, each case also carries its fraction of its own machine's
 * roofline bound, so hardware differences can be told from code differences. */
#ifndef OCB_COMPARE_H
#define OCB_COMPARE_H

#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "../db/pairs.h"
#include "../db/run_ab.h"
#include "../db/records.h"
#include "../db/store.h"

enum ocb_verdict { OCB_V_SAME = 0, OCB_V_NOISE, OCB_V_FASTER, OCB_V_SLOWER, OCB_V_NA };

struct ocb_cmp_opts {
	double threshold;   /* relative change that matters (default 0.05) */
	double alpha;       /* significance level (default 0.01) */
	double noise_floor; /* changes below this are noise whatever p says (0.01, LNT) */
	int history;        /* widen each case's band by its between-run noise on the base
			       machine, from earlier runs in the store (default 1) */
};

struct ocb_cmp_case {
	char bench[64], variant[32], unit[16];
	char *params;                   /* owned */
	int threads;
	size_t nbase, ncand;            /* samples */
	double base_median, cand_median;
	double ratio, ratio_lo, ratio_hi;
	double u, p;
	double base_roof, cand_roof;    /* fraction of own machine's roofline bound, or NaN */
	char base_suspect[256], cand_suspect[256]; /* result.suspect of each side, "" if none */
	double band;                    /* the relative change this case must clear */
	int nhist;                      /* earlier runs its between-run noise came from */
	/* Minimal detectable effect (report/mde.h) at alpha and 80% power: the smallest
	 * relative change this comparison could have seen. Sequential runs: se^2 =
	 * 2 var_b + var_w (1/n_base + 1/n_cand), var_w the robust variance of the log
	 * samples (mean of both sides), var_b the between-run variance of the case's log
	 * median from its earlier runs here (sigma = 1.4826 MAD, >= 3 runs); without them
	 * var_b is unknown, taken as 0, and mde is a lower bound (mde_lb). An A/B pair:
	 * the paired MDE of its per-round ratios (ab_verdict.h). */
	double mde;
	int mde_lb;
	int paired;                     /* judged as an A/B pair (signed-rank on rounds) */
	enum ocb_verdict verdict;
};

/* The drift canaries of the two runs (metrics of workload "canary", collect/canary_run.h):
 * rates [run 0 base / 1 cand][checkpoint start/mid/end][canary]. */
#define OCB_CMP_NCANARY 4
#define OCB_CMP_NPOINT 3
extern const char *const ocb_cmp_canary_key[OCB_CMP_NCANARY];
struct ocb_cmp_canaries {
	int have[2];                    /* the run stored canaries */
	double rate[2][OCB_CMP_NPOINT][OCB_CMP_NCANARY];
	/* within each run: time ratio start/checkpoint farthest from 1 over mid and end */
	double within[2][OCB_CMP_NCANARY];
	/* between the runs: time ratio cand/base of the canary's median over checkpoints
	 * (> 1: the machine ran it slower during CAND) */
	double between[OCB_CMP_NCANARY];
	int drift_within[2], drift_between; /* |log ratio| > log(1 + threshold) somewhere */
	double worst;                   /* the ratio farthest from 1 of all the above */
};

/* A case of one run with no ok counterpart in the other: not compared. */
#define OCB_CMP_MAXWARN 8

struct ocb_cmp {
	int64_t base_run, cand_run;
	struct ocb_run base, cand;      /* the runs as readers show them (db/records.h) */
	struct ocb_case_row *only[2];     /* [0] in base only, [1] in cand only */
	size_t nonly[2];
	char warn[OCB_CMP_MAXWARN][256]; /* quick vs full, a run with itself, ... */
	int nwarn;
	char base_host[64], cand_host[64];
	char base_label[64], cand_label[64];
	int cross_machine;
	struct ocb_cmp_opts opts;
	struct ocb_cmp_case *c;
	size_t n;
	double geomean;                 /* of ratios; NaN with no cases */
	size_t count[5];                /* per verdict */
	struct ocb_ab_link ab[2];       /* each run's A/B link (db/run_ab.h) */
	int ab_pair;                    /* base and cand are the two sides of one A/B pair */
	struct ocb_cmp_canaries can;
	size_t nmde_above;              /* cases whose MDE exceeds the threshold */
};

void ocb_cmp_defaults(struct ocb_cmp_opts *o);
/* Fills within/between/drift/worst of *c from c->have and c->rate (pure). */
void ocb_cmp_canary_drift(struct ocb_cmp_canaries *c, double threshold);
const char *ocb_verdict_name(enum ocb_verdict v);

/* Resolves BASE/CAND text into a run id: a run id, uuid (prefix), label or "latest"
 * (ocb_store_run_resolve), else a machine (hostname or fingerprint prefix >= 4) -> that
 * machine's newest complete run. Errors: OCB_ENOENT, OCB_EINVAL, OCB_EDB. */
int ocb_cmp_resolve(struct ocb_store *s, const char *spec, int64_t *run_id);

/* Compares two runs. *out is released with ocb_cmp_release(). */
int ocb_cmp_runs(struct ocb_store *db, int64_t base, int64_t cand, const struct ocb_cmp_opts *o,
		 struct ocb_cmp *out);
void ocb_cmp_release(struct ocb_cmp *c);

/* A text table for people. */
int ocb_cmp_print(const struct ocb_cmp *c, FILE *f);
/* The same as JSON; caller frees with cJSON_Delete(). NULL on allocation failure. */
cJSON *ocb_cmp_json(const struct ocb_cmp *c);

#endif
