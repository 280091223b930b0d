/* trainer: the driver of every trainer (see trainer.h): schedule, cadence, events,
 * timing, divergence check. */
#include "trainer.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_time.h"
#include "schedule.h"

/* Final training loss of step schedules: the mean of the last (up to) this many steps. */
#define RECENT_STEPS 50

void ocb_train_cfg_defaults(struct ocb_train_cfg *c)
{
	struct ocb_optim_cfg o;
	ocb_optim_defaults(&o, OCB_OPTIM_ADAMW);
	memset(c, 0, sizeof *c);
	c->opt = OCB_OPTIM_ADAMW;
	c->beta1 = o.beta1;
	c->beta2 = o.beta2;
	c->eps = o.eps;
	c->momentum = o.momentum;
	c->seed = 1;
	c->log_every = 1;
}

void ocb_train_cfg_optim(const struct ocb_train_cfg *c, struct ocb_optim_cfg *o)
{
	ocb_optim_defaults(o, c->opt);
	o->beta1 = c->beta1;
	o->beta2 = c->beta2;
	o->eps = c->eps;
	o->momentum = c->momentum;
	o->weight_decay = c->weight_decay;
}

/* One ocb_trainer_run in progress. */
struct loop {
	const struct ocb_trainer *t;
	void *st;
	const struct ocb_train_cfg *cfg;
	const struct ocb_train_cb *cb;
	struct ocb_train_result *res;
	struct ocb_schedule sched;
	long total;      /* steps */
	long per_epoch;  /* steps per epoch; 0: a step schedule */
	double *recent;  /* ring of the last nrecent step losses, slot step % nrecent */
	long nrecent;
	double lsum;     /* losses since the last on_step */
	int lcount;
};

/* Checks the schedule and cadence against the trainer's info; fills the loop's plan. */
static int plan(struct loop *l, const struct ocb_train_info *in)
{
	const struct ocb_train_cfg *c = l->cfg;
	const char *who = l->t->name;
	if ((c->epochs > 0) == (c->steps > 0) || c->epochs < 0 || c->steps < 0)
		return ocb_seterr(OCB_EINVAL, "%s train: give epochs (%d) or steps (%ld), not both",
				  who, c->epochs, c->steps);
	if (c->epochs > 0 && in->steps_per_epoch < 1)
		return ocb_seterr(OCB_EINVAL, "%s train: this trainer has no epochs: give steps",
				  who);
	if (c->log_every < 1 || c->eval_every < 0 || c->batch < 1)
		return ocb_seterr(OCB_EINVAL, "%s train: log_every %d, batch %d must be >= 1, "
					      "eval_every %ld >= 0", who, c->log_every, c->batch,
				  c->eval_every);
	if (!(c->lr > 0.0f) || !(c->min_lr >= 0.0f) || !(c->warmup_epochs >= 0.0f) ||
	    c->warmup_steps < 0)
		return ocb_seterr(OCB_EINVAL, "%s train: bad learning-rate schedule (lr %g, min_lr "
					      "%g, warm-up %g epochs / %ld steps)", who, c->lr,
				  c->min_lr, c->warmup_epochs, c->warmup_steps);
	l->per_epoch = c->epochs > 0 ? in->steps_per_epoch : 0;
	l->total = c->epochs > 0 ? l->per_epoch * c->epochs : c->steps;
	l->sched = (struct ocb_schedule){
		.base_lr = c->lr,
		.min_lr = c->min_lr,
		.warmup_steps = c->epochs > 0 ? (long)(c->warmup_epochs * l->per_epoch + 0.5f)
					      : c->warmup_steps,
		.total_steps = l->total,
	};
	/* the last epoch; step schedules: the last RECENT_STEPS steps */
	l->nrecent = l->per_epoch ? l->per_epoch
				  : (l->total < RECENT_STEPS ? l->total : RECENT_STEPS);
	l->recent = calloc((size_t)l->nrecent, sizeof *l->recent);
	return l->recent ? OCB_OK : ocb_seterr(OCB_ENOMEM, "%s train: out of memory", who);
}

static int emit(struct loop *l, enum ocb_train_event ev, int epoch)
{
	const struct ocb_train_cb *cb = l->cb;
	return cb->on_event ? cb->on_event(cb->ctx, ev, l->res->steps, epoch) : OCB_OK;
}

/* Step `step` at its scheduled learning rate; on_step when the cadence says so. */
static int do_step(struct loop *l, long step)
{
	struct ocb_train_result *res = l->res;
	const struct ocb_train_cb *cb = l->cb;
	float lr = ocb_schedule_lr(&l->sched, step);
	double loss = NAN, ts = ocb_now_s();
	int rc = l->t->step(l->st, step, lr, &loss);
	res->step_time += ocb_now_s() - ts;
	if (rc)
		return rc;
	if (!isfinite(loss))
		return ocb_seterr(OCB_ERUNTIME, "%s train: loss is %g at step %ld (diverged)",
				  l->t->name, loss, step);
	if (step == 0)
		res->first_loss = loss;
	l->recent[step % l->nrecent] = loss;
	res->steps = step + 1;
	l->lsum += loss;
	l->lcount++;
	if (l->lcount == l->cfg->log_every || step + 1 == l->total) {
		double mean = l->lsum / l->lcount;
		l->lsum = 0.0;
		l->lcount = 0;
		if (cb->on_step && (rc = cb->on_step(cb->ctx, step, mean, lr)))
			return rc;
	}
	return OCB_OK;
}

/* EVAL_START, evaluate, EVAL_STOP, on_eval. */
static int do_eval(struct loop *l, int epoch, int final)
{
	const struct ocb_train_cb *cb = l->cb;
	struct ocb_eval ev = {.loss = NAN, .accuracy = NAN, .ppl = NAN};
	int rc = emit(l, OCB_TRAIN_EVAL_START, epoch);
	if (rc)
		return rc;
	double te = ocb_now_s();
	rc = l->t->evaluate(l->st, final, &ev);
	l->res->eval_time += ocb_now_s() - te;
	if (rc)
		return rc;
	ev.step = l->res->steps;
	ev.epoch = epoch;
	ev.final = final;
	l->res->final_eval = ev;
	if ((rc = emit(l, OCB_TRAIN_EVAL_STOP, epoch)))
		return rc;
	return cb->on_eval ? cb->on_eval(cb->ctx, &ev) : OCB_OK;
}

static int run_epochs(struct loop *l, int can_eval)
{
	const struct ocb_train_cfg *c = l->cfg;
	int rc;
	for (int ep = 1; ep <= c->epochs; ep++) {
		if ((rc = emit(l, OCB_TRAIN_EPOCH_START, ep)))
			return rc;
		for (long b = 0; b < l->per_epoch; b++)
			if ((rc = do_step(l, (long)(ep - 1) * l->per_epoch + b)))
				return rc;
		l->res->epochs = ep;
		if ((rc = emit(l, OCB_TRAIN_EPOCH_STOP, ep)))
			return rc;
		int last = ep == c->epochs;
		if (can_eval && (last || (c->eval_every > 0 && ep % c->eval_every == 0)) &&
		    (rc = do_eval(l, ep, last)))
			return rc;
	}
	return OCB_OK;
}

static int run_steps(struct loop *l, int can_eval)
{
	long every = l->cfg->eval_every;
	int rc;
	for (long s = 0; s < l->total; s++) {
		if ((rc = do_step(l, s)))
			return rc;
		if (can_eval && every > 0 && (s + 1) % every == 0 && s + 1 < l->total &&
		    (rc = do_eval(l, 0, 0)))
			return rc;
	}
	return can_eval ? do_eval(l, 0, 1) : OCB_OK;
}

/* Totals of a finished (or stopped) run. */
static void summarise(struct loop *l)
{
	struct ocb_train_result *r = l->res;
	long n = r->steps < l->nrecent ? r->steps : l->nrecent;
	double s = 0.0;
	/* in slot order: for the last epoch (slot = step % steps_per_epoch) that is step order */
	for (long i = 0; i < n; i++)
		s += l->recent[i];
	r->final_train_loss = n > 0 ? s / (double)n : NAN;
	l->t->info(l->st, &r->info);
	r->samples = r->steps * r->info.samples_per_step;
	r->flops = r->info.step_flops * (double)r->steps;
	if (r->step_time > 0) {
		r->samples_per_s = r->samples / r->step_time;
		r->gflops = r->flops / r->step_time / 1e9;
	}
}

int ocb_trainer_run(const struct ocb_trainer *t, void *state, const struct ocb_train_cfg *cfg,
		    const struct ocb_train_cb *cb, struct ocb_train_result *res)
{
	static const struct ocb_train_cb none;
	struct loop l = {.t = t, .st = state, .cfg = cfg, .cb = cb ? cb : &none, .res = res};
	struct ocb_train_info info;
	double t0 = ocb_now_s();
	int old_threads = openblas_get_num_threads();

	memset(res, 0, sizeof *res);
	res->first_loss = res->final_train_loss = NAN;
	res->final_eval = (struct ocb_eval){.loss = NAN, .accuracy = NAN, .ppl = NAN};
	t->info(state, &info);
	int rc = plan(&l, &info);
	if (rc)
		goto out;
	if (cfg->threads > 0)
		openblas_set_num_threads(cfg->threads);
	rc = l.per_epoch ? run_epochs(&l, info.can_evaluate) : run_steps(&l, info.can_evaluate);
	if (cfg->threads > 0)
		openblas_set_num_threads(old_threads);
	summarise(&l);
out:
	res->wall_time = ocb_now_s() - t0;
	free(l.recent);
	return rc;
}
