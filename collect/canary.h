/* canary: drift canaries, a small fixed set of kernels every run measures at its start,
 * middle and end (and `ocbench ab` around its rounds), so that a change of the machine
 * itself (another tenant, a frequency change, a neighbour's cache traffic) is seen beside
 * the verdicts instead of being mistaken for a regression. One per bottleneck:
 *   fma    an FMA loop on registers/L1 (kernels/peak_fma)          GFLOP/s
 *   l3     a read (sum) of a working set inside the L3 band        GB/s
 *   dram   a read of a working set beyond the L3 share              GB/s
 *   sgemm  a short OpenBLAS sgemm whose three matrices fit in L2    GFLOP/s
 * Working sets come from the machine's caches through ocb_ceilings_bands (the same bands
 * the roofline ceilings use), never from constants: L3 at the geometric middle of the L3
 * band, DRAM at the DRAM band's lower edge, sgemm's n the largest multiple of 16 with
 * 3 n^2 4 bytes <= L2. Each canary runs on every core (OpenMP / OpenBLAS threads =
 * cores), so a competing process on any core slows it. Repetitions inside one timed call
 * are calibrated once (a call lasts >= OCB_CANARY_CALL_S). */
#ifndef OCB_CANARY_H
#define OCB_CANARY_H

#include <stddef.h>

#include "../db/records.h"

enum { OCB_CANARY_FMA, OCB_CANARY_L3, OCB_CANARY_DRAM, OCB_CANARY_SGEMM, OCB_CANARY_N };

/* Checkpoints of a run. */
enum { OCB_CANARY_START, OCB_CANARY_MID, OCB_CANARY_END, OCB_CANARY_NPOINT };

#define OCB_CANARY_CALL_S 0.004 /* shortest timed call: well above timer resolution */
#define OCB_CANARY_TRIALS 5     /* timed calls per canary per checkpoint (median) */

/* Stable names ("canary_fma", "canary_read_l3", "canary_read_dram", "canary_sgemm"),
 * units ("GFLOP/s" / "GB/s"), and checkpoint names ("start", "mid", "end"). */
extern const char *const ocb_canary_name[OCB_CANARY_N];
extern const char *const ocb_canary_unit[OCB_CANARY_N];
extern const char *const ocb_canary_point[OCB_CANARY_NPOINT];

/* Sizes, pure (from *m; unknown caches fall back as in ocb_ceilings_bands). */
struct ocb_canary_plan {
	int threads;         /* team size: m->cores (>= 1) */
	size_t l3_floats;    /* floats read by the L3 canary (whole team) */
	size_t dram_floats;  /* floats read by the DRAM canary (whole team) */
	int sgemm_n;         /* n of the n x n x n sgemm (>= 16) */
};
void ocb_canary_plan(const struct ocb_machine *m, struct ocb_canary_plan *p);

/* The canaries' buffers and calibrated repetitions. */
struct ocb_canaries {
	struct ocb_canary_plan plan;
	long reps[OCB_CANARY_N]; /* iterations (fma) or passes per timed call */
	float *l3, *dram, *mat;  /* ocb_alloc'd; mat holds A, B, C of the sgemm */
};

/* Allocates, fills and calibrates for machine *m. On failure everything is released
 * and a negative status returned. Release with ocb_canaries_release. */
int ocb_canaries_init(struct ocb_canaries *c, const struct ocb_machine *m);
/* The same with the bands of a --quick run when quick (ocb_ceilings_bands(m, 1): a
 * smaller DRAM read, for CI-sized runs). */
int ocb_canaries_init_mode(struct ocb_canaries *c, const struct ocb_machine *m, int quick);
/* The same, with the repetitions of an earlier calibration of the same plan (reps[k]
 * > 0; NULL: calibrate): later checkpoints of one run skip the calibration. */
int ocb_canaries_init_reps(struct ocb_canaries *c, const struct ocb_machine *m, int quick,
			   const long reps[OCB_CANARY_N]);
void ocb_canary_plan_mode(const struct ocb_machine *m, int quick, struct ocb_canary_plan *p);
void ocb_canaries_release(struct ocb_canaries *c);

/* One checkpoint: OCB_CANARY_TRIALS timed calls of each canary, in turn; rate[k] is the
 * median rate of canary k (units above). Returns OCB_OK. */
int ocb_canaries_measure(struct ocb_canaries *c, double rate[OCB_CANARY_N]);

/* The drift of a run from its checkpoints' rates (pure). ratio[k] is the worst of
 * start/mid and start/end of canary k as a time ratio (> 1: the machine got slower),
 * "worst" meaning farthest from 1 in log; worst_k the canary farthest from 1 overall;
 * drifted = |ratio[worst_k] - 1| > threshold (or its inverse for a speed-up). A NaN rate
 * leaves that canary's ratio NaN and out of the verdict. */
struct ocb_canary_drift {
	double ratio[OCB_CANARY_N];
	int worst_k; /* -1 when no canary has a ratio */
	int drifted;
};
void ocb_canary_drift(const double rate[OCB_CANARY_NPOINT][OCB_CANARY_N], double threshold,
		      struct ocb_canary_drift *d);

/* Between two runs: ratio[k] = base_rate / cand_rate (a time ratio like compare's
 * cand / base: > 1 means the machine ran that canary slower during CAND). */
void ocb_canary_between(const double base[OCB_CANARY_N], const double cand[OCB_CANARY_N],
			double ratio[OCB_CANARY_N]);

#endif
