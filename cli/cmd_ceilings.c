/* `ocbench ceilings`: measure this machine's roofline ceilings now and store them,
 * (--verify) re-measure and replace the stored values flagged suspect, or (--show) print
 * the stored ones. Measuring prints the cross-checks (independent STREAM triad against
 * bw_dram, sgemm against the FMA peak) that collect/ceiling_rules enforces. */
#include <cJSON.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collect/ceilings.h"
#include "../collect/ceilings_store.h"
#include "../collect/host.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_log.h"
#include "../db/store_query.h"
#include "cli.h"

#define CMD "ceilings"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ocbench ceilings [--quick] [--threads N] [--show | --verify] [--json]\n\n"
		"Measures this machine's roofline ceilings and stores them with the machine:\n"
		"  flops_fp32   fp32 FMA peak with the widest FMA the CPU offers (AVX-512F zmm\n"
		"               when the CPU and OS allow it, else AVX2 ymm), GFLOP/s\n"
		"  flops_sgemm  OpenBLAS sgemm n=4096 (--quick: 2048), GFLOP/s\n"
		"  ops_int8     int8 dot peak (AVX-512 VNNI or AVX-VNNI vpdpbusd when present,\n"
		"               else AVX2 maddubs+madd+add chains), GOP/s, 2 ops per int8\n"
		"               multiply-add (the unit of the quantized kernels' work)\n"
		"  bw_l1 .. bw_dram, bw_l1_triad .. bw_dram_triad\n"
		"               plateaus of a read / STREAM-triad working-set sweep, GB/s\n"
		"               (the read: the best of one-stream zmm and ymm loops where the\n"
		"               CPU has AVX-512F, else ymm, and of the widest loop on 2 and 4\n"
		"               streams per thread: each thread's slice cut in parts read side\n"
		"               by side)\n"
		"each with 1 thread and with N threads (one thread pinned per core; each thread's\n"
		"own rate is recorded in the method). Every value is the best of 5 trials (--quick:\n"
		"3) interleaved over the whole measurement; trials and spread are stored.\n\n"
		"Before storing, the set is checked: <= 10%% spread over >= 3 trials (a trial in\n"
		"which a thread did not get >= 90%% of its core is left out when 3 clean ones\n"
		"remain, else the value is flagged); every thread within 0.6x of the fastest;\n"
		"N threads >= 0.95x 1 thread for the compute roofs, L1 and L2; flops_sgemm\n"
		"between 0.5x and 1.02x flops_fp32; L1 >= L2 >= L3\n"
		">= DRAM (within 5%%); bw_dram_triad within [0.85, 1.15] and bw_dram within\n"
		"[0.7, 1.7] of an independent STREAM triad (arrays >= 4x the per-core L3 share,\n"
		">= 64 MiB), both cross-checks printed. A family that fails is re-measured (up\n"
		"to %d times); what still fails is stored flagged suspect with the reason and a\n"
		"warning. Readers use the newest value that is not suspect, if there is one.\n\n"
		"options:\n"
		"  --quick      fewer trials, short sweeps and smaller sizes (about 4x faster)\n"
		"  --threads N  the 'all threads' count (default: online CPUs)\n"
		"  --show       print the stored ceilings of this machine; measure nothing\n"
		"  --verify     re-measure only the stored values flagged suspect (those whose\n"
		"               newest row is flagged) and replace them with the new values\n"
		"  --json       machine-readable output\n", OCB_CEIL_REMEASURES);
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
		if (c[i].trials > 0) {
			cJSON_AddNumberToObject(o, "trials", c[i].trials);
			cJSON_AddNumberToObject(o, "spread", c[i].spread);
		} else {
			cJSON_AddNullToObject(o, "trials");
			cJSON_AddNullToObject(o, "spread");
		}
		if (c[i].suspect[0])
			cJSON_AddStringToObject(o, "suspect", c[i].suspect);
		else
			cJSON_AddNullToObject(o, "suspect");
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* One line per ceiling; a flagged one gets a second line with the reasons. Trials and
 * spread print as '-' for rows stored before they were recorded. */
static void print_table(const struct ocb_ceiling *c, size_t n)
{
	printf("%-14s %7s %9s %-8s %6s %6s %-7s %s\n", "kind", "threads", "value", "unit",
	       "trials", "spread", "check", "method");
	for (size_t i = 0; i < n; i++) {
		char tr[16] = "-", sp[16] = "-";
		if (c[i].trials > 0) {
			snprintf(tr, sizeof tr, "%d", c[i].trials);
			if (isfinite(c[i].spread))
				snprintf(sp, sizeof sp, "%.1f%%", 100 * c[i].spread);
		}
		printf("%-14s %7d %9.1f %-8s %6s %6s %-7s %s\n", c[i].kind, c[i].threads, c[i].value,
		       c[i].unit, tr, sp, c[i].suspect[0] ? "SUSPECT" : "ok", c[i].method);
		if (c[i].suspect[0])
			printf("%-14s   suspect: %s\n", "", c[i].suspect);
	}
}

static size_t count_suspect(const struct ocb_ceiling *c, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += c[i].suspect[0] != '\0';
	return k;
}

/* Keeps the flagged rows f[0..*nf) whose (kind, threads) is in use with an older value
 * that passed (the current row c is not flagged): a newer measurement that failed, or a
 * roof the run's own results beat (collect/roof_beaten.c). */
static void keep_newer_flagged(const struct ocb_ceiling *c, size_t n, struct ocb_ceiling *f,
			       size_t *nf)
{
	size_t k = 0;
	for (size_t i = 0; i < *nf; i++) {
		const struct ocb_ceiling *cur = ocb_ceiling_find(c, n, f[i].kind, f[i].threads);
		if (cur && !cur->suspect[0])
			f[k++] = f[i];
	}
	*nf = k;
}

static int show(const struct ocb_global *g, const struct ocb_machine *m)
{
	struct ocb_store *s = NULL;
	struct ocb_ceiling *c = NULL, *f = NULL;
	size_t n = 0, nf = 0;
	int ec = cli_open_store(g, CMD, OCB_STORE_READ, &s);
	if (ec)
		return ec;
	int64_t mid = ocb_store_machine_find(s, m->fingerprint);
	if (mid > 0) {
		int rc = ocb_store_ceilings_get(s, mid, &c, &n);
		if (!rc)
			rc = ocb_store_ceilings_flagged(s, mid, &f, &nf);
		if (rc) {
			ec = cli_fail(CMD, rc);
			goto out;
		}
		keep_newer_flagged(c, n, f, &nf);
	}
	if (g->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "fingerprint", m->fingerprint);
		cJSON_AddItemToObject(o, "ceilings", ceilings_json(c, n));
		cJSON_AddItemToObject(o, "flagged_newer", ceilings_json(f, nf));
		ec = cli_print_json(CMD, o, 1);
	} else if (n == 0) {
		fprintf(stderr, "ocbench: %s: no ceilings stored for this machine (%s) in %s; run "
				"'ocbench ceilings'\n", CMD, m->fingerprint, g->db_path);
	} else {
		printf("machine %s: %s, %d threads\n", m->fingerprint, m->cpu_model, m->threads);
		print_table(c, n);
		if (nf > 0) {
			printf("\nnewer values flagged suspect, not in use until re-measured (the "
			       "next full run or 'ocbench ceilings --verify'):\n");
			print_table(f, nf);
		}
	}
out:
	free(c);
	free(f);
	ocb_store_close(s);
	return ec;
}

static double val(const struct ocb_ceiling *c, size_t n, const char *kind, int threads)
{
	const struct ocb_ceiling *x = ocb_ceiling_find(c, n, kind, threads);
	return x ? x->value : NAN;
}

static const char *within(double r, double lo, double hi)
{
	return isnan(r) ? "n/a" : r >= lo && r <= hi ? "ok" : "OFF (flagged)";
}

/* The two cross-checks of every thread count, with the bounds of the rules. */
static void print_xcheck(const struct ocb_ceiling *c, size_t n,
			 const struct ocb_ceilings_report *rep)
{
	const struct ocb_ceiling_rules *r = &rep->rules;
	double smax = r->sgemm_peak_max;
	printf("\ncross-checks (same session):\n");
	for (size_t i = 0; i < rep->nxc; i++) {
		int t = rep->xc[i].threads;
		double st = rep->xc[i].stream_triad, dt = val(c, n, "bw_dram_triad", t) / st,
		       d = val(c, n, "bw_dram", t) / st;
		double fp = val(c, n, "flops_fp32", t), sg = val(c, n, "flops_sgemm", t);
		printf("  %d thread(s): STREAM triad %.1f GB/s; bw_dram_triad / STREAM = %.2f "
		       "[%.2f, %.2f] %s; bw_dram / STREAM = %.2f [%.2f, %.2f] %s\n",
		       t, st, dt, r->triad_lo, r->triad_hi, within(dt, r->triad_lo, r->triad_hi), d,
		       r->read_lo, r->read_hi, within(d, r->read_lo, r->read_hi));
		printf("  %d thread(s): flops_sgemm %.1f / flops_fp32 %.1f GFLOP/s = %.2f [%.2f, "
		       "%.2f] %s\n", t, sg, fp, sg / fp, r->sgemm_peak_min, smax,
		       within(sg / fp, r->sgemm_peak_min, smax));
	}
}

static int print_json(const struct ocb_machine *m, const char *uuid,
		       const struct ocb_ceiling *c, size_t n, const struct ocb_ceilings_report *rep)
{
	cJSON *o = cJSON_CreateObject(), *chk = cJSON_CreateArray();
	cJSON_AddStringToObject(o, "fingerprint", m->fingerprint);
	cJSON_AddStringToObject(o, "run_uuid", uuid);
	cJSON_AddItemToObject(o, "ceilings", ceilings_json(c, n));
	for (size_t i = 0; i < rep->nxc; i++) {
		cJSON *x = cJSON_CreateObject();
		int t = rep->xc[i].threads;
		double st = rep->xc[i].stream_triad;
		cJSON_AddNumberToObject(x, "threads", t);
		cJSON_AddNumberToObject(x, "stream_triad_gbs", st);
		cJSON_AddNumberToObject(x, "bw_dram_over_triad", val(c, n, "bw_dram", t) / st);
		cJSON_AddNumberToObject(x, "bw_dram_triad_over_triad",
					val(c, n, "bw_dram_triad", t) / st);
		cJSON_AddNumberToObject(x, "sgemm_over_flops_fp32",
					val(c, n, "flops_sgemm", t) / val(c, n, "flops_fp32", t));
		cJSON_AddItemToArray(chk, x);
	}
	cJSON_AddItemToObject(o, "check", chk);
	cJSON_AddNumberToObject(o, "remeasures", rep->remeasures);
	cJSON_AddNumberToObject(o, "suspect", (double)count_suspect(c, n));
	return cli_print_json(CMD, o, 1);
}

/* --verify --json when no stored value is flagged */
static cJSON *nothing_flagged_json(const struct ocb_machine *m)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "fingerprint", m->fingerprint);
	cJSON_AddNumberToObject(o, "flagged", 0);
	cJSON_AddItemToObject(o, "ceilings", cJSON_CreateArray());
	return o;
}

/* 0, or the exit code of a failed JSON write */
static int print_measured(const struct ocb_global *g, const struct ocb_machine *m, int verify,
			  const struct ocb_ceilings_session *x)
{
	if (g->json)
		return print_json(m, x->uuid, x->c, x->n, &x->rep);
	printf("machine %s: %s, %d threads (stored in %s)\n", m->fingerprint, m->cpu_model,
	       m->threads, g->db_path);
	if (verify)
		printf("re-measured %zu flagged value(s); they replace the flagged rows:\n",
		       x->nflag);
	print_table(x->c, x->n);
	if (!verify)
		print_xcheck(x->c, x->n, &x->rep);
	printf("\n%zu ceilings stored, %zu flagged suspect, %d re-measure pass(es)\n", x->n,
	       count_suspect(x->c, x->n), x->rep.remeasures);
	return 0;
}

/* Measures (verify = 0) or re-measures the flagged values (verify = 1) and stores:
 * the same module path as the runner's (collect/ceilings_store.h). */
static int measure(const struct ocb_global *g, const struct ocb_machine *m, int threads,
		   int quick, int verify)
{
	struct ocb_store *s = NULL;
	struct ocb_ceilings_session x;
	int ec = cli_open_store(g, CMD, OCB_STORE_WRITE, &s);
	if (ec)
		return ec;
	int rc = ocb_ceilings_session_run(s, m, threads, quick, verify, g->cmdline, &x);
	if (rc)
		ec = cli_fail(CMD, rc);
	else if (verify && x.nflag == 0 && g->json)
		ec = cli_print_json(CMD, nothing_flagged_json(m), 1);
	else if (verify && x.nflag == 0)
		printf("machine %s: no stored ceiling is flagged suspect; nothing to verify\n",
		       m->fingerprint);
	else
		ec = print_measured(g, m, verify, &x);
	ocb_ceilings_session_free(&x);
	ocb_store_close(s);
	return ec;
}

int cmd_ceilings(const struct ocb_global *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{"quick", no_argument, NULL, 'q'},   {"threads", required_argument, NULL, 't'},
		{"show", no_argument, NULL, 's'},    {"json", no_argument, NULL, 'j'},
		{"verify", no_argument, NULL, 'v'},  {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct ocb_global gg = *g;
	int quick = 0, show_only = 0, verify = 0, c;
	long threads = ocb_cpu_cores();
	struct ocb_machine m;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'q': quick = 1; break;
		case 's': show_only = 1; break;
		case 'v': verify = 1; break;
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
	if (show_only && verify)
		return cli_usage_error(CMD, "--show and --verify exclude each other");
	ocb_host_probe(&m);
	return show_only ? show(&gg, &m) : measure(&gg, &m, (int)threads, quick, verify);
}
