/* ceiling_llc: the measured last-level cache capacity (collect/ceiling_llc.h): the finder
 * on synthetic read-bandwidth curves, and its use by the roofline level rule, the
 * ceiling bands and the rotation buffers in place of the reported L3. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/bench_quant.h"
#include "../collect/ceiling_llc.h"
#include "../collect/ceiling_rules.h"
#include "../collect/ceilings.h"
#include "../collect/params.h"
#include "../collect/registry.h"
#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../common/ocb_roofline.h"
#include "cli_util.h"
#include "san.h"

#define KIB 1024.0
#define MIB (1024.0 * 1024.0)

/* A sweep 16 KiB .. 1 GiB doubling (17 sizes), shaped like the Xeon VM's 1-thread read
 * curve (48 KiB L1d, 2 MiB L2, reported L3 480 MiB, DRAM ~13.4 GB/s): L1 ~240, L2 ~170,
 * L3 ~28 GB/s up to 32 MiB, 64 MiB half in the cache, DRAM from 128 MiB. */
#define NWS 17
static void xeon_curve(size_t *ws, double *bw)
{
	for (int i = 0; i < NWS; i++) {
		ws[i] = (size_t)16384 << i;
		double w = (double)ws[i];
		bw[i] = w <= 32 * KIB ? 240 : w <= 1 * MIB ? 170 : w <= 32 * MIB ? 28.5
			: w <= 64 * MIB ? 20.0 : 13.4;
	}
}

Test(ceiling_llc, finds_the_fall_to_dram_on_a_synthetic_curve)
{
	size_t ws[NWS];
	double bw[NWS], cap = -1;
	xeon_curve(ws, bw);
	int i = ocb_llc_find(ws, bw, NWS, 4 * MIB, &cap, NULL);
	cr_assert_eq(ws[i], (size_t)128 << 20, "first DRAM size %zu", ws[i]);
	/* threshold sqrt(28.5 x 13.4) = 19.54 GB/s (the fastest rate past the 4 MiB floor and
	 * DRAM) crossed between 64 MiB (20) and 128 MiB (13.4): log-interpolated at 64 MiB x
	 * 2^((20 - 19.54) / (20 - 13.4)) */
	double thr = sqrt(28.5 * 13.4), got_thr = 0;
	double want = 64 * MIB * pow(2.0, (20.0 - thr) / (20.0 - 13.4));
	cr_expect_float_eq(cap, want, 1e-6 * want, "cap %.0f want %.0f", cap, want);
	cr_expect_gt(ocb_llc_find(ws, bw, NWS, 4 * MIB, &cap, &got_thr), 0);
	cr_expect_float_eq(got_thr, thr, 1e-12);
	cr_expect_lt(cap, 480 * MIB); /* not the reported size */

	/* a sharp edge: 28.5 at 32 MiB, DRAM at 64 MiB -> between them */
	bw[12] = 13.5; /* 64 MiB */
	i = ocb_llc_find(ws, bw, NWS, 4 * MIB, &cap, NULL);
	cr_expect_eq(ws[i], (size_t)64 << 20);
	want = 32 * MIB * pow(2.0, (28.5 - thr) / (28.5 - 13.5));
	cr_expect_float_eq(cap, want, 1e-6 * want, "cap %.1f MiB", cap / MIB);

	/* DRAM points 25% above their rate (a noisy host) do not pass for cached ones */
	xeon_curve(ws, bw);
	bw[14] = bw[16] * 1.25; /* 256 MiB */
	bw[15] = bw[16] * 1.3;  /* 512 MiB */
	i = ocb_llc_find(ws, bw, NWS, 4 * MIB, &cap, NULL);
	cr_expect_eq(ws[i], (size_t)128 << 20);
}

Test(ceiling_llc, no_last_level_above_the_floor)
{
	size_t ws[NWS];
	double bw[NWS], cap = -1;
	xeon_curve(ws, bw);
	/* no L3: everything past L2 (1 MiB here) reads at the DRAM rate */
	for (int i = 0; i < NWS; i++)
		if ((double)ws[i] > 1 * MIB)
			bw[i] = 13.4;
	cr_expect_eq(ocb_llc_find(ws, bw, NWS, 4 * MIB, &cap, NULL), 0); /* L2's edge: below floor */
	cr_expect_eq(cap, 0);
	cr_expect_gt(ocb_llc_find(ws, bw, NWS, 0, &cap, NULL), 0);      /* without a floor: L2's */
	cr_expect(cap > 1 * MIB && cap < 2 * MIB, "cap %.2f MiB", cap / MIB);
	/* flat, unknown (NaN) or too short a curve: nothing */
	double flat[NWS], nan3[3] = {NAN, NAN, NAN};
	for (int i = 0; i < NWS; i++)
		flat[i] = 13.4;
	cr_expect_eq(ocb_llc_find(ws, flat, NWS, 0, &cap, NULL), 0);
	cr_expect_eq(ocb_llc_find(ws, nan3, 3, 0, &cap, NULL), 0);
	cr_expect_eq(ocb_llc_find(ws, bw, 2, 0, &cap, NULL), 0);
}

/* A NaN (a size not measured) below the threshold does not stop the scan; one above does
 * not count as cached. */
Test(ceiling_llc, unknown_points_are_not_cached)
{
	size_t ws[NWS];
	double bw[NWS], cap;
	xeon_curve(ws, bw);
	bw[14] = NAN; /* 256 MiB */
	int i = ocb_llc_find(ws, bw, NWS, 4 * MIB, &cap, NULL);
	cr_expect_eq(ws[i], (size_t)128 << 20);
}

/* The roofline picks the level from the measured capacity where there is one: the Xeon
 * VM's 480 MiB reported L3 with a measured 40 MiB. */
Test(ceiling_llc, level_choice_uses_the_measured_capacity)
{
	struct ocb_roof_caches xeon = {48 * KIB, 2 * MIB, 480 * MIB, 2, 2, 0};
	cr_expect_eq(ocb_roof_level(&xeon, 56.6e6, 1), OCB_LEVEL_L3);
	cr_expect_eq(ocb_roof_level(&xeon, 300 * MIB, 2), OCB_LEVEL_L3);
	cr_expect_float_eq(ocb_roof_llc(&xeon), 480 * MIB, 1);
	xeon.llc = 40 * MIB;
	cr_expect_float_eq(ocb_roof_llc(&xeon), 40 * MIB, 1);
	/* L3 up to llc + the private caches of the cores in use (1: 2 MiB + 48 KiB) */
	cr_expect_eq(ocb_roof_level(&xeon, 30 * MIB, 1), OCB_LEVEL_L3);
	cr_expect_eq(ocb_roof_level(&xeon, 42 * MIB + 48 * KIB - 1, 1), OCB_LEVEL_L3);
	cr_expect_eq(ocb_roof_level(&xeon, 42 * MIB + 48 * KIB + 1, 1), OCB_LEVEL_DRAM);
	cr_expect_eq(ocb_roof_level(&xeon, 56.6e6, 1), OCB_LEVEL_DRAM);
	cr_expect_eq(ocb_roof_level(&xeon, 300 * MIB, 2), OCB_LEVEL_DRAM);
	cr_expect_eq(ocb_roof_level(&xeon, 1 * MIB, 1), OCB_LEVEL_L2); /* private levels as before */
	char b[32];
	cr_assert_eq(ocb_roof_bound(&xeon, "", "ops_int8", 56.6e6, 0, 2, b, sizeof b), 0);
	cr_expect_str_eq(b, "roofline:ops_int8,bw_dram");
	cr_assert_eq(ocb_roof_bound(&xeon, "bw_*_triad", NULL, 3 * 12 * MIB, 0, 2, b, sizeof b), 0);
	cr_expect_str_eq(b, "bw_l3_triad");
	/* no L3 reported, none measured: L2 is the last level for buffer sizing */
	struct ocb_roof_caches none = {32 * KIB, 1 * MIB, 0, 1, 1, 0};
	cr_expect_float_eq(ocb_roof_llc(&none), 1 * MIB, 1);
	cr_expect_eq(ocb_roof_llc(NULL), 0);
}

static struct ocb_ceiling cap_row(double mib, const char *suspect)
{
	struct ocb_ceiling c = {.kind = "cap_llc", .threads = 1, .value = mib, .unit = "MiB"};
	snprintf(c.suspect, sizeof c.suspect, "%s", suspect);
	return c;
}

/* From the stored ceiling to the machine record and on to the bands and rotation. */
Test(ceiling_llc, machine_record_bands_and_rotation_follow_it)
{
	struct ocb_ceiling c[2] = {{.kind = "bw_dram", .threads = 1, .value = 13.4}, cap_row(40, "")};
	cr_expect_float_eq(ocb_ceiling_llc_bytes(c, 2, 480 * MIB), 40 * MIB, 1);
	cr_expect_float_eq(ocb_ceiling_llc_bytes(c, 2, 32 * MIB), 40 * MIB, 1); /* unflagged */
	cr_expect_eq(ocb_ceiling_llc_bytes(c, 1, 480 * MIB), 0);
	/* flagged: used below the reported size (an upper bound), not above it */
	c[1] = cap_row(40, "only 2 trial(s) (< 3)");
	cr_expect_float_eq(ocb_ceiling_llc_bytes(c, 2, 480 * MIB), 40 * MIB, 1);
	cr_expect_float_eq(ocb_ceiling_llc_bytes(c, 2, 0), 40 * MIB, 1); /* none reported */
	cr_expect_eq(ocb_ceiling_llc_bytes(c, 2, 32 * MIB), 0);
	struct ocb_machine f = {.l3_bytes = 480LL << 20};
	cr_expect_eq(ocb_machine_use_llc(&f, c, 2), 1, "says the capacity is a flagged one");
	cr_expect_eq(f.llc_bytes, 40LL << 20);
	f.l3_bytes = 32LL << 20;
	cr_expect_eq(ocb_machine_use_llc(&f, c, 2), 0);
	cr_expect_eq(f.llc_bytes, 0, "the reported 32 MiB stands");
	c[1] = cap_row(40, "");

	struct ocb_machine m = {.cores = 2, .threads = 2, .l1d_bytes = 48 << 10,
				.l2_bytes = 2 << 20, .l3_bytes = 480LL << 20,
				.mem_bytes = 24LL << 30};
	struct ocb_bands b;
	ocb_ceilings_bands(&m, 0, &b);
	cr_expect_float_eq(b.lo[3], 1024 * MIB, 1); /* 4 x 480 MiB, at most 1 GiB */
	cr_expect_eq(ocb_machine_use_llc(&m, c, 2), 0);
	cr_expect_eq(m.llc_bytes, 40LL << 20);
	struct ocb_roof_caches mc;
	ocb_machine_caches(&m, &mc);
	cr_expect_float_eq(mc.llc, 40 * MIB, 1);
	cr_expect_float_eq(mc.l3, 480 * MIB, 1); /* the reported size is kept beside it */
	ocb_ceilings_bands(&m, 0, &b);
	cr_expect_float_eq(b.lo[3], 160 * MIB, 1); /* 4 x the measured 40 MiB */
	cr_expect_float_eq(b.hi[2], 10 * MIB, 1);

	/* rotation: TQ1_0 16384^2 (56.6 MB) is DRAM with the measured 40 MiB and rotates,
	 * at 2 threads, floor(4 x 40 MiB x 2 / 56.6 MB) + 1 = 6 copies (the DRAM ceiling's
	 * working sets); with the reported 480 MiB it was an L3 case with one copy */
	const struct ocb_bench *gemv = ocb_bench_find("quant_gemv");
	cr_assert_not_null(gemv);
	cJSON *raw = cJSON_Parse("{\"format\":\"tq1_0\",\"m\":16384,\"k\":16384}"), *p = NULL;
	cr_assert_eq(ocb_params_check(gemv->params, gemv->name, "test", raw, &p), OCB_OK);
	cJSON_Delete(raw);
	double wb = 16384.0 * (double)qformat_row_bytes(qformat_find("tq1_0"), 16384);
	int nc = 0;
	struct ocb_ctx ctx = {.threads = 2, .machine = &m};
	cr_assert_eq(qbench_copies(p, &ctx, 0, wb, &nc), OCB_OK);
	cr_expect_eq(nc, 6);
	m.llc_bytes = 0;
	cr_assert_eq(qbench_copies(p, &ctx, 0, wb, &nc), OCB_OK);
	cr_expect_eq(nc, 1);
	cJSON_Delete(p);
}

/* A capacity's trials are judged by their own spread bound, not the rates' 10%. */
Test(ceiling_llc, rules_judge_a_capacity_by_its_own_spread)
{
	struct ocb_ceiling_rules r;
	ocb_ceiling_rules_default(&r);
	struct ocb_ceiling c = cap_row(40, "");
	c.trials = 5;
	c.spread = 0.3;
	cr_expect_eq(ocb_ceilings_check(&c, 1, NULL, 0, &r), 0, "%s", c.suspect);
	c.spread = 0.6;
	cr_expect_eq(ocb_ceilings_check(&c, 1, NULL, 0, &r), 1);
	c.spread = 0.1;
	c.trials = 2;
	cr_expect_eq(ocb_ceilings_check(&c, 1, NULL, 0, &r), 1);
	c.trials = 0; /* no clean trial found it: flagged, not "unknown" */
	cr_expect_eq(ocb_ceilings_check(&c, 1, NULL, 0, &r), 1);
}

/* End to end: a run on a machine whose only capacity is flagged (4 MiB, below any L3 an
 * x86 server reports) warns that it uses it, and stores the rest as before; under
 * --quiet the warning stays out of stderr. */
Test(ceiling_llc, run_warns_when_a_flagged_capacity_stands_in, .timeout = OCB_TIMEOUT(240))
{
	char dir[64], path[96], out[96];
	cr_assert_not_null(cli_tmpdir(dir, sizeof dir));
	snprintf(path, sizeof path, "%s/f.db", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	struct ocb_ceiling c[2] = {{.kind = "bw_dram", .threads = 1, .value = 20, .unit = "GB/s",
				    .trials = 5, .spread = 0.03},
				   cap_row(4, "spread 70% > 50%")};
	c[1].trials = 5;
	c[1].spread = 0.7;
	cli_seed_machine_with(path, c, 2);

	struct cli_out o;
	const char *run[] = {"", "--db", path, "run", "--suite", "baseline", "--quick",
			     "--filter", "sgemm/\\{\"n\":256", "--threads", "1", "--budget", "0.05",
			     "--out", out, NULL};
	cr_assert_eq(cli_run(&o, run, NULL), 0);
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_expect(strstr(o.err, "last level: the measured capacity (4 MiB) is flagged") != NULL,
		  "no warning: %s", o.err);
	cr_expect_geq(cli_query_int(path, "SELECT count(*) FROM result"), 1);
	/* --quiet keeps stderr for errors (a bad input's one line): no warning there */
	const char *quiet[] = {"", "--db", path, "--quiet", "run", "--suite", "baseline", "--quick",
			       "--filter", "sgemm/\\{\"n\":256", "--threads", "1", "--budget",
			       "0.05", "--out", out, NULL};
	cr_assert_eq(cli_run(&o, quiet, NULL), 0);
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_expect(strstr(o.err, "last level") == NULL, "--quiet: %s", o.err);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}
