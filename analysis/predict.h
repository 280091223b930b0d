/* predict: a measured case beside its roofline prediction (issue 13, "predicted vs
 * measured"). Pure: the caller hands in the case's static work (from its bench's work
 * model: ops and bytes of one repetition), the bound the harness stored for it and the
 * machine's measured ceilings; nothing here reads a database or a clock.
 *
 * The prediction of one repetition is the roofline time (REFERENCE.md §3)
 *     t_mem     = bytes / B(level, threads)
 *     t_compute = ops / C(threads)
 *     predicted = max(t_mem, t_compute)
 * where C is the stored compute roof, both ceilings are taken at the case's thread
 * count (ocb_roof_find: a 1-thread case against the per-thread roofs, an all-threads case
 * against the aggregate ones), and level is the slower of
 *   - the level in the stored bound: the harness chose it from the working set the case
 *     really streams (a DRAM-level GEMV rotates over copies of W larger than twice the
 *     last-level cache), with the cache sizes known when it ran, and
 *   - ocb_roof_level(caches, bytes, threads): one repetition streams `bytes` again and
 *     again, so its working set is at least that; the caches are the machine's as known
 *     now (db/records.h ocb_machine_caches). Why both: a capacity learnt after the run
 *     (a measured last-level cache where the VM reports its host's 480 MiB L3, while a
 *     thread here keeps ~20-30 MB) corrects the level of stored results at report time;
 *     whatever fills caches->l3 with a measured capacity switches every prediction here
 *     and the harness's own bounds (both go through ocb_roof_level).
 * No constant is added or scaled in: ratio = measured / predicted, 1 = a case at its
 * roof.
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
	int relevelled;      /* 1: the caches moved the level below the stored bound's */
};

/* The memory level k streams from (the rule above): an enum ocb_level, or -1 when the
 * bound names no bandwidth roof or cannot be parsed. caches NULL: the stored level. */
int ocb_pvm_level(const struct ocb_pvm_case *k, const struct ocb_roof_caches *caches);

/* 1 for the cases the report sets beside a prediction: every decode_pass, and the
 * quant_gemv cases that stream from DRAM (ocb_pvm_level). */
int ocb_pvm_wanted(const struct ocb_pvm_case *k, const struct ocb_roof_caches *caches);

/* The prediction of k from ceilings c[0..n) and the machine's caches (NULL: the stored
 * level). OCB_OK, or OCB_EINVAL for an unparsable bound or work that is not positive (out
 * then holds NaNs and ""). A roof the bound names but the machine lacks is not an error:
 * NaN, binds "no <kind>". */
int ocb_pvm_predict(const struct ocb_roof_ceil *c, size_t n, const struct ocb_roof_caches *caches,
		    const struct ocb_pvm_case *k, struct ocb_pvm *out);

/* 1 when |ratio - 1| <= tol (0.25: "within 25%"), 0 otherwise or for NaN. */
int ocb_pvm_within(double ratio, double tol);

#endif
