/* `ocbench ceilings`: measure this machine's roofline ceilings now and store them, or
 * (--show) print the stored ones. Measuring also runs the acceptance cross-check of
 * issue 2: an independent STREAM triad and the ceilings' sgemm, with the ratios. */
#include <cJSON.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collect/ceilings.h"
#include "../collect/host.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_log.h"
#include "cli.h"

#define CMD "ceilings"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ocbench ceilings [--quick] [--threads N] [--show] [--json]\n\n"
		"Measures this machine's roofline ceilings and stores them with the machine:\n"
		"  flops_fp32   fp32 FMA kernel peak (AVX2, independent accumulators)\n"
		"  flops_sgemm  OpenBLAS sgemm n=4096 (--quick: 2048)\n"
		"  bw_l1 .. bw_dram, bw_l1_triad .. bw_dram_triad\n"
		"               plateaus of a read / STREAM-triad working-set sweep\n"
		"each with 1 thread and with N threads. Then cross-checks: STREAM triad (arrays\n"
		">= 4x the per-core L3 share and >= 64 MiB each) against bw_dram, and the FMA\n"
		"peak against sgemm, printing the ratios.\n\n"
		"options:\n"
		"  --quick      short sweeps and smaller sizes (about 10 s instead of ~60 s)\n"
		"  --threads N  the 'all threads' count (default: online CPUs)\n"
		"  --show       print the stored ceilings of this machine; measure nothing\n"
		"  --json       machine-readable output\n");
}

/* RFC 4122 version-4 UUID from /dev/urandom into buf (>= 37 bytes). */
static int make_uuid(char *buf)
{
	unsigned char b[16];
	int fd = open("/dev/urandom", O_RDONLY);
	if (fd < 0)
		return ocb_seterr(OCB_EIO, "/dev/urandom: cannot open");
	ssize_t got = read(fd, b, sizeof b);
	close(fd);
	if (got != (ssize_t)sizeof b)
		return ocb_seterr(OCB_EIO, "/dev/urandom: short read");
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	sprintf(buf, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		b[13], b[14], b[15]);
	return OCB_OK;
}

static cJSON *ceilings_json(const struct ocb_ceiling *c, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		if (!o)
			break;
		cJSON_AddStringToObject(o, "kind", c[i].kind);
		cJSON_AddNumberToObject(o, "threads", c[i].threads);
		cJSON_AddNumberToObject(o, "value", c[i].value);
		cJSON_AddStringToObject(o, "unit", c[i].unit);
		cJSON_AddStringToObject(o, "method", c[i].method);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static void print_table(const struct ocb_ceiling *c, size_t n)
{
	printf("%-16s %7s %10s %-8s %s\n", "kind", "threads", "value", "unit", "method");
	for (size_t i = 0; i < n; i++)
		printf("%-16s %7d %10.1f %-8s %s\n", c[i].kind, c[i].threads, c[i].value, c[i].unit,
		       c[i].method);
}

/* The machine row of this host's fingerprint in a read-only store; 0 if none. */
static int64_t machine_id_of(struct ocb_store *s, const char *fp)
{
	sqlite3_stmt *st = NULL;
	int64_t id = 0;
	if (sqlite3_prepare_v2(ocb_store_handle(s), "SELECT id FROM machine WHERE fingerprint = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, fp, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

static int show(const struct ocb_global *g, const struct ocb_machine *m)
{
	struct ocb_store *s = NULL;
	struct ocb_ceiling *c = NULL;
	size_t n = 0;
	int ec = cli_open_store(g, CMD, OCB_STORE_READ, &s);
	if (ec)
		return ec;
	int64_t mid = machine_id_of(s, m->fingerprint);
	if (mid > 0) {
		int rc = ocb_store_ceilings_get(s, mid, &c, &n);
		if (rc) {
			ec = cli_fail(CMD, rc);
			goto out;
		}
	}
	if (g->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "fingerprint", m->fingerprint);
		cJSON_AddItemToObject(o, "ceilings", ceilings_json(c, n));
		char *txt = cJSON_PrintUnformatted(o);
		if (txt)
			printf("%s\n", txt);
		free(txt);
		cJSON_Delete(o);
	} else if (n == 0) {
		fprintf(stderr, "ocbench: %s: no ceilings stored for this machine (%s) in %s; run "
				"'ocbench ceilings'\n", CMD, m->fingerprint, g->db_path);
	} else {
		printf("machine %s: %s, %d threads\n", m->fingerprint, m->cpu_model, m->threads);
		print_table(c, n);
	}
out:
	free(c);
	ocb_store_close(s);
	return ec;
}

static double val(const struct ocb_ceiling *c, size_t n, const char *kind, int threads)
{
	const struct ocb_ceiling *x = ocb_ceiling_find(c, n, kind, threads);
	return x ? x->value : NAN;
}

static int measure(const struct ocb_global *g, const struct ocb_machine *m, int threads,
		   int quick)
{
	struct ocb_store *s = NULL;
	struct ocb_ceiling *c = NULL;
	size_t n = 0;
	int64_t mid = 0, run_id = 0;
	double triad[2] = {NAN, NAN};
	int tl[2] = {threads, 1};
	int ntl = threads > 1 ? 2 : 1;
	char uuid[40], cfg[96];
	int rc = OCB_OK, ec = 0;

	ec = cli_open_store(g, CMD, OCB_STORE_WRITE, &s);
	if (ec)
		return ec;
	if ((rc = ocb_store_machine(s, m, &mid)) || (rc = make_uuid(uuid)))
		goto out;
	snprintf(cfg, sizeof cfg, "{\"quick\":%s,\"threads\":%d}", quick ? "true" : "false",
		 threads);
	struct ocb_run_info ri = {
		.uuid = uuid, .machine_id = mid, .suite = "ceilings", .label = NULL,
		.ocbench_version = OCB_VERSION, .git_sha = OCB_GIT_SHA, .cmdline = g->cmdline,
		.config_json = cfg, .seed = 0,
	};
	if ((rc = ocb_store_run_begin(s, &ri, &run_id)))
		goto out;
	if (ocb_host_blas_fallback())
		ocb_warn("OpenBLAS runs its '%s' kernels on this CPU (no AVX2): sgemm is far below "
			 "the FMA peak; set OPENBLAS_CORETYPE=Haswell", m->blas);

	/* The cross-check first: STREAM triad while no OpenBLAS thread is spinning. Arrays
	 * >= 4x the per-core L3 share and >= 64 MiB each (REFERENCE.md §3, §6). */
	double share = m->l3_bytes > 0 ? (double)m->l3_bytes / (m->threads > 0 ? m->threads : 1)
				       : 0.0;
	double arr = 64.0 * (1 << 20);
	if (!quick && 4 * share > arr)
		arr = 4 * share;
	if (m->mem_bytes > 0 && 3 * arr > (double)m->mem_bytes / 4)
		arr = (double)m->mem_bytes / 12;
	size_t sn = (size_t)(arr / sizeof(float));
	for (int i = 0; i < ntl; i++) {
		ocb_info("ceilings: STREAM triad, 3 arrays of %.0f MiB, %d thread(s)", arr / (1 << 20),
			 tl[i]);
		if ((rc = ocb_ceilings_stream_triad(sn, tl[i], quick ? 5 : 10, &triad[i])))
			goto out;
	}

	if ((rc = ocb_ceilings_measure(m, threads, quick, &c, &n)))
		goto out;
	if ((rc = ocb_store_begin(s)))
		goto out;
	for (size_t i = 0; rc == OCB_OK && i < n; i++)
		rc = ocb_store_ceiling(s, mid, run_id, &c[i]);
	if (rc == OCB_OK)
		rc = ocb_store_commit(s);
	if (rc)
		goto out;
	if ((rc = ocb_store_run_finish(s, run_id, "complete")))
		goto out;

	/* Ratios of the acceptance check: |ratio - 1| <= 0.15 passes. */
	if (g->json) {
		cJSON *o = cJSON_CreateObject(), *chk = cJSON_CreateArray();
		cJSON_AddStringToObject(o, "fingerprint", m->fingerprint);
		cJSON_AddStringToObject(o, "run_uuid", uuid);
		cJSON_AddItemToObject(o, "ceilings", ceilings_json(c, n));
		for (int i = 0; i < ntl; i++) {
			cJSON *x = cJSON_CreateObject();
			double sg = val(c, n, "flops_sgemm", tl[i]);
			cJSON_AddNumberToObject(x, "threads", tl[i]);
			cJSON_AddNumberToObject(x, "stream_triad_gbs", triad[i]);
			cJSON_AddNumberToObject(x, "bw_dram_over_triad", val(c, n, "bw_dram", tl[i]) / triad[i]);
			cJSON_AddNumberToObject(x, "bw_dram_triad_over_triad",
						val(c, n, "bw_dram_triad", tl[i]) / triad[i]);
			cJSON_AddNumberToObject(x, "sgemm_gflops", sg);
			cJSON_AddNumberToObject(x, "flops_fp32_over_sgemm",
						val(c, n, "flops_fp32", tl[i]) / sg);
			cJSON_AddItemToArray(chk, x);
		}
		cJSON_AddItemToObject(o, "check", chk);
		char *txt = cJSON_PrintUnformatted(o);
		if (txt)
			printf("%s\n", txt);
		free(txt);
		cJSON_Delete(o);
	} else {
		printf("machine %s: %s, %d threads (stored in %s)\n", m->fingerprint, m->cpu_model,
		       m->threads, g->db_path);
		print_table(c, n);
		printf("\ncross-check (same session; within 15%% passes):\n");
		for (int i = 0; i < ntl; i++) {
			double d = val(c, n, "bw_dram", tl[i]), dt = val(c, n, "bw_dram_triad", tl[i]);
			double fp = val(c, n, "flops_fp32", tl[i]), sg = val(c, n, "flops_sgemm", tl[i]);
			printf("  %d thread(s): STREAM triad %.1f GB/s; bw_dram / STREAM triad = %.2f %s; "
			       "bw_dram_triad / STREAM triad = %.2f\n",
			       tl[i], triad[i], d / triad[i], fabs(d / triad[i] - 1) <= 0.15 ? "ok" : "OFF",
			       dt / triad[i]);
			printf("  %d thread(s): OpenBLAS sgemm n=%d %.1f GFLOP/s; flops_fp32 / sgemm = %.2f %s\n",
			       tl[i], quick ? 2048 : 4096, sg, fp / sg,
			       fabs(fp / sg - 1) <= 0.15 ? "ok" : "OFF");
		}
	}
out:
	if (rc && run_id > 0)
		ocb_store_run_finish(s, run_id, "failed");
	if (rc)
		ec = cli_fail(CMD, rc);
	free(c);
	ocb_store_close(s);
	return ec;
}

int cmd_ceilings(const struct ocb_global *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{"quick", no_argument, NULL, 'q'},   {"threads", required_argument, NULL, 't'},
		{"show", no_argument, NULL, 's'},    {"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},    {NULL, 0, NULL, 0},
	};
	struct ocb_global gg = *g;
	int quick = 0, show_only = 0, c;
	long threads = ocb_cpu_cores();
	struct ocb_machine m;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'q': quick = 1; break;
		case 's': show_only = 1; break;
		case 'j': gg.json = 1; break;
		case 'h': usage(stdout); return 0;
		case 't':
			if (cli_parse_long(CMD, "--threads", optarg, 1, 1024, &threads))
				return 2;
			break;
		default: return cli_bad_option(CMD, argc, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error(CMD, "unexpected argument '%s' (see 'ocbench %s --help')",
				       argv[optind], CMD);
	ocb_host_probe(&m);
	return show_only ? show(&gg, &m) : measure(&gg, &m, (int)threads, quick);
}
