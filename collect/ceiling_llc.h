/* ceiling_llc: the machine's MEASURED last-level cache capacity, the 'cap_llc' ceiling.
 *
 * Why: the cache sizes the OS reports are not always the ones a program can use. The
 * Xeon VM reports 480 MiB of L3 (the host's), while its 1-thread read bandwidth falls
 * to the DRAM rate between 34 and 134 MB; with the reported size the roofline gave the
 * L3 roof to working sets of 30-480 MiB and the DRAM benches and canaries allocated
 * eviction buffers of a gigabyte. So `ocbench ceilings` finds the capacity in its own
 * 1-thread read sweep (collect/ceilings_measure.c: working sets doubling from 16 KiB to
 * beyond 4x the reported L3 share; no extra timing) and stores it as a ceiling row:
 * kind "cap_llc", threads 1, unit "MiB", method text with the rates it was read from.
 * Readers put it into struct ocb_machine.llc_bytes (ocb_machine_use_llc), which the
 * roofline level rule, the ceiling bands, the canaries and the rotation buffers use in
 * place of the reported L3; without it they use the reported size, as before.
 *
 * The finder (pure): the DRAM rate is the rate at the largest working set (the sweep
 * ends in the DRAM band by construction), the cache rate the fastest one past `floor`
 * bytes (twice one core's L2: what lies below is a private level). Scanning down from
 * the largest size, the first one whose rate is at least the geometric mean of the two
 * is the last one the cache still serves; the capacity is where the rate crosses that
 * mean between it and the next larger size, interpolated in log(size). The geometric
 * mean sits halfway between the two levels on the log scale the curve is read on, so
 * a noisy DRAM point (+-30% on a loaded host) does not pass for a cached one. No cache
 * level is reported when nothing past the floor reads at >= OCB_LLC_ABOVE_DRAM x DRAM
 * (no L3, or one no faster than memory). A capacity read this way is an upper bound of
 * the sizes served at cache speed: the safe side for a roof (a working set a little
 * over it still gets the cache's roof). */
#ifndef OCB_CEILING_LLC_H
#define OCB_CEILING_LLC_H

#include <stddef.h>

#include "../db/records.h"

/* The least contrast between the cache and DRAM rates for a last level to be seen: well
 * above the DRAM band's noise on a quiet host (best-of trials within 10%), well below any
 * L3's (1-thread L3 / DRAM read: 2.1x on the Xeon VM, 2.5x and more on Zen 3). */
#define OCB_LLC_ABOVE_DRAM 1.3

/* The capacity in bytes of the last cache level seen in a read-bandwidth curve: bw[i]
 * (GB/s, any positive unit) at working set ws[i] bytes, ws ascending, n >= 3. Returns
 * the index i of the first working set read at the DRAM rate (ws[i - 1] was still
 * served by the cache; i >= 1) and sets *cap, or returns 0 (*cap = 0) when the curve
 * shows no cache level above `floor` bytes. thr (may be NULL): the rate crossed, sqrt(cache
 * rate x DRAM rate), when found. */
int ocb_llc_find(const size_t *ws, const double *bw, size_t n, double floor, double *cap,
		 double *thr);

/* Readers of the stored row: ocb_ceiling_llc_bytes and ocb_machine_use_llc (db/records.h,
 * where the report's ceiling loader can use them too). */

#endif
