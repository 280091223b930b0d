/* quant_repack_impl: private to kernels/quant_repack*.c — where a plain block keeps its
 * scales and codes, and the per-format r8 group kernels. */
#ifndef OCB_QUANT_REPACK_IMPL_H
#define OCB_QUANT_REPACK_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "../common/ocb_cpu.h"
#include "quant_repack.h"

/* Software prefetch distance of every GEMV kernel, plain (quant_avx2.c) and r8, in bytes;
 * set once per process in quant_repack.c (per CPU, or OCB_QGEMV_PF). */
extern int qk_prefetch;

/* The zmm r16 kernels' software prefetch, per format (type: QF_Q8_0; QF_Q4_0 for the
 * other 32-block formats; QF_TQ2_0), streams per thread ns (1, 2, 4, 8) and CPU vendor:
 * bytes of each group's stream ahead into L1 (prefetcht0) and into L2 only (prefetcht1);
 * 0: none. OCB_QGEMV_PF overrides l1, OCB_QGEMV_PF_L2 l2, for every format and ns
 * (quant_repack.c). */
struct qk_pf {
	int l1, l2;
};
struct qk_pf qk_prefetch_r16(enum qformat_type type, int ns);
/* The per-CPU default of qk_prefetch_r16, before the environment (pure: for tests). */
struct qk_pf qr_default_prefetch(enum qformat_type type, const struct ocb_cpu_id *cpu, int ns);
/* For measuring tools (tests/perf/quant_gemv_bw): from now on, qk_prefetch_r16 answers l1
 * and l2 (each -1: back to the environment's or the CPU's default) for every format and
 * ns. Not while a GEMV runs. */
void qk_prefetch_r16_set(int l1, int l2);

struct qr_layout {
	int nscales;      /* fp16 scales per block (d, or d and m) */
	int scale_off[2]; /* their byte offsets in the plain block */
	int payload_off;  /* byte offset of the codes */
	int payload;      /* bytes of codes per block (a multiple of 4) */
	int units;        /* payload / 4 */
	int hbit_unit;    /* Q3_G: the unit holding qh, re-encoded when packed; else -1 */
};

int qr_layout(const struct qformat *f, struct qr_layout *l);

/* Bytes of one block of R rows in a group: their scales and codes. */
static inline size_t qr_block_bytes(const struct qr_layout *l, int R)
{
	return (size_t)R * (size_t)(2 * l->nscales + l->payload);
}

/* y[0..R) = the R rows of one r8 / r16 group (nb = k / block blocks) times xq. */
typedef void (*qr_group_fn)(int64_t k, const void *group, const void *xq, float *y);

/* The instruction set of an r8 group kernel: the same code (quant_repack_kern.h) with the
 * int8 dot product done by maddubs + adds, by VEX vpdpbusd or by EVEX vpdpbusd. */
enum qr_isa { QR_AVX2, QR_AVXVNNI, QR_AVX512VNNI };

/* The group kernel of a format for an instruction set, or NULL if the format has none
 * (quant_repack_avx2.c). Call only on a CPU that has that instruction set. */
qr_group_fn qr_avx2_kernel(enum qformat_type type, enum qr_isa isa);

/* The zmm group kernel of a format on the r16 layout (16 rows per call, y[0..16)), or
 * NULL if the format has none (quant_repack_avx512.c). Call only where
 * ocb_cpu_avx512vnni(). */
qr_group_fn qr_zmm_kernel(enum qformat_type type);

/* y[s][0..16) = groups[s] times xq for s < ns, the ns groups read side by side as ns
 * streams (r16). */
typedef void (*qr_groups_fn)(int64_t k, const void *const *groups, const void *xq,
			     float *const *y);

/* The zmm kernel of a format on the r16 layout for ns = 2, 4 or 8 (up to qr_max_streams)
 * groups side by side, or NULL (other ns, or as qr_zmm_kernel). */
qr_groups_fn qr_zmm_kernels(enum qformat_type type, int ns);

/* y[t][0..R) = one r8 / r16 group of R rows times activation row xq[t], for t < QR_ROWS
 * (the GEMM's kernels: qgemm_r8) */
#define QR_ROWS 4
typedef void (*qr_rows_fn)(int64_t k, const void *group, const void *const *xq,
			   float *const *y);

/* The GEMM kernel of a format on the r8 layout for an instruction set, or NULL (as
 * qr_avx2_kernel; quant_repack_avx2.c). */
qr_rows_fn qr_avx2_rows_kernel(enum qformat_type type, enum qr_isa isa);

/* The zmm GEMM kernel of a format on the r16 layout, or NULL (as qr_zmm_kernel). */
qr_rows_fn qr_zmm_rows_kernel(enum qformat_type type);

/* Streams per thread of the r16 GEMV for a format (1, 2, 4 or 8: groups read side by
 * side, one from each of that many equal parts of the thread's share), the CPU's default
 * (pure, for tests); OCB_QGEMV_STREAMS overrides it (quant_repack.c). At most
 * qr_max_streams(type). */
int qr_default_streams(enum qformat_type type, const struct ocb_cpu_id *cpu);
/* qrepack_panel_blocks on a CPU (pure: for tests) */
int qr_panel_blocks(const struct ocb_cpu_id *cpu);
int qr_max_streams(enum qformat_type type);

/* 1 if the environment (OCB_QGEMV_STREAMS, OCB_QGEMV_PF, OCB_QGEMV_PF_L2) or
 * qk_prefetch_r16_set sets the r16 kernels' settings: then they, not plans, are in force. */
int qr_settings_overridden(void);

/* The setting the r16 kernels of a kernel format (qr_kernel_type) run where nothing is
 * planned: OCB_QGEMV_STREAMS or the CPU's streams, and the prefetch distances of the
 * environment or the CPU for them. */
struct qgemv_setting qr_default_setting(enum qformat_type type);

/* The format whose kernels run f: TQ2_0 for TQ1_0 (transcoded), else f's own. */
enum qformat_type qr_kernel_type(const struct qformat *f);

/* The variant name of f's r16 kernels on ns streams (capped at the format's):
 * "avx512vnni-r16", "avx512vnni-r16x2", ...; with "-1t" where a plan runs the call on
 * one thread (struct qgemv_setting.threads) */
const char *qr_r16_variant(const struct qformat *f, int ns, int one_thread);

/* The default GEMV kind for f on a CPU with AVX2 and the given identification, whose best
 * VNNI is `vnni` (QR_AVX2: none) (quant_repack.c). Pure: tests feed it CPUs we do not
 * have. */
enum qgemv_kind qr_default_kind(const struct qformat *f, const struct ocb_cpu_id *cpu,
				enum qr_isa vnni);

#endif
