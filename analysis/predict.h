/* predict: a measured case beside its roofline prediction (issue 13, "predicted vs
 * measured"). Pure: the caller hands in the case's static work (from its bench's work
 * model: ops and bytes of one repetition), the bound the harness stored for it and the
 * machine's measured ceilings; nothing here reads a database or a clock.
 *
 * The prediction of one repetition is the roofline time (REFERENCE.md §3)
 *     t_mem     = bytes / B(level, threads)
 *     t_compute = ops / C(threads)
 *     predicted = max(t_mem, t_compute)
 * where level is the memory level in the stored bound (the harness chose it from the
 * working set the case really streams: a DRAM-level GEMV rotates over copies of W larger
 * than twice the last-level cache, so it is DRAM; a model that fits the L3 is served from
 * the L3), C the stored compute roof, and both ceilings are taken at the case's thread
 * count (ocb_roof_find: a 1-thread case against the per-thread roofs, an all-threads case
 * against the aggregate ones). No constant is added or scaled in: ratio = measured /
 * predicted, 1 = a case at its roof.
 *
 * Ownership: plain values; strings borrowed. */
#ifndef OCB_PREDICT_H
#define OCB_PREDICT_H

#include <stddef.h>

#include "../common/ocb_roofline.h"

struct ocb_pvm_case {
	const char *bench;   /* registered name: "quant_gemv", "decode_pass", ... */
	const char *bound;   /* result.bound: "roofline:ops_int8,bw_dram", "bw_dram", ... */
	int threads;
	double ops, bytes;   /* static work of one repetition (ops in the compute roof's unit) */
	double measured_s;   /* median seconds of one repetition */
};

struct ocb_pvm {
	double predicted_s;  /* max(t_mem, t_compute); NaN when a roof is missing */
	double t_mem, t_compute; /* seconds (NaN: that roof is not in the bound or missing) */
	double ratio;        /* measured / predicted */
	char binds[40];      /* the roof that gives predicted: "bw_dram", "ops_int8", ... */
	double roof;         /* its value: GB/s for bandwidth, G(FL)OP/s for compute */
	int roof_threads;    /* the thread count the ceiling was measured at */
};

/* 1 for the cases the report sets beside a prediction: every decode_pass, and the
 * quant_gemv cases whose bound streams from DRAM. */
int ocb_pvm_wanted(const char *bench, const char *bound);

/* The prediction of k from ceilings c[0..n). OCB_OK, or OCB_EINVAL for an unparsable
 * bound or work that is not positive (out then holds NaNs and ""). A roof the bound names
 * but the machine lacks is not an error: NaN, binds "no <kind>". */
int ocb_pvm_predict(const struct ocb_roof_ceil *c, size_t n, const struct ocb_pvm_case *k,
		    struct ocb_pvm *out);

/* 1 when |ratio - 1| <= tol (0.25: "within 25%"), 0 otherwise or for NaN. */
int ocb_pvm_within(double ratio, double tol);

#endif
