/* mlp: finite-difference gradients of every layer (linear, ReLU, softmax cross-entropy)
 * through the whole model, the softmax-CE on its own, the FLOP model, checkpoint
 * round trip through ocb_mlp_save/load. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../workloads/checkpoint.h"
#include "../workloads/model_mlp.h"
#include "cli_util.h"

static double loss_at(struct ocb_mlp *m, const float *x, const int *y, int n)
{
	const float *z = ocb_mlp_forward(m, x, n);
	return ocb_softmax_xent(z, y, n, m->cfg.dims[m->cfg.nlayers], m->probs, NULL);
}

static int close_enough(double fd, double an)
{
	/* fp32 forward, eps 1e-3: relative 1e-2 plus an absolute floor for the FD noise */
	return fabs(fd - an) <= 1e-2 * fmax(fabs(fd), fabs(an)) + 1e-3;
}

Test(mlp, finite_difference_every_parameter)
{
	struct ocb_mlp_cfg cfg = {.nlayers = 3, .dims = {7, 6, 5, 4}};
	struct ocb_mlp m;
	enum { N = 5 };
	cr_assert_eq(ocb_mlp_init(&m, &cfg, N), OCB_OK);
	ocb_mlp_init_weights(&m, 11);
	struct ocb_rng r;
	ocb_rng_seed(&r, 12);
	/* small positive biases keep most ReLUs away from their kink */
	for (int i = 0; i < cfg.nlayers; i++)
		for (int j = 0; j < cfg.dims[i + 1]; j++)
			m.layer[i].b[j] = 0.1f * ocb_rng_uniformf(&r);
	float x[N * 7];
	int y[N];
	for (int i = 0; i < N * 7; i++)
		x[i] = 2.0f * ocb_rng_uniformf(&r) - 1.0f;
	for (int i = 0; i < N; i++)
		y[i] = (int)ocb_rng_below(&r, 4);
	double loss = ocb_mlp_grad(&m, x, y, N);
	cr_assert(fabs(loss - loss_at(&m, x, y, N)) < 1e-6);
	float *g = malloc(m.nparams * sizeof(float));
	memcpy(g, m.grads, m.nparams * sizeof(float));
	const float eps = 1e-3f;
	int checked = 0, bad = 0;
	for (int li = 0; li < cfg.nlayers; li++) {
		size_t nw = (size_t)cfg.dims[li] * cfg.dims[li + 1];
		size_t offs[2] = {m.w_off[li], m.b_off[li]}, lens[2] = {nw, (size_t)cfg.dims[li + 1]};
		for (int part = 0; part < 2; part++)
			for (size_t k = 0; k < lens[part]; k++) {
				float *pp = &m.params[offs[part] + k];
				float keep = *pp;
				*pp = keep + eps;
				double lp = loss_at(&m, x, y, N);
				*pp = keep - eps;
				double lm = loss_at(&m, x, y, N);
				*pp = keep;
				double fd = (lp - lm) / (2.0 * eps), an = g[offs[part] + k];
				checked++;
				if (!close_enough(fd, an)) {
					bad++;
					cr_log_warn("layer %d %s[%zu]: fd %g analytic %g", li,
						    part ? "b" : "W", k, fd, an);
				}
			}
	}
	cr_assert_eq(checked, 7 * 6 + 6 + 6 * 5 + 5 + 5 * 4 + 4);
	cr_assert_eq(bad, 0, "%d of %d gradients disagree with finite differences", bad, checked);
	/* the gradient block is the same layout as params: gw/gb views point into it */
	cr_assert_eq(m.layer[1].gw, m.grads + m.w_off[1]);
	free(g);
	ocb_mlp_release(&m);
}

Test(mlp, softmax_xent_gradient_and_stability)
{
	enum { N = 3, K = 5 };
	float z[N * K] = {1, 2, 3, 4, 5, -1, 0, 1, 0, -1, 1000, 0, -1000, 3, 2};
	int y[N] = {4, 0, 0};
	float p[N * K], d[N * K];
	double l = ocb_softmax_xent(z, y, N, K, p, d);
	cr_assert(isfinite(l), "no overflow on logits of 1000");
	for (int i = 0; i < N; i++) {
		double s = 0;
		for (int j = 0; j < K; j++)
			s += p[i * K + j];
		cr_assert(fabs(s - 1.0) < 1e-6);
	}
	/* row 2: y = 0 has logit 1000, loss ~ 0 */
	const float eps = 1e-3f;
	for (int i = 0; i < N * K; i++) {
		if (i >= 2 * K)
			break; /* row 2's softmax is saturated: FD in fp32 means nothing there */
		float keep = z[i];
		z[i] = keep + eps;
		double lp = ocb_softmax_xent(z, y, N, K, p, NULL);
		z[i] = keep - eps;
		double lm = ocb_softmax_xent(z, y, N, K, p, NULL);
		z[i] = keep;
		double fd = (lp - lm) / (2 * eps);
		cr_assert(close_enough(fd, d[i]), "dz[%d]: fd %g analytic %g", i, fd, d[i]);
	}
	/* known value: uniform logits -> loss ln K */
	float u[K] = {0};
	int y0 = 2;
	cr_assert_float_eq(ocb_softmax_xent(u, &y0, 1, K, p, NULL), log(K), 1e-6);
}

Test(mlp, step_flops_and_bytes)
{
	struct ocb_mlp_cfg cfg;
	ocb_mlp_default_cfg(&cfg);
	struct ocb_mlp m;
	cr_assert_eq(ocb_mlp_init(&m, &cfg, 4), OCB_OK);
	double n = 256;
	/* fwd: 2 n in out + n out per layer; bwd: gW 2 n in out + gb n out, dx for layers 2,3 */
	double want = 0;
	int d[4] = {784, 512, 256, 10};
	for (int i = 0; i < 3; i++)
		want += 2 * n * d[i] * d[i + 1] + n * d[i + 1] + 2 * n * d[i] * d[i + 1] +
			n * d[i + 1] + (i ? 2 * n * d[i] * d[i + 1] : 0);
	cr_assert_float_eq(ocb_mlp_step_flops(&m, 256), want, 1);
	size_t params = 784 * 512 + 512 + 512 * 256 + 256 + 256 * 10 + 10;
	cr_assert_eq(ocb_mlp_weight_bytes(&m), params * 4);
	cr_assert(ocb_mlp_grad_bytes(&m) >= params * 4);
	ocb_mlp_release(&m);
}

Test(mlp, save_load_round_trip)
{
	char dir[128], path[256];
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb-mlp")));
	snprintf(path, sizeof path, "%s/m.ckpt", dir);
	struct ocb_mlp_cfg cfg = {.nlayers = 2, .dims = {9, 8, 3}};
	struct ocb_mlp a, b;
	cr_assert_eq(ocb_mlp_init(&a, &cfg, 2), OCB_OK);
	ocb_mlp_init_weights(&a, 5);
	a.layer[1].b[2] = 0.25f;
	cr_assert_eq(ocb_mlp_save(&a, path), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(ocb_mlp_load(path, 4, &b), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(b.cfg.nlayers, 2);
	cr_assert_eq(b.cfg.dims[1], 8);
	cr_assert_eq(b.max_batch, 4);
	cr_assert_eq(memcmp(a.params, b.params, a.nparams * 4), 0, "bit-exact weights");
	float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
	int pa, pb;
	ocb_mlp_predict(&a, x, 1, &pa);
	ocb_mlp_predict(&b, x, 1, &pb);
	cr_assert_eq(pa, pb);
	ocb_mlp_release(&b);
	/* a checkpoint of another kind is refused */
	float t1[2] = {0};
	struct ocb_ckpt_tensor t = {.name = "tok", .dtype = OCB_DT_F32, .ndim = 1, .shape = {2},
				    .data = t1};
	cr_assert_eq(ocb_ckpt_save(path, "lm", NULL, &t, 1), OCB_OK);
	cr_assert_eq(ocb_mlp_load(path, 4, &b), OCB_EFORMAT);
	cr_assert(strstr(ocb_lasterr(), "model kind 'lm', expected 'mlp'"), "%s", ocb_lasterr());
	cr_assert_null(b.params);
	unlink(path);
	rmdir(dir);
	ocb_mlp_release(&a);
}

Test(mlp, bad_config_refused)
{
	cJSON *j = cJSON_Parse("{\"dims\":[784]}");
	struct ocb_mlp_cfg cfg;
	cr_assert_eq(ocb_mlp_cfg_from_json(j, &cfg), OCB_EINVAL);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"dims\":[784,0,10]}");
	cr_assert_eq(ocb_mlp_cfg_from_json(j, &cfg), OCB_EINVAL);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"dims\":[784,100,10]}");
	cr_assert_eq(ocb_mlp_cfg_from_json(j, &cfg), OCB_OK);
	cr_assert_eq(cfg.nlayers, 2);
	cJSON_Delete(j);
}
