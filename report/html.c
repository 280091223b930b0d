/* html: index.html, the report as one self-contained offline dashboard (no external URL,
 * no network): a summary first (machines, runs and modes covered, results, headline
 * figures, acceptance checks, warnings), a table of contents, the paper tables (sortable
 * by a header click, filterable, in horizontal scroll containers), the plots inline as
 * SVG (every element id prefixed per plot, so ids are unique on the page; roofline
 * points carry a native tooltip), then the long-form data tables, closed. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "escape.h"
#include "rctx.h"

static const char style[] =
	"body{font-family:sans-serif;margin:1.5em auto;max-width:1320px;padding:0 1em;color:#222}\n"
	"h1{margin-bottom:0.2em}h2{border-bottom:1px solid #ccc;padding-bottom:0.2em;margin-top:1.6em}\n"
	"table{border-collapse:collapse;font-size:0.88em}\n"
	"th,td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;white-space:nowrap}\n"
	"thead th{border-bottom:2px solid #444;background:#f6f6f6;position:sticky;top:0}\n"
	"tr.grp th{text-align:center;border-bottom:1px solid #999}\n"
	"table.sortable thead tr:last-child th{cursor:pointer}\n"
	"th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}\n"
	"td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	".scroll{overflow-x:auto;max-width:100%;margin:0.3em 0 0.6em}\n"
	".note,.prov{font-size:0.82em;color:#555;margin:0.2em 0}.prov{font-style:italic}\n"
	"input.filter{font-size:0.85em;padding:2px 6px;margin:0.2em 0}\n"
	"figure{margin:1em 0}figure svg{max-width:100%;height:auto}\n"
	".cards{display:flex;flex-wrap:wrap;gap:0.8em;padding:0;list-style:none}\n"
	".cards li{border:1px solid #ccc;border-radius:6px;padding:0.5em 0.9em;min-width:11em}\n"
	".cards b{display:block;font-size:1.4em}\n"
	".warn{background:#fff4e0;border-left:4px solid #e69500;padding:0.4em 0.8em}\n"
	".ok{background:#eaf6ea;border-left:4px solid #3a3;padding:0.4em 0.8em}\n"
	"nav ul{columns:2;font-size:0.9em}details.tbl{margin:0.4em 0}\n"
	"td.v-slower{background:#f5b7b1;font-weight:bold}td.v-faster{background:#abebc6}\n"
	"td.v-noise{color:#777}td.v-same{color:#1e8449}\n";

/* Sorting: numbers by data-v, text naturally; filtering: rows holding the typed text.
 * A link "index.html#sort=<table id>:<column>[:desc]" opens the page with that table
 * sorted (and scrolled to): a sorted view can be shared. */
static const char script[] =
	"(function(){\n"
	"function val(td){var v=td.getAttribute('data-v');return v===null?null:parseFloat(v);}\n"
	"document.querySelectorAll('table.sortable').forEach(function(t){\n"
	" var hs=t.tHead.rows[t.tHead.rows.length-1].cells;\n"
	" Array.prototype.forEach.call(hs,function(th,i){th.addEventListener('click',function(){\n"
	"  var asc=th.getAttribute('aria-sort')!=='ascending';\n"
	"  Array.prototype.forEach.call(hs,function(h){h.removeAttribute('aria-sort');});\n"
	"  th.setAttribute('aria-sort',asc?'ascending':'descending');\n"
	"  var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows);\n"
	"  rows.sort(function(a,c){var x=a.cells[i],y=c.cells[i];if(!x||!y)return 0;\n"
	"   var p=val(x),q=val(y),r;\n"
	"   if(p!==null&&q!==null)r=p-q;else if(p!==null)r=-1;else if(q!==null)r=1;\n"
	"   else r=x.textContent.localeCompare(y.textContent,undefined,{numeric:true});\n"
	"   return asc?r:-r;});\n"
	"  rows.forEach(function(r){b.appendChild(r);});});});});\n"
	"document.querySelectorAll('input.filter').forEach(function(inp){\n"
	" inp.addEventListener('input',function(){var t=document.getElementById(inp.getAttribute('data-for'));\n"
	"  var q=inp.value.toLowerCase();Array.prototype.forEach.call(t.tBodies[0].rows,function(r){\n"
	"   r.style.display=r.textContent.toLowerCase().indexOf(q)>=0?'':'none';});});});\n"
	"var m=/^#sort=([A-Za-z0-9_-]+):([0-9]+)(:desc)?$/.exec(location.hash);\n"
	"if(m){var t=document.getElementById('t_'+m[1]);if(t){var h=t.tHead.rows[t.tHead.rows.length-1].cells[+m[2]];\n"
	" if(h){h.click();if(m[3])h.click();}var d=t.closest('details');if(d)d.open=true;t.scrollIntoView();}}\n"
	"})();\n";

/* Writes the SVG text s (from "<svg") with every id, href="#..." and url(#...) prefixed
 * by "<pfx>-", and gnuplot's hypertext groups (which call a script gnuplot would load
 * from elsewhere) turned into plain <title> tooltips. */
static void svg_out(FILE *f, const char *s, const char *pfx)
{
	static const char *const refs[] = {"id=\"", "id='", "href=\"#", "href='#", "url(#"};
	static const char hyper[] = "<g onmousemove=\"gnuplot_svg.showHypertext(evt,'";
	while (*s) {
		if (!strncmp(s, hyper, sizeof hyper - 1)) {
			const char *t = s + sizeof hyper - 1, *e = strstr(t, "')\"");
			const char *g = e ? strstr(e, "<title> </title>") : NULL;
			if (g && g - e < 80) {
				fputs("<g><title>", f);
				fwrite(t, 1, (size_t)(e - t), f); /* sanitized by the roofline writer */
				fputs("</title>", f);
				s = g + strlen("<title> </title>");
				continue;
			}
		}
		/* namespace declarations: the HTML parser supplies them for inline SVG, and the
		 * page then holds no URL at all */
		if (!strncmp(s, " xmlns=\"http://www.w3.org/2000/svg\"", 35)) {
			s += 35;
			continue;
		}
		if (!strncmp(s, " xmlns:xlink=\"http://www.w3.org/1999/xlink\"", 43)) {
			s += 43;
			continue;
		}
		size_t k = 0;
		while (k < sizeof refs / sizeof *refs && strncmp(s, refs[k], strlen(refs[k])))
			k++;
		if (k < sizeof refs / sizeof *refs) {
			fputs(refs[k], f);
			fprintf(f, "%s-", pfx);
			s += strlen(refs[k]);
			continue;
		}
		fputc(*s++, f);
	}
}

static void embed_svg(FILE *f, const char *dir, const char *base, size_t k)
{
	char *path = NULL, *buf = NULL, pfx[16];
	size_t len = 0;
	if (asprintf(&path, "%s/%s.svg", dir, base) < 0)
		return;
	FILE *in = fopen(path, "rb");
	free(path);
	if (!in)
		return;
	FILE *mem = open_memstream(&buf, &len);
	char chunk[8192];
	size_t r;
	while (mem && (r = fread(chunk, 1, sizeof chunk, in)) > 0)
		fwrite(chunk, 1, r, mem);
	fclose(in);
	if (!mem)
		return;
	fclose(mem);
	const char *start = buf ? strstr(buf, "<svg") : NULL;
	snprintf(pfx, sizeof pfx, "f%zu", k);
	if (start)
		svg_out(f, start, pfx);
	free(buf);
}

/* What the summary counts. */
struct counts {
	size_t nok, nbad, nsus, nmach, nchk, nhold, nceil_sus, ndrawn;
};

static void count(const struct ocb_rctx *x, struct counts *c)
{
	memset(c, 0, sizeof *c);
	for (size_t i = 0; i < x->rs.n; i++) {
		int ok = !strcmp(x->rs.r[i].status, "ok");
		c->nok += ok;
		c->nbad += !ok;
		c->nsus += ok && x->rs.r[i].suspect[0];
	}
	for (size_t i = 0; i < x->nruns; i++) {
		int seen = 0;
		for (size_t k = 0; k < i && !seen; k++)
			seen = x->runs[k].machine_id == x->runs[i].machine_id;
		c->nmach += !seen;
	}
	for (size_t m = 0; m < x->nmc; m++)
		for (size_t k = 0; k < x->mc[m].n; k++)
			c->nceil_sus += x->mc[m].c[k].suspect[0] != '\0';
	for (size_t i = 0; i < x->ntables; i++) {
		const struct ocb_table *t = &x->tables[i];
		if (strcmp(t->id, "quant_checks") || t->ncols < 3)
			continue;
		for (size_t r = 0; r < t->nrows; r++) {
			c->nchk++;
			c->nhold += t->text[r * t->ncols + 2] && !strcmp(t->text[r * t->ncols + 2], "yes");
		}
	}
	for (size_t i = 0; i < x->nplots; i++)
		c->ndrawn += x->plots[i].drawn;
}

/* The covered runs, the first 12 (the runs table has them all). */
static void runs_list(const struct ocb_rctx *x, FILE *f)
{
	fputs("<ul>\n", f);
	for (size_t i = 0; i < x->nruns && i < 12; i++) {
		const struct ocb_run *r = &x->runs[i];
		fprintf(f, "<li>run %lld <code>%.8s</code> ", (long long)r->id, r->uuid);
		ocb_esc_html(f, r->suite);
		fputs(" on ", f);
		ocb_esc_html(f, r->machine_host);
		fputs(" (", f);
		ocb_esc_html(f, r->cpu_model);
		fprintf(f, "), %s, %s, commit ", ocb_run_mode(r), r->shown);
		ocb_esc_html(f, r->git_sha[0] ? r->git_sha : "-");
		fputs(", ", f);
		ocb_esc_html(f, r->started_at);
		fputs("</li>\n", f);
	}
	if (x->nruns > 12)
		fprintf(f, "<li>... and %zu more: <a href=\"#runs_covered\">the runs table</a></li>\n",
			x->nruns - 12);
	fputs("</ul>\n", f);
	if (x->nheads) {
		fputs("<h3>Headline figures</h3>\n<p class=\"note\">Per benchmark, its best case "
		      "(highest rate, or lowest time without a work model):</p>\n<ul>\n", f);
		for (size_t i = 0; i < x->nheads; i++) {
			fputs("<li>", f);
			ocb_esc_html(f, x->heads[i]);
			fputs("</li>\n", f);
		}
		fputs("</ul>\n", f);
	}
}

/* Suspect ceilings (their roofline fractions are doubtful). */
static void ceiling_warnings(const struct ocb_rctx *x, FILE *f)
{
	fputs("<div class=\"warn\"><b>Suspect ceilings</b> (the roofline fractions against "
	      "them are doubtful):<ul>\n", f);
	for (size_t m = 0; m < x->nmc; m++)
		for (size_t c = 0; c < x->mc[m].n; c++) {
			const struct ocb_ceiling *ce = &x->mc[m].c[c];
			if (!ce->suspect[0])
				continue;
			fputs("<li>", f);
			ocb_esc_html(f, x->mc[m].host);
			fputs(": ", f);
			ocb_esc_html(f, ce->kind);
			fprintf(f, " at %d thr = %.4g ", ce->threads, ce->value);
			ocb_esc_html(f, ce->unit);
			fputs(": ", f);
			ocb_esc_html(f, ce->suspect);
			fputs("</li>\n", f);
		}
	fputs("</ul></div>\n", f);
}

/* Suspect and failed results, the first 12. */
static void result_warnings(const struct ocb_rctx *x, const struct counts *c, FILE *f)
{
	fprintf(f, "<div class=\"warn\"><b>%zu result(s) flagged suspect, %zu failed</b>:<ul>\n",
		c->nsus, c->nbad);
	size_t shown = 0;
	for (size_t i = 0; i < x->rs.n && shown < 12; i++) {
		const struct ocb_rrow *r = &x->rs.r[i];
		int ok = !strcmp(r->status, "ok");
		if (ok && !r->suspect[0])
			continue;
		shown++;
		fputs("<li>", f);
		ocb_esc_html(f, r->bench);
		fputc(' ', f);
		ocb_esc_html(f, r->params);
		fprintf(f, " t=%d: ", r->threads);
		ocb_esc_html(f, ok ? r->suspect : r->status);
		fputs("</li>\n", f);
	}
	if (c->nsus + c->nbad > shown)
		fprintf(f, "<li>... %zu more in the suites' data tables</li>\n",
			c->nsus + c->nbad - shown);
	fputs("</ul></div>\n", f);
}

/* The summary: cards, runs, headline figures, warnings. */
static void summary(const struct ocb_rctx *x, FILE *f)
{
	struct counts c;
	count(x, &c);
	fputs("<section id=\"summary\">\n<h2>Summary</h2>\n<ul class=\"cards\">\n", f);
	fprintf(f, "<li><b>%zu</b>machine(s)</li><li><b>%zu</b>run(s)</li>"
		   "<li><b>%zu</b>ok results</li><li><b>%zu</b>failed</li>"
		   "<li><b>%zu</b>flagged suspect</li>", c.nmach, x->nruns, c.nok, c.nbad, c.nsus);
	if (c.nchk)
		fprintf(f, "<li><b>%zu / %zu</b>acceptance checks hold</li>", c.nhold, c.nchk);
	fprintf(f, "<li><b>%zu / %zu</b>plots drawn</li>\n</ul>\n<p>", c.ndrawn, x->nplots);
	ocb_esc_html(f, x->covers);
	fputs(".</p>\n", f);
	runs_list(x, f);
	if (!c.nsus && !c.nbad && !c.nceil_sus && c.nhold == c.nchk)
		fputs("<p class=\"ok\">No warnings.</p>\n", f);
	if (c.nceil_sus)
		ceiling_warnings(x, f);
	if (c.nsus || c.nbad)
		result_warnings(x, &c, f);
	if (c.nchk && c.nhold < c.nchk)
		fprintf(f, "<div class=\"warn\"><b>%zu acceptance check(s) do not hold</b>: see "
			   "<a href=\"#quant_checks\">the checks</a>.</div>\n", c.nchk - c.nhold);
	fputs("</section>\n", f);
}

static void toc(const struct ocb_rctx *x, FILE *f)
{
	fputs("<nav><h2>Contents</h2><ul>\n", f);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < x->ntables; i++) {
			const struct ocb_table *t = &x->tables[i];
			if (ocb_table_in_paper(t) == pass)
				continue;
			fprintf(f, "<li><a href=\"#%s\">", t->id);
			ocb_esc_html(f, t->title);
			fputs(pass ? " (data)</a></li>\n" : "</a></li>\n", f);
		}
	for (size_t i = 0; i < x->nplots; i++)
		if (x->plots[i].drawn) {
			fprintf(f, "<li><a href=\"#plot-%s\">", x->plots[i].base);
			ocb_esc_html(f, x->plots[i].title);
			fputs("</a></li>\n", f);
		}
	fputs("</ul></nav>\n", f);
}

static void plots(const struct ocb_rctx *x, FILE *f)
{
	fputs("<h2 id=\"plots\">Plots</h2>\n", f);
	for (size_t i = 0; i < x->nplots; i++) {
		const struct ocb_rplot *p = &x->plots[i];
		if (p->drawn) {
			fprintf(f, "<figure id=\"plot-%s\">\n", p->base);
			embed_svg(f, x->out, p->base, i);
			fputs("<figcaption>", f);
			ocb_esc_html(f, p->title);
			fprintf(f, " (<a href=\"%s.svg\">SVG</a>, <a href=\"%s.png\">PNG</a>)"
				   "</figcaption>\n</figure>\n", p->base, p->base);
		} else {
			fputs("<p class=\"note\">Plot skipped: ", f);
			ocb_esc_html(f, p->title);
			fputs(" (", f);
			ocb_esc_html(f, p->why);
			fputs(")</p>\n", f);
		}
	}
}

int ocb_report_html(struct ocb_rctx *x, const char *when, const char *what, FILE *f)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		   "<meta name=\"viewport\" content=\"width=device-width\">\n"
		   "<title>ocbench report</title>\n<style>\n%s</style>\n</head>\n<body>\n"
		   "<h1>ocbench report</h1>\n<p class=\"note\">Generated ", style);
	ocb_esc_html(f, when);
	fputs(" from ", f);
	ocb_esc_html(f, what);
	fputs(".</p>\n", f);
	if (!x->ntables)
		fputs("<p>No results in the selection.</p>\n", f);
	summary(x, f);
	toc(x, f);
	fputs("<h2 id=\"tables\">Tables</h2>\n", f);
	for (size_t i = 0; i < x->ntables; i++)
		if (ocb_table_in_paper(&x->tables[i]))
			ocb_table_write_html_dash(&x->tables[i], f, 1);
	plots(x, f);
	fputs("<h2 id=\"data\">Data (long form: every case and field)</h2>\n", f);
	for (size_t i = 0; i < x->ntables; i++)
		if (!ocb_table_in_paper(&x->tables[i]))
			ocb_table_write_html_dash(&x->tables[i], f, 0);
	fprintf(f, "<script>\n%s</script>\n</body>\n</html>\n", script);
	return ferror(f) ? ocb_seterr(OCB_EIO, "index.html: write failed") : OCB_OK;
}
