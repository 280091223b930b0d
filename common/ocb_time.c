#include "ocb_time.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t ocb_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

double ocb_now_s(void)
{
	return (double)ocb_now_ns() * 1e-9;
}

int64_t ocb_epoch_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *ocb_utc_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

double ocb_thread_cpu_s(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return NAN;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double ocb_process_cpu_s(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return NAN;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* n digits at *p as an int; -1 if they are not all digits. */
static int digits(const char **p, int n)
{
	int v = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (!isdigit((unsigned char)**p))
			return -1;
		v = 10 * v + (**p - '0');
	}
	return v;
}

double ocb_iso8601_parse(const char *s)
{
	if (!s)
		return NAN;
	const char *p = s;
	int y = digits(&p, 4);
	if (y < 0 || *p++ != '-')
		return NAN;
	int mo = digits(&p, 2);
	if (mo < 1 || mo > 12 || *p++ != '-')
		return NAN;
	int d = digits(&p, 2);
	if (d < 1 || d > 31 || (*p != 'T' && *p != ' '))
		return NAN;
	p++;
	int h = digits(&p, 2);
	if (h < 0 || h > 23 || *p++ != ':')
		return NAN;
	int mi = digits(&p, 2);
	if (mi < 0 || mi > 59 || *p++ != ':')
		return NAN;
	int se = digits(&p, 2);
	if (se < 0 || se > 60)
		return NAN;
	double frac = 0;
	if (*p == '.') {
		char *end = NULL;
		frac = strtod(p, &end);
		p = end;
	}
	int off = 0; /* minutes east of UTC */
	if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1;
		int oh = digits(&p, 2);
		if (*p == ':')
			p++;
		int om = digits(&p, 2);
		if (oh < 0 || oh > 23 || om < 0 || om > 59)
			return NAN;
		off = sign * (60 * oh + om);
	} else if (*p == 'Z') {
		p++;
	}
	if (*p)
		return NAN;
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	time_t t = timegm(&tm);
	return (double)t + frac - 60.0 * off;
}

char *ocb_utc_stamp(double t, char *buf, size_t len)
{
	time_t tt = (time_t)floor(t);
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}
