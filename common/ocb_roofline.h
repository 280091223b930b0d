/* ocb_roofline: the roofline model of a case (REFERENCE.md §3; Williams, Waterman &
 * Patterson, CACM 2009), the one implementation that the harness (collect/), the report
 * and `compare` (report/) call. Pure functions: no SQL, no I/O, no allocation, no db/
 * types. Callers hand in their ceilings and the machine's cache sizes as the plain views
 * below (db/records.h has the adapters from struct ocb_ceiling / struct ocb_machine).
 *
 * Rules owned here, each in one place:
 *   thread matching  a ceiling at the case's thread count; else the smallest measured
 *                    count above it; else the largest below (ocb_roof_find).
 *   memory level     the fastest level whose capacity can hold the working set
 *                    (ocb_roof_level).
 *   bound            what result.bound holds, from the work model's wish (ocb_roof_bound).
 *   attainable       min(compute roof, bandwidth roof x operational intensity), or the
 *                    one named ceiling (ocb_roof_attainable); fraction = achieved /
 *                    attainable (ocb_roof_frac). A missing roof gives NaN, never another
 *                    roof in its place. */
#ifndef OCB_ROOFLINE_H
#define OCB_ROOFLINE_H

#include <stddef.h>

/* One measured ceiling as the roofline reads it; kind borrowed. kind: "flops_fp32" (FMA
 * kernel, GFLOP/s), "flops_sgemm" (OpenBLAS, GFLOP/s), "ops_int8" (int8 dot chain, GOP/s),
 * "bw_l1" .. "bw_dram" (read, GB/s), "bw_l1_triad" .. "bw_dram_triad". */
struct ocb_roof_ceil {
	const char *kind;
	int threads;
	double value;
};

/* The machine's caches as the level rule needs them: sizes of one instance in bytes
 * (0 = unknown), L1d and L2 private to a core, L3 shared by all of the machine's CPUs
 * (as the OS reports them). llc: the MEASURED last-level capacity in bytes (the
 * 'cap_llc' ceiling, collect/ceiling_llc.h; 0 = not measured): where it is known it
 * stands in for l3, because a VM may report a cache its guest cannot use (the Xeon VM
 * reports 480 MiB of L3; read bandwidth falls to the DRAM rate between 34 and 134 MB). */
struct ocb_roof_caches {
	double l1d, l2, l3;
	int cores, threads; /* physical cores, hardware threads (0 = unknown) */
	double llc;
};

/* The last-level cache size the level rule and buffer sizing use: llc when measured,
 * else l3, else l2 (no L3 known), else 0. */
double ocb_roof_llc(const struct ocb_roof_caches *m);

/* Bytes a DRAM-level case must cycle through at `threads` threads so that no call finds
 * its data in the last level: the working sets the DRAM ceiling is measured on
 * (collect/ceilings.c ocb_ceilings_bands), 4 x ocb_roof_llc per thread, at most 1 GiB per
 * thread. Twice the last level was not enough on a victim L3 (AMD Zen 5 VM, 43 MiB
 * measured: a Q8_0 GEMV over 2 copies of 48 MB streamed at 133% of the DRAM roof). */
double ocb_roof_dram_cycle(const struct ocb_roof_caches *m, int threads);

enum ocb_level { OCB_LEVEL_L1 = 0, OCB_LEVEL_L2, OCB_LEVEL_L3, OCB_LEVEL_DRAM, OCB_NLEVELS };

/* "bw_l1", "bw_l2", "bw_l3", "bw_dram" */
const char *ocb_level_kind(enum ocb_level l);

/* The default compute roof of a work model that names none. */
#define OCB_ROOF_DEFAULT_COMPUTE "flops_fp32"

/* The ceiling of `kind` for a case at `threads` (values <= 0 or NaN ignored):
 * measured at `threads`; else at the smallest measured count above `threads`; else at
 * the largest below. Why: ceilings are measured at 1 and at all threads, and do not
 * fall as threads are added (the ceiling checks enforce N-thread >= 1-thread), so the
 * next count up is a roof the case cannot honestly exceed, while a lower count's roof
 * would make a case between the two look faster than possible. NULL when none. */
const struct ocb_roof_ceil *ocb_roof_find(const struct ocb_roof_ceil *c, size_t n,
					  const char *kind, int threads);

/* The memory level a working set of `ws` bytes, spread over `threads` threads, is served
 * from: the fastest level that can hold it, so that its bandwidth is a true roof. A level
 * holds what it and the faster levels can keep without duplicates (c = the cores the
 * threads run on, min(threads, cores)):
 *   L1  ws / threads <= l1d per thread          (private; SMT siblings share one core's)
 *   L2  ws / threads <= (l1d + l2) per thread   (private, likewise)
 *   L3  ws <= l3 + c (l1d + l2)                 (shared: one thread may fill all of it)
 *   DRAM otherwise, and for ws > 0 when l3 is unknown and the set exceeds L2.
 * l3 here is the measured llc when there is one (then l3 + c (l1d + l2) is a little
 * generous, since a 1-thread sweep's capacity already includes one core's L1d and L2:
 * the safe side for a roof).
 * Why the sums: a roof must be an upper bound, and a working set a little above one
 * cache is still served from it. Seen on the Xeon VM (48 KiB L1d, 2 MiB L2 per core):
 * sgemv and the f32 GEMV at 1024 x 1024, 2 threads, ws = 4 MiB + 8 KiB (A and x, y), are
 * 2 MiB + 4 KiB per thread, 0.2% over L2 by L2 alone, so they were given the L3 roof
 * (bw_l3, 2 threads ~55 GB/s) and came out at ~230% of it (~126 GB/s): they ran from
 * L2 (bw_l2 ~315 GB/s at 2 threads: 40% of it). The lines a core holds in L1d need not
 * be in its L2 (Intel's L2 is not inclusive of L1d; AMD's is, which makes the L2 level
 * at most l1d / l2 = 6% too generous there: the safe side for a roof), last-level caches
 * of both vendors are non-inclusive / victim caches of the L2s, and their replacement is
 * not LRU, so a cyclic sweep slightly over a capacity still mostly hits. Unknown
 * l1d/l2: 32 KiB / 256 KiB. The ceilings' plateau bands (collect/ceilings.h) lie inside
 * these levels: L1 <= 3/4 l1d, L2 in [2 l1d, l2 / 2], L3 up to half a thread's share,
 * DRAM from 4 shares. */
enum ocb_level ocb_roof_level(const struct ocb_roof_caches *m, double ws, int threads);

/* The level of a measured case, which reads its working set over and over (every
 * repetition does): ocb_roof_level, moved to the faster level where the slower level's
 * ceiling is not a roof for it. A ceiling is measured from the start of its band on
 * (collect/ceilings.c ocb_ceilings_bands: L2 from 2 l1d per thread, L3 from 2 l2),
 * where nothing of the sweep stays in the faster cache; a working set between a cache's
 * capacity and that start still finds part of its data in the cache on every pass
 * (replacement is not LRU), and can run above the slower level's ceiling:
 *   L2 -> L1  ws / threads < 2 l1d per thread
 *   L3 -> L2  ws / threads < 2 l2 per thread
 *   DRAM -> L3  where the case streams through `cycle` bytes before it reads the same
 *            bytes again and that is under ocb_roof_dram_cycle, the DRAM ceiling's own
 *            working sets (0: unknown, taken as enough: the DRAM cases that rotate copies
 *            of their data past that cycle); where no L3 is known it stays DRAM.
 * The faster level's bandwidth is a roof such a case cannot beat. Seen on the Zen 5 VM
 * (48 KiB L1d, 1 MiB L2, last level measured at 38-50 MiB): the quick STREAM copy, 2
 * arrays of 64 MiB, ran at 109-119% of the 2-thread bw_dram (a band from 192 MiB per
 * thread), and the beaten-ceiling rule flagged that ceiling as measured low; the Q8_0
 * GEMV of 1024 x 1024 at 1 thread (1.12 MB, 2% over L1d + L2) at 107% of bw_l3. */
enum ocb_level ocb_roof_level_cycle(const struct ocb_roof_caches *m, double ws, double cycle,
				    int threads);

/* result.bound of a case, written to out (len >= 32), from its work model:
 *   wish NULL or ""        -> "roofline:<compute>,bw_<level>"   (roofline minimum)
 *   wish "bw_*"            -> "bw_<level>"          (bandwidth at the level of ws)
 *   wish "bw_*_triad"      -> "bw_<level>_triad"
 *   any other wish         -> copied: one named ceiling ("flops_sgemm", "ops_int8", ...)
 * compute NULL or "": OCB_ROOF_DEFAULT_COMPUTE; the level from ocb_roof_level_cycle(m,
 * ws, cycle, threads). Returns 0, or -1 when out is too small (out then holds ""). */
int ocb_roof_bound(const struct ocb_roof_caches *m, const char *wish, const char *compute,
		   double ws, double cycle, int threads, char *out, size_t len);

/* Splits a stored bound into its compute roof and bandwidth roof kinds (either "" when
 * the bound has none): "roofline:C,B" -> C, B; "roofline:B" (before compute roofs were
 * named) -> OCB_ROOF_DEFAULT_COMPUTE, B; "bw_*" -> "", it; any other kind -> it, "".
 * Buffers of >= 32 bytes. Returns 0, or -1 for an empty or unparsable bound. */
int ocb_roof_parse(const char *bound, char *compute, char *bw, size_t len);

/* 1 when the bound compares bytes (a lone bandwidth ceiling), 0 when it compares ops. */
int ocb_roof_is_bw(const char *bound);

/* Attainable rate of a case with `ops` operations (in its compute roof's unit) and
 * `bytes` per repetition at `threads`, under stored bound `bound`: GB/s for a lone
 * bandwidth bound, G(FL)OP/s otherwise (roofline: min(compute, bw x ops / bytes); bytes
 * 0 -> compute). NaN when a roof it needs is missing or the work is unknown. */
double ocb_roof_attainable(const struct ocb_roof_ceil *c, size_t n, const char *bound,
			   int threads, double ops, double bytes);

/* The ceiling that sets ocb_roof_attainable (the compute or the bandwidth one of a
 * roofline, whichever is lower at the case's intensity; the one named ceiling otherwise),
 * with that rate in *attainable; NULL (and NaN) when it is unknown. */
const struct ocb_roof_ceil *ocb_roof_binding(const struct ocb_roof_ceil *c, size_t n,
					     const char *bound, int threads, double ops,
					     double bytes, double *attainable);

/* Fraction of the roof: achieved / ocb_roof_attainable, achieved = bytes / seconds (lone
 * bandwidth bound) or ops / seconds (else), in G/s. NaN whenever anything is unknown. */
double ocb_roof_frac(const struct ocb_roof_ceil *c, size_t n, const char *bound, int threads,
		     double ops, double bytes, double seconds);

#endif
