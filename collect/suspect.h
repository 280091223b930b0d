/* suspect: the anomaly rules that flag an ok result at the source (result.suspect), with
 * the reasons, so that a number that cannot be right is never shown as plain "ok":
 *   ci       the median's 95% CI half-width exceeds OCB_SUSPECT_CI_MULT x the target
 *            (with interleaved passes, the range of their own medians is quoted: a wide
 *            one says the host changed speed between passes, a narrow one that the
 *            samples of each pass spread)
 *   roof     the fraction of the roof exceeds OCB_SUSPECT_ROOF_MAX (a roof is an upper
 *            bound: above it, the work model, the ceiling or the timing is wrong)
 *   scaling  an N-thread median worse than the same case's 1-thread median (checked when
 *            the run has both); where the kernel ran the N-thread case on fewer threads
 *            by its own rule (struct ocb_result.team), the reason says so: still
 *            flagged, since the case is slower than one thread, but explained. A case
 *            the kernel ran on one thread is the 1-thread case's work timed twice: it is
 *            worse only where the two 95% CIs do not overlap (its low end above the
 *            1-thread high end); a median a hair above by chance is not a finding
 *   host     other processes kept the CPUs busy during the timed runs (collect/hostload.h):
 *            a team of spin-waiting threads on every core then loses a scheduler time
 *            slice per parallel region
 *   setup    the median is more than OCB_SUSPECT_REF_MAX times off (either way) a time
 *            the bench measured itself in set-up for the same kernel and data (the GEMV
 *            planner's median, struct ocb_result.ref_s): nothing but the host's speed
 *            differs between the two, and a VM's host was seen to halve a core's DRAM
 *            rate for minutes (quant_gemv q4_1 16384^2: 4.6 ms planned, 8.19 ms median
 *            with a CI of a few percent, Zen 5 VM, 4 Dec 2026)
 * Pure functions over struct ocb_result; the harness and the runner call them. */
#ifndef OCB_SUSPECT_H
#define OCB_SUSPECT_H

#include "../db/records.h"

#define OCB_SUSPECT_CI_MULT 3.0
#define OCB_SUSPECT_ROOF_MAX 1.05
/* host busy: other processes used more than this many CPUs on average, judged only over
 * at least OCB_SUSPECT_HOST_MIN_S of timed wall time (/proc/stat counts 10 ms ticks) */
#define OCB_SUSPECT_HOST_CPUS 0.5
#define OCB_SUSPECT_HOST_MIN_S 0.08
/* setup: the median over the set-up's time (or the inverse) beyond this; the same
 * kernel on the same data is otherwise within ~10-25% of it on the noisy VMs */
#define OCB_SUSPECT_REF_MAX 1.5

/* Appends one reason to r->suspect ("; " between reasons; cut at its size). */
void ocb_suspect_add(struct ocb_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The rules a result can check alone (ci, roof, host, setup), for an ok result with samples;
 * target_ci as in ocb_harness_opts, ncpus the machine's online CPUs (<= 0: host rule
 * off). Clears r->suspect first. Returns the number of reasons added. */
int ocb_suspect_check(struct ocb_result *r, double target_ci, int ncpus);

/* The host rule alone: 1 when r's timed runs lasted >= OCB_SUSPECT_HOST_MIN_S and other
 * processes used > OCB_SUSPECT_HOST_CPUS CPUs on average, more than the ncpus - threads
 * the case left free; *others (may be NULL) gets their average CPUs (capped at ncpus). */
int ocb_suspect_host_busy(const struct ocb_result *r, int ncpus, double *others);

/* The scaling rule: flags rn (threads > 1) when its median is worse than r1's (threads
 * == 1, same case; with rn->team == 1, when its CI lies wholly above r1's); both must be
 * ok with a median. Returns 1 when flagged, else 0. */
int ocb_suspect_scaling(struct ocb_result *rn, const struct ocb_result *r1);

#endif
