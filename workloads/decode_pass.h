/* decode_pass: one decode step (a single new token, batch 1) of a llama-shaped model
 * spec (model_spec.h) with random weights in a quantized format, through the quantized
 * GEMV kernels (kernels/quant_gemv.h) and a KV cache of `ctx` earlier positions: what
 * `inspect` predicts as the decode rate, made runnable to set the prediction beside a
 * measurement. Weights are random normal (seeded): the time of a decode step does not
 * depend on their values.
 *
 * Per block: RMSNorm, q/k/v GEMVs, RoPE at position ctx, grouped-query attention over
 * ctx + 1 positions (heads split over the threads, as the GEMVs' rows and the SwiGLU are,
 * so no phase of a step runs on one thread while the others wait; the cache is fp32:
 * model_cost counts f16, the difference is
 * 2 n_kv hd ctx bytes per block and stated by the caller), o GEMV + residual, RMSNorm,
 * gate/up GEMVs, SwiGLU, down GEMV + residual; then the final RMSNorm and the head GEMV
 * (tied: the embedding matrix in the same format). Activations are quantized per GEMV as
 * the kernels need (qmatmul). Rows whose input width is not a multiple of the format's
 * block are zero-padded (as workloads/quant_apply.h counts them). The GEMVs run the
 * kernel this CPU chooses (kernels/quant_repack.h qgemv_choose); when it is an r8 one
 * the matrices are repacked at init (decode_pass_variant names it).
 *
 * Ownership: struct decode_pass owns one allocation per group (weights, cache, scratch). */
#ifndef OCB_DECODE_PASS_H
#define OCB_DECODE_PASS_H

#include <stddef.h>
#include <stdint.h>

#include "../kernels/quant_formats.h"
#include "../analysis/model_spec.h"

struct decode_pass {
	struct ocb_model_spec s;
	const struct qformat *f;
	int ctx;
	int64_t kd, kf;          /* padded input widths of d- and ffn-wide rows */
	uint8_t *w;              /* every quantized matrix, one allocation */
	size_t wbytes;
	size_t off[8];           /* per block: offsets of q k v o gate up down in a block */
	size_t block_bytes;
	size_t head_off;
	float *kv;               /* [n_layers][2][ctx + 1][n_kv * hd] */
	float *x, *xn, *q, *k, *v, *att, *g, *u, *tmp, *logits; /* scratch, one allocation */
	void *act;               /* quantized activations, the largest GEMV's */
	int threads;
	int kind;                /* enum qgemv_kind the GEMVs run (r8: weights repacked) */
};

/* Builds the pass for a llama spec in format f with a cache of ctx positions (weights and
 * cache random from seed). OCB_EINVAL (mlp spec, ctx < 1), OCB_ENOMEM. */
int decode_pass_init(struct decode_pass *p, const struct ocb_model_spec *s,
		     const struct qformat *f, int ctx, int threads, uint64_t seed);
/* One decode step of token `tok` (< vocab): logits into p->logits. */
int decode_pass_step(struct decode_pass *p, int tok);
void decode_pass_release(struct decode_pass *p);
/* The GEMV kernel the pass runs: "avx2-r8", "avx2", "ref" (qgemv_kind_name). */
const char *decode_pass_variant(const struct decode_pass *p);

/* Grouped-query attention of one new token: q [n_heads hd] over n cached positions of
 * K and V [n][n_kv hd] into out [n_heads hd] (softmax(q K^T / sqrt(hd)) V per head, head
 * h reading KV head h / (n_heads / n_kv)); the heads split over `threads` threads; sc:
 * threads x n floats of scratch. Exposed for its test. */
void decode_pass_attend(const struct ocb_model_spec *s, const float *q, const float *K,
			const float *V, int n, float *out, float *sc, int threads);

/* Bytes one step reads: every weight matrix once, one embedding row (fp32 from the
 * format: its dequantized row), the K and V cache rows ((ctx + 1) positions, fp32). */
double decode_pass_bytes(const struct decode_pass *p);
/* The same without building the pass (a work model): NaN for an mlp spec or ctx < 1. */
double decode_pass_static_bytes(const struct ocb_model_spec *s, const struct qformat *f,
				int ctx);

#endif
