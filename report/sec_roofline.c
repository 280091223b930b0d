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

static int same_group(const struct ocb_rrow *a, const struct ocb_rrow *b)
{
	char ka[32], kb[32];
	row_roof(a, ka, sizeof ka);
	row_roof(b, kb, sizeof kb);
	return !strcmp(a->suite, b->suite) && a->machine_id == b->machine_id && !strcmp(ka, kb);
}

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

/* Points: one datablock per (suite, machine, compute roof) group, in rs order; a label
 * for a roof a group is bound by that its machine never measured. */
static int plot_points(const struct ocb_rctx *x, FILE *f, int multi, char **cmd, size_t *clen)
{
	size_t ngroups = 0;
	for (size_t i = 0; i < x->rs.n; i++) {
		const struct ocb_rrow *r = &x->rs.r[i];
		if (!plottable(r))
			continue;
		int first = 1;
		for (size_t j = 0; j < i && first; j++)
			first = !(plottable(&x->rs.r[j]) && same_group(&x->rs.r[j], r));
		if (!first)
			continue;
		fprintf(f, "$P%zu << EOD\n", ngroups);
		for (size_t j = i; j < x->rs.n; j++) {
			const struct ocb_rrow *q = &x->rs.r[j];
			if (plottable(q) && same_group(q, r))
				fprintf(f, "%.9g %.9g\n", q->flops / q->bytes, ocb_rrow_gflops(q));
		}
		fputs("EOD\n", f);
		char ck[32], name[96], what[96];
		row_roof(r, ck, sizeof ck);
		snprintf(name, sizeof name, "%s%s%s%s", r->suite, ck[0] ? " (" : "", ck,
			 ck[0] ? ")" : "");
		snprintf(what, sizeof what, "$P%zu using 1:2 with points pt %zu ps 1.4 lc %zu",
			 ngroups, 5 + 2 * (ngroups % 4), ngroups + 1);
		int rc = add_plot(cmd, clen, what, name, multi ? r->host : NULL);
		if (rc)
			return rc;
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
	return OCB_OK;
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

/* Machine mc's roofs at thread count thr (the k-th of nthr: dash type k + 1):
 * horizontals for each compute peak, diagonals for each memory level clipped at the
 * highest peak. *lc: the next line colour. */
static int plot_roofs_at(const struct ocb_mceil *mc, int thr, size_t k, size_t nthr,
			 const char *host, int *lc, char **cmd, size_t *clen)
{
	double peak = 0; /* highest compute peak at this thread count */
	char suffix[96] = "", label[160], what[256];
	int rc = OCB_OK;
	for (size_t c = 0; c < mc->n; c++)
		if (is_compute(mc->c[c].kind) && mc->c[c].threads == thr)
			peak = fmax(peak, mc->c[c].value);
	if (nthr > 1)
		snprintf(suffix, sizeof suffix, " (%d thr)", thr);
	for (size_t c = 0; c < mc->n && !rc; c++) {
		const struct ocb_ceiling *ce = &mc->c[c];
		if (!is_compute(ce->kind) || ce->threads != thr || !(ce->value > 0))
			continue;
		int ops = !strncmp(ce->kind, "ops_", 4);
		snprintf(label, sizeof label, "%.1f %s %s%s", ce->value, ops ? "GOP/s" : "GFLOP/s",
			 ce->kind + (ops ? 4 : 6), suffix);
		snprintf(what, sizeof what, "%.9g with lines lw 2 dt %zu lc %d", ce->value, k + 1,
			 (*lc)++);
		rc = add_plot(cmd, clen, what, label, host);
	}
	for (size_t l = 0; l < sizeof levels / sizeof *levels && !rc; l++) {
		const struct ocb_ceiling *ce = NULL;
		for (size_t c = 0; c < mc->n; c++)
			if (!strcmp(mc->c[c].kind, levels[l][0]) && mc->c[c].threads == thr)
				ce = &mc->c[c];
		if (!ce || !(ce->value > 0))
			continue;
		char term[160];
		snprintf(label, sizeof label, "%s - %.1f GB/s%s", levels[l][1], ce->value, suffix);
		if (peak > 0)
			snprintf(term, sizeof term, "((%.9g*x <= %.9g) ? %.9g*x : 1/0)", ce->value,
				 peak, ce->value);
		else
			snprintf(term, sizeof term, "%.9g*x", ce->value);
		snprintf(what, sizeof what, "%s with lines lw 1.5 dt %zu lc %d", term, k + 1, (*lc)++);
		rc = add_plot(cmd, clen, what, label, host);
	}
	return rc;
}

/* Ceilings, per machine, at the thread counts its points use (or all it has). */
static int plot_ceilings(const struct ocb_rctx *x, int multi, int npts, char **cmd,
			 size_t *clen)
{
	int lc = 20, rc = OCB_OK;
	for (size_t m = 0; m < x->nmc && !rc; m++) {
		const struct ocb_mceil *mc = &x->mc[m];
		int threads[8];
		size_t nthr = roof_threads(x, mc, npts, threads);
		for (size_t k = 0; k < nthr && !rc; k++)
			rc = plot_roofs_at(mc, threads[k], k, nthr, multi ? mc->host : NULL, &lc, cmd,
					   clen);
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
	    (rc = plot_ceilings(x, multi, npts, &cmd, &clen))) {
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
	return ocb_rctx_plot(x, "roofline", title, rc == OCB_OK, rc ? ocb_lasterr() : NULL);
}
