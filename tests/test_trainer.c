/* trainer: the driver (ocb_trainer_run) with a fake trainer that counts its calls and
 * records what it was given: schedule and lr, on_step / on_eval cadence, event order,
 * divergence, a callback's stop status, bad configurations, save/load through the ops. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../workloads/schedule.h"
#include "../workloads/trainer.h"
#include "cli_util.h"

/* ---- the fake: one weight w; loss of step s is 1 / (s + 1) (or NaN at nan_at) ---- */

struct fake_spec {
	long per_epoch; /* 0: no epochs */
	int can_eval;
	long nan_at;    /* -1: never */
};

struct fake {
	struct fake_spec sp;
	float w;
	long steps;       /* step() calls */
	long evals, finals;
	float lr[128];    /* lr given to step s */
};

static int nfree;

static int fake_create(const void *spec, const struct ocb_train_cfg *cfg, void **out)
{
	struct fake *f = calloc(1, sizeof *f);
	cr_assert_not_null(f);
	f->sp = *(const struct fake_spec *)spec;
	f->w = (float)cfg->seed;
	*out = f;
	return OCB_OK;
}

static void fake_info(void *st, struct ocb_train_info *in)
{
	struct fake *f = st;
	*in = (struct ocb_train_info){.steps_per_epoch = f->sp.per_epoch, .samples_per_step = 4,
				      .step_flops = 100.0, .can_evaluate = f->sp.can_eval,
				      .nparams = 1, .weight_bytes = 4, .grad_bytes = 4,
				      .optimizer_bytes = 8, .activation_bytes = 16};
}

static int fake_step(void *st, long step, float lr, double *loss)
{
	struct fake *f = st;
	cr_assert_eq(step, f->steps, "steps come in order: %ld after %ld calls", step, f->steps);
	if (step < 128)
		f->lr[step] = lr;
	f->steps++;
	f->w -= lr;
	*loss = step == f->sp.nan_at ? NAN : 1.0 / (double)(step + 1);
	return OCB_OK;
}

static int fake_eval(void *st, int final, struct ocb_eval *ev)
{
	struct fake *f = st;
	cr_assert(f->sp.can_eval, "evaluate called on a trainer without evaluation data");
	f->evals++;
	f->finals += final;
	ev->loss = f->w;
	ev->accuracy = 0.5;
	ev->scored = 10;
	return OCB_OK;
}

static int fake_save(void *st, const char *path)
{
	struct fake *f = st;
	FILE *fp = fopen(path, "wb");
	if (!fp)
		return OCB_EIO;
	size_t n = fwrite(&f->w, sizeof f->w, 1, fp);
	return fclose(fp) == 0 && n == 1 ? OCB_OK : OCB_EIO;
}

static int fake_load(void *st, const char *path)
{
	struct fake *f = st;
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return OCB_ENOENT;
	size_t n = fread(&f->w, sizeof f->w, 1, fp);
	fclose(fp);
	return n == 1 ? OCB_OK : OCB_EFORMAT;
}

static void fake_free(void *st)
{
	nfree += st != NULL;
	free(st);
}

static const struct ocb_trainer fake_trainer = {
	.name = "fake", .create = fake_create, .info = fake_info, .step = fake_step,
	.evaluate = fake_eval, .save = fake_save, .load = fake_load, .free = fake_free,
};

/* ---- a recording callback ---- */

struct rec {
	char trace[256];   /* S/s epoch start/stop, E/e eval start/stop, V on_eval, . on_step */
	int n;
	long step_at[64];  /* on_step: step and mean loss */
	double mean[64];
	int nsteps;
	struct ocb_eval ev[8];
	int nev;
	long ev_step[16];  /* step reported with each event */
	int stop_step;     /* on_step returns OCB_EIO there; -1: never */
	int stop_event;    /* on_event returns OCB_EPERM at this event; -1: never */
};

static void put(struct rec *r, char c)
{
	if (r->n < 255)
		r->trace[r->n++] = c;
	r->trace[r->n] = '\0';
}

static int on_event(void *c, enum ocb_train_event ev, long step, int epoch)
{
	struct rec *r = c;
	static const char code[] = "SsEe";
	(void)epoch;
	int k = 0;
	for (int i = 0; i < r->n; i++)
		k += r->trace[i] != '.' && r->trace[i] != 'V';
	if (k < 16)
		r->ev_step[k] = step;
	put(r, code[ev]);
	return (int)ev == r->stop_event ? OCB_EPERM : OCB_OK;
}

static int on_step(void *c, long step, double loss, double lr)
{
	struct rec *r = c;
	cr_assert(lr > 0);
	put(r, '.');
	if (r->nsteps < 64) {
		r->step_at[r->nsteps] = step;
		r->mean[r->nsteps++] = loss;
	}
	return step == r->stop_step ? OCB_EIO : OCB_OK;
}

static int on_eval(void *c, const struct ocb_eval *ev)
{
	struct rec *r = c;
	put(r, 'V');
	if (r->nev < 8)
		r->ev[r->nev++] = *ev;
	return OCB_OK;
}

static void base_cfg(struct ocb_train_cfg *c)
{
	ocb_train_cfg_defaults(c);
	c->lr = 0.1f;
	c->min_lr = 0.01f;
	c->batch = 4;
	c->seed = 3;
}

static int run(const struct fake_spec *sp, const struct ocb_train_cfg *c, struct rec *r,
	       struct ocb_train_result *res, struct fake **keep)
{
	void *st = NULL;
	cr_assert_eq(fake_trainer.create(sp, c, &st), OCB_OK);
	struct ocb_train_cb cb = {r, on_event, on_step, on_eval};
	int rc = ocb_trainer_run(&fake_trainer, st, c, r ? &cb : NULL, res);
	if (keep)
		*keep = st;
	else
		fake_trainer.free(st);
	return rc;
}

static double mean_loss(long from, long to) /* of steps from..to-1, in step order */
{
	double s = 0.0;
	for (long i = from; i < to; i++)
		s += 1.0 / (double)(i + 1);
	return s / (double)(to - from);
}

Test(trainer, epoch_schedule_cadence_events_and_result)
{
	struct fake_spec sp = {.per_epoch = 4, .can_eval = 1, .nan_at = -1};
	struct ocb_train_cfg c;
	base_cfg(&c);
	c.epochs = 3, c.warmup_epochs = 0.5f, c.log_every = 3, c.eval_every = 2;
	struct rec r = {.stop_step = -1, .stop_event = -1};
	struct ocb_train_result res;
	struct fake *f;
	cr_assert_eq(run(&sp, &c, &r, &res, &f), OCB_OK, "%s", ocb_lasterr());

	/* on_step after 3 steps, again across the epoch boundary, and at the last step;
	 * evaluation after epoch 2 (eval_every) and after the last (final) */
	cr_assert_str_eq(r.trace, "S.sS.sEeVS..sEeV");
	long want_at[] = {2, 5, 8, 11};
	double want_mean[] = {mean_loss(0, 3), mean_loss(3, 6), mean_loss(6, 9), mean_loss(9, 12)};
	cr_assert_eq(r.nsteps, 4);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(r.step_at[i], want_at[i]);
		cr_assert_float_eq(r.mean[i], want_mean[i], 1e-15);
	}
	/* events carry the steps done: epoch 1 starts at 0, stops at 4 ... */
	long want_ev[] = {0, 4, 4, 8, 8, 8, 8, 12, 12, 12};
	for (int i = 0; i < 10; i++)
		cr_assert_eq(r.ev_step[i], want_ev[i], "event %d at step %ld", i, r.ev_step[i]);
	cr_assert_eq(r.nev, 2);
	cr_assert(r.ev[0].step == 8 && r.ev[0].epoch == 2 && !r.ev[0].final);
	cr_assert(r.ev[1].step == 12 && r.ev[1].epoch == 3 && r.ev[1].final);
	cr_assert(isnan(r.ev[1].ppl), "the trainer left ppl: NaN");
	cr_assert_eq(f->evals, 2);
	cr_assert_eq(f->finals, 1);

	/* the schedule: warm-up round(0.5 * 4) = 2 steps, cosine over 12 */
	struct ocb_schedule sch = {.base_lr = 0.1f, .min_lr = 0.01f, .warmup_steps = 2,
				   .total_steps = 12};
	for (long s = 0; s < 12; s++)
		cr_assert_eq(f->lr[s], ocb_schedule_lr(&sch, s), "lr of step %ld", s);

	cr_assert_eq(res.steps, 12);
	cr_assert_eq(res.epochs, 3);
	cr_assert_eq(res.samples, 48);
	cr_assert_eq(res.flops, 1200.0);
	cr_assert_eq(res.first_loss, 1.0);
	cr_assert_float_eq(res.final_train_loss, mean_loss(8, 12), 1e-15, "the last epoch");
	cr_assert_eq(res.final_eval.step, 12);
	cr_assert_eq(res.final_eval.loss, f->w);
	cr_assert_eq(res.info.optimizer_bytes, 8);
	cr_assert_eq(res.info.activation_bytes, 16);
	cr_assert(res.wall_time >= res.step_time + res.eval_time - 1e-9);
	fake_trainer.free(f);
}

Test(trainer, step_schedule_periodic_and_final_evaluation)
{
	struct fake_spec sp = {.per_epoch = 0, .can_eval = 1, .nan_at = -1};
	struct ocb_train_cfg c;
	base_cfg(&c);
	c.steps = 10, c.warmup_steps = 3, c.eval_every = 4;
	struct rec r = {.stop_step = -1, .stop_event = -1};
	struct ocb_train_result res;
	cr_assert_eq(run(&sp, &c, &r, &res, NULL), OCB_OK, "%s", ocb_lasterr());
	/* no epoch events; periodic after steps 4 and 8, the final after 10 */
	cr_assert_str_eq(r.trace, "....EeV....EeV..EeV");
	cr_assert_eq(r.nsteps, 10);
	cr_assert_eq(r.mean[3], 0.25, "log_every 1: each step's own loss");
	cr_assert_eq(r.nev, 3);
	cr_assert(r.ev[0].step == 4 && !r.ev[0].final && r.ev[0].epoch == 0);
	cr_assert(r.ev[1].step == 8 && !r.ev[1].final);
	cr_assert(r.ev[2].step == 10 && r.ev[2].final);
	cr_assert_eq(res.epochs, 0);
	cr_assert_float_eq(res.final_train_loss, mean_loss(0, 10), 1e-15);

	/* past 50 steps: the mean of the last 50 */
	c.steps = 60, c.eval_every = 0;
	cr_assert_eq(run(&sp, &c, NULL, &res, NULL), OCB_OK);
	cr_assert_float_eq(res.final_train_loss, mean_loss(10, 60), 1e-15);
}

Test(trainer, no_evaluation_data_no_evaluate)
{
	struct fake_spec sp = {.per_epoch = 2, .can_eval = 0, .nan_at = -1};
	struct ocb_train_cfg c;
	base_cfg(&c);
	c.epochs = 2, c.eval_every = 1;
	struct rec r = {.stop_step = -1, .stop_event = -1};
	struct ocb_train_result res;
	cr_assert_eq(run(&sp, &c, &r, &res, NULL), OCB_OK);
	cr_assert_str_eq(r.trace, "S..sS..s");
	cr_assert(isnan(res.final_eval.loss) && isnan(res.final_eval.accuracy));
}

Test(trainer, divergence_is_a_runtime_error)
{
	struct fake_spec sp = {.per_epoch = 0, .can_eval = 1, .nan_at = 3};
	struct ocb_train_cfg c;
	base_cfg(&c);
	c.steps = 10;
	struct rec r = {.stop_step = -1, .stop_event = -1};
	struct ocb_train_result res;
	struct fake *f;
	cr_assert_eq(run(&sp, &c, &r, &res, &f), OCB_ERUNTIME);
	cr_assert(strstr(ocb_lasterr(), "fake train: loss is nan at step 3 (diverged)"), "%s",
		  ocb_lasterr());
	cr_assert_eq(f->steps, 4);
	cr_assert_eq(f->evals, 0);
	cr_assert_eq(r.nsteps, 3, "no on_step for the diverged step");
	cr_assert_eq(res.steps, 3);
	fake_trainer.free(f);
}

Test(trainer, callback_status_stops_and_is_returned)
{
	struct fake_spec sp = {.per_epoch = 5, .can_eval = 1, .nan_at = -1};
	struct ocb_train_cfg c;
	base_cfg(&c);
	c.epochs = 2;
	struct rec r = {.stop_step = 2, .stop_event = -1};
	struct ocb_train_result res;
	struct fake *f;
	cr_assert_eq(run(&sp, &c, &r, &res, &f), OCB_EIO);
	cr_assert_eq(f->steps, 3);
	fake_trainer.free(f);

	struct rec e = {.stop_step = -1, .stop_event = OCB_TRAIN_EVAL_START};
	c.eval_every = 1;
	cr_assert_eq(run(&sp, &c, &e, &res, &f), OCB_EPERM);
	cr_assert_str_eq(e.trace, "S.....sE");
	cr_assert_eq(f->evals, 0, "stopped before evaluating");
	fake_trainer.free(f);
}

Test(trainer, bad_configurations_refused_before_any_step)
{
	struct fake_spec ep = {.per_epoch = 4, .can_eval = 1, .nan_at = -1};
	struct fake_spec st = {.per_epoch = 0, .can_eval = 1, .nan_at = -1};
	struct ocb_train_cfg c;
	struct ocb_train_result res;
	struct fake *f;
	struct { const struct fake_spec *sp; int epochs; long steps; int log; float lr;
		 const char *msg; } bad[] = {
		{&ep, 2, 10, 1, 0.1f, "not both"},
		{&ep, 0, 0, 1, 0.1f, "not both"},
		{&st, 2, 0, 1, 0.1f, "no epochs"},
		{&ep, 2, 0, 0, 0.1f, "log_every 0"},
		{&ep, 2, 0, 1, 0.0f, "learning-rate"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		base_cfg(&c);
		c.epochs = bad[i].epochs, c.steps = bad[i].steps, c.log_every = bad[i].log;
		c.lr = bad[i].lr;
		cr_assert_eq(run(bad[i].sp, &c, NULL, &res, &f), OCB_EINVAL, "case %zu", i);
		cr_assert(strstr(ocb_lasterr(), bad[i].msg), "case %zu: %s", i, ocb_lasterr());
		cr_assert_eq(f->steps, 0);
		fake_trainer.free(f);
	}
}

Test(trainer, save_load_round_trip_through_the_ops)
{
	char path[128];
	int fd = mkstemp(cli_tmpname(path, sizeof path, "ocb_trainer"));
	cr_assert(fd >= 0);
	close(fd);
	struct fake_spec sp = {.per_epoch = 3, .can_eval = 1, .nan_at = -1};
	struct ocb_train_cfg c;
	base_cfg(&c);
	c.epochs = 2;
	struct ocb_train_result res;
	struct fake *a, *b;
	nfree = 0;
	cr_assert_eq(run(&sp, &c, NULL, &res, &a), OCB_OK);
	cr_assert_eq(fake_trainer.save(a, path), OCB_OK);
	c.seed = 99;
	void *st = NULL;
	cr_assert_eq(fake_trainer.create(&sp, &c, &st), OCB_OK);
	b = st;
	struct ocb_eval ea, eb;
	cr_assert_eq(fake_trainer.evaluate(b, 1, &eb), OCB_OK);
	cr_assert_neq(eb.loss, res.final_eval.loss, "another seed, another model");
	cr_assert_eq(fake_trainer.load(b, path), OCB_OK);
	cr_assert_eq(fake_trainer.evaluate(a, 1, &ea), OCB_OK);
	cr_assert_eq(fake_trainer.evaluate(b, 1, &eb), OCB_OK);
	cr_assert_eq(ea.loss, eb.loss);
	fake_trainer.free(a);
	fake_trainer.free(b);
	fake_trainer.free(NULL);
	cr_assert_eq(nfree, 2);
	unlink(path);
}
