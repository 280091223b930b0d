/* sec_curves: training curves from stepped metric rows (metric.step NOT NULL) of the
 * selected workloads (not the quant_acc ones). Per workload, up to three plots:
 *   curve_<k>_step  every key holding "loss" vs step, except test_* keys (those are
 *                   logged per epoch, as the train suite does, not per step)
 *   curve_<k>_time  the same vs wall time: from a time key logged per step (wall_time,
 *                   elapsed, elapsed_s, time_s or train_time, seconds since training
 *                   began; the trainers log elapsed_s), else step x the mean step time
 *                   = the workload's train_step_time (the SUM of the steps' wall time,
 *                   seconds) / train_steps; no time plot when either is missing
 *   curve_<k>_acc   every key holding "accuracy" vs its step (epochs for eval metrics)
 * Data reach gnuplot as numbers in datablocks; names only as escaped titles. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "escape.h"
#include "gnuplot.h"
#include "rctx.h"

struct pt {
	char key[48];
	long step;
	double v;
};

static const char *const time_keys[] = {"wall_time", "elapsed", "elapsed_s", "time_s",
					"train_time"};

static const char *find_time_key(const struct pt *p, size_t n)
{
	for (size_t k = 0; k < sizeof time_keys / sizeof *time_keys; k++)
		for (size_t i = 0; i < n; i++)
			if (!strcmp(p[i].key, time_keys[k]))
				return time_keys[k];
	return NULL;
}

/* Value of `key` at `step`, NaN if none (p sorted by key, step). */
static double at_step(const struct pt *p, size_t n, const char *key, long step)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].step == step && !strcmp(p[i].key, key))
			return p[i].v;
	return NAN;
}

static int wanted(const char *key, const char *substr, const char *skip_prefix)
{
	return strstr(key, substr) &&
	       !(skip_prefix && !strncmp(key, skip_prefix, strlen(skip_prefix)));
}

/* One plot of the keys matching `substr` (not starting with skip_prefix): x = step, or
 * the per-step time key when tkey, or step * step_time when step_time > 0. */
/* Over 80 lines: builds one gnuplot script (series per key, axis and time mapping)
 * and draws it; the pieces share the script buffer. Not changed by issue 9. */
static int curve(struct ocb_rctx *x, const char *wl, const struct pt *p, size_t n, size_t k,
		 const char *substr, const char *skip_prefix, const char *tkey, double step_time,
		 const char *suffix, const char *xlabel, const char *ylabel)
{
	char base[64], *title = NULL, *cmd = NULL;
	size_t clen = 0;
	struct ocb_gp gp = {0};
	int nkeys = 0, rc = OCB_OK;

	for (size_t i = 0; i < n; i++)
		if (wanted(p[i].key, substr, skip_prefix) && (i == 0 || strcmp(p[i].key, p[i - 1].key)))
			nkeys++;
	if (!nkeys)
		return OCB_OK;
	snprintf(base, sizeof base, "curve_%zu_%s", k, suffix);
	if (asprintf(&title, "%s: %s vs %s", wl, ylabel, xlabel) < 0)
		return ocb_seterr(OCB_ENOMEM, "curves");
	if (!ocb_gp_available()) {
		rc = ocb_rctx_plot(x, base, title, 0, "gnuplot not found in PATH");
		goto out;
	}
	if ((rc = ocb_gp_open(&gp, x->out, base))) {
		rc = ocb_rctx_plot(x, base, title, 0, ocb_lasterr());
		goto out;
	}
	FILE *f = gp.f;
	/* the key below the plot: inside, it covers a rising (accuracy) or falling curve */
	fputs("set grid\nset key outside below center horizontal\nset title ", f);
	ocb_esc_gnuplot(f, title);
	fputs("\nset xlabel ", f);
	ocb_esc_gnuplot(f, xlabel);
	fputs("\nset ylabel ", f);
	ocb_esc_gnuplot(f, ylabel);
	fputc('\n', f);
	int d = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && !strcmp(p[j].key, p[i].key))
			j++;
		if (wanted(p[i].key, substr, skip_prefix)) {
			int rows = 0;
			fprintf(f, "$D%d << EOD\n", d);
			for (size_t q = i; q < j; q++) {
				double xv = tkey ? at_step(p, n, tkey, p[q].step)
					    : step_time > 0 ? step_time * (double)p[q].step : (double)p[q].step;
				if (isnan(xv) || isnan(p[q].v))
					continue;
				fprintf(f, "%.9g %.9g\n", xv, p[q].v);
				rows++;
			}
			fputs("EOD\n", f);
			if (rows) {
				char *piece = NULL, *t = NULL;
				size_t tl = 0;
				FILE *m = open_memstream(&t, &tl);
				if (m) {
					ocb_esc_gnuplot(m, p[i].key);
					fclose(m);
				}
				if (!t || asprintf(&piece, "%s$D%d using 1:2 with linespoints pt 7 ps 0.5 title %s",
						   cmd ? ", " : "plot ", d, t) < 0) {
					free(t);
					rc = ocb_seterr(OCB_ENOMEM, "curves");
					ocb_gp_abort(&gp);
					goto out;
				}
				free(t);
				char *nc = realloc(cmd, clen + strlen(piece) + 1);
				if (!nc) {
					free(piece);
					rc = ocb_seterr(OCB_ENOMEM, "curves");
					ocb_gp_abort(&gp);
					goto out;
				}
				cmd = nc;
				strcpy(cmd + clen, piece);
				clen += strlen(piece);
				free(piece);
			}
			d++;
		}
		i = j;
	}
	if (!cmd) {
		ocb_gp_abort(&gp);
		rc = ocb_rctx_plot(x, base, title, 0, "no points");
		goto out;
	}
	rc = ocb_gp_finish(&gp, cmd);
	rc = ocb_rctx_plot(x, base, title, rc == OCB_OK, rc ? ocb_lasterr() : NULL);
out:
	free(cmd);
	free(title);
	return rc;
}

/* The stepped metrics of the selection (not the PTQ sweep's) as points grouped by
 * workload: wls[0..*nw) and wstart[0..*nw] index p[0..*n). */
static int load_points(struct ocb_rctx *x, struct pt **p, size_t *n, char ***wls, size_t *nw,
		       size_t **wstart)
{
	struct ocb_metric_query q = {.steps = OCB_MQ_STEPPED, .value_present = 1,
				     .quant = OCB_MQ_QUANT_NONE, .order = OCB_MQ_BY_WL_KEY_STEP};
	struct ocb_metric_set ms = {0};
	int rc = ocb_sel_metrics(x->db, &x->o->sel, &q, &ms);
	if (rc)
		return rc;
	if (!(*p = calloc(ms.n + 1, sizeof **p)) || !(*wstart = calloc(ms.n + 2, sizeof **wstart)) ||
	    !(*wls = calloc(ms.n + 1, sizeof **wls))) {
		rc = ocb_seterr(OCB_ENOMEM, "curves");
		goto out;
	}
	for (size_t i = 0; i < ms.n; i++) {
		const struct ocb_metric_row *m = &ms.r[i];
		if (!*nw || strcmp((*wls)[*nw - 1], m->workload)) {
			if (!((*wls)[*nw] = strdup(m->workload))) {
				rc = ocb_seterr(OCB_ENOMEM, "curves");
				goto out;
			}
			(*wstart)[(*nw)++] = *n;
		}
		struct pt *t = &(*p)[(*n)++];
		snprintf(t->key, sizeof t->key, "%s", m->key);
		t->step = m->step;
		t->v = m->value;
	}
	(*wstart)[*nw] = *n;
out:
	ocb_metric_set_release(&ms);
	return rc;
}

/* Each workload's mean step time, for loss vs time without a per-step clock:
 * train_step_time is the summed wall time of all steps, train_steps their count.
 * step_time[0..nw) (0: unknown). */
static int load_step_times(struct ocb_rctx *x, char **wls, size_t nw, double *step_time)
{
	static const char *const keys[] = {"train_step_time", "train_steps", NULL};
	struct ocb_metric_query q = {.steps = OCB_MQ_FINAL, .keys = keys, .order = OCB_MQ_BY_ID};
	struct ocb_metric_set ms = {0};
	double *nsteps = calloc(nw + 1, sizeof *nsteps);
	int rc = nsteps ? ocb_sel_metrics(x->db, &x->o->sel, &q, &ms)
			: ocb_seterr(OCB_ENOMEM, "curves");
	for (size_t i = 0; !rc && i < ms.n; i++)
		for (size_t w = 0; w < nw; w++)
			if (!strcmp(wls[w], ms.r[i].workload))
				(!strcmp(ms.r[i].key, "train_steps") ? nsteps : step_time)[w] =
					isnan(ms.r[i].value) ? 0 : ms.r[i].value;
	for (size_t w = 0; !rc && w < nw; w++)
		step_time[w] = nsteps[w] > 0 ? step_time[w] / nsteps[w] : 0;
	ocb_metric_set_release(&ms);
	free(nsteps);
	return rc;
}

int ocb_rsec_curves(struct ocb_rctx *x)
{
	char **wls = NULL;
	struct pt *p = NULL;
	size_t n = 0, nw = 0;
	size_t *wstart = NULL;
	double *step_time = NULL;
	int rc;

	if ((rc = load_points(x, &p, &n, &wls, &nw, &wstart)))
		goto out;
	if (!(step_time = calloc(nw + 1, sizeof *step_time))) {
		rc = ocb_seterr(OCB_ENOMEM, "curves");
		goto out;
	}
	if ((rc = load_step_times(x, wls, nw, step_time)))
		goto out;
	for (size_t w = 0; w < nw && !rc; w++) {
		const struct pt *wp = p + wstart[w];
		size_t wn = wstart[w + 1] - wstart[w];
		const char *tkey = find_time_key(wp, wn);
		rc = curve(x, wls[w], wp, wn, w, "loss", "test_", NULL, 0, "step", "step", "loss");
		if (!rc && tkey)
			rc = curve(x, wls[w], wp, wn, w, "loss", "test_", tkey, 0, "time", "wall time (s)",
				   "loss");
		else if (!rc && step_time[w] > 0)
			rc = curve(x, wls[w], wp, wn, w, "loss", "test_", NULL, step_time[w], "time",
				   "wall time (s, steps x mean step time)", "loss");
		if (!rc)
			rc = curve(x, wls[w], wp, wn, w, "accuracy", NULL, NULL, 0, "acc", "epoch",
				   "accuracy");
	}
out:
	for (size_t w = 0; wls && w < nw; w++)
		free(wls[w]);
	free(wls);
	free(wstart);
	free(step_time);
	free(p);
	return rc;
}
