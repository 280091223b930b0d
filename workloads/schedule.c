#include "schedule.h"

#include <math.h>

float ocb_schedule_lr(const struct ocb_schedule *s, long step)
{
	if (step < 0)
		step = 0;
	if (s->warmup_steps > 0 && step < s->warmup_steps)
		return s->base_lr * (float)(step + 1) / (float)s->warmup_steps;
	long span = s->total_steps - s->warmup_steps;
	if (span < 1)
		span = 1;
	double p = (double)(step - s->warmup_steps) / (double)span;
	if (p > 1.0)
		p = 1.0;
	double lr = s->min_lr + (s->base_lr - s->min_lr) * 0.5 * (1.0 + cos(M_PI * p));
	return (float)lr;
}
