/* hostload: see the header. /proc/stat's first line: "cpu user nice system idle iowait
 * irq softirq steal ..." in USER_HZ ticks (proc(5)). */
#include "hostload.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../common/ocb_time.h"

#define OCB_MAX_SIBLINGS 64
static int siblings[OCB_MAX_SIBLINGS], nsiblings;

void ocb_hostload_set_siblings(const int *pids, int n)
{
	nsiblings = 0;
	for (int i = 0; i < n && nsiblings < OCB_MAX_SIBLINGS; i++)
		siblings[nsiblings++] = pids[i];
}

/* utime + stime of process pid in seconds, from /proc/<pid>/stat (proc(5): fields 14 and
 * 15, counted after the ')' that ends the command name, which may hold spaces); 0 when
 * the process is gone. */
static double proc_cpu_s(int pid, long hz)
{
	char path[64], buf[1024];
	unsigned long long ut = 0, st = 0;
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	/* after ')': state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	 * cmajflt utime(14) stime(15) */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return 0;
	return (double)(ut + st) / (double)hz;
}

void ocb_hostload_read(struct ocb_hostload *h)
{
	unsigned long long v[8] = {0};
	struct rusage ru;
	FILE *f = fopen("/proc/stat", "r");
	long hz = sysconf(_SC_CLK_TCK);
	h->ok = 0;
	h->busy_s = h->self_s = 0;
	if (f) {
		h->ok = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
			       &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8 && hz > 0;
		fclose(f);
	}
	/* user + nice + system + irq + softirq + steal; idle and iowait are not busy */
	if (h->ok)
		h->busy_s = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)hz;
	/* our own children count as us once waited for (the forked memory measurements of
	 * the training workloads, mpirun, gnuplot): not "other processes" */
	static const int who[] = {RUSAGE_SELF, RUSAGE_CHILDREN};
	for (int i = 0; i < 2; i++)
		if (getrusage(who[i], &ru) == 0)
			h->self_s += (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
				     (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
		else
			h->ok = 0;
	for (int i = 0; h->ok && i < nsiblings; i++)
		h->self_s += proc_cpu_s(siblings[i], hz);
	h->wall_s = ocb_now_s();
}

void ocb_hostload_between(const struct ocb_hostload *a, const struct ocb_hostload *b,
			  double *others_s, double *wall_s)
{
	*wall_s = b->wall_s - a->wall_s;
	*others_s = 0;
	if (!a->ok || !b->ok)
		return;
	double o = (b->busy_s - a->busy_s) - (b->self_s - a->self_s);
	*others_s = o > 0 ? o : 0;
}
