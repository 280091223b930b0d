/* quant_gemv_bw: is batch-1 quantized GEMV at the memory-bandwidth limit?
 *
 * For every format (or the comma-separated list given) at n x n (default 16384: weights
 * 57-285 MB, more than a core's share of the last-level cache), measures the GEMV rate in
 * GB/s of weight bytes (scales included) and, in the same run with the same threads, a
 * plain read loop over the GEMV's own weight bytes, the very pages it streams (the read
 * ceiling's loops, ocb_stream_sum_variant, each timed after the GEMV in every repetition:
 * one stream on zmm and on ymm where the CPU has AVX-512F, else ymm, and 2 and 4 streams
 * per thread, and 4 with a prefetch). The reference is the loop with the lowest median
 * time (`loop N`), and its best of REPS timings, as many as the GEMV's; `any loop` is the
 * best single timing of all loops, a minimum over 4-5 times as many draws. The same loops
 * over a second buffer of the same size allocated the same way are printed beside it
 * (`another buffer`): not every page of a VM is as fast. On the Zen 5 VM (6 Dec 2026) a
 * 64 MiB buffer read at 29.8-37.4 GB/s with a pointer chase of 178-229 ns, or at 35.7-44.6
 * GB/s with 145-166 ns, and each kept its speed over four passes that alternated between
 * them: a property of the host memory behind the pages, not of the moment. Against
 * another buffer part of the GEMV's fraction was where the two allocations had landed
 * (for the 57-285 MB matrices here 2% at the median, up to 13%: README, "Zen 5, 6 Dec
 * 2026 (later)"). The read loops sum the bytes as floats, so the process runs with
 * denormals as zero (DAZ, FTZ): quantized codes read as floats include denormal bit
 * patterns, which could cost the loops microcode assists that a plain read does not
 * have. The GEMV's floats (scales, sums) are normal either way.
 * Prints the fraction GEMV/read per format against its target (85% for Q8_0, Q4_0,
 * TQ2_0; 70% for the others), the kernel variant this CPU chose and its streams per
 * thread (`x4`: groups read side by side, qgemv_streams; kernels/quant_repack.h:
 * the r8 and r16 ones run on an interleaved layout, whose one-off repacking time is
 * printed apart and not counted in the GEMV time) and the speed ratios TQ2_0/Q4_0 and
 * Q4_0/Q8_0 (byte ratios 2.18 and 1.89).
 * Best of REPS timings; `paired` is the median over the repetitions of the reference
 * loop's time / the GEMV time in each repetition, the fraction within one moment of a
 * host whose speed drifts in phases of seconds (a shared VM). Interleaved with them, a short
 * int8 dot-product peak loop (kernels/peak_int8.h, the same threads) gives the core's
 * compute rate at the time: its median over the repetitions is printed as `core` GOP/s.
 * On a VM shared with other tenants a low fraction can have two causes: a low `core` says
 * the arithmetic was taken (a busy SMT sibling on the host), `core` at its peak says the
 * memory path was slow. Before every timed GEMV and every timed read, a buffer of twice
 * the L3 size the machine reports is streamed (evict != 0), so that both start from DRAM even
 * where the VM reports an L3 larger than the weights; evict = 0 measures hot. Weights and
 * the second buffer come from qrepack_alloc (2 MiB aligned, transparent huge pages asked
 * for; OCB_NO_THP=1 asks for none) and are first touched by the measuring threads.
 *
 * configs (optional, r16 kernels): a comma-separated list of STREAMS:L1[:L2] (streams per
 * thread, prefetch bytes into L1 and into L2, as OCB_QGEMV_STREAMS, OCB_QGEMV_PF and
 * OCB_QGEMV_PF_L2), e.g. 2:0,4:1024,8:1024: each repetition then times the GEMV once under
 * each, in an order that rotates from one repetition to the next, so that all see the same
 * phases of the host; one line per configuration. A/B choices made across separate runs
 * were swamped by the host's drift (the same setting 70% in one run, 84% in the next).
 *
 * usage: quant_gemv_bw [n (16384)] [reps (10)] [threads (cores)] [evict (1)] [formats (all)]
 *                      [configs]
 * exit 0 (fractions are printed, not judged), 2 bad usage, 3 out of memory. */
#include <omp.h>
#include <pmmintrin.h> /* _MM_SET_DENORMALS_ZERO_MODE */
#include <xmmintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../../common/ocb_alloc.h"
#include "../../common/ocb_cpu.h"
#include "../../common/ocb_rng.h"
#include "../../common/ocb_stats.h"
#include "../../common/ocb_time.h"
#include "../../kernels/peak_int8.h"
#include "../../kernels/quant_gemv.h"
#include "../../kernels/quant_repack.h"
#include "../../kernels/qgemv_plan.h"
#include "../../kernels/quant_repack_impl.h" /* qk_prefetch_r16_set */
#include "../../kernels/stream.h"

/* One pass of the read ceiling's loop v over buf (kernels/stream.h ocb_stream_sum_variant;
 * threads on contiguous slices). The bytes are
 * memset to 1 or 2, so as floats they are small normal numbers, never denormals. */
static double read_mem(int v, const void *buf, size_t bytes, int threads)
{
	return ocb_stream_sum_variant(v, buf, bytes / sizeof(float), 1, threads);
}

/* bytes of one memset per thread over its contiguous share (first touch by the workers) */
static void touch(void *buf, size_t bytes, int val, int threads)
{
#pragma omp parallel num_threads(threads)
	{
		int t = omp_get_thread_num(), nt = omp_get_num_threads();
		size_t lo = bytes / 64 * (size_t)t / (size_t)nt * 64;
		size_t hi = t == nt - 1 ? bytes : bytes / 64 * (size_t)(t + 1) / (size_t)nt * 64;
		memset((char *)buf + lo, val, hi - lo);
	}
}

/* m rows of k weights of format f in plain blocks: copies of a pool of really quantized
 * rows, in a qrepack_alloc buffer first touched by `threads` threads. */
static void *make_weights(const struct qformat *f, int64_t m, int64_t k, int threads, size_t *bytes)
{
	const int64_t pool = 16;
	size_t rb = qformat_row_bytes(f, k);
	float *x = malloc(sizeof(float) * (size_t)(pool * k));
	char *w = qrepack_alloc(rb * (size_t)m);
	struct ocb_rng r;
	ocb_rng_seed(&r, 1);
	if (!x || !w) {
		free(x);
		qrepack_free(w);
		return NULL;
	}
	touch(w, rb * (size_t)m, 0, threads);
	for (int64_t i = 0; i < pool * k; i++)
		x[i] = (float)ocb_rng_normal(&r);
	qformat_quantize(f, x, w, pool, k);
	for (int64_t i = pool; i < m; i++)
		memcpy(w + (size_t)i * rb, w + (size_t)(i % pool) * rb, rb);
	free(x);
	*bytes = rb * (size_t)m;
	return w;
}

/* Involuntary context switches of this process so far, all threads (getrusage). */
static long preemptions(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_nivcsw;
}

/* Best time of one timed operation: over the repetitions no thread of the process was
 * preempted in (`clean`), and over all. On a machine shared with other busy processes a
 * timing that lost the core for a time slice or more says nothing about the kernel; a
 * short sleep before each one lets the scheduler hand out a fresh slice (the 2-core VM
 * this was written on ran at load 8-15, and best-of-15 cold timings still came out up to
 * 2x apart between runs). */
struct timing {
	double clean, all, last; /* best unpreempted, best of all, the latest (s) */
	int nclean;
};

#define TIMED(tm, op)                                                                        \
	do {                                                                                 \
		usleep(2000);                                                                \
		long c0_ = preemptions();                                                    \
		double t0_ = ocb_now_s();                                                    \
		op;                                                                          \
		double dt_ = ocb_now_s() - t0_;                                              \
		if (preemptions() == c0_) {                                                  \
			(tm)->nclean++;                                                      \
			(tm)->clean = dt_ < (tm)->clean ? dt_ : (tm)->clean;                 \
		}                                                                            \
		(tm)->all = dt_ < (tm)->all ? dt_ : (tm)->all;                               \
		(tm)->last = dt_;                                                            \
	} while (0)

/* the best clean time, or the best of all when no repetition ran unpreempted */
static double timing_best(const struct timing *t)
{
	return t->nclean ? t->clean : t->all;
}

struct fmt_result {
	double gemv_s, gbs, readbw, repack_s; /* readbw: the weights' own pages */
};

/* One GEMV configuration timed (the configs argument); ns 0: the defaults */
struct gconf {
	int ns, l1, l2; /* streams per thread, prefetch bytes (-1: the default) */
};
#define MAXCONF 16
#define MAXV 8 /* read loops (ocb_stream_sum_variants: at most 5) */

/* Put configuration c in force for the next GEMV calls */
static void conf_apply(const struct gconf *c)
{
	if (c->ns > 0) {
		char e[12];
		snprintf(e, sizeof e, "%d", c->ns);
		setenv("OCB_QGEMV_STREAMS", e, 1);
	}
	qk_prefetch_r16_set(c->l1, c->l2);
}

/* GOP/s of about 2 ms of the int8 peak loop on `threads` threads */
static double core_probe(int threads, uint64_t *sink)
{
	const long iters = 20000;
	double t0 = ocb_now_s();
	double ops = ocb_peak_int8(iters, threads, sink);
	return ops / (ocb_now_s() - t0) / 1e9;
}

/* The read loop with the lowest median time: rv holds nv loops' reps times each */
static int fastest_loop(const double *rv, int nv, int reps)
{
	int best = 0;
	double best_med = 1e30;
	for (int v = 0; v < nv; v++) {
		const double m = ocb_median(rv + v * reps, (size_t)reps);
		if (m < best_med)
			best_med = m, best = v;
	}
	return best;
}

/* The eviction buffer, streamed before each of the planner's timings as before ours */
struct evict {
	void *buf;
	size_t bytes;
	int threads;
	double sink;
};

static void evict_now(void *arg)
{
	struct evict *e = arg;
	e->sink += read_mem(0, e->buf, e->bytes, e->threads);
}

/* Time GEMV and read loop for one format; 0 or 3 (out of memory). */
static int measure(const struct qformat *f, int64_t n, int reps, int threads, void *ebuf,
		   size_t ebytes, const struct gconf *conf, int nconf, struct fmt_result *res)
{
	size_t wbytes = 0;
	enum qgemv_kind kind = qgemv_choose(f);
	void *w = make_weights(f, n, n, threads, &wbytes), *wr = NULL;
	float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
	void *xq = malloc(qformat_act_bytes(f, 1, n));
	void *buf = qrepack_alloc(wbytes);
	if (!w || !x || !y || !xq || !buf)
		goto oom;
	touch(buf, wbytes, 1, threads);
	res->repack_s = 0;
	if (qgemv_kind_r8(kind)) { /* the load-time step, timed apart; plain copy freed */
		if (!(wr = qrepack_alloc(qrepack_bytes(f, n, n)))) /* TQ1_0: larger */
			goto oom;
		double t0 = ocb_now_s();
		qrepack_pack(f, w, n, n, wr, threads);
		res->repack_s = ocb_now_s() - t0;
		qrepack_free(w);
		w = wr;
	}
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)(i % 97) / 97.0f - 0.5f;
	qformat_quantize_act(f, x, xq, 1, n);
	/* the default configuration runs what ocbench runs: the r16 kernels under the plan
	 * timed now (kernels/qgemv_plan.h), or the environment's settings */
	struct qgemv_plan_info plan = { 0 };
	struct evict ev = { ebuf, ebytes, threads, 0 };
	const struct qgemv_plan_opts popts = { NULL, 0, ebuf ? evict_now : NULL, &ev };
	const int planning = nconf == 1 && conf[0].ns == 0 && conf[0].l1 < 0 && conf[0].l2 < 0;
	if (planning && qgemv_kind_r8(kind) && qgemv_plan(f, w, n, n, xq, y, threads, &popts, &plan))
		goto oom;
	/* tg per configuration, tr per place (0: the weights' pages, 1: the other buffer) and
	 * read loop */
	int nv = ocb_stream_sum_variants();
	nv = nv < MAXV ? nv : MAXV;
	const void *place[2] = { w, buf };
	struct timing tg[MAXCONF], tr[2][MAXV], t0 = { 1e30, 1e30, 0, 0 };
	for (int c = 0; c < nconf; c++)
		tg[c] = t0;
	for (int v = 0; v < nv; v++)
		tr[0][v] = tr[1][v] = t0;
	double sink = 0;
	uint64_t psink = 0;
	/* core: the probe per repetition; rv: each place's and read loop's time per
	 * repetition (s), gv: each configuration's GEMV time per repetition (s) */
	double *core = malloc(sizeof(double) * (size_t)reps);
	double *rv = malloc(sizeof(double) * (size_t)(2 * reps * nv));
	double *gv = malloc(sizeof(double) * (size_t)(reps * nconf));
	double *tmp = malloc(sizeof(double) * (size_t)reps);
	if (!core || !rv || !gv || !tmp) {
		free(core), free(rv), free(gv), free(tmp);
		goto oom;
	}
#define GEMV() (qgemv_kind_r8(kind) ? qgemv_r8(f, w, n, n, xq, y, threads) \
				       : qgemv(f, w, n, n, xq, y, threads))
	for (int c = 0; c < nconf; c++) { /* warm-up */
		conf_apply(&conf[c]);
		GEMV();
	}
	sink += read_mem(0, buf, wbytes, threads);
	/* interleave GEMVs and reads so all see the same machine load */
	for (int r = 0; r < reps; r++) {
		for (int i = 0; i < nconf; i++) {
			const int c = (r + i) % nconf;
			conf_apply(&conf[c]);
			if (ebuf)
				sink += read_mem(0, ebuf, ebytes, threads);
			TIMED(&tg[c], GEMV());
			gv[c * reps + r] = tg[c].last;
		}
		for (int v = 0; v < nv; v++) {
			for (int i = 0; i < 2; i++) { /* the two places, first in turns */
				const int at = (r + v + i) % 2;
				if (ebuf)
					sink += read_mem(0, ebuf, ebytes, threads);
				TIMED(&tr[at][v], sink += read_mem(v, place[at], wbytes, threads));
				rv[(at * nv + v) * reps + r] = tr[at][v].last;
			}
		}
		core[r] = core_probe(threads, &psink);
	}
	const double core_med = ocb_median(core, (size_t)reps);
#undef GEMV
	/* The reference is one read loop, the one with the lowest median time, and its best
	 * of REPS timings: as many as each GEMV setting has. The best single timing of all
	 * nv loops together (printed as `any loop`) is a minimum over nv times as many
	 * draws, lower on a host whose speed is noisy even where the loops are alike. */
	const int vr = fastest_loop(rv, nv, reps), vo = fastest_loop(rv + nv * reps, nv, reps);
	double anyr = 1e30;
	for (int v = 0; v < nv; v++) {
		const double t = timing_best(&tr[0][v]);
		anyr = t < anyr ? t : anyr;
	}
	res->readbw = (double)wbytes / timing_best(&tr[0][vr]) / 1e9;
	const double otherbw = (double)wbytes / timing_best(&tr[1][vo]) / 1e9;
	const int strict = f->type == QF_Q8_0 || f->type == QF_Q4_0 || f->type == QF_TQ2_0;
	const double target = strict ? 85.0 : 70.0;
	for (int c = 0; c < nconf; c++) {
		conf_apply(&conf[c]); /* for the streams printed */
		const double best = timing_best(&tg[c]), gbs = (double)wbytes / best / 1e9;
		const double frac = 100.0 * gbs / res->readbw;
		for (int r = 0; r < reps; r++) /* the fraction within one moment of the host */
			tmp[r] = rv[vr * reps + r] / gv[c * reps + r];
		const double pair_med = 100.0 * ocb_median(tmp, (size_t)reps);
		if (c == 0)
			res->gemv_s = best, res->gbs = gbs;
		char pf[32] = "";
		int ns = qgemv_streams(f);
		if (conf[c].ns > 0 || conf[c].l1 >= 0 || conf[c].l2 >= 0)
			snprintf(pf, sizeof pf, " pf %d/%d", conf[c].l1, conf[c].l2);
		else if (plan.ncand > 0) {
			ns = plan.setting.streams;
			snprintf(pf, sizeof pf, " pf %d/%d", plan.setting.pf_l1, plan.setting.pf_l2);
		}
		printf("%-6s %-14s x%d%s %6.1f MB  gemv %7.3f ms %6.2f GB/s  read %6.2f GB/s (loop %d; "
		       "any loop %6.2f; another buffer %6.2f)  fraction %5.1f%% (target %2.0f%% %s)  "
		       "paired %5.1f%%  unpreempted %d of %d + %d of %d  core %5.0f GOP/s  "
		       "repack %7.1f ms  (y0=%g, sink %g %llu)\n",
		       f->name, qgemv_kind_name(kind), ns, pf, wbytes / 1e6, best * 1e3, gbs,
		       res->readbw, vr, (double)wbytes / anyr / 1e9, otherbw, frac, target,
		       frac >= target ? "ok" : "LOW", pair_med, tg[c].nclean, reps,
		       tr[0][vr].nclean, reps, core_med, res->repack_s * 1e3, y[0], sink,
		       (unsigned long long)psink);
	}
	if (plan.ncand > 0) {
		printf("%-6s plan  %.0f ms, %d rounds, median GB/s per setting (streams:L1:L2):", f->name,
		       plan.seconds * 1e3, plan.rounds);
		for (int j = 0; j < plan.ncand; j++)
			printf("  %d:%d:%d%s %.2f%s", plan.cand[j].streams, plan.cand[j].pf_l1,
			       plan.cand[j].pf_l2, plan.cand[j].threads == 1 ? "-1t" : "",
			       (double)wbytes / plan.median_s[j] / 1e9,
			       j == plan.chosen ? " (chosen)" : "");
		printf("\n");
		sink += ev.sink;
	} else if (plan.why) {
		printf("%-6s plan  none: %s\n", f->name, plan.why);
	}
	free(core), free(rv), free(gv), free(tmp);
	qrepack_free(w), qrepack_free(buf);
	free(x), free(y), free(xq);
	return 0;
oom:
	fprintf(stderr, "ocbench: quant_gemv_bw: out of memory for %s %lldx%lld\n", f->name,
		(long long)n, (long long)n);
	qrepack_free(w), qrepack_free(buf);
	free(x), free(y), free(xq);
	return 3;
}

/* The configs argument into conf[]: their count, or -1 (the error printed) */
static int parse_confs(const char *arg, struct gconf *conf)
{
	int nc = 0;
	for (const char *p = arg; *p;) {
		struct gconf c = { 0, -1, -1 };
		char *end;
		c.ns = (int)strtol(p, &end, 10);
		if (*end == ':')
			c.l1 = (int)strtol(end + 1, &end, 10);
		if (*end == ':')
			c.l2 = (int)strtol(end + 1, &end, 10);
		if (nc == MAXCONF || (c.ns != 1 && c.ns != 2 && c.ns != 4 && c.ns != 8) || c.l1 > 65536 ||
		    c.l2 > 65536 || c.l1 < -1 || c.l2 < -1 || (*end && *end != ',')) {
			fprintf(stderr, "ocbench: quant_gemv_bw: bad configuration list \"%s\" (at most %d of "
				"STREAMS:L1[:L2], streams 1, 2, 4 or 8, bytes 0..65536)\n", arg, MAXCONF);
			return -1;
		}
		conf[nc++] = c;
		p = end + (*end == ',');
	}
	return nc ? nc : (fprintf(stderr, "ocbench: quant_gemv_bw: empty configuration list\n"), -1);
}

int main(int argc, char **argv)
{
	/* before any OpenMP thread exists: the workers inherit this thread's MXCSR */
	_MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
	_MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
	int64_t n = argc > 1 ? atoll(argv[1]) : 16384;
	int reps = argc > 2 ? atoi(argv[2]) : 10;
	int threads = argc > 3 ? atoi(argv[3]) : ocb_cpu_cores();
	int evict = argc > 4 ? atoi(argv[4]) : 1;
	const char *list = argc > 5 ? argv[5] : "q8_0,q4_0,q4_1,q3_g,q2_g,tq2_0,tq1_0";
	struct gconf conf[MAXCONF] = { { 0, -1, -1 } };
	int nconf = 1;
	if (argc > 6 && (nconf = parse_confs(argv[6], conf)) < 0)
		return 2;
	if (argc > 7 || n <= 0 || n % 256 || reps <= 0 || threads <= 0) {
		fprintf(stderr, "ocbench: quant_gemv_bw: usage: quant_gemv_bw [n, a multiple of 256] "
			"[reps] [threads] [evict 0|1] [formats, comma-separated] "
			"[configs: STREAMS:L1[:L2],...]\n");
		return 2;
	}
	const struct qformat *fmts[QF_COUNT];
	int nf = 0;
	for (const char *p = list; *p && nf < QF_COUNT;) {
		char name[16];
		size_t len = strcspn(p, ",");
		snprintf(name, sizeof name, "%.*s", (int)(len < 15 ? len : 15), p);
		if (!(fmts[nf++] = qformat_find(name))) {
			fprintf(stderr, "ocbench: quant_gemv_bw: unknown format \"%s\"\n", name);
			return 2;
		}
		p += len + (p[len] == ',');
	}
	long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
	size_t ebytes = evict ? 2 * (size_t)(l3 > (32L << 20) ? l3 : (32L << 20)) : 0;
	void *ebuf = evict ? qrepack_alloc(ebytes) : NULL;
	if (evict && !ebuf) {
		fprintf(stderr, "ocbench: quant_gemv_bw: out of memory for the eviction buffer\n");
		return 3;
	}
	if (ebuf)
		touch(ebuf, ebytes, 2, threads);
	const struct ocb_cpu_id *cpu = ocb_cpu_id();
	printf("quant_gemv_bw: CPU %s (%s family 0x%x model 0x%x%s), L3 %ld MiB\n",
	       cpu->brand[0] ? cpu->brand : "unknown", cpu->vendor, cpu->family, cpu->model,
	       ocb_cpu_as() ? ": OCB_CPU_AS, the kernels' choices only" : "",
	       l3 > 0 ? l3 >> 20 : -1);
	printf("quant_gemv_bw: %lld x %lld, %d threads, best of %d, %s, read loop %s\n",
	       (long long)n, (long long)n, threads, reps,
	       evict ? "cold (L3 evicted before each timing)" : "hot",
	       ocb_stream_isa(1));
	struct fmt_result res[QF_COUNT] = { 0 };
	double t_of[QF_COUNT] = { 0 };
	for (int i = 0; i < nf; i++) {
		int rc = measure(fmts[i], n, reps, threads, ebuf, ebytes, conf, nconf, &res[i]);
		if (rc) {
			qrepack_free(ebuf);
			return rc;
		}
		t_of[fmts[i]->type] = res[i].gemv_s;
	}
	qrepack_free(ebuf);
	if (t_of[QF_Q8_0] > 0 && t_of[QF_Q4_0] > 0 && t_of[QF_TQ2_0] > 0)
		printf("speed ratio TQ2_0/Q4_0 %.2fx (bytes ratio %.2f)   Q4_0/Q8_0 %.2fx (bytes ratio %.2f)\n",
		       t_of[QF_Q4_0] / t_of[QF_TQ2_0], 18.0 / 32 / (66.0 / 256),
		       t_of[QF_Q8_0] / t_of[QF_Q4_0], 34.0 / 18);
	return 0;
}
