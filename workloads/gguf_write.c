/* gguf_write: a small GGUF v3 writer (see gguf.h): the header, key-values and tensor
 * infos are serialised into one growing buffer, tensor data kept as copies, and the file
 * written at once (PATH.tmp + rename, so a reader never sees half a file). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "gguf.h"

struct buf {
	uint8_t *p;
	size_t n, cap;
};

struct wtensor {
	char *name;
	uint32_t type;
	int n_dims;
	uint64_t ne[GGUF_MAXDIMS];
	void *data;
	size_t nbytes;
};

struct gguf_writer {
	struct buf kv;      /* serialised key-values */
	uint64_t n_kv;
	uint32_t alignment;
	struct wtensor *t;
	size_t nt, capt;
};

static int put(struct buf *b, const void *src, size_t n)
{
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		while (cap < b->n + n)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p)
			return ocb_seterr(OCB_ENOMEM, "gguf writer: %zu bytes", cap);
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, src, n);
	b->n += n;
	return OCB_OK;
}

static int put_u32(struct buf *b, uint32_t v)
{
	return put(b, &v, 4);
}

static int put_u64(struct buf *b, uint64_t v)
{
	return put(b, &v, 8);
}

static int put_str(struct buf *b, const char *s)
{
	size_t n = strlen(s);
	int rc = put_u64(b, n);
	return rc ? rc : put(b, s, n);
}

struct gguf_writer *gguf_writer_new(void)
{
	struct gguf_writer *w = calloc(1, sizeof *w);
	if (w)
		w->alignment = GGUF_DEFAULT_ALIGNMENT;
	return w;
}

void gguf_writer_free(struct gguf_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nt; i++) {
		free(w->t[i].name);
		free(w->t[i].data);
	}
	free(w->t);
	free(w->kv.p);
	free(w);
}

static int kv_head(struct gguf_writer *w, const char *key, uint32_t type)
{
	int rc = put_str(&w->kv, key);
	if (!rc)
		rc = put_u32(&w->kv, type);
	if (!rc)
		w->n_kv++;
	return rc;
}

int gguf_writer_u32(struct gguf_writer *w, const char *key, uint32_t v)
{
	int rc = kv_head(w, key, GGUF_U32);
	if (!rc && strcmp(key, "general.alignment") == 0)
		w->alignment = v;
	return rc ? rc : put_u32(&w->kv, v);
}

int gguf_writer_f32(struct gguf_writer *w, const char *key, float v)
{
	int rc = kv_head(w, key, GGUF_F32);
	return rc ? rc : put(&w->kv, &v, 4);
}

int gguf_writer_str(struct gguf_writer *w, const char *key, const char *v)
{
	int rc = kv_head(w, key, GGUF_STRING);
	return rc ? rc : put_str(&w->kv, v);
}

int gguf_writer_tensor(struct gguf_writer *w, const char *name, uint32_t type, int n_dims,
		       const uint64_t *ne, const void *data, size_t nbytes)
{
	int blk = ggml_type_block(type);
	if (!blk || n_dims < 1 || n_dims > GGUF_MAXDIMS || ne[0] % (uint64_t)blk)
		return ocb_seterr(OCB_EINVAL, "gguf writer: tensor '%s': bad type %u or shape",
				  name, type);
	uint64_t n = 1;
	for (int d = 0; d < n_dims; d++)
		n *= ne[d];
	if (n / (uint64_t)blk * ggml_type_block_bytes(type) != nbytes)
		return ocb_seterr(OCB_EINVAL, "gguf writer: tensor '%s': %zu bytes, expected %llu",
				  name, nbytes,
				  (unsigned long long)(n / (uint64_t)blk * ggml_type_block_bytes(type)));
	if (w->nt == w->capt) {
		size_t cap = w->capt ? w->capt * 2 : 8;
		struct wtensor *t = realloc(w->t, cap * sizeof *t);
		if (!t)
			return ocb_seterr(OCB_ENOMEM, "gguf writer: tensors");
		w->t = t;
		w->capt = cap;
	}
	struct wtensor *t = &w->t[w->nt];
	memset(t, 0, sizeof *t);
	t->name = strdup(name);
	t->data = malloc(nbytes ? nbytes : 1);
	if (!t->name || !t->data) {
		free(t->name);
		free(t->data);
		return ocb_seterr(OCB_ENOMEM, "gguf writer: tensor '%s'", name);
	}
	memcpy(t->data, data, nbytes);
	t->type = type;
	t->n_dims = n_dims;
	memcpy(t->ne, ne, (size_t)n_dims * sizeof *ne);
	t->nbytes = nbytes;
	w->nt++;
	return OCB_OK;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

/* Header + key-values + tensor infos (offsets relative to the data section), padded. */
static int serialise_meta(const struct gguf_writer *w, struct buf *b)
{
	int rc = put(b, GGUF_MAGIC, 4);
	if (!rc) rc = put_u32(b, GGUF_VERSION);
	if (!rc) rc = put_u64(b, w->nt);
	if (!rc) rc = put_u64(b, w->n_kv);
	if (!rc) rc = put(b, w->kv.p, w->kv.n);
	uint64_t off = 0;
	for (size_t i = 0; i < w->nt && !rc; i++) {
		const struct wtensor *t = &w->t[i];
		rc = put_str(b, t->name);
		if (!rc) rc = put_u32(b, (uint32_t)t->n_dims);
		for (int d = 0; d < t->n_dims && !rc; d++)
			rc = put_u64(b, t->ne[d]);
		if (!rc) rc = put_u32(b, t->type);
		if (!rc) rc = put_u64(b, off);
		off = align_up(off + t->nbytes, w->alignment);
	}
	static const uint8_t zero[64];
	while (!rc && b->n % w->alignment)
		rc = put(b, zero, 1);
	return rc;
}

int gguf_writer_save(struct gguf_writer *w, const char *path)
{
	struct buf b = {0};
	char tmp[4096];
	FILE *f = NULL;
	int rc;

	if (w->alignment == 0 || (w->alignment & (w->alignment - 1)))
		return ocb_seterr(OCB_EINVAL, "gguf writer: alignment %u", w->alignment);
	if ((rc = serialise_meta(w, &b)))
		goto out;
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	f = fopen(tmp, "wb");
	if (!f) {
		rc = ocb_seterr(OCB_EPERM, "%s: cannot write", path);
		goto out;
	}
	int ok = fwrite(b.p, 1, b.n, f) == b.n;
	for (size_t i = 0; i < w->nt && ok; i++) {
		static const uint8_t zero[64];
		ok = fwrite(w->t[i].data, 1, w->t[i].nbytes, f) == w->t[i].nbytes;
		size_t pad = (size_t)(align_up(w->t[i].nbytes, w->alignment) - w->t[i].nbytes);
		if (i + 1 < w->nt)
			for (; pad && ok; pad--)
				ok = fwrite(zero, 1, 1, f) == 1;
	}
	if (fclose(f) != 0)
		ok = 0;
	f = NULL;
	if (!ok || rename(tmp, path) != 0) {
		remove(tmp);
		rc = ocb_seterr(OCB_EIO, "%s: write failed", path);
	}
out:
	if (f)
		fclose(f);
	free(b.p);
	return rc;
}
