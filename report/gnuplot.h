/* gnuplot: drawing plots by piping a script into gnuplot (popen), never by our own
 * graphics code. A plot is written twice by one gnuplot process: PNG (pngcairo, or the
 * libgd png terminal when cairo is missing) and SVG, both with `noenhanced` text so
 * that names are shown literally. The shell command is the fixed word "gnuplot" (or
 * $OCB_GNUPLOT for tests); no database text ever reaches the shell, and every string
 * that reaches gnuplot goes through ocb_esc_gnuplot(). Data go in `$name << EOD`
 * datablocks holding numbers only. */
#ifndef OCB_GNUPLOT_H
#define OCB_GNUPLOT_H

#include <stdio.h>

/* 1 if the gnuplot program is found in PATH ($OCB_GNUPLOT if set), else 0. */
int ocb_gp_available(void);

#include <signal.h>

struct ocb_gp {
	FILE *f;          /* the script stream (a pipe into gnuplot) */
	struct sigaction old_pipe; /* SIGPIPE is ignored while the pipe is open (a gnuplot
				      that dies early must not kill us), then restored */
	char *png, *svg;  /* output paths, owned */
	int png_cairo;    /* 1: pngcairo */
};

/* Starts a plot writing `dir`/`base`.png and .svg (base must be file-safe; dir may be
 * any path: it is escaped). After this the caller writes datablocks and `set` lines to
 * gp->f, then calls ocb_gp_plot() with the plot command. Errors: OCB_EUNAVAIL (no
 * gnuplot), OCB_EIO, OCB_ENOMEM. */
int ocb_gp_open(struct ocb_gp *gp, const char *dir, const char *base);

/* Writes `plot_cmd` (a complete "plot ..." line built by the caller) once per terminal
 * and closes the pipe. Returns OCB_OK if gnuplot exited 0 and both files exist, else
 * OCB_ERUNTIME. Always releases gp. */
int ocb_gp_finish(struct ocb_gp *gp, const char *plot_cmd);

/* Releases gp without plotting (closes the pipe). NULL-safe. */
void ocb_gp_abort(struct ocb_gp *gp);

#endif
