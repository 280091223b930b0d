/* report_10k: `ocbench report` on a store of 10,000 runs must take well under 2 s
 * (issue 5). Generates a temporary database with 10,000 complete runs on two machines
 * (3 kernel results of 8 samples each, plus a train_time metric, per run), written
 * through the store API in one transaction, then times ocb_report_write() (all formats,
 * plots included when gnuplot is present) on it and prints the times. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/ocb_error.h"
#include "../../common/ocb_log.h"
#include "../../common/ocb_rng.h"
#include "../../common/ocb_time.h"
#include "../../db/store.h"
#include "../../report/report.h"

#define NRUNS 10000

static int fail(const char *what)
{
	fprintf(stderr, "report_10k: %s: %s\n", what, ocb_lasterr());
	return 1;
}

int main(void)
{
	char dir[] = "/tmp/ocb-report10k-XXXXXX", db[128], out[128], cmd[256];
	struct ocb_store *s = NULL;
	struct ocb_rng rng;
	if (!mkdtemp(dir))
		return 1;
	snprintf(db, sizeof db, "%s/ocbench.db", dir);
	snprintf(out, sizeof out, "%s/report", dir);
	ocb_log_quiet = 1;
	ocb_rng_seed(&rng, 42);

	double t0 = ocb_now_s();
	if (ocb_store_open(db, OCB_STORE_WRITE, &s))
		return fail("open");
	int64_t mid[2];
	for (int k = 0; k < 2; k++) {
		struct ocb_machine m;
		memset(&m, 0, sizeof m);
		snprintf(m.fingerprint, sizeof m.fingerprint, "%04d0000feedbeef", k);
		snprintf(m.hostname, sizeof m.hostname, "host%d", k);
		snprintf(m.cpu_model, sizeof m.cpu_model, "Bench CPU");
		m.cores = m.threads = 2;
		if (ocb_store_machine(s, &m, &mid[k]))
			return fail("machine");
		struct ocb_ceiling c[] = {{.kind = "flops_sgemm", .threads = 1, .value = 80, .unit = "GFLOP/s", .method = "bench"},
					  {.kind = "bw_l1", .threads = 1, .value = 65, .unit = "GB/s", .method = "bench"},
					  {.kind = "bw_dram", .threads = 1, .value = 13, .unit = "GB/s", .method = "bench"}};
		for (int i = 0; i < 3; i++)
			if (ocb_store_ceiling(s, mid[k], 0, &c[i]))
				return fail("ceiling");
	}
	if (ocb_store_begin(s))
		return fail("begin");
	static const char *benches[] = {"sgemm", "gemv_q4_0", "stream_triad"};
	double samples[8];
	for (int r = 0; r < NRUNS; r++) {
		char uuid[40];
		snprintf(uuid, sizeof uuid, "10000000-0000-4000-8000-%012d", r);
		struct ocb_run_info ri = {.uuid = uuid, .machine_id = mid[r % 2], .suite = "baseline",
					  .ocbench_version = "bench", .git_sha = "", .cmdline = "",
					  .config_json = "{\"threads\":1}"};
		int64_t rid;
		if (ocb_store_run_begin(s, &ri, &rid))
			return fail("run");
		for (int b = 0; b < 3; b++) {
			struct ocb_result res;
			memset(&res, 0, sizeof res);
			snprintf(res.suite, sizeof res.suite, "baseline");
			snprintf(res.bench, sizeof res.bench, "%s", benches[b]);
			res.params_json = "{\"n\":1024}";
			snprintf(res.variant, sizeof res.variant, "ref");
			snprintf(res.unit, sizeof res.unit, "s");
			snprintf(res.status, sizeof res.status, "ok");
			res.threads = 1;
			for (int i = 0; i < 8; i++)
				samples[i] = 1e-3 * (b + 1) * (1 + 0.01 * ocb_rng_normal(&rng));
			res.samples = samples;
			res.nsamples = 8;
			res.st.n = 8;
			res.st.median = res.st.mean = res.st.min = samples[0];
			res.st.ci_low = samples[0] * 0.99;
			res.st.ci_high = samples[0] * 1.01;
			res.flops = 2e6 * (b + 1);
			res.bytes = 1e6 * (3 - b);
			res.check_err = NAN;
			res.bound_frac = NAN;
			if (ocb_store_result(s, rid, &res, NULL))
				return fail("result");
		}
		if (ocb_store_metric(s, rid, "mlp_fashion", -1, "train_time", 90 + r % 7, "s"))
			return fail("metric");
		if (ocb_store_run_finish(s, rid, "complete"))
			return fail("finish");
	}
	if (ocb_store_commit(s))
		return fail("commit");
	ocb_store_close(s);
	double t1 = ocb_now_s();

	if (ocb_store_open(db, OCB_STORE_READ, &s))
		return fail("open read");
	struct ocb_report_opts o = {.out_dir = out, .version = "bench"};
	struct ocb_report_summary sum;
	double t2 = ocb_now_s();
	int rc = ocb_report_write(s, &o, &sum);
	double t3 = ocb_now_s();
	if (rc)
		return fail("report");
	/* again without gnuplot (a program that is not there): the database and table part */
	setenv("OCB_GNUPLOT", "/nonexistent/gnuplot", 1);
	struct ocb_report_summary sum2;
	double t4 = ocb_now_s();
	rc = ocb_report_write(s, &o, &sum2);
	double t5 = ocb_now_s();
	ocb_store_close(s);
	if (rc)
		return fail("report without plots");
	printf("report_10k: generated %d runs x 3 results x 8 samples in %.2f s\n", NRUNS, t1 - t0);
	printf("report_10k: ocb_report_write: %.3f s (%d tables, %d plots, %d skipped) %s\n",
	       t3 - t2, sum.ntables, sum.nplots, sum.nskipped, t3 - t2 < 2.0 ? "< 2 s: ok" : ">= 2 s: TOO SLOW");
	printf("report_10k: ocb_report_write without gnuplot (tables only): %.3f s\n", t5 - t4);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "report_10k: could not remove %s\n", dir);
	return t3 - t2 < 2.0 ? 0 : 1;
}
