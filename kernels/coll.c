/* coll: the collectives benchmark core (see coll.h). Formulas: nccl-tests
 * doc/PERFORMANCE.md (algbw, busbw factors); REFERENCE.md §3. */
#include "coll.h"

#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"

static const char *const names[OCB_COLL_NOPS] = {"allreduce", "reduce_scatter", "allgather",
						 "bcast", "alltoall"};

const char *ocb_coll_name(enum ocb_coll_op op)
{
	return (unsigned)op < OCB_COLL_NOPS ? names[op] : NULL;
}

int ocb_coll_parse(const char *name, enum ocb_coll_op *op)
{
	for (int i = 0; i < OCB_COLL_NOPS; i++)
		if (name && strcmp(name, names[i]) == 0) {
			*op = (enum ocb_coll_op)i;
			return OCB_OK;
		}
	return ocb_seterr(OCB_EINVAL, "unknown collective '%s' (allreduce, reduce_scatter, "
				      "allgather, bcast, alltoall)", name ? name : "");
}

double ocb_coll_busbw_factor(enum ocb_coll_op op, int n)
{
	if (n < 1)
		return 0.0;
	switch (op) {
	case OCB_COLL_ALLREDUCE: return 2.0 * (n - 1) / n;
	case OCB_COLL_REDUCE_SCATTER:
	case OCB_COLL_ALLGATHER:
	case OCB_COLL_ALLTOALL: return (double)(n - 1) / n;
	default: return 1.0;
	}
}

static int blocked(enum ocb_coll_op op)
{
	return op == OCB_COLL_REDUCE_SCATTER || op == OCB_COLL_ALLGATHER || op == OCB_COLL_ALLTOALL;
}

size_t ocb_coll_fit_bytes(enum ocb_coll_op op, int nranks, size_t bytes)
{
	size_t unit = sizeof(float) * (blocked(op) && nranks > 0 ? (size_t)nranks : 1);
	return bytes / unit * unit;
}

int ocb_coll_bufs_init(struct ocb_coll_bufs *b, size_t max_bytes)
{
	memset(b, 0, sizeof *b);
	b->send = ocb_alloc(max_bytes);
	b->recv = ocb_alloc(max_bytes);
	if (!b->send || !b->recv) {
		ocb_coll_bufs_release(b);
		return ocb_seterr(OCB_ENOMEM, "collectives: two buffers of %zu bytes", max_bytes);
	}
	/* touch every page now: the timed calls must not pay first-touch faults */
	memset(b->send, 0, max_bytes);
	memset(b->recv, 0, max_bytes);
	b->max_bytes = max_bytes;
	return OCB_OK;
}

void ocb_coll_bufs_release(struct ocb_coll_bufs *b)
{
	ocb_free(b->send);
	ocb_free(b->recv);
	memset(b, 0, sizeof *b);
}

/* The value rank r contributes at global index i: a small integer, so sums over up to
 * ~500000 ranks stay exact in fp32 (32 * n < 2^24). */
static inline float val(int r, size_t i)
{
	return (float)((i * 7 + (size_t)r * 13) % 31 + 1);
}

/* Fills the buffer(s) the call reads: `src` (send, or recv for in-place). */
static void fill(enum ocb_coll_op op, int r, int n, size_t count, int inplace, float *send,
		 float *recv)
{
	float *src = inplace ? recv : send;
	size_t blk = count / (size_t)n;
	switch (op) {
	case OCB_COLL_ALLGATHER:
		/* out-of-place sends blk elements; in place they sit at block r of recv */
		for (size_t j = 0; j < blk; j++)
			(inplace ? recv + (size_t)r * blk : send)[j] = val(r, (size_t)r * blk + j);
		break;
	case OCB_COLL_BCAST:
		for (size_t i = 0; i < count; i++)
			recv[i] = r == 0 ? val(0, i) : -1.0f;
		break;
	default:
		for (size_t i = 0; i < count; i++)
			src[i] = val(r, i);
	}
}

/* Elements of recv that differ from the exact result on rank r. */
static long verify(enum ocb_coll_op op, int r, int n, size_t count, const float *recv)
{
	size_t blk = count / (size_t)n;
	long wrong = 0;
	switch (op) {
	case OCB_COLL_ALLREDUCE:
		for (size_t i = 0; i < count; i++) {
			float e = 0.0f;
			for (int q = 0; q < n; q++)
				e += val(q, i);
			wrong += recv[i] != e;
		}
		break;
	case OCB_COLL_REDUCE_SCATTER:
		for (size_t j = 0; j < blk; j++) {
			float e = 0.0f;
			for (int q = 0; q < n; q++)
				e += val(q, (size_t)r * blk + j);
			wrong += recv[j] != e;
		}
		break;
	case OCB_COLL_ALLGATHER:
		for (size_t i = 0; i < count; i++)
			wrong += recv[i] != val((int)(i / blk), i);
		break;
	case OCB_COLL_BCAST:
		for (size_t i = 0; i < count; i++)
			wrong += recv[i] != val(0, i);
		break;
	default: /* alltoall: block q of recv came from rank q's block r */
		for (size_t i = 0; i < count; i++)
			wrong += recv[i] != val((int)(i / blk), (size_t)r * blk + i % blk);
	}
	return wrong;
}

/* One call. MPI_Bcast has a single buffer: its in-place and out-of-place rows run the
 * same call (as MPI defines it), on recv. */
static int call(MPI_Comm comm, enum ocb_coll_op op, size_t count, int n, int inplace,
		float *send, float *recv)
{
	const void *sb = inplace ? MPI_IN_PLACE : send;
	int blk = (int)(count / (size_t)n), c = (int)count;
	switch (op) {
	case OCB_COLL_ALLREDUCE: return MPI_Allreduce(sb, recv, c, MPI_FLOAT, MPI_SUM, comm);
	case OCB_COLL_REDUCE_SCATTER:
		return MPI_Reduce_scatter_block(sb, recv, blk, MPI_FLOAT, MPI_SUM, comm);
	case OCB_COLL_ALLGATHER:
		return MPI_Allgather(sb, blk, MPI_FLOAT, recv, blk, MPI_FLOAT, comm);
	case OCB_COLL_BCAST: return MPI_Bcast(recv, c, MPI_FLOAT, 0, comm);
	default:
		return inplace ? MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, blk,
					      MPI_FLOAT, comm)
			       : MPI_Alltoall(send, blk, MPI_FLOAT, recv, blk, MPI_FLOAT, comm);
	}
}

int ocb_coll_iters_for(size_t bytes, double target_s, double guess_bw, int lo, int hi)
{
	double it = bytes ? target_s * guess_bw / (double)bytes : hi;
	return it < lo ? lo : it > hi ? hi : (int)it;
}

/* Best (over trials) of the slowest rank's mean time of `iters` calls. */
static int timed_loops(MPI_Comm comm, enum ocb_coll_op op, size_t count, int n, int inplace,
		       struct ocb_coll_bufs *b, int iters, int trials, double *best)
{
	*best = 0.0;
	for (int t = 0; t < trials; t++) {
		if (MPI_Barrier(comm) != MPI_SUCCESS)
			return OCB_ERUNTIME;
		double t0 = MPI_Wtime();
		for (int i = 0; i < iters; i++)
			if (call(comm, op, count, n, inplace, b->send, b->recv) != MPI_SUCCESS)
				return OCB_ERUNTIME;
		double dt = (MPI_Wtime() - t0) / iters;
		if (MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS)
			return OCB_ERUNTIME;
		if (t == 0 || dt < *best)
			*best = dt;
	}
	return OCB_OK;
}

/* The verification call, a timed warm-up call (slowest rank), then the trials. iters <= 0:
 * chosen from the warm-up so that one loop lasts about target_s (1 .. 1000). */
static int measure(MPI_Comm comm, struct ocb_coll_bufs *b, enum ocb_coll_op op, size_t bytes,
		   int inplace, int iters, double target_s, int trials, struct ocb_coll_point *pt)
{
	int r, n;
	memset(pt, 0, sizeof *pt);
	MPI_Comm_rank(comm, &r);
	MPI_Comm_size(comm, &n);
	if ((unsigned)op >= OCB_COLL_NOPS || bytes == 0 || bytes > b->max_bytes ||
	    ocb_coll_fit_bytes(op, n, bytes) != bytes || (iters < 1 && !(target_s > 0)) ||
	    trials < 1 || bytes / sizeof(float) > (size_t)0x7fffffff)
		return ocb_seterr(OCB_EINVAL, "collectives: %s of %zu bytes on %d ranks "
					      "(buffers %zu bytes, iters %d, trials %d)",
				  ocb_coll_name(op) ? ocb_coll_name(op) : "?", bytes, n,
				  b->max_bytes, iters, trials);
	size_t count = bytes / sizeof(float);
	*pt = (struct ocb_coll_point){.op = op, .nranks = n, .inplace = inplace, .bytes = bytes,
				      .count = count, .iters = iters, .trials = trials};
	fill(op, r, n, count, inplace, b->send, b->recv);
	if (call(comm, op, count, n, inplace, b->send, b->recv) != MPI_SUCCESS)
		return ocb_seterr(OCB_ERUNTIME, "collectives: %s failed", ocb_coll_name(op));
	long wrong = verify(op, r, n, count, b->recv);
	if (MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, comm) != MPI_SUCCESS)
		return ocb_seterr(OCB_ERUNTIME, "collectives: %s: reduce of #wrong failed",
				  ocb_coll_name(op));
	pt->wrong = wrong;
	double best;
	if (timed_loops(comm, op, count, n, inplace, b, 1, 1, &best)) /* warm-up */
		return ocb_seterr(OCB_ERUNTIME, "collectives: %s failed", ocb_coll_name(op));
	if (iters < 1)
		pt->iters = iters = ocb_coll_iters_for(1, target_s, best > 0 ? 1.0 / best : 1e9,
						       1, 1000);
	if (timed_loops(comm, op, count, n, inplace, b, iters, trials, &best))
		return ocb_seterr(OCB_ERUNTIME, "collectives: %s failed", ocb_coll_name(op));
	pt->time_s = best;
	pt->algbw = best > 0.0 ? (double)bytes / best : 0.0;
	pt->busbw = pt->algbw * ocb_coll_busbw_factor(op, n);
	return OCB_OK;
}

int ocb_coll_measure(MPI_Comm comm, struct ocb_coll_bufs *b, enum ocb_coll_op op, size_t bytes,
		     int inplace, int iters, int trials, struct ocb_coll_point *pt)
{
	if (iters < 1)
		return ocb_seterr(OCB_EINVAL, "collectives: %d iterations", iters);
	return measure(comm, b, op, bytes, inplace, iters, 0.0, trials, pt);
}

int ocb_coll_measure_for(MPI_Comm comm, struct ocb_coll_bufs *b, enum ocb_coll_op op,
			 size_t bytes, int inplace, double target_s, int trials,
			 struct ocb_coll_point *pt)
{
	return measure(comm, b, op, bytes, inplace, 0, target_s, trials, pt);
}

int ocb_coll_time(MPI_Comm comm, struct ocb_coll_bufs *b, enum ocb_coll_op op, size_t bytes,
		  int inplace, int iters, double *time_s)
{
	int n;
	MPI_Comm_size(comm, &n);
	*time_s = 0.0;
	if ((unsigned)op >= OCB_COLL_NOPS || bytes == 0 || bytes > b->max_bytes ||
	    ocb_coll_fit_bytes(op, n, bytes) != bytes || iters < 1 ||
	    bytes / sizeof(float) > (size_t)0x7fffffff)
		return ocb_seterr(OCB_EINVAL, "collectives: timed loop of %d x %zu bytes on %d "
					      "ranks (buffers %zu bytes)", iters, bytes, n,
				  b->max_bytes);
	if (timed_loops(comm, op, bytes / sizeof(float), n, inplace, b, iters, 1, time_s))
		return ocb_seterr(OCB_ERUNTIME, "collectives: %s failed", ocb_coll_name(op));
	return OCB_OK;
}

int ocb_coll_plain_init(MPI_Comm comm, size_t bytes, struct ocb_coll_plain *p)
{
	memset(p, 0, sizeof *p);
	if (bytes < sizeof(float) || bytes / sizeof(float) > (size_t)0x7fffffff)
		return ocb_seterr(OCB_EINVAL, "plain allreduce: %zu bytes", bytes);
	p->count = (int)(bytes / sizeof(float));
	p->a = ocb_alloc(bytes);
	p->s = ocb_alloc(bytes); /* ocb_alloc touches every page */
	if (!p->a || !p->s) {
		ocb_coll_plain_release(p);
		return ocb_seterr(OCB_ENOMEM, "plain allreduce: %zu bytes", bytes);
	}
	for (int i = 0; i < p->count; i++)
		p->a[i] = 1.0f;
	if (MPI_Allreduce(p->a, p->s, p->count, MPI_FLOAT, MPI_SUM, comm) != MPI_SUCCESS) {
		ocb_coll_plain_release(p);
		return ocb_seterr(OCB_ERUNTIME, "plain allreduce failed");
	}
	return OCB_OK;
}

int ocb_coll_plain_time(MPI_Comm comm, const struct ocb_coll_plain *p, int iters,
			double *time_s)
{
	*time_s = 0.0;
	if (iters < 1)
		return ocb_seterr(OCB_EINVAL, "plain allreduce: %d iterations", iters);
	if (MPI_Barrier(comm) != MPI_SUCCESS)
		return ocb_seterr(OCB_ERUNTIME, "plain allreduce: barrier failed");
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++)
		if (MPI_Allreduce(p->a, p->s, p->count, MPI_FLOAT, MPI_SUM, comm) != MPI_SUCCESS)
			return ocb_seterr(OCB_ERUNTIME, "plain allreduce failed");
	double dt = (MPI_Wtime() - t0) / iters;
	if (MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS)
		return ocb_seterr(OCB_ERUNTIME, "plain allreduce: reduce of the time failed");
	*time_s = dt;
	return OCB_OK;
}

void ocb_coll_plain_release(struct ocb_coll_plain *p)
{
	ocb_free(p->a);
	ocb_free(p->s);
	memset(p, 0, sizeof *p);
}

int ocb_coll_plain_allreduce(MPI_Comm comm, size_t bytes, int iters, int trials, double *time_s)
{
	struct ocb_coll_plain p;
	int rc = ocb_coll_plain_init(comm, bytes, &p);
	*time_s = 0.0;
	for (int t = 0; t < trials && !rc; t++) {
		double dt;
		if (!(rc = ocb_coll_plain_time(comm, &p, iters, &dt)))
			*time_s = t == 0 || dt < *time_s ? dt : *time_s;
	}
	ocb_coll_plain_release(&p);
	return rc;
}
