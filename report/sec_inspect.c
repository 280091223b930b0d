/* sec_inspect: the report's part of issue 13 about static analysis.
 *   1. Predicted vs measured: every decode_pass case and the DRAM-bound quant_gemv
 *      cases of the selection; the prediction is analysis/predict.h's roofline time from
 *      the case's static work, its stored bound and the machine's caches (the memory
 *      level it streams from) and the machine's ceilings at the case's thread count; then the median,
 *      measured / predicted, and whether that is within 25%.
 *   2. Static analysis (what `ocbench inspect` prints): the built-in real shapes
 *      (Llama-3-8B, Llama-3.2-1B, Mistral-7B) x formats -> weight bytes and the
 *      roofline-predicted decode tokens/s (1 thread, ctx 2048, weights streamed from DRAM)
 *      on every machine of the report that has ceilings.
 * Self-contained: report/table.c's API, rows and ceilings from the report context. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/model_cost.h"
#include "../analysis/predict.h"
#include "../common/ocb_error.h"
#include "rctx.h"

/* ---- 1. predicted vs measured ---- */

#define PVM_TOL 0.25 /* the acceptance: within 25% */

/* The case as analysis/predict.h takes it; 0 when r is not one the table shows. */
static int pvm_case_of(const struct ocb_rrow *r, const struct ocb_roof_caches *caches,
		       struct ocb_pvm_case *k)
{
	if (strcmp(r->status, "ok") != 0 || !(r->median > 0) || strcmp(r->unit, "s") != 0)
		return 0;
	*k = (struct ocb_pvm_case){r->bench, r->bound, r->threads, r->flops, r->bytes, r->median};
	return ocb_pvm_wanted(k, caches);
}

static int pvm_row(struct ocb_table *t, const struct ocb_rrow *r, const struct ocb_pvm *p)
{
	size_t row;
	char roof[160];
	int rc = ocb_table_add_row(t, &row);
	if (rc)
		return rc;
	if (isfinite(p->roof))
		snprintf(roof, sizeof roof, "%s %dt %.4g %s%s", p->binds, p->roof_threads, p->roof,
			 strncmp(p->binds, "bw_", 3) == 0 ? "GB/s" : "G/s",
			 p->relevelled ? " (level from the caches)" : "");
	else
		snprintf(roof, sizeof roof, "%s", p->binds[0] ? p->binds : "no roof");
	ocb_table_text(t, row, 0, r->bench);
	ocb_table_text(t, row, 1, r->params);
	ocb_table_num(t, row, 2, r->threads, "%.0f");
	ocb_table_text(t, row, 3, roof);
	ocb_table_num(t, row, 4, p->predicted_s, "%.4g");
	ocb_table_num(t, row, 5, r->median, "%.4g");
	ocb_table_num(t, row, 6, p->ratio, "%.3f");
	ocb_table_text(t, row, 7, !isfinite(p->ratio) ? "-"
				  : ocb_pvm_within(p->ratio, PVM_TOL) ? "yes" : "no");
	return OCB_OK;
}

static int sec_predicted(struct ocb_rctx *x)
{
	static const char *cols[] = {"bench", "params", "threads", "roof (binds)", "predicted (s)",
				     "measured (s)", "measured / predicted", "within 25%"};
	struct ocb_table *t = NULL;
	int rc = OCB_OK;
	for (size_t i = 0; i < x->rs.n && !rc; i++) {
		const struct ocb_rrow *r = &x->rs.r[i];
		const struct ocb_mceil *mc = ocb_mceil_find(x->mc, x->nmc, r->machine_id);
		struct ocb_pvm_case k;
		struct ocb_pvm p;
		const struct ocb_roof_caches *caches = mc ? &mc->caches : NULL;
		if (!pvm_case_of(r, caches, &k))
			continue;
		if (ocb_pvm_predict(mc ? mc->view : NULL, mc ? mc->n : 0, caches, &k, &p))
			continue; /* no work model stored: nothing to predict from */
		if (!t) {
			if ((rc = ocb_rctx_table(x, &t)))
				return rc;
			if ((rc = ocb_table_init(t, "predicted_vs_measured",
						 "Predicted vs measured (roofline)", 8, cols))) {
				ocb_rctx_table_drop(x);
				return rc;
			}
			ocb_table_set_note(t, "Predicted = max(bytes / bandwidth of the memory level "
					      "the case streams from, ops / compute roof), ceilings "
					      "measured at the case's thread count (analysis/predict.h); "
					      "the level is the slower of the one the harness stored "
					      "(DRAM-level GEMVs rotate over copies of W beyond twice the "
					      "last-level cache) and the one the machine's caches give "
					      "the case's bytes now. Measured = the median. decode_pass: one decode "
					      "step of Llama-3.2-1B blocks (workloads/decode_pass.h) with "
					      "the bytes and FLOPs `inspect` counts.");
		}
		rc = pvm_row(t, r, &p);
	}
	return rc;
}

/* ---- 2. static analysis ---- */


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

int ocb_rsec_inspect(struct ocb_rctx *x)
{
	int rc = sec_predicted(x);
	if (!rc)
		rc = sec_inspect(x);
	return rc;
}
