#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "../common/ocb_json.h"

#define CKPT_ALIGN 64u
#define MAGIC_LEN 8u
#define MAX_NAME 255u

size_t ocb_dtype_size(enum ocb_dtype dt)
{
	switch (dt) {
	case OCB_DT_F32: return 4;
	case OCB_DT_F16: return 2;
	case OCB_DT_I8: return 1;
	case OCB_DT_U8: return 1;
	case OCB_DT_I32: return 4;
	}
	return 0;
}

const char *ocb_dtype_name(enum ocb_dtype dt)
{
	switch (dt) {
	case OCB_DT_F32: return "f32";
	case OCB_DT_F16: return "f16";
	case OCB_DT_I8: return "i8";
	case OCB_DT_U8: return "u8";
	case OCB_DT_I32: return "i32";
	}
	return "?";
}

/* ---- a growable little-endian byte buffer for the header ---- */

struct buf { unsigned char *p; size_t len, cap; int oom; };

static void buf_put(struct buf *b, const void *src, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		while (cap < b->len + n)
			cap *= 2;
		unsigned char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void buf_u32(struct buf *b, uint32_t v)
{
	unsigned char x[4];
	for (int i = 0; i < 4; i++)
		x[i] = (unsigned char)(v >> (8 * i));
	buf_put(b, x, 4);
}

static void buf_u64(struct buf *b, uint64_t v)
{
	unsigned char x[8];
	for (int i = 0; i < 8; i++)
		x[i] = (unsigned char)(v >> (8 * i));
	buf_put(b, x, 8);
}

static void put_u64_at(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t tensor_bytes(const struct ocb_ckpt_tensor *t)
{
	uint64_t n = ocb_dtype_size(t->dtype);
	for (int d = 0; d < t->ndim; d++)
		n *= (uint64_t)t->shape[d];
	return n;
}

static int check_tensors(const char *path, const struct ocb_ckpt_tensor *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!t[i].name || !t[i].name[0] || strlen(t[i].name) > MAX_NAME)
			return ocb_seterr(OCB_EINVAL, "%s: tensor %zu: empty or too long name", path, i);
		for (size_t j = 0; j < i; j++)
			if (strcmp(t[i].name, t[j].name) == 0)
				return ocb_seterr(OCB_EINVAL, "%s: duplicate tensor '%s'", path,
						  t[i].name);
		if (ocb_dtype_size(t[i].dtype) == 0)
			return ocb_seterr(OCB_EINVAL, "%s: tensor '%s': unknown dtype %d", path,
					  t[i].name, (int)t[i].dtype);
		if (t[i].ndim < 1 || t[i].ndim > OCB_CKPT_MAXDIM)
			return ocb_seterr(OCB_EINVAL, "%s: tensor '%s': ndim %d not in 1..%d", path,
					  t[i].name, t[i].ndim, OCB_CKPT_MAXDIM);
		for (int d = 0; d < t[i].ndim; d++)
			if (t[i].shape[d] < 0)
				return ocb_seterr(OCB_EINVAL, "%s: tensor '%s': negative dimension",
						  path, t[i].name);
		if (!t[i].data && tensor_bytes(&t[i]) > 0)
			return ocb_seterr(OCB_EINVAL, "%s: tensor '%s': no data", path, t[i].name);
	}
	return OCB_OK;
}

/* fwrite + running crc */
static int write_crc(FILE *f, const void *p, size_t n, uLong *crc)
{
	if (n == 0)
		return 0;
	*crc = crc32_z(*crc, p, n);
	return fwrite(p, 1, n, f) == n ? 0 : -1;
}

static int write_zeros(FILE *f, size_t n, uLong *crc)
{
	static const unsigned char z[CKPT_ALIGN];
	while (n > 0) {
		size_t k = n < sizeof z ? n : sizeof z;
		if (write_crc(f, z, k, crc))
			return -1;
		n -= k;
	}
	return 0;
}

/* Writes header h, the tensors at offs[] (zero padding between) and the CRC-32 of it
 * all to tmp, flushed to disk. */
static int write_file(const char *tmp, const struct buf *hb, const uint64_t *offs,
		      const struct ocb_ckpt_tensor *t, size_t n)
{
	const struct buf h = *hb;
	FILE *f = fopen(tmp, "wb");
	if (!f)
		return ocb_seterr(errno == EACCES || errno == EROFS ? OCB_EPERM : OCB_EIO,
				  "%s: cannot create: %s", tmp, strerror(errno));
	uLong crc = crc32(0L, Z_NULL, 0);
	uint64_t at = 0;
	int bad = write_crc(f, h.p, h.len, &crc);
	at = h.len;
	for (size_t i = 0; i < n && !bad; i++) {
		bad = write_zeros(f, offs[i] - at, &crc);
		uint64_t nb = tensor_bytes(&t[i]);
		if (!bad)
			bad = write_crc(f, t[i].data, nb, &crc);
		at = offs[i] + nb;
	}
	unsigned char c4[4];
	for (int i = 0; i < 4; i++)
		c4[i] = (unsigned char)(crc >> (8 * i));
	if (!bad)
		bad = fwrite(c4, 1, 4, f) != 4;
	if (!bad)
		bad = fflush(f) != 0 || fsync(fileno(f)) != 0;
	if (fclose(f) != 0)
		bad = 1;
	if (bad)
		return ocb_seterr(OCB_EIO, "%s: write failed: %s", tmp, strerror(errno));
	return OCB_OK;
}

/* Makes a rename in path's directory durable: fsync the directory (best effort). */
static void fsync_dir(const char *path)
{
	char *dir = strdup(path);
	if (dir) {
		char *slash = strrchr(dir, '/');
		const char *d = slash ? (slash == dir ? "/" : (*slash = '\0', dir)) : ".";
		int fd = open(d, O_RDONLY | O_DIRECTORY);
		if (fd >= 0) {
			(void)fsync(fd);
			close(fd);
		}
		free(dir);
	}
}

int ocb_ckpt_save(const char *path, const char *kind, const cJSON *config,
		  const struct ocb_ckpt_tensor *t, size_t n)
{
	struct buf h = {0};
	char *cfg = NULL, *tmp = NULL;
	cJSON *empty = NULL;
	uint64_t *offs = NULL; /* file offset of each tensor's data */
	size_t *off_at = NULL; /* where each tensor's offset field sits in the header */
	int rc = OCB_OK;

	if (!path || !kind || !kind[0] || strlen(kind) > MAX_NAME) {
		rc = ocb_seterr(OCB_EINVAL, "%s: checkpoint needs a model kind", path ? path : "?");
		goto out;
	}
	rc = check_tensors(path, t, n);
	if (rc)
		goto out;
	if (!config)
		config = empty = cJSON_CreateObject();
	cfg = config ? ocb_json_canonical(config) : NULL;
	offs = calloc(n ? n : 1, sizeof *offs);
	tmp = malloc(strlen(path) + 5);
	if (!cfg || !offs || !tmp) {
		rc = ocb_seterr(OCB_ENOMEM, "%s: cannot build checkpoint header", path);
		goto out;
	}
	sprintf(tmp, "%s.tmp", path);

	/* header with file_len and offsets patched once the header size is known */
	buf_put(&h, OCB_CKPT_MAGIC, MAGIC_LEN); /* includes the NUL */
	buf_u32(&h, OCB_CKPT_VERSION);
	size_t file_len_at = h.len;
	buf_u64(&h, 0);
	buf_u32(&h, (uint32_t)strlen(kind));
	buf_put(&h, kind, strlen(kind));
	buf_u64(&h, strlen(cfg));
	buf_put(&h, cfg, strlen(cfg));
	buf_u32(&h, (uint32_t)n);
	off_at = calloc(n ? n : 1, sizeof *off_at);
	if (!off_at) {
		rc = ocb_seterr(OCB_ENOMEM, "%s: cannot build checkpoint header", path);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		buf_u32(&h, (uint32_t)strlen(t[i].name));
		buf_put(&h, t[i].name, strlen(t[i].name));
		buf_u32(&h, (uint32_t)t[i].dtype);
		buf_u32(&h, (uint32_t)t[i].ndim);
		for (int d = 0; d < t[i].ndim; d++)
			buf_u64(&h, (uint64_t)t[i].shape[d]);
		off_at[i] = h.len;
		buf_u64(&h, 0);
		buf_u64(&h, tensor_bytes(&t[i]));
	}
	if (h.oom) {
		rc = ocb_seterr(OCB_ENOMEM, "%s: cannot build checkpoint header", path);
		goto out;
	}
	uint64_t pos = ocb_round_up(h.len, CKPT_ALIGN);
	for (size_t i = 0; i < n; i++) {
		offs[i] = pos;
		put_u64_at(h.p + off_at[i], pos);
		pos = ocb_round_up(pos + tensor_bytes(&t[i]), CKPT_ALIGN);
	}
	/* the last tensor is not padded: the checksum follows it directly */
	uint64_t data_end = n ? offs[n - 1] + tensor_bytes(&t[n - 1]) : h.len;
	uint64_t file_len = data_end + 4;
	put_u64_at(h.p + file_len_at, file_len);

	if ((rc = write_file(tmp, &h, offs, t, n)))
		goto out;
	if (rename(tmp, path) != 0) {
		rc = ocb_seterr(errno == EACCES || errno == EROFS ? OCB_EPERM : OCB_EIO,
				"%s: cannot rename from %s: %s", path, tmp, strerror(errno));
		goto out;
	}
	fsync_dir(path);
out:
	if (rc && tmp)
		unlink(tmp);
	free(h.p);
	free(cfg);
	free(tmp);
	free(offs);
	free(off_at);
	cJSON_Delete(empty);
	return rc;
}

/* ---- loading ---- */

struct cur { const unsigned char *p; size_t len, at; int short_; };

static uint32_t get_u32(struct cur *c)
{
	if (c->len - c->at < 4) {
		c->short_ = 1;
		c->at = c->len;
		return 0;
	}
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)c->p[c->at + i] << (8 * i);
	c->at += 4;
	return v;
}

static uint64_t get_u64(struct cur *c)
{
	if (c->len - c->at < 8) {
		c->short_ = 1;
		c->at = c->len;
		return 0;
	}
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)c->p[c->at + i] << (8 * i);
	c->at += 8;
	return v;
}

/* A malloc'd NUL-terminated copy of the next len bytes, or NULL (short / oom). */
static char *get_str(struct cur *c, uint64_t len)
{
	if (c->len - c->at < len) {
		c->short_ = 1;
		c->at = c->len;
		return NULL;
	}
	char *s = malloc(len + 1);
	if (!s)
		return NULL;
	memcpy(s, c->p + c->at, len);
	s[len] = '\0';
	c->at += len;
	return s;
}

void ocb_ckpt_free(struct ocb_ckpt *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ntensors; i++)
		free((char *)c->tensors[i].name);
	free(c->tensors);
	free(c->path);
	free(c->kind);
	free(c->config_json);
	cJSON_Delete(c->config);
	ocb_free(c->blob);
	free(c);
}

/* The whole file into c->blob (c->blob_len bytes). OCB_ENOENT, OCB_EIO, OCB_ENOMEM. */
static int ckpt_read_file(const char *path, struct ocb_ckpt *c)
{
	FILE *f = fopen(path, "rb");
	int rc = OCB_OK;
	long flen;
	if (!f)
		return ocb_seterr(OCB_ENOENT, "%s: cannot open checkpoint: %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) != 0 || (flen = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		rc = ocb_seterr(OCB_EIO, "%s: cannot read", path);
		goto out;
	}
	c->blob_len = (size_t)flen;
	if (flen > 0) {
		c->blob = ocb_alloc((size_t)flen);
		if (!c->blob) {
			rc = ocb_seterr(OCB_ENOMEM, "%s: cannot hold %ld bytes", path, flen);
			goto out;
		}
		if (fread(c->blob, 1, (size_t)flen, f) != (size_t)flen) {
			rc = ocb_seterr(OCB_EIO, "%s: short read", path);
			goto out;
		}
	}
out:
	fclose(f);
	return rc;
}

/* The frame of c->blob: magic, version, stated length = file length, CRC-32 of all but
 * the last 4 bytes. On success *cu is at the table (its len excludes the crc). */
static int ckpt_check_frame(const char *path, struct ocb_ckpt *c, struct cur *cu)
{
	const unsigned char *p = c->blob;
	size_t len = c->blob_len;
	if (len < MAGIC_LEN || memcmp(p, OCB_CKPT_MAGIC, MAGIC_LEN) != 0)
		return ocb_seterr(OCB_EFORMAT, "%s: not an ocbench checkpoint (bad magic)", path);
	*cu = (struct cur){p, len, MAGIC_LEN, 0};
	c->version = get_u32(cu);
	uint64_t file_len = get_u64(cu);
	if (cu->short_)
		return ocb_seterr(OCB_EFORMAT, "%s: truncated: header cut at %zu bytes", path, len);
	if (c->version > OCB_CKPT_VERSION || c->version == 0)
		return ocb_seterr(OCB_EFORMAT, "%s: checkpoint version %u, this ocbench reads <= %u",
				  path, c->version, OCB_CKPT_VERSION);
	if (file_len > len)
		return ocb_seterr(OCB_EFORMAT, "%s: truncated: expected %llu bytes, got %zu", path,
				  (unsigned long long)file_len, len);
	if (file_len < len)
		return ocb_seterr(OCB_EFORMAT, "%s: %zu trailing bytes after the checksum "
					       "(expected %llu bytes)", path, len - (size_t)file_len,
				  (unsigned long long)file_len);
	if (len < cu->at + 4)
		return ocb_seterr(OCB_EFORMAT, "%s: truncated: no checksum", path);
	uint32_t want = 0;
	for (int i = 0; i < 4; i++)
		want |= (uint32_t)p[len - 4 + i] << (8 * i);
	uint32_t got = (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), p, len - 4);
	if (got != want)
		return ocb_seterr(OCB_EFORMAT, "%s: checksum mismatch (stored %08x, computed %08x): "
					       "corrupt file", path, want, got);
	cu->len = len - 4;
	return OCB_OK;
}

/* Kind, config (parsed) and the tensor count *nt, bounds-checked. */
static int ckpt_read_header(const char *path, struct ocb_ckpt *c, struct cur *cu, uint32_t *nt)
{
	uint32_t klen = get_u32(cu);
	if (klen > MAX_NAME)
		return ocb_seterr(OCB_EFORMAT, "%s: malformed header: kind length %u", path, klen);
	c->kind = get_str(cu, klen);
	uint64_t clen = get_u64(cu);
	c->config_json = cu->short_ ? NULL : get_str(cu, clen);
	*nt = get_u32(cu);
	if (cu->short_ || !c->kind || !c->config_json)
		return ocb_seterr(OCB_EFORMAT, "%s: malformed header", path);
	c->config = cJSON_ParseWithLength(c->config_json, clen);
	if (!c->config)
		return ocb_seterr(OCB_EFORMAT, "%s: model config is not valid JSON", path);
	if (*nt > (cu->len - cu->at) / 16) /* each entry holds at least 16 bytes */
		return ocb_seterr(OCB_EFORMAT, "%s: malformed table: %u tensors", path, *nt);
	return OCB_OK;
}

/* Table entry i into c->tensors[i]: name, dtype, shape, offset and size consistent with
 * the file (data inside it, before the crc, aligned), no duplicate name. */
static int ckpt_read_entry(const char *path, struct ocb_ckpt *c, struct cur *cu, uint32_t i)
{
	struct ocb_ckpt_tensor *t = &c->tensors[i];
	const size_t len = c->blob_len;
	uint32_t nl = get_u32(cu);
	if (nl == 0 || nl > MAX_NAME)
		return ocb_seterr(OCB_EFORMAT, "%s: malformed table: tensor %u name length %u",
				  path, i, nl);
	t->name = get_str(cu, nl);
	if (t->name)
		c->ntensors++;
	t->dtype = (enum ocb_dtype)get_u32(cu);
	t->ndim = (int)get_u32(cu);
	if (cu->short_ || !t->name || t->ndim < 1 || t->ndim > OCB_CKPT_MAXDIM ||
	    ocb_dtype_size(t->dtype) == 0)
		return ocb_seterr(OCB_EFORMAT, "%s: malformed table entry %u", path, i);
	uint64_t elems = 1;
	int overflow = 0;
	for (int d = 0; d < t->ndim; d++) {
		uint64_t s = get_u64(cu);
		if (s > INT64_MAX || (s && elems > UINT64_MAX / 8 / s))
			overflow = 1;
		else
			elems *= s;
		t->shape[d] = (int64_t)s;
	}
	t->offset = get_u64(cu);
	t->nbytes = get_u64(cu);
	if (cu->short_ || overflow || t->nbytes != elems * ocb_dtype_size(t->dtype) ||
	    t->offset % CKPT_ALIGN != 0 || t->offset > len - 4 || t->nbytes > len - 4 - t->offset)
		return ocb_seterr(OCB_EFORMAT, "%s: tensor '%s': shape, size or offset "
					       "inconsistent with the file", path, t->name);
	t->data = (const unsigned char *)c->blob + t->offset;
	for (uint32_t j = 0; j < i; j++)
		if (strcmp(c->tensors[j].name, t->name) == 0)
			return ocb_seterr(OCB_EFORMAT, "%s: duplicate tensor '%s'", path, t->name);
	return OCB_OK;
}

int ocb_ckpt_load(const char *path, struct ocb_ckpt **out)
{
	struct ocb_ckpt *c = NULL;
	struct cur cu;
	uint32_t nt = 0;
	int rc = OCB_OK;

	*out = NULL;
	c = calloc(1, sizeof *c);
	if (!c || !(c->path = strdup(path))) {
		rc = ocb_seterr(OCB_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	if ((rc = ckpt_read_file(path, c)) || (rc = ckpt_check_frame(path, c, &cu)) ||
	    (rc = ckpt_read_header(path, c, &cu, &nt)))
		goto out;
	c->tensors = calloc(nt ? nt : 1, sizeof *c->tensors);
	if (!c->tensors) {
		rc = ocb_seterr(OCB_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	/* the table; every read is bounds-checked against the bytes before the crc */
	for (uint32_t i = 0; i < nt && !rc; i++)
		rc = ckpt_read_entry(path, c, &cu, i);
	if (!rc && nt > 0 && c->tensors[0].offset < cu.at)
		rc = ocb_seterr(OCB_EFORMAT, "%s: tensor data overlaps the header", path);
	if (rc)
		goto out;
	*out = c;
	c = NULL;
out:
	ocb_ckpt_free(c);
	return rc;
}

int ocb_ckpt_expect_kind(const struct ocb_ckpt *c, const char *kind)
{
	if (strcmp(c->kind, kind) != 0)
		return ocb_seterr(OCB_EFORMAT, "%s: model kind '%s', expected '%s'", c->path,
				  c->kind, kind);
	return OCB_OK;
}

const struct ocb_ckpt_tensor *ocb_ckpt_find(const struct ocb_ckpt *c, const char *name)
{
	for (size_t i = 0; i < c->ntensors; i++)
		if (strcmp(c->tensors[i].name, name) == 0)
			return &c->tensors[i];
	return NULL;
}

static void shape_str(char *buf, size_t len, enum ocb_dtype dt, int ndim, const int64_t *s)
{
	size_t at = 0;
	at += (size_t)snprintf(buf + at, len - at, "[");
	for (int d = 0; d < ndim && at < len; d++)
		at += (size_t)snprintf(buf + at, len - at, d ? ",%lld" : "%lld", (long long)s[d]);
	if (at < len)
		snprintf(buf + at, len - at, "] %s", ocb_dtype_name(dt));
}

int ocb_ckpt_read_tensor(const struct ocb_ckpt *c, const char *name, enum ocb_dtype dtype,
			 int ndim, const int64_t *shape, void *dst)
{
	const struct ocb_ckpt_tensor *t = ocb_ckpt_find(c, name);
	if (!t)
		return ocb_seterr(OCB_EFORMAT, "%s: no tensor '%s'", c->path, name);
	int same = t->dtype == dtype && t->ndim == ndim;
	for (int d = 0; same && d < ndim; d++)
		same = t->shape[d] == shape[d];
	if (!same) {
		char have[128], want[128];
		shape_str(have, sizeof have, t->dtype, t->ndim, t->shape);
		shape_str(want, sizeof want, dtype, ndim, shape);
		return ocb_seterr(OCB_EFORMAT, "%s: tensor '%s' has shape %s, expected %s", c->path,
				  name, have, want);
	}
	memcpy(dst, t->data, t->nbytes);
	return OCB_OK;
}
