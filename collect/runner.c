#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_uuid.h"
#include "../common/ocb_json.h"
#include "../common/ocb_log.h"
#include "../common/ocb_rng.h"
#include "../common/ocb_time.h"
#include "artifact.h"
#include "canary_run.h"
#include "ceiling_llc.h"
#include "ceilings.h"
#include "ceilings_store.h"
#include "counters.h"
#include "host.h"
#include "progress.h"
#include "registry.h"
#include "roof_beaten.h"
#include "suspect.h"

volatile int ocb_runner_stop;


struct sink_ctx {
	struct ocb_store *s;
	int64_t run_id;
	const char *bench;  /* the case running now */
	char finals[2048];  /* its final metrics (step < 0), "key value unit; ..." */
	size_t nfinals;
};

static int sink_put(void *ctx, const char *workload, long step, const char *key, double value,
		    const char *unit)
{
	struct sink_ctx *c = ctx;
	/* A workload's own final numbers are echoed under its result line. */
	if (step < 0 && c->bench && strcmp(workload, c->bench) == 0 && c->nfinals < sizeof c->finals) {
		int k = snprintf(c->finals + c->nfinals, sizeof c->finals - c->nfinals, "%s%s %.6g%s%s",
				 c->nfinals ? "; " : "", key, value, unit && *unit ? " " : "",
				 unit ? unit : "");
		if (k > 0)
			c->nfinals += (size_t)k;
	}
	return ocb_store_metric(c->s, c->run_id, workload, step, key, value, unit);
}

static int sink_ident(void *ctx, const char *workload, const char *ident_json)
{
	struct sink_ctx *c = ctx;
	return ocb_store_workload_ident(c->s, c->run_id, workload, ident_json);
}

static int ensure_dir(const char *path)
{
	if (mkdir(path, 0777) == 0 || errno == EEXIST) {
		struct stat st;
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && access(path, W_OK) == 0)
			return OCB_OK;
	}
	return ocb_seterr(OCB_EPERM, "%s: cannot create or write the output folder", path);
}

/* The run's options as canonical JSON, stored in run.config_json. Caller frees. */
static char *config_json(const struct ocb_run_opts *o)
{
	cJSON *c = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(c, "suites");
	for (int i = 0; i < o->nsuites; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(o->suites[i]));
	cJSON_AddBoolToObject(c, "quick", o->quick);
	cJSON_AddNumberToObject(c, "seed", (double)o->seed);
	cJSON_AddNumberToObject(c, "target_ci", o->harness.target_ci);
	cJSON_AddNumberToObject(c, "budget_s", o->harness.budget_s);
	cJSON_AddNumberToObject(c, "min_reps", (double)o->harness.min_reps);
	cJSON_AddNumberToObject(c, "max_reps", (double)o->harness.max_reps);
	cJSON_AddNumberToObject(c, "passes", o->passes > 1 ? o->passes : 1);
	cJSON_AddBoolToObject(c, "papi", !o->no_papi);
	cJSON *ev = cJSON_AddArrayToObject(c, "events");
	for (int i = 0; i < o->nevents; i++)
		cJSON_AddItemToArray(ev, cJSON_CreateString(o->events[i]));
	cJSON *th = cJSON_AddArrayToObject(c, "threads");
	for (int i = 0; i < o->nthreads; i++)
		cJSON_AddItemToArray(th, cJSON_CreateNumber(o->threads[i]));
	cJSON_AddNumberToObject(c, "default_threads", o->default_threads);
	if (o->data_dir)
		cJSON_AddStringToObject(c, "data_dir", o->data_dir);
	if (o->harness.slow_bench) {
		cJSON_AddStringToObject(c, "inject_slowdown_bench", o->harness.slow_bench);
		cJSON_AddNumberToObject(c, "inject_slowdown_frac", o->harness.slow_frac);
	}
	char *s = ocb_json_canonical(c);
	cJSON_Delete(c);
	return s;
}

/* The host's load and clock when the run begins, as metrics of workload "run_context"
 * (load_avg_1m/5m/15m, cpu_mhz): what `export --format gbench` gives as context.load_avg
 * and mhz_per_cpu. */
static int store_run_context(struct ocb_store *s, int64_t run_id)
{
	double load[3], mhz;
	int rc = OCB_OK;
	ocb_host_load_mhz(load, &mhz);
	static const char *const keys[3] = {"load_avg_1m", "load_avg_5m", "load_avg_15m"};
	for (int i = 0; i < 3 && rc == OCB_OK; i++)
		if (!isnan(load[i]))
			rc = ocb_store_metric(s, run_id, "run_context", -1, keys[i], load[i], "1");
	if (rc == OCB_OK && !isnan(mhz))
		rc = ocb_store_metric(s, run_id, "run_context", -1, "cpu_mhz", mhz, "MHz");
	return rc;
}

/* The cached set has values whose newest row is flagged suspect (no good value of that
 * kind and thread count exists, or one that this machine's own results ran above,
 * collect/roof_beaten.h): re-measure them once, as `ceilings --verify` would, store the
 * new values in their place and read the set again. What is still flagged is used with
 * its flag (the harness and report see ocb_ceiling.suspect). */
static int verify_cached(struct ocb_store *s, int64_t machine_id, int64_t run_id,
			 const struct ocb_machine *m, int quick, struct ocb_ceiling **ceil,
			 size_t *nceil)
{
	struct ocb_ceiling *flagged = NULL, *fresh = NULL;
	size_t nf = 0, nfresh = 0;
	int rc = ocb_store_ceilings_flagged(s, machine_id, &flagged, &nf);
	if (rc != OCB_OK || nf == 0) {
		free(flagged);
		return rc;
	}
	ocb_info("re-measuring %zu cached ceiling(s) flagged suspect...", nf);
	rc = ocb_ceilings_measure_store(s, machine_id, run_id, m, 0, quick, *ceil, *nceil, flagged,
					nf, &fresh, &nfresh, NULL);
	if (rc == OCB_OK) {
		free(*ceil);
		*ceil = NULL;
		rc = ocb_store_ceilings_get(s, machine_id, ceil, nceil);
	}
	free(flagged);
	free(fresh);
	return rc;
}

/* One line (info: --quiet silences it, a failing run keeps its one error line) when the
 * ceilings this run uses include flagged ones; their results' fractions inherit it. */
static void warn_suspect_ceilings(const struct ocb_ceiling *c, size_t n)
{
	char kinds[256] = "";
	size_t k = 0, len = 0;
	for (size_t i = 0; i < n; i++) {
		if (!c[i].suspect[0])
			continue;
		k++;
		if (len < sizeof kinds)
			len += (size_t)snprintf(kinds + len, sizeof kinds - len, "%s%s/%d",
						len ? ", " : "", c[i].kind, c[i].threads);
	}
	if (k)
		ocb_info("warning: %zu ceiling(s) of this machine are flagged suspect (%s); see "
			 "'ocbench ceilings --show', re-measure with 'ocbench ceilings --verify'",
			 k, kinds);
}

/* Cached ceilings are reused unless asked, or unless they came from a --quick sweep and
 * this run is a full one (a quick sweep is coarser). */
static int cached_ceilings_usable(const struct ocb_ceiling *c, size_t n, int quick)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; !quick && i < n; i++)
		if (strstr(c[i].method, "quick"))
			return 0;
	return 1;
}

static int matches(const struct ocb_run_opts *o, const char *suite, const struct ocb_bench *b,
		   const char *pj)
{
	if (!o->filter)
		return 1;
	char buf[1024];
	snprintf(buf, sizeof buf, "%s/%s/%s", suite, b->name, pj);
	return regexec(o->filter, buf, 0, NULL, 0) == 0;
}

struct plan_buf {
	struct ocb_planned *p;
	size_t n, cap;
	cJSON *sets; /* owns every case array and filled copy the plan borrows */
};

static int plan_push(struct plan_buf *pb, struct ocb_planned c)
{
	if (pb->n == pb->cap) {
		size_t cap = pb->cap ? 2 * pb->cap : 64;
		struct ocb_planned *q = realloc(pb->p, cap * sizeof *q);
		if (!q)
			return ocb_seterr(OCB_ENOMEM, "planning cases");
		pb->p = q;
		pb->cap = cap;
	}
	pb->p[pb->n++] = c;
	return OCB_OK;
}

/* The thread counts of an entry's cases: the run's, the entry's, or the defaults (1 and
 * all cores for kernels that sweep). Returns the count. */
static int entry_threads(const struct ocb_run_opts *o, const struct ocb_suite_entry *e,
			 int th[10])
{
	int nt = 0;
	if (o->nthreads || e->nthreads) {
		const int *src = o->nthreads ? o->threads : e->threads;
		int n = o->nthreads ? o->nthreads : e->nthreads;
		for (int i = 0; i < n; i++)
			th[nt++] = src[i];
		return nt;
	}
	if (e->bench->kind == OCB_KERNEL && e->bench->sweep_threads && o->default_threads > 1)
		th[nt++] = 1;
	th[nt++] = o->default_threads;
	return nt;
}

/* Plans one suite entry: its cases (listed or the bench's own), each checked against
 * the bench's declared parameters, times its thread counts. */
static int plan_entry(const struct ocb_run_opts *o, const struct ocb_ctx *ctx,
		      const struct ocb_suite_def *d, const struct ocb_suite_entry *e,
		      struct plan_buf *pb)
{
	const struct ocb_bench *b = e->bench;
	cJSON *cases = e->cases ? cJSON_Duplicate(e->cases, 1) : b->cases ? b->cases(ctx) : NULL;
	cJSON *c;
	char where[400];
	int rc = OCB_OK, k = 0, th[10], nt = entry_threads(o, e, th);
	if (!cases)
		return OCB_OK;
	cJSON_AddItemToArray(pb->sets, cases);
	cJSON_ArrayForEach(c, cases) {
		cJSON *full = NULL;
		snprintf(where, sizeof where, "%s: %s cases[%d]", d->source,
			 e->cases ? "listed" : "the bench's own", k++);
		if ((rc = ocb_params_check(b->params, b->name, where, c, &full)))
			return rc;
		cJSON_AddItemToArray(pb->sets, full);
		char *pj = ocb_json_canonical(c);
		int keep = pj && matches(o, e->suite, b, pj);
		free(pj);
		for (int i = 0; keep && rc == OCB_OK && i < nt; i++)
			rc = plan_push(pb, (struct ocb_planned){b, e->suite, c, full, th[i]});
		if (rc)
			return rc;
	}
	return OCB_OK;
}

/* (runner.h) */
int ocb_runner_plan(const struct ocb_run_opts *o, const struct ocb_ctx *ctx,
		    struct ocb_planned **out, size_t *np, cJSON **case_sets)
{
	struct plan_buf pb = {NULL, 0, 0, cJSON_CreateArray()};
	int rc = pb.sets ? OCB_OK : ocb_seterr(OCB_ENOMEM, "planning cases");
	for (int si = 0; rc == OCB_OK && si < o->nsuites; si++)
		for (size_t ei = 0; rc == OCB_OK && o->defs[si] && ei < o->defs[si]->n; ei++)
			rc = plan_entry(o, ctx, o->defs[si], &o->defs[si]->e[ei], &pb);
	if (rc) {
		free(pb.p);
		cJSON_Delete(pb.sets);
		return rc;
	}
	*out = pb.p;
	*np = pb.n;
	*case_sets = pb.sets;
	return OCB_OK;
}

/* The result of case c is stored under its suite and with its params as listed (not
 * the defaults-filled copy the bench ran with), so stored history keeps matching. */
static int as_listed(struct ocb_result *r, const struct ocb_planned *c)
{
	char *pj = ocb_json_canonical(c->params);
	if (!pj)
		return ocb_seterr(OCB_ENOMEM, "params of %s", c->bench->name);
	free(r->params_json);
	r->params_json = pj;
	snprintf(r->suite, sizeof r->suite, "%s", c->suite);
	return OCB_OK;
}

/* One line per result on stdout: what was measured and how it compares to its bound. */
static void print_result(const struct ocb_result *r, int json)
{
	if (json) {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "suite", r->suite);
		cJSON_AddStringToObject(j, "bench", r->bench);
		cJSON_AddRawToObject(j, "params", r->params_json ? r->params_json : "{}");
		cJSON_AddStringToObject(j, "variant", r->variant);
		cJSON_AddNumberToObject(j, "threads", r->threads);
		cJSON_AddStringToObject(j, "status", r->status);
		if (strcmp(r->status, "ok") == 0) {
			cJSON_AddNumberToObject(j, "median_s", r->st.median);
			cJSON_AddNumberToObject(j, "min_s", r->st.min); /* ab's per-round stat */
			cJSON_AddNumberToObject(j, "ci_low_s", r->st.ci_low);
			cJSON_AddNumberToObject(j, "ci_high_s", r->st.ci_high);
			cJSON_AddNumberToObject(j, "n", (double)r->st.n);
			if (r->flops > 0)
				cJSON_AddNumberToObject(j, "gflops", r->flops / r->st.median * 1e-9);
			if (r->bytes > 0)
				cJSON_AddNumberToObject(j, "gbytes_per_s", r->bytes / r->st.median * 1e-9);
			if (r->bound[0] && isfinite(r->bound_frac)) {
				cJSON_AddStringToObject(j, "bound", r->bound);
				cJSON_AddNumberToObject(j, "bound_frac", r->bound_frac);
			}
			if (r->suspect[0])
				cJSON_AddStringToObject(j, "suspect", r->suspect);
		} else {
			cJSON_AddStringToObject(j, "error", r->error);
		}
		char *s = cJSON_PrintUnformatted(j);
		if (s)
			puts(s);
		free(s);
		cJSON_Delete(j);
		return;
	}
	if (strcmp(r->status, "ok") != 0) {
		printf("%-8s %-22s %-40s %-8s t=%-2d FAILED: %s\n", r->suite, r->bench,
		       r->params_json ? r->params_json : "", r->variant, r->threads, r->error);
		return;
	}
	double med = r->st.median, hw = (r->st.ci_high - r->st.ci_low) / 2;
	printf("%-8s %-22s %-40s %-8s t=%-2d %10.4g s ±%4.1f%% n=%-4ld", r->suite, r->bench,
	       r->params_json ? r->params_json : "", r->variant, r->threads, med,
	       med > 0 ? 100 * hw / med : 0.0, r->st.n);
	/* integer-dot kernels count int8 operations (their roof is ops_int8): GOP/s */
	if (r->flops > 0 && med > 0)
		printf(" %8.2f %s", r->flops / med * 1e-9,
		       strstr(r->bound, "ops_int8") ? "GOP/s  " : "GFLOP/s");
	if (r->bytes > 0 && med > 0)
		printf(" %8.2f GB/s", r->bytes / med * 1e-9);
	if (r->bound[0] && isfinite(r->bound_frac))
		printf("  %5.1f%% of %s", 100 * r->bound_frac, r->bound);
	else if (r->bound[0])
		printf("  no roof %s", r->bound);
	if (r->suspect[0])
		printf("  SUSPECT: %s", r->suspect);
	putchar('\n');
	fflush(stdout);
}

/* The scaling rule (collect/suspect.h) for the result r of plan[i]: against the median
 * and CI of the same bench and params at 1 thread, st[j] (median NaN: not measured or not
 * ok). */
static void flag_scaling(const struct ocb_planned *plan, size_t np, size_t i,
			 const struct ocb_stats *st, struct ocb_result *r)
{
	if (plan[i].threads <= 1)
		return;
	for (size_t j = 0; j < np; j++) {
		if (plan[j].bench != plan[i].bench || plan[j].params != plan[i].params ||
		    plan[j].threads != 1 || !(st[j].median > 0))
			continue;
		struct ocb_result r1 = {.threads = 1, .st = st[j]};
		snprintf(r1.status, sizeof r1.status, "ok");
		ocb_suspect_scaling(r, &r1);
		return;
	}
}

/* Stores one whole result, prints it, counts it in the summary, releases it. */
static int store_one(struct ocb_store *s, int64_t run_id, struct ocb_result *r,
		     const struct ocb_run_opts *o, const struct sink_ctx *sc,
		     struct ocb_run_summary *sum)
{
	int rc = ocb_store_result(s, run_id, r, NULL);
	if (rc == OCB_OK) {
		print_result(r, o->json);
		if (sc->nfinals && !o->json)
			printf("         %s: %s\n", r->bench, sc->finals);
	}
	sum->cases++;
	if (strcmp(r->status, "ok") == 0) {
		sum->ok++;
	} else {
		sum->failed++;
		if (!sum->input_error && ocb_exit_code(r->err_status) == 2) {
			sum->input_error = 1;
			snprintf(sum->input_msg, sizeof sum->input_msg, "%s: %s", r->bench,
				 r->error);
		}
	}
	ocb_result_release(r);
	return rc;
}

/* Creates the out dir, stores the machine and opens the run row (uuid: 37 bytes). */
static int begin_run(struct ocb_store *s, const struct ocb_run_opts *o, struct ocb_machine *m,
		     char *uuid, char **cfg, int64_t *machine_id, int64_t *run_id)
{
	int rc = ensure_dir(o->out_dir);
	if (rc != OCB_OK)
		return rc;
	ocb_host_probe(m);
	rc = ocb_store_machine(s, m, machine_id);
	if (rc != OCB_OK)
		return rc;
	ocb_uuid_v4(uuid);
	*cfg = config_json(o);
	struct ocb_run_info ri = {
		.uuid = uuid, .machine_id = *machine_id, .suite = o->suite_spec, .label = o->label,
		.ocbench_version = OCB_VERSION, .git_sha = OCB_GIT_SHA, .cmdline = o->cmdline,
		.config_json = *cfg ? *cfg : "{}", .seed = o->seed,
	};
	return ocb_store_run_begin(s, &ri, run_id);
}

/* The ceilings this run uses: the cached ones, measured now when there are none usable
 * (or asked), their flagged values re-measured once on a full run. */
static int run_ceilings(struct ocb_store *s, const struct ocb_run_opts *o,
			const struct ocb_machine *m, int64_t machine_id, int64_t run_id,
			struct ocb_ceiling **ceil, size_t *nceil)
{
	int rc = ocb_store_ceilings_get(s, machine_id, ceil, nceil);
	if (rc != OCB_OK)
		return rc;
	if (o->remeasure_ceilings || !cached_ceilings_usable(*ceil, *nceil, o->quick)) {
		free(*ceil);
		*ceil = NULL;
		ocb_info("measuring this machine's ceilings (once per machine)...");
		rc = ocb_ceilings_measure_store(s, machine_id, run_id, m, o->default_threads,
						o->quick, NULL, 0, NULL, 0, ceil, nceil, NULL);
		if (rc != OCB_OK)
			return rc;
	} else if (!o->quick && !o->keep_ceilings &&
		   (rc = verify_cached(s, machine_id, run_id, m, o->quick, ceil, nceil))) {
		return rc; /* (a --quick run, CI, uses flagged values with their flag) */
	}
	warn_suspect_ceilings(*ceil, *nceil);
	return OCB_OK;
}

/* The harness options of one interleaved pass: each pass gets its share,
 * ceil(x / passes), at least 2 repetitions. */
static struct ocb_harness_opts pass_harness_opts(const struct ocb_harness_opts *h, int npass)
{
	struct ocb_harness_opts hp = *h;
	if (npass > 1) {
		hp.budget_s = h->budget_s / npass;
		hp.min_reps = (h->min_reps + npass - 1) / npass;
		if (hp.min_reps < 2)
			hp.min_reps = 2;
		hp.max_reps = (h->max_reps + npass - 1) / npass;
		if (hp.max_reps < hp.min_reps)
			hp.max_reps = hp.min_reps;
	}
	return hp;
}

/* Pass p's order of the plan's cases into order[], returns how many: with passes, the
 * workloads (pass 1 only) and kernels, shuffled (Fisher-Yates) by an rng seeded from the
 * run's seed and p; then producers of an artifact (a trained model) before consumers. */
static size_t pass_order(const struct ocb_planned *plan, size_t np,
			 const struct ocb_bench **bench_of, uint64_t seed, int p, int npass,
			 size_t *order)
{
	size_t nord = np;
	if (npass > 1) {
		struct ocb_rng rng;
		ocb_rng_seed(&rng, seed * 0x9e3779b97f4a7c15ULL + (uint64_t)p);
		nord = 0;
		for (size_t i = 0; i < np; i++)
			if (plan[i].bench->kind == OCB_KERNEL || p == 1)
				order[nord++] = i;
		for (size_t i = nord; i > 1; i--) {
			size_t j = (size_t)ocb_rng_below(&rng, i);
			size_t t = order[i - 1];
			order[i - 1] = order[j];
			order[j] = t;
		}
	} else {
		for (size_t i = 0; i < np; i++)
			order[i] = i;
	}
	ocb_order_prerequisites(bench_of, order, nord);
	return nord;
}

/* The per-case arrays of a run (caller frees): ok_st[] with NaN medians, acc[] and
 * first_n[] (passes > 1 only) zeroed, order[] to fill, bench_of[i] = plan[i].bench. */
static int alloc_run_arrays(const struct ocb_planned *plan, size_t np, int npass,
			    struct ocb_stats **ok_st,
			    struct ocb_result **acc, size_t **first_n, size_t **order,
			    const struct ocb_bench ***bench_of)
{
	*ok_st = malloc(np * sizeof **ok_st);
	*acc = npass > 1 ? calloc(np, sizeof **acc) : NULL;
	*first_n = npass > 1 ? calloc(np, sizeof **first_n) : NULL;
	*order = malloc(np * sizeof **order);
	*bench_of = malloc(np * sizeof **bench_of);
	if (!*ok_st || (npass > 1 && (!*acc || !*first_n)) || !*order || !*bench_of)
		return ocb_seterr(OCB_ENOMEM, "run: %zu cases", np);
	for (size_t i = 0; i < np; i++) {
		(*ok_st)[i] = (struct ocb_stats){.median = NAN};
		(*bench_of)[i] = plan[i].bench;
	}
	return OCB_OK;
}

/* What the cases of one run share while they run (all borrowed from ocb_runner_run). */
struct run_env {
	struct ocb_store *s;
	int64_t run_id;
	const struct ocb_run_opts *o;
	const struct ocb_planned *plan;
	size_t np;
	int npass;
	struct ocb_ctx *ctx;
	struct sink_ctx *sc;
	const struct ocb_harness_opts *hp; /* an interleaved pass's share */
	struct ocb_counters *ctr;
	struct ocb_progress *prog;
	struct ocb_result *acc; /* interleaved: each case's merged passes */
	size_t *first_n;        /* interleaved: samples of each case's first pass (0: not yet) */
	struct ocb_stats *ok_st; /* each planned case's ok statistics (median NaN: none yet) */
	struct ocb_run_summary *sum;
	struct ocb_beaten *beaten; /* the ceilings this run's stored results ran above */
	int64_t machine_id;
	struct ocb_ceiling *ceil; /* = ctx->ceilings, which a re-measure may raise */
};

/* Runs plan[i] once: an interleaved kernel's samples are merged into acc[i], any other
 * result is flagged, stored and printed now. */
static int run_case(struct run_env *e, size_t i)
{
	const struct ocb_planned *c = &e->plan[i];
	int interleaved = e->npass > 1 && c->bench->kind == OCB_KERNEL;
	struct ocb_result r;
	char *pj = ocb_json_canonical(c->params);
	ocb_progress_case(e->prog, c->bench->name, pj ? pj : "");
	free(pj);
	if (interleaved && e->acc[i].params_json && strcmp(e->acc[i].status, "ok") != 0)
		return OCB_OK; /* failed in an earlier pass: it would fail again */
	e->ctx->threads = c->threads;
	e->sc->bench = c->bench->name;
	e->sc->nfinals = 0;
	e->sc->finals[0] = '\0';
	const struct ocb_harness_opts *ho = interleaved ? e->hp : &e->o->harness;
	struct ocb_harness_opts later;
	if (interleaved && e->first_n[i] > 0) {
		/* A later pass takes as many samples as the first, not until its own CI is
		 * tight: a pass in a noisy phase of the host would otherwise take the most
		 * samples and pull the merged median towards that phase (seen: passes of 37,
		 * 20 and 112 samples at 0.188, 0.183 and 0.246 ms merged to 0.230 ms). */
		later = *e->hp;
		later.max_reps = (long)e->first_n[i] > later.min_reps ? (long)e->first_n[i]
								       : later.min_reps;
		later.no_ci_stop = 1;
		ho = &later;
	}
	int rc = ocb_harness_case(c->bench, c->full, e->ctx, ho, e->ctr, &r);
	if (rc == OCB_OK)
		rc = as_listed(&r, c);
	if (rc != OCB_OK)
		return rc;
	if (interleaved && e->first_n[i] == 0)
		e->first_n[i] = r.nsamples;
	if (interleaved) /* kept in memory until the last pass (samples only) */
		return ocb_harness_merge(&e->acc[i], &r);
	if (strcmp(r.status, "ok") == 0)
		e->ok_st[i] = r.st;
	flag_scaling(e->plan, e->np, i, e->ok_st, &r);
	ocb_beaten_note(e->beaten, e->ctx->ceilings, e->ctx->nceilings, &r);
	ocb_progress_clear(e->prog);
	return store_one(e->s, e->run_id, &r, e->o, e->sc, e->sum);
}

/* Bound and fraction of every merged interleaved kernel result, under ctx's ceilings. */
static void bound_interleaved(struct run_env *e)
{
	for (size_t i = 0; e->acc && i < e->np; i++) {
		if (!e->acc[i].params_json || strcmp(e->acc[i].status, "ok") != 0)
			continue;
		struct ocb_work w = {.flops = NAN, .bytes = NAN};
		const struct ocb_bench *b = e->plan[i].bench;
		int have_work = b->work && b->work(e->plan[i].full, &w) == OCB_OK;
		e->ctx->threads = e->plan[i].threads;
		ocb_harness_bound(&e->acc[i], &w, have_work, e->ctx);
	}
}

/* The ceilings the merged results (or results already stored) ran above are re-measured
 * before the results are stored (collect/roof_beaten.h): a ceiling measured in a slow
 * moment of a shared host (the fresh run at 6d3cd58: 2-thread bw_dram 50.9 GB/s in its
 * ceiling pass, 80-87 GB/s in the same session's other runs, and 14 results flagged at
 * 105-157% of it) is then raised, and the results placed under the new value. Not in
 * the ranks of an MPI job (keep_ceilings: every rank would) nor after an interruption. */
static void remeasure_beaten(struct run_env *e)
{
	struct ocb_beaten want = *e->beaten;
	for (size_t i = 0; e->acc && i < e->np; i++)
		if (e->acc[i].params_json)
			ocb_beaten_note(&want, e->ctx->ceilings, e->ctx->nceilings, &e->acc[i]);
	if (!want.n || e->o->keep_ceilings || ocb_runner_stop)
		return;
	int raised = 0;
	ocb_progress_clear(e->prog);
	int rc = ocb_beaten_remeasure(&want, e->beaten, e->s, e->machine_id, e->run_id,
				      e->ctx->machine, e->o->quick, e->ceil, e->ctx->nceilings,
				      &raised);
	if (rc != OCB_OK) /* the run's results matter more: stored under the old values */
		ocb_warn("re-measuring the beaten ceilings failed (%s): the results are stored "
			 "under the values measured before", ocb_lasterr());
	if (raised)
		bound_interleaved(e);
}

/* Interleaved kernels: bound and flags from the merged samples (after re-measuring the
 * ceilings they ran above), then stored one by one in plan order. After an interruption,
 * the cases that ran in some passes are stored with the samples they have (the run is
 * marked aborted). */
static int store_interleaved(struct run_env *e)
{
	int rc = OCB_OK;
	bound_interleaved(e);
	remeasure_beaten(e);
	for (size_t i = 0; e->acc && i < e->np; i++) {
		if (!e->acc[i].params_json || strcmp(e->acc[i].status, "ok") != 0)
			continue;
		e->ctx->threads = e->plan[i].threads;
		ocb_harness_flag(&e->acc[i], e->o->harness.target_ci, e->ctx);
		e->ok_st[i] = e->acc[i].st;
	}
	for (size_t i = 0; e->acc && i < e->np && rc == OCB_OK; i++) {
		if (!e->acc[i].params_json)
			continue;
		flag_scaling(e->plan, e->np, i, e->ok_st, &e->acc[i]);
		ocb_beaten_note(e->beaten, e->ctx->ceilings, e->ctx->nceilings, &e->acc[i]);
		e->sc->nfinals = 0;
		e->sc->finals[0] = '\0';
		ocb_progress_clear(e->prog);
		rc = store_one(e->s, e->run_id, &e->acc[i], e->o, e->sc, e->sum);
	}
	return rc;
}

/* Longer than ~80 lines on purpose: it owns the run's resources (one goto cleanup) and
 * reads as the run's steps in order; each step is a function above. */
int ocb_runner_run(struct ocb_store *s, const struct ocb_run_opts *o, struct ocb_run_summary *sum)
{
	struct ocb_machine m;
	struct ocb_ceiling *ceil = NULL;
	size_t nceil = 0, np = 0;
	struct ocb_planned *plan = NULL;
	cJSON *case_sets = NULL;
	struct ocb_counters *ctr = NULL;
	struct ocb_progress prog;
	struct ocb_result *acc = NULL; /* interleaved: each case's merged passes */
	struct ocb_stats *ok_st = NULL; /* each planned case's ok statistics */
	size_t *first_n = NULL; /* interleaved: the samples of each case's first pass */
	size_t *order = NULL;
	const struct ocb_bench **bench_of = NULL; /* plan[i].bench, for the prerequisite order */
	int npass = 1;
	char *cfg = NULL, uuid[37];
	int64_t machine_id = 0, run_id = 0;
	struct ocb_canary_run cr = {0}; /* drift canaries: start, middle, end */
	int rc;

	memset(sum, 0, sizeof *sum);
	rc = begin_run(s, o, &m, uuid, &cfg, &machine_id, &run_id);
	if (rc != OCB_OK)
		goto out;
	sum->run_id = run_id;
	if ((rc = store_run_context(s, run_id)) != OCB_OK)
		goto fail;
	ocb_info("run %lld (%s) on %s, results to the database, artifacts to %s/",
		 (long long)run_id, uuid, m.hostname, o->out_dir);
	if ((rc = run_ceilings(s, o, &m, machine_id, run_id, &ceil, &nceil)) != OCB_OK)
		goto fail;
	if (ocb_machine_use_llc(&m, ceil, nceil)) /* measured LLC: levels, canaries, rotation */
		ocb_info("warning: last level: the measured capacity (%.0f MiB) is flagged "
			 "suspect; it stands in for the reported L3 (%.0f MiB, 0 = none) in "
			 "levels and rotation all the same (`ocbench ceilings --verify` "
			 "re-measures it)",
			 (double)m.llc_bytes / 1048576.0, (double)m.l3_bytes / 1048576.0);
	ocb_canary_run_init(&cr, &m, o->quick);
	if ((rc = ocb_canary_run_point(&cr, s, run_id, OCB_CANARY_START)) != OCB_OK)
		goto fail;

	rc = ocb_counters_open(o->events, o->nevents, o->no_papi, &ctr);
	if (rc != OCB_OK)
		goto fail;
	if (!ocb_counters_active(ctr))
		ocb_info("counters: none (%s): results are timing-only", ocb_counters_status(ctr));

	struct sink_ctx sc = {.s = s, .run_id = run_id};
	struct ocb_ctx ctx = {
		.threads = o->default_threads, .seed = o->seed, .quick = o->quick,
		.data_dir = o->data_dir, .out_dir = o->out_dir, .machine = &m, .ceilings = ceil,
		.nceilings = nceil, .metrics = {&sc, sink_put, sink_ident},
	};
	rc = ocb_runner_plan(o, &ctx, &plan, &np, &case_sets);
	if (rc != OCB_OK)
		goto fail;
	if (np == 0) {
		rc = ocb_seterr(OCB_EINVAL, "no case matches the suites and filter given");
		goto fail;
	}
	npass = o->passes > 1 ? o->passes : 1;
	long nkernel = 0;
	for (size_t i = 0; i < np; i++)
		nkernel += plan[i].bench->kind == OCB_KERNEL;
	rc = alloc_run_arrays(plan, np, npass, &ok_st, &acc, &first_n, &order, &bench_of);
	if (rc != OCB_OK)
		goto fail;
	struct ocb_harness_opts hp = pass_harness_opts(&o->harness, npass);
	struct ocb_beaten beaten = {.n = 0};
	struct run_env env = {
		.s = s, .run_id = run_id, .o = o, .plan = plan, .np = np, .npass = npass,
		.ctx = &ctx, .sc = &sc, .hp = &hp, .ctr = ctr, .prog = &prog, .acc = acc,
		.first_n = first_n, .ok_st = ok_st, .sum = sum, .beaten = &beaten,
		.machine_id = machine_id, .ceil = ceil,
	};
	long nexec = (long)npass * nkernel + ((long)np - nkernel), done = 0;
	ocb_progress_init(&prog, nexec, o->quiet);
	for (int p = 1; p <= npass && !ocb_runner_stop; p++) {
		size_t nord = pass_order(plan, np, bench_of, o->seed, p, npass, order);
		for (size_t k = 0; k < nord && !ocb_runner_stop; k++) {
			if ((rc = run_case(&env, order[k])) != OCB_OK)
				goto fail;
			if (2 * ++done >= nexec && /* half of the executions: the middle canary */
			    (rc = ocb_canary_run_point(&cr, s, run_id, OCB_CANARY_MID)) != OCB_OK)
				goto fail;
		}
	}
	if ((rc = ocb_canary_run_point(&cr, s, run_id, OCB_CANARY_END)) != OCB_OK)
		goto fail;
	if ((rc = store_interleaved(&env)) != OCB_OK)
		goto fail;
	ocb_progress_finish(&prog);
	if ((rc = ocb_beaten_flag(&beaten, s, machine_id, run_id, ceil, nceil, NULL)) != OCB_OK)
		goto fail;
	sum->interrupted = ocb_runner_stop;
	rc = ocb_store_run_finish(s, run_id, ocb_runner_stop ? "aborted" : "complete");
	goto out;
fail:
	if (run_id) {
		int keep = rc;
		char why[1024];
		snprintf(why, sizeof why, "%s", ocb_lasterr());
		ocb_store_run_finish(s, run_id, "failed");
		rc = ocb_seterr(keep, "%s", why);
	}
out:
	ocb_canary_run_release(&cr);
	for (size_t i = 0; acc && i < np; i++)
		ocb_result_release(&acc[i]);
	free(acc);
	free(first_n);
	free(ok_st);
	free(order);
	free(bench_of);
	ocb_counters_free(ctr);
	cJSON_Delete(case_sets);
	free(plan);
	free(ceil);
	free(cfg);
	return rc;
}
