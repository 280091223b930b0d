/* suspect: see the header. */
#include "suspect.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ocb_suspect_add(struct ocb_result *r, const char *fmt, ...)
{
	size_t used = strlen(r->suspect), cap = sizeof r->suspect;
	if (used && used + 2 < cap) {
		memcpy(r->suspect + used, "; ", 3);
		used += 2;
	}
	if (used + 1 >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->suspect + used, cap - used, fmt, ap);
	va_end(ap);
}

/* "7.99 ms" */
static void fmt_time(char *buf, size_t len, double s)
{
	if (s >= 1)
		snprintf(buf, len, "%.3g s", s);
	else if (s >= 1e-3)
		snprintf(buf, len, "%.3g ms", s * 1e3);
	else if (s >= 1e-6)
		snprintf(buf, len, "%.3g us", s * 1e6);
	else
		snprintf(buf, len, "%.3g ns", s * 1e9);
}

static int usable(const struct ocb_result *r)
{
	return strcmp(r->status, "ok") == 0 && r->st.n > 0 && r->st.median > 0 &&
	       isfinite(r->st.median);
}

int ocb_suspect_check(struct ocb_result *r, double target_ci, int ncpus)
{
	int n = 0;
	r->suspect[0] = '\0';
	if (!usable(r))
		return 0;
	double half = 0.5 * (r->st.ci_high - r->st.ci_low) / r->st.median;
	if (r->st.n > 1 && target_ci > 0 && half > OCB_SUSPECT_CI_MULT * target_ci) {
		char passes[96] = "";
		if (r->passes > 1 && r->pass_lo > 0 && isfinite(r->pass_hi)) {
			char lo[32], hi[32];
			fmt_time(lo, sizeof lo, r->pass_lo);
			fmt_time(hi, sizeof hi, r->pass_hi);
			snprintf(passes, sizeof passes, " (%d passes' medians %s to %s, x%.2f)",
				 r->passes, lo, hi, r->pass_hi / r->pass_lo);
		}
		ocb_suspect_add(r, "CI +-%.1f%% > %.0fx the %.3g%% target%s", 100 * half,
				OCB_SUSPECT_CI_MULT, 100 * target_ci, passes);
		n++;
	}
	if (isfinite(r->bound_frac) && r->bound_frac > OCB_SUSPECT_ROOF_MAX) {
		ocb_suspect_add(r, "%.0f%% of its roof %s (> %.0f%%)", 100 * r->bound_frac,
				r->bound, 100 * OCB_SUSPECT_ROOF_MAX);
		n++;
	}
	const double ref = r->ref_s > 0 && isfinite(r->ref_s) ? r->st.median / r->ref_s : 1.0;
	if (ref > OCB_SUSPECT_REF_MAX || ref < 1.0 / OCB_SUSPECT_REF_MAX) {
		ocb_suspect_add(r, "%.2fx the %.3g ms its set-up timed for the same kernel and data "
				"(> %.1fx either way): the host's speed changed between", ref,
				1e3 * r->ref_s, OCB_SUSPECT_REF_MAX);
		n++;
	}
	double others = 0;
	if (ocb_suspect_host_busy(r, ncpus, &others)) {
		ocb_suspect_add(r, "host busy: other processes used %.1f of %d CPUs", others, ncpus);
		n++;
	}
	return n;
}

int ocb_suspect_host_busy(const struct ocb_result *r, int ncpus, double *others)
{
	if (others)
		*others = 0;
	if (ncpus <= 0 || !(r->host_wall_s >= OCB_SUSPECT_HOST_MIN_S))
		return 0;
	double o = r->host_others_s / r->host_wall_s;
	if (o > ncpus)
		o = ncpus; /* tick rounding */
	if (others)
		*others = o;
	return o > OCB_SUSPECT_HOST_CPUS && r->threads + o > ncpus;
}

int ocb_suspect_scaling(struct ocb_result *rn, const struct ocb_result *r1)
{
	if (!usable(rn) || !usable(r1) || rn->threads <= 1 || r1->threads != 1)
		return 0;
	if (!(rn->st.median > r1->st.median))
		return 0;
	/* run on one thread by the kernel's own rule: two timings of one thread's work,
	 * worse only where their CIs part */
	if (rn->team == 1 && !(rn->st.ci_low > r1->st.ci_high))
		return 0;
	char a[32], b[32];
	fmt_time(a, sizeof a, rn->st.median);
	fmt_time(b, sizeof b, r1->st.median);
	char team[96] = "";
	if (rn->team > 0 && rn->team < rn->threads)
		snprintf(team, sizeof team,
			 ": the kernel ran it on %d thread%s, too small a product to split",
			 rn->team, rn->team == 1 ? "" : "s");
	ocb_suspect_add(rn, "%d threads slower than 1 (%s vs %s, x%.2f)%s", rn->threads, a, b,
			rn->st.median / r1->st.median, team);
	return 1;
}
