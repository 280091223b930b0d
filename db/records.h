/* records: the rows ocbench stores, as plain structs shared by collect/ (which fills
 * them), db/ (which writes and reads them) and report/ (which reads them).
 * Column meanings are those of DESIGN.md "The store". */
#ifndef OCB_RECORDS_H
#define OCB_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "../common/ocb_roofline.h"
#include "../common/ocb_stats.h" /* struct ocb_stats */

/* One machine: what the host fingerprint probes. `fingerprint` is a stable hash of the
 * hardware/OS/compiler fields (hex), the machine's identity across databases. */
struct ocb_machine {
	char fingerprint[65];
	char hostname[256];
	char cpu_model[256];
	char isa[512];          /* space-separated feature flags that matter: "avx2 fma ..." */
	int cores, threads;
	int64_t l1d_bytes, l2_bytes, l3_bytes, mem_bytes;
	char os[256];
	char compiler[256];     /* "gcc 12.2.0 -O2 ..." */
	char blas[256];         /* openblas_get_config() */
	char papi_version[64];  /* "" when PAPI is unusable */
	int is_vm;
	/* The measured last-level cache capacity in bytes, from this machine's 'cap_llc'
	 * ceiling (ocb_machine_use_llc, collect/ceiling_llc.h); 0 = not measured. Not a
	 * machine column and not in the fingerprint: it is a measurement. Where > 0 it
	 * replaces l3_bytes in the roofline's level rule, the size bands of the ceilings,
	 * the canaries and the benches' rotation buffers. */
	int64_t llc_bytes;
};

/* One measured machine limit. kind: 'flops_fp32' (FMA kernel), 'flops_sgemm' (OpenBLAS),
 * 'ops_int8' (int8 dot chain, GOP/s, 2 ops per multiply-accumulate), 'bw_l1' 'bw_l2'
 * 'bw_l3' 'bw_dram' (read sweep), and the same with '_triad'.
 * unit: "GFLOP/s", "GOP/s" or "GB/s". method: how it was measured, human-readable, with
 * each thread's own rate of the best trial ("; per-thread {...}") where there is one.
 * New fields go at the end: callers initialise the first five positionally. */
struct ocb_ceiling {
	char kind[32];
	int threads;
	double value;
	char unit[16];
	char method[320];
	int trials;         /* independent best-of trials behind value; 0 = unknown (old row) */
	double spread;      /* (best - worst) / best over those trials; ignored if trials 0 */
	double balance;     /* slowest / fastest thread's own rate, in (0, 1]; 0 = not
			     * measured (1 thread, OpenBLAS, or read back: not stored) */
	double cpu_share;   /* least CPU time / wall time a thread got, in (0, 1]: below 1
			     * another task ran on its core; 0 = not measured (not stored) */
	char suspect[160];  /* "" = passed the consistency rules, else the reason(s) */
};

/* One counter reading of a case. Unavailable: available = 0, value ignored (stored
 * NULL), reason = PAPI's word for why. value is per repetition of the timed region. */
struct ocb_counter_val {
	char event[64];
	double value;
	int available;
	char reason[160];
	double multiplex_ratio; /* fraction of time the event was counted; 1 if not multiplexed */
};

/* One benchmark case's result. Owned pointers: params_json, samples, counters
 * (released by ocb_result_release), cpu_samples. status: "ok" | "failed" | "skipped". */
struct ocb_result {
	char suite[32];
	char bench[64];
	char *params_json;   /* canonical JSON (sorted keys, no spaces) */
	char variant[32];    /* "avx2", "ref", "openblas", ... */
	int threads;
	char unit[16];       /* unit of samples: "s" */
	struct ocb_stats st;
	double *samples;
	size_t nsamples;
	double *cpu_samples; /* [nsamples] process CPU seconds per call of the same samples
			      * (all threads: ~threads x samples when they all work), or NULL */
	double flops, bytes; /* static work model of one repetition */
	double check_err;    /* max error vs the reference; NaN if unchecked */
	char bound[32];      /* ceiling kind this case is bounded by ("bw_dram", ...) or "" */
	double bound_frac;   /* achieved / that ceiling, NaN if unknown */
	char status[16];
	char error[256];
	char suspect[256];   /* ok but not to be trusted: the reasons, "; "-separated
				(collect/suspect.h); "" when none (stored NULL) */
	int timing_only;     /* 1 when no PAPI counters were recorded */
	int err_status;      /* failed: the OCB_E* status that failed it (not stored) */
	/* CPU time other processes used during the timed runs, and the wall time of those
	 * runs, summed over passes (collect/hostload.h; not stored: suspect says it). */
	double host_others_s, host_wall_s;
	/* A time of one repetition the bench measured in its set-up (struct ocb_bench
	 * .reference_s), s; 0 = none. Not stored: it feeds the "setup" suspect rule. */
	double ref_s;
	/* Interleaved passes merged into this result (ocb_harness_merge; 0 or 1: none) and
	 * the lowest and highest of their medians, s. Not stored: the "ci" suspect reason
	 * quotes them. */
	int passes;
	double pass_lo, pass_hi;
	/* Threads the kernel really ran on where fewer than `threads` (struct ocb_bench
	 * .team); 0 = as asked. Not stored: the scaling reason says it. */
	int team;
	struct ocb_counter_val *counters;
	size_t ncounters;
};

/* The roofline module's views (common/ocb_roofline.h) of these records. */
/* out[i] borrows c[i].kind; out has room for n. */
void ocb_ceiling_view(const struct ocb_ceiling *c, size_t n, struct ocb_roof_ceil *out);
/* Cache sizes and CPU counts of *m; m NULL -> all unknown (0). */
void ocb_machine_caches(const struct ocb_machine *m, struct ocb_roof_caches *out);

/* The measured last-level capacity of c[0..n) in bytes: the 'cap_llc' ceiling
 * (collect/ceiling_llc.h), 1 thread. A flagged one counts only where it is below
 * reported_l3 (the size the OS reports, bytes; <= 0 = unknown): a reported size is an
 * upper bound a VM may not deliver, and a flagged reading under it is the better guess.
 * 0 = none usable (the reported size stands). */
double ocb_ceiling_llc_bytes(const struct ocb_ceiling *c, size_t n, double reported_l3);

/* m->llc_bytes = ocb_ceiling_llc_bytes(c, n, m->l3_bytes). Returns 1 when the capacity
 * it set is a flagged one (the caller says so), else 0. */
int ocb_machine_use_llc(struct ocb_machine *m, const struct ocb_ceiling *c, size_t n);

/* Frees the owned pointers of r and zeroes it; NULL-safe. */
void ocb_result_release(struct ocb_result *r);

/* What a run is, written when it begins. All strings borrowed. */
struct ocb_run_info {
	const char *uuid;
	int64_t machine_id;
	const char *suite;       /* "all", "baseline", "baseline,train" ... */
	const char *label;       /* may be NULL */
	const char *ocbench_version;
	const char *git_sha;
	const char *cmdline;
	const char *config_json; /* canonical JSON of the options */
	uint64_t seed;
	const char *started_at;  /* UTC ISO-8601 start; NULL: now (an import keeps its file's) */
};

/* One run row as readers show it (db/store_query.h ocb_run_load). status is the stored
 * word; shown is what a reader prints (run_live.h: a 'running' run whose process is gone
 * shows "aborted", one on another host "running(other host)"). */
struct ocb_run {
	int64_t id, machine_id, pid;
	char uuid[40];
	char suite[128], label[128];
	char status[16], shown[24];
	char hostname[256], boot_id[64];     /* of the writing process */
	char started_at[32], finished_at[32];
	char ocbench_version[32], git_sha[64];
	int quick;                           /* config_json "quick": 1, 0, or -1 not recorded */
	char machine_host[256], cpu_model[256], fingerprint[65];
};

/* "quick", "full" or "-" (not recorded: imports, old runs). */
const char *ocb_run_mode(const struct ocb_run *r);

#endif
