/* projection: the scaling model of data-parallel training. From what one run measures
 * (compute time per sample, optimizer time per step, gradient bytes and buckets, the
 * share of all-reduce time hidden behind backward) and a collective cost model
 * (kernels/coll_model.h: alpha, beta, gamma, measured here or published for a fabric),
 * it predicts step time, throughput, scaling efficiency and time-to-train at p ranks,
 * at a fixed global batch (strong scaling, as the large-mini-batch papers do):
 *
 *   compute(p)  = c * (B / p) / share(p)       c: s per sample on a whole core;
 *               share(p): the share of a core each rank gets: measured (cpu_share, the
 *               suite stores CPU time / wall time of its slowest rank), else a dedicated
 *               node's min(1, cores / p): more ranks than cores time-share them
 *               (oversubscription, modelled explicitly: compute and the optimizer
 *               stretch by p / cores, and no all-reduce is hidden, because an
 *               oversubscribed rank does not poll MPI during backward)
 *               x (1 + cv * e(p))  the wait for the slowest rank of each step: a
 *               rank's compute varies from step to step (cv: sd / mean, measured), and
 *               the step ends with the slowest of p; e(p) = expected maximum of p
 *               standard normals (0 at 1, 0.56 at 2, 1.03 at 4, 3.4 at 2,048)
 *   comm(p)     = sum over buckets of the ring all-reduce of coll_model.h
 *               = nb * 2(p-1) alpha + G (2(p-1)/p beta + (p-1)/p gamma)
 *   exposed(p)  = comm - min(h * comm, backward(p)),  backward = 2/3 of compute (the
 *                 backward pass does two of the three GEMMs of a linear layer)
 *   step(p)     = compute + exposed + opt/share (opt: optimizer update, every rank does
 *                                                all of it: it does not shrink with p)
 *   throughput  = B / step;  efficiency = throughput(p) / (p * throughput(1))
 *   time_to_train = fixed + steps_to_target * step   (fixed: staging + init, measured)
 *
 * A fabric file (examples/interconnects/ *.json) gives the inter-node link:
 *   {"name": "...", "alpha_s": 6e-7, "bandwidth_GBps": 12.5, "ranks_per_node": 4,
 *    "source": "..."}
 * Up to ranks_per_node ranks the measured on-node model is used; beyond, a flat ring
 * whose slowest hop is the inter-node link (alpha_s, 1/bandwidth), conservative against
 * hierarchical all-reduce. */
#ifndef OCB_PROJECTION_H
#define OCB_PROJECTION_H

#include "../kernels/coll_model.h"

struct ocb_fabric {
	char name[128];
	char source[256];
	double alpha;        /* s per message between nodes */
	double beta;         /* s per byte between nodes */
	int ranks_per_node;
};

/* Loads a fabric file. OCB_ENOENT, OCB_EFORMAT (not JSON), OCB_EINVAL (alpha_s < 0,
 * bandwidth_GBps <= 0, ranks_per_node < 1, no name), naming the file. */
int ocb_fabric_load(const char *path, struct ocb_fabric *f);

struct ocb_proj_input {
	double compute_per_sample; /* s, one rank, forward + backward */
	double opt_s;              /* s per step, optimizer update */
	double grad_bytes;
	int nbuckets;
	double hidden_share;       /* 0..1, measured at 2 ranks */
	long global_batch;
	long steps_to_target;
	double fixed_s;            /* staging + init */
	int cores;                 /* 0: one per rank */
	double cpu_share;          /* measured share of a core per rank; 0: dedicated node */
	double compute_cv;         /* sd / mean of a rank's compute per step; 0: none */
	struct ocb_coll_model node; /* measured on this node (allreduce) */
};

/* Expected maximum of p independent standard normal variables (0 for p = 1), by
 * numerical integration of x p phi(x) Phi(x)^(p-1). */
double ocb_proj_max_normal(int p);

struct ocb_proj_point {
	int ranks;
	int oversubscribed;        /* p > cores: ranks time-share the cores */
	double share;              /* share of a core per rank used */
	double compute_s, comm_s, exposed_s, step_s;
	double samples_per_s, efficiency, time_to_train_s;
};

/* Predicts p ranks (p >= 1). fabric may be NULL (on-node model at every p).
 * OCB_EINVAL for p < 1 or a global batch smaller than p. */
int ocb_project(const struct ocb_proj_input *in, const struct ocb_fabric *fabric, int p,
		struct ocb_proj_point *out);

/* The paper-style table: p = first, 2 first, ... <= last (powers of two from 8 to 2048
 * by default), into out[max]; returns the rows written, or a negative status. */
int ocb_project_table(const struct ocb_proj_input *in, const struct ocb_fabric *fabric,
		      int first, int last, struct ocb_proj_point *out, int max);

/* Relative error of the model against a measured step time at p ranks:
 * (predicted - measured) / measured; NaN if measured <= 0 or the projection fails. */
double ocb_project_error(const struct ocb_proj_input *in, const struct ocb_fabric *fabric,
			 int p, double measured_step_s);

/* One rank count as the distributed suite measured it (metrics of dist_train and
 * dist_coll of one job). */
struct ocb_proj_measured {
	int ranks, cores, oversubscribed;
	double step_s;             /* measured mean step, slowest rank */
	double compute_per_sample; /* wall s per local sample, slowest rank */
	double cpu_share;          /* CPU / wall of the slowest rank over the run */
	double compute_share;      /* the same over the compute phases only (MPI's busy waits
				      out); 0 / NaN: not measured (cpu_share is used) */
	double compute_cv;         /* sd / mean of a step's compute (NaN: not measured) */
	double opt_s;              /* wall s per step */
	double hidden;             /* time-based hidden share (NaN: not measured) */
	double grad_bytes;
	int nbuckets;
	long global_batch;
	struct ocb_coll_model allreduce; /* the job's fitted allreduce; npoints 0: none */
};

/* The share of a core a measured point's ranks got: compute_share when measured, else
 * cpu_share; at most 1; 0 when neither was measured. */
double ocb_proj_share_of(const struct ocb_proj_measured *m);

/* Calibrates the model from the 1-rank point: c = compute_per_sample * share (s of a
 * whole core per sample; share: ocb_proj_share_of), opt = opt_s * share; gradient bytes,
 * buckets, batch and the compute's step-to-step spread (compute_cv) as measured. hidden (from a multi-rank point) and node are the caller's to set.
 * OCB_EINVAL when one is not a measured 1-rank point. */
int ocb_proj_calibrate(const struct ocb_proj_measured *one, struct ocb_proj_input *in);

/* The model's step time of a measured point m from the calibrated input: m's own
 * share (ocb_proj_share_of), compute spread (when measured) and fitted allreduce (the communication the job measured), m's hidden share
 * when measured, else cal's. OCB_EINVAL for a point without a fit on more than one rank. */
int ocb_proj_reproduce(const struct ocb_proj_input *cal, const struct ocb_proj_measured *m,
		       struct ocb_proj_point *out);

#endif
