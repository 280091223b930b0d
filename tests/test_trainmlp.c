/* trainmlp: training on the synthetic 10-class set through the real IDX loader learns
 * (accuracy far above chance); the same seed gives a bit-identical loss sequence; the
 * callbacks arrive in MLPerf order; bad configurations are refused. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../reference/data_synth.h"
#include "../reference/train_mlp.h"

static char dir[64];
static struct ocb_idx_set tr, te;

static void setup(void)
{
	strcpy(dir, "/tmp/ocb-trainmlp-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(ocb_synth_fmnist_write(dir, 2000, 400, 21), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_fmnist_load(dir, 1, &tr), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_fmnist_load(dir, 0, &te), OCB_OK, "%s", ocb_lasterr());
}

static void teardown(void)
{
	char cmd[128];
	ocb_idx_release(&tr);
	ocb_idx_release(&te);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(trainmlp, .init = setup, .fini = teardown);

struct rec {
	double loss[256];
	long step[256];
	int nloss;
	char events[256];
	int nev;
	double acc[8];
	int nacc;
	int stop_at_step; /* >= 0: on_step returns an error there */
};

static int on_step(void *c, long step, double loss, double lr)
{
	struct rec *r = c;
	cr_assert(lr > 0);
	if (r->nloss < 256) {
		r->loss[r->nloss] = loss;
		r->step[r->nloss++] = step;
	}
	if (r->stop_at_step >= 0 && step >= r->stop_at_step)
		return ocb_seterr(OCB_ERUNTIME, "stopped by the test");
	return 0;
}

static int on_event(void *c, enum ocb_train_event ev, int epoch)
{
	struct rec *r = c;
	static const char code[] = "SsEe"; /* epoch start/stop, eval start/stop */
	if (r->nev < 255)
		r->events[r->nev++] = code[ev];
	cr_assert(epoch >= 1);
	return 0;
}

static int on_eval(void *c, int epoch, double acc, double loss)
{
	struct rec *r = c;
	cr_assert(isfinite(loss));
	if (r->nacc < 8)
		r->acc[r->nacc++] = acc;
	cr_assert_eq(epoch, r->nacc);
	return 0;
}

static int train_small(uint64_t seed, struct rec *r, struct ocb_mlp_train_result *res)
{
	struct ocb_mlp_cfg mc = {.nlayers = 2, .dims = {784, 64, 10}};
	struct ocb_mlp m;
	struct ocb_mlp_train_cfg c;
	cr_assert_eq(ocb_mlp_init(&m, &mc, 50), OCB_OK);
	ocb_mlp_init_weights(&m, seed);
	ocb_mlp_train_defaults(&c);
	c.epochs = 2;
	c.batch = 50;
	c.seed = seed;
	c.threads = 2;
	c.log_every = 1;
	c.warmup_epochs = 0.25f;
	struct ocb_train_cb cb = {.ctx = r, .on_step = on_step, .on_event = on_event,
				  .on_eval = on_eval};
	int rc = ocb_mlp_train(&m, &tr, &te, &c, &cb, res);
	ocb_mlp_release(&m);
	return rc;
}

Test(trainmlp, learns_synthetic_classes)
{
	struct rec r = {.stop_at_step = -1};
	struct ocb_mlp_train_result res;
	cr_assert_eq(train_small(1, &r, &res), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(res.steps, 80); /* 2 epochs x 2000/50 */
	cr_assert_eq(res.samples, 4000);
	cr_assert(res.final_accuracy > 0.9, "accuracy %g (chance 0.1)", res.final_accuracy);
	cr_assert(r.loss[r.nloss - 1] < 0.5 * r.loss[0], "loss %g -> %g", r.loss[0],
		  r.loss[r.nloss - 1]);
	cr_assert_eq(r.nloss, 80);
	cr_assert_eq(r.step[79], 79);
	cr_assert_eq(r.nacc, 2);
	r.events[r.nev] = '\0';
	cr_assert_str_eq(r.events, "SsEeSsEe");
	cr_assert(res.step_flops > 0 && res.gflops > 0 && res.samples_per_s > 0);
	cr_assert_eq(res.optimizer_bytes, (size_t)2 * 4 * (784 * 64 + 64 + 64 * 10 + 16));
}

Test(trainmlp, same_seed_same_losses_bitwise)
{
	struct rec a = {.stop_at_step = -1}, b = {.stop_at_step = -1}, c = {.stop_at_step = -1};
	struct ocb_mlp_train_result ra, rb, rc;
	cr_assert_eq(train_small(7, &a, &ra), OCB_OK);
	cr_assert_eq(train_small(7, &b, &rb), OCB_OK);
	cr_assert_eq(a.nloss, b.nloss);
	cr_assert_eq(memcmp(a.loss, b.loss, sizeof(double) * a.nloss), 0,
		     "same seed, same threads: identical loss sequence");
	cr_assert_eq(memcmp(a.acc, b.acc, sizeof(double) * a.nacc), 0);
	cr_assert_eq(ra.final_accuracy, rb.final_accuracy);
	cr_assert_eq(train_small(8, &c, &rc), OCB_OK);
	cr_assert_neq(memcmp(a.loss, c.loss, sizeof(double) * a.nloss), 0,
		      "another seed, another run");
}

Test(trainmlp, callback_error_stops_training)
{
	struct rec r = {.stop_at_step = 5};
	struct ocb_mlp_train_result res;
	cr_assert_eq(train_small(1, &r, &res), OCB_ERUNTIME);
	cr_assert_eq(r.nloss, 6);
	cr_assert_str_eq(ocb_lasterr(), "stopped by the test");
}

Test(trainmlp, bad_config_refused)
{
	struct ocb_mlp_cfg mc = {.nlayers = 2, .dims = {784, 16, 10}};
	struct ocb_mlp m;
	struct ocb_mlp_train_cfg c;
	struct ocb_mlp_train_result res;
	cr_assert_eq(ocb_mlp_init(&m, &mc, 32), OCB_OK);
	ocb_mlp_train_defaults(&c);
	c.batch = 64; /* > max_batch */
	cr_assert_eq(ocb_mlp_train(&m, &tr, &te, &c, NULL, &res), OCB_EINVAL);
	cr_assert(strstr(ocb_lasterr(), "max batch"));
	c.batch = 32;
	c.epochs = 0;
	cr_assert_eq(ocb_mlp_train(&m, &tr, &te, &c, NULL, &res), OCB_EINVAL);
	ocb_mlp_release(&m);
	struct ocb_mlp_cfg mc2 = {.nlayers = 2, .dims = {100, 16, 10}};
	cr_assert_eq(ocb_mlp_init(&m, &mc2, 32), OCB_OK);
	ocb_mlp_train_defaults(&c);
	c.batch = 32;
	cr_assert_eq(ocb_mlp_train(&m, &tr, &te, &c, NULL, &res), OCB_EINVAL);
	cr_assert(strstr(ocb_lasterr(), "784-dim"));
	ocb_mlp_release(&m);
}

Test(trainmlp, evaluate_counts)
{
	/* an all-zero model predicts class 0 everywhere: accuracy = share of class 0 */
	struct ocb_mlp_cfg mc = {.nlayers = 1, .dims = {784, 10}};
	struct ocb_mlp m;
	cr_assert_eq(ocb_mlp_init(&m, &mc, 64), OCB_OK);
	double acc, loss;
	cr_assert_eq(ocb_mlp_evaluate(&m, &te, &acc, &loss), OCB_OK);
	int zeros = 0;
	for (int i = 0; i < te.n; i++)
		zeros += te.labels[i] == 0;
	cr_assert_float_eq(acc, (double)zeros / te.n, 1e-12);
	cr_assert_float_eq(loss, log(10.0), 1e-6);
	ocb_mlp_release(&m);
}
