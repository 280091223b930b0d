#include "data_synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "data_idx.h"

#define NCLASS 10
#define SIDE 28
#define DIM (SIDE * SIDE)

/* n examples of the classes' prototypes plus noise into pix[n][DIM], lab[n]. */
static void synth_images(struct ocb_rng *r, const uint8_t *proto, int n, uint8_t *pix,
			 uint8_t *lab)
{
	for (int i = 0; i < n; i++) {
		int c = (int)ocb_rng_below(r, NCLASS);
		lab[i] = (uint8_t)c;
		for (int k = 0; k < DIM; k++) {
			/* 60% prototype, 40% uniform noise: separable, not trivially so */
			float v = 0.6f * proto[c * DIM + k] + 0.4f * 255.0f * ocb_rng_uniformf(r);
			pix[(size_t)i * DIM + k] = (uint8_t)(v > 255.0f ? 255.0f : v);
		}
	}
}

static int write_split(const char *dir, const char *pre, struct ocb_rng *r, const uint8_t *proto,
		       int n)
{
	char ip[4096], lp[4096];
	uint8_t *pix = NULL, *lab = NULL;
	int rc = OCB_OK;
	snprintf(ip, sizeof ip, "%s/%s-images-idx3-ubyte.gz", dir, pre);
	snprintf(lp, sizeof lp, "%s/%s-labels-idx1-ubyte.gz", dir, pre);
	pix = malloc((size_t)n * DIM);
	lab = malloc((size_t)n);
	if (!pix || !lab) {
		rc = ocb_seterr(OCB_ENOMEM, "synthetic images: out of memory");
		goto out;
	}
	synth_images(r, proto, n, pix, lab);
	uint32_t di[3] = {(uint32_t)n, SIDE, SIDE}, dl[1] = {(uint32_t)n};
	rc = ocb_idx_write_gz(ip, OCB_IDX_MAGIC_IMAGES, 3, di, pix, (size_t)n * DIM);
	if (rc == OCB_OK)
		rc = ocb_idx_write_gz(lp, OCB_IDX_MAGIC_LABELS, 1, dl, lab, (size_t)n);
out:
	free(pix);
	free(lab);
	return rc;
}

int ocb_synth_fmnist_write(const char *dir, int ntrain, int ntest, uint64_t seed)
{
	uint8_t proto[NCLASS * DIM];
	struct ocb_rng r;
	if (ntrain <= 0 || ntest <= 0)
		return ocb_seterr(OCB_EINVAL, "synthetic images: need ntrain, ntest > 0");
	ocb_rng_seed(&r, seed);
	for (int k = 0; k < NCLASS * DIM; k++)
		proto[k] = (uint8_t)ocb_rng_below(&r, 256);
	int rc = write_split(dir, "train", &r, proto, ntrain);
	if (rc == OCB_OK)
		rc = write_split(dir, "t10k", &r, proto, ntest);
	return rc;
}

int ocb_synth_text(uint64_t seed, size_t nrecords, unsigned char **out, size_t *len)
{
	static const char *const words[] = {
		"the", "a", "of", "and", "to", "in", "is", "you", "that", "it", "he", "was",
		"for", "on", "are", "as", "with", "his", "they", "at", "be", "this", "have",
		"from", "or", "one", "had", "by", "word", "but", "not", "what", "all", "were",
		"we", "when", "your", "can", "said", "there", "use", "an", "each", "which",
		"she", "do", "how", "their", "if", "will", "up", "other", "about", "out",
		"many", "then", "them", "these", "so", "some", "her", "would", "make", "like",
	};
	const size_t nw = sizeof words / sizeof words[0];
	struct ocb_rng r;
	size_t cap = 4096, n = 0;
	unsigned char *b = NULL;

	*out = NULL;
	*len = 0;
	if (nrecords == 0)
		return ocb_seterr(OCB_EINVAL, "synthetic text: no records");
	b = malloc(cap);
	if (!b)
		return ocb_seterr(OCB_ENOMEM, "synthetic text: out of memory");
	ocb_rng_seed(&r, seed);
	for (size_t rec = 0; rec < nrecords; rec++) {
		int lines = 1 + (int)ocb_rng_below(&r, 4);
		for (int l = 0; l < lines; l++) {
			int nwords = 3 + (int)ocb_rng_below(&r, 8);
			for (int w = 0; w < nwords; w++) {
				/* skewed: the min of two uniform draws favours early words */
				size_t a = ocb_rng_below(&r, nw), c = ocb_rng_below(&r, nw);
				const char *word = words[a < c ? a : c];
				size_t wl = strlen(word);
				if (n + wl + 8 > cap) {
					unsigned char *p = realloc(b, cap * 2);
					if (!p) {
						free(b);
						return ocb_seterr(OCB_ENOMEM, "synthetic text: out of memory");
					}
					b = p;
					cap *= 2;
				}
				memcpy(b + n, word, wl);
				if (w == 0 && l == 0) /* capitalise the record's first word */
					b[n] = (unsigned char)(b[n] - 'a' + 'A');
				n += wl;
				b[n++] = w + 1 < nwords ? ' ' : (l + 1 < lines ? '\n' : '.');
			}
		}
		b[n++] = '\n';
		b[n++] = '%';
		b[n++] = '\n';
	}
	*out = b;
	*len = n;
	return OCB_OK;
}
