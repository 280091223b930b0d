/* checkpoint: the versioned binary model file the fp32 baselines are saved in and the
 * quantized / ternary / sparse suites load from. One file = one model.
 *
 * Layout (all integers little-endian):
 *   magic      8 bytes  "OCBCKPT\0"
 *   version    u32      OCB_CKPT_VERSION; a file with a newer version is refused
 *   file_len   u64      total bytes of the file, checksum included
 *   kind       u32 length + bytes            model kind: "mlp", "lm", ...
 *   config     u64 length + bytes            canonical JSON (ocb_json_canonical) of the
 *                                            model configuration (dims, layers, ...)
 *   ntensors   u32
 *   tensor[i]  u32 name length + name, u32 dtype (enum ocb_dtype), u32 ndim (1..4),
 *              u64 shape[ndim], u64 offset (absolute, 64-byte aligned), u64 nbytes
 *   zero padding to 64 bytes, then each tensor's raw data at its offset (64-aligned,
 *              zero padding between)
 *   crc32      u32      zlib crc32 of every byte before it
 *
 * Save writes PATH.tmp, fsyncs it and renames it over PATH: a reader never sees a half
 * file. Load reads the whole file, checks magic, version, length, checksum and the table,
 * and keeps the data in one 64-byte aligned allocation the tensors point into. */
#ifndef OCB_CHECKPOINT_H
#define OCB_CHECKPOINT_H

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>

#define OCB_CKPT_MAGIC "OCBCKPT" /* + the terminating NUL: 8 bytes */
#define OCB_CKPT_VERSION 1u
#define OCB_CKPT_MAXDIM 4

enum ocb_dtype {
	OCB_DT_F32 = 0,
	OCB_DT_F16 = 1, /* IEEE half, stored as raw u16 */
	OCB_DT_I8 = 2,
	OCB_DT_U8 = 3,  /* also: packed blocks of quantized formats (shape in bytes) */
	OCB_DT_I32 = 4,
};

/* Bytes per element of a dtype, 0 for an unknown one. */
size_t ocb_dtype_size(enum ocb_dtype dt);
const char *ocb_dtype_name(enum ocb_dtype dt);

struct ocb_ckpt_tensor {
	const char *name;   /* unique within the file, <= 255 bytes */
	enum ocb_dtype dtype;
	int ndim;           /* 1..OCB_CKPT_MAXDIM */
	int64_t shape[OCB_CKPT_MAXDIM];
	const void *data;   /* save: borrowed, prod(shape) * dtype_size bytes;
			       load: view into the checkpoint's data block */
	uint64_t offset;    /* load: absolute file offset of the data */
	uint64_t nbytes;    /* load: bytes of data */
};

/* A loaded checkpoint. Owns everything it points to; free with ocb_ckpt_free(). */
struct ocb_ckpt {
	char *path;          /* for error messages */
	uint32_t version;
	char *kind;
	char *config_json;   /* canonical text as stored */
	cJSON *config;       /* parsed config_json */
	struct ocb_ckpt_tensor *tensors;
	size_t ntensors;
	void *blob;          /* the whole file (ocb_alloc); tensor data points into it */
	size_t blob_len;
};

/* Writes a checkpoint of `kind` with `config` (may be NULL: stored as {}) and tensors
 * t[0..n). Atomic: PATH.tmp + fsync + rename; on failure PATH is untouched and the tmp
 * file removed. Errors: OCB_EINVAL (bad tensor: empty name, duplicate name, ndim,
 * negative dim, unknown dtype, NULL data), OCB_EPERM/OCB_EIO naming the path. */
int ocb_ckpt_save(const char *path, const char *kind, const cJSON *config,
		  const struct ocb_ckpt_tensor *t, size_t n);

/* Loads `path`. On success *out is the caller's (ocb_ckpt_free). Errors, each with a
 * one-line detail naming the file: OCB_ENOENT (cannot open), OCB_EFORMAT for: not an
 * ocbench checkpoint (bad magic), newer version, truncated (expected N bytes, got M),
 * trailing bytes, checksum mismatch, malformed header/table/config. *out NULL then. */
int ocb_ckpt_load(const char *path, struct ocb_ckpt **out);

/* OCB_EFORMAT "PATH: model kind 'x', expected 'y'" unless the kinds match. */
int ocb_ckpt_expect_kind(const struct ocb_ckpt *c, const char *kind);

/* The tensor named `name`, or NULL. Borrowed from c. */
const struct ocb_ckpt_tensor *ocb_ckpt_find(const struct ocb_ckpt *c, const char *name);

/* Copies tensor `name` into dst after checking it exists (else OCB_EFORMAT "PATH: no
 * tensor 'name'") with exactly this dtype and shape (else OCB_EFORMAT "PATH: tensor 'name'
 * has shape [a,b] f32, expected [c,d] f32"). dst holds prod(shape) elements. */
int ocb_ckpt_read_tensor(const struct ocb_ckpt *c, const char *name, enum ocb_dtype dtype,
			 int ndim, const int64_t *shape, void *dst);

/* Frees c and everything it owns; NULL is a no-op. */
void ocb_ckpt_free(struct ocb_ckpt *c);

#endif
