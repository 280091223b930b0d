/* progress: one-line progress bar on stderr (see progress.h). */
#include "progress.h"

#include <math.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../common/ocb_time.h"

void ocb_progress_init_stream(struct ocb_progress *p, long total, FILE *out, int enabled,
			      int width)
{
	memset(p, 0, sizeof *p);
	p->out = out;
	p->enabled = enabled && out;
	p->total = total;
	p->t0 = ocb_now_s();
	p->width = width > 0 ? width : 80;
}

void ocb_progress_init(struct ocb_progress *p, long total, int quiet)
{
	int tty = isatty(STDERR_FILENO);
	int width = 80;
	struct winsize ws;
	if (tty && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		width = ws.ws_col;
	ocb_progress_init_stream(p, total, stderr, tty && !quiet, width);
}

char *ocb_progress_eta(double s, char *buf, size_t len)
{
	if (!isfinite(s) || s < 0) {
		snprintf(buf, len, "--");
		return buf;
	}
	long t = lround(s);
	if (t < 60)
		snprintf(buf, len, "%lds", t);
	else if (t < 3600)
		snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, len, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
	return buf;
}

void ocb_progress_case(struct ocb_progress *p, const char *bench, const char *params)
{
	if (!p->enabled)
		return;
	long done = p->started;
	p->started++;
	double eta = -1;
	if (done > 0)
		eta = (ocb_now_s() - p->t0) / (double)done * (double)(p->total - done);
	char e[32], line[512];
	ocb_progress_eta(eta, e, sizeof e);
	/* Room for the parameters: what is left after "[i/n] bench " and " ETA t". */
	int head = snprintf(line, sizeof line, "[%ld/%ld] %s ", p->started, p->total,
			    bench ? bench : "");
	int tail = (int)strlen(e) + 5;
	int room = p->width - 1 - head - tail;
	if (head < 0 || head >= (int)sizeof line)
		head = (int)sizeof line - 1;
	if (params && *params && room > 4) {
		int plen = (int)strlen(params);
		if (plen <= room)
			head += snprintf(line + head, sizeof line - (size_t)head, "%s ", params);
		else
			head += snprintf(line + head, sizeof line - (size_t)head, "%.*s.. ",
					 room - 3, params);
	}
	if (head >= (int)sizeof line)
		head = (int)sizeof line - 1;
	snprintf(line + head, sizeof line - (size_t)head, "ETA %s", e);
	if ((int)strlen(line) > p->width - 1)
		line[p->width - 1] = '\0';
	/* \r back to column 0, the line, then erase what an older, longer line left. */
	fprintf(p->out, "\r%s\033[K", line);
	fflush(p->out);
	p->drawn = 1;
}

void ocb_progress_clear(struct ocb_progress *p)
{
	if (!p->enabled || !p->drawn)
		return;
	fputs("\r\033[K", p->out);
	fflush(p->out);
	p->drawn = 0;
}

void ocb_progress_finish(struct ocb_progress *p)
{
	ocb_progress_clear(p);
	p->enabled = 0;
}
