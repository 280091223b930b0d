#define _GNU_SOURCE
#include "ceiling_team.h"

#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "../common/ocb_error.h"
#include "../common/ocb_time.h"

/* The CPUs of the process's affinity mask, lowest first, into list[0..cap); how many. */
static int allowed_cpus(int *list, int cap)
{
	cpu_set_t set;
	int n = 0;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < cap; c++)
		if (CPU_ISSET(c, &set))
			list[n++] = c;
	return n;
}

int ocb_team_run(int nt, ocb_team_fn fn, void *arg, double *agg, double *rate, int *cpu,
		 double *share, int *pinned)
{
	double *t0 = NULL, *t1 = NULL, *work = NULL, *cput = NULL;
	int *where = NULL, ran = 0, rc = OCB_OK, pin = 0;
	int *cpus = NULL;

	if (nt < 1)
		return ocb_seterr(OCB_EINVAL, "team of %d threads", nt);
	t0 = calloc((size_t)nt, sizeof *t0);
	t1 = calloc((size_t)nt, sizeof *t1);
	work = calloc((size_t)nt, sizeof *work);
	cpus = calloc((size_t)nt, sizeof *cpus);
	where = calloc((size_t)nt, sizeof *where);
	cput = calloc((size_t)nt, sizeof *cput);
	if (!t0 || !t1 || !work || !cpus || !where || !cput) {
		rc = ocb_seterr(OCB_ENOMEM, "team of %d threads", nt);
		goto out;
	}
	pin = nt > 1 && allowed_cpus(cpus, nt) >= nt;
#pragma omp parallel num_threads(nt)
	{
		int t = omp_get_thread_num();
		cpu_set_t saved, one;
		int restore = 0;
#pragma omp single
		ran = omp_get_num_threads();
		if (pin && ran == nt) {
			CPU_ZERO(&one);
			CPU_SET(cpus[t], &one);
			restore = pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0 &&
				  pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
		}
#pragma omp barrier
		if (ran == nt) {
			double c0 = ocb_thread_cpu_s();
			t0[t] = ocb_now_s();
			work[t] = fn(t, nt, arg);
			t1[t] = ocb_now_s();
			cput[t] = ocb_thread_cpu_s() - c0;
			where[t] = sched_getcpu();
		}
		if (restore)
			pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
	}
	if (ran != nt) {
		rc = ocb_seterr(OCB_ERUNTIME, "asked OpenMP for %d threads, got %d", nt, ran);
		goto out;
	}
	double first = t0[0], last = t1[0], total = 0.0;
	for (int t = 0; t < nt; t++) {
		first = fmin(first, t0[t]);
		last = fmax(last, t1[t]);
		total += work[t];
		if (rate)
			rate[t] = t1[t] > t0[t] ? work[t] / (t1[t] - t0[t]) : NAN;
		if (cpu)
			cpu[t] = where[t];
		if (share)
			share[t] = t1[t] > t0[t] ? fmin(1.0, cput[t] / (t1[t] - t0[t])) : NAN;
	}
	*agg = last > first ? total / (last - first) : NAN;
	if (pinned)
		*pinned = pin;
out:
	free(t0);
	free(t1);
	free(work);
	free(cpus);
	free(where);
	free(cput);
	return rc;
}

double ocb_team_balance(const double *rate, int nt)
{
	if (nt < 1)
		return NAN;
	double lo = rate[0], hi = rate[0];
	for (int t = 0; t < nt; t++) {
		if (!(rate[t] > 0))
			return NAN;
		lo = fmin(lo, rate[t]);
		hi = fmax(hi, rate[t]);
	}
	return lo / hi;
}
