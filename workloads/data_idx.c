#include "data_idx.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"

#define MAX_EXAMPLES 10000000u /* sanity cap against a corrupt header */

/* Reads exactly n bytes or fails: OCB_EFORMAT for a short stream or a broken gzip. */
static int gz_exact(gzFile g, const char *path, void *dst, size_t n, size_t *got, int *zerr)
{
	size_t at = 0;
	*zerr = 0;
	while (at < n) {
		unsigned chunk = n - at > (1u << 30) ? (1u << 30) : (unsigned)(n - at);
		int k = gzread(g, (char *)dst + at, chunk);
		if (k < 0) {
			int e;
			const char *msg = gzerror(g, &e);
			*got = at;
			*zerr = 1;
			return ocb_seterr(OCB_EFORMAT, "%s: corrupt gzip stream after %zu bytes: %s",
					  path, at, msg);
		}
		if (k == 0)
			break;
		at += (size_t)k;
	}
	*got = at;
	return OCB_OK;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Opens `path`, checks magic and reads ndims dims. *g left open on success. */
static int open_idx(const char *path, uint32_t magic, int ndims, uint32_t *dims, gzFile *g)
{
	unsigned char hdr[16];
	size_t got = 0;
	int zerr, rc;
	FILE *probe = fopen(path, "rb"); /* gzopen's errors are vague: probe for ENOENT */
	if (!probe)
		return ocb_seterr(OCB_ENOENT, "%s: cannot open: %s", path, strerror(errno));
	fclose(probe);
	*g = gzopen(path, "rb");
	if (!*g)
		return ocb_seterr(OCB_ENOENT, "%s: cannot open", path);
	size_t want = 4 + 4 * (size_t)ndims;
	rc = gz_exact(*g, path, hdr, want, &got, &zerr);
	if (rc == OCB_OK && got < 4)
		rc = ocb_seterr(OCB_EFORMAT, "%s: truncated: expected a %zu-byte IDX header, got %zu",
				path, want, got);
	if (rc == OCB_OK && be32(hdr) != magic)
		rc = ocb_seterr(OCB_EFORMAT, "%s: bad IDX magic 0x%08x, expected 0x%08x (%s)", path,
				be32(hdr), magic, magic == OCB_IDX_MAGIC_IMAGES ? "images" : "labels");
	if (rc == OCB_OK && got < want)
		rc = ocb_seterr(OCB_EFORMAT, "%s: truncated: expected a %zu-byte IDX header, got %zu",
				path, want, got);
	if (rc) {
		gzclose(*g);
		*g = NULL;
		return rc;
	}
	for (int d = 0; d < ndims; d++)
		dims[d] = be32(hdr + 4 + 4 * d);
	return OCB_OK;
}

/* Reads exactly n payload bytes and checks nothing follows. */
static int read_payload(gzFile g, const char *path, size_t hdr, void *dst, size_t n)
{
	size_t got = 0;
	int zerr;
	int rc = gz_exact(g, path, dst, n, &got, &zerr);
	if (rc)
		return rc;
	if (got < n)
		return ocb_seterr(OCB_EFORMAT, "%s: truncated: expected %zu bytes, got %zu", path,
				  hdr + n, hdr + got);
	unsigned char extra[256];
	int k = gzread(g, extra, sizeof extra);
	if (k < 0) {
		int e;
		return ocb_seterr(OCB_EFORMAT, "%s: corrupt gzip stream at the end: %s", path,
				  gzerror(g, &e));
	}
	if (k > 0)
		return ocb_seterr(OCB_EFORMAT, "%s: trailing bytes after the expected %zu bytes",
				  path, hdr + n);
	return OCB_OK;
}

int ocb_idx_load(const char *images_path, const char *labels_path, int rows, int cols,
		 int nclasses, struct ocb_idx_set *s)
{
	gzFile gi = NULL, gl = NULL;
	uint32_t di[3], dl[1];
	int rc;

	memset(s, 0, sizeof *s);
	rc = open_idx(images_path, OCB_IDX_MAGIC_IMAGES, 3, di, &gi);
	if (rc)
		goto out;
	rc = open_idx(labels_path, OCB_IDX_MAGIC_LABELS, 1, dl, &gl);
	if (rc)
		goto out;
	if (di[0] == 0 || di[0] > MAX_EXAMPLES || di[1] == 0 || di[2] == 0 || di[1] > 4096 ||
	    di[2] > 4096) {
		rc = ocb_seterr(OCB_EFORMAT, "%s: implausible IDX dims %ux%ux%u", images_path, di[0],
				di[1], di[2]);
		goto out;
	}
	if ((rows && di[1] != (uint32_t)rows) || (cols && di[2] != (uint32_t)cols)) {
		rc = ocb_seterr(OCB_EFORMAT, "%s: images are %ux%u, expected %dx%d", images_path,
				di[1], di[2], rows, cols);
		goto out;
	}
	if (dl[0] != di[0]) {
		rc = ocb_seterr(OCB_EFORMAT, "%s: %u labels for %u images in %s", labels_path, dl[0],
				di[0], images_path);
		goto out;
	}
	s->n = (int)di[0];
	s->rows = (int)di[1];
	s->cols = (int)di[2];
	s->dim = s->rows * s->cols;
	s->nclasses = nclasses;
	s->std = 1.0f;
	size_t npix = (size_t)s->n * s->dim, pcap = ocb_round_up(npix, OCB_ALIGN);
	s->block = ocb_alloc(pcap + (size_t)s->n);
	if (!s->block) {
		rc = OCB_ENOMEM;
		goto out;
	}
	s->pixels = s->block;
	s->labels = (uint8_t *)s->block + pcap;
	rc = read_payload(gi, images_path, 16, s->pixels, npix);
	if (rc)
		goto out;
	rc = read_payload(gl, labels_path, 8, s->labels, (size_t)s->n);
	if (rc)
		goto out;
	for (int i = 0; i < s->n; i++)
		if (s->labels[i] >= nclasses) {
			rc = ocb_seterr(OCB_EFORMAT, "%s: label %u of example %d not in 0..%d",
					labels_path, s->labels[i], i, nclasses - 1);
			goto out;
		}
out:
	if (gi)
		gzclose(gi);
	if (gl)
		gzclose(gl);
	if (rc)
		ocb_idx_release(s);
	return rc;
}

int ocb_fmnist_load(const char *dir, int train, struct ocb_idx_set *s)
{
	char ip[4096], lp[4096];
	const char *pre = train ? "train" : "t10k";
	if (!dir)
		dir = OCB_FMNIST_DIR;
	if ((size_t)snprintf(ip, sizeof ip, "%s/%s-images-idx3-ubyte.gz", dir, pre) >= sizeof ip ||
	    (size_t)snprintf(lp, sizeof lp, "%s/%s-labels-idx1-ubyte.gz", dir, pre) >= sizeof lp) {
		memset(s, 0, sizeof *s);
		return ocb_seterr(OCB_EINVAL, "%s: data directory path too long", dir);
	}
	return ocb_idx_load(ip, lp, 28, 28, 10, s);
}

void ocb_idx_standardize(struct ocb_idx_set *s)
{
	/* in double, in index order: deterministic */
	double sum = 0.0, sq = 0.0;
	size_t n = (size_t)s->n * s->dim;
	for (size_t i = 0; i < n; i++) {
		double v = s->pixels[i] / 255.0;
		sum += v;
		sq += v * v;
	}
	double mean = n ? sum / n : 0.0, var = n ? sq / n - mean * mean : 1.0;
	s->mean = (float)mean;
	s->std = var > 1e-12 ? (float)sqrt(var) : 1.0f;
}

void ocb_idx_gather(const struct ocb_idx_set *s, const int *idx, int first, int n, float *x,
		    int *y)
{
	/* a 256-entry table: one load per pixel, no division in the loop */
	float lut[256];
	for (int v = 0; v < 256; v++)
		lut[v] = ((float)v / 255.0f - s->mean) / s->std;
	for (int i = 0; i < n; i++) {
		int e = idx ? idx[i] : first + i;
		const uint8_t *p = s->pixels + (size_t)e * s->dim;
		float *xi = x + (size_t)i * s->dim;
		for (int k = 0; k < s->dim; k++)
			xi[k] = lut[p[k]];
		if (y)
			y[i] = s->labels[e];
	}
}

void ocb_idx_release(struct ocb_idx_set *s)
{
	if (!s)
		return;
	ocb_free(s->block);
	memset(s, 0, sizeof *s);
}

int ocb_idx_write_gz(const char *path, uint32_t magic, int ndims, const uint32_t *dims,
		     const void *payload, size_t nbytes)
{
	unsigned char hdr[4 + 4 * 4];
	if (ndims < 1 || ndims > 4)
		return ocb_seterr(OCB_EINVAL, "%s: IDX ndims %d not in 1..4", path, ndims);
	gzFile g = gzopen(path, "wb");
	if (!g)
		return ocb_seterr(errno == EACCES ? OCB_EPERM : OCB_EIO, "%s: cannot create: %s",
				  path, strerror(errno));
	uint32_t v[5];
	v[0] = magic;
	for (int d = 0; d < ndims; d++)
		v[d + 1] = dims[d];
	for (int i = 0; i <= ndims; i++) {
		hdr[4 * i] = (unsigned char)(v[i] >> 24);
		hdr[4 * i + 1] = (unsigned char)(v[i] >> 16);
		hdr[4 * i + 2] = (unsigned char)(v[i] >> 8);
		hdr[4 * i + 3] = (unsigned char)v[i];
	}
	int bad = gzwrite(g, hdr, 4u * (unsigned)(ndims + 1)) != (int)(4 * (ndims + 1));
	size_t at = 0;
	while (!bad && at < nbytes) {
		unsigned k = nbytes - at > (1u << 30) ? (1u << 30) : (unsigned)(nbytes - at);
		bad = gzwrite(g, (const char *)payload + at, k) != (int)k;
		at += k;
	}
	if (gzclose(g) != Z_OK)
		bad = 1;
	if (bad)
		return ocb_seterr(OCB_EIO, "%s: write failed", path);
	return OCB_OK;
}
