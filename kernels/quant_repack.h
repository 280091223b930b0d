/* quant_repack: interleaved in-memory weight layouts for batch-1 GEMV ("r8"), built at
 * load time from the ggml-compatible blocks of quant_formats.h, which stay the stored and
 * on-disk format; and the run-time choice between the plain and the repacked GEMV.
 *
 * Why: a batch-1 GEMV should stream weights at DRAM speed, but with one row at a time the
 * plain ggml layout costs, per 32 weights, a nibble unpack, one maddubs + madd, an int->fp
 * convert, an FMA, a scalar fp16 scale conversion and, per row, a horizontal sum. On
 * cores with fewer vector ports for these (AMD Zen 3) Q4_0 runs out of arithmetic before
 * it runs out of bandwidth. With 8 rows interleaved one activation chunk is loaded
 * (broadcast) once for 8 rows, the int16 products of a whole block accumulate before a
 * single madd, the 8 rows' fp16 scales convert with one vcvtph2ps, and the 8 results
 * sit in the 8 lanes of one accumulator (no horizontal sums). (The idea is ggml's
 * q4_0_8x8 repacking, ggml-cpu/repack.cpp; this layout and code are ocbench's own.)
 *
 * Layout "r8" of m rows x k weights (nb = k / block blocks per row, P = the payload bytes
 * of one block: its codes without the fp16 scales, S = the number of fp16 scales), and
 * its 16-row twin "r16" for the zmm kernels (R = 8 or 16 rows per group):
 *   groups of R consecutive rows, g = 0 .. m/R - 1, each nb * R * block_bytes bytes.
 *   Within a group, block b has S x R fp16 scales (for s = 0 .. S-1: scale s of rows
 *   Rg+0 .. Rg+R-1) and P/4 vectors of 4R bytes of codes (a ymm for r8, a zmm for r16):
 *   vector j holds the 4-byte unit j of block b of rows Rg+0 .. Rg+R-1 (row r at bytes
 *   4r..4r+3).
 *   r8:  all nb blocks' scales first, then all nb blocks' codes. (The kernels' code
 *        prefetch, running ~2 KiB ahead, crosses a group's scales before its codes; with
 *        the scales after the codes, the first scale line of every group was a DRAM miss
 *        in the middle of the loop, which cost TQ2_0, with its short 34 KB groups, ~15% of
 *        its cold speed.)
 *   r16: the groups' bytes split into column panels of qrepack_panel_blocks() blocks (512
 *        on AMD, 64 on Intel) for the 32-block formats (Q8_0, Q4_0, Q4_1, Q3_G, Q2_G),
 *        one panel of the whole row for TQ2_0: panel by panel, and within a panel group
 *        by group (each group's part of the panel as above, with nb its blocks in the
 *        panel). Within a group's part, pairs of blocks (b, b + 1), each pair's scales
 *        (2 S R fp16, 64 S bytes) then its codes (2 P R bytes); an odd last block alone,
 *        scales then codes. Every pair is a whole number of 64-byte lines, and a thread
 *        reading its groups panel by panel reads one forward stream per panel.
 *        Why, measured on the Zen 5 VM (cold 16384^2, fraction of a read loop's rate, old
 *        and new timed alternately; tests/perf/README.md): with r8's order, a group is two
 *        streams (its scales, its codes 16 KiB further for Q4_0), and a plain read of the
 *        bytes in that order ran at 65-78% of a sequential one. Pairs fixed that for
 *        Q8_0 and TQ2_0. Q4_0 stayed below: every group re-reads the whole activation
 *        vector (18 KiB for k = 16384), after the group's 147 KiB of weights have pushed
 *        it out of L1, and a streaming loop whose broadcast operands walk such an array
 *        ran at 62-80% of the read rate, against 87-108% with them in L1. A panel of 64
 *        blocks held 18 KiB of Q4_0 weights per group and reused a 2.3 KiB slice of the
 *        activations, which stayed in L1. Together, 1 thread: Q8_0 72-85% -> 93-96%,
 *        Q4_0 60-67% -> 83-89%, TQ2_0 61-72% -> 89-100%; 2 threads 77-94% -> 86-113%.
 *        Those were kernels on one stream, as Intel's still are. AMD's now read 4 or 8
 *        groups side by side (quant_repack_avx512.c), each activation block serving
 *        them all at once, and there panels of 512 blocks (an 18 KiB slice of the
 *        activations; whole rows up to k = 16384) read faster than panels of 64, each
 *        of whose starts is a new stream for the core's prefetchers: 8 per stream and
 *        GEMV at k = 16384 against 1 (README, "Zen 5, 6 Dec 2026"). The partial sums of
 *        the panels add up in y (qgemv_r8).
 *   then the m % R remaining rows unchanged (plain blocks).
 * Which R: the one of the kernel qgemv_choose(f) picks (qrepack_rows), so pack, unpack and
 * both GEMVs below must run under the same choice (the same OCB_QGEMV / OCB_FORCE_*).
 * The repacked matrix has exactly the bytes of the plain one (m * qformat_row_bytes),
 * except TQ1_0, whose groups are transcoded to TQ2_0 codes (66 instead of 54 bytes per
 * 256 weights: decoding base-3 trits costs more arithmetic than a core has at DRAM
 * speed). Formats with an r8 layout (qrepack_supported): all of them: Q8_0, Q4_0, Q4_1,
 * Q3_G (its codes re-encoded: r8 moves the high-bit plane, r16 has its own bit order,
 * quant_repack.c q3_r16_codes), Q2_G, TQ2_0, TQ1_0 (as TQ2_0).
 *
 * Ownership: every function writes caller buffers; nothing is retained. */
#ifndef OCB_QUANT_REPACK_H
#define OCB_QUANT_REPACK_H

#include <stddef.h>
#include <stdint.h>

#include "quant_formats.h"

/* Blocks per column panel of the r16 layout's 32-block formats (above) on this CPU: 512
 * where their kernels read several groups side by side (AMD), 64 where they read one
 * (Intel). */
int qrepack_panel_blocks(void);

/* 1 if f has an r8 layout. */
int qrepack_supported(const struct qformat *f);

/* Rows per group of the layout the functions below use for f now: 16 where
 * qgemv_choose(f) picks QGEMV_VNNI512_R16, else 8. */
int qrepack_rows(const struct qformat *f);

/* Bytes of the r8 layout of m x k weights (m * qformat_row_bytes(f, k) except TQ1_0). */
size_t qrepack_bytes(const struct qformat *f, int64_t m, int64_t k);

/* Plain blocks w (m x k) -> r8 layout at dst (qrepack_bytes bytes, must not overlap w).
 * Groups are split over `threads` OpenMP threads (<= 0: the default) with the same static
 * schedule as qgemv_r8, so on a NUMA machine each group's pages are first touched by the
 * thread that later streams them. OCB_EINVAL for an unsupported format or bad shape. */
int qrepack_pack(const struct qformat *f, const void *w, int64_t m, int64_t k, void *dst,
		 int threads);
/* The inverse (tests): r8 -> plain blocks. OCB_EINVAL for TQ1_0 (transcoded). */
int qrepack_unpack(const struct qformat *f, const void *wr, int64_t m, int64_t k, void *dst);

/* A buffer for an r8 matrix: aligned to 2 MiB, transparent huge pages requested
 * (madvise), not touched (the packing threads touch it first). NULL + OCB_ENOMEM.
 * Free with qrepack_free. */
void *qrepack_alloc(size_t bytes);
void qrepack_free(void *p);

/* y[m] = W xq with W in the r8 / r16 layout of qrepack_rows(f) (xq as for qgemv).
 * qgemv_r8 runs the kernels qgemv_choose(f) picks (zmm on r16; VNNI r8 ones where the CPU
 * has them, else AVX2; AVX2 r8 also when the choice is the plain layout), the r16 ones
 * under the plan made for this shape if there is one (qgemv_plan.h), else under the
 * CPU's default setting; qgemv_r8_ref is plain C on the same layout (the only path
 * without AVX2). Rows are split over threads in whole groups. OCB_EINVAL (bad shape,
 * unsupported format). */
int qgemv_r8(const struct qformat *f, const void *wr, int64_t m, int64_t k, const void *xq,
	     float *y, int threads);
int qgemv_r8_ref(const struct qformat *f, const void *wr, int64_t m, int64_t k,
		 const void *xq, float *y, int threads);

/* Y[n][m] = Xq[n][k] W^T (batch n: prefill) with W as for qgemv_r8 and Xq n activation
 * rows as for qgemm. Each group's part of a column panel (the layout above) is multiplied
 * with all n rows while it is in cache, by kernels that take 4 activation rows per decoded
 * vector of codes (zmm on r16, ymm on r8: AVX2, AVX-VNNI or AVX-512 VNNI as qgemv_r8), the
 * rows left over by the kernels qgemv_r8 runs, one call per row; no streams, no software
 * prefetch (its data are hot). Rows are
 * split over threads in whole groups. qgemm_r8_ref: qgemv_r8_ref per row (equal to
 * qgemm_ref by construction). OCB_EINVAL as qgemv_r8, and for n < 1. */
int qgemm_r8(const struct qformat *f, const void *wr, int64_t m, int64_t k, const void *xq,
	     int64_t n, float *y, int threads);
int qgemm_r8_ref(const struct qformat *f, const void *wr, int64_t m, int64_t k, const void *xq,
		 int64_t n, float *y, int threads);

/* The knobs of the r16 kernels: groups each thread reads side by side (1, 2, 4 or 8,
 * capped at the format's kernels), software prefetch bytes ahead of each into L1
 * (prefetcht0) and into L2 only (prefetcht1; 0: none), and threads: 0 runs the call on
 * the threads it asks for, 1 on one thread whatever it asks (a GEMV too small for a
 * second thread to pay for starting and joining it: the planner times that too). */
struct qgemv_setting {
	int streams, pf_l1, pf_l2, threads;
};

/* qgemv_r8 under an explicit setting of the r16 kernels (other kinds ignore it), whatever
 * the plan or the environment: for the planner (qgemv_plan.h) and tests. */
int qgemv_r8_setting(const struct qformat *f, const void *wr, int64_t m, int64_t k,
		     const void *xq, float *y, int threads, const struct qgemv_setting *set);

/* ---- the run-time choice ---- */

enum qgemv_kind {
	QGEMV_REF = 0, /* plain C, plain layout */
	QGEMV_AVX2,    /* AVX2, plain layout (quant_avx2.c) */
	QGEMV_AVX2_R8, /* AVX2, r8 layout (quant_repack_avx2.c) */
	QGEMV_VNNI_R8, /* AVX-VNNI (VEX vpdpbusd ymm), r8 layout (quant_repack_avx2.c) */
	QGEMV_VNNI512_R8, /* AVX-512 VNNI + VL (EVEX vpdpbusd ymm), r8 layout (same kernels) */
	QGEMV_VNNI512_R16, /* AVX-512 VNNI on zmm, r16 layout (quant_repack_avx512.c) */
};

/* Rows per group of the layout kind runs on: 16 for the zmm kernels, else 8. */
static inline int qgemv_kind_rows(enum qgemv_kind kind)
{
	return kind == QGEMV_VNNI512_R16 ? 16 : 8;
}

/* 1 if kind runs on a repacked layout, r8 or r16 (call qgemv_r8 on qrepack_pack'ed
 * weights). */
static inline int qgemv_kind_r8(enum qgemv_kind kind)
{
	return kind == QGEMV_AVX2_R8 || kind == QGEMV_VNNI_R8 || kind == QGEMV_VNNI512_R8 ||
	       kind == QGEMV_VNNI512_R16;
}

/* The GEMV this CPU should run for format f: decided from ocb_cpu_avx2(),
 * ocb_cpu_avxvnni(), ocb_cpu_avx512vnni(), the format and the CPU's vendor/family/model
 * (see qr_default_kind in quant_repack.c). The environment variable OCB_QGEMV overrides
 * it: ref | plain | r8 (AVX2 r8 kernels) | r8-vnni (AVX-VNNI r8 kernels) | r8-vnni512
 * (AVX-512 VNNI r8 kernels) | r16 (AVX-512 VNNI zmm kernels on r16; formats without one
 * take r8-vnni512), each VNNI one only if the CPU has it (else AVX2 r8), r8 only
 * where supported; OCB_FORCE_SCALAR=1 still means ref, OCB_FORCE_AVX2=1 no VNNI.
 * OCB_QGEMV_PF=<bytes> sets the software prefetch distance into L1 of every GEMV kernel,
 * OCB_QGEMV_PF_L2=<bytes> the r16 kernels' distance into L2 only (0: none; defaults per
 * CPU, format and streams, see quant_repack.c). OCB_QGEMV_STREAMS=1|2|4|8 sets how many
 * groups each thread of the r16 kernels reads side by side (default per CPU and format;
 * Q8_0 and TQ2_0 at most 4). Where a plan was made for a shape (qgemv_plan.h), its
 * setting replaces these defaults unless one of those three is set; OCB_QGEMV_PLAN=0
 * stops the planning. */
enum qgemv_kind qgemv_choose(const struct qformat *f);
/* Streams per thread qgemv_r8 reads f's weights on: 1, 2, 4 or 8 for the r16 kernels
 * (their groups side by side, quant_repack.c), 1 for every other kind. */
int qgemv_streams(const struct qformat *f);
/* "ref", "avx2", "avx2-r8", "avxvnni-r8", "avx512vnni-r8", "avx512vnni-r16": the name
 * stored as a result's variant. */
const char *qgemv_kind_name(enum qgemv_kind kind);
/* The name of the GEMV qgemv_r8 / qgemv run for f, as stored as a result's variant: the
 * kind's name, with the streams where there are several ("avx512vnni-r16x8"). */
const char *qgemv_variant(const struct qformat *f);

#endif
