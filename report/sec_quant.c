/* sec_quant: compression-vs-accuracy tables in the shape quantization papers use
 * (OneComp, GPTQ): one table per model, rows method x bits (x group size), columns
 * accuracy / perplexity, effective bits per weight, model bytes, quantization time;
 * best per column in bold (higher accuracy, lower perplexity/loss/bpw/bytes/time).
 *
 * Source: final (step NULL) metric rows of the quant_acc workloads, from the newest
 * complete run holding each workload (the selection's msel). Each row's identity (model,
 * method, rounding, bits, group: struct ocb_quant_id, common/workload_id.h) is read from
 * its JSON in table workload_ident (schema v4); rows without one (databases written
 * before v4, merged or imported ones) fall back to the old-format reader of the name
 * "quant_acc:<model>:<method>:<bits>:<group>" (group is a size, "pc" per output channel,
 * "tensor" / "row" for ternary, "-" for fp32). The columns are the keys
 * in `known` below; other keys (calibration sizes, timings of the fp32 row) stay in the
 * store and the JSON export. The LM perplexity protocol (eval_window, eval_stride of the
 * fp32 row) goes in the table note, since perplexity depends on it (REFERENCE.md §1).
 * Rows "<fmt>/fp16-aware" (the fp16-aware rounding of a ggml format) sort right after the
 * format's ggml-exact row and are explained in the note.
 * A second table lists the suite's acceptance checks (workload "quant_acc_check",
 * positive = the claim holds). */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/workload_id.h"
#include "pivot.h"
#include "rctx.h"

#define QMAX_KEYS 24

struct qkey {
	const char *key, *title;
	signed char best;
};

/* Known keys in column order. */
static const struct qkey known[] = {
	{"test_accuracy", "test accuracy", OCB_BEST_MAX},
	{"val_accuracy", "val. accuracy", OCB_BEST_MAX},
	{"val_ppl", "val. perplexity", OCB_BEST_MIN},
	{"test_ppl", "test perplexity", OCB_BEST_MIN},
	{"val_loss", "val. loss (nats)", OCB_BEST_MIN},
	{"acc_drop_points", "acc. drop (points)", OCB_BEST_MIN},
	{"effective_bpw", "eff. bits/weight", OCB_BEST_MIN},
	{"model_bytes", "model bytes", OCB_BEST_MIN},
	{"weight_rel_err", "weight rel. err.", OCB_BEST_MIN},
	{"output_rel_err", "output rel. err.", OCB_BEST_MIN},
	{"quant_time", "quant. time (s)", OCB_BEST_MIN},
	{"tokens_per_s", "tokens/s", OCB_BEST_MAX},
	{"samples_per_s", "samples/s", OCB_BEST_MAX},
};
#define NKNOWN (sizeof known / sizeof *known)

struct qrow {
	char model[64], method[64], bits[16], group[16];
	double v[QMAX_KEYS];
	int64_t run;            /* the run its values come from */
};

struct qmodel {
	char model[64];
	double eval_window, eval_stride; /* LM perplexity protocol, NaN if not given */
	char keys[QMAX_KEYS][48];
	size_t nkeys;
	struct qrow *rows;
	size_t nrows;
};

static int key_rank(const char *k)
{
	for (size_t i = 0; i < NKNOWN; i++)
		if (strcmp(known[i].key, k) == 0)
			return (int)i;
	return (int)NKNOWN;
}

static int cmp_row(const void *a, const void *b)
{
	const struct qrow *x = a, *y = b;
	/* fp32 / fp16 baselines first */
	int bx = strncmp(x->method, "fp", 2) == 0, by = strncmp(y->method, "fp", 2) == 0;
	if (bx != by)
		return by - bx;
	int c = strcmp(x->method, y->method);
	if (c)
		return c;
	double xb = atof(x->bits), yb = atof(y->bits);
	if (xb != yb)
		return xb > yb ? -1 : 1;
	double xg = atof(x->group), yg = atof(y->group);
	/* group 0 / "" (per-channel) after the grouped ones */
	if ((xg <= 0) != (yg <= 0))
		return xg <= 0 ? 1 : -1;
	return (xg > yg) - (xg < yg);
}

/* Orders the columns: known keys first in table order, then the rest alphabetically
 * (the rows' values move with their key). */
static void sort_keys(struct qmodel *m)
{
	for (size_t i = 0; i < m->nkeys; i++)
		for (size_t j = i + 1; j < m->nkeys; j++) {
			int ri = key_rank(m->keys[i]), rj = key_rank(m->keys[j]);
			if (rj < ri || (ri == rj && strcmp(m->keys[j], m->keys[i]) < 0)) {
				char tmp[48];
				memcpy(tmp, m->keys[i], sizeof tmp);
				memcpy(m->keys[i], m->keys[j], sizeof tmp);
				memcpy(m->keys[j], tmp, sizeof tmp);
				for (size_t r = 0; r < m->nrows; r++) {
					double v = m->rows[r].v[i];
					m->rows[r].v[i] = m->rows[r].v[j];
					m->rows[r].v[j] = v;
				}
			}
		}
}

/* The model's table through the pivot (pivot.h): rows method x bits x group in the
 * papers' order (kept), one column per known key; digits as the quantity needs
 * (accuracies 4 decimals, bits per weight 3, bytes exact, else 4 significant: these
 * metrics carry no CI), provenance of the runs the rows come from. */
static int emit(struct ocb_rctx *x, struct qmodel *m, size_t k)
{
	static const char *const keyn[3] = {"method", "bits", "group"};
	struct ocb_pmeasure meas[QMAX_KEYS];
	struct ocb_pivot p;
	char id[64], title[128];
	int rc;

	sort_keys(m);
	qsort(m->rows, m->nrows, sizeof *m->rows, cmp_row);
	memset(meas, 0, sizeof meas);
	for (size_t i = 0; i < m->nkeys; i++) {
		int r = key_rank(m->keys[i]);
		snprintf(meas[i].name, sizeof meas[i].name, "%s",
			 r < (int)NKNOWN ? known[r].title : m->keys[i]);
		meas[i].best = r < (int)NKNOWN ? known[r].best : OCB_BEST_NONE;
		meas[i].fmt = !strcmp(m->keys[i], "model_bytes") ? "%.0f"
			      : strstr(m->keys[i], "accuracy") ? "%.4f"
			      : !strcmp(m->keys[i], "effective_bpw") ? "%.3f" : "%.4g";
	}
	snprintf(id, sizeof id, "quant_accuracy_%zu", k);
	snprintf(title, sizeof title, "Compression vs accuracy: %s", m->model);
	if ((rc = ocb_pivot_init(&p, id, title, 3, keyn, m->nkeys ? m->nkeys : 1, meas)))
		return rc;
	p.keep_order = 1;
	p.form = OCB_FORM_BOTH;
	for (size_t r = 0; r < m->nrows && !rc; r++) {
		const struct qrow *q = &m->rows[r];
		/* group 0/-1/"" means one scale per output channel; baselines have none */
		const char *g = q->group[0] && strcmp(q->group, "0") && strcmp(q->group, "-1") &&
					strcmp(q->group, "pc") ? q->group : "per-channel";
		if (!strncmp(q->method, "fp", 2) || !strcmp(q->method, "bf16"))
			g = "-";
		const char *rk[3] = {q->method, q->bits, g};
		for (size_t i = 0; i < m->nkeys && !rc; i++)
			rc = ocb_pivot_put(&p, rk, NULL, i, q->v[i], NAN, NAN, q->run);
	}
	char note[640];
	int o = snprintf(note, sizeof note, "Best per column in bold: highest accuracy; lowest "
					    "perplexity, loss, drop, bits per weight, bytes, errors and time.");
	if (!isnan(m->eval_window) && o > 0 && (size_t)o < sizeof note)
		o += snprintf(note + o, sizeof note - (size_t)o,
			      " Perplexity protocol: window %.0f, stride %.0f tokens.", m->eval_window,
			      m->eval_stride);
	int fp16aware = 0;
	for (size_t r = 0; r < m->nrows; r++)
		fp16aware |= strstr(m->rows[r].method, "/fp16-aware") != NULL;
	if (fp16aware && o > 0 && (size_t)o < sizeof note)
		snprintf(note + o, sizeof note - (size_t)o,
			 " q8_0, q4_0, q4_1, tq2_0, tq1_0 quantize byte for byte as ggml's "
			 "quantize_row_*_ref (codes against the fp32 scale); their /fp16-aware rows "
			 "round the scale to fp16 first and pick codes against the stored value "
			 "(same layout and bits, other bytes).");
	if (!rc)
		rc = ocb_pivot_note(&p, note);
	if (!rc)
		rc = ocb_pivot_emit(&p, x);
	ocb_pivot_release(&p);
	return rc;
}

/* The suite's acceptance checks: one row per key of workload "quant_acc_check". */
static int checks(struct ocb_rctx *x)
{
	struct ocb_metric_query q = {.steps = OCB_MQ_FINAL, .workload = OCB_QACC_CHECK,
				     .order = OCB_MQ_BY_KEY};
	struct ocb_metric_set ms = {0};
	struct ocb_table *t = NULL;
	static const char *cols[] = {"check", "value", "holds"};
	int rc = ocb_sel_metrics(x->db, &x->o->sel, &q, &ms);
	for (size_t i = 0; !rc && i < ms.n; i++) {
		size_t row;
		if (!t) {
			if ((rc = ocb_rctx_table(x, &t)))
				break;
			if ((rc = ocb_table_init(t, "quant_checks", "Quantization: acceptance checks", 3,
						 cols))) {
				ocb_rctx_table_drop(x);
				break;
			}
			ocb_table_set_note(t, "Positive = the claim holds (accuracy points or perplexity "
					      "gained).");
		}
		double v = ms.r[i].value;
		if ((rc = ocb_table_add_row(t, &row)))
			break;
		ocb_table_text(t, row, 0, ms.r[i].key);
		ocb_table_num(t, row, 1, v, "%.4g");
		ocb_table_text(t, row, 2, isnan(v) ? "?" : v > 0 ? "yes" : "no");
	}
	ocb_metric_set_release(&ms);
	return rc;
}

/* The row's identity: its stored JSON, else the old-format name. */
static int row_identity(const char *name, const char *ident, struct qrow *q)
{
	struct ocb_quant_id id;
	int rc = ident ? ocb_quant_id_from_json(ident, &id) : ocb_quant_id_parse_name(name, &id);
	if (rc)
		return rc;
	memset(q, 0, sizeof *q);
	snprintf(q->model, sizeof q->model, "%s", id.model);
	ocb_quant_id_label(&id, q->method, sizeof q->method);
	snprintf(q->bits, sizeof q->bits, "%s", id.bits);
	snprintf(q->group, sizeof q->group, "%s", id.group);
	return OCB_OK;
}

/* The table of model q->model, added if new; NULL on allocation failure. */
static struct qmodel *model_of(struct qmodel **models, size_t *nmodels, const struct qrow *q)
{
	for (size_t i = 0; i < *nmodels; i++)
		if (strcmp((*models)[i].model, q->model) == 0)
			return &(*models)[i];
	struct qmodel *nm = realloc(*models, (*nmodels + 1) * sizeof *nm);
	if (!nm)
		return NULL;
	*models = nm;
	struct qmodel *m = &nm[(*nmodels)++];
	memset(m, 0, sizeof *m);
	snprintf(m->model, sizeof m->model, "%s", q->model);
	m->eval_window = m->eval_stride = NAN;
	return m;
}

/* Puts value v of `key` into the row of q in m (a new column / row if needed). */
static int put_value(struct qmodel *m, const struct qrow *q, const char *key, double v,
		     int64_t run)
{
	if (!strcmp(key, "eval_window"))
		m->eval_window = v;
	if (!strcmp(key, "eval_stride"))
		m->eval_stride = v;
	if (key_rank(key) == (int)NKNOWN)
		return OCB_OK; /* not a paper column */
	size_t ki = 0;
	while (ki < m->nkeys && strcmp(m->keys[ki], key) != 0)
		ki++;
	if (ki == m->nkeys) {
		if (m->nkeys == QMAX_KEYS)
			return OCB_OK; /* more distinct keys than columns: the rest are dropped */
		snprintf(m->keys[m->nkeys++], sizeof m->keys[0], "%s", key);
	}
	struct qrow *row = NULL;
	for (size_t i = 0; i < m->nrows && !row; i++)
		if (!strcmp(m->rows[i].method, q->method) && !strcmp(m->rows[i].bits, q->bits) &&
		    !strcmp(m->rows[i].group, q->group))
			row = &m->rows[i];
	if (!row) {
		struct qrow *nr = realloc(m->rows, (m->nrows + 1) * sizeof *nr);
		if (!nr)
			return ocb_seterr(OCB_ENOMEM, "quant tables");
		m->rows = nr;
		row = &m->rows[m->nrows++];
		*row = *q;
		for (size_t i = 0; i < QMAX_KEYS; i++)
			row->v[i] = NAN;
	}
	row->v[ki] = v;
	row->run = run;
	return OCB_OK;
}

int ocb_rsec_quant(struct ocb_rctx *x)
{
	/* quant_acc rows: by stored identity (any name), or by name (rows before v4) */
	struct ocb_metric_query mq = {.steps = OCB_MQ_FINAL, .quant = OCB_MQ_QUANT_ONLY,
				      .quant_kind = OCB_QACC_KIND, .order = OCB_MQ_BY_WL_KEY};
	struct ocb_metric_set ms = {0};
	struct qmodel *models = NULL;
	size_t nmodels = 0;
	int rc = ocb_sel_metrics(x->db, &x->o->sel, &mq, &ms);

	for (size_t i = 0; !rc && i < ms.n; i++) {
		const struct ocb_metric_row *r = &ms.r[i];
		struct qrow q;
		struct qmodel *m;
		if (row_identity(r->workload, r->ident, &q))
			continue; /* not a readable identity: skipped */
		if (!(m = model_of(&models, &nmodels, &q)))
			rc = ocb_seterr(OCB_ENOMEM, "quant tables");
		else
			rc = put_value(m, &q, r->key, r->value, r->run_id);
	}
	for (size_t i = 0; i < nmodels && !rc; i++)
		rc = emit(x, &models[i], i);
	if (!rc)
		rc = checks(x);
	for (size_t i = 0; i < nmodels; i++)
		free(models[i].rows);
	free(models);
	ocb_metric_set_release(&ms);
	return rc;
}
