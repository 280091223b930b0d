/* projection: strong-scaling model of data-parallel training (see projection.h). */
#include "projection.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_json.h"

int ocb_fabric_load(const char *path, struct ocb_fabric *f)
{
	cJSON *j = NULL;
	int rc = ocb_json_read_file(path, &j);
	memset(f, 0, sizeof *f);
	if (rc)
		return rc;
	const char *name = ocb_json_str(j, "name", NULL);
	double a = ocb_json_num(j, "alpha_s", -1), bw = ocb_json_num(j, "bandwidth_GBps", 0);
	double rpn = ocb_json_num(j, "ranks_per_node", 0);
	if (!name || !*name || !(a >= 0) || !(bw > 0) || !(rpn >= 1)) {
		rc = ocb_seterr(OCB_EINVAL, "%s: a fabric needs name, alpha_s >= 0, "
					    "bandwidth_GBps > 0, ranks_per_node >= 1", path);
		goto out;
	}
	snprintf(f->name, sizeof f->name, "%s", name);
	snprintf(f->source, sizeof f->source, "%s", ocb_json_str(j, "source", ""));
	f->alpha = a;
	f->beta = 1.0 / (bw * 1e9);
	f->ranks_per_node = (int)rpn;
out:
	cJSON_Delete(j);
	return rc;
}

double ocb_proj_max_normal(int p)
{
	/* E[max] = integral of x p phi(x) Phi(x)^(p-1) dx; the integrand is negligible
	 * outside [-8, 8] for p <= 2^20; midpoint rule, 1/1000 steps */
	if (p <= 1)
		return 0.0;
	double sum = 0.0, h = 1e-3;
	for (double x = -8.0 + h / 2; x < 8.0; x += h) {
		double Phi = 0.5 * erfc(-x / sqrt(2.0)), phi = exp(-0.5 * x * x) / sqrt(2.0 * M_PI);
		if (Phi > 0.0)
			sum += x * p * phi * exp((p - 1) * log(Phi)) * h;
	}
	return sum;
}

int ocb_project(const struct ocb_proj_input *in, const struct ocb_fabric *fabric, int p,
		struct ocb_proj_point *out)
{
	memset(out, 0, sizeof *out);
	if (p < 1 || in->global_batch < p || in->nbuckets < 1)
		return ocb_seterr(OCB_EINVAL, "projection: %d ranks, global batch %ld, %d buckets",
				  p, in->global_batch, in->nbuckets);
	struct ocb_coll_model m = in->node;
	if (fabric && p > fabric->ranks_per_node) {
		m.alpha = fabric->alpha;
		m.beta = fabric->beta;
	}
	int over = in->cores > 0 && p > in->cores;
	double share = in->cpu_share > 0 ? in->cpu_share : over ? (double)in->cores / p : 1.0;
	double B = (double)in->global_batch;
	out->ranks = p;
	out->oversubscribed = over;
	out->share = share;
	double cv = in->compute_cv > 0 ? in->compute_cv : 0.0; /* the slowest of p ranks */
	out->compute_s = in->compute_per_sample * (B / p) / share *
			 (1.0 + cv * ocb_proj_max_normal(p));
	if (p > 1) {
		struct ocb_coll_coef k;
		ocb_coll_coef(OCB_COLL_ALLREDUCE, p, &k);
		out->comm_s = in->nbuckets * k.a * m.alpha +
			      in->grad_bytes * (k.b * m.beta + k.c * m.gamma);
	}
	/* an oversubscribed rank does not poll during backward: nothing is hidden */
	double h = over ? 0.0 : in->hidden_share;
	double backward = out->compute_s * 2.0 / 3.0, hide = h * out->comm_s;
	out->exposed_s = out->comm_s - (hide < backward ? hide : backward);
	out->step_s = out->compute_s + out->exposed_s + in->opt_s / share;
	out->samples_per_s = B / out->step_s;
	double step1 = in->compute_per_sample * B + in->opt_s;
	out->efficiency = (B / step1) > 0 ? out->samples_per_s / (p * (B / step1)) : 0.0;
	out->time_to_train_s = in->fixed_s + (double)in->steps_to_target * out->step_s;
	return OCB_OK;
}

int ocb_project_table(const struct ocb_proj_input *in, const struct ocb_fabric *fabric,
		      int first, int last, struct ocb_proj_point *out, int max)
{
	int n = 0;
	if (first < 1 || last < first)
		return ocb_seterr(OCB_EINVAL, "projection table: ranks %d..%d", first, last);
	for (long p = first; p <= last && n < max; p *= 2) {
		int rc = ocb_project(in, fabric, (int)p, &out[n]);
		if (rc)
			return rc;
		n++;
	}
	return n;
}

double ocb_project_error(const struct ocb_proj_input *in, const struct ocb_fabric *fabric,
			 int p, double measured_step_s)
{
	struct ocb_proj_point pt;
	if (!(measured_step_s > 0) || ocb_project(in, fabric, p, &pt))
		return NAN;
	return (pt.step_s - measured_step_s) / measured_step_s;
}

double ocb_proj_share_of(const struct ocb_proj_measured *m)
{
	/* the compute phases' share: the whole run's CPU / wall also counts the busy waits
	 * inside MPI as if they were compute */
	double s = m->compute_share > 0 ? m->compute_share : m->cpu_share > 0 ? m->cpu_share : 0;
	return s > 1.0 ? 1.0 : s;
}

int ocb_proj_calibrate(const struct ocb_proj_measured *one, struct ocb_proj_input *in)
{
	double share = ocb_proj_share_of(one);
	memset(in, 0, sizeof *in);
	if (one->ranks != 1 || !(one->compute_per_sample > 0) || !(share > 0) ||
	    one->nbuckets < 1 || one->global_batch < 1)
		return ocb_seterr(OCB_EINVAL, "projection: calibration needs a measured 1-rank "
					      "point (compute, CPU share, buckets, batch)");
	in->compute_per_sample = one->compute_per_sample * share;
	in->opt_s = one->opt_s * share;
	in->grad_bytes = one->grad_bytes;
	in->nbuckets = one->nbuckets;
	in->global_batch = one->global_batch;
	in->cores = one->cores;
	in->hidden_share = 0.0;
	in->compute_cv = isfinite(one->compute_cv) && one->compute_cv > 0 ? one->compute_cv : 0.0;
	return OCB_OK;
}

int ocb_proj_reproduce(const struct ocb_proj_input *cal, const struct ocb_proj_measured *m,
		       struct ocb_proj_point *out)
{
	struct ocb_proj_input in = *cal;
	if (m->ranks > 1 && m->allreduce.npoints < 2)
		return ocb_seterr(OCB_EINVAL, "projection: %d ranks without a fitted allreduce",
				  m->ranks);
	in.cpu_share = ocb_proj_share_of(m);
	if (isfinite(m->compute_cv) && m->compute_cv > 0)
		in.compute_cv = m->compute_cv; /* this job's spread (its load) */
	in.cores = m->cores > 0 ? m->cores : cal->cores;
	if (m->ranks > 1)
		in.node = m->allreduce;
	if (isfinite(m->hidden))
		in.hidden_share = m->hidden;
	return ocb_project(&in, NULL, m->ranks, out);
}
