/* qtrain: low-bit training of a model's linear layers, shared by the ternary-suite
 * trainers (trainer_qmlp.h, trainer_qlm.h). Three methods (REFERENCE.md §1):
 *
 *   fp32  nothing installed: the model's own fp32 path (the baseline).
 *   ste   BitNet b1.58 (Ma et al. 2024): fp32 latent weights W (the model's, updated by
 *         the trainer's fp32 AdamW); every forward takes g = mean|W|, codes =
 *         clamp(round(W / (g + 1e-5)), -1, 1) and int8 activations, y = g * (Xq codes^T);
 *         dx = dy (g codes) and dW = dy^T x go straight through (fp32).
 *   dqt   direct quantized training (Zhao, Tabaru, Kobayashi et al., ACML 2025): the
 *         weight IS int8 codes on {-qmax..qmax} (qmax = 2^(bits-1) - 1; ternary: 1) times
 *         one per-tensor scale s; the model's fp32 weight and gradient regions of these
 *         layers are released (madvise) and their pointers set to NULL, so no fp32 copy
 *         exists in the step. The backward computes dW in tiles of QT_TILE_ROWS output
 *         rows (fp32, sgemm) and feeds each tile to the fused AdamW + stochastic-rounding
 *         kernel (kernels/dqt_update.h) with moments in fp32/bf16/fp8; the RNG key is
 *         (seed, step, layer index, element index).
 *
 * The scale (recorded in the suite's metrics as `scale_rule`): chosen once, at creation,
 * from the initial fp32 weights W0 of the layer, and then fixed (the grid never moves;
 * weights outside it are clipped):
 *   ternary  s = mean|W0| (BitNet's absmean), rounded to fp16 so that the TQ2_0/TQ1_0
 *            export (fp16 scale) holds exactly the trained weights;
 *   n bits   s = c_n * rms(W0) / qmax with c_8 = 6, c_4 = 3, c_3 = 2.5 (a clipping range of
 *            c_n standard deviations: wide at 8 bits, MSE-minded at 3-4 bits).
 * Activations: int8 per token, absmax over blocks of 256 (tern_gemm.h; per token for
 * k <= 256), in STE and DQT alike. The last layer of a model (classifier / LM head) is
 * not registered by the trainers and stays fp32 in every method (BitNet practice).
 *
 * Ownership: a struct qt_set owns its layers' codes, moments, tiles and activation
 * buffers (qt_set_release). The model stays the trainer's; the set borrows its linears. */
#ifndef OCB_QTRAIN_H
#define OCB_QTRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "../kernels/dqt_update.h"
#include "linear.h"
#include "optim.h"

enum qt_method { QT_FP32 = 0, QT_STE, QT_DQT };

#define QT_MAX_LAYERS 64
#define QT_TILE_ROWS 32 /* output rows of one dW tile (DQT) */

struct qt_cfg {
	enum qt_method method;
	int bits;              /* DQT: 8, 4, 3 or 2 (= ternary); STE: 2 (ternary) */
	enum dqt_mfmt moments; /* DQT weight moments; everything else keeps fp32 moments */
};

/* "fp32" / "ste" / "dqt"; parse returns -1 for an unknown name. */
const char *qt_method_name(enum qt_method m);
int qt_method_parse(const char *s);
/* OCB_EINVAL naming the problem (DQT bits not in {2,3,4,8}, STE bits != 2). */
int qt_cfg_check(const struct qt_cfg *c);
/* Human/metric label: "fp32", "ste-ternary", "dqt-8", "dqt-ternary". */
const char *qt_cfg_label(const struct qt_cfg *c, char *buf, size_t len);
/* The scale rule of c as one sentence (metrics, report). */
const char *qt_scale_rule(const struct qt_cfg *c);

struct qt_set;

/* One registered linear (the impl_state of its ocb_linear). */
struct qt_layer {
	struct qt_set *set;
	struct ocb_linear *l;
	int index;          /* RNG tensor id */
	int qmax, ldk;
	int8_t *codes;      /* [out][ldk] (DQT: the weights; STE: the last forward's) */
	float scale;
	float *w_home, *gw_home; /* DQT: the released fp32 regions (save/load refill) */
	void *m, *v;        /* DQT moments [out][in] in cfg.moments (views into set->moments,
			       from qt_set_finish) */
	float m_dec, v_dec, m_enc, v_enc; /* fp8 delayed scales (dqt_update.h) */
};

/* fp32 tensors a DQT trainer updates with plain AdamW (biases, norms, embeddings, head). */
struct qt_range { float *p, *g; size_t n, aux_off; int decay; };

struct qt_set {
	struct qt_cfg cfg;
	struct ocb_optim_cfg opt;
	uint64_t seed;
	int threads;
	long t;               /* optimizer steps begun */
	float lr, c1, c2;
	struct qt_layer layer[QT_MAX_LAYERS];
	int nlayers;
	struct qt_range range[2 * QT_MAX_LAYERS + 8];
	int nranges;
	size_t aux_n;
	float *aux_m, *aux_v; /* [aux_n] fp32 moments of the ranges (DQT) */
	void *moments;        /* DQT: one block holding every layer's m, v and aux_m, aux_v */
	int8_t *xq;           /* activation codes scratch */
	float *xd;
	size_t xq_cap, xd_cap;
	float *gtile;         /* [QT_TILE_ROWS][max in] */
	size_t gtile_cap;
	int max_rows;         /* largest n a forward may see */
};

/* Empty set for method c with the optimizer and seed of the training config (threads for
 * the int8 GEMM and the tiles' update). max_rows: the largest batch rows a forward sees.
 * The struct is the caller's. OCB_EINVAL. */
int qt_set_init(struct qt_set *s, const struct qt_cfg *c, const struct ocb_optim_cfg *opt,
		uint64_t seed, int threads, int max_rows);
/* Registers linear l (fp32 weights already initialised): STE installs the ternary forward;
 * DQT quantizes W to codes with the scale rule, allocates moments, releases l->w and l->gw
 * and sets them NULL. A no-op for fp32. OCB_ENOMEM, OCB_EINVAL (too many layers). */
int qt_set_add_linear(struct qt_set *s, struct ocb_linear *l);
/* DQT: an fp32 tensor (p, g: n floats) the set updates with AdamW (decay 0/1). */
int qt_set_add_fp32(struct qt_set *s, float *p, float *g, size_t n, int decay);
/* DQT: allocates the fp32 moments of the ranges and releases the pages the linears' fp32
 * regions span together (neighbours merged); call after the last add. */
int qt_set_finish(struct qt_set *s);

/* Before the backward of step `step` (0-based) at learning rate lr. */
void qt_set_begin_step(struct qt_set *s, long step, float lr);
/* After the backward: DQT updates the fp32 ranges and rotates the fp8 scales. */
void qt_set_end_step(struct qt_set *s);
/* DQT: zeroes the fp32 ranges' gradients (the released regions are never touched). */
void qt_set_zero_grads(struct qt_set *s);

/* Bytes held by the set beyond the model's own blocks, by part. */
struct qt_bytes { size_t weights, grads, optimizer, activations; };
void qt_set_bytes(const struct qt_set *s, struct qt_bytes *b);
/* DQT: fp32 parameters the model block still holds resident (ranges) vs released. */
size_t qt_set_fp32_params(const struct qt_set *s);

/* DQT: dequantizes every layer into its home region and points l->w there (for a
 * checkpoint writer); qt_set_unmaterialize releases them again. */
void qt_set_materialize(struct qt_set *s);
void qt_set_unmaterialize(struct qt_set *s);
/* DQT: codes from the fp32 weights now in the home regions (a loaded checkpoint). A grid
 * checkpoint (values s * code, some code +-1) gives back s and the codes exactly;
 * otherwise the scale rule is applied to the loaded weights and they are rounded. */
void qt_set_requantize(struct qt_set *s);

void qt_set_release(struct qt_set *s);

#endif
