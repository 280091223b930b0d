/* Tests of workloads/ptq_lm on a tiny random LM and synthetic text (no dataset): the
 * linears and their fused groups, the calibration windows, the head's Fisher against the
 * model's own logit gradients, and an fp32 / 8-bit run of the sweep. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../workloads/calibrate.h"
#include "../workloads/data_synth.h"
#include "../workloads/ptq_lm.h"
#include "../workloads/ptq_sweep.h"

static unsigned char *buf;
static struct ocb_text text;
static struct lm_model *lm;
static struct ptq_lm adapter;
static struct ptq_model pm;
static const struct ptq_lm_proto proto = {.calib_windows = 11, .window = 8, .stride = 4,
					  .eval_windows = 0, .eval_batch = 4};

static void setup(void)
{
	size_t len;
	struct lm_config c;
	cr_assert_eq(ocb_synth_text(9, 60, &buf, &len), OCB_OK);
	text.train = buf;
	text.ntrain = len * 3 / 4;
	text.val = buf + text.ntrain;
	text.nval = len - text.ntrain;
	lm_config_default(&c);
	c.d_model = 16, c.n_layers = 2, c.n_heads = 2, c.ctx = 8, c.ffn = lm_ffn_width(16);
	cr_assert_eq(lm_create(&c, 1, 4, &lm), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ptq_lm_init(&adapter, lm, &text, &proto, 6, &pm), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ptq_calibrate(&pm), OCB_OK, "%s", ocb_lasterr());
}

static void teardown(void)
{
	ptq_lm_release(&adapter, &pm);
	lm_free(lm);
	free(buf);
}

TestSuite(ptq_lm, .init = setup, .fini = teardown);

Test(ptq_lm, linears_and_fused_groups)
{
	cr_assert_eq(pm.nlin, lm_nlinears(lm));
	cr_expect_eq(pm.nlin, 2 * LM_LIN_PER_LAYER + 1);
	const int want[] = {0, 0, 0, -1, 1, 1, -1, 2, 2, 2, -1, 3, 3, -1, -1};
	for (int i = 0; i < pm.nlin; i++)
		cr_expect_eq(pm.lin[i].fuse, want[i], "linear %d (%s)", i, pm.lin[i].name);
	cr_expect_eq(pm.calib_rows, 11 * 8);
	cr_expect_eq(pm.nparams, lm->nparams);
}

Test(ptq_lm, calibration_windows_are_training_text)
{
	for (int w = 0; w < proto.calib_windows; w++) {
		const uint8_t *in = adapter.cin + (size_t)w * proto.window;
		const unsigned char *hit = memmem(text.train, text.ntrain, in, proto.window);
		cr_assert_not_null(hit, "window %d not in the training text", w);
		for (int t = 0; t < proto.window; t++)
			cr_expect_eq(adapter.ctgt[(size_t)w * proto.window + t], hit[t + 1]);
	}
}

/* The head's fisher[j] = sum over scored positions of (dLoss/dlogit_j)^2, the loss the
 * per-batch mean: the model's own dlogits after lm_backward, batch by batch of 8. */
Test(ptq_lm, head_fisher_matches_logit_gradients)
{
	const int T = proto.window, V = lm->cfg.vocab;
	double *want = calloc((size_t)V, sizeof *want);
	for (int w = 0; w < proto.calib_windows; w += 8) {
		int nb = proto.calib_windows - w < 8 ? proto.calib_windows - w : 8;
		cr_assert_eq(lm_forward(lm, adapter.cin + (size_t)w * T, adapter.ctgt + (size_t)w * T,
					nb, T, NULL, NULL), OCB_OK);
		cr_assert_eq(lm_backward(lm), OCB_OK);
		for (size_t r = 0; r < (size_t)nb * T; r++)
			for (int j = 0; j < V; j++)
				want[j] += (double)lm->logits[r * V + j] * lm->logits[r * V + j];
	}
	const double *f = pm.lin[pm.nlin - 1].fisher;
	double tot = 0;
	for (int j = 0; j < V; j++) {
		cr_expect(fabs(f[j] - want[j]) <= 1e-4 * want[j] + 1e-15, "F[%d] %g want %g", j, f[j],
			  want[j]);
		tot += want[j];
	}
	cr_expect(tot > 0);
	free(want);
	for (int i = 0; i < pm.nlin; i++)
		cr_expect_null(pm.lin[i].lin->impl, "capture impl left on linear %d", i);
}

Test(ptq_lm, fp32_and_8bit_runs)
{
	struct ptq_conf c[PTQ_MAXCONF];
	struct ptq_outcome fp, r8;
	struct ptq_mixed_opts mo = {PTQ_ERR_FISHER, 1};
	int n = ptq_confs("lm", 0, "rtn:8:128", c);
	cr_assert_eq(n, 2);
	cr_assert_eq(ptq_run_conf(&pm, &c[0], &mo, NULL, &fp), OCB_OK, "%s", ocb_lasterr());
	double loss, ppl;
	long ns;
	cr_assert_eq(lm_eval(lm, text.val, text.nval, 8, 4, 4, 0, &loss, &ppl, &ns), OCB_OK);
	cr_expect_eq(fp.metric, ppl);
	cr_expect_eq(fp.loss, loss);
	cr_assert_eq(ptq_run_conf(&pm, &c[1], &mo, NULL, &r8), OCB_OK, "%s", ocb_lasterr());
	int64_t bits = 0;
	for (int i = 0; i < pm.nlin; i++)
		bits += quant_apply_cost_bits(&c[1].m, pm.lin[i].lin->out, pm.lin[i].lin->in);
	cr_expect_eq(r8.bits, bits);
	cr_expect(r8.bpw > 8, "%g", r8.bpw);
	cr_expect(fabs(r8.metric - fp.metric) < 0.01 * fp.metric, "%g vs %g", r8.metric, fp.metric);
	cr_expect(r8.output_rel_err > 0 && r8.output_rel_err < 1e-3, "%g", r8.output_rel_err);
	ptq_model_restore(&pm);
}

Test(ptq_lm, refuses_bad_protocol)
{
	struct ptq_lm a;
	struct ptq_model m;
	struct ptq_lm_proto p = proto;
	p.window = 9; /* > ctx 8 */
	cr_expect_eq(ptq_lm_init(&a, lm, &text, &p, 1, &m), OCB_EINVAL);
	p = proto;
	p.stride = 9;
	cr_expect_eq(ptq_lm_init(&a, lm, &text, &p, 1, &m), OCB_EINVAL);
}
