/* qt_recipe: the ternary suite's training recipes and its grid of configurations, sized
 * for the family time budgets on 2 cores (full suite <= 5 min, --quick <= 30 s), which
 * are tighter than the 10 min / 60 s: fewer epochs and steps and a smaller LM
 * than the fp32 train suite's. The trade-off: absolute accuracy / loss is below the
 * converged values (MLP ~0.87-0.88 after 2 epochs instead of ~0.90 after 15; the LM is
 * a 2-layer d=64 model trained for 400 steps), but every method gets the same data,
 * model, schedule and seed, which is what the comparison needs.
 *
 *   MLP 784-512-256-10 on Fashion-MNIST: batch 256, AdamW (0.9, 0.999, wd 1e-4), lr 1e-3,
 *       warm-up 0.2 epoch, cosine to 1e-5; full 2 epochs on 60,000; quick 1 epoch on the
 *       first 5,000.
 *   LM (model_lm.h) d_model 64, 2 layers, 2 heads, ctx 64, SwiGLU 176, on fortunes: batch
 *       16 x 64 bytes, AdamW (0.9, 0.95, wd 0.1), lr 3e-3, warm-up 25% (QT_LM_WARMUP_DIV),
 *       cosine to 1e-4, clip 1.0 (fp32/STE; DQT has no global clip); full 400 steps,
 *       validation every 100 steps on 32 windows of 64, final on 128; quick 40 steps,
 *       final only, 16 windows.
 *       Why 25%: with 10% (40 steps) the DQT-8 LM had a loss spike at the end of the
 *       warm-up in some runs (seed 3: 3.22 -> 3.90 at step 35) that it never recovered
 *       from, so its final validation loss varied by up to 7% between runs that differ
 *       only in the stochastic-rounding stream (fp32 moments, seeds 1 and 3, 4 streams
 *       each: 2.37-2.48 and 2.32-2.50) — larger than every effect the suite compares
 *       (bf16 vs fp32 moments: the +2.4% of one earlier run was this noise). With 100
 *       warm-up steps the same 4 streams at seed 3 gave 2.299-2.318 (0.8%), all better.
 *       Adam's adaptive step is ill-conditioned early (second moments from few
 *       gradients), which a longer warm-up tempers: Liu et al., ICLR 2020, "On the
 *       Variance of the Adaptive Learning Rate and Beyond"; Wortsman et al. 2023,
 *       arXiv:2309.14322, "Small-scale proxies for large-scale Transformer training
 *       instabilities" (longer warm-up lowers the sensitivity to the learning rate).
 *
 * Grid (method x bits x moments): fp32; STE ternary; DQT 8, 4, 3, ternary with fp32
 * moments; DQT 8 and ternary with bf16 and fp8 moments (10 rows). Quick: fp32, STE,
 * DQT-8, DQT-ternary (fp32 moments), DQT-8 bf16 (5 rows). */
#ifndef OCB_QT_RECIPE_H
#define OCB_QT_RECIPE_H

#include "model_lm.h"
#include "qtrain.h"
#include "trainer.h"
#include "trainer_lm.h"

/* The LM's warm-up: steps / QT_LM_WARMUP_DIV (see above). */
#define QT_LM_WARMUP_DIV 4

/* cfg (and *max_train: 0 = all) for the MLP. */
void qt_mlp_recipe(int quick, struct ocb_train_cfg *cfg, int *max_train);
/* model config, spec settings (corpora left NULL) and cfg for the LM. */
void qt_lm_recipe(int quick, struct lm_config *mc, struct lm_train_spec *sp,
		  struct ocb_train_cfg *cfg);
/* The LM of the recipe widened to d_model d (memory scan, bench ternary_lm_width): heads
 * of 64 (at least 2), SwiGLU lm_ffn_width(d); layers, context and batch unchanged. */
void qt_lm_widen(struct lm_config *mc, int d);
/* The grid: *n entries of a static table. */
const struct qt_cfg *qt_suite_grid(int quick, int *n);

#endif
