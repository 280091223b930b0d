/* Tests of the PTQ workload modules on a tiny random MLP and synthetic images (no
 * dataset): workloads/ptq_mlp + calibrate (H = 2 X^T X, the diagonal Fisher, output
 * norms against direct computation), ptq_sweep (configurations, filter, one run),
 * mixed_plan_run (budget, plan no worse than uniform, plan file) and ptq_checks. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../workloads/calibrate.h"
#include "../workloads/data_synth.h"
#include "../workloads/mixed_plan_run.h"
#include "../workloads/ptq_checks.h"
#include "../workloads/ptq_mlp.h"
#include "../workloads/ptq_sweep.h"
#include "cli_util.h"

#define NCAL 64

static char dir[128];
static struct ocb_idx_set tr, te;
static struct ocb_mlp mlp;
static struct ptq_mlp adapter;
static struct ptq_model pm;

static void setup(void)
{
	struct ocb_mlp_cfg cfg = {.nlayers = 3, .dims = {784, 24, 16, 10}};
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb-ptq")));
	cr_assert_eq(ocb_synth_fmnist_write(dir, 300, 100, 5), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_fmnist_load(dir, 1, &tr), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_fmnist_load(dir, 0, &te), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_mlp_init(&mlp, &cfg, PTQ_MLP_BATCH), OCB_OK, "%s", ocb_lasterr());
	ocb_mlp_init_weights(&mlp, 11);
	cr_assert_eq(ptq_mlp_init(&adapter, &mlp, &tr, &te, NCAL, 3, &pm), OCB_OK, "%s",
		     ocb_lasterr());
	cr_assert_eq(ptq_calibrate(&pm), OCB_OK, "%s", ocb_lasterr());
}

static void teardown(void)
{
	char cmd[256];
	ptq_mlp_release(&adapter, &pm);
	ocb_mlp_release(&mlp);
	ocb_idx_release(&tr);
	ocb_idx_release(&te);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(ptq, .init = setup, .fini = teardown);

static int close_rel(double a, double b, double rtol)
{
	return fabs(a - b) <= rtol * (fabs(b) + 1e-12);
}

Test(ptq, model_layout)
{
	cr_assert_eq(pm.nlin, 3);
	cr_expect_eq(pm.nweights, 784 * 24 + 24 * 16 + 16 * 10);
	cr_expect_eq(pm.calib_rows, NCAL);
	cr_expect_str_eq(pm.lin[2].name, "fc2");
	for (int i = 0; i < pm.nlin; i++)
		cr_expect_eq(memcmp(pm.lin[i].w0, pm.lin[i].lin->w,
				    (size_t)pm.lin[i].lin->out * pm.lin[i].lin->in * sizeof(float)), 0);
}

/* H of layer 0 is 2 X^T X of the calibration images; of layer 1, of the ReLU outputs. */
Test(ptq, hessian_is_2xtx)
{
	int dim = 784;
	const float *x = adapter.cx;
	for (int a = 0; a < dim; a += 97)
		for (int b = 0; b < dim; b += 61) {
			double h = 0;
			for (int r = 0; r < NCAL; r++)
				h += 2.0 * x[(size_t)r * dim + a] * x[(size_t)r * dim + b];
			cr_expect(close_rel(pm.lin[0].h[(size_t)a * dim + b], h, 1e-4),
				  "H0[%d][%d] %g, want %g", a, b, pm.lin[0].h[(size_t)a * dim + b], h);
		}
	ocb_mlp_forward(&mlp, x, NCAL);
	const float *a1 = mlp.act[1];
	for (int a = 0; a < 24; a++)
		for (int b = 0; b < 24; b++) {
			double h = 0;
			for (int r = 0; r < NCAL; r++)
				h += 2.0 * a1[(size_t)r * 24 + a] * a1[(size_t)r * 24 + b];
			cr_expect(close_rel(pm.lin[1].h[a * 24 + b], h, 1e-4), "H1[%d][%d]", a, b);
		}
}

/* fisher[j] of every layer = sum over rows of (dLoss/dy_j)^2 with the batch-mean loss:
 * each row's bias gradient (ocb_mlp_grad on that row alone) divided by the batch size. */
Test(ptq, fisher_is_sum_of_squared_output_grads)
{
	double want[3][24] = {{0}};
	for (int r = 0; r < NCAL; r++) {
		ocb_mlp_grad(&mlp, adapter.cx + (size_t)r * 784, adapter.cy + r, 1);
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < mlp.layer[i].out; j++) {
				double g = mlp.layer[i].gb[j] / (double)NCAL;
				want[i][j] += g * g;
			}
	}
	double total = 0;
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < mlp.layer[i].out; j++) {
			cr_expect(close_rel(pm.lin[i].fisher[j], want[i][j], 1e-3) ||
					  fabs(pm.lin[i].fisher[j] - want[i][j]) < 1e-12,
				  "F%d[%d] %g, want %g", i, j, pm.lin[i].fisher[j], want[i][j]);
			total += want[i][j];
		}
	cr_expect(total > 0);
}

/* out_norm = ||X W^T||^2 over the calibration rows, layer 0 directly. */
Test(ptq, out_norm_is_output_energy)
{
	const struct ocb_linear *l = pm.lin[0].lin;
	double e = 0;
	for (int r = 0; r < NCAL; r++)
		for (int o = 0; o < l->out; o++) {
			double y = 0;
			for (int k = 0; k < l->in; k++)
				y += (double)adapter.cx[(size_t)r * l->in + k] * pm.lin[0].w0[(size_t)o * l->in + k];
			e += y * y;
		}
	cr_expect(close_rel(pm.lin[0].out_norm, e, 1e-3), "%g vs %g", pm.lin[0].out_norm, e);
}

Test(ptq, confs_quick_full_and_filter)
{
	struct ptq_conf c[PTQ_MAXCONF];
	char label[48];
	int n = ptq_confs("mlp", 1, "", c);
	cr_assert_eq(n, 6);
	cr_expect_str_eq(c[0].id.method, "fp32");
	cr_expect_str_eq(c[4].id.method, "q8_0");
	cr_expect_str_eq(c[4].id.rounding, "fp16-aware");
	cr_expect(c[5].mixed);
	int full = ptq_confs("lm", 0, "", c);
	cr_expect(full > 30 && full < PTQ_MAXCONF, "%d", full);
	for (int i = 0; i < full; i++) {
		cr_expect_str_eq(c[i].id.model, "lm");
		for (int j = 0; j < i; j++)
			cr_expect(memcmp(&c[i].id, &c[j].id, sizeof c[i].id) != 0, "dup %d %d", i, j);
	}
	/* a method, and a method:bits:group, with fp32 always kept */
	n = ptq_confs("mlp", 0, "q4_0/fp16-aware,rtn:2:pc", c);
	cr_assert_eq(n, 3);
	ocb_quant_id_label(&c[1].id, label, sizeof label);
	cr_expect_str_eq(label, "rtn");
	cr_expect_str_eq(c[1].id.bits, "2");
	cr_expect_str_eq(c[1].id.group, "pc");
	ocb_quant_id_label(&c[2].id, label, sizeof label);
	cr_expect_str_eq(label, "q4_0/fp16-aware");
}

Test(ptq, run_uniform_confs)
{
	struct ptq_conf c[PTQ_MAXCONF];
	struct ptq_outcome fp, r8, r3, g3;
	struct ptq_mixed_opts mo = {PTQ_ERR_FISHER, 0, 0, NULL};
	int n = ptq_confs("mlp", 0, "rtn:8:128,rtn:3:128,gptq:3:128", c);
	cr_assert_eq(n, 4);
	cr_assert_eq(ptq_run_conf(&pm, &c[0], &mo, NULL, &fp), OCB_OK, "%s", ocb_lasterr());
	cr_expect_eq(fp.bpw, 32.0);
	cr_expect_eq(fp.weight_rel_err, 0.0);
	cr_expect_eq(fp.output_rel_err, 0.0);
	cr_expect(fp.metric >= 0 && fp.metric <= 1);
	cr_expect(isnan(fp.pred));
	cr_expect_eq(fp.model_bytes, 4.0 * (double)mlp.nparams);
	cr_assert_eq(ptq_run_conf(&pm, &c[1], &mo, NULL, &r8), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ptq_run_conf(&pm, &c[2], &mo, NULL, &r3), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ptq_run_conf(&pm, &c[3], &mo, NULL, &g3), OCB_OK, "%s", ocb_lasterr());
	int64_t bits = 0;
	for (int i = 0; i < pm.nlin; i++)
		bits += quant_apply_cost_bits(&c[2].m, pm.lin[i].lin->out, pm.lin[i].lin->in);
	cr_expect_eq(r3.bits, bits);
	cr_expect(fabs(r3.bpw - (double)bits / (double)pm.nweights) < 1e-12);
	cr_expect(r8.weight_rel_err > 0 && r8.weight_rel_err < r3.weight_rel_err);
	/* GPTQ minimises the calibration output error RTN ignores */
	cr_expect(g3.output_rel_err < r3.output_rel_err, "gptq %g rtn %g", g3.output_rel_err,
		  r3.output_rel_err);
	ptq_model_restore(&pm);
	for (int i = 0; i < pm.nlin; i++)
		cr_expect_eq(memcmp(pm.lin[i].w0, pm.lin[i].lin->w,
				    (size_t)pm.lin[i].lin->out * pm.lin[i].lin->in * sizeof(float)), 0);
}

static void run_mixed(enum ptq_plan_err e, int fuse)
{
	struct quant_method base = {.kind = QA_RTN, .q = {3, 128, 0}};
	struct ptq_mixed_opts mo = {e, fuse, 0, NULL};
	char path[256];
	int64_t bits = 0, budget = 0;
	double pred = NAN, uni = NAN;
	snprintf(path, sizeof path, "%s/plan.json", dir);
	cr_assert_eq(ptq_mixed_run(&pm, &base, &mo, path, &bits, &pred, &uni), OCB_OK, "%s",
		     ocb_lasterr());
	for (int i = 0; i < pm.nlin; i++)
		budget += quant_apply_cost_bits(&base, pm.lin[i].lin->out, pm.lin[i].lin->in);
	cr_expect(bits <= budget, "plan %lld bits > uniform %lld", (long long)bits,
		  (long long)budget);
	cr_expect(pred <= uni * (1 + 1e-12), "plan error %g > uniform %g", pred, uni);
	cJSON *j = NULL;
	cr_assert_eq(ocb_json_read_file(path, &j), OCB_OK, "%s", ocb_lasterr());
	cJSON_Delete(j);
	/* every installed layer is one of its candidates */
	for (int i = 0; i < pm.nlin; i++) {
		const struct ocb_linear *l = pm.lin[i].lin;
		size_t nw = (size_t)l->out * l->in;
		float *q = malloc(nw * sizeof *q);
		int hit = 0;
		for (int k = 0; k < PTQ_MAXCAND && !hit; k++) {
			struct quant_method m = base;
			m.q.bits = ptq_cand_bits[k];
			cr_assert_eq(quant_apply(&m, pm.lin[i].w0, l->out, l->in, pm.lin[i].h, q, NULL,
						 NULL), OCB_OK);
			hit = memcmp(q, l->w, nw * sizeof *q) == 0;
		}
		free(q);
		cr_expect(hit, "layer %d is no candidate", i);
	}
	ptq_model_restore(&pm);
}

Test(ptq, mixed_fisher_meets_budget) { run_mixed(PTQ_ERR_FISHER, 0); }
Test(ptq, mixed_output_meets_budget) { run_mixed(PTQ_ERR_OUTPUT, 0); }
Test(ptq, mixed_probe_meets_budget) { run_mixed(PTQ_ERR_PROBE, 0); }

Test(ptq, mixed_refuses_non_candidate_budget)
{
	struct quant_method base = {.kind = QA_RTN, .q = {5, 128, 0}};
	struct ptq_mixed_opts mo = {PTQ_ERR_OUTPUT, 0, 0, NULL};
	int64_t bits;
	double p, u;
	cr_expect_eq(ptq_mixed_run(&pm, &base, &mo, "/nonexistent/p.json", &bits, &p, &u),
		     OCB_EINVAL);
	enum ptq_plan_err e;
	cr_expect_eq(ptq_plan_err_parse("probe", &e), OCB_OK);
	cr_expect_eq(e, PTQ_ERR_PROBE);
	cr_expect_eq(ptq_plan_err_parse("hessian", &e), OCB_EINVAL);
}

/* Signs and units of the acceptance checks, on made-up metrics of the quick sweep. */
Test(ptq, checks_signs)
{
	struct ptq_conf c[PTQ_MAXCONF];
	struct ptq_check k[PTQ_MAXCHECK];
	int n = ptq_confs("mlp", 1, "", c); /* fp32 rtn gptq q8_0 q8_0/fp16 mixed_gptq */
	double acc[6] = {0.85, 0.80, 0.83, 0.849, 0.85, 0.835};
	int nk = ptq_checks("mlp", 0, c, acc, n, k);
	cr_assert_eq(nk, 3);
	cr_expect_str_eq(k[0].key, "mlp_gptq_gain_b3_g128");
	cr_expect(fabs(k[0].value - 3.0) < 1e-9, "%g", k[0].value);
	cr_expect_str_eq(k[0].unit, "points");
	cr_expect_str_eq(k[1].key, "mlp_q8_0_margin_points");
	cr_expect(fabs(k[1].value - 0.1) < 1e-9, "%g", k[1].value);
	cr_expect_str_eq(k[2].key, "mlp_mixed_gain_gptq");
	cr_expect(fabs(k[2].value - 0.5) < 1e-9, "%g", k[2].value);
	n = ptq_confs("lm", 1, "", c);
	double ppl[6] = {10, 14, 12, 10.1, 10.1, 11};
	nk = ptq_checks("lm", 1, c, ppl, n, k);
	cr_assert_eq(nk, 2); /* no q8_0 margin for the LM */
	cr_expect_str_eq(k[0].key, "lm_gptq_gain_b3_g128");
	cr_expect(fabs(k[0].value - 2.0) < 1e-9, "%g", k[0].value);
	cr_expect_str_eq(k[1].unit, "ppl");
	cr_expect(fabs(k[1].value - 1.0) < 1e-9, "%g", k[1].value);
}
