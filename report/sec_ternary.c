/* sec_ternary: the ternary suite's paper table and loss curves (issue 10).
 *
 * Source: metric rows of the workloads named "ternary_<model>:<label>:<moments>" (bench
 * collect/ternary_train.h), their identity JSON (kind "ternary": model, method, bits,
 * moments, label) read back from workload_ident, through db/'s typed ocb_sel_metrics.
 * Per model (mlp, lm):
 *   table "ternary_<model>": rows method (fp32, STE, DQT-8/4/3/ternary and the moment
 *     variants), columns weight bits, optimizer precision, training bytes/param
 *     (measured, peak RSS) and computed, accuracy (MLP) or validation loss + perplexity
 *     (LM), delta vs the fp32 row (points / %), step time, samples or tokens per second;
 *   table "ternary_<model>_bytes": where every byte goes (computed, per parameter:
 *     weights, gradients, optimizer state, activations), the measured total, and the
 *     state (weights + gradients + optimizer) computed and measured (extrapolated to no
 *     activations from the footprints at the training batch and at batch 1);
 *   table "ternary_export": TQ2_0 / TQ1_0 accuracy of the DQT-ternary MLP vs training;
 *   table "ternary_lm_width": the LM's bytes per parameter by part at each width of the
 *     memory scan (workloads "ternary_lm_d<d>:...", bench ternary_lm_width), ratios to
 *     the STE row of the same width;
 *   plot "ternary_<model>_loss": training loss vs step of every method on one plot. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "escape.h"
#include "gnuplot.h"
#include "rctx.h"

#define TMAX 32

struct trow {
	char wl[96], label[32], method[8], moments[8];
	int bits, d_model;
	double acc, loss, ppl, bpp_meas, bpp_comp, step, rate, wb, gb, ob, ab, np, st_meas;
	double tq2, tq1, train_acc_eq;
};

static const char *const final_keys[] = {
	"test_accuracy", "test_loss", "val_loss", "val_ppl", "bytes_per_param_measured",
	"bytes_per_param_computed", "step_time", "samples_per_s", "tokens_per_s",
	"weight_bytes", "grad_bytes", "optimizer_bytes", "activation_bytes", "nparams",
	"tq2_0_accuracy", "tq1_0_accuracy", "export_equal", "state_bytes_per_param_measured",
	NULL};

static double *slot(struct trow *r, const char *k)
{
	static double sink;
	struct { const char *k; double *p; } m[] = {
		{"test_accuracy", &r->acc}, {"test_loss", &r->loss}, {"val_loss", &r->loss},
		{"val_ppl", &r->ppl}, {"bytes_per_param_measured", &r->bpp_meas},
		{"bytes_per_param_computed", &r->bpp_comp}, {"step_time", &r->step},
		{"samples_per_s", &r->rate}, {"tokens_per_s", &r->rate},
		{"weight_bytes", &r->wb}, {"grad_bytes", &r->gb}, {"optimizer_bytes", &r->ob},
		{"activation_bytes", &r->ab}, {"nparams", &r->np},
		{"tq2_0_accuracy", &r->tq2}, {"tq1_0_accuracy", &r->tq1},
		{"export_equal", &r->train_acc_eq},
		{"state_bytes_per_param_measured", &r->st_meas}};
	for (size_t i = 0; i < sizeof m / sizeof *m; i++)
		if (!strcmp(m[i].k, k))
			return m[i].p;
	return &sink;
}

/* Rank of a row in the paper's order: fp32, STE, DQT 8, 4, 3, ternary; fp32 moments
 * before bf16 before fp8. */
static int rank(const struct trow *r)
{
	int m = !strcmp(r->method, "fp32") ? 0 : !strcmp(r->method, "ste") ? 1 : 2;
	int b = r->bits == 8 ? 0 : r->bits == 4 ? 1 : r->bits == 3 ? 2 : 3;
	int f = !strcmp(r->moments, "fp32") ? 0 : !strcmp(r->moments, "bf16") ? 1 : 2;
	return f * 100 + m * 10 + b;
}

/* By width (the width scan), then in the paper's order. */
static int cmp_rows(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;
	return x->d_model != y->d_model ? x->d_model - y->d_model : rank(x) - rank(y);
}

/* The rows whose workload starts with `prefix` from the final metrics (newest value of
 * each key wins). */
static size_t collect(const struct ocb_metric_set *ms, const char *prefix, struct trow *rows)
{
	size_t n = 0;
	for (size_t i = 0; i < ms->n; i++) {
		const struct ocb_metric_row *m = &ms->r[i];
		if (strncmp(m->workload, prefix, strlen(prefix)))
			continue;
		size_t k = 0;
		while (k < n && strcmp(rows[k].wl, m->workload))
			k++;
		if (k == n) {
			if (n == TMAX)
				continue;
			struct trow *r = &rows[n++];
			memset(r, 0, sizeof *r);
			double *d = &r->acc;
			for (size_t z = 0; z < (sizeof *r - offsetof(struct trow, acc)) / sizeof(double); z++)
				d[z] = NAN;
			snprintf(r->wl, sizeof r->wl, "%s", m->workload);
			cJSON *id = m->ident ? cJSON_Parse(m->ident) : NULL;
			const cJSON *v;
			snprintf(r->label, sizeof r->label, "%s",
				 cJSON_IsString(v = cJSON_GetObjectItem(id, "label")) ? v->valuestring : "?");
			snprintf(r->method, sizeof r->method, "%s",
				 cJSON_IsString(v = cJSON_GetObjectItem(id, "method")) ? v->valuestring : "?");
			snprintf(r->moments, sizeof r->moments, "%s",
				 cJSON_IsString(v = cJSON_GetObjectItem(id, "moments")) ? v->valuestring : "?");
			r->bits = cJSON_IsNumber(v = cJSON_GetObjectItem(id, "bits")) ? v->valueint : 0;
			r->d_model =
				cJSON_IsNumber(v = cJSON_GetObjectItem(id, "d_model")) ? v->valueint : 0;
			cJSON_Delete(id);
		}
		*slot(&rows[k], m->key) = m->value;
	}
	qsort(rows, n, sizeof *rows, cmp_rows);
	return n;
}

static const char *bits_text(const struct trow *r, char *b, size_t len)
{
	if (!strcmp(r->method, "fp32"))
		snprintf(b, len, "32");
	else if (r->bits == 2)
		snprintf(b, len, "1.58");
	else
		snprintf(b, len, "%d", r->bits);
	return b;
}

static int paper_table(struct ocb_rctx *x, const char *model, struct trow *rows, size_t n)
{
	int lm = !strcmp(model, "lm");
	const char *cols_mlp[] = {"method", "weight bits", "optimizer", "train B/param (meas.)",
				  "train B/param (comp.)", "test accuracy", "delta vs fp32 (points)",
				  "step (ms)", "samples/s"};
	const char *cols_lm[] = {"method", "weight bits", "optimizer", "train B/param (meas.)",
				 "train B/param (comp.)", "val. loss (nats/byte)", "val. ppl",
				 "delta vs fp32 (%)", "step (ms)", "tokens/s"};
	struct ocb_table *t;
	char id[48], title[128], b[16];
	const struct trow *base = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].method, "fp32"))
			base = &rows[i];
	int rc = ocb_rctx_table(x, &t);
	if (rc)
		return rc;
	snprintf(id, sizeof id, "ternary_%s", model);
	snprintf(title, sizeof title, "Ternary suite: %s, method x bits x optimizer precision",
		 lm ? "byte LM on fortunes" : "MLP on Fashion-MNIST");
	if ((rc = ocb_table_init(t, id, title, lm ? 10 : 9, lm ? cols_lm : cols_mlp))) {
		ocb_rctx_table_drop(x);
		return rc;
	}
	t->best[3] = t->best[4] = OCB_BEST_MIN;
	t->best[5] = lm ? OCB_BEST_MIN : OCB_BEST_MAX;
	for (size_t i = 0; i < n && rc == OCB_OK; i++) {
		const struct trow *r = &rows[i];
		size_t row;
		if ((rc = ocb_table_add_row(t, &row)))
			break;
		int c = 0;
		ocb_table_text(t, row, c++, r->label);
		ocb_table_text(t, row, c++, bits_text(r, b, sizeof b));
		ocb_table_text(t, row, c++, r->moments);
		ocb_table_num(t, row, c++, r->bpp_meas, "%.2f");
		ocb_table_num(t, row, c++, r->bpp_comp, "%.2f");
		if (lm) {
			ocb_table_num(t, row, c++, r->loss, "%.4f");
			ocb_table_num(t, row, c++, r->ppl, "%.3f");
			ocb_table_num(t, row, c++, base ? 100 * (r->loss / base->loss - 1) : NAN, "%+.2f");
		} else {
			ocb_table_num(t, row, c++, r->acc, "%.4f");
			ocb_table_num(t, row, c++, base ? 100 * (r->acc - base->acc) : NAN, "%+.2f");
		}
		ocb_table_num(t, row, c++, r->step * 1e3, "%.2f");
		ocb_table_num(t, row, c++, r->rate, "%.0f");
	}
	ocb_table_set_note(t, "bits 1.58 = ternary (log2 3). B/param: everything a training "
			      "step holds (weights, gradients, optimizer state, activations) "
			      "per parameter; measured = peak RSS of a forked child over 3 steps "
			      "after a warm-up training (code pages and library state not counted) "
			      "minus an empty run. STE and fp32 keep fp32 AdamW moments; DQT holds "
			      "no fp32 copy of its quantized layers.");
	return rc;
}

/* The STE row of the same width as r (every suite row has width 0), or NULL. */
static const struct trow *ste_of(const struct trow *rows, size_t n, const struct trow *r)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].method, "ste") && rows[i].d_model == r->d_model)
			return &rows[i];
	return NULL;
}

/* Columns c .. c+5 of a bytes row, per parameter: weights, gradients, optimizer state,
 * activations (computed), the computed and the measured total. */
static void part_cells(struct ocb_table *t, size_t row, int c, const struct trow *r)
{
	const double v[] = {r->wb / r->np, r->gb / r->np, r->ob / r->np, r->ab / r->np,
			    r->bpp_comp, r->bpp_meas};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++)
		ocb_table_num(t, row, c + (int)i, v[i], "%.2f");
}

/* Columns c, c+1: the measured total and state over those of ste (NaN without one). */
static void ste_cells(struct ocb_table *t, size_t row, int c, const struct trow *r,
		      const struct trow *ste)
{
	ocb_table_num(t, row, c, ste ? r->bpp_meas / ste->bpp_meas : NAN, "%.3f");
	ocb_table_num(t, row, c + 1, ste ? r->st_meas / ste->st_meas : NAN, "%.3f");
}

static int bytes_table(struct ocb_rctx *x, const char *model, struct trow *rows, size_t n)
{
	const char *cols[] = {"method", "optimizer", "weights", "gradients", "optimizer state",
			      "activations", "computed total", "measured total", "state computed",
			      "state measured", "total / STE (meas.)", "state / STE (meas.)"};
	struct ocb_table *t;
	char id[48], title[128];
	int rc = ocb_rctx_table(x, &t);
	if (rc)
		return rc;
	snprintf(id, sizeof id, "ternary_%s_bytes", model);
	snprintf(title, sizeof title, "Ternary suite: %s training bytes per parameter, by part",
		 model);
	if ((rc = ocb_table_init(t, id, title, 12, cols))) {
		ocb_rctx_table_drop(x);
		return rc;
	}
	for (size_t i = 0; i < n && rc == OCB_OK; i++) {
		const struct trow *r = &rows[i];
		size_t row;
		if ((rc = ocb_table_add_row(t, &row)))
			break;
		ocb_table_text(t, row, 0, r->label);
		ocb_table_text(t, row, 1, r->moments);
		part_cells(t, row, 2, r);
		ocb_table_num(t, row, 8, (r->wb + r->gb + r->ob) / r->np, "%.2f");
		ocb_table_num(t, row, 9, r->st_meas, "%.2f");
		ste_cells(t, row, 10, r, ste_of(rows, n, r));
	}
	if (rc == OCB_OK)
		ocb_table_set_note(t, "bytes per parameter. state = weights + gradients + optimizer "
				      "state; measured: S = (B M(1) - M(B)) / (B - 1) from the "
				      "measured footprints M at the training batch B and at batch 1 "
				      "(activations grow with the batch). Measured = data pages only "
				      "(a warm-up training in the child maps code and library state "
				      "first), as the computed figures count allocations.");
	return rc;
}

/* The LM width scan (bench ternary_lm_width): where the bytes go as the model widens. */
static int width_table(struct ocb_rctx *x, struct trow *rows, size_t n)
{
	const char *cols[] = {"d_model", "params (M)", "method", "optimizer", "weights",
			      "gradients", "optimizer state", "activations", "computed total",
			      "measured total", "state measured", "total / STE (meas.)",
			      "state / STE (meas.)"};
	struct ocb_table *t;
	int rc = ocb_rctx_table(x, &t);
	if (rc)
		return rc;
	if ((rc = ocb_table_init(t, "ternary_lm_width", "Ternary suite: byte LM training "
				 "bytes per parameter as the model widens (memory only)", 13,
				 cols))) {
		ocb_rctx_table_drop(x);
		return rc;
	}
	for (size_t i = 0; i < n && rc == OCB_OK; i++) {
		const struct trow *r = &rows[i];
		size_t row;
		if ((rc = ocb_table_add_row(t, &row)))
			break;
		ocb_table_num(t, row, 0, r->d_model, "%.0f");
		ocb_table_num(t, row, 1, r->np / 1e6, "%.3f");
		ocb_table_text(t, row, 2, r->label);
		ocb_table_text(t, row, 3, r->moments);
		part_cells(t, row, 4, r);
		ocb_table_num(t, row, 10, r->st_meas, "%.2f");
		ste_cells(t, row, 11, r, ste_of(rows, n, r));
	}
	if (rc == OCB_OK)
		ocb_table_set_note(t, "bytes per parameter of the suite's LM recipe (2 layers, "
				      "context 64, batch 16 x 64 bytes, heads of 64) at each width, "
				      "measured as in the bytes-by-part tables (forked children at "
				      "batch 16 and at batch 1), no training to convergence. "
				      "Activations grow with d per token and parameters with d^2, so "
				      "the state, where the methods differ, becomes the larger part "
				      "of the total as the model widens; ratios are against STE of "
				      "the same width.");
	return rc;
}

static int export_table(struct ocb_rctx *x, struct trow *rows, size_t n)
{
	const char *cols[] = {"model", "optimizer", "training-time accuracy", "TQ2_0 accuracy",
			      "TQ1_0 accuracy", "equal"};
	struct ocb_table *t = NULL;
	int rc = OCB_OK;
	for (size_t i = 0; i < n && rc == OCB_OK; i++) {
		const struct trow *r = &rows[i];
		size_t row;
		if (isnan(r->tq2))
			continue;
		if (!t) {
			if ((rc = ocb_rctx_table(x, &t)))
				return rc;
			if ((rc = ocb_table_init(t, "ternary_export", "Ternary suite: DQT-ternary "
					 "MLP exported to TQ2_0 / TQ1_0 (quant kernels)", 6, cols))) {
				ocb_rctx_table_drop(x);
				return rc;
			}
		}
		if ((rc = ocb_table_add_row(t, &row)))
			break;
		ocb_table_text(t, row, 0, r->label);
		ocb_table_text(t, row, 1, r->moments);
		ocb_table_num(t, row, 2, r->acc, "%.4f");
		ocb_table_num(t, row, 3, r->tq2, "%.4f");
		ocb_table_num(t, row, 4, r->tq1, "%.4f");
		ocb_table_text(t, row, 5, r->train_acc_eq == 1 ? "yes" : "no");
	}
	return rc;
}

/* Training loss vs step, one series per workload of the model. */
static int loss_plot(struct ocb_rctx *x, const char *model, const struct trow *rows, size_t n,
		     const struct ocb_metric_set *ms)
{
	char base[48], title[96];
	struct ocb_gp gp;
	snprintf(base, sizeof base, "ternary_%s_loss", model);
	snprintf(title, sizeof title, "Ternary suite: %s training loss, every method", model);
	if (!n)
		return OCB_OK;
	if (ocb_gp_open(&gp, x->out, base))
		return ocb_rctx_plot(x, base, title, 0, ocb_lasterr());
	FILE *f = gp.f;
	fputs("set grid\nset key top right\nset logscale y\nset title ", f);
	ocb_esc_gnuplot(f, title);
	fputs("\nset xlabel 'step'\nset ylabel 'training loss (nats)'\n", f);
	char *cmd = NULL;
	size_t len = 0;
	FILE *c = open_memstream(&cmd, &len);
	int series = 0;
	for (size_t k = 0; k < n && c; k++) {
		int rowsout = 0;
		fprintf(f, "$D%zu << EOD\n", k);
		for (size_t i = 0; i < ms->n; i++)
			if (!strcmp(ms->r[i].workload, rows[k].wl) && !isnan(ms->r[i].value)) {
				fprintf(f, "%ld %.9g\n", ms->r[i].step, ms->r[i].value);
				rowsout++;
			}
		fputs("EOD\n", f);
		if (!rowsout)
			continue;
		fprintf(c, "%s$D%zu using 1:2 with lines title ", series++ ? ", " : "plot ", k);
		char t[48];
		snprintf(t, sizeof t, "%s %s", rows[k].label, rows[k].moments);
		ocb_esc_gnuplot(c, t);
	}
	if (c)
		fclose(c);
	int rc;
	if (!series || !cmd) {
		ocb_gp_abort(&gp);
		rc = ocb_rctx_plot(x, base, title, 0, "no training-loss rows");
	} else {
		int drew = ocb_gp_finish(&gp, cmd) == OCB_OK;
		rc = ocb_rctx_plot(x, base, title, drew, drew ? NULL : ocb_lasterr());
	}
	free(cmd);
	return rc;
}

int ocb_rsec_ternary(struct ocb_rctx *x)
{
	struct ocb_metric_query qf = {.steps = OCB_MQ_FINAL, .value_present = 1,
				      .keys = final_keys, .order = OCB_MQ_BY_ID};
	static const char *const loss_key[] = {"train_loss", NULL};
	struct ocb_metric_query qs = {.steps = OCB_MQ_STEPPED, .value_present = 1,
				      .keys = loss_key, .order = OCB_MQ_BY_WL_KEY_STEP};
	struct ocb_metric_set fin = {0}, st = {0};
	struct trow *rows = calloc(TMAX, sizeof *rows);
	int rc = rows ? ocb_sel_metrics(x->db, &x->o->sel, &qf, &fin) : OCB_ENOMEM;
	if (rc == OCB_OK)
		rc = ocb_sel_metrics(x->db, &x->o->sel, &qs, &st);
	const char *models[] = {"mlp", "lm"};
	for (int mi = 0; mi < 2 && rc == OCB_OK; mi++) {
		char prefix[32];
		snprintf(prefix, sizeof prefix, "ternary_%s:", models[mi]);
		size_t n = collect(&fin, prefix, rows);
		if (!n)
			continue;
		rc = paper_table(x, models[mi], rows, n);
		if (rc == OCB_OK)
			rc = bytes_table(x, models[mi], rows, n);
		if (rc == OCB_OK && mi == 0)
			rc = export_table(x, rows, n);
		if (rc == OCB_OK)
			rc = loss_plot(x, models[mi], rows, n, &st);
	}
	size_t nw = rc == OCB_OK ? collect(&fin, "ternary_lm_d", rows) : 0;
	if (nw)
		rc = width_table(x, rows, nw);
	ocb_metric_set_release(&fin);
	ocb_metric_set_release(&st);
	free(rows);
	return rc;
}
