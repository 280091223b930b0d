/* data_idx: IDX files (LeCun & Cortes, "THE MNIST DATABASE", file format section), gzip'd
 * or plain, read with zlib — Fashion-MNIST (Xiao, Rasul & Vollgraf 2017) by default.
 *
 * IDX: big-endian u32 magic 0x00000803 (u8, 3 dims: images) or 0x00000801 (u8, 1 dim:
 * labels), the dims as big-endian u32, then the u8 payload, nothing after it.
 * The loader checks magic, dims, counts (images == labels), exact payload length
 * (truncated / trailing bytes) and labels in 0..nclasses-1; every refusal is OCB_EFORMAT
 * with one line naming the file and what is wrong.
 *
 * A set keeps the pixels as u8 (47 MB for the 60k train set instead of 188 MB as floats)
 * in one allocation; ocb_idx_gather() converts a mini-batch to floats on the fly. */
#ifndef OCB_DATA_IDX_H
#define OCB_DATA_IDX_H

#include <stddef.h>
#include <stdint.h>

#define OCB_FMNIST_DIR "/usr/share/datasets/fashion-mnist"
#define OCB_IDX_MAGIC_IMAGES 0x00000803u
#define OCB_IDX_MAGIC_LABELS 0x00000801u

struct ocb_idx_set {
	int n;           /* examples */
	int rows, cols;  /* image size; dim = rows * cols */
	int dim;
	int nclasses;
	uint8_t *pixels; /* [n][dim], view into block */
	uint8_t *labels; /* [n], view into block */
	float mean, std; /* gather: x = (p / 255 - mean) / std; default 0, 1 -> [0, 1] */
	void *block;
};

/* Loads images + labels. rows/cols: required image size, 0 = any. nclasses: labels must
 * be < nclasses. Errors: OCB_ENOENT (cannot open, naming the file), OCB_EFORMAT (see
 * above), OCB_ENOMEM. On failure *s holds nothing. */
int ocb_idx_load(const char *images_path, const char *labels_path, int rows, int cols,
		 int nclasses, struct ocb_idx_set *s);

/* Fashion-MNIST split from `dir` (NULL: OCB_FMNIST_DIR): train != 0 -> the
 * train-{images-idx3,labels-idx1}-ubyte.gz files, else t10k-*. 28x28, 10 classes. */
int ocb_fmnist_load(const char *dir, int train, struct ocb_idx_set *s);

/* Sets mean/std from the set's own pixels (in [0,1] units), so gather standardises. */
void ocb_idx_standardize(struct ocb_idx_set *s);

/* x[i][dim] = normalised pixels of example idx[i], y[i] = its label, i < n.
 * idx NULL: examples first..first+n-1 (pass idx == NULL and first via `first`). */
void ocb_idx_gather(const struct ocb_idx_set *s, const int *idx, int first, int n, float *x,
		    int *y);

/* Frees the set; NULL-safe, idempotent. */
void ocb_idx_release(struct ocb_idx_set *s);

/* Writes an IDX file gzip'd at `path` (tests, synthetic data): magic, ndims dims, then
 * exactly `nbytes` payload bytes (which need not match the dims: tests write bad files).
 * Errors: OCB_EPERM/OCB_EIO naming the path. */
int ocb_idx_write_gz(const char *path, uint32_t magic, int ndims, const uint32_t *dims,
		     const void *payload, size_t nbytes);

#endif
