#define _GNU_SOURCE /* asprintf */
#include "gnuplot.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "escape.h"

static const char *gp_program(void)
{
	const char *e = getenv("OCB_GNUPLOT");
	return e && *e ? e : "gnuplot";
}

/* Looks the program up in PATH like the shell will (an absolute path is checked). */
static int in_path(const char *prog)
{
	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	const char *path = getenv("PATH");
	if (!path)
		return 0;
	char *copy = strdup(path), *save = NULL, buf[4096];
	int found = 0;
	for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(buf, sizeof buf, "%s/%s", *d ? d : ".", prog);
		found = access(buf, X_OK) == 0;
	}
	free(copy);
	return found;
}

int ocb_gp_available(void)
{
	return in_path(gp_program());
}

/* Does this gnuplot have the pngcairo terminal? Asked once per process. */
static int has_pngcairo(void)
{
	static int known = -1;
	if (known >= 0)
		return known;
	known = 0;
	char *cmd = NULL;
	/* the program name is ours (fixed or from the environment of the caller) */
	if (asprintf(&cmd, "%s -e 'set terminal pngcairo' >/dev/null 2>&1", gp_program()) < 0)
		return 0;
	int st = system(cmd);
	free(cmd);
	known = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	return known;
}

void ocb_gp_abort(struct ocb_gp *gp)
{
	if (!gp)
		return;
	if (gp->f) {
		pclose(gp->f);
		sigaction(SIGPIPE, &gp->old_pipe, NULL);
	}
	free(gp->png);
	free(gp->svg);
	memset(gp, 0, sizeof *gp);
}

int ocb_gp_open(struct ocb_gp *gp, const char *dir, const char *base)
{
	memset(gp, 0, sizeof *gp);
	if (!ocb_gp_available())
		return ocb_seterr(OCB_EUNAVAIL, "gnuplot not found in PATH");
	if (asprintf(&gp->png, "%s/%s.png", dir, base) < 0 ||
	    asprintf(&gp->svg, "%s/%s.svg", dir, base) < 0) {
		gp->png = gp->svg = NULL;
		ocb_gp_abort(gp);
		return ocb_seterr(OCB_ENOMEM, "plot %s", base);
	}
	unlink(gp->png);
	unlink(gp->svg);
	gp->png_cairo = has_pngcairo();
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "%s >/dev/null 2>&1", gp_program());
	struct sigaction ign;
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &gp->old_pipe);
	gp->f = popen(cmd, "w");
	if (!gp->f) {
		sigaction(SIGPIPE, &gp->old_pipe, NULL);
		ocb_gp_abort(gp);
		return ocb_seterr(OCB_EIO, "cannot start gnuplot");
	}
	fputs("reset\nset encoding utf8\n", gp->f);
	return OCB_OK;
}

int ocb_gp_finish(struct ocb_gp *gp, const char *plot_cmd)
{
	struct stat sb;
	FILE *f = gp->f;
	fprintf(f, "set terminal %s noenhanced size 1000,700 font 'sans,11'\nset output ",
		gp->png_cairo ? "pngcairo" : "png");
	ocb_esc_gnuplot(f, gp->png);
	fprintf(f, "\n%s\nunset output\n", plot_cmd);
	fputs("set terminal svg noenhanced size 1000,700 dynamic font 'sans,11'\nset output ", f);
	ocb_esc_gnuplot(f, gp->svg);
	fprintf(f, "\n%s\nunset output\nexit\n", plot_cmd);
	int st = pclose(f);
	gp->f = NULL;
	sigaction(SIGPIPE, &gp->old_pipe, NULL);
	int ok = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && stat(gp->png, &sb) == 0 &&
		 sb.st_size > 0 && stat(gp->svg, &sb) == 0 && sb.st_size > 0;
	int rc = ok ? OCB_OK : ocb_seterr(OCB_ERUNTIME, "gnuplot failed drawing %s", gp->svg);
	ocb_gp_abort(gp);
	return rc;
}
