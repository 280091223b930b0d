/* gguf: reads the header, the typed key-values and the tensor table of a GGUF file
 * (ggml's model file, version 3; REFERENCE.md §4, ggml docs/gguf.md), never the tensor
 * data, and writes small GGUF files (tests, exports).
 *
 * Layout (little-endian):
 *   "GGUF" | u32 version (3) | u64 n_tensors | u64 n_kv
 *   n_kv x { string key | u32 type | value }        string = u64 length + bytes
 *     type: 0 u8, 1 i8, 2 u16, 3 i16, 4 u32, 5 i32, 6 f32, 7 bool, 8 string,
 *           9 array (u32 elem type, u64 count, values), 10 u64, 11 i64, 12 f64
 *   n_tensors x { string name | u32 n_dims (1..4) | u64 ne[n_dims] (innermost first) |
 *                 u32 ggml type | u64 offset (relative to the data section) }
 *   padding to `general.alignment` (u32, a power of two; default 32), the data section.
 *
 * The reader is bounded: every read is checked against the file's size first, every
 * count against the bytes that could hold it, so a truncated or hostile file is one
 * OCB_EFORMAT line ("PATH: truncated in tensor info 3 (offset 412 of 400 bytes)") and
 * nothing past the end is read or allocated for. A tensor's data must lie inside the
 * file (offset aligned, offset + bytes <= data size).
 *
 * Ownership: struct gguf_file owns every string and array it points to; gguf_free. */
#ifndef OCB_GGUF_H
#define OCB_GGUF_H

#include <stddef.h>
#include <stdint.h>

#define GGUF_MAGIC "GGUF"
#define GGUF_VERSION 3u
#define GGUF_MAXDIMS 4
#define GGUF_DEFAULT_ALIGNMENT 32u

enum gguf_vtype {
	GGUF_U8 = 0, GGUF_I8, GGUF_U16, GGUF_I16, GGUF_U32, GGUF_I32, GGUF_F32, GGUF_BOOL,
	GGUF_STRING, GGUF_ARRAY, GGUF_U64, GGUF_I64, GGUF_F64, GGUF_NVTYPES
};

/* ggml type ids (ggml.h enum ggml_type) that ocbench names. */
enum ggml_type_id {
	GGML_F32 = 0, GGML_F16 = 1, GGML_Q4_0 = 2, GGML_Q4_1 = 3, GGML_Q5_0 = 6,
	GGML_Q5_1 = 7, GGML_Q8_0 = 8, GGML_Q8_1 = 9, GGML_Q2_K = 10, GGML_Q6_K = 14,
	GGML_BF16 = 30, GGML_TQ1_0 = 34, GGML_TQ2_0 = 35,
};

/* A ggml type's name ("q4_0"), elements per block and bytes per block; NULL / 0 for an
 * id that is not a (current) ggml type. */
const char *ggml_type_name(uint32_t type);
int ggml_type_block(uint32_t type);
size_t ggml_type_block_bytes(uint32_t type);
/* The id of a name ("q8_0", case-insensitive), or -1. */
int ggml_type_find(const char *name);

struct gguf_kv {
	char *key;
	uint32_t type;       /* enum gguf_vtype */
	/* scalars: the value in the member of its kind; bool in u */
	uint64_t u;
	int64_t i;
	double f;
	char *str;           /* GGUF_STRING */
	uint32_t arr_type;   /* GGUF_ARRAY: element type and count (values are skipped) */
	uint64_t arr_n;
};

struct gguf_tensor_info {
	char *name;
	uint32_t n_dims;
	uint64_t ne[GGUF_MAXDIMS]; /* innermost first; unused dims 1 */
	uint32_t type;             /* ggml type id */
	uint64_t offset;           /* relative to the data section */
	uint64_t nbytes;           /* from the type's block size */
	uint64_t nelem;
};

struct gguf_file {
	char *path;
	uint32_t version;
	uint64_t n_kv, n_tensors;
	struct gguf_kv *kv;            /* [n_kv] */
	struct gguf_tensor_info *t;    /* [n_tensors] */
	uint64_t alignment;
	uint64_t data_offset;          /* absolute start of the data section */
	uint64_t file_size;
};

/* Reads `path`'s header, key-values and tensor table. On OCB_OK *out is the caller's
 * (gguf_free). OCB_ENOENT (cannot open), OCB_EFORMAT (one line naming the file: wrong
 * magic, version, truncated in a named section, absurd count or length, unknown value or
 * ggml type, bad alignment, tensor data outside the file), OCB_ENOMEM. */
int gguf_read(const char *path, struct gguf_file **out);
void gguf_free(struct gguf_file *g); /* NULL is a no-op */

/* The key-value named `key`, or NULL. */
const struct gguf_kv *gguf_find_kv(const struct gguf_file *g, const char *key);
/* An integer key (any integer type, or bool) into *v: OCB_OK, OCB_ENOENT if absent,
 * OCB_EFORMAT if not an integer. */
int gguf_get_int(const struct gguf_file *g, const char *key, int64_t *v);
/* A string key, or NULL. Borrowed. */
const char *gguf_get_str(const struct gguf_file *g, const char *key);
/* The tensor named `name`, or NULL. */
const struct gguf_tensor_info *gguf_find_tensor(const struct gguf_file *g, const char *name);
/* "u32", "string", ... (NULL for unknown). */
const char *gguf_vtype_name(uint32_t t);

/* ---- writer ---- */

struct gguf_writer; /* opaque, built in memory, written at once */

struct gguf_writer *gguf_writer_new(void); /* NULL on no memory */
void gguf_writer_free(struct gguf_writer *w);
/* Key-values, in call order. Each returns OCB_OK or OCB_ENOMEM. */
int gguf_writer_u32(struct gguf_writer *w, const char *key, uint32_t v);
int gguf_writer_f32(struct gguf_writer *w, const char *key, float v);
int gguf_writer_str(struct gguf_writer *w, const char *key, const char *v);
/* A tensor of ggml `type` with ne[0..n_dims) (innermost first) and its packed bytes
 * (copied; exactly the type's size for that shape, else OCB_EINVAL). */
int gguf_writer_tensor(struct gguf_writer *w, const char *name, uint32_t type, int n_dims,
		       const uint64_t *ne, const void *data, size_t nbytes);
/* Writes the file (alignment GGUF_DEFAULT_ALIGNMENT, or general.alignment if set with
 * gguf_writer_u32). OCB_EPERM / OCB_EIO naming the path. */
int gguf_writer_save(struct gguf_writer *w, const char *path);

#endif
