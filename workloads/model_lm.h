/* model_lm: a LLaMA-structured byte-level decoder (Touvron et al. 2023, "LLaMA"), fp32,
 * with forward and full backward written here on top of OpenBLAS.
 *
 *   tokens (bytes, vocab 256) -> embedding [V][d]
 *   n_layers x { x += Wo . Attn(RoPE(Wq . RMSNorm(x)), RoPE(Wk . RMSNorm(x)), Wv . RMSNorm(x))
 *                x += Wdown . (SiLU(Wgate . RMSNorm(x)) * (Wup . RMSNorm(x))) }
 *   RMSNorm(x) -> untied head [V][d] -> logits -> mean cross-entropy of next bytes.
 *
 * RMSNorm: Zhang & Sennrich 2019. Rotary position embedding: Su et al. 2021, "RoFormer"
 * (pairs (2i, 2i+1) of each head rotated by pos * theta^(-2i/hd)). SwiGLU: Shazeer 2020,
 * "GLU Variants Improve Transformer". No biases anywhere (as in LLaMA).
 *
 * Every linear (q, k, v, o, gate, up, down, head) is a struct ocb_linear and goes through
 * ocb_linear_forward/backward, so quantized/ternary/sparse formats swap in without
 * touching this file.
 *
 * Ownership: a struct lm_model owns three blocks, each ONE ocb_alloc allocation:
 * parameters (views: tok_emb, norms, linears), gradients (same layout, only when created
 * with grads) and the activation arena for a batch (lm_reserve), plus the small RoPE table
 * and name/struct arrays. lm_free releases all.
 * Gradients ACCUMULATE in lm_backward; the caller zeroes them (lm_zero_grad). Shapes are
 * row-major; activations are [B][T][...] with BT = B*T rows. */
#ifndef OCB_MODEL_LM_H
#define OCB_MODEL_LM_H

#include <stddef.h>
#include <stdint.h>

#include "linear.h"

#define LM_LIN_PER_LAYER 7 /* q, k, v, o, gate, up, down */

struct lm_config {
	int vocab;        /* 256 (byte tokens); 1..256 */
	int d_model;      /* 128 */
	int n_layers;     /* 4 */
	int n_heads;      /* 4; head dim d_model / n_heads must be even (RoPE pairs) */
	int ctx;          /* 128: longest sequence (RoPE table length) */
	int ffn;          /* 344: SwiGLU hidden width (4 d 2/3 rounded to 8) */
	float rope_theta; /* 10000 */
	float norm_eps;   /* 1e-5 */
};

/* Fills the defaults above. */
void lm_config_default(struct lm_config *c);
/* 4 d 2/3 rounded up to a multiple of 8 (LLaMA's SwiGLU width rule). */
int lm_ffn_width(int d_model);
/* OCB_OK or OCB_EINVAL naming the bad field. */
int lm_config_check(const struct lm_config *c);
/* Number of fp32 parameters. */
size_t lm_param_count(const struct lm_config *c);

struct lm_layer {
	float *attn_norm, *g_attn_norm;   /* [d] */
	struct ocb_linear wq, wk, wv, wo; /* [d][d] */
	float *ffn_norm, *g_ffn_norm;     /* [d] */
	struct ocb_linear w_gate, w_up;   /* [F][d] */
	struct ocb_linear w_down;         /* [d][F] */
};

/* What one block saves for its backward (views into the arena). */
struct lm_layer_acts {
	float *x;          /* [BT][d] block input (residual stream) */
	float *r1, *r2;    /* [BT] 1/rms of x and of h */
	float *xn1, *xn2;  /* [BT][d] normalised inputs of attention and MLP */
	float *q, *k, *v;  /* [BT][d] (q, k after RoPE); head h = columns h*hd .. */
	float *p;          /* [B][H][T][T] causal attention probabilities */
	float *att;        /* [BT][d] attention output, heads concatenated (Wo input) */
	float *h;          /* [BT][d] x + Wo att */
	float *gate, *up;  /* [BT][F] */
	float *act;        /* [BT][F] SiLU(gate) * up (Wdown input) */
};

/* Called with the input of every linear before its product (GPTQ calibration: H = 2 X X^T).
 * index: lm_linear() numbering; x [n][in] is valid only during the call. To capture, set
 * m->on_linear_input / m->hook_ctx and run lm_forward (tgt NULL) over calibration windows;
 * the hook sees each layer's input as produced by the layers before it in their current
 * format (so quantizing layer by layer propagates the error, as GPTQ does). */
typedef void (*lm_linear_hook)(void *ctx, int index, const float *x, int n, int in);

struct lm_model {
	struct lm_config cfg;
	float *params; /* [nparams], owned */
	float *grads;  /* [nparams] same layout, owned; NULL: inference only */
	size_t nparams;
	float *tok_emb, *g_tok_emb;       /* [V][d] */
	struct lm_layer *layers;          /* [n_layers], owned */
	float *final_norm, *g_final_norm; /* [d] */
	struct ocb_linear head;           /* [V][d] */
	float *rope_cos, *rope_sin;       /* [ctx][hd/2], one owned allocation (rope_cos) */

	/* Activation arena for up to cap_rows = B*T rows with T <= cap_T (lm_reserve). */
	float *arena;
	size_t arena_floats;
	int cap_rows, cap_T;
	struct lm_layer_acts *acts;       /* [n_layers], owned */
	float *xf, *rf, *xnf;             /* final residual [BT][d], 1/rms [BT], normed [BT][d] */
	float *logits;                    /* [BT][V]; lm_backward turns it into dlogits */
	float *nll;                       /* [BT] -log p(target), 0 where unscored */
	float *tmp;                       /* [BT][d] forward scratch */
	/* backward scratch (only with grads) */
	float *dres, *dxn, *dtmp, *datt, *dq, *dk, *dv; /* [BT][d] */
	float *dact, *dgate, *dup;                       /* [BT][F] */
	float *dp;                                       /* [B][H][T][T] */

	/* State of the last lm_forward, for lm_backward. */
	int B, T;
	const uint8_t *in;   /* borrowed [B][T] */
	const int32_t *tgt;  /* borrowed [B][T] or NULL */
	long n_scored;

	lm_linear_hook on_linear_input; /* NULL: no capture */
	void *hook_ctx;

	char (*lin_names)[40]; /* [nlinears] names, owned */
};

/* Allocates a model with parameters initialised from `seed` (normal 0.02, residual
 * projections Wo, Wdown scaled by 1/sqrt(2 n_layers) as in GPT-2; norms 1). with_grads: also
 * allocate the gradient block. On success *out is owned by the caller (lm_free). */
int lm_create(const struct lm_config *c, int with_grads, uint64_t seed, struct lm_model **out);
void lm_free(struct lm_model *m); /* NULL is a no-op */

/* Makes the arena hold a batch of B sequences of T tokens (grows only). OCB_EINVAL if
 * T > ctx, OCB_ENOMEM on failure (the model stays usable with its old arena). */
int lm_reserve(struct lm_model *m, int B, int T);

/* Forward over in[B][T] (bytes < vocab). tgt[B][T]: next-byte targets, -1 = not scored;
 * NULL: logits only. *loss_sum (nats, summed over scored positions) and *n_scored may be
 * NULL. Reserves the arena as needed. `in` and `tgt` must stay valid until lm_backward. */
int lm_forward(struct lm_model *m, const uint8_t *in, const int32_t *tgt, int B, int T,
	       double *loss_sum, long *n_scored);
/* Backward of the mean cross-entropy of the last lm_forward (which had tgt): accumulates
 * into the gradient block. OCB_EINVAL without grads or targets. */
int lm_backward(struct lm_model *m);
void lm_zero_grad(struct lm_model *m);

/* Named tensors of the parameter block, in storage order (checkpoints, grad checks). */
struct lm_tensor {
	char name[40];
	float *data, *grad; /* grad NULL without grads */
	int rows, cols;     /* vectors: rows 1 */
};
int lm_ntensors(const struct lm_config *c);
int lm_tensor(struct lm_model *m, int i, struct lm_tensor *t);

/* The linear layers: index l*7 + {0 q,1 k,2 v,3 o,4 gate,5 up,6 down}, then n_layers*7 =
 * head. Returns NULL for an index out of range; *name (may be NULL) stays the model's. */
int lm_nlinears(const struct lm_model *m);
struct ocb_linear *lm_linear(struct lm_model *m, int index, const char **name);
/* Static FLOPs (work model) of the matrix products of one forward over B x T tokens: every
 * linear (2 n in out) plus attention's QK^T and PV over the full T x T (2 * 2 B H T T hd).
 * A training step's products are 3x this (backward: gW and dx per linear, four products
 * per attention head); element-wise work is not counted. */
double lm_forward_flops(const struct lm_config *c, int B, int T);
/* Sum of ocb_linear_weight_bytes over the linears plus the fp32 embedding and norms. */
size_t lm_weight_bytes(const struct lm_model *m);

/* Validation loss with a sliding-window protocol: windows of `window` inputs starting
 * every `stride` bytes (stride <= window); each window scores only the targets no earlier
 * window scored (the first scores all), so every byte after the first is predicted once
 * with up to `window` bytes of context. max_windows > 0 limits the windows (quick
 * evaluation); 0: the whole text. batch: windows per forward. *loss in nats/byte,
 * *ppl = exp(loss); either may be NULL. */
int lm_eval(struct lm_model *m, const uint8_t *text, size_t n, int window, int stride,
	    int batch, long max_windows, double *loss, double *ppl, long *n_scored);

/* Checkpoint (workloads/checkpoint.h) of kind "lm": the config as JSON and every tensor of
 * lm_tensor() as f32 ([rows][cols], vectors 1-D). Save: OCB_EPERM/OCB_EIO naming the path.
 * Load: a new model (gradients if with_grads) the caller frees with lm_free; refuses a
 * foreign, corrupt or mismatching file with OCB_EFORMAT/OCB_ENOENT naming it. */
int lm_save(const struct lm_model *m, const char *path);
int lm_load(const char *path, int with_grads, struct lm_model **out);
/* The config as a JSON object (caller frees with cJSON_Delete), NULL on no memory. */
struct cJSON *lm_config_json(const struct lm_config *c);

/* ---- the layers, exposed for the gradient checks (all rows independent) ---- */

/* y[n][d] = x * rinv * w, rinv[n] = 1/sqrt(mean(x^2) + eps). */
void lm_rmsnorm_forward(const float *x, const float *w, int n, int d, float eps, float *y,
			float *rinv);
/* dx[n][d] += d/dx, dw[d] += d/dw (dw may be NULL). */
void lm_rmsnorm_backward(const float *x, const float *w, const float *rinv, const float *dy,
			 int n, int d, float *dx, float *dw);
/* cos/sin[ctx][hd/2] for angle pos * theta^(-2i/hd). */
void lm_rope_tables(int ctx, int hd, float theta, float *cos_t, float *sin_t);
/* In place on x[B][T][H*hd]: rotate each pair (2i, 2i+1) of each head by the angle of its
 * position t (inverse = 1: by minus the angle, which is the backward). */
void lm_rope_apply(float *x, int B, int T, int H, int hd, const float *cos_t,
		   const float *sin_t, int inverse);
/* Causal softmax attention per (b, h) with scale 1/sqrt(hd): q, k, v, out [B][T][H*hd],
 * p [B][H][T][T] (saved for backward, zeros above the diagonal). */
void lm_attention_forward(const float *q, const float *k, const float *v, int B, int T, int H,
			  int hd, float *p, float *out);
/* dq, dk, dv [B][T][H*hd] written (not accumulated); dp [B][H][T][T] scratch. */
void lm_attention_backward(const float *q, const float *k, const float *v, const float *p,
			   const float *dout, int B, int T, int H, int hd, float *dp, float *dq,
			   float *dk, float *dv);
/* out = SiLU(gate) * up over n values; backward writes dgate, dup. */
void lm_swiglu_forward(const float *gate, const float *up, size_t n, float *out);
void lm_swiglu_backward(const float *gate, const float *up, const float *dout, size_t n,
			float *dgate, float *dup);
/* out[n][d] = table[tok[i]]; backward: gtable[tok[i]] += dout[i] (in order). */
void lm_embedding_forward(const float *table, const uint8_t *tok, int n, int d, float *out);
void lm_embedding_backward(float *gtable, const uint8_t *tok, const float *dout, int n, int d);

#endif
