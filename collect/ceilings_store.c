#include "ceilings_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_log.h"
#include "../common/ocb_uuid.h"
#include "../db/store_query.h"
#include "host.h"

int ocb_ceilings_store(struct ocb_store *s, int64_t machine_id, int64_t run_id,
		       const struct ocb_ceiling *c, size_t n, int replace)
{
	int rc = ocb_store_begin(s);
	for (size_t i = 0; rc == OCB_OK && i < n; i++) {
		if (replace)
			rc = ocb_store_ceiling_drop_flagged(s, machine_id, c[i].kind, c[i].threads);
		if (rc == OCB_OK)
			rc = ocb_store_ceiling(s, machine_id, run_id, &c[i]);
	}
	if (rc == OCB_OK)
		return ocb_store_commit(s);
	ocb_store_commit(s); /* ends the group; the first error is the one reported */
	return rc;
}

int ocb_ceilings_measure_store(struct ocb_store *s, int64_t machine_id, int64_t run_id,
			       const struct ocb_machine *m, int threads_all, int quick,
			       const struct ocb_ceiling *cur, size_t ncur,
			       const struct ocb_ceiling *flagged, size_t nflag,
			       struct ocb_ceiling **out, size_t *n,
			       struct ocb_ceilings_report *rep)
{
	int rc = nflag ? ocb_ceilings_verify(m, quick, cur, ncur, flagged, nflag, out, n, rep)
		       : ocb_ceilings_measure_ex(m, threads_all, quick, out, n, rep);
	if (rc != OCB_OK)
		return rc;
	return ocb_ceilings_store(s, machine_id, run_id, *out, *n, nflag > 0);
}

static void warn_blas_fallback(const struct ocb_machine *m)
{
	if (ocb_host_blas_fallback())
		ocb_warn("OpenBLAS runs its '%s' kernels, narrower than this CPU's vectors: sgemm "
			 "is far below the FMA peak; set OPENBLAS_CORETYPE=%s", m->blas,
			 ocb_host_blas_core_wanted());
}

static void warn_flagged(const struct ocb_ceiling *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].suspect[0])
			ocb_warn("ceilings: %s at %d thread(s) = %.1f %s stored flagged suspect: %s",
				 c[i].kind, c[i].threads, c[i].value, c[i].unit, c[i].suspect);
}

int ocb_ceilings_session_run(struct ocb_store *s, const struct ocb_machine *m, int threads,
			     int quick, int verify, const char *cmdline,
			     struct ocb_ceilings_session *x)
{
	struct ocb_ceiling *cur = NULL, *flagged = NULL;
	size_t ncur = 0;
	int64_t mid = 0, run_id = 0;
	char cfg[128];
	int rc;

	memset(x, 0, sizeof *x);
	if ((rc = ocb_store_machine(s, m, &mid)))
		goto out;
	if (verify) {
		if ((rc = ocb_store_ceilings_flagged(s, mid, &flagged, &x->nflag)) ||
		    (rc = ocb_store_ceilings_get(s, mid, &cur, &ncur)))
			goto out;
		if (x->nflag == 0)
			goto out;
		ocb_info("ceilings: %zu flagged value(s) to re-measure", x->nflag);
	}
	ocb_uuid_v4(x->uuid);
	snprintf(cfg, sizeof cfg, "{\"quick\":%s,\"threads\":%d,\"verify\":%s}",
		 quick ? "true" : "false", threads, verify ? "true" : "false");
	struct ocb_run_info ri = {
		.uuid = x->uuid, .machine_id = mid, .suite = "ceilings", .label = NULL,
		.ocbench_version = OCB_VERSION, .git_sha = OCB_GIT_SHA, .cmdline = cmdline,
		.config_json = cfg, .seed = 0,
	};
	if ((rc = ocb_store_run_begin(s, &ri, &run_id)))
		goto out;
	warn_blas_fallback(m);
	rc = ocb_ceilings_measure_store(s, mid, run_id, m, threads, quick, cur, ncur, flagged,
					x->nflag, &x->c, &x->n, &x->rep);
	if (rc == OCB_OK)
		rc = ocb_store_run_finish(s, run_id, "complete");
	if (rc == OCB_OK)
		warn_flagged(x->c, x->n);
out:
	if (rc && run_id > 0) {
		int keep = rc;
		char why[1024];
		snprintf(why, sizeof why, "%s", ocb_lasterr());
		ocb_store_run_finish(s, run_id, "failed");
		rc = ocb_seterr(keep, "%s", why);
	}
	free(cur);
	free(flagged);
	return rc;
}

void ocb_ceilings_session_free(struct ocb_ceilings_session *x)
{
	free(x->c);
	x->c = NULL;
	x->n = 0;
}
