/* calibrate: H capture, Fisher and output norms of a ptq_model (see the header). */
#include "calibrate.h"

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "quant_gptq.h"

int ptq_out_norm(const struct ptq_lin *q, double *norm)
{
	const struct ocb_linear *l = q->lin;
	float *zero = ocb_alloc((size_t)l->out * l->in * sizeof(float));
	if (!zero)
		return OCB_ENOMEM;
	*norm = quant_output_err(q->w0, zero, l->out, l->in, q->h);
	ocb_free(zero);
	return OCB_OK;
}

int ptq_calibrate(struct ptq_model *m)
{
	double loss;
	int rc = m->ops->calib_pass(m->impl, m, 1, &loss);
	if (rc == OCB_OK)
		rc = m->ops->fisher_pass(m->impl, m);
	for (int i = 0; i < m->nlin && rc == OCB_OK; i++)
		rc = ptq_out_norm(&m->lin[i], &m->lin[i].out_norm);
	return rc;
}
