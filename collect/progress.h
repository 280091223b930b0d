/* progress: the one-line progress bar of `ocbench run` on stderr (DESIGN.md "CLI
 * conventions"): "[12/40] gemv_q4_0 {"k":4096,"n":4096} ETA 1m20s", redrawn in place
 * with '\r'. Drawn only when stderr is a terminal and not --quiet; otherwise every call
 * is a no-op. The struct is the caller's (no allocation); nothing here can fail. */
#ifndef OCB_PROGRESS_H
#define OCB_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

struct ocb_progress {
	FILE *out;        /* stderr, or a test stream */
	int enabled;      /* draw at all */
	long total;       /* cases planned */
	long started;     /* cases begun (the [i/total] shown) */
	double t0;        /* ocb_now_s() at init */
	int width;        /* terminal columns; lines are cut to width - 1 */
	int drawn;        /* a line is on screen */
};

/* Starts a bar for `total` cases on stderr: enabled when isatty(2) && !quiet. */
void ocb_progress_init(struct ocb_progress *p, long total, int quiet);
/* The same on stream `out`, enabled as told, `width` columns (<= 0: 80). For tests and
 * for callers that decide themselves. */
void ocb_progress_init_stream(struct ocb_progress *p, long total, FILE *out, int enabled,
			      int width);
/* Case number started+1 begins: redraws "[i/total] bench params ETA t". The ETA is the
 * mean elapsed time per finished case times the cases left (this one included); "ETA
 * --" before any case has finished. params may be NULL. */
void ocb_progress_case(struct ocb_progress *p, const char *bench, const char *params);
/* Erases the line (before printing something else); the next case redraws it. */
void ocb_progress_clear(struct ocb_progress *p);
/* Erases the line for good; later calls draw nothing. */
void ocb_progress_finish(struct ocb_progress *p);

/* Formats a duration for the bar: "45s", "1m20s", "2h05m", "--" for unknown (< 0 or
 * not finite). Writes at most len bytes; returns buf. */
char *ocb_progress_eta(double seconds, char *buf, size_t len);

#endif
