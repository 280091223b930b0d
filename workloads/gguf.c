/* gguf: the bounded GGUF reader (see gguf.h). Facts from ggml's docs/gguf.md and
 * ggml.h / ggml-common.h (type ids, block sizes); the code is ours. */
#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../common/ocb_error.h"

/* ---- ggml types: block elements and bytes (ggml-common.h static_asserts) ---- */

struct ggml_tinfo {
	const char *name;
	int block;
	size_t bytes;
};

/* Indexed by id; {NULL, 0, 0}: removed (4, 5, 31..33, 36..38) or unknown. */
static const struct ggml_tinfo ggml_types[] = {
	[0] = {"f32", 1, 4},         [1] = {"f16", 1, 2},         [2] = {"q4_0", 32, 18},
	[3] = {"q4_1", 32, 20},      [6] = {"q5_0", 32, 22},      [7] = {"q5_1", 32, 24},
	[8] = {"q8_0", 32, 34},      [9] = {"q8_1", 32, 36},      [10] = {"q2_k", 256, 84},
	[11] = {"q3_k", 256, 110},   [12] = {"q4_k", 256, 144},   [13] = {"q5_k", 256, 176},
	[14] = {"q6_k", 256, 210},   [15] = {"q8_k", 256, 292},   [16] = {"iq2_xxs", 256, 66},
	[17] = {"iq2_xs", 256, 74},  [18] = {"iq3_xxs", 256, 98}, [19] = {"iq1_s", 256, 50},
	[20] = {"iq4_nl", 32, 18},   [21] = {"iq3_s", 256, 110},  [22] = {"iq2_s", 256, 82},
	[23] = {"iq4_xs", 256, 136}, [24] = {"i8", 1, 1},         [25] = {"i16", 1, 2},
	[26] = {"i32", 1, 4},        [27] = {"i64", 1, 8},        [28] = {"f64", 1, 8},
	[29] = {"iq1_m", 256, 56},   [30] = {"bf16", 1, 2},       [34] = {"tq1_0", 256, 54},
	[35] = {"tq2_0", 256, 66},   [39] = {"mxfp4", 32, 17},
};
#define NGGML (sizeof ggml_types / sizeof ggml_types[0])

const char *ggml_type_name(uint32_t type)
{
	return type < NGGML ? ggml_types[type].name : NULL;
}

int ggml_type_block(uint32_t type)
{
	return type < NGGML ? ggml_types[type].block : 0;
}

size_t ggml_type_block_bytes(uint32_t type)
{
	return type < NGGML ? ggml_types[type].bytes : 0;
}

int ggml_type_find(const char *name)
{
	for (size_t i = 0; i < NGGML; i++)
		if (ggml_types[i].name && strcasecmp(ggml_types[i].name, name) == 0)
			return (int)i;
	return -1;
}

static const char *const vtype_names[GGUF_NVTYPES] = {
	"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64",
	"i64", "f64"};
static const unsigned vtype_size[GGUF_NVTYPES] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

const char *gguf_vtype_name(uint32_t t)
{
	return t < GGUF_NVTYPES ? vtype_names[t] : NULL;
}

/* ---- the bounded cursor ---- */

struct cur {
	FILE *f;
	const char *path;
	uint64_t pos, size;
	char section[80]; /* where we are, for messages */
};

static uint64_t left(const struct cur *c)
{
	return c->size - c->pos;
}

static int rd(struct cur *c, void *dst, uint64_t n)
{
	if (n > left(c))
		return ocb_seterr(OCB_EFORMAT, "%s: truncated in %s (%llu bytes needed at offset "
				  "%llu of %llu)", c->path, c->section, (unsigned long long)n,
				  (unsigned long long)c->pos, (unsigned long long)c->size);
	if (n && fread(dst, 1, (size_t)n, c->f) != n)
		return ocb_seterr(OCB_EIO, "%s: read error at offset %llu", c->path,
				  (unsigned long long)c->pos);
	c->pos += n;
	return OCB_OK;
}

static int skip(struct cur *c, uint64_t n)
{
	if (n > left(c))
		return rd(c, NULL, n); /* the truncation message */
	if (fseeko(c->f, (off_t)(c->pos + n), SEEK_SET) != 0)
		return ocb_seterr(OCB_EIO, "%s: seek error", c->path);
	c->pos += n;
	return OCB_OK;
}

/* Little-endian integers (the reader runs on little-endian x86-64 / arm64 only; the
 * memcpy keeps it free of alignment assumptions). */
static int rd_u32(struct cur *c, uint32_t *v)
{
	return rd(c, v, 4);
}

static int rd_u64(struct cur *c, uint64_t *v)
{
	return rd(c, v, 8);
}

/* A GGUF string: u64 length + bytes. out NULL: skipped. */
static int rd_str(struct cur *c, char **out)
{
	uint64_t n;
	int rc = rd_u64(c, &n);
	if (rc)
		return rc;
	if (n > left(c))
		return ocb_seterr(OCB_EFORMAT, "%s: string length %llu in %s exceeds the %llu "
				  "bytes left", c->path, (unsigned long long)n, c->section,
				  (unsigned long long)left(c));
	if (!out)
		return skip(c, n);
	char *s = malloc((size_t)n + 1);
	if (!s)
		return ocb_seterr(OCB_ENOMEM, "%s: string of %llu bytes", c->path,
				  (unsigned long long)n);
	rc = rd(c, s, n);
	if (rc) {
		free(s);
		return rc;
	}
	s[n] = '\0';
	*out = s;
	return OCB_OK;
}

/* Skips an array's values (nested arrays up to depth 4). */
static int skip_array(struct cur *c, uint32_t et, uint64_t n, int depth)
{
	if (et >= GGUF_NVTYPES)
		return ocb_seterr(OCB_EFORMAT, "%s: unknown array element type %u in %s",
				  c->path, et, c->section);
	if (vtype_size[et]) {
		if (n > left(c) / vtype_size[et])
			return ocb_seterr(OCB_EFORMAT, "%s: array of %llu %s in %s exceeds the "
					  "%llu bytes left", c->path, (unsigned long long)n,
					  vtype_names[et], c->section,
					  (unsigned long long)left(c));
		return skip(c, n * vtype_size[et]);
	}
	/* strings need >= 8 bytes each, arrays >= 12: an absurd count is caught here */
	if (n > left(c) / 8)
		return ocb_seterr(OCB_EFORMAT, "%s: array of %llu %s in %s exceeds the %llu bytes "
				  "left", c->path, (unsigned long long)n, vtype_names[et],
				  c->section, (unsigned long long)left(c));
	if (et == GGUF_ARRAY && depth >= 4)
		return ocb_seterr(OCB_EFORMAT, "%s: arrays nested deeper than 4 in %s", c->path,
				  c->section);
	for (uint64_t k = 0; k < n; k++) {
		int rc;
		if (et == GGUF_STRING) {
			rc = rd_str(c, NULL);
		} else {
			uint32_t t2;
			uint64_t n2;
			rc = rd_u32(c, &t2);
			if (!rc)
				rc = rd_u64(c, &n2);
			if (!rc)
				rc = skip_array(c, t2, n2, depth + 1);
		}
		if (rc)
			return rc;
	}
	return OCB_OK;
}

static int rd_value(struct cur *c, struct gguf_kv *kv)
{
	uint8_t b[8] = {0};
	int rc;

	switch (kv->type) {
	case GGUF_STRING:
		return rd_str(c, &kv->str);
	case GGUF_ARRAY:
		rc = rd_u32(c, &kv->arr_type);
		if (!rc)
			rc = rd_u64(c, &kv->arr_n);
		return rc ? rc : skip_array(c, kv->arr_type, kv->arr_n, 1);
	default:
		break;
	}
	if (kv->type >= GGUF_NVTYPES)
		return ocb_seterr(OCB_EFORMAT, "%s: unknown value type %u of key '%s'", c->path,
				  kv->type, kv->key);
	rc = rd(c, b, vtype_size[kv->type]);
	if (rc)
		return rc;
	switch (kv->type) {
	case GGUF_U8: case GGUF_BOOL: kv->u = b[0]; kv->i = b[0]; break;
	case GGUF_I8: kv->i = (int8_t)b[0]; break;
	case GGUF_U16: { uint16_t v; memcpy(&v, b, 2); kv->u = v; kv->i = v; break; }
	case GGUF_I16: { int16_t v; memcpy(&v, b, 2); kv->i = v; break; }
	case GGUF_U32: { uint32_t v; memcpy(&v, b, 4); kv->u = v; kv->i = v; break; }
	case GGUF_I32: { int32_t v; memcpy(&v, b, 4); kv->i = v; break; }
	case GGUF_F32: { float v; memcpy(&v, b, 4); kv->f = v; break; }
	case GGUF_U64: memcpy(&kv->u, b, 8); kv->i = (int64_t)kv->u; break;
	case GGUF_I64: memcpy(&kv->i, b, 8); break;
	case GGUF_F64: memcpy(&kv->f, b, 8); break;
	default: break;
	}
	if (kv->type != GGUF_U64 && kv->type != GGUF_F32 && kv->type != GGUF_F64 &&
	    kv->i >= 0)
		kv->u = (uint64_t)kv->i;
	return OCB_OK;
}

static int rd_header(struct cur *c, struct gguf_file *g)
{
	char magic[4];
	int rc;

	snprintf(c->section, sizeof c->section, "the header");
	if ((rc = rd(c, magic, 4)))
		return rc;
	if (memcmp(magic, GGUF_MAGIC, 4) != 0)
		return ocb_seterr(OCB_EFORMAT, "%s: not a GGUF file (magic %02x %02x %02x %02x, "
				  "expected 'GGUF')", c->path, (uint8_t)magic[0],
				  (uint8_t)magic[1], (uint8_t)magic[2], (uint8_t)magic[3]);
	if ((rc = rd_u32(c, &g->version)) || (rc = rd_u64(c, &g->n_tensors)) ||
	    (rc = rd_u64(c, &g->n_kv)))
		return rc;
	if (g->version != GGUF_VERSION)
		return ocb_seterr(OCB_EFORMAT, "%s: GGUF version %u, only version %u is read",
				  c->path, g->version, GGUF_VERSION);
	/* a key-value takes >= 13 bytes (8 key length + 4 type + 1), a tensor info >= 32 */
	if (g->n_kv > left(c) / 13)
		return ocb_seterr(OCB_EFORMAT, "%s: %llu key-values cannot fit in the %llu bytes "
				  "left", c->path, (unsigned long long)g->n_kv,
				  (unsigned long long)left(c));
	if (g->n_tensors > left(c) / 32)
		return ocb_seterr(OCB_EFORMAT, "%s: %llu tensors cannot fit in the %llu bytes "
				  "left", c->path, (unsigned long long)g->n_tensors,
				  (unsigned long long)left(c));
	return OCB_OK;
}

static int rd_kvs(struct cur *c, struct gguf_file *g)
{
	g->kv = calloc(g->n_kv ? g->n_kv : 1, sizeof *g->kv);
	if (!g->kv)
		return ocb_seterr(OCB_ENOMEM, "%s: %llu key-values", c->path,
				  (unsigned long long)g->n_kv);
	for (uint64_t k = 0; k < g->n_kv; k++) {
		struct gguf_kv *kv = &g->kv[k];
		int rc;
		snprintf(c->section, sizeof c->section, "key-value %llu", (unsigned long long)k);
		if ((rc = rd_str(c, &kv->key)) || (rc = rd_u32(c, &kv->type)))
			return rc;
		snprintf(c->section, sizeof c->section, "key-value %llu ('%.24s')",
			 (unsigned long long)k, kv->key);
		if ((rc = rd_value(c, kv)))
			return rc;
	}
	return OCB_OK;
}

/* Bytes of a tensor: blocks of its type along ne[0], times the other dims; checks
 * the type, the block multiple and overflow. */
static int tensor_bytes(struct cur *c, struct gguf_tensor_info *t)
{
	int blk = ggml_type_block(t->type);
	if (!blk)
		return ocb_seterr(OCB_EFORMAT, "%s: tensor '%s' has unknown ggml type id %u",
				  c->path, t->name, t->type);
	uint64_t n = 1;
	for (uint32_t d = 0; d < GGUF_MAXDIMS; d++) {
		if (t->ne[d] == 0 || t->ne[d] > (1ull << 40) || n > (1ull << 50) / t->ne[d])
			return ocb_seterr(OCB_EFORMAT, "%s: tensor '%s' has an absurd dimension "
					  "%llu", c->path, t->name, (unsigned long long)t->ne[d]);
		n *= t->ne[d];
	}
	if (t->ne[0] % (uint64_t)blk)
		return ocb_seterr(OCB_EFORMAT, "%s: tensor '%s': row of %llu is not a multiple "
				  "of the %s block (%d)", c->path, t->name,
				  (unsigned long long)t->ne[0], ggml_type_name(t->type), blk);
	t->nelem = n;
	t->nbytes = n / (uint64_t)blk * ggml_type_block_bytes(t->type);
	return OCB_OK;
}

static int rd_tensors(struct cur *c, struct gguf_file *g)
{
	g->t = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *g->t);
	if (!g->t)
		return ocb_seterr(OCB_ENOMEM, "%s: %llu tensors", c->path,
				  (unsigned long long)g->n_tensors);
	for (uint64_t k = 0; k < g->n_tensors; k++) {
		struct gguf_tensor_info *t = &g->t[k];
		int rc;
		snprintf(c->section, sizeof c->section, "tensor info %llu", (unsigned long long)k);
		if ((rc = rd_str(c, &t->name)) || (rc = rd_u32(c, &t->n_dims)))
			return rc;
		if (t->n_dims < 1 || t->n_dims > GGUF_MAXDIMS)
			return ocb_seterr(OCB_EFORMAT, "%s: tensor '%s' has %u dimensions (1..%d)",
					  c->path, t->name, t->n_dims, GGUF_MAXDIMS);
		for (uint32_t d = 0; d < GGUF_MAXDIMS; d++)
			t->ne[d] = 1;
		for (uint32_t d = 0; d < t->n_dims; d++)
			if ((rc = rd_u64(c, &t->ne[d])))
				return rc;
		if ((rc = rd_u32(c, &t->type)) || (rc = rd_u64(c, &t->offset)))
			return rc;
		if ((rc = tensor_bytes(c, t)))
			return rc;
	}
	return OCB_OK;
}

/* general.alignment, the data section, and every tensor's data inside the file. */
static int check_data(struct cur *c, struct gguf_file *g)
{
	const struct gguf_kv *a = gguf_find_kv(g, "general.alignment");
	g->alignment = GGUF_DEFAULT_ALIGNMENT;
	if (a) {
		if (a->type != GGUF_U32 || a->u == 0 || (a->u & (a->u - 1)))
			return ocb_seterr(OCB_EFORMAT, "%s: general.alignment must be a power of two "
					  "u32", c->path);
		g->alignment = a->u;
	}
	g->data_offset = (c->pos + g->alignment - 1) / g->alignment * g->alignment;
	uint64_t data = g->data_offset <= c->size ? c->size - g->data_offset : 0;
	for (uint64_t k = 0; k < g->n_tensors; k++) {
		const struct gguf_tensor_info *t = &g->t[k];
		if (t->offset % g->alignment)
			return ocb_seterr(OCB_EFORMAT, "%s: tensor '%s' offset %llu is not aligned to "
					  "%llu", c->path, t->name, (unsigned long long)t->offset,
					  (unsigned long long)g->alignment);
		if (t->offset > data || t->nbytes > data - t->offset)
			return ocb_seterr(OCB_EFORMAT, "%s: truncated in the data section: tensor "
					  "'%s' needs bytes [%llu, %llu) of a %llu-byte data section",
					  c->path, t->name, (unsigned long long)t->offset,
					  (unsigned long long)(t->offset + t->nbytes),
					  (unsigned long long)data);
	}
	return OCB_OK;
}

int gguf_read(const char *path, struct gguf_file **out)
{
	struct cur c = {.path = path};
	struct gguf_file *g = NULL;
	struct stat st;
	int rc;

	*out = NULL;
	c.f = fopen(path, "rb");
	if (!c.f)
		return ocb_seterr(OCB_ENOENT, "%s: cannot open", path);
	if (fstat(fileno(c.f), &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = ocb_seterr(OCB_EFORMAT, "%s: not a regular file", path);
		goto out;
	}
	c.size = (uint64_t)st.st_size;
	g = calloc(1, sizeof *g);
	if (!g || !(g->path = strdup(path))) {
		rc = ocb_seterr(OCB_ENOMEM, "%s: gguf", path);
		goto out;
	}
	g->file_size = c.size;
	if ((rc = rd_header(&c, g)) || (rc = rd_kvs(&c, g)) || (rc = rd_tensors(&c, g)) ||
	    (rc = check_data(&c, g)))
		goto out;
	*out = g;
	g = NULL;
out:
	fclose(c.f);
	gguf_free(g);
	return rc;
}

void gguf_free(struct gguf_file *g)
{
	if (!g)
		return;
	if (g->kv)
		for (uint64_t k = 0; k < g->n_kv; k++) {
			free(g->kv[k].key);
			free(g->kv[k].str);
		}
	if (g->t)
		for (uint64_t k = 0; k < g->n_tensors; k++)
			free(g->t[k].name);
	free(g->kv);
	free(g->t);
	free(g->path);
	free(g);
}

const struct gguf_kv *gguf_find_kv(const struct gguf_file *g, const char *key)
{
	for (uint64_t k = 0; k < g->n_kv; k++)
		if (g->kv && g->kv[k].key && strcmp(g->kv[k].key, key) == 0)
			return &g->kv[k];
	return NULL;
}

int gguf_get_int(const struct gguf_file *g, const char *key, int64_t *v)
{
	const struct gguf_kv *kv = gguf_find_kv(g, key);
	if (!kv)
		return OCB_ENOENT;
	switch (kv->type) {
	case GGUF_U8: case GGUF_I8: case GGUF_U16: case GGUF_I16: case GGUF_U32:
	case GGUF_I32: case GGUF_BOOL: case GGUF_I64:
		*v = kv->i;
		return OCB_OK;
	case GGUF_U64:
		if (kv->u > INT64_MAX)
			break;
		*v = (int64_t)kv->u;
		return OCB_OK;
	default:
		break;
	}
	return ocb_seterr(OCB_EFORMAT, "%s: key '%s' is %s, expected an integer", g->path, key,
			  gguf_vtype_name(kv->type) ? gguf_vtype_name(kv->type) : "?");
}

const char *gguf_get_str(const struct gguf_file *g, const char *key)
{
	const struct gguf_kv *kv = gguf_find_kv(g, key);
	return kv && kv->type == GGUF_STRING ? kv->str : NULL;
}

const struct gguf_tensor_info *gguf_find_tensor(const struct gguf_file *g, const char *name)
{
	for (uint64_t k = 0; k < g->n_tensors; k++)
		if (g->t[k].name && strcmp(g->t[k].name, name) == 0)
			return &g->t[k];
	return NULL;
}
