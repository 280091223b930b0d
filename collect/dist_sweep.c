/* dist_sweep: the nccl-tests-style table over every collective (see dist_sweep.h). */
#include "dist_sweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_stats.h"

/* Paired rounds of the core's allreduce and the plain MPI_Allreduce loop (at most). */
#define MAX_PLAIN_ROUNDS 64

void ocb_dist_sweep_defaults(struct ocb_dist_sweep_cfg *c)
{
	c->min_bytes = 8;
	c->max_bytes = (size_t)256 << 20;
	c->factor = 4;
	c->budget_s = 1.0;
	c->trials = 3;
	c->plain_bytes = (size_t)64 << 20;
	c->plain_rounds = 16;
}

/* Sizes of one op: min..max by factor, fitted to the op's granularity, no repeats. */
static int sizes_of(enum ocb_coll_op op, int n, const struct ocb_dist_sweep_cfg *c,
		    size_t *out, int max)
{
	int k = 0;
	for (size_t b = c->min_bytes; b <= c->max_bytes && k < max; b *= (size_t)c->factor) {
		size_t f = ocb_coll_fit_bytes(op, n, b);
		if (f && (k == 0 || out[k - 1] != f))
			out[k++] = f;
	}
	return k;
}

static int sweep_op(MPI_Comm comm, struct ocb_coll_bufs *b, enum ocb_coll_op op, int n,
		    const struct ocb_dist_sweep_cfg *c, struct ocb_dist_sweep *s)
{
	size_t sz[64];
	double xs[64], ts[64];
	int ns = sizes_of(op, n, c, sz, 64), nfit = 0, rc = OCB_OK;
	for (int i = 0; i < ns && !rc; i++)
		for (int inplace = 0; inplace < 2 && !rc; inplace++) {
			struct ocb_coll_point *p = &s->pt[s->npt];
			/* each size its share of the budget; iterations from a timed call */
			rc = ocb_coll_measure_for(comm, b, op, sz[i], inplace,
						  c->budget_s / ns / c->trials, c->trials, p);
			if (rc)
				break;
			s->npt++;
			s->wrong += p->wrong;
			if (!inplace) {
				xs[nfit] = (double)sz[i];
				ts[nfit++] = p->time_s;
			}
		}
	if (!rc && n > 1)
		s->fit_ok[op] = ocb_coll_model_fit(op, n, xs, ts, nfit, s->gamma, &s->fit[op]) ==
				OCB_OK;
	return rc;
}

/* The core's allreduce of pb bytes beside the plain loop: a verified measure of the core
 * (its iterations make one loop ~ budget / rounds), then `rounds` rounds of one loop
 * of each with the same iterations, the first of the pair swapped every round. */
static int plain_vs_core(MPI_Comm comm, struct ocb_coll_bufs *b, size_t pb,
			 const struct ocb_dist_sweep_cfg *c, struct ocb_dist_sweep *s)
{
	struct ocb_coll_point p;
	struct ocb_coll_plain pl;
	double ratio[MAX_PLAIN_ROUNDS];
	int rounds = c->plain_rounds < 3 ? 3 : c->plain_rounds > MAX_PLAIN_ROUNDS
							? MAX_PLAIN_ROUNDS : c->plain_rounds;
	int rc = ocb_coll_measure_for(comm, b, OCB_COLL_ALLREDUCE, pb, 0,
				      c->budget_s / rounds, 1, &p);
	if (rc)
		return rc;
	s->wrong += p.wrong;
	s->core_s = p.time_s;
	if ((rc = ocb_coll_plain_init(comm, pb, &pl)))
		return rc;
	for (int r = 0; r < rounds && !rc; r++) {
		double tc = 0.0, tp = 0.0;
		if (r & 1)
			rc = ocb_coll_plain_time(comm, &pl, p.iters, &tp);
		if (!rc)
			rc = ocb_coll_time(comm, b, OCB_COLL_ALLREDUCE, pb, 0, p.iters, &tc);
		if (!rc && !(r & 1))
			rc = ocb_coll_plain_time(comm, &pl, p.iters, &tp);
		if (rc)
			break;
		s->core_s = tc < s->core_s ? tc : s->core_s;
		s->plain_s = r == 0 || tp < s->plain_s ? tp : s->plain_s;
		ratio[r] = tc > 0.0 ? tp / tc : NAN;
	}
	ocb_coll_plain_release(&pl);
	struct ocb_stats st;
	if (!rc && !(rc = ocb_stats_compute(ratio, (size_t)rounds, &st))) {
		s->plain_ratio = st.median;
		s->plain_ratio_lo = st.ci_low;
		s->plain_ratio_hi = st.ci_high;
		s->plain_rounds = rounds;
	}
	return rc;
}

int ocb_dist_sweep_run(MPI_Comm comm, const struct ocb_dist_sweep_cfg *c,
		       struct ocb_dist_sweep *s)
{
	struct ocb_coll_bufs b = {0};
	int n, rc;
	memset(s, 0, sizeof *s);
	s->plain_ratio = s->plain_ratio_lo = s->plain_ratio_hi = NAN;
	MPI_Comm_size(comm, &n);
	if (c->min_bytes < 4 || c->max_bytes < c->min_bytes || c->factor < 2 || c->trials < 1)
		return ocb_seterr(OCB_EINVAL, "collectives sweep: sizes %zu..%zu by %d, %d trials",
				  c->min_bytes, c->max_bytes, c->factor, c->trials);
	s->pt = calloc((size_t)OCB_COLL_NOPS * 2 * 64, sizeof *s->pt);
	if (!s->pt)
		return ocb_seterr(OCB_ENOMEM, "collectives sweep");
	size_t need = c->max_bytes > c->plain_bytes ? c->max_bytes : c->plain_bytes;
	if ((rc = ocb_coll_bufs_init(&b, need)) ||
	    (rc = ocb_coll_measure_gamma((size_t)4 << 20, 3, &s->gamma)))
		goto out;
	/* every rank fits with the same gamma: the slowest rank's */
	MPI_Allreduce(MPI_IN_PLACE, &s->gamma, 1, MPI_DOUBLE, MPI_MAX, comm);
	for (int op = 0; op < OCB_COLL_NOPS && !rc; op++)
		rc = sweep_op(comm, &b, (enum ocb_coll_op)op, n, c, s);
	if (!rc && c->plain_bytes)
		rc = plain_vs_core(comm, &b, ocb_coll_fit_bytes(OCB_COLL_ALLREDUCE, n,
								c->plain_bytes), c, s);
out:
	ocb_coll_bufs_release(&b);
	if (rc)
		ocb_dist_sweep_release(s);
	return rc;
}

void ocb_dist_sweep_release(struct ocb_dist_sweep *s)
{
	free(s->pt);
	memset(s, 0, sizeof *s);
}
