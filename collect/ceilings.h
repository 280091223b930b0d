/* ceilings: the machine's measured limits for the roofline (REFERENCE.md §3):
 * peak fp32 FLOP/s from an FMA kernel with independent accumulators and from OpenBLAS
 * sgemm; bandwidth per memory level (L1, L2, L3, DRAM) from an ERT-style working-set
 * sweep, read and triad, with 1 thread and all threads. */
#ifndef OCB_CEILINGS_H
#define OCB_CEILINGS_H

#include <stddef.h>

#include "../db/records.h"

/* Measures every ceiling. threads_all: the "all threads" count. quick: shorter sweeps.
 * *out is malloc'd (caller frees with free()), *n its length. */
int ocb_ceilings_measure(const struct ocb_machine *m, int threads_all, int quick,
			 struct ocb_ceiling **out, size_t *n);

/* The ceiling of `kind` with `threads` in c[0..n), or NULL. */
const struct ocb_ceiling *ocb_ceiling_find(const struct ocb_ceiling *c, size_t n,
					   const char *kind, int threads);

/* The roofline itself (bound, thread matching, memory level, fraction) is
 * common/ocb_roofline.h. */

/* ---- the pieces ocb_ceilings_measure is made of, also used by `ocbench ceilings` for
 * its acceptance check and by tests ---- */

/* The working-set band (bytes per thread, [lo, hi]) of each memory level, chosen from
 * the cache sizes of *m (0 = unknown: 32 KiB L1d, 256 KiB L2, no L3 assumed):
 *   L1   w <= 3/4 l1d                 L2  2 l1d <= w <= l2 / 2
 *   L3   2 l2 <= w <= min(share / 2, dram_lo / 2), share = l3 / m->threads
 *   DRAM w >= dram_lo = max(64 MiB, 4 share) (quick: 64 MiB)  (REFERENCE.md §6)
 * A level whose band is empty has lo > hi. */
struct ocb_bands {
	double lo[4], hi[4]; /* index 0 L1, 1 L2, 2 L3, 3 DRAM */
};
void ocb_ceilings_bands(const struct ocb_machine *m, int quick, struct ocb_bands *b);

/* Plateau of one level: of the values whose per-thread working set ws[i]/threads lies
 * in [lo, hi], the median of the best three (the max when fewer than three); NaN when
 * none. */
double ocb_ceilings_plateau(const size_t *ws, const double *val, size_t n, int threads,
			    double lo, double hi);

/* Best-of-`trials` fp32 FMA rate in GFLOP/s on `threads` threads, each trial about
 * trial_s seconds. */
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
