/* schedule: learning rate as a function of the step: linear warm-up, then cosine decay
 * to a floor (Loshchilov & Hutter, "SGDR", ICLR 2017; warm-up as in Goyal et al. 2017).
 * Pure function of (config, step): deterministic, no state, nothing allocated. */
#ifndef OCB_SCHEDULE_H
#define OCB_SCHEDULE_H

struct ocb_schedule {
	float base_lr;      /* peak learning rate, reached at the end of warm-up */
	float min_lr;       /* floor at the end of the cosine (often 0 or base_lr/10) */
	long warmup_steps;  /* >= 0; 0: no warm-up */
	long total_steps;   /* total optimizer steps (warm-up included), > 0 */
};

/* Learning rate for the 0-based optimizer step `step`:
 *   step < warmup:  base * (step + 1) / warmup
 *   otherwise:      min + (base - min) * (1 + cos(pi * p)) / 2,
 *                   p = (step - warmup) / max(1, total - warmup), clamped to [0, 1]
 * Steps past total_steps return min_lr. */
float ocb_schedule_lr(const struct ocb_schedule *s, long step);

#endif
