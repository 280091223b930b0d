/* optim + schedule: AdamW and SGD-momentum against a scalar double reference of the
 * published update rules, no-decay ranges, clipping, the warm-up + cosine schedule. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../workloads/optim.h"
#include "../workloads/schedule.h"

Test(optim, adamw_matches_reference)
{
	enum { N = 5 };
	struct ocb_optim_cfg cfg;
	ocb_optim_defaults(&cfg, OCB_OPTIM_ADAMW);
	cfg.weight_decay = 0.1f;
	struct ocb_optim o;
	cr_assert_eq(ocb_optim_init(&o, &cfg, N), OCB_OK);
	cr_assert_eq(ocb_optim_no_decay(&o, 3, 2), OCB_OK); /* last two: no decay */
	cr_assert_eq(ocb_optim_state_bytes(&o), (size_t)N * 8);
	float p[N] = {1.0f, -2.0f, 0.5f, 3.0f, -1.0f};
	double pr[N], m[N] = {0}, v[N] = {0};
	for (int i = 0; i < N; i++)
		pr[i] = p[i];
	for (int t = 1; t <= 20; t++) {
		float g[N];
		for (int i = 0; i < N; i++)
			g[i] = (float)(sin(t * 0.7 + i) * (i + 1));
		float lr = 0.01f * (float)t / 20.0f;
		ocb_optim_step(&o, p, g, lr);
		for (int i = 0; i < N; i++) {
			double wd = i >= 3 ? 0.0 : 0.1;
			m[i] = 0.9 * m[i] + 0.1 * g[i];
			v[i] = 0.999 * v[i] + 0.001 * (double)g[i] * g[i];
			double mh = m[i] / (1 - pow(0.9, t)), vh = v[i] / (1 - pow(0.999, t));
			pr[i] = pr[i] * (1 - lr * wd) - lr * mh / (sqrt(vh) + 1e-8);
		}
	}
	cr_assert_eq(o.t, 20);
	for (int i = 0; i < N; i++)
		cr_assert(fabs(p[i] - pr[i]) < 1e-5, "p[%d] %g vs %g", i, p[i], pr[i]);
	ocb_optim_release(&o);
	ocb_optim_release(&o); /* idempotent */
}

Test(optim, adamw_decay_is_decoupled)
{
	/* zero gradient: AdamW shrinks p by exactly (1 - lr wd) per step; no-decay stays */
	struct ocb_optim_cfg cfg;
	ocb_optim_defaults(&cfg, OCB_OPTIM_ADAMW);
	cfg.weight_decay = 0.5f;
	struct ocb_optim o;
	cr_assert_eq(ocb_optim_init(&o, &cfg, 4), OCB_OK);
	cr_assert_eq(ocb_optim_no_decay(&o, 1, 1), OCB_OK);
	float p[4] = {2, 2, 2, 2}, g[4] = {0};
	ocb_optim_step(&o, p, g, 0.1f);
	cr_assert_float_eq(p[0], 2.0f * 0.95f, 1e-6);
	cr_assert_eq(p[1], 2.0f);
	cr_assert_float_eq(p[3], 2.0f * 0.95f, 1e-6);
	ocb_optim_release(&o);
}

Test(optim, sgd_momentum_matches_reference)
{
	struct ocb_optim_cfg cfg;
	ocb_optim_defaults(&cfg, OCB_OPTIM_SGD);
	cfg.weight_decay = 0.01f;
	struct ocb_optim o;
	cr_assert_eq(ocb_optim_init(&o, &cfg, 3), OCB_OK);
	cr_assert_null(o.v);
	cr_assert_eq(ocb_optim_state_bytes(&o), (size_t)12);
	float p[3] = {1, -1, 0.25f};
	double pr[3] = {1, -1, 0.25}, vel[3] = {0};
	for (int t = 1; t <= 10; t++) {
		float g[3] = {(float)t, -0.5f, (float)cos(t)};
		ocb_optim_step(&o, p, g, 0.05f);
		for (int i = 0; i < 3; i++) {
			double gi = g[i] + 0.01 * pr[i];
			vel[i] = t == 1 ? gi : 0.9 * vel[i] + gi;
			pr[i] -= 0.05 * vel[i];
		}
	}
	for (int i = 0; i < 3; i++)
		cr_assert(fabs(p[i] - pr[i]) < 1e-4, "p[%d] %g vs %g", i, p[i], pr[i]);
	cr_assert_str_eq(ocb_optim_name(OCB_OPTIM_SGD), "sgd");
	cr_assert_str_eq(ocb_optim_name(OCB_OPTIM_ADAMW), "adamw");
	ocb_optim_release(&o);
}

Test(optim, bad_config_and_ranges_refused)
{
	struct ocb_optim_cfg cfg;
	struct ocb_optim o;
	ocb_optim_defaults(&cfg, OCB_OPTIM_ADAMW);
	cr_assert_eq(ocb_optim_init(&o, &cfg, 0), OCB_EINVAL);
	cfg.beta2 = 1.0f;
	cr_assert_eq(ocb_optim_init(&o, &cfg, 4), OCB_EINVAL);
	cr_assert(strstr(ocb_lasterr(), "beta") != NULL);
	ocb_optim_defaults(&cfg, OCB_OPTIM_ADAMW);
	cr_assert_eq(ocb_optim_init(&o, &cfg, 10), OCB_OK);
	cr_assert_eq(ocb_optim_no_decay(&o, 8, 3), OCB_EINVAL); /* past the end */
	cr_assert_eq(ocb_optim_no_decay(&o, 4, 2), OCB_OK);
	cr_assert_eq(ocb_optim_no_decay(&o, 5, 2), OCB_EINVAL); /* overlaps */
	cr_assert_eq(ocb_optim_no_decay(&o, 3, 2), OCB_EINVAL); /* overlaps from the left */
	cr_assert_eq(ocb_optim_no_decay(&o, 0, 2), OCB_OK);
	cr_assert_eq(ocb_optim_no_decay(&o, 8, 2), OCB_OK);
	cr_assert_eq(o.nnodecay, (size_t)3);
	cr_assert(o.nodecay[0].off == 0 && o.nodecay[1].off == 4 && o.nodecay[2].off == 8);
	ocb_optim_release(&o);
}

Test(optim, clip_grad_norm)
{
	float g[2] = {3, 4};
	cr_assert_float_eq(ocb_optim_clip_grad_norm(g, 2, 0.0), 5.0, 1e-9);
	cr_assert_eq(g[0], 3.0f);
	cr_assert_float_eq(ocb_optim_clip_grad_norm(g, 2, 1.0), 5.0, 1e-9);
	cr_assert_float_eq(g[0], 0.6f, 1e-6);
	cr_assert_float_eq(g[1], 0.8f, 1e-6);
}

Test(optim, schedule_warmup_cosine)
{
	struct ocb_schedule s = {.base_lr = 1.0f, .min_lr = 0.1f, .warmup_steps = 4,
				 .total_steps = 14};
	cr_assert_float_eq(ocb_schedule_lr(&s, 0), 0.25f, 1e-7);
	cr_assert_float_eq(ocb_schedule_lr(&s, 3), 1.0f, 1e-7);
	cr_assert_float_eq(ocb_schedule_lr(&s, 4), 1.0f, 1e-7);          /* cosine start */
	cr_assert_float_eq(ocb_schedule_lr(&s, 9), 0.55f, 1e-6);         /* halfway */
	cr_assert_float_eq(ocb_schedule_lr(&s, 14), 0.1f, 1e-7);         /* end */
	cr_assert_float_eq(ocb_schedule_lr(&s, 100), 0.1f, 1e-7);        /* past the end */
	float prev = 2.0f;
	for (long t = 4; t <= 14; t++) { /* monotone decay after warm-up */
		float lr = ocb_schedule_lr(&s, t);
		cr_assert(lr <= prev);
		prev = lr;
	}
	struct ocb_schedule nw = {.base_lr = 0.5f, .min_lr = 0.0f, .warmup_steps = 0,
				  .total_steps = 10};
	cr_assert_float_eq(ocb_schedule_lr(&nw, 0), 0.5f, 1e-7);
}

Test(optim, adamw_avx2_bit_exact_with_ref)
{
	enum { N = 1003 }; /* not a multiple of 8: the tail goes through the ref */
	static float p1[N], p2[N], g[N], m1[N], m2[N], v1[N], v2[N];
	struct ocb_rng r;
	ocb_rng_seed(&r, 4);
	for (int i = 0; i < N; i++) {
		p1[i] = p2[i] = (float)ocb_rng_normal(&r);
		m1[i] = m2[i] = 0.1f * (float)ocb_rng_normal(&r);
		v1[i] = v2[i] = 0.01f * ocb_rng_uniformf(&r);
	}
	for (int t = 1; t <= 5; t++) {
		for (int i = 0; i < N; i++)
			g[i] = (float)ocb_rng_normal(&r);
		float c1 = (float)(1.0 / (1.0 - pow(0.9, t))), c2 = (float)(1.0 / (1.0 - pow(0.999, t)));
		ocb_adamw_span(p1, g, m1, v1, N, 1e-3f, 0.01f, 0.9f, 0.999f, 1e-8f, c1, c2);
		ocb_adamw_span_ref(p2, g, m2, v2, N, 1e-3f, 0.01f, 0.9f, 0.999f, 1e-8f, c1, c2);
	}
	cr_assert_eq(memcmp(p1, p2, sizeof p1), 0, "params bit-exact (avx2 used: %d)",
		     ocb_cpu_avx2());
	cr_assert_eq(memcmp(m1, m2, sizeof m1), 0);
	cr_assert_eq(memcmp(v1, v2, sizeof v1), 0);
}
