/* sec_compress: the report's part of issue 13 about compression (the static analysis
 * and predicted vs measured are sec_inspect.c).
 *   The compression pipeline: per workload of identity kind "compress" (collect/
 *      bench_compress.c), one row per stage (fp32, pivot, block, global) with validation
 *      perplexity, change against the pivot, bpw, bytes, time, peak RSS and whether the
 *      stage was kept. Metrics through db/'s typed API only. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "rctx.h"

static const char *const stage_names[4] = {"fp32", "pivot", "block", "global"};

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
	return sec_pipeline(x);
}
