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
	fputs("set grid\nset key top right\nset title ", f);
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

int ocb_rsec_curves(struct ocb_rctx *x)
{
	char *sql = NULL, **wls = NULL;
	sqlite3_stmt *st = NULL;
	struct pt *p = NULL;
	size_t n = 0, cap = 0, nw = 0;
	size_t *wstart = NULL;
	double *step_time = NULL;
	int rc = OCB_OK, s;

	if (asprintf(&sql,
		     "%s SELECT mt.workload, mt.key, mt.step, mt.value FROM metric mt"
		     " JOIN msel ON msel.run_id = mt.run_id AND msel.workload = mt.workload"
		     " WHERE mt.step IS NOT NULL AND mt.value IS NOT NULL"
		     " AND mt.workload NOT LIKE 'quant\\_acc:%%' ESCAPE '\\'"
		     " ORDER BY mt.workload, mt.key, mt.step, mt.id",
		     x->cte) < 0)
		return ocb_seterr(OCB_ENOMEM, "curves query");
	if (sqlite3_prepare_v2(x->db, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = ocb_seterr(OCB_EDB, "curves: %s", sqlite3_errmsg(x->db));
		goto out;
	}
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		const char *wl = (const char *)sqlite3_column_text(st, 0);
		if (!nw || strcmp(wls[nw - 1], wl)) {
			char **nwl = realloc(wls, (nw + 1) * sizeof *nwl);
			size_t *ns = realloc(wstart, (nw + 2) * sizeof *ns);
			if (nwl)
				wls = nwl;
			if (ns)
				wstart = ns;
			if (!nwl || !ns || !(wls[nw] = strdup(wl))) {
				rc = ocb_seterr(OCB_ENOMEM, "curves");
				goto out;
			}
			wstart[nw++] = n;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			struct pt *np = realloc(p, cap * sizeof *np);
			if (!np) {
				rc = ocb_seterr(OCB_ENOMEM, "curves");
				goto out;
			}
			p = np;
		}
		const unsigned char *key = sqlite3_column_text(st, 1);
		snprintf(p[n].key, sizeof p[n].key, "%s", key ? (const char *)key : "");
		p[n].step = (long)sqlite3_column_int64(st, 2);
		p[n].v = sqlite3_column_double(st, 3);
		n++;
	}
	if (s != SQLITE_DONE) {
		rc = ocb_seterr(OCB_EDB, "curves: %s", sqlite3_errmsg(x->db));
		goto out;
	}
	if (wstart)
		wstart[nw] = n;
	/* each workload's mean step time, for loss vs time without a per-step clock:
	 * train_step_time is the summed wall time of all steps, train_steps their count */
	step_time = calloc(2 * (nw + 1), sizeof *step_time);
	double *nsteps = step_time + nw + 1;
	if (!step_time) {
		rc = ocb_seterr(OCB_ENOMEM, "curves");
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	free(sql);
	if (asprintf(&sql,
		     "%s SELECT mt.workload, mt.value, mt.key FROM metric mt"
		     " JOIN msel ON msel.run_id = mt.run_id AND msel.workload = mt.workload"
		     " WHERE mt.step IS NULL AND mt.key IN ('train_step_time', 'train_steps')"
		     " ORDER BY mt.id",
		     x->cte) < 0) {
		sql = NULL;
		rc = ocb_seterr(OCB_ENOMEM, "curves query");
		goto out;
	}
	if (sqlite3_prepare_v2(x->db, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = ocb_seterr(OCB_EDB, "curves: %s", sqlite3_errmsg(x->db));
		goto out;
	}
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(st, 2);
		for (size_t w = 0; w < nw; w++)
			if (!strcmp(wls[w], (const char *)sqlite3_column_text(st, 0)))
				(!strcmp(key, "train_steps") ? nsteps : step_time)[w] =
					sqlite3_column_double(st, 1);
	}
	for (size_t w = 0; w < nw; w++)
		step_time[w] = nsteps[w] > 0 ? step_time[w] / nsteps[w] : 0;
	if (s != SQLITE_DONE) {
		rc = ocb_seterr(OCB_EDB, "curves: %s", sqlite3_errmsg(x->db));
		goto out;
	}
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
	for (size_t w = 0; w < nw; w++)
		free(wls[w]);
	free(wls);
	free(wstart);
	free(step_time);
	free(p);
	sqlite3_finalize(st);
	free(sql);
	return rc;
}
