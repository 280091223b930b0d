/* ab_store: the paired rounds of `ocbench ab` stored as two runs linked as a pair, so
 * that `compare`, `history`, `show` and the report see them like any run:
 *   - labels "ab-<pair8>-base" and "ab-<pair8>-cand" (pair8: the first 8 hex digits of
 *     a fresh pair uuid), and config_json {"ab": {"pair", "side", "other" (the other
 *     run's uuid), "base", "cand" (as typed), "rounds", "block", "adaptive_rounds",
 *     "stat" (min|median: what a sample is), "threshold", "alpha", "inject_slowdown"}};
 *   - one result per case, its samples the per-round values (--stat; seconds; a round where
 *     the case failed is left out), statistics over them; timing-only;
 *   - the drift canaries as metrics of both runs: workload "canary", step 0/1/2 =
 *     start/mid/end, key the canary's name, unit GFLOP/s or GB/s.
 * Only db/'s typed API is used (ocb_store_*). */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/ab_plan.h"
#include "../collect/host.h"
#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_log.h"
#include "../common/ocb_stats.h"
#include "../common/ocb_uuid.h"
#include "ab.h"

static char *config_of(const struct ab *a, const char *pair, int side, const char *other)
{
	cJSON *c = cJSON_CreateObject(), *ab = cJSON_AddObjectToObject(c, "ab");
	cJSON_AddStringToObject(ab, "pair", pair);
	cJSON_AddStringToObject(ab, "side", side ? "cand" : "base");
	cJSON_AddStringToObject(ab, "other", other);
	cJSON_AddStringToObject(ab, "base", a->o.spec[0]);
	cJSON_AddStringToObject(ab, "cand", a->o.spec[1]);
	cJSON_AddNumberToObject(ab, "rounds", (double)a->rounds);
	cJSON_AddNumberToObject(ab, "block", (double)a->o.block);
	cJSON_AddNumberToObject(ab, "adaptive_rounds", (double)a->extra_rounds);
	cJSON_AddStringToObject(ab, "stat", a->o.use_median ? "median" : "min");
	cJSON_AddNumberToObject(ab, "threshold", a->o.stat.threshold);
	cJSON_AddNumberToObject(ab, "alpha", a->o.stat.alpha);
	if (a->o.inject)
		cJSON_AddStringToObject(ab, "inject_slowdown", a->o.inject);
	char *s = ocb_json_canonical(c);
	cJSON_Delete(c);
	return s;
}

/* Result of case c on `side` from its per-round medians into *r (r->samples owned). */
static int case_result(const struct ab *a, const struct ab_case *c, int side,
		       struct ocb_result *r)
{
	memset(r, 0, sizeof *r);
	const char *s1 = strchr(c->key, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
	const char *b1 = strchr(c->key, '|'), *b2 = b1 ? strchr(b1 + 1, '|') : NULL;
	if (!s1 || !s2 || !b1 || !b2 || b1 < s2)
		return ocb_seterr(OCB_EINVAL, "ab: bad case key %s", c->key);
	snprintf(r->suite, sizeof r->suite, "%.*s", (int)(s1 - c->key), c->key);
	snprintf(r->bench, sizeof r->bench, "%.*s", (int)(s2 - s1 - 1), s1 + 1);
	snprintf(r->variant, sizeof r->variant, "%.*s", (int)(b2 - b1 - 1), b1 + 1);
	r->threads = atoi(b2 + 1);
	r->params_json = strndup(s2 + 1, (size_t)(b1 - s2 - 1));
	r->samples = malloc((a->rounds ? a->rounds : 1) * sizeof *r->samples);
	if (!r->params_json || !r->samples)
		return ocb_seterr(OCB_ENOMEM, "ab: result");
	for (size_t k = 0; k < a->rounds; k++)
		if (c->med[side][k] > 0)
			r->samples[r->nsamples++] = c->med[side][k];
	snprintf(r->unit, sizeof r->unit, "s");
	snprintf(r->status, sizeof r->status, "%s", r->nsamples ? "ok" : "failed");
	if (!r->nsamples)
		snprintf(r->error, sizeof r->error, "no round measured it");
	r->check_err = NAN;
	r->bound_frac = NAN;
	r->timing_only = 1;
	return ocb_stats_compute(r->samples, r->nsamples, &r->st);
}

static int store_side(struct ocb_store *s, const struct ab *a, int64_t machine_id,
		      const char *pair, const char uuid[2][37], int side, int64_t *run_id)
{
	char label[64];
	int rc;
	char *cfg = config_of(a, pair, side, uuid[1 - side]);
	snprintf(label, sizeof label, "ab-%.8s-%s", pair, side ? "cand" : "base");
	struct ocb_run_info ri = {.uuid = uuid[side], .machine_id = machine_id,
				  .suite = a->o.suite ? a->o.suite : "all", .label = label,
				  .ocbench_version = OCB_VERSION, .git_sha = OCB_GIT_SHA,
				  .cmdline = a->cmdline, .config_json = cfg ? cfg : "{}",
				  .seed = a->o.seed};
	if ((rc = ocb_store_run_begin(s, &ri, run_id)) != OCB_OK)
		goto out;
	for (size_t i = 0; i < a->n && rc == OCB_OK; i++) {
		struct ocb_result r;
		if ((rc = case_result(a, &a->c[i], side, &r)) == OCB_OK)
			rc = ocb_store_result(s, *run_id, &r, NULL);
		ocb_result_release(&r);
	}
	for (int p = 0; a->have_canary && p < OCB_CANARY_NPOINT && rc == OCB_OK; p++)
		for (int k = 0; k < OCB_CANARY_N && rc == OCB_OK; k++)
			if (isfinite(a->canary[p][k]))
				rc = ocb_store_metric(s, *run_id, "canary", p, ocb_canary_name[k],
						      a->canary[p][k], ocb_canary_unit[k]);
	if (rc == OCB_OK)
		rc = ocb_store_run_finish(s, *run_id, "complete");
out:
	free(cfg);
	return rc;
}

int ab_store(struct ab *a, const char *db_path)
{
	struct ocb_store *s = NULL;
	struct ocb_machine m;
	int64_t machine_id = 0;
	char pair[37], uuid[2][37];
	int rc;

	ocb_uuid_v4(pair);
	ocb_uuid_v4(uuid[0]);
	ocb_uuid_v4(uuid[1]);
	ocb_host_probe(&m);
	if ((rc = ocb_store_open(db_path, OCB_STORE_WRITE, &s)) != OCB_OK)
		goto out;
	if ((rc = ocb_store_machine(s, &m, &machine_id)) != OCB_OK)
		goto out;
	for (int side = 0; side < 2 && rc == OCB_OK; side++)
		rc = store_side(s, a, machine_id, pair, uuid, side, &a->run_id[side]);
	if (rc == OCB_OK)
		ocb_info("ab: stored as runs %lld (ab-%.8s-base) and %lld (ab-%.8s-cand): "
			 "'ocbench compare %lld %lld'", (long long)a->run_id[0], pair,
			 (long long)a->run_id[1], pair, (long long)a->run_id[0],
			 (long long)a->run_id[1]);
out:
	ocb_store_close(s);
	return rc;
}
