/* report: builds the sections into one context, then writes every chosen format. */
#define _GNU_SOURCE
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "../common/ocb_error.h"
#include "../common/ocb_log.h"
#include "../common/ocb_time.h"
#include "escape.h"
#include "sec_dist.h"
#include "rctx.h"

int ocb_report_formats(const char *list, unsigned *out)
{
	static const struct { const char *name; unsigned bit; } words[] = {
		{"md", OCB_FMT_MD}, {"markdown", OCB_FMT_MD}, {"latex", OCB_FMT_LATEX},
		{"tex", OCB_FMT_LATEX}, {"csv", OCB_FMT_CSV}, {"html", OCB_FMT_HTML},
		{"json", OCB_FMT_JSON}, {"all", OCB_FMT_ALL}};
	*out = 0;
	const char *p = list;
	while (p && *p) {
		size_t len = strcspn(p, ",");
		unsigned bit = 0;
		for (size_t i = 0; i < sizeof words / sizeof *words && !bit; i++)
			if (strlen(words[i].name) == len && !strncmp(words[i].name, p, len))
				bit = words[i].bit;
		if (!bit && len)
			return ocb_seterr(OCB_EINVAL, "--format: unknown format '%.*s' (md, latex, csv, html, json)",
					  (int)len, p);
		*out |= bit;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!*out)
		return ocb_seterr(OCB_EINVAL, "--format: empty list");
	return OCB_OK;
}

int ocb_rctx_table(struct ocb_rctx *x, struct ocb_table **t)
{
	struct ocb_table *nt = realloc(x->tables, (x->ntables + 1) * sizeof *nt);
	if (!nt)
		return ocb_seterr(OCB_ENOMEM, "report tables");
	x->tables = nt;
	*t = &x->tables[x->ntables++];
	memset(*t, 0, sizeof **t);
	return OCB_OK;
}

void ocb_rctx_table_drop(struct ocb_rctx *x)
{
	if (x->ntables)
		ocb_table_release(&x->tables[--x->ntables]);
}

int ocb_rctx_plot(struct ocb_rctx *x, const char *base, const char *title, int drawn,
		  const char *why)
{
	struct ocb_rplot *np = realloc(x->plots, (x->nplots + 1) * sizeof *np);
	if (!np)
		return ocb_seterr(OCB_ENOMEM, "report plots");
	x->plots = np;
	struct ocb_rplot *p = &x->plots[x->nplots++];
	memset(p, 0, sizeof *p);
	snprintf(p->base, sizeof p->base, "%s", base);
	p->title = strdup(title ? title : "");
	p->drawn = drawn;
	p->why = !drawn ? strdup(why && *why ? why : "not drawn") : NULL;
	if (!p->title || (!drawn && !p->why))
		return ocb_seterr(OCB_ENOMEM, "report plots");
	if (!drawn)
		ocb_warn("report: plot %s skipped: %s", base, p->why);
	return OCB_OK;
}

int ocb_rctx_headline(struct ocb_rctx *x, const char *fmt, ...)
{
	char *h = NULL, **nh = realloc(x->heads, (x->nheads + 1) * sizeof *nh);
	if (!nh)
		return ocb_seterr(OCB_ENOMEM, "report headlines");
	x->heads = nh;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&h, fmt, ap);
	va_end(ap);
	if (n < 0)
		return ocb_seterr(OCB_ENOMEM, "report headlines");
	x->heads[x->nheads++] = h;
	return OCB_OK;
}

static void ctx_release(struct ocb_rctx *x)
{
	for (size_t i = 0; i < x->nheads; i++)
		free(x->heads[i]);
	free(x->heads);
	for (size_t i = 0; i < x->ntables; i++)
		ocb_table_release(&x->tables[i]);
	free(x->tables);
	for (size_t i = 0; i < x->nplots; i++) {
		free(x->plots[i].title);
		free(x->plots[i].why);
	}
	free(x->plots);
	free(x->runs);
	for (size_t i = 0; i < x->nmc; i++)
		ocb_mceil_release(&x->mc[i]);
	free(x->mc);
	ocb_rset_release(&x->rs);
}

/* mkdir -p for the output directory. */
static int make_dir(const char *path)
{
	char *p = strdup(path);
	int rc = OCB_OK;
	if (!p)
		return ocb_seterr(OCB_ENOMEM, "%s", path);
	for (char *s = p + 1; ; s++) {
		char c = *s;
		if (c == '/' || c == '\0') {
			*s = '\0';
			if (mkdir(p, 0777) != 0 && errno != EEXIST) {
				rc = ocb_seterr(errno == EACCES || errno == EROFS ? OCB_EPERM : OCB_EIO,
						"%s: cannot create: %s", p, strerror(errno));
				break;
			}
			*s = c;
		}
		if (!c)
			break;
	}
	free(p);
	struct stat sb;
	if (!rc && (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)))
		rc = ocb_seterr(OCB_EPERM, "%s: not a directory", path);
	return rc;
}

static FILE *open_out(const char *dir, const char *name, char **path)
{
	if (asprintf(path, "%s/%s", dir, name) < 0) {
		*path = NULL;
		ocb_seterr(OCB_ENOMEM, "%s", name);
		return NULL;
	}
	FILE *f = fopen(*path, "w");
	if (!f)
		ocb_seterr(errno == EACCES || errno == EROFS ? OCB_EPERM : OCB_EIO, "%s: %s", *path,
			   strerror(errno));
	return f;
}

static int close_out(FILE *f, char *path)
{
	int bad = ferror(f);
	bad |= fclose(f) != 0;
	int rc = bad ? ocb_seterr(OCB_EIO, "%s: write failed", path) : OCB_OK;
	free(path);
	return rc;
}

static const char *sel_text(const struct ocb_sel *s, char *buf, size_t len)
{
	switch (s->mode) {
	case OCB_SEL_RUN: snprintf(buf, len, "run %lld", (long long)s->run_id); break;
	case OCB_SEL_LATEST: snprintf(buf, len, "the latest complete run"); break;
	default:
		snprintf(buf, len, "the latest complete run of each suite%s",
			 s->nmachines ? " on each selected machine" : "");
	}
	return buf;
}

static int write_md(struct ocb_rctx *x, const char *when, const char *what)
{
	char *path = NULL;
	FILE *f = open_out(x->out, "report.md", &path);
	if (!f) {
		free(path);
		return OCB_EPERM; /* open_out set the detail */
	}
	fprintf(f, "# ocbench report\n\nGenerated %s from %s.\n\n", when, what);
	int nlong = 0;
	for (size_t i = 0; i < x->ntables; i++) {
		if (ocb_table_in_paper(&x->tables[i]))
			ocb_table_write_md(&x->tables[i], f);
		nlong += !ocb_table_in_paper(&x->tables[i]);
	}
	if (nlong) {
		fputs("Long form (one row per case, every field):", f);
		for (size_t i = 0; i < x->ntables; i++)
			if (!ocb_table_in_paper(&x->tables[i]))
				fprintf(f, " [%s](csv/%s.csv)", x->tables[i].id, x->tables[i].id);
		fputs(".\n\n", f);
	}
	if (x->nplots)
		fputs("## Plots\n\n", f);
	for (size_t i = 0; i < x->nplots; i++) {
		const struct ocb_rplot *p = &x->plots[i];
		if (p->drawn) {
			fputs("![", f);
			ocb_esc_md(f, p->title);
			fprintf(f, "](%s.png) ([SVG](%s.svg))\n\n", p->base, p->base);
		} else {
			fputs("- plot skipped: ", f);
			ocb_esc_md(f, p->title);
			fputs(" (", f);
			ocb_esc_md(f, p->why);
			fputs(")\n", f);
		}
	}
	return close_out(f, path);
}

/* report.tex: a standalone article (pdflatex report.tex in the output folder) with every
 * paper table, split to fit the text width and 40 rows a float, and the drawn plots as
 * figures; tex/<id>.tex: each table alone, split to fit one column of a two-column
 * article (about 229 pt: \\input it there, with booktabs). */
static int write_latex(struct ocb_rctx *x, const char *when, const char *what)
{
	char *path = NULL, *dir = NULL;
	int rc = OCB_OK;
	FILE *f = open_out(x->out, "report.tex", &path);
	if (!f) {
		free(path);
		return OCB_EPERM;
	}
	fprintf(f, "%% ocbench report, generated %s: pdflatex report.tex\n"
		   "%% Each table alone, for a two-column paper: tex/<id>.tex (needs booktabs).\n"
		   "\\documentclass[10pt]{article}\n\\usepackage[a4paper,margin=2cm]{geometry}\n"
		   "\\usepackage{booktabs}\n\\usepackage{graphicx}\n"
		   "\\usepackage[section]{placeins}\n"
		   "\\setcounter{topnumber}{4}\\setcounter{totalnumber}{6}\n"
		   "\\renewcommand{\\topfraction}{0.95}\\renewcommand{\\textfraction}{0.05}\n"
		   "\\renewcommand{\\floatpagefraction}{0.8}\n"
		   "\\begin{document}\n\\section*{ocbench report}\n\\noindent Generated ", when);
	ocb_esc_latex(f, when);
	fputs(" from ", f);
	ocb_esc_latex(f, what);
	fputs(".\n\n", f);
	for (size_t i = 0; i < x->ntables; i++)
		if (ocb_table_in_paper(&x->tables[i]))
			ocb_table_write_latex_fit(&x->tables[i], f, 470, 40);
	fputs("\\FloatBarrier\n", f);
	for (size_t i = 0; i < x->nplots; i++) {
		const struct ocb_rplot *p = &x->plots[i];
		if (!p->drawn)
			continue;
		fprintf(f, "\\begin{figure}[htbp]\n\\centering\n"
			   "\\includegraphics[width=0.85\\textwidth]{%s.png}\n\\caption{", p->base);
		ocb_esc_latex(f, p->title);
		fprintf(f, "}\n\\label{fig:%s}\n\\end{figure}\n\n", p->base);
	}
	fputs("\\end{document}\n", f);
	if ((rc = close_out(f, path)))
		return rc;
	if (asprintf(&dir, "%s/tex", x->out) < 0)
		return ocb_seterr(OCB_ENOMEM, "tex");
	if ((rc = make_dir(dir)))
		goto out;
	for (size_t i = 0; i < x->ntables && !rc; i++) {
		char name[80];
		if (!ocb_table_in_paper(&x->tables[i]))
			continue;
		snprintf(name, sizeof name, "%s.tex", x->tables[i].id);
		if (!(f = open_out(dir, name, &path))) {
			free(path);
			rc = OCB_EPERM;
			break;
		}
		ocb_table_write_latex_fit(&x->tables[i], f, 229, 40);
		rc = close_out(f, path);
	}
out:
	free(dir);
	return rc;
}

static int write_csv(struct ocb_rctx *x)
{
	char *dir = NULL;
	int rc = OCB_OK;
	if (asprintf(&dir, "%s/csv", x->out) < 0)
		return ocb_seterr(OCB_ENOMEM, "csv");
	if ((rc = make_dir(dir)))
		goto out;
	for (size_t i = 0; i < x->ntables && !rc; i++) {
		char name[80], *path = NULL;
		if (!ocb_table_in_long(&x->tables[i]))
			continue;
		snprintf(name, sizeof name, "%s.csv", x->tables[i].id);
		FILE *f = open_out(dir, name, &path);
		if (!f) {
			free(path);
			rc = OCB_EPERM;
			break;
		}
		ocb_table_write_csv(&x->tables[i], f);
		rc = close_out(f, path);
	}
out:
	free(dir);
	return rc;
}

static int write_json(struct ocb_rctx *x, const char *when, const char *what)
{
	cJSON *root = cJSON_CreateObject(), *tabs, *plots;
	char *text = NULL, *path = NULL;
	int rc = OCB_OK;
	if (!root)
		return ocb_seterr(OCB_ENOMEM, "report.json");
	cJSON_AddStringToObject(root, "generated", when);
	cJSON_AddStringToObject(root, "selection", what);
	cJSON_AddStringToObject(root, "ocbench_version", x->o->version ? x->o->version : "");
	tabs = cJSON_AddArrayToObject(root, "tables");
	plots = cJSON_AddArrayToObject(root, "plots");
	if (!tabs || !plots) {
		rc = ocb_seterr(OCB_ENOMEM, "report.json");
		goto out;
	}
	for (size_t i = 0; i < x->ntables; i++) {
		if (!ocb_table_in_long(&x->tables[i]))
			continue;
		cJSON *t = ocb_table_json(&x->tables[i]);
		if (!t || !cJSON_AddItemToArray(tabs, t)) {
			cJSON_Delete(t);
			rc = ocb_seterr(OCB_ENOMEM, "report.json");
			goto out;
		}
	}
	for (size_t i = 0; i < x->nplots; i++) {
		cJSON *p = cJSON_CreateObject();
		if (!p || !cJSON_AddItemToArray(plots, p)) {
			cJSON_Delete(p);
			rc = ocb_seterr(OCB_ENOMEM, "report.json");
			goto out;
		}
		cJSON_AddStringToObject(p, "name", x->plots[i].base);
		cJSON_AddStringToObject(p, "title", x->plots[i].title);
		cJSON_AddBoolToObject(p, "drawn", x->plots[i].drawn);
		if (x->plots[i].drawn) {
			char file[96];
			snprintf(file, sizeof file, "%s.png", x->plots[i].base);
			cJSON_AddStringToObject(p, "png", file);
			snprintf(file, sizeof file, "%s.svg", x->plots[i].base);
			cJSON_AddStringToObject(p, "svg", file);
		} else {
			cJSON_AddStringToObject(p, "skipped_because", x->plots[i].why);
		}
	}
	if (!(text = cJSON_Print(root))) {
		rc = ocb_seterr(OCB_ENOMEM, "report.json");
		goto out;
	}
	FILE *f = open_out(x->out, "report.json", &path);
	if (!f) {
		rc = OCB_EPERM;
		goto out;
	}
	fputs(text, f);
	fputc('\n', f);
	rc = close_out(f, path);
	path = NULL;
out:
	free(path);
	free(text);
	cJSON_Delete(root);
	return rc;
}

static int write_html(struct ocb_rctx *x, const char *when, const char *what)
{
	char *path = NULL;
	FILE *f = open_out(x->out, "index.html", &path);
	if (!f) {
		free(path);
		return OCB_EPERM;
	}
	int rc = ocb_report_html(x, when, what, f);
	int rc2 = close_out(f, path);
	return rc ? rc : rc2;
}

/* The report's "generated" time: $SOURCE_DATE_EPOCH (seconds since 1970, the
 * reproducible-builds convention) when set and valid, so that the same database gives
 * the same bytes (tests/test_report_golden.c); otherwise now. UTC ISO-8601 into buf. */
static void report_time(char *buf, size_t len)
{
	const char *e = getenv("SOURCE_DATE_EPOCH");
	char *end = NULL;
	long long v = e && *e ? strtoll(e, &end, 10) : -1;
	if (v < 0 || !end || *end) {
		ocb_utc_now(buf, len);
		return;
	}
	time_t t = (time_t)v;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The machines behind the results (and the named ones), each once, with their ceilings:
 * x->mc[0..x->nmc). */
static int load_machines(struct ocb_rctx *x)
{
	const struct ocb_report_opts *o = x->o;
	size_t cap = x->rs.n + o->sel.nmachines + 1, nid = 0;
	int64_t *ids = calloc(cap, sizeof *ids);
	int rc = OCB_OK;
	x->mc = calloc(cap, sizeof *x->mc);
	if (!ids || !x->mc) {
		rc = ocb_seterr(OCB_ENOMEM, "report");
		goto out;
	}
	for (size_t i = 0; i < x->rs.n + o->sel.nmachines; i++) {
		int64_t id = i < x->rs.n ? x->rs.r[i].machine_id : o->sel.machine[i - x->rs.n];
		int seen = 0;
		for (size_t k = 0; k < nid && !seen; k++)
			seen = ids[k] == id;
		if (!seen)
			ids[nid++] = id;
	}
	if ((rc = ocb_mceil_load(x->db, ids, nid, x->mc)))
		goto out;
	x->nmc = nid;
out:
	free(ids);
	return rc;
}

/* Tables without their own provenance get the report's: every covered run. */
static int default_prov(struct ocb_rctx *x)
{
	char *prov = NULL;
	int rc = OCB_OK;
	for (size_t i = 0; i < x->ntables && !rc; i++) {
		if (x->tables[i].prov)
			continue;
		if (!prov && (rc = ocb_rctx_prov(x, NULL, 0, &prov)))
			break;
		rc = ocb_table_set_prov(&x->tables[i], prov);
	}
	free(prov);
	return rc;
}

/* The files of the formats asked for (fmt: OCB_FMT_* bits). */
static int write_formats(struct ocb_rctx *x, unsigned fmt, const char *when, const char *what)
{
	int rc = OCB_OK;
	if ((fmt & OCB_FMT_MD) && (rc = write_md(x, when, what)))
		return rc;
	if ((fmt & OCB_FMT_LATEX) && (rc = write_latex(x, when, what)))
		return rc;
	if ((fmt & OCB_FMT_CSV) && (rc = write_csv(x)))
		return rc;
	if ((fmt & OCB_FMT_JSON) && (rc = write_json(x, when, what)))
		return rc;
	if ((fmt & OCB_FMT_HTML) && (rc = write_html(x, when, what)))
		return rc;
	return rc;
}

/* Tables, results, plots drawn and skipped (their names) into sum. */
static void fill_summary(const struct ocb_rctx *x, struct ocb_report_summary *sum)
{
	sum->ntables = (int)x->ntables;
	sum->nresults = (int)x->rs.n;
	size_t off = 0;
	for (size_t i = 0; i < x->nplots; i++) {
		if (x->plots[i].drawn) {
			sum->nplots++;
			continue;
		}
		sum->nskipped++;
		if (off < sizeof sum->skipped)
			off += (size_t)snprintf(sum->skipped + off, sizeof sum->skipped - off,
						"%s%s", off ? ", " : "", x->plots[i].base);
	}
}

int ocb_report_write(struct ocb_store *db, const struct ocb_report_opts *o,
		     struct ocb_report_summary *sum)
{
	struct ocb_rctx x;
	char when[32], what[1280], sel[128];
	int rc;

	memset(&x, 0, sizeof x);
	x.db = db;
	x.o = o;
	x.out = o->out_dir && *o->out_dir ? o->out_dir : "ocbench-report";
	unsigned fmt = o->formats ? o->formats : OCB_FMT_ALL;
	if (sum)
		memset(sum, 0, sizeof *sum);
	report_time(when, sizeof when);
	sel_text(&o->sel, sel, sizeof sel);
	/* which runs: stated in the report, and refused before anything is written when
	 * quick and full runs would share its tables */
	if ((rc = ocb_sel_runs(db, &o->sel, &x.runs, &x.nruns)) ||
	    (rc = ocb_runs_check_mixed(x.runs, x.nruns, o->allow_mixed)))
		goto out;
	ocb_runs_summary(x.runs, x.nruns, x.covers, sizeof x.covers);
	snprintf(what, sizeof what, "%s: %s", sel, x.covers);

	if ((rc = make_dir(x.out)))
		goto out;
	if ((rc = ocb_rset_load(db, &o->sel, 0, &x.rs)))
		goto out;
	if ((rc = load_machines(&x)))
		goto out;

	if ((rc = ocb_rsec_runs(&x)) || (rc = ocb_rsec_kernels(&x)) ||
	    (rc = ocb_rsec_results(&x)) || (rc = ocb_rsec_quant(&x)) ||
	    (rc = ocb_rsec_compress(&x)) ||
	    (rc = ocb_rsec_inspect(&x)) ||
	    (rc = ocb_rsec_ternary(&x)) ||
	    (rc = ocb_rsec_sparse(&x)) || (rc = ocb_rsec_dist(&x)) ||
	    (rc = ocb_rsec_mlperf(&x)) || (rc = ocb_rsec_history(&x)) ||
	    (rc = ocb_rsec_roofline(&x)) ||
	    (rc = ocb_rsec_curves(&x)))
		goto out;

	if ((rc = default_prov(&x)))
		goto out;
	if ((rc = write_formats(&x, fmt, when, what)))
		goto out;
	if (sum)
		fill_summary(&x, sum);
out:
	ctx_release(&x);
	return rc;
}
