/* baseline: every bench of the baseline suite sets up, runs and passes its check on a
 * small case, and its static work model is right for known shapes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/suite_baseline.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"

static struct ocb_ctx quick_ctx(void)
{
	struct ocb_ctx c;
	memset(&c, 0, sizeof c);
	c.threads = 2;
	c.seed = 1234;
	c.quick = 1;
	return c;
}

/* setup + check + run + check + teardown on params; returns check's error. */
static double run_case(const struct ocb_bench *b, const cJSON *params)
{
	struct ocb_ctx ctx = quick_ctx();
	void *st = NULL;
	double err = NAN;
	int rc = b->setup(params, &ctx, &st);
	cr_assert_eq(rc, OCB_OK, "%s setup: %s", b->name, ocb_lasterr());
	cr_assert_eq(b->check(st, &err), OCB_OK, "%s check: %s", b->name, ocb_lasterr());
	cr_assert_eq(b->run(st), OCB_OK);
	cr_assert_eq(b->check(st, &err), OCB_OK, "%s check: %s", b->name, ocb_lasterr());
	cr_assert(b->variant(st) != NULL);
	b->teardown(st);
	return err;
}

static cJSON *params1(const char *k1, double v1, const char *k2, double v2)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, k1, v1);
	if (k2)
		cJSON_AddNumberToObject(o, k2, v2);
	return o;
}

/* The benches of the baseline suite, from the registry's table. */
static size_t baseline_benches(const struct ocb_bench **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < ocb_nbenches && n < max; i++)
		if (strcmp(ocb_benches[i].suite, "baseline") == 0)
			out[n++] = ocb_benches[i].bench;
	return n;
}

Test(baseline, suite_lists_its_benches)
{
	const struct ocb_bench *bs[16];
	size_t nb = baseline_benches(bs, 16);
	cr_assert_geq(nb, 4);
	cr_assert_eq(bs[0], &ocb_bench_sgemm, "the original four first, in order");
	cr_assert_eq(bs[3], &ocb_bench_stream_triad);
	for (size_t i = 0; i < nb; i++) {
		const struct ocb_bench *b = bs[i];
		cr_assert_str_eq(ocb_bench_home(b), "baseline");
		cr_assert_not_null(b->params, "%s declares its parameters", b->name);
		cr_assert_eq(b->kind, OCB_KERNEL);
		cr_assert(b->cases && b->setup && b->run && b->check && b->work && b->teardown);
		for (size_t j = 0; j < i; j++)
			cr_assert_str_neq(b->name, bs[j]->name);
	}
}

Test(baseline, quick_cases_are_small_and_full_ones_big)
{
	struct ocb_ctx q = quick_ctx(), f = quick_ctx();
	f.quick = 0;
	const struct ocb_bench *bs[16];
	size_t nb = baseline_benches(bs, 16);
	for (size_t i = 0; i < nb; i++) {
		const struct ocb_bench *b = bs[i];
		cJSON *cq = b->cases(&q), *cf = b->cases(&f);
		cr_assert(cJSON_GetArraySize(cq) > 0 && cJSON_GetArraySize(cf) > 0);
		double maxq = 0, maxf = 0;
		const cJSON *e;
		cJSON_ArrayForEach(e, cq)
		{
			struct ocb_work w = {0};
			cr_assert_eq(b->work(e, &w), OCB_OK);
			maxq = fmax(maxq, w.bytes);
			cr_assert_null(cJSON_GetObjectItem(e, "threads")); /* shapes only */
		}
		cJSON_ArrayForEach(e, cf)
		{
			struct ocb_work w = {0};
			cr_assert_eq(b->work(e, &w), OCB_OK);
			maxf = fmax(maxf, w.bytes);
		}
		cr_assert_lt(maxq, maxf, "%s", b->name);
		cJSON_Delete(cq);
		cJSON_Delete(cf);
	}
}

Test(baseline, sgemm_runs_and_checks)
{
	struct ocb_ctx ctx = quick_ctx();
	cJSON *c = ocb_bench_sgemm.cases(&ctx);
	double err = run_case(&ocb_bench_sgemm, cJSON_GetArrayItem(c, 0));
	cr_assert(err >= 0 && err < 1e-4, "err %g", err);
	cJSON_Delete(c);
	cJSON *odd = params1("n", 37, NULL, 0); /* odd size: no blocking luck */
	run_case(&ocb_bench_sgemm, odd);
	cJSON_Delete(odd);
}

Test(baseline, sgemv_runs_and_checks)
{
	struct ocb_ctx ctx = quick_ctx();
	cJSON *c = ocb_bench_sgemv.cases(&ctx);
	double err = run_case(&ocb_bench_sgemv, cJSON_GetArrayItem(c, 0));
	cr_assert(err >= 0 && err < 1e-4, "err %g", err);
	cJSON_Delete(c);
	cJSON *p = params1("m", 333, "n", 77);
	run_case(&ocb_bench_sgemv, p);
	cJSON_Delete(p);
}

Test(baseline, stream_copy_and_triad_run_and_check_exactly)
{
	cJSON *p = params1("n", 100003, NULL, 0);
	cr_assert_eq(run_case(&ocb_bench_stream_copy, p), 0.0);
	cr_assert_eq(run_case(&ocb_bench_stream_triad, p), 0.0);
	cJSON_Delete(p);
	struct ocb_ctx ctx = quick_ctx();
	cJSON *c = ocb_bench_stream_triad.cases(&ctx);
	cr_assert_eq(run_case(&ocb_bench_stream_triad, cJSON_GetArrayItem(c, 0)), 0.0);
	cJSON_Delete(c);
}

Test(baseline, stream_scalar_variant)
{
	setenv("OCB_FORCE_SCALAR", "1", 1);
	ocb_cpu_reset();
	struct ocb_ctx ctx = quick_ctx();
	cJSON *p = params1("n", 5000, NULL, 0);
	void *st = NULL;
	double err = 1;
	cr_assert_eq(ocb_bench_stream_triad.setup(p, &ctx, &st), OCB_OK);
	cr_assert_str_eq(ocb_bench_stream_triad.variant(st), "ref");
	cr_assert_eq(ocb_bench_stream_triad.check(st, &err), OCB_OK);
	cr_assert_eq(err, 0.0);
	ocb_bench_stream_triad.teardown(st);
	cJSON_Delete(p);
	unsetenv("OCB_FORCE_SCALAR");
	ocb_cpu_reset();
}

Test(baseline, work_models)
{
	struct ocb_work w;
	cJSON *p;

	p = params1("n", 100, NULL, 0);
	cr_assert_eq(ocb_bench_sgemm.work(p, &w), OCB_OK);
	cr_assert_float_eq(w.flops, 2e6, 1e-6);
	cr_assert_float_eq(w.bytes, 3 * 100 * 100 * 4.0, 1e-6);
	cr_assert_null(w.bound); /* the roofline, OpenBLAS's own compute roof */
	cr_assert_str_eq(w.compute, "flops_sgemm");
	cJSON_Delete(p);
	p = params1("n", 4096, NULL, 0);
	cr_assert_eq(ocb_bench_sgemm.work(p, &w), OCB_OK);
	cr_assert_float_eq(w.flops, 2.0 * 4096 * 4096 * 4096, 1);
	cr_assert_null(w.bound); /* compute-bound by the roofline's min, no size constant */
	cr_assert_str_eq(w.compute, "flops_sgemm");
	cJSON_Delete(p);

	p = params1("m", 16384, "n", 4096);
	cr_assert_eq(ocb_bench_sgemv.work(p, &w), OCB_OK);
	cr_assert_float_eq(w.flops, 2.0 * 16384 * 4096, 1e-3);
	cr_assert_float_eq(w.bytes, 4.0 * 16384 * 4096 + 4.0 * (16384 + 4096), 1e-3);
	cr_assert_null(w.bound); /* level from the working set by the roofline module */
	cr_assert_str_eq(w.compute, "flops_fp32");
	cJSON_Delete(p);

	p = params1("n", 1000, NULL, 0);
	cr_assert_eq(ocb_bench_stream_copy.work(p, &w), OCB_OK);
	cr_assert_float_eq(w.bytes, 8000.0, 1e-9);
	cr_assert_float_eq(w.flops, 0.0, 1e-9);
	cr_assert_str_eq(w.bound, "bw_*");
	cr_assert_float_eq(w.cycle, w.bytes, 1e-9); /* the same arrays every pass */
	cr_assert_eq(ocb_bench_stream_triad.work(p, &w), OCB_OK);
	cr_assert_float_eq(w.bytes, 12000.0, 1e-9);
	cr_assert_float_eq(w.cycle, w.bytes, 1e-9);
	cr_assert_float_eq(w.flops, 2000.0, 1e-9);
	cr_assert_str_eq(w.bound, "bw_*_triad");
	cJSON_Delete(p);
	/* 3 x 256 MiB, swept pass after pass: DRAM on a 32 MiB-L3 machine (past 2 threads x
	 * 4 x 32 MiB) and on a 480 MiB-L3 VM whose last level measured 42 MiB; where only
	 * the reported 480 MiB is known, under 2 x 4 x 480 MiB (capped at 1 GiB a thread):
	 * partly in the cache, L3. 3 x 16 MiB arrays are L3 on the VM either way. */
	p = params1("n", 1 << 26, NULL, 0);
	cr_assert_eq(ocb_bench_stream_triad.work(p, &w), OCB_OK);
	struct ocb_roof_caches zen3 = {32 << 10, 512 << 10, 32 << 20, 2, 2, 0};
	struct ocb_roof_caches xeon = {48 << 10, 2 << 20, 480 << 20, 2, 2, 0};
	struct ocb_roof_caches xeon_llc = xeon;
	xeon_llc.llc = 42 << 20;
	char b[32];
	cr_assert_eq(ocb_roof_bound(&zen3, w.bound, w.compute, w.bytes, w.cycle, 2, b, sizeof b), 0);
	cr_assert_str_eq(b, "bw_dram_triad");
	cr_assert_eq(ocb_roof_bound(&xeon_llc, w.bound, w.compute, w.bytes, w.cycle, 2, b, sizeof b), 0);
	cr_assert_str_eq(b, "bw_dram_triad");
	cr_assert_eq(ocb_roof_bound(&xeon, w.bound, w.compute, w.bytes, w.cycle, 2, b, sizeof b), 0);
	cr_assert_str_eq(b, "bw_l3_triad");
	cJSON_Delete(p);
	p = params1("n", 1 << 22, NULL, 0);
	cr_assert_eq(ocb_bench_stream_triad.work(p, &w), OCB_OK);
	cr_assert_eq(ocb_roof_bound(&xeon, w.bound, w.compute, w.bytes, w.cycle, 2, b, sizeof b), 0);
	cr_assert_str_eq(b, "bw_l3_triad");
	cr_assert_eq(ocb_roof_bound(&xeon_llc, w.bound, w.compute, w.bytes, w.cycle, 2, b, sizeof b), 0);
	cr_assert_str_eq(b, "bw_l3_triad");
	cJSON_Delete(p);
}

Test(baseline, bad_params_are_refused)
{
	struct ocb_ctx ctx = quick_ctx();
	struct ocb_work w;
	void *st = (void *)1;
	cJSON *p = params1("n", -5, NULL, 0);
	cr_assert_eq(ocb_bench_sgemm.setup(p, &ctx, &st), OCB_EINVAL);
	cr_assert_null(st);
	cr_assert_eq(ocb_bench_stream_copy.work(p, &w), OCB_EINVAL);
	cJSON_Delete(p);
	p = params1("m", 10, NULL, 0); /* no n */
	cr_assert_eq(ocb_bench_sgemv.work(p, &w), OCB_EINVAL);
	cJSON_Delete(p);
	/* a fraction is refused by the declared table, before the bench sees it */
	cJSON *full = (cJSON *)1;
	p = params1("n", 2.5, NULL, 0);
	cr_assert_eq(ocb_params_check(ocb_bench_sgemm.params, "sgemm", "t", p, &full), OCB_EINVAL);
	cr_assert_null(full);
	cr_assert(strstr(ocb_lasterr(), "key n") != NULL, "%s", ocb_lasterr());
	cJSON_Delete(p);
}
