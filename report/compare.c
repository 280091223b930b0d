#define _GNU_SOURCE
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../db/pairs.h"
#include "../db/store_query.h"
#include "ab_verdict.h"
#include "mde.h"
#include "mwu.h"
#include "rdata.h"

/* collect/canary.h's stable metric keys (a store contract, like column names). */
const char *const ocb_cmp_canary_key[OCB_CMP_NCANARY] = {"canary_fma", "canary_read_l3",
							 "canary_read_dram", "canary_sgemm"};

void ocb_cmp_defaults(struct ocb_cmp_opts *o)
{
	o->threshold = 0.05;
	o->alpha = 0.01;
	o->noise_floor = 0.01;
	o->history = 1;
}

const char *ocb_verdict_name(enum ocb_verdict v)
{
	static const char *names[] = {"same", "noise", "faster", "slower", "n/a"};
	return v <= OCB_V_NA ? names[v] : "?";
}

int ocb_cmp_resolve(struct ocb_store *s, const char *spec, int64_t *run_id)
{
	int rc = ocb_store_run_resolve(s, spec, run_id);
	if (rc != OCB_ENOENT)
		return rc;
	return ocb_db_machine_latest_run(s, spec, run_id);
}

void ocb_cmp_release(struct ocb_cmp *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->c[i].params);
	free(c->c);
	c->c = NULL;
	c->n = 0;
	for (int side = 0; side < 2; side++) {
		ocb_case_rows_release(c->only[side], c->nonly[side]);
		c->only[side] = NULL;
		c->nonly[side] = 0;
	}
}

/* The canary farthest from 1 of ratio[] (index), -1 when none. */
static int worst_canary(const double ratio[OCB_CMP_NCANARY])
{
	int w = -1;
	for (int k = 0; k < OCB_CMP_NCANARY; k++)
		if (ratio[k] > 0 && (w < 0 || fabs(log(ratio[k])) > fabs(log(ratio[w]))))
			w = k;
	return w;
}

/* Warnings about what the comparison could see: cases whose MDE is above the
 * threshold, and a machine that drifted (the canaries) by more than the threshold. */
static void add_noise_warnings(struct ocb_cmp *c)
{
	const struct ocb_cmp_canaries *k = &c->can;
	if (c->nmde_above && c->nwarn < OCB_CMP_MAXWARN)
		snprintf(c->warn[c->nwarn++], sizeof c->warn[0],
			 "%zu of %zu cases have a minimal detectable effect above the threshold "
			 "%.1f%% (column MDE): 'same' there only means 'no change larger than its MDE'",
			 c->nmde_above, c->n, 100 * c->opts.threshold);
	for (int r = 0; r < 2; r++) {
		int w = worst_canary(k->within[r]);
		if (k->drift_within[r] && w >= 0 && c->nwarn < OCB_CMP_MAXWARN)
			snprintf(c->warn[c->nwarn++], sizeof c->warn[0],
				 "drift: the machine changed during the %s run: %s took x%.3f its "
				 "start time at a later checkpoint (more than the threshold %.1f%%)",
				 r ? "cand" : "base", ocb_cmp_canary_key[w], k->within[r][w],
				 100 * c->opts.threshold);
	}
	int w = worst_canary(k->between);
	if (k->drift_between && w >= 0 && c->nwarn < OCB_CMP_MAXWARN)
		snprintf(c->warn[c->nwarn++], sizeof c->warn[0],
			 "drift: the machine itself differed between the runs: %s time ratio "
			 "cand/base %.3f (more than the threshold %.1f%%); verdicts may show the "
			 "machine, not the code",
			 ocb_cmp_canary_key[w], k->between[w], 100 * c->opts.threshold);
}

/* Warnings about what is being compared: the same run twice, quick against full. */
static void add_warnings(struct ocb_cmp *c)
{
	if (c->base_run == c->cand_run)
		snprintf(c->warn[c->nwarn++], sizeof c->warn[0],
			 "comparing run %lld with itself: every case is 'same' by construction",
			 (long long)c->base_run);
	if (c->base.quick >= 0 && c->cand.quick >= 0 && c->base.quick != c->cand.quick)
		snprintf(c->warn[c->nwarn++], sizeof c->warn[0],
			 "base run %lld is %s, cand run %lld is %s: their sizes and budgets differ "
			 "(%zu + %zu cases not compared)",
			 (long long)c->base_run, ocb_run_mode(&c->base), (long long)c->cand_run,
			 ocb_run_mode(&c->cand), c->nonly[0], c->nonly[1]);
	if (c->nonly[0] + c->nonly[1] && c->nwarn < OCB_CMP_MAXWARN)
		snprintf(c->warn[c->nwarn++], sizeof c->warn[0],
			 "%zu case(s) in base only and %zu in cand only were not compared (listed "
			 "below)",
			 c->nonly[0], c->nonly[1]);
	add_noise_warnings(c);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Between-run noise of case k: 3 sigma (sigma = 1.4826 MAD) of the log medians of its
 * earlier runs on the base machine `bm` (not the candidate run), as a relative change,
 * and sigma^2 into *var_b; 0 and NaN with fewer than 3 runs. */
static int history_band(struct ocb_store *db, int64_t bm, int64_t cand,
			const struct ocb_cmp_case *k, double *band, double *var_b, int *nhist)
{
	double v[64], dev[64];
	int n = 0;
	int rc = ocb_db_case_medians(db, bm, k->bench, k->params, k->threads, k->variant, cand, v,
				     64, &n);
	*band = 0.0;
	*var_b = NAN;
	*nhist = n;
	if (rc || n < 3)
		return rc;
	for (int i = 0; i < n; i++)
		v[i] = log(v[i]);
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
	for (int i = 0; i < n; i++)
		dev[i] = fabs(v[i] - med);
	qsort(dev, (size_t)n, sizeof *dev, cmp_double);
	double mad = n % 2 ? dev[n / 2] : 0.5 * (dev[n / 2 - 1] + dev[n / 2]);
	*band = exp(3.0 * 1.4826 * mad) - 1.0;
	*var_b = (1.4826 * mad) * (1.4826 * mad);
	return OCB_OK;
}

/* What compare keeps apart from the cases while it judges them. */
struct cmp_work {
	struct ocb_store *db;
	int64_t bm;                 /* the base run's machine */
	struct ocb_mceil mc[2];     /* ceilings of the base and cand machines */
	double *bs, *cs;            /* samples of the current pair */
	size_t bcap, ccap;
	double logsum;
	size_t nlog;
};

/* The MDE of a sequential comparison of case k (compare.h): within-run variance from the
 * samples in w->bs / w->cs, between-run variance var_b (NaN: unknown, lower bound). */
static void sequential_mde(const struct cmp_work *w, struct ocb_cmp_case *k, double var_b,
			   const struct ocb_cmp_opts *o)
{
	double vb = ocb_mde_var_log(w->bs, k->nbase), vc = ocb_mde_var_log(w->cs, k->ncand);
	double var_w = isnan(vb) ? vc : isnan(vc) ? vb : 0.5 * (vb + vc);
	k->mde_lb = isnan(var_b);
	k->mde = ocb_mde_rel(ocb_mde_se_sequential(var_w, k->nbase, k->ncand, var_b), o->alpha,
			     OCB_MDE_POWER);
}

/* Case k of an A/B pair: its samples are the per-round values of both sides in round
 * order, judged by ab's paired test at compare's alpha and threshold. */
static int judge_paired(struct cmp_work *w, struct ocb_cmp_case *k, struct ocb_cmp *out)
{
	struct ocb_ab_opts ao;
	struct ocb_ab_stats st;
	ocb_ab_defaults(&ao);
	ao.alpha = out->opts.alpha;
	ao.threshold = out->opts.threshold;
	int rc = ocb_ab_eval(w->bs, w->cs, k->nbase, &ao, &st);
	if (rc != OCB_OK)
		return rc;
	k->paired = 1;
	k->ratio = st.ratio;
	k->ratio_lo = st.lo;
	k->ratio_hi = st.hi;
	k->p = st.p;
	k->u = st.w_plus;
	k->mde = st.mde;
	k->band = out->opts.threshold;
	k->verdict = st.verdict;
	out->count[k->verdict]++;
	if (k->ratio > 0) {
		w->logsum += log(k->ratio);
		w->nlog++;
	}
	return OCB_OK;
}

/* The case of pair p, appended to out->c[out->n] (room for it is there): ratios, the
 * samples' Mann-Whitney U test and the verdict against the threshold band. */
static int judge_pair(struct cmp_work *w, const struct ocb_result_pair *p, struct ocb_cmp *out)
{
	struct ocb_cmp_case *k = &out->c[out->n];
	int rc;
	memset(k, 0, sizeof *k);
	snprintf(k->bench, sizeof k->bench, "%s", p->b.bench);
	if (!(k->params = strdup(p->b.params)))
		return ocb_seterr(OCB_ENOMEM, "compare");
	out->n++;
	snprintf(k->variant, sizeof k->variant, "%s", p->b.variant);
	k->threads = p->b.threads;
	snprintf(k->unit, sizeof k->unit, "%s", p->b.unit);
	k->base_median = p->b.median;
	k->cand_median = p->c.median;
	k->base_roof = ocb_rrow_roof_frac(&p->b, &w->mc[0]);
	k->cand_roof = ocb_rrow_roof_frac(&p->c, &w->mc[1]);
	snprintf(k->base_suspect, sizeof k->base_suspect, "%s", p->b.suspect);
	snprintf(k->cand_suspect, sizeof k->cand_suspect, "%s", p->c.suspect);
	/* convert the candidate to the base's unit if they differ (both times) */
	double scale = 1;
	double us_b = ocb_unit_seconds(k->unit), us_c = ocb_unit_seconds(p->c.unit);
	if (us_b > 0 && us_c > 0)
		scale = us_c / us_b;
	double blo = p->b.ci_low, bhi = p->b.ci_high, clo = p->c.ci_low, chi = p->c.ci_high;
	k->ratio = k->base_median > 0 ? scale * k->cand_median / k->base_median : NAN;
	k->ratio_lo = bhi > 0 ? scale * clo / bhi : NAN;
	k->ratio_hi = blo > 0 ? scale * chi / blo : NAN;

	if ((rc = ocb_db_samples(w->db, p->base_id, &w->bs, &w->bcap, &k->nbase)) ||
	    (rc = ocb_db_samples(w->db, p->cand_id, &w->cs, &w->ccap, &k->ncand)))
		return rc;
	for (size_t i = 0; i < k->ncand; i++)
		w->cs[i] *= scale;
	int lower_is_better = us_b > 0;
	if (out->ab_pair && k->nbase == k->ncand && lower_is_better)
		return judge_paired(w, k, out);
	struct ocb_mwu m;
	if ((rc = ocb_mwu_test(w->bs, k->nbase, w->cs, k->ncand, &m)))
		return rc;
	k->u = m.u;
	k->p = m.p;
	double floor = fmax(out->opts.threshold, out->opts.noise_floor), hband = 0, var_b = NAN;
	if (out->opts.history && !out->cross_machine) {
		if ((rc = history_band(w->db, w->bm, out->cand_run, k, &hband, &var_b, &k->nhist)))
			return rc;
		floor = fmax(floor, hband);
	}
	k->band = floor;
	sequential_mde(w, k, var_b, &out->opts);
	if (isnan(k->p) || isnan(k->ratio))
		k->verdict = OCB_V_NA;
	else if (k->p >= out->opts.alpha)
		k->verdict = OCB_V_SAME;
	/* A change counts only when the whole ratio CI clears the threshold band: the
	 * medians of two runs on a shared VM drift by several percent between runs
	 * (REFERENCE.md §6), which the within-run samples of one run cannot show. */
	else if (k->ratio_lo > 1 + floor)
		k->verdict = lower_is_better ? OCB_V_SLOWER : OCB_V_FASTER;
	else if (k->ratio_hi < 1 - floor)
		k->verdict = lower_is_better ? OCB_V_FASTER : OCB_V_SLOWER;
	else
		k->verdict = OCB_V_NOISE;
	out->count[k->verdict]++;
	if (k->ratio > 0) {
		w->logsum += log(k->ratio);
		w->nlog++;
	}
	return OCB_OK;
}

/* The runs, their hosts and labels, and both machines' ceilings. */
static int cmp_setup(struct cmp_work *w, int64_t base, int64_t cand, struct ocb_cmp *out)
{
	int rc;
	if ((rc = ocb_run_load(w->db, base, &out->base)) ||
	    (rc = ocb_run_load(w->db, cand, &out->cand)))
		return rc;
	snprintf(out->base_host, sizeof out->base_host, "%.63s", out->base.machine_host);
	snprintf(out->cand_host, sizeof out->cand_host, "%.63s", out->cand.machine_host);
	snprintf(out->base_label, sizeof out->base_label, "%.63s", out->base.label);
	snprintf(out->cand_label, sizeof out->cand_label, "%.63s", out->cand.label);
	w->bm = out->base.machine_id;
	out->cross_machine = out->base.machine_id != out->cand.machine_id;
	int64_t ids[2] = {out->base.machine_id, out->cand.machine_id};
	return ocb_mceil_load(w->db, ids, 2, w->mc);
}

static double log_dev(double r)
{
	return r > 0 && isfinite(r) ? fabs(log(r)) : -1;
}

static double median3(const double *v, int n)
{
	double s[OCB_CMP_NPOINT];
	int m = 0;
	for (int i = 0; i < n; i++)
		if (v[i] > 0)
			s[m++] = v[i];
	qsort(s, (size_t)m, sizeof *s, cmp_double);
	return m == 0 ? NAN : m % 2 ? s[m / 2] : 0.5 * (s[m / 2 - 1] + s[m / 2]);
}

/* The canaries' ratios within each run and between the runs, and the drift flags at the
 * threshold (compare.h). Pure. */
void ocb_cmp_canary_drift(struct ocb_cmp_canaries *c, double threshold)
{
	double lim = log1p(threshold), worst = -1;
	c->worst = NAN;
	c->drift_within[0] = c->drift_within[1] = c->drift_between = 0;
	for (int k = 0; k < OCB_CMP_NCANARY; k++) {
		for (int r = 0; r < 2; r++) {
			c->within[r][k] = NAN;
			for (int pt = 1; c->have[r] && pt < OCB_CMP_NPOINT; pt++) {
				double x = c->rate[r][0][k] / c->rate[r][pt][k];
				if (log_dev(x) > log_dev(c->within[r][k]))
					c->within[r][k] = x;
			}
			if (log_dev(c->within[r][k]) > lim)
				c->drift_within[r] = 1;
			if (log_dev(c->within[r][k]) > worst) {
				worst = log_dev(c->within[r][k]);
				c->worst = c->within[r][k];
			}
		}
		double mb[OCB_CMP_NPOINT], mc[OCB_CMP_NPOINT];
		for (int pt = 0; pt < OCB_CMP_NPOINT; pt++) {
			mb[pt] = c->rate[0][pt][k];
			mc[pt] = c->rate[1][pt][k];
		}
		c->between[k] = c->have[0] && c->have[1] ? median3(mb, 3) / median3(mc, 3) : NAN;
		if (log_dev(c->between[k]) > lim)
			c->drift_between = 1;
		if (log_dev(c->between[k]) > worst) {
			worst = log_dev(c->between[k]);
			c->worst = c->between[k];
		}
	}
}

/* Each run's A/B link and canaries. */
static int load_context(struct ocb_store *db, struct ocb_cmp *out)
{
	int64_t id[2] = {out->base_run, out->cand_run};
	int rc = OCB_OK;
	for (int r = 0; r < 2 && rc == OCB_OK; r++) {
		if ((rc = ocb_db_run_ab_link(db, id[r], &out->ab[r])))
			break;
		for (int k = 0; k < OCB_CMP_NCANARY && rc == OCB_OK; k++) {
			double v[OCB_CMP_NPOINT];
			rc = ocb_db_run_metric_steps(db, id[r], "canary", ocb_cmp_canary_key[k], v,
						     OCB_CMP_NPOINT);
			for (int pt = 0; pt < OCB_CMP_NPOINT; pt++) {
				out->can.rate[r][pt][k] = v[pt];
				out->can.have[r] |= v[pt] > 0;
			}
		}
	}
	out->ab_pair = out->ab[0].present && out->ab[1].present &&
		       out->ab[0].other_run == out->cand_run && out->ab[1].other_run == out->base_run;
	ocb_cmp_canary_drift(&out->can, out->opts.threshold);
	return rc;
}

int ocb_cmp_runs(struct ocb_store *db, int64_t base, int64_t cand, const struct ocb_cmp_opts *o,
		 struct ocb_cmp *out)
{
	struct cmp_work w;
	struct ocb_result_pair *pairs = NULL;
	size_t np = 0;
	int64_t *used = NULL, last_b = -1;
	size_t nused = 0;
	int rc;

	memset(out, 0, sizeof *out);
	memset(&w, 0, sizeof w);
	w.db = db;
	if (o)
		out->opts = *o;
	else
		ocb_cmp_defaults(&out->opts);
	out->base_run = base;
	out->cand_run = cand;
	out->geomean = NAN;
	if ((rc = cmp_setup(&w, base, cand, out)) || (rc = load_context(db, out)) ||
	    (rc = ocb_db_result_pairs(db, base, cand, &pairs, &np)))
		goto out;
	/* Pairs of the same case; same variant first, each result used once. */
	if (!(used = calloc(np + 1, sizeof *used)) || !(out->c = calloc(np + 1, sizeof *out->c))) {
		rc = ocb_seterr(OCB_ENOMEM, "compare");
		goto out;
	}
	for (size_t i = 0; i < np; i++) {
		int taken = pairs[i].base_id == last_b;
		for (size_t j = 0; j < nused && !taken; j++)
			taken = used[j] == pairs[i].cand_id;
		if (taken)
			continue;
		last_b = pairs[i].base_id;
		used[nused++] = pairs[i].cand_id;
		if ((rc = judge_pair(&w, &pairs[i], out)))
			goto out;
	}
	out->geomean = w.nlog ? exp(w.logsum / (double)w.nlog) : NAN;
	for (size_t i = 0; i < out->n; i++)
		out->nmde_above += out->c[i].mde > out->opts.threshold;
	if ((rc = ocb_db_unpaired(db, base, cand, &out->only[0], &out->nonly[0])) ||
	    (rc = ocb_db_unpaired(db, cand, base, &out->only[1], &out->nonly[1])))
		goto out;
	add_warnings(out);
out:
	if (rc)
		ocb_cmp_release(out);
	ocb_mceil_release(&w.mc[0]);
	ocb_mceil_release(&w.mc[1]);
	ocb_result_pairs_release(pairs, np);
	free(used);
	free(w.bs);
	free(w.cs);
	return rc;
}

#define PARAMS_MAX 40 /* widest params column; longer params are cut visibly */

/* params as shown in the table: whole when it fits, else its head + "...[k]" where [k]
 * is its line in the legend under the table (*nlegend counts them). */
static const char *params_cell(const char *p, size_t width, int *nlegend, char *buf, size_t len)
{
	if (strlen(p) <= width)
		return p;
	char mark[16];
	int m = snprintf(mark, sizeof mark, "...[%d]", ++*nlegend);
	snprintf(buf, len, "%.*s%s", (int)(width - (size_t)m), p, mark);
	return buf;
}

static void print_run(FILE *f, const char *side, const struct ocb_run *r)
{
	fprintf(f, "%s: run %lld %.8s on %s%s%s%s, %s, %s, commit %s\n", side, (long long)r->id,
		r->uuid, r->machine_host, r->label[0] ? " (label " : "", r->label,
		r->label[0] ? ")" : "", r->shown, ocb_run_mode(r),
		r->git_sha[0] ? r->git_sha : "-");
}

static void print_only(const struct ocb_cmp *c, FILE *f)
{
	for (int side = 0; side < 2; side++) {
		if (!c->nonly[side])
			continue;
		fprintf(f, "\nin %s only (run %lld; no ok result of the case in the other run), "
			   "not compared: %zu\n",
			side ? "cand" : "base", (long long)(side ? c->cand_run : c->base_run),
			c->nonly[side]);
		for (size_t i = 0; i < c->nonly[side]; i++) {
			const struct ocb_case_row *o = &c->only[side][i];
			fprintf(f, "  %s %s threads=%d %s%s\n", o->bench, o->params, o->threads,
				o->variant, strcmp(o->status, "ok") ? o->status : "");
		}
	}
}

/* The A/B pair line: which pair, how many rounds, the paired test. */
static void print_pair(const struct ocb_cmp *c, FILE *f)
{
	for (int r = 0; r < 2; r++)
		if (c->ab[r].present && !c->ab_pair)
			fprintf(f, "%s is the %s side of A/B pair %.8s (other side: run %lld)\n",
				r ? "cand" : "base", c->ab[r].side, c->ab[r].pair,
				(long long)c->ab[r].other_run);
	if (!c->ab_pair)
		return;
	fprintf(f, "interleaved A/B pair %.8s (ocbench ab): %ld rounds (%ld adaptive), per-round "
		   "%s; cases with the same rounds on both sides are judged by the paired test\n"
		   "(Wilcoxon signed-rank on log(cand/base) per round, bootstrap CI of the median "
		   "ratio; p column), the band is the threshold\n",
		c->ab[0].pair, c->ab[0].rounds, c->ab[0].adaptive_rounds,
		c->ab[0].stat[0] ? c->ab[0].stat : "median");
}

/* The drift canaries: their time ratios within each run and between the runs. */
static void print_canaries(const struct ocb_cmp *c, FILE *f)
{
	const struct ocb_cmp_canaries *k = &c->can;
	if (!k->have[0] && !k->have[1]) {
		fprintf(f, "canaries: none stored in either run (runs before canaries, or "
			   "OCBENCH_NO_CANARIES)\n");
		return;
	}
	fprintf(f, "canaries (time ratios; start -> worst later checkpoint within a run, cand/base "
		   "between runs):\n");
	for (int i = 0; i < OCB_CMP_NCANARY; i++)
		fprintf(f, "  %-18s within base %6.3f  within cand %6.3f  between %6.3f\n",
			ocb_cmp_canary_key[i], k->within[0][i], k->within[1][i], k->between[i]);
}

int ocb_cmp_print(const struct ocb_cmp *c, FILE *f)
{
	size_t pw = strlen("params"), bw = strlen("case");
	int nleg = 0;
	char cut[PARAMS_MAX + 1];
	for (size_t i = 0; i < c->n; i++) {
		size_t l = strlen(c->c[i].params), b = strlen(c->c[i].bench);
		pw = l > pw ? (l < PARAMS_MAX ? l : PARAMS_MAX) : pw;
		bw = b > bw ? b : bw;
	}
	for (int i = 0; i < c->nwarn; i++)
		fprintf(f, "warning: %s\n", c->warn[i]);
	print_run(f, "base", &c->base);
	print_run(f, "cand", &c->cand);
	print_pair(c, f);
	fprintf(f, "threshold %.1f%%, alpha %g, Mann-Whitney U on raw samples; ratio = cand/base "
		   "median, CI from the medians' 95%% CIs;\nband = max(threshold, 1%% floor%s): the "
		   "whole ratio CI must clear it\n",
		100 * c->opts.threshold, c->opts.alpha,
		c->opts.history && !c->cross_machine ? ", 3 sigma of the case's earlier runs here" : "");
	fprintf(f, "MDE: the smallest change this comparison could detect (alpha, 80%% power); "
		   "'>=': no earlier runs of the case here, between-run noise unknown\n");
	print_canaries(c, f);
	fputc('\n', f);
	fprintf(f, "%-*s %-*s %3s %11s %11s %7s %17s %9s %6s %7s %-7s %-5s", (int)bw, "case",
		(int)pw, "params", "thr", "base", "cand", "ratio", "ratio CI", "p", "band", "MDE",
		"verdict", "flag");
	if (c->cross_machine)
		fprintf(f, " %9s %9s", "roof base", "roof cand");
	fputc('\n', f);
	for (size_t i = 0; i < c->n; i++) {
		const struct ocb_cmp_case *k = &c->c[i];
		char ci[40];
		snprintf(ci, sizeof ci, "[%.3f, %.3f]", k->ratio_lo, k->ratio_hi);
		char mde[16];
		snprintf(mde, sizeof mde, "%s%.1f%%", k->mde_lb ? ">=" : "", 100 * k->mde);
		fprintf(f, "%-*s %-*s %3d %9.4g%-2.2s %9.4g%-2.2s %7.3f %17s %9.2g %5.1f%% %7s %-7s",
			(int)bw, k->bench, (int)pw, params_cell(k->params, pw, &nleg, cut, sizeof cut),
			k->threads, k->base_median, k->unit, k->cand_median, k->unit, k->ratio, ci, k->p,
			100 * k->band, isnan(k->mde) ? "-" : mde, ocb_verdict_name(k->verdict));
		/* flagged at the source (collect/suspect.h): which side; reasons listed below */
		fprintf(f, " %-5s", k->base_suspect[0] && k->cand_suspect[0] ? "both!"
				    : k->base_suspect[0]			 ? "base!"
				    : k->cand_suspect[0]			 ? "cand!"
										 : "");
		if (c->cross_machine)
			fprintf(f, " %8.1f%% %8.1f%%", 100 * k->base_roof, 100 * k->cand_roof);
		fputc('\n', f);
	}
	if (nleg) { /* the full parameters of every cut cell, in the order of the marks */
		fputs("\nparams cut above ([k]: in full):\n", f);
		for (size_t i = 0, k = 0; i < c->n; i++)
			if (strlen(c->c[i].params) > pw)
				fprintf(f, "  [%zu] %s\n", ++k, c->c[i].params);
	}
	size_t nflag = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct ocb_cmp_case *k = &c->c[i];
		for (int side = 0; side < 2; side++) {
			const char *why = side ? k->cand_suspect : k->base_suspect;
			if (!why[0])
				continue;
			if (!nflag++)
				fprintf(f, "\nflagged when measured (suspect; the verdict may not hold):\n");
			fprintf(f, "  %s %s t=%d %s: %s\n", k->bench, k->params, k->threads,
				side ? "cand" : "base", why);
		}
	}
	fprintf(f, "\n%zu cases: %zu slower, %zu faster, %zu same, %zu noise, %zu n/a; "
		   "geometric mean of ratios %.4f\n",
		c->n, c->count[OCB_V_SLOWER], c->count[OCB_V_FASTER], c->count[OCB_V_SAME],
		c->count[OCB_V_NOISE], c->count[OCB_V_NA], c->geomean);
	print_only(c, f);
	return ferror(f) ? ocb_seterr(OCB_EIO, "compare: write failed") : OCB_OK;
}

static void add_num(cJSON *o, const char *k, double v)
{
	if (isnan(v) || isinf(v))
		cJSON_AddNullToObject(o, k);
	else
		cJSON_AddNumberToObject(o, k, v);
}

/* "ab_pair" (the pair, rounds, per-round stat; null for ordinary runs) and "canaries". */
static void add_context_json(cJSON *o, const struct ocb_cmp *c)
{
	if (c->ab_pair) {
		cJSON *p = cJSON_AddObjectToObject(o, "ab_pair");
		cJSON_AddStringToObject(p, "pair", c->ab[0].pair);
		cJSON_AddNumberToObject(p, "rounds", (double)c->ab[0].rounds);
		cJSON_AddNumberToObject(p, "adaptive_rounds", (double)c->ab[0].adaptive_rounds);
		cJSON_AddStringToObject(p, "stat", c->ab[0].stat);
	} else {
		cJSON_AddNullToObject(o, "ab_pair");
	}
	const struct ocb_cmp_canaries *k = &c->can;
	cJSON *cn = cJSON_AddObjectToObject(o, "canaries");
	for (int i = 0; cn && i < OCB_CMP_NCANARY; i++) {
		cJSON *x = cJSON_AddObjectToObject(cn, ocb_cmp_canary_key[i]);
		add_num(x, "within_base", k->within[0][i]);
		add_num(x, "within_cand", k->within[1][i]);
		add_num(x, "between", k->between[i]);
	}
	cJSON_AddBoolToObject(o, "drift_within_base", k->drift_within[0]);
	cJSON_AddBoolToObject(o, "drift_within_cand", k->drift_within[1]);
	cJSON_AddBoolToObject(o, "drift_between", k->drift_between);
}

cJSON *ocb_cmp_json(const struct ocb_cmp *c)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "base_run", (double)c->base_run);
	cJSON_AddNumberToObject(o, "cand_run", (double)c->cand_run);
	cJSON_AddStringToObject(o, "base_host", c->base_host);
	cJSON_AddStringToObject(o, "cand_host", c->cand_host);
	cJSON_AddBoolToObject(o, "cross_machine", c->cross_machine);
	add_num(o, "threshold", c->opts.threshold);
	add_num(o, "alpha", c->opts.alpha);
	add_num(o, "geomean_ratio", c->geomean);
	cJSON *cnt = cJSON_AddObjectToObject(o, "counts");
	for (int v = 0; cnt && v <= OCB_V_NA; v++)
		cJSON_AddNumberToObject(cnt, ocb_verdict_name(v), (double)c->count[v]);
	cJSON *w = cJSON_AddArrayToObject(o, "warnings");
	for (int i = 0; w && i < c->nwarn; i++)
		cJSON_AddItemToArray(w, cJSON_CreateString(c->warn[i]));
	cJSON_AddNumberToObject(o, "cases_mde_above_threshold", (double)c->nmde_above);
	add_context_json(o, c);
	cJSON_AddStringToObject(o, "base_mode", ocb_run_mode(&c->base));
	cJSON_AddStringToObject(o, "cand_mode", ocb_run_mode(&c->cand));
	cJSON_AddStringToObject(o, "base_status", c->base.shown);
	cJSON_AddStringToObject(o, "cand_status", c->cand.shown);
	for (int side = 0; side < 2; side++) {
		cJSON *a = cJSON_AddArrayToObject(o, side ? "cand_only" : "base_only");
		for (size_t i = 0; a && i < c->nonly[side]; i++) {
			const struct ocb_case_row *x = &c->only[side][i];
			cJSON *e = cJSON_CreateObject();
			if (!e || !cJSON_AddItemToArray(a, e)) {
				cJSON_Delete(e);
				break;
			}
			cJSON_AddStringToObject(e, "bench", x->bench);
			cJSON_AddStringToObject(e, "params", x->params);
			cJSON_AddNumberToObject(e, "threads", x->threads);
			cJSON_AddStringToObject(e, "variant", x->variant);
			cJSON_AddStringToObject(e, "status", x->status);
		}
	}
	if (!(arr = cJSON_AddArrayToObject(o, "cases"))) {
		cJSON_Delete(o);
		return NULL;
	}
	for (size_t i = 0; i < c->n; i++) {
		const struct ocb_cmp_case *k = &c->c[i];
		cJSON *e = cJSON_CreateObject();
		if (!e || !cJSON_AddItemToArray(arr, e)) {
			cJSON_Delete(e);
			cJSON_Delete(o);
			return NULL;
		}
		cJSON_AddStringToObject(e, "bench", k->bench);
		cJSON_AddStringToObject(e, "params", k->params);
		cJSON_AddStringToObject(e, "variant", k->variant);
		cJSON_AddNumberToObject(e, "threads", k->threads);
		cJSON_AddStringToObject(e, "unit", k->unit);
		add_num(e, "base_median", k->base_median);
		add_num(e, "cand_median", k->cand_median);
		add_num(e, "ratio", k->ratio);
		add_num(e, "ratio_ci_low", k->ratio_lo);
		add_num(e, "ratio_ci_high", k->ratio_hi);
		add_num(e, "mwu_u", k->u);
		add_num(e, "p", k->p);
		cJSON_AddNumberToObject(e, "n_base", (double)k->nbase);
		cJSON_AddNumberToObject(e, "n_cand", (double)k->ncand);
		cJSON_AddStringToObject(e, "verdict", ocb_verdict_name(k->verdict));
		add_num(e, "band", k->band);
		add_num(e, "mde", k->mde);
		cJSON_AddBoolToObject(e, "mde_lower_bound", k->mde_lb);
		cJSON_AddBoolToObject(e, "paired", k->paired);
		cJSON_AddNumberToObject(e, "history_runs", k->nhist);
		add_num(e, "base_roofline_frac", k->base_roof);
		add_num(e, "cand_roofline_frac", k->cand_roof);
		if (k->base_suspect[0])
			cJSON_AddStringToObject(e, "base_suspect", k->base_suspect);
		else
			cJSON_AddNullToObject(e, "base_suspect");
		if (k->cand_suspect[0])
			cJSON_AddStringToObject(e, "cand_suspect", k->cand_suspect);
		else
			cJSON_AddNullToObject(e, "cand_suspect");
	}
	return o;
}
