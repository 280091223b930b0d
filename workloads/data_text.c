#include "data_text.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"

#define VAL_EVERY 10 /* record i -> val when i % VAL_EVERY == VAL_EVERY - 1 */

struct span { size_t at, len; };

/* Appends the whole file to *buf (realloc'd). */
static int read_append(const char *path, unsigned char **buf, size_t *len, size_t *cap)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return ocb_seterr(OCB_ENOENT, "%s: cannot open: %s", path, strerror(errno));
	int rc = OCB_OK;
	for (;;) {
		if (*cap - *len < 65536) {
			size_t nc = *cap ? *cap * 2 : 1 << 20;
			unsigned char *p = realloc(*buf, nc);
			if (!p) {
				rc = ocb_seterr(OCB_ENOMEM, "%s: out of memory", path);
				break;
			}
			*buf = p;
			*cap = nc;
		}
		size_t k = fread(*buf + *len, 1, *cap - *len, f);
		*len += k;
		if (k == 0) {
			if (ferror(f))
				rc = ocb_seterr(OCB_EIO, "%s: read error", path);
			break;
		}
	}
	fclose(f);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

/* Records of buf: spans ending after a "%" line (separator included) or at the end.
 * by_lines: every line is a record. Empty records / bare separators are skipped.
 * *out malloc'd. */
static int find_records(const unsigned char *buf, size_t len, int by_lines, struct span **out,
			size_t *n)
{
	size_t cap = 1024, cnt = 0, start = 0, i = 0;
	struct span *s = malloc(cap * sizeof *s);
	if (!s)
		return ocb_seterr(OCB_ENOMEM, "text: out of memory");
	while (i < len) {
		/* the line [i, e) including its '\n' when present */
		const unsigned char *nl = memchr(buf + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - buf) + 1 : len;
		size_t body = e - i - (nl ? 1 : 0);
		if (body > 0 && buf[i + body - 1] == '\r')
			body--;
		int sep = !by_lines && body == 1 && buf[i] == '%';
		int is_end = by_lines || sep || e == len;
		if (is_end) {
			/* a record with nothing but its separator is not a record */
			int empty = (sep && i == start) || (by_lines && body == 0);
			if (!empty && e > start) {
				if (cnt == cap) {
					struct span *p = realloc(s, 2 * cap * sizeof *s);
					if (!p) {
						free(s);
						return ocb_seterr(OCB_ENOMEM, "text: out of memory");
					}
					s = p;
					cap *= 2;
				}
				s[cnt].at = start;
				s[cnt].len = e - start;
				cnt++;
			}
			start = e;
		}
		i = e;
	}
	*out = s;
	*n = cnt;
	return OCB_OK;
}

int ocb_text_split(const unsigned char *buf, size_t len, const char *name, struct ocb_text *t)
{
	struct span *rec = NULL;
	size_t nrec = 0;
	int rc;

	memset(t, 0, sizeof *t);
	rc = find_records(buf, len, 0, &rec, &nrec);
	if (rc)
		goto out;
	if (nrec < VAL_EVERY) { /* not a %-separated file: records are lines */
		free(rec);
		rec = NULL;
		rc = find_records(buf, len, 1, &rec, &nrec);
		if (rc)
			goto out;
	}
	if (nrec < VAL_EVERY) {
		rc = ocb_seterr(OCB_EINVAL, "%s: only %zu records (need >= %d for a train/val split)",
				name, nrec, VAL_EVERY);
		goto out;
	}
	size_t ntr = 0, nva = 0;
	for (size_t r = 0; r < nrec; r++) {
		if (r % VAL_EVERY == VAL_EVERY - 1)
			nva += rec[r].len;
		else
			ntr += rec[r].len;
	}
	size_t tr_cap = ocb_round_up(ntr, OCB_ALIGN);
	t->block = ocb_alloc(tr_cap + nva);
	if (!t->block) {
		rc = OCB_ENOMEM;
		goto out;
	}
	t->train = t->block;
	t->val = (unsigned char *)t->block + tr_cap;
	for (size_t r = 0; r < nrec; r++) {
		if (r % VAL_EVERY == VAL_EVERY - 1) {
			memcpy(t->val + t->nval, buf + rec[r].at, rec[r].len);
			t->nval += rec[r].len;
			t->nval_records++;
		} else {
			memcpy(t->train + t->ntrain, buf + rec[r].at, rec[r].len);
			t->ntrain += rec[r].len;
			t->ntrain_records++;
		}
	}
	snprintf(t->source, sizeof t->source, "%s", name);
out:
	free(rec);
	if (rc)
		ocb_text_release(t);
	return rc;
}

/* The names of the text files in directory `path` (not hidden, not fortune's .dat/.u8
 * indexes), sorted by strcmp. *names (nnames strings) is the caller's to free, also on
 * failure. */
static int list_text_names(const char *path, char ***names, size_t *nnames)
{
	DIR *d = opendir(path);
	size_t ncap = 0;
	int rc = OCB_OK;
	if (!d)
		return ocb_seterr(OCB_ENOENT, "%s: cannot open directory: %s", path, strerror(errno));
	for (struct dirent *e; (e = readdir(d));) {
		const char *n = e->d_name;
		if (n[0] == '.' || has_suffix(n, ".dat") || has_suffix(n, ".u8"))
			continue;
		if (*nnames == ncap) {
			ncap = ncap ? 2 * ncap : 64;
			char **p = realloc(*names, ncap * sizeof *p);
			if (!p) {
				rc = ocb_seterr(OCB_ENOMEM, "%s: out of memory", path);
				goto out;
			}
			*names = p;
		}
		if (!((*names)[*nnames] = strdup(n))) {
			rc = ocb_seterr(OCB_ENOMEM, "%s: out of memory", path);
			goto out;
		}
		(*nnames)++;
	}
	/* strcmp order, not readdir or locale order: the same corpus everywhere */
	if (*nnames)
		qsort(*names, *nnames, sizeof **names, by_name);
out:
	closedir(d);
	return rc;
}

/* Appends the regular files names[0..nnames) of directory `path` to buf (len/cap), each
 * ending in a newline; *nfiles counts them. */
static int read_text_files(const char *path, char *const *names, size_t nnames,
			   unsigned char **buf, size_t *len, size_t *cap, size_t *nfiles)
{
	struct stat st;
	char *full = malloc(strlen(path) + 258);
	int rc = OCB_OK;
	if (!full)
		return ocb_seterr(OCB_ENOMEM, "%s: out of memory", path);
	for (size_t i = 0; i < nnames; i++) {
		sprintf(full, "%s/%s", path, names[i]);
		if (stat(full, &st) != 0 || !S_ISREG(st.st_mode))
			continue; /* subdirectories (off/), dangling links */
		if ((rc = read_append(full, buf, len, cap)))
			break;
		/* a file that does not end its last line must not glue onto the next file */
		if (*len > 0 && (*buf)[*len - 1] != '\n') {
			if (*len == *cap) {
				unsigned char *p = realloc(*buf, *cap + 1);
				if (!p) {
					rc = ocb_seterr(OCB_ENOMEM, "%s: out of memory", path);
					break;
				}
				*buf = p;
				(*cap)++;
			}
			(*buf)[(*len)++] = '\n';
		}
		(*nfiles)++;
	}
	free(full);
	return rc;
}

int ocb_text_load(const char *path, struct ocb_text *t)
{
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, nfiles = 0, nnames = 0;
	char **names = NULL;
	struct stat st;
	int rc = OCB_OK;

	memset(t, 0, sizeof *t);
	if (!path)
		path = OCB_FORTUNES_DIR;
	if (stat(path, &st) != 0) {
		rc = ocb_seterr(OCB_ENOENT, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		rc = read_append(path, &buf, &len, &cap);
		nfiles = 1;
	} else if (!(rc = list_text_names(path, &names, &nnames)) &&
		   !(rc = read_text_files(path, names, nnames, &buf, &len, &cap, &nfiles)) &&
		   nfiles == 0) {
		rc = ocb_seterr(OCB_EINVAL, "%s: no text files (fortunes not installed?)", path);
	}
	if (rc)
		goto out;
	if (len == 0) {
		rc = ocb_seterr(OCB_EINVAL, "%s: empty corpus", path);
		goto out;
	}
	rc = ocb_text_split(buf, len, path, t);
	if (rc == OCB_OK)
		t->nfiles = nfiles;
out:
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	free(buf);
	return rc;
}

void ocb_text_release(struct ocb_text *t)
{
	if (!t)
		return;
	ocb_free(t->block);
	memset(t, 0, sizeof *t);
}

double ocb_text_unigram_entropy(const unsigned char *buf, size_t n)
{
	size_t cnt[256] = {0};
	for (size_t i = 0; i < n; i++)
		cnt[buf[i]]++;
	double h = 0.0;
	for (int c = 0; c < 256; c++)
		if (cnt[c]) {
			double p = (double)cnt[c] / (double)n;
			h -= p * log(p);
		}
	return h;
}

double ocb_text_unigram_xent(const unsigned char *fit, size_t nfit, const unsigned char *eval,
			     size_t neval)
{
	double cnt[256];
	for (int c = 0; c < 256; c++)
		cnt[c] = 1.0; /* add-one smoothing */
	for (size_t i = 0; i < nfit; i++)
		cnt[fit[i]] += 1.0;
	double tot = (double)nfit + 256.0, s = 0.0;
	for (size_t i = 0; i < neval; i++)
		s -= log(cnt[eval[i]] / tot);
	return neval ? s / (double)neval : 0.0;
}
