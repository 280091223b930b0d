/* sec_sparse: the sparse suite's report (issue 11): where block sparsity pays on the
 * machine, and what pruning into blocks costs in accuracy and saves in bytes.
 *
 * Sources, all through db/'s typed API:
 *   results of bench "bsr_spmm" (x->rs; params m, k, n, block, density, peer), and the
 *   set-up metrics of its cases (workloads "bsr_spmm:...", identity kind
 *   "bsr_spmm_setup": convert_time, librsb_tune_time);
 *   final metrics of the workloads of identity kind "sparse_mlp" / "sparse_lm" (block,
 *   target; keys test_accuracy or val_ppl, block_sparsity, step_time, sparse_bytes,
 *   dense_bytes, sparse_bytes_q8_0 / _q4_0, prune_events, layer_step_time and
 *   layer_step_time_dense).
 * Tables:
 *   sparse_kernel     one row per (machine, m x k x n, block, density, threads): our BSR
 *                     time, useful GFLOP/s (2 nnz n), dense-equivalent GFLOP/s (2 m k n),
 *                     OpenBLAS sgemm and librsb times on the same matrix and the speedups,
 *                     librsb's tuning time (kept out of its timed region) and dense -> BSR;
 *                     a peer that did not run says its status;
 *   sparse_crossover  per (machine, shape, block, threads) with >= 2 densities: the
 *                     density up to which BSR beats dense OpenBLAS (crossover_density());
 *   sparse_<model>_accuracy  (mlp, lm) target x block -> sparsity reached, accuracy or
 *                     perplexity, delta vs the target-0 run, step time and its speedup,
 *                     the sparse layers' step alone vs the same layers dense;
 *   sparse_memory     inference bytes of the sparse layers: dense fp32 vs BSR values +
 *                     indices (measured from the stored arrays), and with Q8_0/Q4_0 values.
 * Plots: sparse_speedup_b<B> (speedup vs OpenBLAS over density, one per block size, with
 * the dense line), sparse_mlp_accuracy, sparse_lm_ppl (vs sparsity, one series per block). */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "escape.h"
#include "gnuplot.h"
#include "rctx.h"

enum { P_BSR, P_BLAS, P_RSB, NPEER };
static const char *const peer_names[NPEER] = {"bsr", "openblas", "librsb"};

/* One kernel case: the three peers on one matrix. */
struct kcase {
	int64_t machine_id, run_id;
	const char *host;
	int m, k, n, block, threads;
	double density;                   /* % of blocks stored */
	const struct ocb_rrow *p[NPEER];  /* NULL: the peer did not run this case */
	double convert_s, tune_s;         /* set-up metrics; NaN when not stored */
};

struct kset {
	struct kcase *c;
	size_t n, cap;
};

/* The case key and peer of a bsr_spmm row from its params; -1 if they do not parse. */
static int parse_row(const struct ocb_rrow *r, struct kcase *key)
{
	cJSON *p = r->params ? cJSON_Parse(r->params) : NULL;
	const cJSON *v;
	int peer = -1;
	memset(key, 0, sizeof *key);
	const char *ints[] = {"m", "k", "n", "block"};
	int *dst[] = {&key->m, &key->k, &key->n, &key->block};
	int ok = p != NULL;
	for (int i = 0; ok && i < 4; i++)
		ok = cJSON_IsNumber(v = cJSON_GetObjectItem(p, ints[i])) && (*dst[i] = v->valueint) > 0;
	ok = ok && cJSON_IsNumber(v = cJSON_GetObjectItem(p, "density"));
	if (ok)
		key->density = v->valuedouble;
	const char *pn = ok && cJSON_IsString(v = cJSON_GetObjectItem(p, "peer")) ? v->valuestring
										    : "bsr";
	for (int i = 0; ok && i < NPEER; i++)
		if (!strcmp(pn, peer_names[i]))
			peer = i;
	cJSON_Delete(p);
	key->machine_id = r->machine_id, key->run_id = r->run_id, key->host = r->host;
	key->threads = r->threads;
	key->convert_s = key->tune_s = NAN;
	return peer;
}

static int same_case(const struct kcase *a, const struct kcase *b)
{
	return a->machine_id == b->machine_id && a->run_id == b->run_id && a->m == b->m &&
	       a->k == b->k && a->n == b->n && a->block == b->block && a->threads == b->threads &&
	       a->density == b->density;
}

/* Every bsr_spmm case of the selection, its peers joined. */
static int collect_cases(const struct ocb_rset *rs, struct kset *ks)
{
	for (size_t i = 0; i < rs->n; i++) {
		const struct ocb_rrow *r = &rs->r[i];
		struct kcase key;
		int peer;
		if (strcmp(r->bench, "bsr_spmm") || (peer = parse_row(r, &key)) < 0)
			continue;
		size_t j = 0;
		while (j < ks->n && !same_case(&ks->c[j], &key))
			j++;
		if (j == ks->n) {
			if (ks->n == ks->cap) {
				size_t cap = ks->cap ? 2 * ks->cap : 32;
				struct kcase *nc = realloc(ks->c, cap * sizeof *nc);
				if (!nc)
					return ocb_seterr(OCB_ENOMEM, "sparse report");
				ks->c = nc, ks->cap = cap;
			}
			ks->c[ks->n++] = key;
		}
		/* an ok row wins over a failed one of the same peer */
		const struct ocb_rrow *old = ks->c[j].p[peer];
		if (!old || strcmp(old->status, "ok"))
			ks->c[j].p[peer] = r;
	}
	return OCB_OK;
}

static int row_ok(const struct ocb_rrow *r)
{
	return r && !strcmp(r->status, "ok") && ocb_unit_seconds(r->unit) > 0 && r->median > 0;
}

static double row_seconds(const struct ocb_rrow *r)
{
	return row_ok(r) ? r->median * ocb_unit_seconds(r->unit) : NAN;
}

/* The dense OpenBLAS time for c's shape and threads on its machine and run: the openblas
 * row of the case itself, else of any case of that shape (sgemm does not see the mask). */
static double dense_seconds(const struct kset *ks, const struct kcase *c)
{
	if (row_ok(c->p[P_BLAS]))
		return row_seconds(c->p[P_BLAS]);
	for (size_t i = 0; i < ks->n; i++) {
		const struct kcase *o = &ks->c[i];
		if (o->machine_id == c->machine_id && o->run_id == c->run_id && o->m == c->m &&
		    o->k == c->k && o->n == c->n && o->threads == c->threads && row_ok(o->p[P_BLAS]))
			return row_seconds(o->p[P_BLAS]);
	}
	return NAN;
}

/* convert_time (bsr) and librsb_tune_time (librsb) from the set-up metrics. */
static void join_setup(struct kset *ks, const struct ocb_metric_set *ms)
{
	for (size_t i = 0; i < ms->n; i++) {
		const struct ocb_metric_row *m = &ms->r[i];
		cJSON *id = m->ident ? cJSON_Parse(m->ident) : NULL;
		const cJSON *kind = cJSON_GetObjectItem(id, "kind");
		if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "bsr_spmm_setup")) {
			cJSON_Delete(id);
			continue;
		}
		struct kcase key = {.run_id = m->run_id};
		const char *f[] = {"m", "k", "n", "block", "threads"};
		int *dst[] = {&key.m, &key.k, &key.n, &key.block, &key.threads};
		for (int j = 0; j < 5; j++) {
			const cJSON *v = cJSON_GetObjectItem(id, f[j]);
			*dst[j] = cJSON_IsNumber(v) ? v->valueint : -1;
		}
		const cJSON *d = cJSON_GetObjectItem(id, "density");
		key.density = cJSON_IsNumber(d) ? d->valuedouble : NAN;
		for (size_t j = 0; j < ks->n; j++) {
			struct kcase *c = &ks->c[j];
			key.machine_id = c->machine_id;
			if (!same_case(c, &key))
				continue;
			if (!strcmp(m->key, "convert_time"))
				c->convert_s = m->value;
			else if (!strcmp(m->key, "librsb_tune_time"))
				c->tune_s = m->value;
		}
		cJSON_Delete(id);
	}
}

static int cmp_case(const void *a, const void *b)
{
	const struct kcase *x = a, *y = b;
	int h = strcmp(x->host, y->host);
	if (h)
		return h;
	long sx = (long)x->m * x->k * x->n, sy = (long)y->m * y->k * y->n;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	if (x->n != y->n)
		return x->n - y->n;
	if (x->block != y->block)
		return x->block - y->block;
	if (x->threads != y->threads)
		return x->threads - y->threads;
	return (x->density < y->density) - (x->density > y->density);
}

/* A peer's time cell: ms, or its status when it ran and failed, or "-" when it did not. */
static void time_cell(struct ocb_table *t, size_t row, size_t col, const struct ocb_rrow *r)
{
	if (row_ok(r))
		ocb_table_num(t, row, col, row_seconds(r) * 1e3, "%.4g");
	else
		ocb_table_text(t, row, col, r ? r->status : "-");
}

static int kernel_table(struct ocb_rctx *x, const struct kset *ks)
{
	const char *cols[] = {"machine", "m x k x n", "block", "density (%)", "threads",
			      "BSR (ms)", "useful GFLOP/s", "dense-eq. GFLOP/s", "OpenBLAS (ms)",
			      "x OpenBLAS", "librsb (ms)", "x librsb", "librsb tuning (s)",
			      "dense->BSR (ms)"};
	struct ocb_table *t;
	int rc = ocb_rctx_table(x, &t);
	if (rc)
		return rc;
	if ((rc = ocb_table_init(t, "sparse_kernel", "Sparse suite: block-sparse Y = W X (BSR) "
				 "vs OpenBLAS dense and tuned librsb, same matrix", 14, cols))) {
		ocb_rctx_table_drop(x);
		return rc;
	}
	for (size_t i = 0; i < ks->n && rc == OCB_OK; i++) {
		const struct kcase *c = &ks->c[i];
		if (!c->p[P_BSR] && !c->p[P_RSB])
			continue; /* the dense line alone: a column of the other rows */
		double tb = row_seconds(c->p[P_BSR]), td = dense_seconds(ks, c);
		double tr = row_seconds(c->p[P_RSB]), dense_flops = 2.0 * c->m * c->k * c->n;
		size_t row;
		if ((rc = ocb_table_add_row(t, &row)))
			break;
		ocb_table_text(t, row, 0, c->host);
		ocb_table_printf(t, row, 1, "%dx%dx%d", c->m, c->k, c->n);
		ocb_table_num(t, row, 2, c->block, "%.0f");
		ocb_table_num(t, row, 3, c->density, "%g");
		ocb_table_num(t, row, 4, c->threads, "%.0f");
		time_cell(t, row, 5, c->p[P_BSR]);
		ocb_table_num(t, row, 6, c->p[P_BSR] ? c->p[P_BSR]->flops / tb / 1e9 : NAN, "%.1f");
		ocb_table_num(t, row, 7, dense_flops / tb / 1e9, "%.1f");
		if (c->p[P_BLAS] || isnan(td))
			time_cell(t, row, 8, c->p[P_BLAS]);
		else /* the shape's dense row, measured under another mask */
			ocb_table_num(t, row, 8, td * 1e3, "%.4g");
		ocb_table_num(t, row, 9, td / tb, "%.2f");
		time_cell(t, row, 10, c->p[P_RSB]);
		ocb_table_num(t, row, 11, tr / tb, "%.2f");
		ocb_table_num(t, row, 12, c->tune_s, "%.3f");
		ocb_table_num(t, row, 13, c->convert_s * 1e3, "%.3g");
	}
	if (rc == OCB_OK)
		rc = ocb_table_set_note(t, "useful GFLOP/s counts the stored blocks only (2 nnz n); "
				       "dense-eq. = 2 m k n over the BSR time. x OpenBLAS / x librsb: "
				       "their time over ours (> 1: BSR faster). librsb runs after its "
				       "own autotuning (rsb_tune_spmm, capped at 2 s); the tuning time "
				       "and the dense -> BSR conversion are set-up, never timed. '-': "
				       "the peer did not run this case.");
	return rc;
}

/* The crossover density of one series (densities d[] ascending, speedups s[]): the
 * density up to which BSR is faster, linearly interpolated between the last measured
 * density with s >= 1 (scanning upwards from the sparsest) and the next one with s < 1.
 * +inf: faster at every measured density; -inf: slower at the sparsest already. */
static double crossover_density(const double *d, const double *s, size_t n)
{
	if (!n || !(s[0] >= 1.0))
		return -INFINITY;
	for (size_t i = 1; i < n; i++)
		if (!(s[i] >= 1.0)) {
			if (!isfinite(s[i]))
				return d[i - 1];
			return d[i - 1] + (s[i - 1] - 1.0) * (d[i] - d[i - 1]) / (s[i - 1] - s[i]);
		}
	return INFINITY;
}

/* The bsr speedups vs OpenBLAS of the cases of c0's series (same machine, run, shape,
 * block, threads; ks sorted with densities descending), densities ascending, into d, s
 * (room for ks->n). Returns how many. peer: P_BSR or P_RSB. */
static size_t series(const struct kset *ks, const struct kcase *c0, int peer, double *d,
		     double *s)
{
	size_t n = 0;
	for (size_t i = ks->n; i-- > 0;) {
		const struct kcase *c = &ks->c[i];
		if (c->machine_id != c0->machine_id || c->run_id != c0->run_id || c->m != c0->m ||
		    c->k != c0->k || c->n != c0->n || c->block != c0->block ||
		    c->threads != c0->threads || !row_ok(c->p[peer]))
			continue;
		double sp = dense_seconds(ks, c) / row_seconds(c->p[peer]);
		if (isnan(sp))
			continue;
		d[n] = c->density, s[n++] = sp;
	}
	return n;
}

/* 1 if c is the first case of its series in ks (so each series is visited once). */
static int series_head(const struct kset *ks, size_t i)
{
	const struct kcase *c = &ks->c[i];
	for (size_t j = 0; j < i; j++) {
		const struct kcase *o = &ks->c[j];
		if (o->machine_id == c->machine_id && o->run_id == c->run_id && o->m == c->m &&
		    o->k == c->k && o->n == c->n && o->block == c->block && o->threads == c->threads)
			return 0;
	}
	return 1;
}

static int crossover_table(struct ocb_rctx *x, const struct kset *ks, double *d, double *s)
{
	const char *cols[] = {"machine", "m x k x n", "block", "threads", "densities (%)",
			      "x OpenBLAS at sparsest", "x OpenBLAS at densest",
			      "faster than dense up to (% density)"};
	struct ocb_table *t = NULL;
	int rc = OCB_OK;
	for (size_t i = 0; i < ks->n && rc == OCB_OK; i++) {
		const struct kcase *c = &ks->c[i];
		size_t n, row;
		if (!series_head(ks, i) || (n = series(ks, c, P_BSR, d, s)) < 2)
			continue;
		if (!t && (rc = ocb_rctx_table(x, &t)) == OCB_OK &&
		    (rc = ocb_table_init(t, "sparse_crossover", "Sparse suite: crossover density "
					 "per block size (BSR vs dense OpenBLAS)", 8, cols)))
			ocb_rctx_table_drop(x);
		if (rc || (rc = ocb_table_add_row(t, &row)))
			break;
		double cd = crossover_density(d, s, n);
		ocb_table_text(t, row, 0, c->host);
		ocb_table_printf(t, row, 1, "%dx%dx%d", c->m, c->k, c->n);
		ocb_table_num(t, row, 2, c->block, "%.0f");
		ocb_table_num(t, row, 3, c->threads, "%.0f");
		ocb_table_printf(t, row, 4, "%g-%g (%zu)", d[0], d[n - 1], n);
		ocb_table_num(t, row, 5, s[0], "%.2f");
		ocb_table_num(t, row, 6, s[n - 1], "%.2f");
		if (isinf(cd))
			ocb_table_printf(t, row, 7, cd > 0 ? ">= %g (faster at every density)"
							 : "< %g (slower at every density)",
					 cd > 0 ? d[n - 1] : d[0]);
		else
			ocb_table_num(t, row, 7, cd, "%.0f");
	}
	if (t && rc == OCB_OK)
		rc = ocb_table_set_note(t, "crossover: scanning from the sparsest density up, the "
				       "density where the speedup over dense falls below 1, linearly "
				       "interpolated between the two measured densities around it.");
	return rc;
}

/* One datablock of (density, speedup) and its plot clause; nothing if n == 0. */
static void plot_series(FILE *f, FILE *c, int *k, const double *d, const double *s, size_t n,
			const char *title)
{
	if (!n)
		return;
	fprintf(f, "$S%d << EOD\n", *k);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%.9g %.9g\n", d[i], s[i]);
	fputs("EOD\n", f);
	fprintf(c, ", $S%d using 1:2 with linespoints title ", (*k)++);
	ocb_esc_gnuplot(c, title);
}

/* sparse_speedup_b<B>: speedup over dense OpenBLAS vs density, every series of block B
 * (BSR and librsb), and the dense line at 1. */
static int speedup_plot(struct ocb_rctx *x, const struct kset *ks, int B, double *d, double *s)
{
	char base[48], title[96], st[160];
	struct ocb_gp gp;
	snprintf(base, sizeof base, "sparse_speedup_b%d", B);
	snprintf(title, sizeof title, "Sparse suite: speedup over dense OpenBLAS, %dx%d blocks", B, B);
	if (ocb_gp_open(&gp, x->out, base))
		return ocb_rctx_plot(x, base, title, 0, ocb_lasterr());
	FILE *f = gp.f;
	fputs("set grid\nset key top right\nset logscale y\nset title ", f);
	ocb_esc_gnuplot(f, title);
	fputs("\nset xlabel 'density (% of blocks stored)'\nset ylabel 'speedup over dense "
	      "(OpenBLAS sgemm = 1)'\nset xrange [0:105]\n", f);
	char *cmd = NULL;
	size_t len = 0;
	FILE *c = open_memstream(&cmd, &len);
	int k = 0;
	if (c)
		fputs("plot 1 with lines dt 2 lw 2 title 'dense (OpenBLAS)'", c);
	for (size_t i = 0; c && i < ks->n; i++) {
		const struct kcase *e = &ks->c[i];
		if (e->block != B || !series_head(ks, i))
			continue;
		static const int peers[] = {P_BSR, P_RSB};
		for (int p = 0; p < 2; p++) {
			snprintf(st, sizeof st, "%s %dx%dx%d t%d %s", p ? "librsb" : "BSR", e->m,
				 e->k, e->n, e->threads, e->host);
			plot_series(f, c, &k, d, s, series(ks, e, peers[p], d, s), st);
		}
	}
	if (c)
		fclose(c);
	int rc;
	if (!k || !cmd) {
		ocb_gp_abort(&gp);
		rc = ocb_rctx_plot(x, base, title, 0, "no speedup against a dense row");
	} else {
		int drew = ocb_gp_finish(&gp, cmd) == OCB_OK;
		rc = ocb_rctx_plot(x, base, title, drew, drew ? NULL : ocb_lasterr());
	}
	free(cmd);
	return rc;
}

static int kernel_part(struct ocb_rctx *x, const struct ocb_metric_set *setup)
{
	struct kset ks = {0};
	double *d = NULL, *s = NULL;
	int rc = collect_cases(&x->rs, &ks);
	if (rc || !ks.n)
		goto out;
	qsort(ks.c, ks.n, sizeof *ks.c, cmp_case);
	join_setup(&ks, setup);
	d = malloc(ks.n * sizeof *d), s = malloc(ks.n * sizeof *s);
	if (!d || !s) {
		rc = ocb_seterr(OCB_ENOMEM, "sparse report");
		goto out;
	}
	if ((rc = kernel_table(x, &ks)) || (rc = crossover_table(x, &ks, d, s)))
		goto out;
	int done[65] = {0}; /* block sizes plotted (the parameter allows 4..64) */
	for (size_t i = 0; i < ks.n && rc == OCB_OK; i++) {
		int B = ks.c[i].block;
		if (B < 1 || B > 64 || done[B]++)
			continue;
		rc = speedup_plot(x, &ks, B, d, s);
	}
out:
	free(d);
	free(s);
	free(ks.c);
	return rc;
}

/* ---- accuracy, step time and memory of the pruned models ---- */

#define WMAX 64

struct wrow {
	int64_t run_id;
	const char *wl;
	int lm, block;
	double target; /* % */
	double acc, ppl, sparsity, step, sbytes, dbytes, q8, q4, events, lstep, ldense;
};

static double *wslot(struct wrow *r, const char *k)
{
	static double sink;
	struct { const char *k; double *p; } m[] = {
		{"test_accuracy", &r->acc}, {"val_ppl", &r->ppl}, {"block_sparsity", &r->sparsity},
		{"step_time", &r->step}, {"sparse_bytes", &r->sbytes}, {"dense_bytes", &r->dbytes},
		{"sparse_bytes_q8_0", &r->q8}, {"sparse_bytes_q4_0", &r->q4},
		{"prune_events", &r->events}, {"layer_step_time", &r->lstep},
		{"layer_step_time_dense", &r->ldense}};
	for (size_t i = 0; i < sizeof m / sizeof *m; i++)
		if (!strcmp(m[i].k, k))
			return m[i].p;
	return &sink;
}

/* A new row for metric m if its identity is a sparse_mlp / sparse_lm one; else NULL. */
static struct wrow *new_wrow(struct wrow *rows, size_t *n, const struct ocb_metric_row *m)
{
	cJSON *id = m->ident ? cJSON_Parse(m->ident) : NULL;
	const cJSON *kind = cJSON_GetObjectItem(id, "kind"), *b = cJSON_GetObjectItem(id, "block");
	const cJSON *t = cJSON_GetObjectItem(id, "target");
	struct wrow *r = NULL;
	if (*n < WMAX && cJSON_IsString(kind) && cJSON_IsNumber(b) && cJSON_IsNumber(t) &&
	    (!strcmp(kind->valuestring, "sparse_mlp") || !strcmp(kind->valuestring, "sparse_lm"))) {
		r = &rows[(*n)++];
		r->run_id = m->run_id, r->wl = m->workload;
		r->lm = !strcmp(kind->valuestring, "sparse_lm");
		r->block = b->valueint, r->target = 100.0 * t->valuedouble;
		double *v = &r->acc;
		for (size_t z = 0; z < (sizeof *r - offsetof(struct wrow, acc)) / sizeof *v; z++)
			v[z] = NAN;
	}
	cJSON_Delete(id);
	return r;
}

static int cmp_wrow(const void *a, const void *b)
{
	const struct wrow *x = a, *y = b;
	if (x->lm != y->lm)
		return x->lm - y->lm;
	if (x->run_id != y->run_id)
		return x->run_id < y->run_id ? -1 : 1;
	if (x->block != y->block)
		return x->block - y->block;
	return (x->target > y->target) - (x->target < y->target);
}

/* The rows of the final metrics (newest value of a key wins), sorted model, run, block,
 * target. */
static size_t collect_wrows(const struct ocb_metric_set *ms, struct wrow *rows)
{
	size_t n = 0;
	for (size_t i = 0; i < ms->n; i++) {
		const struct ocb_metric_row *m = &ms->r[i];
		size_t k = 0;
		while (k < n && !(rows[k].run_id == m->run_id && !strcmp(rows[k].wl, m->workload)))
			k++;
		struct wrow *r = k < n ? &rows[k] : new_wrow(rows, &n, m);
		if (r)
			*wslot(r, m->key) = m->value;
	}
	qsort(rows, n, sizeof *rows, cmp_wrow);
	return n;
}

/* The target-0 row of r's model, run and block (else of any block of that run), or NULL. */
static const struct wrow *base_of(const struct wrow *rows, size_t n, const struct wrow *r)
{
	const struct wrow *any = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct wrow *b = &rows[i];
		if (b->lm != r->lm || b->run_id != r->run_id || b->target != 0)
			continue;
		if (b->block == r->block)
			return b;
		any = any ? any : b;
	}
	return any;
}

static int accuracy_table(struct ocb_rctx *x, const struct wrow *rows, size_t n, int lm)
{
	const char *cols[] = {"run", "block", "target (%)", "sparsity reached (%)",
			      lm ? "val. ppl" : "test accuracy",
			      lm ? "delta vs 0% (ppl %)" : "delta vs 0% (points)", "step (ms)",
			      "step speedup vs 0%", "pruning events", "sparse layers step (ms)",
			      "same layers dense (ms)", "layers x dense"};
	struct ocb_table *t = NULL;
	int rc = OCB_OK;
	for (size_t i = 0; i < n && rc == OCB_OK; i++) {
		const struct wrow *r = &rows[i], *b = base_of(rows, n, r);
		size_t row;
		if (r->lm != lm)
			continue;
		if (!t && (rc = ocb_rctx_table(x, &t)) == OCB_OK &&
		    (rc = ocb_table_init(t, lm ? "sparse_lm_accuracy" : "sparse_mlp_accuracy",
					 lm ? "Sparse suite: byte LM, SwiGLU weights pruned into "
					      "blocks: perplexity vs sparsity"
					    : "Sparse suite: MLP, hidden weights pruned into blocks: "
					      "accuracy vs sparsity", 12, cols)))
			ocb_rctx_table_drop(x);
		if (rc || (rc = ocb_table_add_row(t, &row)))
			break;
		double v = lm ? r->ppl : r->acc, bv = b ? (lm ? b->ppl : b->acc) : NAN;
		ocb_table_printf(t, row, 0, "%lld", (long long)r->run_id);
		ocb_table_num(t, row, 1, r->block, "%.0f");
		ocb_table_num(t, row, 2, r->target, "%g");
		ocb_table_num(t, row, 3, 100 * r->sparsity, "%.1f");
		ocb_table_num(t, row, 4, v, lm ? "%.3f" : "%.4f");
		ocb_table_num(t, row, 5, lm ? 100 * (v / bv - 1) : 100 * (v - bv), "%+.2f");
		ocb_table_num(t, row, 6, r->step * 1e3, "%.3g");
		ocb_table_num(t, row, 7, b ? b->step / r->step : NAN, "%.2f");
		ocb_table_num(t, row, 8, r->events, "%.0f");
		ocb_table_num(t, row, 9, r->lstep * 1e3, "%.3g");
		ocb_table_num(t, row, 10, r->ldense * 1e3, "%.3g");
		ocb_table_num(t, row, 11, r->ldense / r->lstep, "%.2f");
	}
	if (t && rc == OCB_OK)
		rc = ocb_table_set_note(t, "BLaST-style: block Frobenius-norm magnitude pruning on "
				       "a cubic schedule (ramp over 10-40% of training, then "
				       "fine-tuning with the mask fixed), the stored identity says the "
				       "rule. 0% = the same trainer and kernels at density 1, the "
				       "reference of the deltas; the step runs on the block-sparse "
				       "kernels, so its time falls with sparsity. step: the whole "
				       "training step, mean over the run (the dense first 10% and the "
				       "ramp included; also data, dense output layer, softmax). Sparse "
				       "layers step: the pruned layers alone after training (forward, "
				       "dW on the stored blocks, dX, AdamW on the stored blocks), vs "
				       "the same layers dense on OpenBLAS sgemm (same batch and "
				       "threads, AdamW on every weight), best of interleaved rounds.");
	return rc;
}

static int memory_table(struct ocb_rctx *x, const struct wrow *rows, size_t n)
{
	const char *cols[] = {"model", "run", "block", "sparsity (%)", "dense fp32 (KiB)",
			      "BSR fp32 (KiB)", "x smaller", "BSR Q8_0 (KiB)", "x smaller",
			      "BSR Q4_0 (KiB)", "x smaller"};
	struct ocb_table *t = NULL;
	int rc = OCB_OK;
	for (size_t i = 0; i < n && rc == OCB_OK; i++) {
		const struct wrow *r = &rows[i];
		size_t row;
		if (!(r->dbytes > 0 && r->sbytes > 0))
			continue;
		if (!t && (rc = ocb_rctx_table(x, &t)) == OCB_OK &&
		    (rc = ocb_table_init(t, "sparse_memory", "Sparse suite: inference bytes of the "
					 "pruned weights, block-sparse vs dense", 11, cols)))
			ocb_rctx_table_drop(x);
		if (rc || (rc = ocb_table_add_row(t, &row)))
			break;
		ocb_table_text(t, row, 0, r->lm ? "lm (SwiGLU)" : "mlp (hidden)");
		ocb_table_printf(t, row, 1, "%lld", (long long)r->run_id);
		ocb_table_num(t, row, 2, r->block, "%.0f");
		ocb_table_num(t, row, 3, 100 * r->sparsity, "%.1f");
		ocb_table_num(t, row, 4, r->dbytes / 1024, "%.1f");
		ocb_table_num(t, row, 5, r->sbytes / 1024, "%.1f");
		ocb_table_num(t, row, 6, r->dbytes / r->sbytes, "%.2f");
		ocb_table_num(t, row, 7, r->q8 / 1024, "%.1f");
		ocb_table_num(t, row, 8, r->dbytes / r->q8, "%.2f");
		ocb_table_num(t, row, 9, r->q4 / 1024, "%.1f");
		ocb_table_num(t, row, 10, r->dbytes / r->q4, "%.2f");
	}
	if (t && rc == OCB_OK)
		rc = ocb_table_set_note(t, "BSR bytes are the stored arrays of the trained layers: "
				       "fp32 values of the kept blocks + a column index per block + "
				       "the row pointers. Q8_0 / Q4_0: the same structure with the "
				       "values at 8.5 / 4.5 bits each (ggml's 34 / 18 bytes per 32 "
				       "values), computed from the stored block count. Dense: the same "
				       "layers in fp32.");
	return rc;
}

/* sparse_mlp_accuracy / sparse_lm_ppl: the metric vs sparsity reached, one series per
 * (run, block). */
static int accuracy_plot(struct ocb_rctx *x, const struct wrow *rows, size_t n, int lm)
{
	const char *base = lm ? "sparse_lm_ppl" : "sparse_mlp_accuracy";
	const char *title = lm ? "Sparse suite: byte LM validation perplexity vs block sparsity"
			       : "Sparse suite: MLP test accuracy vs block sparsity";
	struct ocb_gp gp;
	size_t have = 0;
	for (size_t i = 0; i < n; i++)
		have += rows[i].lm == lm;
	if (!have)
		return OCB_OK;
	if (ocb_gp_open(&gp, x->out, base))
		return ocb_rctx_plot(x, base, title, 0, ocb_lasterr());
	FILE *f = gp.f;
	fputs("set grid\nset key bottom left\nset title ", f);
	ocb_esc_gnuplot(f, title);
	fprintf(f, "\nset xlabel 'block sparsity of the pruned weights (%%)'\nset ylabel '%s'\n",
		lm ? "validation perplexity (bytes)" : "test accuracy");
	char *cmd = NULL, st[64];
	size_t len = 0;
	FILE *c = open_memstream(&cmd, &len);
	int k = 0;
	for (size_t i = 0; c && i < n; i++) {
		const struct wrow *r = &rows[i];
		if (r->lm != lm || (i > 0 && rows[i - 1].lm == lm && rows[i - 1].run_id == r->run_id &&
				    rows[i - 1].block == r->block))
			continue; /* rows are sorted: i starts a (run, block) series */
		fprintf(f, "$A%d << EOD\n", k);
		for (size_t j = i; j < n && rows[j].lm == lm && rows[j].run_id == r->run_id &&
				   rows[j].block == r->block; j++)
			fprintf(f, "%.9g %.9g\n", 100 * rows[j].sparsity, lm ? rows[j].ppl : rows[j].acc);
		fputs("EOD\n", f);
		fprintf(c, "%s$A%d using 1:2 with linespoints title ", k ? ", " : "plot ", k);
		snprintf(st, sizeof st, "%dx%d blocks (run %lld)", r->block, r->block,
			 (long long)r->run_id);
		ocb_esc_gnuplot(c, st);
		k++;
	}
	if (c)
		fclose(c);
	int rc;
	if (!k || !cmd) {
		ocb_gp_abort(&gp);
		rc = ocb_rctx_plot(x, base, title, 0, "no rows");
	} else {
		int drew = ocb_gp_finish(&gp, cmd) == OCB_OK;
		rc = ocb_rctx_plot(x, base, title, drew, drew ? NULL : ocb_lasterr());
	}
	free(cmd);
	return rc;
}

static int model_part(struct ocb_rctx *x, const struct ocb_metric_set *fin)
{
	struct wrow *rows = calloc(WMAX, sizeof *rows);
	if (!rows)
		return ocb_seterr(OCB_ENOMEM, "sparse report");
	size_t n = collect_wrows(fin, rows);
	int rc = OCB_OK;
	for (int lm = 0; lm < 2 && rc == OCB_OK; lm++)
		if ((rc = accuracy_table(x, rows, n, lm)) == OCB_OK)
			rc = accuracy_plot(x, rows, n, lm);
	if (rc == OCB_OK)
		rc = memory_table(x, rows, n);
	free(rows);
	return rc;
}

int ocb_rsec_sparse(struct ocb_rctx *x)
{
	static const char *const keys[] = {
		"convert_time", "librsb_tune_time", "test_accuracy", "val_ppl", "block_sparsity",
		"step_time", "sparse_bytes", "dense_bytes", "sparse_bytes_q8_0",
		"sparse_bytes_q4_0", "prune_events", "layer_step_time", "layer_step_time_dense",
		NULL};
	struct ocb_metric_query q = {.steps = OCB_MQ_FINAL, .value_present = 1, .keys = keys,
				     .order = OCB_MQ_BY_ID};
	struct ocb_metric_set fin = {0};
	int rc = ocb_sel_metrics(x->db, &x->o->sel, &q, &fin);
	if (rc == OCB_OK)
		rc = kernel_part(x, &fin);
	if (rc == OCB_OK)
		rc = model_part(x, &fin);
	ocb_metric_set_release(&fin);
	return rc;
}
