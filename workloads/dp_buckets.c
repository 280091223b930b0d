/* dp_buckets: bucketed non-blocking gradient all-reduce (see dp_buckets.h). */
#include "dp_buckets.h"

#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_stats.h"

int ocb_dp_buckets_init(struct ocb_dp_buckets *bk, const struct ocb_mlp *m, MPI_Comm comm,
			size_t bucket_bytes)
{
	int L = m->cfg.nlayers, cap = 0;
	memset(bk, 0, sizeof *bk);
	bk->comm = comm;
	MPI_Comm_size(comm, &bk->nranks);
	for (int i = 0; i < L; i++) {
		size_t row = (size_t)m->cfg.dims[i] * sizeof(float);
		int per = (int)(bucket_bytes / row) < 1 ? 1 : (int)(bucket_bytes / row);
		cap += (m->cfg.dims[i + 1] + per - 1) / per;
		if (m->b_off[i] != m->w_off[i] + (size_t)m->cfg.dims[i] * m->cfg.dims[i + 1])
			return ocb_seterr(OCB_EINVAL, "dp buckets: layer %d bias not after weights", i);
	}
	bk->b = calloc((size_t)cap, sizeof *bk->b);
	bk->req = calloc((size_t)cap, sizeof *bk->req);
	bk->idx = calloc((size_t)cap, sizeof *bk->idx);
	if (!bk->b || !bk->req || !bk->idx) {
		ocb_dp_buckets_release(bk);
		return ocb_seterr(OCB_ENOMEM, "dp buckets");
	}
	for (int i = L - 1; i >= 0; i--) {
		int in = m->cfg.dims[i], out = m->cfg.dims[i + 1];
		int per = (int)(bucket_bytes / ((size_t)in * sizeof(float)));
		per = per < 1 ? 1 : per;
		for (int r0 = 0; r0 < out; r0 += per) {
			int r1 = r0 + per < out ? r0 + per : out;
			size_t len = (size_t)(r1 - r0) * in + (r1 == out ? (size_t)out : 0);
			bk->b[bk->n++] = (struct ocb_dp_bucket){i, r0, r1,
								 m->w_off[i] + (size_t)r0 * in, len};
		}
	}
	for (int i = 0; i < cap; i++)
		bk->req[i] = MPI_REQUEST_NULL;
	return OCB_OK;
}

void ocb_dp_buckets_release(struct ocb_dp_buckets *bk)
{
	free(bk->b);
	free(bk->req);
	free(bk->idx);
	memset(bk, 0, sizeof *bk);
}

int ocb_dp_buckets_start(struct ocb_dp_buckets *bk, int i, float *grads)
{
	double t0 = MPI_Wtime();
	const struct ocb_dp_bucket *b = &bk->b[i];
	int rc = MPI_Iallreduce(MPI_IN_PLACE, grads + b->off, (int)b->len, MPI_FLOAT, MPI_SUM,
				bk->comm, &bk->req[i]);
	bk->started++;
	bk->all_floats += (double)b->len;
	bk->exposed_s += MPI_Wtime() - t0;
	if (rc != MPI_SUCCESS)
		return ocb_seterr(OCB_ERUNTIME, "dp: MPI_Iallreduce failed");
	return bk->quiet ? OCB_OK : ocb_dp_buckets_poll(bk);
}

/* One Testsome over the started requests, counting what completed. */
static int test_some(struct ocb_dp_buckets *bk)
{
	int done;
	if (!bk->started)
		return OCB_OK;
	double t0 = MPI_Wtime();
	/* Testsome: completed requests become MPI_REQUEST_NULL and say which they were */
	int rc = MPI_Testsome(bk->n, bk->req, &done, bk->idx, MPI_STATUSES_IGNORE);
	for (int i = 0; rc == MPI_SUCCESS && done != MPI_UNDEFINED && i < done; i++)
		bk->done_floats += (double)bk->b[bk->idx[i]].len;
	bk->polls++;
	bk->exposed_s += MPI_Wtime() - t0;
	return rc == MPI_SUCCESS ? OCB_OK : ocb_seterr(OCB_ERUNTIME, "dp: MPI_Testsome failed");
}

int ocb_dp_buckets_poll(struct ocb_dp_buckets *bk)
{
	return bk->quiet ? OCB_OK : test_some(bk);
}

int ocb_dp_buckets_wait(struct ocb_dp_buckets *bk)
{
	double t0 = MPI_Wtime();
	if (MPI_Barrier(bk->comm) != MPI_SUCCESS)
		return ocb_seterr(OCB_ERUNTIME, "dp: MPI_Barrier failed");
	double t1 = MPI_Wtime();
	bk->skew_s += t1 - t0;
	/* every rank has finished backward: what is complete now was hidden behind it (the
	 * slowest rank's backward is the step's critical path) */
	if (test_some(bk))
		return ocb_seterr(OCB_ERUNTIME, "dp: MPI_Testsome failed");
	t0 = MPI_Wtime();
	int rc = MPI_Waitall(bk->n, bk->req, MPI_STATUSES_IGNORE);
	bk->exposed_s += MPI_Wtime() - t0;
	bk->wait_s += MPI_Wtime() - t0;
	bk->started = 0;
	return rc == MPI_SUCCESS ? OCB_OK : ocb_seterr(OCB_ERUNTIME, "dp: MPI_Waitall failed");
}

int ocb_dp_buckets_blocking_time(struct ocb_dp_buckets *bk, float *scratch, int reps,
				 double *time_s)
{
	*time_s = 0.0;
	for (int r = 0; r < reps; r++) {
		MPI_Barrier(bk->comm);
		double t0 = MPI_Wtime();
		for (int i = 0; i < bk->n; i++)
			if (MPI_Allreduce(MPI_IN_PLACE, scratch + bk->b[i].off, (int)bk->b[i].len,
					  MPI_FLOAT, MPI_SUM, bk->comm) != MPI_SUCCESS)
				return ocb_seterr(OCB_ERUNTIME, "dp: MPI_Allreduce failed");
		double dt = MPI_Wtime() - t0;
		MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, bk->comm);
		if (r == 0 || dt < *time_s)
			*time_s = dt;
	}
	return OCB_OK;
}

int ocb_dp_buckets_nonblocking_time(struct ocb_dp_buckets *bk, float *scratch, int reps,
				    double *time_s)
{
	double t[16];
	reps = reps < 1 ? 1 : reps > 16 ? 16 : reps;
	for (int r = 0; r < reps; r++) {
		MPI_Barrier(bk->comm);
		double t0 = MPI_Wtime();
		for (int i = 0; i < bk->n; i++)
			if (MPI_Iallreduce(MPI_IN_PLACE, scratch + bk->b[i].off, (int)bk->b[i].len,
					   MPI_FLOAT, MPI_SUM, bk->comm, &bk->req[i]) != MPI_SUCCESS)
				return ocb_seterr(OCB_ERUNTIME, "dp: MPI_Iallreduce failed");
		if (MPI_Waitall(bk->n, bk->req, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
			return ocb_seterr(OCB_ERUNTIME, "dp: MPI_Waitall failed");
		t[r] = MPI_Wtime() - t0;
		MPI_Allreduce(MPI_IN_PLACE, &t[r], 1, MPI_DOUBLE, MPI_MAX, bk->comm);
	}
	*time_s = ocb_median(t, (size_t)reps);
	return OCB_OK;
}
