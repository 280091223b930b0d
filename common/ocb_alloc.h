/* ocb_alloc: 64-byte aligned buffers for kernels and models (one allocation per group
 * of tensors; views are carved from it by the caller). */
#ifndef OCB_ALLOC_H
#define OCB_ALLOC_H

#include <stddef.h>

#define OCB_ALIGN 64

/* Returns a zeroed block of at least `bytes` aligned to OCB_ALIGN, or NULL (and sets the
 * error detail). The caller owns it and frees it with ocb_free(). bytes == 0 -> NULL. */
void *ocb_alloc(size_t bytes);

/* As ocb_alloc but not zeroed, so no page is touched yet: for buffers whose pages the
 * kernels' parallel first touch should place (the bandwidth sweep, STREAM); ocb_alloc's
 * single-threaded memset would place them all on one node. Freed with ocb_free(). */
void *ocb_alloc_untouched(size_t bytes);

/* As ocb_alloc_untouched, 2 MiB aligned and rounded, with transparent huge pages asked
 * for (madvise; advice only, OCB_NO_THP=1 asks for none): for buffers streamed from DRAM.
 * The GEMV weights (qrepack_alloc) and the bandwidth sweep that gives their roof must be
 * allocated alike: with 4 KiB pages the sweep's 1 GiB read ran at 11.9 GB/s on one core
 * (TLB misses), below the 15.9 GB/s of a GEMV streaming huge pages on the same machine. */
void *ocb_alloc_huge(size_t bytes);

/* Frees a block from ocb_alloc(); ocb_free(NULL) is a no-op. */
void ocb_free(void *p);

/* Round `n` up to a multiple of `a` (a power of two). */
static inline size_t ocb_round_up(size_t n, size_t a) { return (n + a - 1) & ~(a - 1); }

#endif
