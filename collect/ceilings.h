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

/* Roofline bound (GFLOP/s) of a case with `flops`, `bytes` at `threads`:
 * min(peak, bw_dram * flops/bytes) using the measured ceilings; NaN if missing. */
double ocb_roofline_bound(const struct ocb_ceiling *c, size_t n, int threads, double flops,
			  double bytes);

#endif
