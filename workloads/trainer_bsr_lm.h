/* trainer_bsr_lm: the byte LM (model_lm.h) trained while the SwiGLU MLP weights of every
 * layer (gate, up [F][d], down [d][F]) are sparsified into B x B blocks, BLaST-style
 * (block_prune.h), on the block-sparse kernels (bsr_layer.h). Otherwise the LM trainer's
 * recipe (trainer_lm.h): random windows from the seed, AdamW with the norm gains
 * undecayed, global clipping over the live gradients, the same validation protocol.
 * Attention and the head stay dense. AdamW updates only stored blocks of the MLP weights.
 * B must divide d_model and ffn (the default ffn 344 = 43 * 8: B = 4 or 8). */
#ifndef OCB_TRAINER_BSR_LM_H
#define OCB_TRAINER_BSR_LM_H

#include "block_prune.h"
#include "bsr_layer.h"
#include "trainer_lm.h"

struct ocb_bsr_lm_spec {
	struct lm_train_spec lm;
	struct ocb_prune_cfg prune;
};

extern const struct ocb_trainer ocb_trainer_bsr_lm;

void ocb_bsr_lm_stats(void *state, struct ocb_bsr_train_stats *st);

#endif
