/* ceilings: the machine's measured limits for the roofline (REFERENCE.md §3):
 * compute roofs per datatype (fp32 FMA kernel 'flops_fp32', OpenBLAS sgemm
 * 'flops_sgemm', int8 dot chain 'ops_int8' in GOP/s) and bandwidth per memory level
 * (L1, L2, L3, DRAM) from an ERT-style working-set sweep, read and triad, with 1 thread
 * and all threads. Every ceiling is the best of >= 3 trials interleaved over the whole
 * measurement, checked against collect/ceiling_rules before it is returned: what fails
 * is re-measured, and what still fails comes back flagged (ocb_ceiling.suspect). */
#ifndef OCB_CEILINGS_H
#define OCB_CEILINGS_H

#include <stddef.h>

#include "../db/records.h"
#include "ceiling_rules.h"

/* Families of ceilings measured together (one kernel each); a re-measure repeats a
 * whole family, every thread count. XCHK is the independent STREAM triad of the
 * cross-check: not a ceiling, measured with BW. */
#define OCB_CEIL_FMA 1u
#define OCB_CEIL_INT8 2u
#define OCB_CEIL_BW 4u
#define OCB_CEIL_XCHK 8u
#define OCB_CEIL_SGEMM 16u
#define OCB_CEIL_ALL 31u
/* Re-measures of a failing family before its values are stored flagged. */
#define OCB_CEIL_REMEASURES 2

/* What a measurement found besides the ceilings. */
struct ocb_ceilings_report {
	struct ocb_ceiling_xcheck xc[2]; /* STREAM triad per thread count (1, all) */
	size_t nxc;
	struct ocb_ceiling_rules rules;  /* the rules the ceilings were checked against */
	int remeasures;                  /* re-measure passes that ran */
	size_t suspect;                  /* ceilings returned flagged */
};

/* Measures every ceiling with 1 thread and threads_all threads. quick: fewer trials
 * (3, else 5), shorter sweeps. *out is malloc'd (caller frees with free()), *n its
 * length; every ceiling carries trials, spread and suspect ("" or the reasons; an
 * info line is logged for each flagged one: callers warn as they see fit). rep may be
 * NULL. */
int ocb_ceilings_measure_ex(const struct ocb_machine *m, int threads_all, int quick,
			    struct ocb_ceiling **out, size_t *n, struct ocb_ceilings_report *rep);
int ocb_ceilings_measure(const struct ocb_machine *m, int threads_all, int quick,
			 struct ocb_ceiling **out, size_t *n);

/* `ceilings --verify`: re-measures the families of flagged[0..nf) (the stored values
 * whose newest row is suspect), checks the new values against the current set
 * cur[0..ncur) with the flagged ones swapped in, re-measures again while they fail, and
 * returns new values for exactly the flagged (kind, threads) that were measured
 * (flagged again or not). Same ownership as ocb_ceilings_measure. */
int ocb_ceilings_verify(const struct ocb_machine *m, int quick, const struct ocb_ceiling *cur,
			size_t ncur, const struct ocb_ceiling *flagged, size_t nf,
			struct ocb_ceiling **out, size_t *n, struct ocb_ceilings_report *rep);

/* The family (OCB_CEIL_*) a ceiling kind is measured by; 0 if unknown. */
unsigned ocb_ceiling_family(const char *kind);

/* The ceiling of `kind` with `threads` in c[0..n), one that is not suspect when there
 * are several, or NULL. */
const struct ocb_ceiling *ocb_ceiling_find(const struct ocb_ceiling *c, size_t n,
					   const char *kind, int threads);

/* The roofline itself (bound, thread matching, memory level, fraction) is
 * common/ocb_roofline.h. */

/* ---- the pieces ocb_ceilings_measure is made of, also used by `ocbench ceilings` for
 * its acceptance check and by tests ---- */

/* The working-set band (bytes per thread, [lo, hi]) of each memory level, chosen from
 * the cache sizes of *m (0 = unknown: 32 KiB L1d, 256 KiB L2, no L3 assumed; the L3 is
 * m->llc_bytes, the measured capacity, when it is known, else m->l3_bytes):
 *   L1   w <= 3/4 l1d                 L2  2 l1d <= w <= l2 / 2
 *   L3   2 l2 <= w <= min(share / 2, dram_lo / 2), share = l3 / m->threads
 *   DRAM w >= dram_lo = max(64 MiB, 4 share) (quick: 192 MiB)  (REFERENCE.md §6)
 * A level whose band is empty has lo > hi. */
struct ocb_bands {
	double lo[4], hi[4]; /* index 0 L1, 1 L2, 2 L3, 3 DRAM */
};
void ocb_ceilings_bands(const struct ocb_machine *m, int quick, struct ocb_bands *b);

/* Plateau of one level: of the values whose per-thread working set ws[i]/threads lies
 * in [lo, hi], the median of the best three (the max when fewer than three); NaN when
 * none. _at gives the index of that value in val (-1 when none). At most
 * OCB_CEIL_MAX_SIZES values are looked at. */
#define OCB_CEIL_MAX_SIZES 40
double ocb_ceilings_plateau(const size_t *ws, const double *val, size_t n, int threads,
			    double lo, double hi);
int ocb_ceilings_plateau_at(const size_t *ws, const double *val, size_t n, int threads,
			    double lo, double hi);

/* Best-of-`trials` fp32 FMA rate in GFLOP/s on `threads` threads, each trial about
 * trial_s seconds, back to back (a quick probe; the ceiling interleaves its trials). */
int ocb_ceilings_fma(int threads, int trials, double trial_s, double *gflops);

/* STREAM triad a = b + s c (McCalpin; REFERENCE.md §3): arrays of n floats each,
 * allocated and first-touched here, `trials` passes of which the first is skipped,
 * best rate counted as 3 x 4 x n bytes (no write-allocate) in GB/s. */
int ocb_ceilings_stream_triad(size_t n, int threads, int trials, double *gbs);

/* OpenBLAS sgemm C = A B, n x n x n, row-major, on `threads` OpenBLAS threads: one
 * warm-up call then the best of `trials`, in GFLOP/s (2 n^3 flops). OpenBLAS's thread
 * count is left at `threads`. */
int ocb_ceilings_sgemm(int n, int threads, int trials, double *gflops);

#endif
