/* sec_roofline: the roofline plot (Williams, Waterman & Patterson 2009; REFERENCE.md §3).
 * Log-log, x = operational intensity (static FLOPs / static bytes of one repetition),
 * y = achieved GFLOP/s (FLOPs / median time). One diagonal per memory level of each
 * machine's measured read bandwidth ("L1 - N GB/s", clipped at the highest peak), one
 * horizontal per compute peak ("N GFLOP/s"), every kernel result a point, the legend by
 * suite and compute roof (and machine when several are overlaid). Ceilings are drawn at
 * the thread counts the points were measured with. Every compute roof is drawn: fp32
 * FMA ("flops_fp32"), OpenBLAS sgemm ("flops_sgemm") and int8 dot ("ops_int8", GOP/s:
 * the y value of an int8 kernel is its int8 operations per second); a roof a point is
 * bound by that was never measured is named in a note on the plot ("no roof"). */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_roofline.h"
#include "escape.h"
#include "gnuplot.h"
#include "rctx.h"

static const char *const levels[][2] = {
	{"bw_l1", "L1"}, {"bw_l2", "L2"}, {"bw_l3", "L3"}, {"bw_dram", "DRAM"}};

/* A compute ceiling: GFLOP/s ("flops_*") or GOP/s ("ops_*"). */
static int is_compute(const char *kind)
{
	return !strncmp(kind, "flops_", 6) || !strncmp(kind, "ops_", 4);
}

/* The compute roof a row is measured against (ocb_roof_parse), "" for bandwidth-only. */
static void row_roof(const struct ocb_rrow *r, char *ck, size_t len)
{
	char bk[32];
	if (len < sizeof bk || ocb_roof_parse(r->bound, ck, bk, sizeof bk) != 0)
		ck[0] = '\0';
}

/* Points of one plot group. Several machines overlaid (multi): grouped by machine and
 * threads only (one colour per machine, one marker per thread count), else by suite and
 * compute roof too. */
static int same_group(const struct ocb_rrow *a, const struct ocb_rrow *b, int multi)
{
	if (multi)
		return a->machine_id == b->machine_id && a->threads == b->threads;
	char ka[32], kb[32];
	row_roof(a, ka, sizeof ka);
	row_roof(b, kb, sizeof kb);
	return !strcmp(a->suite, b->suite) && a->machine_id == b->machine_id && !strcmp(ka, kb) &&
	       a->threads == b->threads;
}

/* Same (suite, machine, roof) whatever the threads: one colour. */
static int same_colour(const struct ocb_rrow *a, const struct ocb_rrow *b, int multi)
{
	if (multi)
		return a->machine_id == b->machine_id;
	char ka[32], kb[32];
	row_roof(a, ka, sizeof ka);
	row_roof(b, kb, sizeof kb);
	return !strcmp(a->suite, b->suite) && a->machine_id == b->machine_id && !strcmp(ka, kb);
}

/* Database text made safe inside a datablock's double-quoted string and a tooltip:
 * letters, digits and a few signs; anything else becomes '_'. */
static void tip_safe(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr(" _.,:=/%()+-", *s)))
			*s = '_';
}

/* Line (and, overlaid, point) colours of the machines, in x->mc order. */
static const char *const machine_rgb[] = {"#555555", "#b03a2e", "#1f618d", "#7d6608"};
#define NMACHINE_RGB (sizeof machine_rgb / sizeof *machine_rgb)

/* Point colours of the (suite, roof) groups of one machine's plot, in first-seen order:
 * Tableau 10 (M. Stone's palette, told apart in print and by most colour-blind readers).
 * gnuplot's own line types repeat after 8, and a full run has 10 groups: two of them
 * were drawn alike (baseline sgemm and ternary int8 points, both purple circles). */
static const char *const group_rgb[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
					"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
#define NGROUP_RGB (sizeof group_rgb / sizeof *group_rgb)

/* Point types per thread count (first seen order), filled: circle, square, triangle,
 * inverted triangle, diamond, pentagon; gnuplot's open form of each is one less, used
 * for the second round of colours. */
static const int thr_pt[] = {7, 5, 9, 11, 13, 15};
#define NTHR_PT (sizeof thr_pt / sizeof *thr_pt)

static int plottable(const struct ocb_rrow *r)
{
	return strcmp(r->status, "ok") == 0 && r->flops > 0 && r->bytes > 0 &&
	       !isnan(ocb_rrow_gflops(r));
}

/* Appends a printf'd piece to a growing plot command. */
static int cat(char **buf, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int cat(char **buf, size_t *len, const char *fmt, ...)
{
	char *piece = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&piece, fmt, ap);
	va_end(ap);
	if (n < 0)
		return ocb_seterr(OCB_ENOMEM, "roofline");
	char *nb = realloc(*buf, *len + (size_t)n + 1);
	if (!nb) {
		free(piece);
		return ocb_seterr(OCB_ENOMEM, "roofline");
	}
	memcpy(nb + *len, piece, (size_t)n + 1);
	*buf = nb;
	*len += (size_t)n;
	free(piece);
	return OCB_OK;
}

/* The plot command pieces that carry database text are escaped into a memory stream. */
static char *esc_title(const char *a, const char *b)
{
	char *s = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&s, &n);
	if (!m)
		return NULL;
	char *joined = NULL;
	if (asprintf(&joined, "%s%s%s", a, b && *b ? " on " : "", b ? b : "") < 0) {
		fclose(m);
		free(s);
		return NULL;
	}
	ocb_esc_gnuplot(m, joined);
	free(joined);
	fclose(m);
	return s;
}

/* Appends "<what> title <label>" (label escaped, with host when given) to the plot
 * command. */
static int add_plot(char **cmd, size_t *clen, const char *what, const char *label,
		    const char *host)
{
	char *t = esc_title(label, host);
	int rc = t ? cat(cmd, clen, "%s%s title %s", *cmd ? ", " : "plot ", what, t)
		   : ocb_seterr(OCB_ENOMEM, "roofline");
	free(t);
	return rc;
}

/* The index of threads t among the plotted thread counts (first seen order). */
static size_t thr_index(const struct ocb_rctx *x, int t)
{
	int seen[16];
	size_t n = 0;
	for (size_t i = 0; i < x->rs.n && n < 16; i++) {
		if (!plottable(&x->rs.r[i]))
			continue;
		size_t k = 0;
		while (k < n && seen[k] != x->rs.r[i].threads)
			k++;
		if (k == n)
			seen[n++] = x->rs.r[i].threads;
		if (seen[k] == t)
			return k;
	}
	return 0;
}

/* The marker of a point at `threads` in colour ci of a palette of ncol: the thread
 * count's shape, open from the palette's second round on (filled in the third, ...) */
static int marker(const struct ocb_rctx *x, int threads, size_t ci, size_t ncol)
{
	return thr_pt[thr_index(x, threads) % NTHR_PT] - (int)(ci / ncol % 2);
}

/* Labels: the fastest point of each named kernel (bench) carries its name. */
static void point_labels(const struct ocb_rctx *x, FILE *f)
{
	int tag = 100;
	for (size_t i = 0; i < x->rs.n; i++) {
		const struct ocb_rrow *r = &x->rs.r[i];
		if (!plottable(r))
			continue;
		int best = 1; /* the fastest of its bench on its machine (the first of equals) */
		for (size_t j = 0; j < x->rs.n && best; j++) {
			const struct ocb_rrow *q = &x->rs.r[j];
			if (j == i || !plottable(q) || strcmp(q->bench, r->bench) ||
			    q->machine_id != r->machine_id)
				continue;
			double gq = ocb_rrow_gflops(q), gr = ocb_rrow_gflops(r);
			best = gq < gr || (gq == gr && j > i);
		}
		if (!best)
			continue;
		char *lt = esc_title(r->bench, NULL);
		if (lt)
			fprintf(f, "set label %d %s at %.9g, %.9g offset char 0.6, char 0.5 font ',9' front\n",
				tag++, lt, r->flops / r->bytes, ocb_rrow_gflops(r));
		free(lt);
	}
}

/* The colour of every plottable row (index of its colour group in first-seen order)
 * into col[0..rs.n); whether it starts a plot group into start[]. One pass over the rows
 * against the groups seen so far: O(rows x groups). OCB_ENOMEM. */
static int point_groups(const struct ocb_rctx *x, int multi, size_t *col, char *start)
{
	size_t *crep = calloc(x->rs.n + 1, sizeof *crep), *grep = calloc(x->rs.n + 1, sizeof *grep);
	size_t nc = 0, ng = 0;
	if (!crep || !grep) {
		free(crep);
		free(grep);
		return ocb_seterr(OCB_ENOMEM, "roofline");
	}
	for (size_t i = 0; i < x->rs.n; i++) {
		const struct ocb_rrow *r = &x->rs.r[i];
		start[i] = 0;
		if (!plottable(r))
			continue;
		size_t c = 0, g = 0;
		while (c < nc && !same_colour(&x->rs.r[crep[c]], r, multi))
			c++;
		if (c == nc)
			crep[nc++] = i;
		col[i] = c;
		while (g < ng && !same_group(&x->rs.r[grep[g]], r, multi))
			g++;
		if (g == ng) {
			grep[ng++] = i;
			start[i] = 1;
		}
	}
	free(crep);
	free(grep);
	return OCB_OK;
}

/* Points: one datablock per (suite, machine, compute roof, threads) group, in rs order:
 * the colour says the (suite, machine, roof), the marker the thread count; each point
 * carries a tooltip (case, threads, value, fraction of its roof: gnuplot's hypertext,
 * turned into an SVG <title> by the HTML page). A label for a roof a group is bound by
 * that its machine never measured. */
static int plot_points(const struct ocb_rctx *x, FILE *f, int multi, char **cmd, size_t *clen)
{
	size_t ngroups = 0, *colours = calloc(x->rs.n + 1, sizeof *colours);
	char *starts = calloc(x->rs.n + 1, 1);
	int rc = colours && starts ? point_groups(x, multi, colours, starts)
				   : ocb_seterr(OCB_ENOMEM, "roofline");
	for (size_t i = 0; i < x->rs.n && !rc; i++) {
		const struct ocb_rrow *r = &x->rs.r[i];
		if (!starts[i])
			continue;
		size_t colour = colours[i];
		fprintf(f, "$P%zu << EOD\n", ngroups);
		for (size_t j = i; j < x->rs.n; j++) {
			const struct ocb_rrow *q = &x->rs.r[j];
			if (!plottable(q) || !same_group(q, r, multi))
				continue;
			const struct ocb_mceil *qm = ocb_mceil_find(x->mc, x->nmc, q->machine_id);
			char tip[640], words[256];
			ocb_params_words(q->params, words, sizeof words);
			snprintf(tip, sizeof tip,
				 "%s %s %s t=%d: %.3g GFLOP/s, %.3g GB/s, %.0f%% of roof%s%s", q->bench, q->variant, words, q->threads, ocb_rrow_gflops(q),
				 ocb_rrow_gbs(q), 100 * ocb_rrow_roof_frac(q, qm), multi ? " on " : "",
				 multi ? q->host : "");
			tip_safe(tip);
			fprintf(f, "%.9g %.9g \"%s\"\n", q->flops / q->bytes, ocb_rrow_gflops(q), tip);
		}
		fputs("EOD\n", f);
		char ck[32], name[128], what[160];
		row_roof(r, ck, sizeof ck);
		if (multi)
			snprintf(name, sizeof name, "%d thr", r->threads);
		else
			snprintf(name, sizeof name, "%s%s%s%s, %d thr", r->suite, ck[0] ? " (" : "", ck,
				 ck[0] ? ")" : "", r->threads);
		size_t mi = 0;
		while (mi < x->nmc && x->mc[mi].machine_id != r->machine_id)
			mi++;
		/* overlaid: the machine's colour, as its roof lines; else the group's. A
		 * second round of the colours draws open markers */
		const size_t ci = multi ? mi : colour;
		const size_t ncol = multi ? NMACHINE_RGB : NGROUP_RGB;
		const char *rgb = multi ? machine_rgb[ci % ncol] : group_rgb[ci % ncol];
		const int pt = marker(x, r->threads, ci, ncol);
		snprintf(what, sizeof what,
			 "$P%zu using 1:2:3 with labels hypertext point pt %d ps 1.3 lc rgb '%s'",
			 ngroups, pt, rgb);
		if ((rc = add_plot(cmd, clen, what, name, multi ? r->host : NULL)))
			break;
		ngroups++;
		const struct ocb_mceil *mc = ocb_mceil_find(x->mc, x->nmc, r->machine_id);
		if (ck[0] && !(mc && ocb_roof_find(mc->view, mc->view ? mc->n : 0, ck, r->threads))) {
			char nr[64];
			snprintf(nr, sizeof nr, "no roof: %s not measured", ck);
			char *lt = esc_title(nr, NULL);
			if (lt)
				fprintf(f, "set label %zu %s at graph 0.02, graph %.3f front\n",
					ngroups, lt, 0.97 - 0.05 * (double)(ngroups - 1));
			free(lt);
		}
	}
	if (!rc)
		point_labels(x, f);
	free(colours);
	free(starts);
	return rc;
}

/* The thread counts machine mc's ceilings are drawn at: those its points use, or all it
 * has when there are no points (npts == 0); at most 8. */
static size_t roof_threads(const struct ocb_rctx *x, const struct ocb_mceil *mc, int npts,
			   int threads[8])
{
	size_t nthr = 0;
	for (size_t i = 0; i < x->rs.n && nthr < 8; i++) {
		const struct ocb_rrow *r = &x->rs.r[i];
		if (r->machine_id != mc->machine_id || !plottable(r))
			continue;
		int seen = 0;
		for (size_t k = 0; k < nthr; k++)
			seen |= threads[k] == r->threads;
		if (!seen)
			threads[nthr++] = r->threads;
	}
	for (size_t c = 0; c < mc->n && nthr < 8 && !npts; c++) {
		int seen = 0;
		for (size_t k = 0; k < nthr; k++)
			seen |= threads[k] == mc->c[c].threads;
		if (!seen)
			threads[nthr++] = mc->c[c].threads;
	}
	return nthr;
}

/* The ceilings drawn so far (one machine): a line within 5% of one already drawn of
 * the same kind (the same roof measured at another thread count) is not drawn again. */
struct drawn {
	const struct ocb_ceiling *c[64];
	size_t n;
};

static int seen_before(struct drawn *d, const struct ocb_ceiling *ce)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->c[i]->kind, ce->kind) && fabs(d->c[i]->value - ce->value) <= 0.05 * ce->value)
			return 1;
	if (d->n < 64)
		d->c[d->n++] = ce;
	return 0;
}

/* One ceiling label on the plot (not in the key): host, text, where. */
static void roof_label(FILE *f, int *tag, const char *host, const char *text, const char *at)
{
	char *lt = esc_title(text, host);
	if (lt)
		fprintf(f, "set label %d %s at %s font ',9' tc rgb '#333333' front\n", (*tag)++, lt, at);
	free(lt);
}

/* Machine mc's roofs at thread count thr (the k-th of nthr: dash type k + 1), each
 * labelled once on the plot: horizontals for each compute peak (label at the right),
 * diagonals for each memory level clipped at the highest peak (label at x = xlab). */
static int plot_roofs_at(const struct ocb_mceil *mc, int thr, size_t k, size_t nthr,
			 const char *host, const char *rgb, struct drawn *d, double xlab, FILE *f,
			 int *tag, char **cmd, size_t *clen)
{
	double peak = 0; /* highest compute peak at this thread count */
	char suffix[96] = "", label[160], what[256], at[96];
	int rc = OCB_OK;
	for (size_t c = 0; c < mc->n; c++)
		if (is_compute(mc->c[c].kind) && mc->c[c].threads == thr)
			peak = fmax(peak, mc->c[c].value);
	if (nthr > 1)
		snprintf(suffix, sizeof suffix, " (%d thr)", thr);
	for (size_t c = 0; c < mc->n && !rc; c++) {
		const struct ocb_ceiling *ce = &mc->c[c];
		if (!is_compute(ce->kind) || ce->threads != thr || !(ce->value > 0) || seen_before(d, ce))
			continue;
		int ops = !strncmp(ce->kind, "ops_", 4);
		snprintf(label, sizeof label, "%.1f %s %s%s", ce->value, ops ? "GOP/s" : "GFLOP/s",
			 ce->kind + (ops ? 4 : 6), suffix);
		/* staggered along the line so that close peaks' labels do not overlap */
		snprintf(at, sizeof at, "graph %.2f, first %.9g right", 0.99 - 0.3 * (*tag % 3),
			 ce->value * 1.1);
		roof_label(f, tag, host, label, at);
		snprintf(what, sizeof what, "%.9g with lines lw 2 dt %zu lc rgb '%s'", ce->value, k + 1, rgb);
		rc = cat(cmd, clen, "%s%s notitle", *cmd ? ", " : "plot ", what);
	}
	for (size_t l = 0; l < sizeof levels / sizeof *levels && !rc; l++) {
		const struct ocb_ceiling *ce = NULL;
		for (size_t c = 0; c < mc->n; c++)
			if (!strcmp(mc->c[c].kind, levels[l][0]) && mc->c[c].threads == thr)
				ce = &mc->c[c];
		if (!ce || !(ce->value > 0) || seen_before(d, ce))
			continue;
		char term[160];
		snprintf(label, sizeof label, "%s - %.1f GB/s%s", levels[l][1], ce->value, suffix);
		snprintf(at, sizeof at, "first %.9g, first %.9g", xlab, ce->value * xlab * 1.25);
		roof_label(f, tag, host, label, at);
		if (peak > 0)
			snprintf(term, sizeof term, "((%.9g*x <= %.9g) ? %.9g*x : 1/0)", ce->value,
				 peak, ce->value);
		else
			snprintf(term, sizeof term, "%.9g*x", ce->value);
		snprintf(what, sizeof what, "%s with lines lw 1.5 dt %zu lc rgb '%s'", term, k + 1, rgb);
		rc = cat(cmd, clen, "%s%s notitle", *cmd ? ", " : "plot ", what);
	}
	return rc;
}

/* Ceilings, per machine (one colour each), at the thread counts its points use (or all
 * it has); xlab: where the diagonals' labels go. */
static int plot_ceilings(const struct ocb_rctx *x, FILE *f, int multi, int npts, double xlab,
			 char **cmd, size_t *clen)
{
	int rc = OCB_OK, tag = 200;
	for (size_t m = 0; m < x->nmc && !rc; m++) {
		const struct ocb_mceil *mc = &x->mc[m];
		struct drawn d = {.n = 0};
		int threads[8];
		size_t nthr = roof_threads(x, mc, npts, threads);
		if (multi && nthr > 1) { /* overlaid machines: each one's roofs at its most
					  * threads only (the normalised plot has every point
					  * against its own roof) */
			for (size_t k = 1; k < nthr; k++)
				threads[0] = threads[k] > threads[0] ? threads[k] : threads[0];
			nthr = 1;
		}
		for (size_t k = 0; k < nthr && !rc; k++)
			rc = plot_roofs_at(mc, threads[k], k, nthr, multi ? mc->host : NULL,
					   machine_rgb[m % NMACHINE_RGB],
					   &d, xlab * (1 + 0.6 * (double)m), f, &tag, cmd, clen);
	}
	return rc;
}

/* The axes: log-log, x range around the points' intensities, y room above the highest
 * compute peak. */
static void plot_axes(const struct ocb_rctx *x, FILE *f, int npts, double xmin, double xmax)
{
	if (!npts) {
		xmin = 0.05;
		xmax = 20;
	}
	xmin = fmin(xmin / 4, 0.01);
	xmax = fmax(xmax * 4, 100);
	fputs("set logscale xy\nset grid xtics ytics mxtics mytics lc rgb '#dddddd'\n"
	      "set xlabel 'operational intensity (FLOP or int8 op / byte)'\n"
	      "set ylabel 'GFLOP/s (int8 kernels: GOP/s)'\n"
	      "set key outside right top box\nset samples 600\n", f);
	double ymax = 0;
	for (size_t i = 0; i < x->rs.n; i++)
		if (plottable(&x->rs.r[i]))
			ymax = fmax(ymax, ocb_rrow_gflops(&x->rs.r[i]));
	for (size_t m = 0; m < x->nmc; m++)
		for (size_t c = 0; c < x->mc[m].n; c++)
			if (is_compute(x->mc[m].c[c].kind))
				ymax = fmax(ymax, x->mc[m].c[c].value);
	fprintf(f, "set xrange [%.9g:%.9g]\nset title 'Roofline'\n", xmin, xmax);
	if (ymax > 0) /* room above the highest peak so its line shows */
		fprintf(f, "set yrange [*:%.9g]\n", ymax * 2);
}

/* Several machines: every point as the fraction of its own machine's roof (x: operational
 * intensity), one colour per machine, one marker per thread count, 100% drawn. */
static int roofline_norm(struct ocb_rctx *x)
{
	const char *title = "Roofline, normalised: % of each machine's own roof";
	struct ocb_gp gp = {0};
	char *cmd = NULL;
	size_t clen = 0, nblk = 0;
	int rc;
	if (!ocb_gp_available())
		return ocb_rctx_plot(x, "roofline_norm", title, 0, "gnuplot not found in PATH");
	if ((rc = ocb_gp_open(&gp, x->out, "roofline_norm")))
		return ocb_rctx_plot(x, "roofline_norm", title, 0, ocb_lasterr());
	fputs("set logscale x\nset grid lc rgb '#dddddd'\nset key outside right top box\n"
	      "set xlabel 'operational intensity (FLOP or int8 op / byte)'\n"
	      "set ylabel '% of the machine roof'\nset yrange [0:*]\n"
	      "set title 'Roofline, normalised per machine'\n", gp.f);
	for (size_t m = 0; m < x->nmc && !rc; m++) {
		const struct ocb_mceil *mc = &x->mc[m];
		int thr[8];
		size_t nthr = roof_threads(x, mc, 1, thr);
		for (size_t k = 0; k < nthr && !rc; k++) {
			int any = 0;
			fprintf(gp.f, "$N%zu << EOD\n", nblk);
			for (size_t i = 0; i < x->rs.n; i++) {
				const struct ocb_rrow *r = &x->rs.r[i];
				double f = plottable(r) && r->machine_id == mc->machine_id && r->threads == thr[k]
						   ? ocb_rrow_roof_frac(r, mc) : NAN;
				if (isnan(f))
					continue;
				char tip[640], words[256];
				ocb_params_words(r->params, words, sizeof words);
				snprintf(tip, sizeof tip, "%s %s %s t=%d on %s: %.0f%% of roof", r->bench,
					 r->variant, words, r->threads, r->host, 100 * f);
				tip_safe(tip);
				fprintf(gp.f, "%.9g %.9g \"%s\"\n", r->flops / r->bytes, 100 * f, tip);
				any = 1;
			}
			fputs("EOD\n", gp.f);
			if (!any)
				continue;
			char what[160], name[96];
			snprintf(what, sizeof what,
				 "$N%zu using 1:2:3 with labels hypertext point pt %d ps 1.3 lc rgb '%s'",
				 nblk, marker(x, thr[k], m, NMACHINE_RGB), machine_rgb[m % NMACHINE_RGB]);
			snprintf(name, sizeof name, "%d thr", thr[k]);
			rc = add_plot(&cmd, &clen, what, name, mc->host);
			nblk++;
		}
	}
	if (!rc && cmd)
		rc = cat(&cmd, &clen, ", 100 with lines lw 2 lc rgb '#555555' title 'roof (100%%)'");
	if (rc || !cmd) {
		ocb_gp_abort(&gp);
		free(cmd);
		return rc ? rc : ocb_rctx_plot(x, "roofline_norm", title, 0, "no point has a roof");
	}
	rc = ocb_gp_finish(&gp, cmd);
	free(cmd);
	return ocb_rctx_plot(x, "roofline_norm", title, rc == OCB_OK, rc ? ocb_lasterr() : NULL);
}

int ocb_rsec_roofline(struct ocb_rctx *x)
{
	const char *title = "Roofline: measured ceilings and kernel results";
	struct ocb_gp gp = {0};
	char *cmd = NULL;
	size_t clen = 0;
	int rc = OCB_OK, multi = 0, npts = 0;
	double xmin = INFINITY, xmax = 0;

	for (size_t i = 0; i < x->rs.n; i++) {
		const struct ocb_rrow *r = &x->rs.r[i];
		multi |= r->machine_id != x->rs.r[0].machine_id;
		if (!plottable(r))
			continue;
		npts++;
		double oi = r->flops / r->bytes;
		xmin = fmin(xmin, oi);
		xmax = fmax(xmax, oi);
	}
	size_t nceil = 0;
	for (size_t m = 0; m < x->nmc; m++)
		nceil += x->mc[m].n;
	if (!npts && !nceil)
		return ocb_rctx_plot(x, "roofline", title, 0,
				     "no kernel results with a work model and no ceilings");
	if (!ocb_gp_available())
		return ocb_rctx_plot(x, "roofline", title, 0, "gnuplot not found in PATH");
	if ((rc = ocb_gp_open(&gp, x->out, "roofline")))
		return ocb_rctx_plot(x, "roofline", title, 0, ocb_lasterr());
	plot_axes(x, gp.f, npts, xmin, xmax);
	if ((rc = plot_points(x, gp.f, multi, &cmd, &clen)) ||
	    (rc = plot_ceilings(x, gp.f, multi, npts, npts ? fmin(xmin / 4, 0.01) * 1.6 : 0.02,
				&cmd, &clen))) {
		ocb_gp_abort(&gp);
		free(cmd);
		return rc;
	}
	if (!cmd) {
		ocb_gp_abort(&gp);
		return ocb_rctx_plot(x, "roofline", title, 0, "nothing to draw");
	}
	rc = ocb_gp_finish(&gp, cmd);
	free(cmd);
	if ((rc = ocb_rctx_plot(x, "roofline", title, rc == OCB_OK, rc ? ocb_lasterr() : NULL)))
		return rc;
	return multi && npts ? roofline_norm(x) : OCB_OK;
}
