/* artifact: files one bench leaves in the run's out_dir for another (the fp32 checkpoints
 * the train suite writes and the quant suite reads), named once here, and the order that
 * makes every producer run before its consumers (struct ocb_bench .produces/.consumes). */
#ifndef OCB_ARTIFACT_H
#define OCB_ARTIFACT_H

#include <stddef.h>

#include "bench.h"

#define OCB_ARTIFACT_MLP_FP32 "mlp_fp32" /* the fp32 MLP checkpoint (train_mlp) */
#define OCB_ARTIFACT_LM_FP32 "lm_fp32"   /* the fp32 byte-LM checkpoint (train_lm) */

/* <out_dir>/<name>.ckpt, or <name>_quick.ckpt with --quick: a quick model (smaller or
 * shorter) gets a name of its own so that a later full run never takes it. out_dir NULL:
 * ".". OCB_EINVAL if it does not fit in len bytes. */
int ocb_artifact_path(const struct ocb_ctx *ctx, const char *name, char *buf, size_t len);

/* 1 if bench a consumes an artifact that another bench b produces (b must run first). */
int ocb_bench_needs(const struct ocb_bench *a, const struct ocb_bench *b);

/* Reorders order[0..n) (indices into bench_of[], the bench of each planned case) so that
 * every case runs after all cases producing what it consumes, keeping the order
 * otherwise (each consumer moves just behind its last producer). A dependency cycle is
 * left as far as it got. */
void ocb_order_prerequisites(const struct ocb_bench *const *bench_of, size_t *order, size_t n);

#endif
