#define _GNU_SOURCE /* qsort_r */
#include "pivot.h"

#include <stdio.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_natcmp.h"
#include "rctx.h"
#include "sigfig.h"

int ocb_pivot_init(struct ocb_pivot *p, const char *id, const char *title, size_t nkey,
		   const char *const *keynames, size_t nmeas, const struct ocb_pmeasure *meas)
{
	memset(p, 0, sizeof *p);
	if (nkey > OCB_PIVOT_MAX_KEYS || nmeas == 0 || nmeas > OCB_PIVOT_MAX_MEAS)
		return ocb_seterr(OCB_EINVAL, "pivot %s: %zu keys, %zu measures", id, nkey, nmeas);
	p->form = OCB_FORM_PAPER;
	snprintf(p->id, sizeof p->id, "%s", id);
	p->nkey = nkey;
	for (size_t k = 0; k < nkey; k++)
		snprintf(p->keyname[k], sizeof p->keyname[k], "%s", keynames[k]);
	p->nmeas = nmeas;
	memcpy(p->meas, meas, nmeas * sizeof *meas);
	if (!(p->title = strdup(title ? title : "")))
		return ocb_seterr(OCB_ENOMEM, "pivot %s", id);
	return OCB_OK;
}

void ocb_pivot_release(struct ocb_pivot *p)
{
	if (!p)
		return;
	for (size_t i = 0; p->rowkey && i < p->nrows * p->nkey; i++)
		free(p->rowkey[i]);
	for (size_t i = 0; i < p->ncolk; i++)
		free(p->colkey[i]);
	free(p->rowkey);
	free(p->colkey);
	free(p->e);
	free(p->runs);
	free(p->title);
	free(p->note);
	memset(p, 0, sizeof *p);
}

int ocb_pivot_note(struct ocb_pivot *p, const char *note)
{
	char *d = strdup(note ? note : "");
	if (!d)
		return ocb_seterr(OCB_ENOMEM, "pivot %s", p->id);
	free(p->note);
	p->note = d;
	return OCB_OK;
}

/* Index of the row with keys rk, added when new; -1 on allocation failure. */
static long row_of(struct ocb_pivot *p, const char *const *rk)
{
	for (size_t r = 0; r < p->nrows; r++) {
		size_t k = 0;
		while (k < p->nkey && !strcmp(p->rowkey[r * p->nkey + k], rk[k] ? rk[k] : ""))
			k++;
		if (k == p->nkey)
			return (long)r;
	}
	char **nk = realloc(p->rowkey, (p->nrows + 1) * (p->nkey ? p->nkey : 1) * sizeof *nk);
	if (!nk)
		return -1;
	p->rowkey = nk;
	for (size_t k = 0; k < p->nkey; k++)
		if (!(nk[p->nrows * p->nkey + k] = strdup(rk[k] ? rk[k] : ""))) {
			while (k--)
				free(nk[p->nrows * p->nkey + k]);
			return -1;
		}
	return (long)p->nrows++;
}

static long col_of(struct ocb_pivot *p, const char *ck)
{
	for (size_t c = 0; c < p->ncolk; c++)
		if (!strcmp(p->colkey[c], ck))
			return (long)c;
	char **nc = realloc(p->colkey, (p->ncolk + 1) * sizeof *nc);
	if (!nc)
		return -1;
	p->colkey = nc;
	if (!(nc[p->ncolk] = strdup(ck)))
		return -1;
	return (long)p->ncolk++;
}

static int add_run(struct ocb_pivot *p, int64_t run)
{
	for (size_t i = 0; i < p->nruns; i++)
		if (p->runs[i] == run)
			return OCB_OK;
	int64_t *nr = realloc(p->runs, (p->nruns + 1) * sizeof *nr);
	if (!nr)
		return ocb_seterr(OCB_ENOMEM, "pivot %s", p->id);
	p->runs = nr;
	nr[p->nruns++] = run;
	return OCB_OK;
}

int ocb_pivot_put(struct ocb_pivot *p, const char *const *rk, const char *ck, size_t meas,
		  double v, double lo, double hi, int64_t run_id)
{
	if (isnan(v))
		return OCB_OK;
	if (meas >= p->nmeas)
		return ocb_seterr(OCB_EINVAL, "pivot %s: no measure %zu", p->id, meas);
	long r = row_of(p, rk), c = col_of(p, ck ? ck : "");
	if (r < 0 || c < 0)
		return ocb_seterr(OCB_ENOMEM, "pivot %s", p->id);
	if (run_id >= 0 && add_run(p, run_id))
		return OCB_ENOMEM;
	for (size_t i = 0; i < p->ne; i++) {
		struct ocb_pentry *e = &p->e[i];
		if (e->row == (size_t)r && e->col == (size_t)c && e->meas == meas) {
			e->v = v;
			e->lo = lo;
			e->hi = hi;
			return OCB_OK;
		}
	}
	if (p->ne == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 32;
		struct ocb_pentry *ne = realloc(p->e, cap * sizeof *ne);
		if (!ne)
			return ocb_seterr(OCB_ENOMEM, "pivot %s", p->id);
		p->e = ne;
		p->cap = cap;
	}
	p->e[p->ne++] = (struct ocb_pentry){(size_t)r, (size_t)c, meas, v, lo, hi};
	return OCB_OK;
}

static int cmp_rows(const void *a, const void *b, void *arg)
{
	const struct ocb_pivot *p = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	for (size_t k = 0; k < p->nkey; k++) {
		int c = ocb_natcmp(p->rowkey[x * p->nkey + k], p->rowkey[y * p->nkey + k]);
		if (c)
			return c;
	}
	return (x > y) - (x < y);
}

static int cmp_cols(const void *a, const void *b, void *arg)
{
	const struct ocb_pivot *p = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = ocb_natcmp(p->colkey[x], p->colkey[y]);
	return c ? c : (x > y) - (x < y);
}

/* Headers and groups of the value columns, in col-key order ci[]. */
static int set_headers(const struct ocb_pivot *p, struct ocb_table *t, const size_t *ci)
{
	int keyed = p->ncolk > 1 || (p->ncolk == 1 && p->colkey[0][0]);
	int rc = OCB_OK;
	for (size_t c = 0; c < p->ncolk && !rc; c++)
		for (size_t m = 0; m < p->nmeas && !rc; m++) {
			size_t col = p->nkey + c * p->nmeas + m;
			t->best[col] = p->meas[m].best;
			if (p->nmeas == 1 && keyed) { /* key as header, the measure spans */
				char *h = strdup(p->colkey[ci[c]]);
				if (!h)
					return ocb_seterr(OCB_ENOMEM, "pivot %s", p->id);
				free(t->cols[col]);
				t->cols[col] = h;
				rc = ocb_table_set_group(t, col, p->meas[0].name);
			} else if (keyed) {
				rc = ocb_table_set_group(t, col, p->colkey[ci[c]]);
			}
		}
	return rc;
}

/* The table's cells: row keys, then each entry at its sorted place. */
static int fill(const struct ocb_pivot *p, struct ocb_table *t, const size_t *ri, const size_t *ci)
{
	size_t *rpos = calloc(p->nrows, sizeof *rpos), *cpos = calloc(p->ncolk, sizeof *cpos);
	int rc = OCB_OK;
	if (!rpos || !cpos) {
		rc = ocb_seterr(OCB_ENOMEM, "pivot %s", p->id);
		goto out;
	}
	for (size_t i = 0; i < p->nrows; i++)
		rpos[ri[i]] = i;
	for (size_t i = 0; i < p->ncolk; i++)
		cpos[ci[i]] = i;
	for (size_t i = 0; i < p->nrows && !rc; i++) {
		size_t row;
		if ((rc = ocb_table_add_row(t, &row)))
			break;
		for (size_t k = 0; k < p->nkey && !rc; k++)
			rc = ocb_table_text(t, row, k, p->rowkey[ri[i] * p->nkey + k]);
	}
	for (size_t i = 0; i < p->ne && !rc; i++) {
		const struct ocb_pentry *e = &p->e[i];
		size_t col = p->nkey + cpos[e->col] * p->nmeas + e->meas;
		char buf[64];
		int sig = p->meas[e->meas].sig > 0 ? p->meas[e->meas].sig : 3;
		if (p->meas[e->meas].fmt && (isnan(e->lo) || isnan(e->hi)))
			snprintf(buf, sizeof buf, p->meas[e->meas].fmt, e->v);
		else
			ocb_sigfig(e->v, e->lo, e->hi, sig, buf, sizeof buf);
		if (!(rc = ocb_table_text(t, rpos[e->row], col, buf)))
			t->num[rpos[e->row] * t->ncols + col] = e->v;
	}
out:
	free(rpos);
	free(cpos);
	return rc;
}

int ocb_pivot_emit(const struct ocb_pivot *p, struct ocb_rctx *x)
{
	if (!p->ne)
		return OCB_OK;
	size_t ncols = p->nkey + p->ncolk * p->nmeas;
	const char **cols = calloc(ncols, sizeof *cols);
	size_t *ri = calloc(p->nrows, sizeof *ri), *ci = calloc(p->ncolk, sizeof *ci);
	struct ocb_table *t = NULL;
	char *prov = NULL;
	int rc = OCB_OK;
	if (!cols || !ri || !ci) {
		rc = ocb_seterr(OCB_ENOMEM, "pivot %s", p->id);
		goto out;
	}
	for (size_t i = 0; i < p->nrows; i++)
		ri[i] = i;
	for (size_t i = 0; i < p->ncolk; i++)
		ci[i] = i;
	if (!p->keep_order) {
		qsort_r(ri, p->nrows, sizeof *ri, cmp_rows, (void *)p);
		qsort_r(ci, p->ncolk, sizeof *ci, cmp_cols, (void *)p);
	}
	for (size_t k = 0; k < p->nkey; k++)
		cols[k] = p->keyname[k];
	for (size_t c = 0; c < p->ncolk; c++)
		for (size_t m = 0; m < p->nmeas; m++)
			cols[p->nkey + c * p->nmeas + m] = p->meas[m].name;
	if ((rc = ocb_rctx_table(x, &t)))
		goto out;
	if ((rc = ocb_table_init(t, p->id, p->title, ncols, cols))) {
		ocb_rctx_table_drop(x);
		goto out;
	}
	t->nkey = p->nkey;
	t->form = p->form;
	if ((rc = set_headers(p, t, ci)) || (rc = fill(p, t, ri, ci)))
		goto out;
	if (p->note && (rc = ocb_table_set_note(t, p->note)))
		goto out;
	if (!(rc = ocb_rctx_prov(x, p->runs, p->nruns, &prov)))
		rc = ocb_table_set_prov(t, prov);
out:
	free(prov);
	free(cols);
	free(ri);
	free(ci);
	return rc;
}
