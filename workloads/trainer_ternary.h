/* trainer_ternary: the ternary suite's trainers (trainer.h interface): the MLP and the
 * byte LM trained by one of the methods of qtrain.h — fp32, BitNet b1.58 STE, or DQT with
 * n-bit / ternary weights and fp32/bf16/fp8 moments.
 *
 * Data, batches, evaluation protocol and checkpoints are those of the fp32 trainers
 * (trainer_mlp.h, trainer_lm.h): same shuffling / window sampling from the seed, same
 * evaluation. What differs per method:
 *   fp32, ste  the model's fp32 parameter and gradient blocks, ocb_optim AdamW over all
 *              of it (biases / norm gains not decayed), global clipping if configured;
 *   dqt        the registered linears are codes (qtrain.h); the other tensors (biases,
 *              norms, embeddings, the last layer) get fp32 AdamW from the set. No global
 *              gradient clipping: the weight gradient is never whole (tiles), so
 *              cfg.grad_clip is ignored for DQT (recorded by the suite).
 * The last linear (MLP classifier, LM head) stays fp32 in every method.
 * Checkpoints are the fp32 kinds "mlp" / "lm" (DQT writes its dequantized grid weights,
 * so any consumer can read them; loading re-derives the codes exactly).
 * Determinism: the fp32 trainers' guarantees, plus the counter-based RNG of SR. */
#ifndef OCB_TRAINER_TERNARY_H
#define OCB_TRAINER_TERNARY_H

#include "qtrain.h"
#include "trainer.h"
#include "trainer_lm.h"
#include "trainer_mlp.h"

struct qmlp_spec {
	struct ocb_mlp_spec mlp;
	struct qt_cfg q;
};

struct qlm_spec {
	struct lm_train_spec lm;
	struct qt_cfg q;
};

extern const struct ocb_trainer ocb_trainer_qmlp;
extern const struct ocb_trainer ocb_trainer_qlm;

/* The set and the MLP / LM model of a state made by these trainers (borrowed views, for
 * export and tests). */
struct qt_set *qmlp_set(void *state);
struct ocb_mlp *qmlp_model(void *state);
struct qt_set *qlm_set(void *state);
struct lm_model *qlm_model(void *state);

#endif
