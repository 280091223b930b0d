/* model_cost: the static cost of a model spec (model_spec.h), per layer and in total:
 * parameters, FLOPs per token (prefill and decode), weight bytes in each format, bytes
 * a decode step reads, KV-cache and activation bytes at a context and batch; and the
 * roofline prediction of decode tokens/s and prefill time per format from a machine's
 * measured ceilings (common/ocb_roofline.h), with the bound of every layer.
 *
 * Layers: llama -> "tok_embd", "blk.0" .. "blk.N-1", "output" (final norm + head; with
 * tied embeddings it owns no parameters but reads the embedding matrix); mlp -> "fc1" ..
 * "fcN" (weight + bias).
 *
 * Counting rules (all per token unless said otherwise; sources in model_cost.c):
 *   FLOPs     2 per multiply-add of every linear; attention QK^T and PV 4 H hd per
 *             attended position: decode at a KV length of ctx, prefill averaged over a
 *             causal prompt of ctx tokens ((ctx + 1) / 2 positions). Element-wise work
 *             (norms, RoPE, softmax, SiLU) is not counted.
 *   weights   every 2-D matrix in the format, rows of `in` weights padded up to whole
 *             blocks (ggml rows are ne[0] = in); vectors (norms, biases) stay f32.
 *   decode    one step of `batch` sequences: every matrix read once (embedding: batch
 *             rows), plus each sequence's K and V at ctx positions (f16).
 *   prefill   batch x ctx tokens: weights once, K and V written once.
 *   KV cache  2 n_layers n_kv hd ctx batch x 2 bytes (f16, llama.cpp's default).
 *   act       peak fp32 activations one block holds during a prefill of batch x ctx,
 *             as workloads/model_lm keeps them (incl. the [B][H][T][T] probabilities).
 *
 * Ownership: struct ocb_cost owns its layer array (ocb_cost_release). */
#ifndef OCB_MODEL_COST_H
#define OCB_MODEL_COST_H

#include <stddef.h>
#include <stdint.h>

#include "../common/ocb_roofline.h"
#include "model_spec.h"

/* The weight formats inspect reports: f32, f16 and the kernels' formats by name. */
enum ocb_wfmt {
	WF_F32 = 0, WF_F16, WF_Q8_0, WF_Q4_0, WF_Q4_1, WF_TQ2_0, WF_TQ1_0, WF_Q3_G, WF_Q2_G,
	WF_N
};

const char *ocb_wfmt_name(int f);           /* "f32", ..., "q2_g" */
int ocb_wfmt_find(const char *name);        /* -1 if unknown */
double ocb_wfmt_bpw(int f);                 /* bits per weight incl. scales */
/* Bytes of a matrix of `rows` rows of `in` weights in format f (whole blocks per row). */
double ocb_wfmt_matrix_bytes(int f, int64_t rows, int64_t in);

struct ocb_cost_layer {
	char name[24];
	double params;            /* stored parameters (tied head: 0) */
	double mat_params;        /* of which in 2-D matrices */
	double flops_decode;      /* per token at a KV length of ctx */
	double flops_prefill;     /* per token, averaged over a causal prompt of ctx */
	double attn_decode;       /* of flops_decode: attention (QK^T, PV), fp32 whatever the
				   * weights' format */
	double attn_prefill;      /* of flops_prefill: attention */
	double wbytes[WF_N];      /* stored bytes per format */
	double read_decode[WF_N]; /* bytes one decode step (batch tokens) reads */
	double kv_bytes;          /* KV cache at ctx x batch */
	double act_bytes;         /* peak activations of a prefill at ctx x batch */
};

struct ocb_cost {
	struct ocb_model_spec spec;
	int64_t ctx, batch;
	int level;                    /* the memory level predictions stream weights from:
				       * -1 (ocb_cost_compute's default) the roofline rule
				       * (ocb_roof_level of weights + KV), else an enum ocb_level
				       * the caller forces (a VM's L3 is shared with others) */
	int nlayers;
	struct ocb_cost_layer *layer; /* [nlayers], owned */
	struct ocb_cost_layer total;  /* sums; act_bytes the maximum */
};

/* Computes the cost of s at ctx (>= 1) and batch (>= 1). OCB_EINVAL, OCB_ENOMEM. */
int ocb_cost_compute(const struct ocb_model_spec *s, int64_t ctx, int64_t batch,
		     struct ocb_cost *out);
void ocb_cost_release(struct ocb_cost *c);

/* ---- roofline prediction ---- */

struct ocb_pred_layer {
	double t_decode, t_prefill;   /* seconds: one decode step, the whole prefill */
	char bound_decode[32];        /* the roof that binds: "bw_dram", "ops_int8", ... */
	char bound_prefill[32];
};

struct ocb_pred {
	int fmt;                      /* enum ocb_wfmt, -1 for a mixed plan */
	int threads;
	char level[16];               /* memory level of the weights + KV cache */
	char compute_decode[16];      /* matrix compute roof used for decode and for prefill */
	char compute_prefill[16];
	char attn_decode[16];         /* attention compute roof: decode, prefill */
	char attn_prefill[16];
	double decode_tok_s;          /* batch / sum t_decode; NaN if a roof is missing */
	double prefill_s;             /* sum t_prefill */
	int nlayers;
	struct ocb_pred_layer *layer; /* [nlayers], owned (ocb_pred_release) */
};

/* Predicts c in format fmt at `threads` from ceilings ce[0..n) and the machine's caches:
 * each layer's time is max(compute time, bytes / bandwidth roof) (the roofline,
 * REFERENCE.md §3), the bandwidth of the level the whole model's weights + KV cache sit
 * in (ocb_roof_level). Compute time = matrix ops / matrix roof + attention FLOPs /
 * attention roof (one core does both, one after the other; an int8 op and an fp32 FLOP
 * are not the same unit): the matrix roof is "ops_int8" for the integer-dot formats,
 * else "flops_fp32" (decode GEMV) / "flops_sgemm" (prefill GEMM); attention is fp32 in
 * every format: "flops_fp32" for decode (a GEMV per head), "flops_sgemm" for prefill.
 * The bound names the roof whose time is largest. A missing ceiling gives NaN times and
 * the bound "no <kind>". OCB_EINVAL, OCB_ENOMEM. */
int ocb_cost_predict(const struct ocb_cost *c, int fmt, const struct ocb_roof_ceil *ce,
		     size_t n, const struct ocb_roof_caches *caches, int threads,
		     struct ocb_pred *out);
/* The same for a mixed plan: layer i stores wbytes[i] bytes (its linears at their planned
 * cost, vectors f32; what a layer reads in a decode step changes by the same amount as
 * its storage against f32), integer-dot compute roof. out->fmt is -1. */
int ocb_cost_predict_bytes(const struct ocb_cost *c, const double *wbytes,
			   const struct ocb_roof_ceil *ce, size_t n,
			   const struct ocb_roof_caches *caches, int threads, struct ocb_pred *out);
void ocb_pred_release(struct ocb_pred *p);

#endif
