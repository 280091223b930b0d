/* Tests of the pure-math parts of the distributed suite: LARS (workloads/optim_lars),
 * the polynomial-decay schedule, the collective cost model and its fit
 * (kernels/coll_model), nccl-tests factors (kernels/coll), the scaling projection and
 * the fabric files (workloads/projection, examples/interconnects). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../kernels/coll.h"
#include "../kernels/coll_model.h"
#include "../workloads/optim_lars.h"
#include "../workloads/projection.h"
#include "../workloads/schedule.h"
#include "cli_util.h"

Test(lars, trust_ratio_formula)
{
	float w[2] = {3.0f, 4.0f}, g[2] = {0.6f, 0.8f}; /* ||w|| 5, ||g|| 1 */
	cr_expect_float_eq(ocb_lars_trust_ratio(w, g, 2, 0.001, 0.0), 0.005, 1e-9); /* g in fp32 */
	cr_expect_float_eq(ocb_lars_trust_ratio(w, g, 2, 0.001, 0.1), 0.001 * 5 / 1.5, 1e-9);
	float z[2] = {0, 0};
	cr_expect_float_eq(ocb_lars_trust_ratio(z, g, 2, 0.001, 0.1), 1.0, 0);
	cr_expect_float_eq(ocb_lars_trust_ratio(w, z, 2, 0.001, 0.1), 1.0, 0);
}

Test(lars, step_by_hand_and_exempt_biases)
{
	/* layer [0,2) with LARS, bias [2,3) exempt, [3,4) in no layer */
	float p[4] = {3.0f, 4.0f, 1.0f, 7.0f}, g[4] = {0.6f, 0.8f, 0.5f, 9.0f};
	struct ocb_lars o;
	cr_assert_eq(ocb_lars_init(&o, 4, 0.01f, 0.9f, 0.1f), 0);
	cr_assert_eq(ocb_lars_add_layer(&o, 0, 2, 0), 0);
	cr_assert_eq(ocb_lars_add_layer(&o, 2, 1, 1), 0);
	cr_expect_neq(ocb_lars_add_layer(&o, 1, 2, 0), 0, "overlap refused");
	cr_expect_neq(ocb_lars_add_layer(&o, 3, 2, 0), 0, "outside refused");
	ocb_lars_step(&o, p, g, 2.0f);
	/* ratio = 0.01 * 5 / (1 + 0.1 * 5) = 1/30; v = 2 * r * (g + 0.1 w) */
	double r = 0.01 * 5 / 1.5;
	cr_expect_float_eq(p[0], 3.0 - 2 * r * (0.6 + 0.3), 1e-6);
	cr_expect_float_eq(p[1], 4.0 - 2 * r * (0.8 + 0.4), 1e-6);
	cr_expect_float_eq(p[2], 1.0 - 2 * 0.5, 1e-6, "bias: plain step, no decay");
	cr_expect_eq(p[3], 7.0f, "undeclared parameters untouched");
	float v0 = o.v[2];
	ocb_lars_step(&o, p, g, 2.0f);
	cr_expect_float_eq(o.v[2], 0.9f * v0 + 2.0f * 0.5f, 1e-6, "momentum");
	cr_expect_float_eq(o.layers[0].last_ratio,
			   ocb_lars_trust_ratio(p, g, 2, 0.01, 0.1) , 1e-3);
	ocb_lars_release(&o);
	cr_expect_neq(ocb_lars_init(&o, 4, 0.0f, 0.9f, 0.0f), 0);
}

Test(schedule, polynomial_decay_after_warmup)
{
	struct ocb_schedule s = {.base_lr = 2.0f, .min_lr = 0.0f, .warmup_steps = 10,
				 .total_steps = 110, .decay_power = 2.0f};
	cr_expect_float_eq(ocb_schedule_lr(&s, 0), 0.2f, 1e-6);
	cr_expect_float_eq(ocb_schedule_lr(&s, 9), 2.0f, 1e-6);
	cr_expect_float_eq(ocb_schedule_lr(&s, 10), 2.0f, 1e-6);
	cr_expect_float_eq(ocb_schedule_lr(&s, 60), 2.0f * 0.25f, 1e-6);
	cr_expect_float_eq(ocb_schedule_lr(&s, 110), 0.0f, 1e-6);
	s.decay_power = 0.0f; /* cosine: half-way is half */
	cr_expect_float_eq(ocb_schedule_lr(&s, 60), 1.0f, 1e-6);
}

Test(coll, nccl_tests_factors_and_sizes)
{
	cr_expect_float_eq(ocb_coll_busbw_factor(OCB_COLL_ALLREDUCE, 4), 1.5, 1e-12);
	cr_expect_float_eq(ocb_coll_busbw_factor(OCB_COLL_ALLGATHER, 4), 0.75, 1e-12);
	cr_expect_float_eq(ocb_coll_busbw_factor(OCB_COLL_REDUCE_SCATTER, 2), 0.5, 1e-12);
	cr_expect_float_eq(ocb_coll_busbw_factor(OCB_COLL_ALLTOALL, 8), 0.875, 1e-12);
	cr_expect_float_eq(ocb_coll_busbw_factor(OCB_COLL_BCAST, 8), 1.0, 1e-12);
	cr_expect_eq(ocb_coll_busbw_factor(OCB_COLL_ALLREDUCE, 1), 0.0);
	cr_expect_eq(ocb_coll_fit_bytes(OCB_COLL_ALLGATHER, 4, 8), 0);
	cr_expect_eq(ocb_coll_fit_bytes(OCB_COLL_ALLGATHER, 4, 100), 96);
	cr_expect_eq(ocb_coll_fit_bytes(OCB_COLL_ALLREDUCE, 4, 10), 8);
	enum ocb_coll_op op;
	cr_expect_eq(ocb_coll_parse("reduce_scatter", &op), 0);
	cr_expect_eq(op, OCB_COLL_REDUCE_SCATTER);
	cr_expect_neq(ocb_coll_parse("reduce", &op), 0);
}

Test(coll_model, fit_recovers_known_parameters)
{
	struct ocb_coll_model truth = {.alpha = 2e-6, .beta = 1e-10, .gamma = 5e-11}, m;
	double x[12], t[12];
	for (int i = 0; i < 12; i++) {
		x[i] = pow(8.0, i) * 8.0;
		t[i] = ocb_coll_model_time(&truth, OCB_COLL_ALLREDUCE, 4, x[i]);
	}
	cr_assert_eq(ocb_coll_model_fit(OCB_COLL_ALLREDUCE, 4, x, t, 12, 5e-11, &m), 0);
	cr_expect_float_eq(m.alpha, 2e-6, 2e-6 * 1e-6);
	cr_expect_float_eq(m.beta, 1e-10, 1e-10 * 1e-6);
	cr_expect_lt(m.rms_rel_err, 1e-9);
	/* noise of +-10% alternating: the error says so */
	for (int i = 0; i < 12; i++)
		t[i] *= i % 2 ? 1.1 : 0.9;
	cr_assert_eq(ocb_coll_model_fit(OCB_COLL_ALLREDUCE, 4, x, t, 12, 5e-11, &m), 0);
	cr_expect(m.rms_rel_err > 0.05 && m.rms_rel_err < 0.2, "rms %g", m.rms_rel_err);
	cr_expect_geq(m.max_rel_err, m.rms_rel_err);
	/* refusals */
	cr_expect_neq(ocb_coll_model_fit(OCB_COLL_ALLREDUCE, 4, x, t, 1, 0, &m), 0);
	double same[3] = {64, 64, 64};
	cr_expect_neq(ocb_coll_model_fit(OCB_COLL_ALLREDUCE, 4, same, t, 3, 0, &m), 0);
	t[0] = 0;
	cr_expect_neq(ocb_coll_model_fit(OCB_COLL_ALLREDUCE, 4, x, t, 12, 0, &m), 0);
}

Test(coll_model, coefficients)
{
	struct ocb_coll_coef k;
	ocb_coll_coef(OCB_COLL_ALLREDUCE, 8, &k);
	cr_expect_float_eq(k.a, 14, 0);
	cr_expect_float_eq(k.b, 1.75, 1e-12);
	cr_expect_float_eq(k.c, 0.875, 1e-12);
	ocb_coll_coef(OCB_COLL_BCAST, 8, &k);
	cr_expect_float_eq(k.a, 10, 1e-12);
	ocb_coll_coef(OCB_COLL_ALLGATHER, 1, &k);
	cr_expect(k.a == 1 && k.b == 1 && k.c == 0, "one rank: overhead + copy");
	double g;
	cr_assert_eq(ocb_coll_measure_gamma(1 << 20, 3, &g), 0);
	cr_expect(g > 0 && g < 1e-6, "gamma %g s/byte", g);
}

static struct ocb_proj_input input(void)
{
	struct ocb_proj_input in = {
		.compute_per_sample = 1e-4, .opt_s = 2e-3, .grad_bytes = 2.1e6, .nbuckets = 10,
		.hidden_share = 0.5, .global_batch = 8192, .steps_to_target = 140,
		.fixed_s = 3.0,
		.node = {.alpha = 1e-6, .beta = 2e-10, .gamma = 1e-10},
	};
	return in;
}

Test(projection, one_rank_is_the_reference)
{
	struct ocb_proj_input in = input();
	struct ocb_proj_point p;
	cr_assert_eq(ocb_project(&in, NULL, 1, &p), 0);
	cr_expect_eq(p.comm_s, 0);
	cr_expect_float_eq(p.step_s, 1e-4 * 8192 + 2e-3, 1e-12);
	cr_expect_float_eq(p.efficiency, 1.0, 1e-12);
	cr_expect_float_eq(p.time_to_train_s, 3.0 + 140 * p.step_s, 1e-9);
	cr_expect_float_eq(p.samples_per_s, 8192 / p.step_s, 1e-6);
}

Test(projection, scaling_and_overlap)
{
	struct ocb_proj_input in = input();
	struct ocb_fabric fab;
	cr_assert_eq(ocb_fabric_load("examples/interconnects/infiniband_edr_abci.json", &fab), 0);
	cr_expect_eq(fab.ranks_per_node, 4);
	cr_expect_float_eq(fab.beta, 1.0 / 25e9, 1e-20);
	double last = 2.0;
	for (int p = 2; p <= 2048; p *= 2) {
		struct ocb_proj_point a;
		cr_assert_eq(ocb_project(&in, &fab, p, &a), 0);
		cr_expect_lt(a.efficiency, last + 1e-12, "efficiency falls with ranks (p %d)", p);
		cr_expect_gt(a.samples_per_s, 0);
		last = a.efficiency;
	}
	/* more hiding, less exposed; never more hidden than the backward pass */
	struct ocb_proj_point h0, h1;
	in.hidden_share = 0.0;
	ocb_project(&in, &fab, 64, &h0);
	in.hidden_share = 1.0;
	ocb_project(&in, &fab, 64, &h1);
	cr_expect_float_eq(h0.exposed_s, h0.comm_s, 1e-15);
	cr_expect_lt(h1.exposed_s, h0.exposed_s);
	cr_expect_geq(h1.exposed_s, h1.comm_s - h1.compute_s * 2.0 / 3.0 - 1e-15);
	/* cores: 4 ranks on 2 cores compute no faster than 2 ranks */
	in.cores = 2;
	struct ocb_proj_point c2, c4;
	ocb_project(&in, NULL, 2, &c2);
	ocb_project(&in, NULL, 4, &c4);
	cr_expect_float_eq(c2.compute_s, c4.compute_s, 1e-15);
	cr_expect_neq(ocb_project(&in, NULL, 0, &c4), 0);
	cr_expect_neq(ocb_project(&in, NULL, 16384, &c4), 0, "global batch < ranks");
}

Test(projection, fabric_files)
{
	struct ocb_fabric f;
	cr_expect_eq(ocb_fabric_load("examples/interconnects/infiniband_hdr.json", &f), 0);
	cr_expect_gt(f.source[0], 0, "the published source is cited");
	cr_expect_neq(ocb_fabric_load("/nonexistent.json", &f), 0);
	char dir[128], path[256];
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb-fabric")));
	snprintf(path, sizeof path, "%s/bad-fabric.json", dir);
	FILE *t = fopen(path, "w");
	cr_assert_not_null(t);
	fputs("{\"name\": \"x\", \"alpha_s\": 1e-6, \"bandwidth_GBps\": 0, \"ranks_per_node\": 1}", t);
	fclose(t);
	cr_expect_neq(ocb_fabric_load(path, &f), 0);
	remove(path);
	remove(dir);
}

#include "../common/ocb_xroof.h"

Test(xroof, the_largest_bound_wins)
{
	struct ocb_xroof_work w = {.flops = 1e9, .mem_bytes = 1e8, .net_bytes = 4e6,
				   .io_bytes = 8e6};
	struct ocb_xroof_ceil c = {.flops_per_s = 50e9, .mem_bytes_per_s = 14e9,
				   .net_bytes_per_s = 1e9, .io_bytes_per_s = 0.2e9};
	struct ocb_xroof x;
	ocb_xroof_place(&w, &c, 0.1, &x);
	cr_expect_float_eq(x.t[OCB_XROOF_COMPUTE], 0.02, 1e-12);
	cr_expect_float_eq(x.t[OCB_XROOF_MEMORY], 1e8 / 14e9, 1e-12);
	cr_expect_float_eq(x.t[OCB_XROOF_STAGING], 0.04, 1e-12);
	cr_expect_eq(x.bound, OCB_XROOF_STAGING);
	cr_expect_str_eq(ocb_xroof_name(x.bound), "staging");
	cr_expect_float_eq(x.fraction, 0.4, 1e-12);
	/* an unknown ceiling never wins; nothing known: NaN */
	c.io_bytes_per_s = NAN;
	ocb_xroof_place(&w, &c, 0.1, &x);
	cr_expect(isnan(x.t[OCB_XROOF_STAGING]));
	cr_expect_eq(x.bound, OCB_XROOF_COMPUTE);
	struct ocb_xroof_ceil none = {0};
	ocb_xroof_place(&w, &none, 0.1, &x);
	cr_expect(isnan(x.t_bound) && isnan(x.fraction));
}

Test(projection, table_and_error)
{
	struct ocb_proj_input in = input();
	struct ocb_fabric fab;
	struct ocb_proj_point t[16], one;
	cr_assert_eq(ocb_fabric_load("examples/interconnects/infiniband_hdr.json", &fab), 0);
	int n = ocb_project_table(&in, &fab, 8, 2048, t, 16);
	cr_assert_eq(n, 9, "8, 16, ..., 2048");
	cr_expect_eq(t[0].ranks, 8);
	cr_expect_eq(t[8].ranks, 2048);
	cr_expect_gt(t[8].time_to_train_s, in.fixed_s);
	ocb_project(&in, NULL, 2, &one);
	cr_expect_float_eq(ocb_project_error(&in, NULL, 2, one.step_s), 0.0, 1e-12);
	cr_expect_float_eq(ocb_project_error(&in, NULL, 2, one.step_s * 2), -0.5, 1e-12);
	cr_expect(isnan(ocb_project_error(&in, NULL, 2, 0)));
	cr_expect_lt(ocb_project_table(&in, &fab, 0, 8, t, 16), 0);
}

/* A measured point made by the model itself (the inverse of calibration). */
static struct ocb_proj_measured point_of(const struct ocb_proj_input *in, int p, double share,
					 int cores)
{
	struct ocb_proj_input q = *in;
	struct ocb_proj_point pt;
	q.cpu_share = share;
	q.cores = cores;
	cr_assert_eq(ocb_project(&q, NULL, p, &pt), 0);
	struct ocb_proj_measured m = {
		.ranks = p, .cores = cores, .oversubscribed = p > cores, .step_s = pt.step_s,
		.compute_per_sample = in->compute_per_sample / share, .cpu_share = share,
		.opt_s = in->opt_s / share, .hidden = in->hidden_share,
		.grad_bytes = in->grad_bytes, .nbuckets = in->nbuckets,
		.global_batch = in->global_batch, .allreduce = in->node};
	m.allreduce.npoints = 12;
	return m;
}

Test(projection, calibrated_on_one_rank_reproduces_the_others)
{
	struct ocb_proj_input in = input(), cal;
	struct ocb_proj_point pt;
	/* one rank got 80% of a core, two ranks 60% each, four ranks on 2 cores 45% */
	struct ocb_proj_measured m1 = point_of(&in, 1, 0.8, 2), m2 = point_of(&in, 2, 0.6, 2),
				 m4 = point_of(&in, 4, 0.45, 2);
	cr_assert_eq(ocb_proj_calibrate(&m1, &cal), 0);
	cr_expect_float_eq(cal.compute_per_sample, in.compute_per_sample, 1e-15,
			   "s per sample on a whole core");
	cr_expect_float_eq(cal.opt_s, in.opt_s, 1e-15);
	cal.hidden_share = m2.hidden;
	cal.node = m2.allreduce;
	const struct ocb_proj_measured *ms[] = {&m1, &m2, &m4};
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(ocb_proj_reproduce(&cal, ms[i], &pt), 0);
		cr_expect_float_eq(pt.step_s, ms[i]->step_s, 1e-9 * ms[i]->step_s, "%d ranks",
				   ms[i]->ranks);
		cr_expect_float_eq(pt.share, ms[i]->cpu_share, 1e-15);
	}
	/* four ranks on two cores: recorded as oversubscribed, nothing hidden */
	cr_assert_eq(ocb_proj_reproduce(&cal, &m4, &pt), 0);
	cr_expect_eq(pt.oversubscribed, 1);
	cr_expect_float_eq(pt.exposed_s, pt.comm_s, 1e-15);
	/* a dedicated node: the share of an oversubscribed rank is cores / ranks */
	struct ocb_proj_input d = cal;
	d.cores = 2;
	d.cpu_share = 0;
	cr_assert_eq(ocb_project(&d, NULL, 4, &pt), 0);
	cr_expect_float_eq(pt.share, 0.5, 1e-15);
	/* calibration needs a 1-rank point; a multi-rank point needs its fitted allreduce */
	cr_expect_neq(ocb_proj_calibrate(&m2, &cal), 0);
	m2.allreduce.npoints = 0;
	cr_expect_neq(ocb_proj_reproduce(&cal, &m2, &pt), 0);
}

/* The wait for the slowest rank: expected maximum of p standard normals (tabulated values
 * of the order statistics: 1/sqrt(pi) at 2, 1.0294 at 4, 1.5388 at 10). */
Test(projection, slowest_of_p_ranks)
{
	cr_expect_float_eq(ocb_proj_max_normal(1), 0.0, 0);
	cr_expect_float_eq(ocb_proj_max_normal(2), 1.0 / sqrt(M_PI), 1e-4);
	cr_expect_float_eq(ocb_proj_max_normal(4), 1.0294, 1e-3);
	cr_expect_float_eq(ocb_proj_max_normal(10), 1.5388, 1e-3);
	cr_expect(ocb_proj_max_normal(2048) > 3.0 && ocb_proj_max_normal(2048) < 4.0);
	/* a spread of 10% per step stretches 2 ranks' compute by 1 + 0.1 e(2), 1 rank's not */
	struct ocb_proj_input in = input();
	struct ocb_proj_point a, b;
	cr_assert_eq(ocb_project(&in, NULL, 2, &a), 0);
	in.compute_cv = 0.1;
	cr_assert_eq(ocb_project(&in, NULL, 2, &b), 0);
	cr_expect_float_eq(b.compute_s, a.compute_s * (1 + 0.1 / sqrt(M_PI)), 1e-4 * a.compute_s);
	cr_assert_eq(ocb_project(&in, NULL, 1, &b), 0);
	cr_expect_float_eq(b.compute_s, in.compute_per_sample * in.global_batch,
			   1e-12 * b.compute_s);
}

/* The compute phases' share wins over the run's CPU / wall (which counts MPI's busy waits);
 * a measured spread is carried from the 1-rank calibration and from each point. */
Test(projection, compute_share_and_spread_of_a_point)
{
	struct ocb_proj_input in = input(), cal;
	struct ocb_proj_point pt;
	struct ocb_proj_measured m1 = point_of(&in, 1, 0.8, 2);
	m1.cpu_share = 0.95; /* the run's: waits included */
	m1.compute_share = 0.8;
	m1.compute_cv = 0.05;
	cr_expect_float_eq(ocb_proj_share_of(&m1), 0.8, 0);
	cr_assert_eq(ocb_proj_calibrate(&m1, &cal), 0);
	cr_expect_float_eq(cal.compute_per_sample, in.compute_per_sample, 1e-15);
	cr_expect_float_eq(cal.compute_cv, 0.05, 0);
	m1.compute_share = NAN; /* older runs: the run's share */
	cr_expect_float_eq(ocb_proj_share_of(&m1), 0.95, 0);
	m1.compute_share = 1.3; /* a share of one core at most */
	cr_expect_float_eq(ocb_proj_share_of(&m1), 1.0, 0);
	struct ocb_proj_measured m2 = point_of(&in, 2, 0.6, 2);
	m2.compute_cv = 0.2;
	cal.node = m2.allreduce;
	cr_assert_eq(ocb_proj_reproduce(&cal, &m2, &pt), 0);
	cr_expect_float_eq(pt.compute_s, in.compute_per_sample * in.global_batch / 2 / 0.6 *
					 (1 + 0.2 * ocb_proj_max_normal(2)), 1e-9 * pt.compute_s);
}
