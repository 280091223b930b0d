/* ptq_sweep: configurations and the run of one (see the header). */
#include "ptq_sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_time.h"
#include "quant_gptq.h"

int ptq_conf_selected(const char *filter, const struct ocb_quant_id *id)
{
	char label[48], full[96], tok[96];
	if (!filter || !filter[0] || !strcmp(id->method, "fp32")) /* the baseline */
		return 1;
	ocb_quant_id_label(id, label, sizeof label);
	snprintf(full, sizeof full, "%s:%s:%s", label, id->bits, id->group);
	for (const char *p = filter; *p;) {
		size_t n = strcspn(p, ",");
		snprintf(tok, sizeof tok, "%.*s", (int)(n < sizeof tok ? n : sizeof tok - 1), p);
		if (!strcmp(tok, label) || !strcmp(tok, full))
			return 1;
		p += n + (p[n] == ',');
	}
	return 0;
}

struct conf_list {
	const char *model, *filter;
	struct ptq_conf *c;
	int n;
};

static void add(struct conf_list *l, const char *method, int fp16aware, const char *bits,
		const char *group, struct quant_method m, int mixed)
{
	struct ptq_conf *q = &l->c[l->n];
	memset(q, 0, sizeof *q);
	snprintf(q->id.model, sizeof q->id.model, "%s", l->model);
	snprintf(q->id.method, sizeof q->id.method, "%s", method);
	if (fp16aware)
		snprintf(q->id.rounding, sizeof q->id.rounding, "%s",
			 qformat_rounding_name(QF_ROUND_FP16_AWARE));
	snprintf(q->id.bits, sizeof q->id.bits, "%s", bits);
	snprintf(q->id.group, sizeof q->id.group, "%s", group);
	q->m = m;
	q->mixed = mixed;
	if (ptq_conf_selected(l->filter, &q->id) && l->n < PTQ_MAXCONF - 1)
		l->n++;
}

static const char *format_bits(enum qformat_type t)
{
	switch (t) {
	case QF_Q8_0:
		return "8";
	case QF_Q4_0:
	case QF_Q4_1:
		return "4";
	case QF_Q3_G:
		return "3";
	case QF_Q2_G:
		return "2";
	default:
		return "1.58";
	}
}

static void add_quick(struct conf_list *l)
{
	const struct qformat *q8 = qformat_get(QF_Q8_0);
	add(l, "rtn", 0, "3", "128", (struct quant_method){.kind = QA_RTN, .q = {3, 128, 0}}, 0);
	add(l, "gptq", 0, "3", "128",
	    (struct quant_method){.kind = QA_GPTQ, .q = {3, 128, 0}, .act_order = 1}, 0);
	add(l, "q8_0", 0, "8", "32", (struct quant_method){.kind = QA_FORMAT, .fmt = q8}, 0);
	add(l, "q8_0", 1, "8", "32",
	    (struct quant_method){.kind = QA_FORMAT, .fmt = q8, .rounding = QF_ROUND_FP16_AWARE}, 0);
	add(l, "mixed_gptq", 0, "3", "128",
	    (struct quant_method){.kind = QA_GPTQ, .q = {3, 128, 0}, .act_order = 1}, 1);
}

/* rtn and gptq over bits x groups (group 0 = per channel, "pc"). */
static void add_grid(struct conf_list *l)
{
	const int groups[3] = {32, 128, 0}, rtn_bits[4] = {8, 4, 3, 2};
	char b[16], g[16];
	for (int bi = 0; bi < 4; bi++)
		for (int gi = 0; gi < 3; gi++) {
			if (rtn_bits[bi] == 8 && groups[gi] != 128)
				continue; /* 8-bit is lossless at any group: one column suffices */
			snprintf(b, sizeof b, "%d", rtn_bits[bi]);
			snprintf(g, sizeof g, groups[gi] ? "%d" : "pc", groups[gi]);
			add(l, "rtn", 0, b, g,
			    (struct quant_method){.kind = QA_RTN, .q = {rtn_bits[bi], groups[gi], 0}}, 0);
		}
	for (int bits = 4; bits >= 2; bits--)
		for (int gi = 0; gi < 3; gi++) {
			snprintf(b, sizeof b, "%d", bits);
			snprintf(g, sizeof g, groups[gi] ? "%d" : "pc", groups[gi]);
			add(l, "gptq", 0, b, g,
			    (struct quant_method){.kind = QA_GPTQ, .q = {bits, groups[gi], 0},
						  .act_order = 1}, 0);
		}
}

static void add_formats(struct conf_list *l)
{
	char g[16];
	for (int f = 0; f < qformat_count(); f++) {
		const struct qformat *fmt = qformat_get(f);
		snprintf(g, sizeof g, "%d", fmt->block);
		add(l, fmt->name, 0, format_bits(fmt->type), g,
		    (struct quant_method){.kind = QA_FORMAT, .fmt = fmt}, 0);
		if (qformat_has_fp16aware(fmt))
			add(l, fmt->name, 1, format_bits(fmt->type), g,
			    (struct quant_method){.kind = QA_FORMAT, .fmt = fmt,
						  .rounding = QF_ROUND_FP16_AWARE}, 0);
	}
}

int ptq_confs(const char *model, int quick, const char *filter, struct ptq_conf *c)
{
	struct conf_list l = {.model = model, .filter = filter, .c = c};
	add(&l, "fp32", 0, "32", "-", (struct quant_method){.kind = QA_FP32}, 0);
	if (quick) {
		add_quick(&l);
		return l.n;
	}
	add_grid(&l);
	add_formats(&l);
	add(&l, "ternary", 0, "1.58", "tensor",
	    (struct quant_method){.kind = QA_TERNARY, .per_row = 0}, 0);
	add(&l, "ternary", 0, "1.58", "row",
	    (struct quant_method){.kind = QA_TERNARY, .per_row = 1}, 0);
	add(&l, "mixed_rtn", 0, "3", "128",
	    (struct quant_method){.kind = QA_RTN, .q = {3, 128, 0}}, 1);
	add(&l, "mixed_gptq", 0, "3", "128",
	    (struct quant_method){.kind = QA_GPTQ, .q = {3, 128, 0}, .act_order = 1}, 1);
	return l.n;
}

/* Quantizes every linear by m (into lin->w); *bits = total storage. */
static int quantize_uniform(struct ptq_model *pm, const struct quant_method *m, int64_t *bits)
{
	*bits = 0;
	for (int i = 0; i < pm->nlin; i++) {
		struct ptq_lin *q = &pm->lin[i];
		int64_t b = 0;
		int rc = quant_apply(m, q->w0, q->lin->out, q->lin->in, q->h, q->lin->w, &b, NULL);
		if (rc)
			return rc;
		*bits += b;
	}
	return OCB_OK;
}

/* Weight and calibration-output errors of the installed weights against w0. */
static void measure_errors(const struct ptq_model *pm, int fp32, struct ptq_outcome *o)
{
	double werr = 0, wnorm = 0, oerr = 0, onorm = 0;
	for (int i = 0; i < pm->nlin; i++) {
		const struct ptq_lin *q = &pm->lin[i];
		size_t nw = (size_t)q->lin->out * q->lin->in;
		for (size_t j = 0; j < nw; j++) {
			double d = (double)q->w0[j] - q->lin->w[j];
			werr += d * d;
			wnorm += (double)q->w0[j] * q->w0[j];
		}
		if (!fp32)
			oerr += quant_output_err(q->w0, q->lin->w, q->lin->out, q->lin->in, q->h);
		onorm += q->out_norm;
	}
	o->weight_rel_err = wnorm > 0 ? werr / wnorm : 0;
	o->output_rel_err = onorm > 0 ? oerr / onorm : 0;
}

int ptq_run_conf(struct ptq_model *m, const struct ptq_conf *c, const struct ptq_mixed_opts *mo,
		 const char *plan_path, struct ptq_outcome *o)
{
	int rc;
	memset(o, 0, sizeof *o);
	o->pred = o->uni_pred = o->metric = o->loss = NAN;
	double t0 = ocb_now_s();
	if (c->mixed)
		rc = ptq_mixed_run(m, &c->m, mo, plan_path, &o->bits, &o->pred, &o->uni_pred);
	else
		rc = quantize_uniform(m, &c->m, &o->bits);
	o->quant_s = ocb_now_s() - t0;
	if (rc)
		return rc;
	measure_errors(m, c->m.kind == QA_FP32, o);
	double te = ocb_now_s();
	if ((rc = m->ops->eval(m->impl, &o->metric, &o->loss)))
		return rc;
	o->eval_s = ocb_now_s() - te;
	o->bpw = (double)o->bits / (double)m->nweights;
	o->model_bytes = (double)o->bits / 8.0 + 4.0 * (double)(m->nparams - (size_t)m->nweights);
	return OCB_OK;
}

double ptq_lookup(const struct ptq_conf *c, const double *metric, int n, const char *method,
		  const char *bits, const char *group)
{
	char label[48];
	for (int i = 0; i < n; i++) {
		ocb_quant_id_label(&c[i].id, label, sizeof label);
		if (!strcmp(label, method) && !strcmp(c[i].id.bits, bits) &&
		    !strcmp(c[i].id.group, group))
			return metric[i];
	}
	return NAN;
}
