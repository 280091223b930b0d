#include "ceiling_rules.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ocb_ceiling_rules_default(struct ocb_ceiling_rules *r)
{
	*r = (struct ocb_ceiling_rules){
		.trials_min = 3, .spread_max = 0.10, .cap_spread_max = 0.5, .balance_min = 0.6, .share_min = 0.9,
		.scale_min = 0.95,
		.sgemm_peak_max = 1.02, .sgemm_peak_min = 0.5,
		.order_tol = 1.05, .triad_lo = 0.85, .triad_hi = 1.15, .read_lo = 0.7,
		.read_hi = 1.7,
	};
}

/* Appends one reason to c->suspect ("; " between reasons, cut to fit). */
__attribute__((format(printf, 2, 3))) static void flag(struct ocb_ceiling *c, const char *fmt,
						       ...)
{
	char why[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	size_t len = strlen(c->suspect);
	snprintf(c->suspect + len, sizeof c->suspect - len, "%s%s", len ? "; " : "", why);
}

static struct ocb_ceiling *find(struct ocb_ceiling *c, size_t n, const char *kind,
				int threads)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].threads == threads && strcmp(c[i].kind, kind) == 0 && c[i].value > 0)
			return &c[i];
	return NULL;
}

static int scales_per_core(const char *kind)
{
	static const char *const k[] = {"flops_fp32", "ops_int8", "flops_sgemm", "bw_l1",
					"bw_l2", "bw_l1_triad", "bw_l2_triad"};
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
		if (strcmp(kind, k[i]) == 0)
			return 1;
	return 0;
}

/* trials, balance and scaling: rules about one ceiling (and its 1-thread twin). */
static void check_each(struct ocb_ceiling *c, size_t n, const struct ocb_ceiling_rules *r)
{
	for (size_t i = 0; i < n; i++) {
		struct ocb_ceiling *x = &c[i];
		/* a capacity's trials count the clean ones: 0 is a count, not "unknown" */
		int cap = strncmp(x->kind, "cap_", 4) == 0;
		if ((x->trials > 0 || cap) && x->trials < r->trials_min)
			flag(x, "only %d trial(s) (< %d)", x->trials, r->trials_min);
		double smax = strncmp(x->kind, "cap_", 4) == 0 ? r->cap_spread_max : r->spread_max;
		if (x->trials > 0 && x->spread > smax)
			flag(x, "trials spread %.0f%% (> %.0f%%)", 100 * x->spread, 100 * smax);
		if (x->balance > 0 && x->balance < r->balance_min)
			flag(x, "slowest thread at %.2fx the fastest (< %.2fx): a core is shared",
			     x->balance, r->balance_min);
		if (x->cpu_share > 0 && x->cpu_share < r->share_min)
			flag(x, "a thread got %.1f%% of its core (< %.0f%%): another task ran there",
			     100 * x->cpu_share, 100 * r->share_min);
		struct ocb_ceiling *one = x->threads > 1 && scales_per_core(x->kind)
						  ? find(c, n, x->kind, 1) : NULL;
		if (one && x->value < r->scale_min * one->value)
			flag(x, "%d threads below 1 thread (%.1f < %.2f x %.1f)", x->threads,
			     x->value, r->scale_min, one->value);
	}
}

static void check_sgemm(struct ocb_ceiling *c, size_t n, const struct ocb_ceiling_rules *r)
{
	for (size_t i = 0; i < n; i++) {
		struct ocb_ceiling *sg = &c[i];
		if (strcmp(sg->kind, "flops_sgemm") != 0 || !(sg->value > 0))
			continue;
		struct ocb_ceiling *fp = find(c, n, "flops_fp32", sg->threads);
		if (!fp)
			continue;
		double max = r->sgemm_peak_max;
		if (sg->value > max * fp->value) {
			flag(sg, "above the FMA peak (%.1f > %.2f x %.1f)", sg->value, max, fp->value);
			flag(fp, "below sgemm (%.1f x %.2f < %.1f)", fp->value, max, sg->value);
		}
		if (sg->value < r->sgemm_peak_min * fp->value)
			flag(sg, "far below the FMA peak (%.1f < %.2f x %.1f)", sg->value,
			     r->sgemm_peak_min, fp->value);
	}
}

/* L1 >= L2 >= L3 >= DRAM for every pair of levels present (a level may be missing). */
static void check_order(struct ocb_ceiling *c, size_t n, const struct ocb_ceiling_rules *r)
{
	static const char *const lv[4] = {"bw_l1", "bw_l2", "bw_l3", "bw_dram"};
	for (size_t i = 0; i < n; i++) {
		if (strncmp(c[i].kind, "bw_", 3) != 0)
			continue;
		int triad = strstr(c[i].kind, "_triad") != NULL;
		int th = c[i].threads;
		for (int a = 0; a < 4; a++) {
			char ka[32];
			snprintf(ka, sizeof ka, "%s%s", lv[a], triad ? "_triad" : "");
			if (strcmp(ka, c[i].kind) != 0)
				continue;
			for (int b = 0; b < 4; b++) {
				char kb[32];
				snprintf(kb, sizeof kb, "%s%s", lv[b], triad ? "_triad" : "");
				struct ocb_ceiling *o = find(c, n, kb, th);
				if (!o || b == a)
					continue;
				if (b > a && o->value > r->order_tol * c[i].value)
					flag(&c[i], "below %s (%.1f < %.1f)", kb, c[i].value, o->value);
				if (b < a && c[i].value > r->order_tol * o->value)
					flag(&c[i], "above %s (%.1f > %.1f)", kb, c[i].value, o->value);
			}
		}
	}
}

static void check_stream(struct ocb_ceiling *c, size_t n, const struct ocb_ceiling_xcheck *xc,
			 size_t nx, const struct ocb_ceiling_rules *r)
{
	for (size_t k = 0; xc && k < nx; k++) {
		double st = xc[k].stream_triad;
		if (!(st > 0))
			continue;
		struct ocb_ceiling *t = find(c, n, "bw_dram_triad", xc[k].threads);
		struct ocb_ceiling *d = find(c, n, "bw_dram", xc[k].threads);
		if (t && (t->value / st < r->triad_lo || t->value / st > r->triad_hi))
			flag(t, "bw_dram_triad / STREAM triad %.1f = %.2f outside [%.2f, %.2f]", st,
			     t->value / st, r->triad_lo, r->triad_hi);
		if (d && (d->value / st < r->read_lo || d->value / st > r->read_hi))
			flag(d, "bw_dram / STREAM triad %.1f = %.2f outside [%.2f, %.2f]", st,
			     d->value / st, r->read_lo, r->read_hi);
	}
}

size_t ocb_ceilings_check(struct ocb_ceiling *c, size_t n, const struct ocb_ceiling_xcheck *xc,
			  size_t nx, const struct ocb_ceiling_rules *r)
{
	size_t bad = 0;
	for (size_t i = 0; i < n; i++)
		c[i].suspect[0] = '\0';
	check_each(c, n, r);
	check_sgemm(c, n, r);
	check_order(c, n, r);
	check_stream(c, n, xc, nx, r);
	for (size_t i = 0; i < n; i++)
		bad += c[i].suspect[0] != '\0';
	return bad;
}
