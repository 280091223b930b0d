/* block_prune: BLaST-style iterative block sparsification, the pure parts (REFERENCE.md
 * section 1, Okanovic et al.): block scores, the cubic sparsity schedule, the keep/regrow
 * selection. Trainers (trainer_bsr_mlp.h) decide when to call them.
 *
 * Rule recorded with a run: blocks of B x B; a block's score is its Frobenius norm
 * ||W_blk||_F (magnitude pruning); at each pruning event the lowest-scoring blocks are
 * zeroed until the scheduled sparsity is reached. Schedule: cubic (Zhu & Gupta, "To prune
 * or not to prune", 2017): s(t) = s_f * (1 - (1 - (t - t0) / (t1 - t0))^3) for t0 <= t <=
 * t1, 0 before, s_f after; events every `every` steps on [t0, t1] (t1 included). After
 * t1 the mask is fixed: fine-tuning. Optional regrowth (RigL, Evci et al. 2020): at an
 * event before t1, a fraction `regrow` of the kept blocks is dropped (lowest score) and as
 * many dead blocks with the largest gradient norm ||G_blk||_F come back (weights zero). */
#ifndef OCB_BLOCK_PRUNE_H
#define OCB_BLOCK_PRUNE_H

#include <cJSON.h>
#include <stdint.h>

struct ocb_prune_cfg {
	int block;      /* B: square blocks */
	double target;  /* final block sparsity s_f in [0, 1) */
	long t0, t1;    /* ramp start and end (steps); t0 == t1: one event at t0 */
	long every;     /* steps between events on the ramp (>= 1) */
	double regrow;  /* fraction of kept blocks swapped by gradient at each event; 0: off */
	int global;     /* 0: every layer to the scheduled sparsity; 1: one ranking of the
			   block norms of all sparse layers (the total reaches it; layers differ) */
};

/* Scheduled sparsity at step t (0 .. target). */
double ocb_prune_sparsity(const struct ocb_prune_cfg *c, long t);
/* 1 if step t is a pruning event. */
int ocb_prune_due(const struct ocb_prune_cfg *c, long t);
/* OCB_EINVAL naming the bad field. */
int ocb_prune_cfg_check(const struct ocb_prune_cfg *c);
/* {"rule":"block_frobenius_magnitude","schedule":"cubic","block":B,"target":..,
 *  "t0":..,"t1":..,"every":..,"regrow":..,"regrow_rule":"gradient_frobenius"|null,
 *  "scope":"layer"|"global"};
 * the caller cJSON_Delete()s. NULL on allocation failure. */
cJSON *ocb_prune_cfg_to_json(const struct ocb_prune_cfg *c);

/* Global ranking: the score of the `keep`-th largest of the n scores (ties count), i.e.
 * the threshold above which blocks survive; +inf if keep <= 0, -inf if keep >= n.
 * OCB_ENOMEM -> NAN. */
float ocb_block_kth_score(const float *score, long n, long keep);

/* norms[mb][kb] = Frobenius norm of each B x B block of w[m][k] (m, k multiples of B). */
void ocb_block_norms(const float *w, int m, int k, int B, float *norms);

/* Blocks to keep out of nb given scores: mask[i] = 1 for the `keep` highest scores
 * (ties: lower index first, so deterministic), 0 otherwise. OCB_EINVAL if keep is out of
 * [0, nb], OCB_ENOMEM. */
int ocb_block_keep_top(const float *score, int nb, int keep, uint8_t *mask);

/* One event on mask[nb] (in/out): keep the `keep` blocks of highest wscore (pruned blocks
 * should score 0); then, if gscore != NULL and nswap > 0, drop the nswap lowest-wscore
 * kept blocks and revive the nswap dead blocks of highest gscore. On return
 * *revived (may be NULL) holds how many blocks came back. OCB_EINVAL, OCB_ENOMEM. */
int ocb_block_prune_event(const float *wscore, const float *gscore, int nb, int keep, int nswap,
			  uint8_t *mask, int *revived);

#endif
