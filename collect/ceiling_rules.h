/* ceiling_rules: the consistency rules a set of measured ceilings must satisfy before
 * ocbench trusts it (issue 8). A ceiling is an attained rate, so the rules are what
 * attained rates of one machine must obey whatever the machine:
 *   trials   at least 3 best-of trials whose spread (best - worst) / best <= spread_max
 *            (cap_spread_max for a capacity, kind "cap_*")
 *   balance  every thread of an N-thread kernel within balance_min of the fastest one
 *            (a thread sharing its core with another process runs at about half rate)
 *   cores    every thread got >= share_min of its core (CPU time / wall time): below,
 *            another task ran there during the trials (a busy host)
 *   scaling  N threads >= scale_min x 1 thread for the compute roofs (flops_fp32,
 *            ops_int8, flops_sgemm) and the per-core caches (bw_l1, bw_l2, + _triad)
 *   sgemm    flops_sgemm <= sgemm_peak_max x flops_fp32 (a BLAS cannot beat the
 *            machine's FMA peak, which is measured with the widest FMA the CPU offers,
 *            as the BLAS's own kernels use it) and >= sgemm_peak_min x flops_fp32
 *            (else the BLAS runs a fallback kernel, or was disturbed)
 *   order    bw_l1 >= bw_l2 >= bw_l3 >= bw_dram (each within order_tol), per thread
 *            count, read and triad separately
 *   STREAM   bw_dram_triad / independent STREAM triad in [triad_lo, triad_hi] and
 *            bw_dram (read) / STREAM triad in [read_lo, read_hi]
 * Pure functions: no I/O, no clock. */
#ifndef OCB_CEILING_RULES_H
#define OCB_CEILING_RULES_H

#include <stddef.h>

#include "../db/records.h"

/* An independent reference measured in the same session: STREAM triad (GB/s) on
 * `threads` threads; NaN when not measured. */
struct ocb_ceiling_xcheck {
	int threads;
	double stream_triad;
};

struct ocb_ceiling_rules {
	int trials_min;         /* 3 */
	double spread_max;      /* 0.10 */
	double cap_spread_max;  /* 0.5: of a capacity ('cap_llc'), found per trial on a
				 * sweep that doubles the size (ceiling_llc.h) */
	double balance_min;     /* 0.6 */
	double share_min;       /* 0.9 */
	double scale_min;       /* 0.95 */
	double sgemm_peak_max;  /* 1.02 (infinite when flops_fp32 is the plain-C kernel,
				 * not a peak) */
	double sgemm_peak_min;  /* 0.5 */
	double order_tol;       /* 1.05 */
	double triad_lo, triad_hi; /* 0.85, 1.15 */
	double read_lo, read_hi;   /* 0.7, 1.7: a different kernel. A read moves no write
				    * traffic, and STREAM does not count the triad's
				    * write-allocate reads (its true traffic is 4/3 of what it
				    * counts), so the read may beat it by 1.33x at equal bytes
				    * moved, and more where the read runs more streams than the
				    * triad's 3 (kernels/stream.c: 1.44-1.51x at 1 thread,
				    * 1.30-1.34x at 2 on the Zen 5 VM with 4 read streams per
				    * core). A single read stream per core may also trail it
				    * (0.82-0.87x at 1 and 2 threads on the Xeon VM, where
				    * per-core bandwidth is bounded by outstanding misses) */
};

/* The defaults above. */
void ocb_ceiling_rules_default(struct ocb_ceiling_rules *r);

/* Checks c[0..n) against every rule, using xc[0..nx) for the STREAM rule (may be NULL,
 * 0). Sets each c[i].suspect to its reasons ("" when it passes), replacing what was
 * there. Returns how many are suspect. trials 0 skips the trials rule, balance 0 the
 * balance rule, cpu_share 0 the cores rule (not measured). */
size_t ocb_ceilings_check(struct ocb_ceiling *c, size_t n, const struct ocb_ceiling_xcheck *xc,
			  size_t nx, const struct ocb_ceiling_rules *r);

#endif
