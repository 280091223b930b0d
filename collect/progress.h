/* progress: a one-line progress bar on stderr ("[12/40] gemv_q4_0 {...} ETA 1m20s"),
 * drawn only when stderr is a terminal and output is not quiet. */
#ifndef OCB_PROGRESS_H
#define OCB_PROGRESS_H

struct ocb_progress;

/* total: number of steps; enabled: 0 to draw nothing (still safe to call). NULL on
 * allocation failure, which every other call accepts. Caller frees with ocb_progress_free. */
struct ocb_progress *ocb_progress_new(long total, int enabled);
/* Starts the next step and redraws with its name and the ETA from past steps. */
void ocb_progress_step(struct ocb_progress *p, const char *name, const char *detail);
/* Erases the line so ordinary output can be printed. */
void ocb_progress_clear(struct ocb_progress *p);
/* Erases the line for good. */
void ocb_progress_done(struct ocb_progress *p);
void ocb_progress_free(struct ocb_progress *p);

#endif
