/* ptq_model: linears, fp32 snapshot and calibration buffers of a model under PTQ. */
#include "ptq_model.h"

#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"

int ptq_model_init(struct ptq_model *m, int nlin)
{
	memset(m, 0, sizeof *m);
	m->nlin = nlin;
	m->lin = calloc(nlin > 0 ? (size_t)nlin : 1, sizeof *m->lin);
	return m->lin ? OCB_OK : ocb_seterr(OCB_ENOMEM, "ptq: %d linears", nlin);
}

int ptq_model_snapshot(struct ptq_model *m)
{
	size_t floats = 0, outs = 0;
	for (int i = 0; i < m->nlin; i++) {
		const struct ocb_linear *l = m->lin[i].lin;
		floats += ocb_round_up((size_t)l->out * l->in, 16) +
			  ocb_round_up((size_t)l->in * l->in, 16);
		outs += (size_t)l->out;
	}
	m->block = ocb_alloc(floats * sizeof(float));
	m->fisher_block = calloc(outs ? outs : 1, sizeof(double));
	if (!m->block || !m->fisher_block)
		return ocb_seterr(OCB_ENOMEM, "ptq: calibration buffers");
	double *fp = m->fisher_block;
	float *p = m->block;
	m->nweights = 0;
	for (int i = 0; i < m->nlin; i++) {
		struct ptq_lin *q = &m->lin[i];
		size_t nw = (size_t)q->lin->out * q->lin->in, nh = (size_t)q->lin->in * q->lin->in;
		q->fisher = fp;
		fp += q->lin->out;
		q->w0 = p;
		p += ocb_round_up(nw, 16);
		q->h = p;
		p += ocb_round_up(nh, 16);
		memcpy(q->w0, q->lin->w, nw * sizeof(float));
		m->nweights += (int64_t)nw;
	}
	return OCB_OK;
}

void ptq_model_restore(struct ptq_model *m)
{
	for (int i = 0; i < m->nlin; i++)
		memcpy(m->lin[i].lin->w, m->lin[i].w0,
		       (size_t)m->lin[i].lin->out * m->lin[i].lin->in * sizeof(float));
}

void ptq_model_release(struct ptq_model *m)
{
	free(m->lin);
	ocb_free(m->block);
	free(m->fisher_block);
	memset(m, 0, sizeof *m);
}
