/* ocb_xroof: the extended roofline of a training step (MLPerf HPC, Farrell et al.:
 * results characterised by compute, memory, network and I/O so that extended roofline
 * models can be parameterised; REFERENCE.md §1). For one step on one rank, each measured
 * ceiling gives a lower bound on the step time:
 *
 *   compute   flops      / peak FLOP/s          (flops_sgemm ceiling at the rank's threads)
 *   memory    mem_bytes  / DRAM bandwidth       (bw_dram)
 *   network   net_bytes  / all-reduce busbw     (the collectives sweep, largest size;
 *                                                net_bytes = 2(p-1)/p x gradient bytes,
 *                                                nccl-tests' bus bytes)
 *   staging   io_bytes   / dataset read rate    (decompressed bytes / staging time)
 *
 * The largest bound is the step's roof (what it cannot beat); fraction = roof / measured
 * step time (1: at the roof). A ceiling that is unknown (<= 0 or NaN) or work of 0 gives
 * a NaN bound that never wins. Pure: no I/O, no allocation. */
#ifndef OCB_XROOF_H
#define OCB_XROOF_H

enum ocb_xroof_kind { OCB_XROOF_COMPUTE, OCB_XROOF_MEMORY, OCB_XROOF_NETWORK,
		      OCB_XROOF_STAGING, OCB_XROOF_N };

struct ocb_xroof_work {
	double flops, mem_bytes, net_bytes, io_bytes; /* one step, one rank */
};

struct ocb_xroof_ceil {
	double flops_per_s, mem_bytes_per_s, net_bytes_per_s, io_bytes_per_s;
};

struct ocb_xroof {
	double t[OCB_XROOF_N];   /* s, lower bound of each ceiling (NaN: unknown) */
	enum ocb_xroof_kind bound; /* the largest known bound */
	double t_bound;          /* s; NaN when no bound is known */
	double fraction;         /* t_bound / measured; NaN if unknown */
};

/* "compute", "memory", "network", "staging". */
const char *ocb_xroof_name(enum ocb_xroof_kind k);

/* Places a measured step time (s) against the four ceilings. */
void ocb_xroof_place(const struct ocb_xroof_work *w, const struct ocb_xroof_ceil *c,
		     double measured_s, struct ocb_xroof *out);

#endif
