/* quant_repack_impl: private to kernels/quant_repack*.c — where a plain block keeps its
 * scales and codes, and the per-format r8 group kernels. */
#ifndef OCB_QUANT_REPACK_IMPL_H
#define OCB_QUANT_REPACK_IMPL_H

#include <stdint.h>

#include "../common/ocb_cpu.h"
#include "quant_repack.h"

/* Software prefetch distance of every GEMV kernel, plain (quant_avx2.c) and r8, in bytes;
 * set once per process in quant_repack.c (per CPU, or OCB_QGEMV_PF). */
extern int qk_prefetch;

struct qr_layout {
	int nscales;      /* fp16 scales per block (d, or d and m) */
	int scale_off[2]; /* their byte offsets in the plain block */
	int payload_off;  /* byte offset of the codes */
	int payload;      /* bytes of codes per block (a multiple of 4) */
	int units;        /* payload / 4 */
	int hbit_unit;    /* Q3_G: the unit holding qh, re-encoded when packed; else -1 */
};

int qr_layout(const struct qformat *f, struct qr_layout *l);

/* y[0..8) = the 8 rows of one r8 group (nb = k / block blocks) times xq. */
typedef void (*qr_group_fn)(int64_t k, const void *group, const void *xq, float *y);

/* The AVX2 (vnni = 0) or AVX-VNNI (vnni = 1) group kernel of a format, or NULL if it has
 * none (quant_repack_avx2.c). */
qr_group_fn qr_avx2_kernel(enum qformat_type type, int vnni);

/* The default GEMV kind on this CPU for f, AVX2 available (quant_repack.c). */
enum qgemv_kind qr_default_kind(const struct qformat *f, const struct ocb_cpu_id *cpu);

#endif
