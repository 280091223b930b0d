/* sec_compress: the report's part of issue 13.
 *   1. Static analysis (what `ocbench inspect` prints): the built-in real shapes
 *      (Llama-3-8B, Llama-3.2-1B, Mistral-7B) x formats -> weight bytes and the
 *      roofline-predicted decode tokens/s (1 thread, ctx 2048, weights streamed from DRAM)
 *      on every machine of the report that has ceilings.
 *   2. Predicted vs measured: the DRAM-bound quant GEMV cases and the decode_pass cases,
 *      prediction = the work over the attainable rate of the stored bound (the roofline
 *      module), measurement = the median, and their ratio.
 *   3. The compression pipeline: per workload of identity kind "compress" (collect/
 *      bench_compress.c), one row per stage (fp32, pivot, block, global) with validation
 *      perplexity, change against the pivot, bpw, bytes, time, peak RSS and whether the
 *      stage was kept. Metrics through db/'s typed API only. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../analysis/model_cost.h"
#include "rctx.h"

static const char *const stage_names[4] = {"fp32", "pivot", "block", "global"};

/* ---- 1. static analysis ---- */

static int inspect_rows(struct ocb_table *t, const struct ocb_mceil *m)
{
	static const char *const models[] = {"llama-3-8b", "llama-3.2-1b", "mistral-7b"};
	static const int fmts[] = {WF_F16, WF_Q8_0, WF_Q4_0, WF_Q2_G, WF_TQ1_0};
	const struct ocb_roof_caches caches = {0};
	int rc = OCB_OK;
	for (size_t i = 0; i < 3 && !rc; i++) {
		struct ocb_model_spec s;
		struct ocb_cost c;
		if ((rc = ocb_spec_builtin(models[i], &s)) || (rc = ocb_cost_compute(&s, 2048, 1, &c)))
			return rc;
		c.level = OCB_LEVEL_DRAM;
		for (size_t f = 0; f < sizeof fmts / sizeof *fmts && !rc; f++) {
			struct ocb_pred p;
			size_t row;
			if ((rc = ocb_cost_predict(&c, fmts[f], m->view, m->n, &caches, 1, &p)))
				break;
			if (!(rc = ocb_table_add_row(t, &row))) {
				ocb_table_text(t, row, 0, m->host);
				ocb_table_text(t, row, 1, s.name);
				ocb_table_num(t, row, 2, c.total.params / 1e9, "%.2f");
				ocb_table_text(t, row, 3, ocb_wfmt_name(fmts[f]));
				ocb_table_num(t, row, 4, c.total.wbytes[fmts[f]] / 1e9, "%.2f");
				ocb_table_num(t, row, 5, p.decode_tok_s, "%.3g");
				ocb_table_text(t, row, 6, p.layer[1].bound_decode);
			}
			ocb_pred_release(&p);
		}
		ocb_cost_release(&c);
	}
	return rc;
}

static int sec_inspect(struct ocb_rctx *x)
{
	static const char *cols[] = {"machine", "model", "params (B)", "format", "weights (GB)",
				     "decode tok/s", "bound"};
	struct ocb_table *t = NULL;
	int rc = OCB_OK;
	for (size_t i = 0; i < x->nmc && !rc; i++) {
		if (!x->mc[i].n)
			continue;
		if (!t) {
			if ((rc = ocb_rctx_table(x, &t)))
				return rc;
			if ((rc = ocb_table_init(t, "inspect", "Static analysis: real shapes, "
						 "predicted decode speed", 7, cols))) {
				ocb_rctx_table_drop(x);
				return rc;
			}
			ocb_table_set_note(t, "ocbench inspect: parameters and weight bytes from the "
					      "shapes (matrices in the format, norms f32); decode tok/s = "
					      "the roofline over the machine's ceilings, 1 thread, ctx 2048, "
					      "batch 1, weights streamed from DRAM.");
		}
		rc = inspect_rows(t, &x->mc[i]);
	}
	return rc;
}

/* ---- 2. predicted vs measured ---- */

static int wanted(const struct ocb_rrow *r)
{
	if (strcmp(r->status, "ok") != 0 || !(r->median > 0) || strcmp(r->unit, "s") != 0)
		return 0;
	if (strcmp(r->bench, "decode_pass") == 0)
		return 1;
	return strcmp(r->bench, "quant_gemv") == 0 && strstr(r->bound, "bw_dram") != NULL;
}

static int sec_predicted(struct ocb_rctx *x)
{
	static const char *cols[] = {"bench", "params", "threads", "bound", "predicted",
				     "measured", "measured / predicted"};
	struct ocb_table *t = NULL;
	int rc = OCB_OK;
	for (size_t i = 0; i < x->rs.n && !rc; i++) {
		const struct ocb_rrow *r = &x->rs.r[i];
		if (!wanted(r))
			continue;
		double frac = ocb_rrow_roof_frac(r, ocb_mceil_find(x->mc, x->nmc, r->machine_id));
		if (!t) {
			if ((rc = ocb_rctx_table(x, &t)))
				return rc;
			if ((rc = ocb_table_init(t, "predicted_vs_measured",
						 "Predicted vs measured (roofline)", 7, cols))) {
				ocb_rctx_table_drop(x);
				return rc;
			}
			ocb_table_set_note(t, "Predicted = the static work over the attainable rate of "
					      "the stored bound and the machine's current ceilings "
					      "(common/ocb_roofline.h); measured = the median; a ratio "
					      "of 1 is a kernel at its roof. decode_pass: one decode step "
					      "of Llama-3.2-1B blocks (workloads/decode_pass.h) with the "
					      "bytes and FLOPs `inspect` counts.");
		}
		size_t row;
		if ((rc = ocb_table_add_row(t, &row)))
			break;
		ocb_table_text(t, row, 0, r->bench);
		ocb_table_text(t, row, 1, r->params);
		ocb_table_num(t, row, 2, r->threads, "%.0f");
		ocb_table_text(t, row, 3, r->bound);
		ocb_table_num(t, row, 4, frac * r->median, "%.4g");
		ocb_table_num(t, row, 5, r->median, "%.4g");
		ocb_table_num(t, row, 6, 1.0 / frac, "%.3f");
	}
	return rc;
}

/* ---- 3. the compression pipeline ---- */

struct cstage {
	double v[7]; /* val_ppl, bpw, model_bytes, stage_time, peak_rss, accepted, calib_obj */
	int seen;
};

static const char *const ckeys[7] = {"val_ppl", "bpw", "model_bytes", "stage_time",
				     "peak_rss", "accepted", "calib_obj"};

static int emit_workload(struct ocb_table *t, const char *wl, const struct cstage *st)
{
	int rc = OCB_OK;
	double pivot = st[1].v[0];
	for (int k = 0; k < 4 && !rc; k++) {
		size_t row;
		if (!st[k].seen)
			continue;
		if ((rc = ocb_table_add_row(t, &row)))
			break;
		ocb_table_text(t, row, 0, wl);
		ocb_table_text(t, row, 1, stage_names[k]);
		ocb_table_num(t, row, 2, st[k].v[0], "%.4f");
		ocb_table_num(t, row, 3, k > 1 ? 100 * (st[k].v[0] / pivot - 1) : NAN, "%+.2f");
		ocb_table_num(t, row, 4, st[k].v[1], "%.3f");
		ocb_table_num(t, row, 5, st[k].v[2], "%.0f");
		ocb_table_num(t, row, 6, st[k].v[3], "%.3g");
		ocb_table_num(t, row, 7, st[k].v[4] / 1e6, "%.1f");
		ocb_table_text(t, row, 8, k < 2 ? "yes" : st[k].v[5] > 0 ? "yes" : "no (rejected)");
	}
	return rc;
}

static int sec_pipeline(struct ocb_rctx *x)
{
	static const char *cols[] = {"workload", "stage", "val. perplexity", "vs pivot (%)", "bpw",
				     "model bytes", "time (s)", "peak RSS (MB)", "kept"};
	struct ocb_metric_query q = {.steps = OCB_MQ_STEPPED, .quant = OCB_MQ_QUANT_ONLY,
				     .quant_kind = "compress", .order = OCB_MQ_BY_WL_KEY_STEP};
	struct ocb_metric_set ms = {0};
	struct ocb_table *t = NULL;
	struct cstage st[4];
	int rc = ocb_sel_metrics(x->db, &x->o->sel, &q, &ms);
	for (size_t i = 0; !rc && i < ms.n;) {
		const char *wl = ms.r[i].workload;
		memset(st, 0, sizeof st);
		for (; i < ms.n && strcmp(ms.r[i].workload, wl) == 0; i++) {
			long k = ms.r[i].step;
			for (int c = 0; k >= 0 && k < 4 && c < 7; c++)
				if (strcmp(ms.r[i].key, ckeys[c]) == 0)
					st[k].v[c] = ms.r[i].value, st[k].seen = 1;
		}
		if (!t) {
			if ((rc = ocb_rctx_table(x, &t)))
				break;
			if ((rc = ocb_table_init(t, "compress_stages", "Progressive compression of "
						 "the LM: per stage", 9, cols))) {
				ocb_rctx_table_drop(x);
				break;
			}
			ocb_table_set_note(t, "OneComp's pipeline (workloads/compress.h): pivot = GPTQ per "
					      "the plan; block = fp16 scales tuned per block against the "
					      "fp32 teacher's block outputs; global = all scales against "
					      "the teacher's distribution (KL). A stage whose validation "
					      "perplexity is not lower than the last kept one is rejected "
					      "and its weights discarded.");
		}
		rc = emit_workload(t, wl, st);
	}
	ocb_metric_set_release(&ms);
	return rc;
}

int ocb_rsec_compress(struct ocb_rctx *x)
{
	int rc = sec_pipeline(x);
	if (!rc)
		rc = sec_predicted(x);
	if (!rc)
		rc = sec_inspect(x);
	return rc;
}
