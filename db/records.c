#include "records.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ocb_result_release(struct ocb_result *r)
{
	if (!r)
		return;
	free(r->params_json);
	free(r->samples);
	free(r->cpu_samples);
	free(r->counters);
	memset(r, 0, sizeof *r);
}

const char *ocb_run_mode(const struct ocb_run *r)
{
	return r->quick > 0 ? "quick" : r->quick == 0 ? "full" : "-";
}

void ocb_ceiling_view(const struct ocb_ceiling *c, size_t n, struct ocb_roof_ceil *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (struct ocb_roof_ceil){c[i].kind, c[i].threads, c[i].value};
}

void ocb_machine_caches(const struct ocb_machine *m, struct ocb_roof_caches *out)
{
	memset(out, 0, sizeof *out);
	if (!m)
		return;
	out->l1d = (double)m->l1d_bytes;
	out->l2 = (double)m->l2_bytes;
	out->l3 = (double)m->l3_bytes;
	out->llc = (double)m->llc_bytes;
	out->cores = m->cores;
	out->threads = m->threads;
}

/* The 1-thread 'cap_llc' row of c[0..n), NULL if none */
static const struct ocb_ceiling *cap_row(const struct ocb_ceiling *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++)
		if (c[i].threads == 1 && strcmp(c[i].kind, "cap_llc") == 0 && c[i].value > 0 &&
		    isfinite(c[i].value))
			return &c[i];
	return NULL;
}

/* The capacity in bytes that a 'cap_llc' row gives the level rule (0 = none usable) */
static double cap_bytes(const struct ocb_ceiling *cap, double reported_l3)
{
	if (!cap)
		return 0.0;
	double bytes = cap->value * 1048576.0; /* stored in MiB */
	if (!cap->suspect[0])
		return bytes;
	/* flagged (its trials disagreed): still a reading of where the read rate fell, and
	 * a VM may report a last level its guest cannot use (508 MiB on the Zen 5 VM, where
	 * the rate falls at ~43 MiB); so it is used when it is below the reported size, the
	 * upper bound, and the reported size stands otherwise */
	return reported_l3 <= 0 || bytes < reported_l3 ? bytes : 0.0;
}

double ocb_ceiling_llc_bytes(const struct ocb_ceiling *c, size_t n, double reported_l3)
{
	return cap_bytes(cap_row(c, n), reported_l3);
}

int ocb_machine_use_llc(struct ocb_machine *m, const struct ocb_ceiling *c, size_t n)
{
	const struct ocb_ceiling *cap = cap_row(c, n);
	m->llc_bytes = (int64_t)cap_bytes(cap, (double)m->l3_bytes);
	return m->llc_bytes > 0 && cap->suspect[0];
}
