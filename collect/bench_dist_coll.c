/* bench_dist_coll: the collectives table of the distributed suite (nccl-tests columns) on
 * the ranks of this MPI job (collect/dist_sweep.h): every op, sizes 8 B .. 256 MiB (x4),
 * out-of-place and in-place, #wrong, time, algbw, busbw; an alpha-beta(-gamma) fit per op
 * with its error; the plain MPI_Allreduce loop beside the core's allreduce at 64 MiB.
 * Metrics (rank 0 writes them; every rank measures): workload "dist_coll/<op>/np<N>",
 * step = bytes, keys time_s, algbw, busbw, wrong with suffix _oop / _ip; step -1: alpha,
 * beta, gamma, fit_rms, fit_max. Workload "dist_coll/np<N>", step -1: plain_s, core_s
 * (best s/call), plain_ratio (median over paired rounds of plain / core time = core busbw
 * / plain busbw), plain_ratio_lo / _hi (its 95% CI), plain_rounds, plain_bytes,
 * wrong_total. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "bench.h"
#include "mpi_launch.h"
#include "dist_sweep.h"

#define WORKLOAD "dist_coll"

struct state {
	struct ocb_dist_sweep_cfg cfg;
};

static cJSON *cases(const struct ocb_ctx *ctx)
{
	cJSON *a = cJSON_CreateArray(), *o = cJSON_CreateObject();
	if (!a || !o) {
		cJSON_Delete(a);
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddNumberToObject(o, "max_bytes", ctx->quick ? 1 << 20 : 256 << 20);
	cJSON_AddNumberToObject(o, "budget_s", ctx->quick ? 0.05 : 1.0);
	if (ctx->quick) { /* 8 B .. 256 KiB by 8, best of 2: a few seconds */
		cJSON_AddNumberToObject(o, "factor", 8);
		cJSON_AddNumberToObject(o, "trials", 2);
	}
	cJSON_AddItemToArray(a, o);
	return a;
}

static int setup(const cJSON *p, const struct ocb_ctx *ctx, void **out)
{
	struct state *s = calloc(1, sizeof *s);
	(void)ctx;
	*out = NULL;
	if (!s)
		return ocb_seterr(OCB_ENOMEM, WORKLOAD ": state");
	int rc = ocb_mpi_ensure_init();
	if (rc) {
		free(s);
		return rc;
	}
	ocb_dist_sweep_defaults(&s->cfg);
	s->cfg.max_bytes = (size_t)ocb_pint(p, "max_bytes");
	s->cfg.min_bytes = (size_t)ocb_pint(p, "min_bytes");
	s->cfg.factor = (int)ocb_pint(p, "factor");
	s->cfg.budget_s = ocb_pfloat(p, "budget_s");
	s->cfg.trials = (int)ocb_pint(p, "trials");
	size_t plain = (size_t)64 << 20;
	s->cfg.plain_bytes = plain < s->cfg.max_bytes ? plain : s->cfg.max_bytes;
	*out = s;
	return OCB_OK;
}

static int put_point(const struct ocb_metric_sink *m, const char *wl,
		     const struct ocb_coll_point *p)
{
	const char *sfx = p->inplace ? "_ip" : "_oop";
	char k[4][24];
	snprintf(k[0], 24, "time_s%s", sfx);
	snprintf(k[1], 24, "algbw%s", sfx);
	snprintf(k[2], 24, "busbw%s", sfx);
	snprintf(k[3], 24, "wrong%s", sfx);
	long st = (long)p->bytes;
	int rc = ocb_metric(m, wl, st, k[0], p->time_s, "s");
	if (!rc)
		rc = ocb_metric(m, wl, st, k[1], p->algbw / 1e9, "GB/s");
	if (!rc)
		rc = ocb_metric(m, wl, st, k[2], p->busbw / 1e9, "GB/s");
	if (!rc)
		rc = ocb_metric(m, wl, st, k[3], (double)p->wrong, "elements");
	return rc;
}

static int put_fit(const struct ocb_metric_sink *m, const char *wl, const struct ocb_coll_model *f)
{
	int rc = ocb_metric(m, wl, -1, "alpha", f->alpha, "s");
	if (!rc)
		rc = ocb_metric(m, wl, -1, "beta", f->beta, "s/B");
	if (!rc)
		rc = ocb_metric(m, wl, -1, "gamma", f->gamma, "s/B");
	if (!rc)
		rc = ocb_metric(m, wl, -1, "fit_rms", f->rms_rel_err, "ratio");
	if (!rc)
		rc = ocb_metric(m, wl, -1, "fit_max", f->max_rel_err, "ratio");
	return rc;
}

static int workload(void *st, const struct ocb_ctx *ctx)
{
	struct state *s = st;
	struct ocb_dist_sweep sw;
	int n, rank, rc;
	char wl[64];
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if ((rc = ocb_dist_sweep_run(MPI_COMM_WORLD, &s->cfg, &sw)))
		return rc;
	/* the sweep's results are the same on every rank (slowest rank's times): rank 0's
	 * sink is the database, the others' discard */
	for (int i = 0; i < sw.npt && !rc; i++) {
		snprintf(wl, sizeof wl, WORKLOAD "/%s/np%d", ocb_coll_name(sw.pt[i].op), n);
		rc = put_point(&ctx->metrics, wl, &sw.pt[i]);
	}
	for (int op = 0; op < OCB_COLL_NOPS && !rc; op++)
		if (sw.fit_ok[op]) {
			snprintf(wl, sizeof wl, WORKLOAD "/%s/np%d", ocb_coll_name(op), n);
			rc = put_fit(&ctx->metrics, wl, &sw.fit[op]);
		}
	snprintf(wl, sizeof wl, WORKLOAD "/np%d", n);
	if (!rc)
		rc = ocb_metric(&ctx->metrics, wl, -1, "plain_s", sw.plain_s, "s");
	if (!rc)
		rc = ocb_metric(&ctx->metrics, wl, -1, "core_s", sw.core_s, "s");
	if (!rc)
		rc = ocb_metric(&ctx->metrics, wl, -1, "plain_bytes", (double)s->cfg.plain_bytes,
				"bytes");
	if (!rc && sw.plain_rounds > 0) {
		rc = ocb_metric(&ctx->metrics, wl, -1, "plain_ratio", sw.plain_ratio, "ratio");
		if (!rc)
			rc = ocb_metric(&ctx->metrics, wl, -1, "plain_ratio_lo", sw.plain_ratio_lo,
					"ratio");
		if (!rc)
			rc = ocb_metric(&ctx->metrics, wl, -1, "plain_ratio_hi", sw.plain_ratio_hi,
					"ratio");
		if (!rc)
			rc = ocb_metric(&ctx->metrics, wl, -1, "plain_rounds", sw.plain_rounds, "1");
	}
	if (!rc)
		rc = ocb_metric(&ctx->metrics, wl, -1, "wrong_total", (double)sw.wrong, "elements");
	ocb_dist_sweep_release(&sw);
	return rc;
}

static void teardown(void *st)
{
	free(st);
}

static const struct ocb_param coll_params[] = {
	{"max_bytes", OCB_P_INT, "268435456", 8, 1073741824, NULL, "bytes",
	 "largest size (nccl-tests -e)"},
	{"min_bytes", OCB_P_INT, "8", 4, 1073741824, NULL, "bytes", "smallest size (-b)"},
	{"factor", OCB_P_INT, "4", 2, 64, NULL, "1", "size step factor (-f)"},
	{"budget_s", OCB_P_FLOAT, "1.0", 0.001, 60, NULL, "s", "time per op and mode, roughly"},
	{"trials", OCB_P_INT, "3", 1, 20, NULL, "1", "best of this many timed loops"},
	{0},
};

const struct ocb_bench ocb_bench_dist_coll = {
	.name = WORKLOAD,
	.doc = "MPI collectives (allreduce, reduce_scatter, allgather, bcast, alltoall) 8 B..256 MiB "
	       "fp32, nccl-tests columns, #wrong, alpha-beta fit, plain MPI_Allreduce beside",
	.kind = OCB_WORKLOAD,
	.params = coll_params,
	.cases = cases,
	.setup = setup,
	.workload = workload,
	.teardown = teardown,
};
