/* gguf: a small llama model written in q8_0 / q4_0 / tq2_0 / f32 tensors is read back
 * with the same shapes, types, offsets and metadata, and as a model spec; every
 * truncation (every byte of the metadata, every tensor boundary of the data) is one
 * OCB_EFORMAT line; wrong magic, version, absurd counts and lengths, unknown value and
 * ggml types, bad dimensions, alignment and offsets likewise. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ocb_error.h"
#include "../common/ocb_rng.h"
#include "../kernels/quant_formats.h"
#include "../workloads/gguf.h"
#include "../analysis/model_cost.h"
#include "../analysis/model_spec.h"
#include "../workloads/model_spec_load.h"
#include "cli_util.h"

static char dir[128];
static char path[256], path2[256];

static void mk(void)
{
	cr_assert_not_null(mkdtemp(cli_tmpname(dir, sizeof dir, "ocb-gguf")));
	snprintf(path, sizeof path, "%s/m.gguf", dir);
	snprintf(path2, sizeof path2, "%s/bad.gguf", dir);
}

static void rm(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(gguf, .init = mk, .fini = rm);

/* d 256, 1 block, 4 heads (2 KV), ffn 512, vocab 64 */
struct tdesc {
	const char *name;
	uint32_t type;
	int nd;
	uint64_t ne[2];
};
static const struct tdesc model[] = {
	{"token_embd.weight", GGML_Q8_0, 2, {256, 64}},
	{"blk.0.attn_norm.weight", GGML_F32, 1, {256, 1}},
	{"blk.0.attn_q.weight", GGML_Q4_0, 2, {256, 256}},
	{"blk.0.attn_k.weight", GGML_Q4_0, 2, {256, 128}},
	{"blk.0.attn_v.weight", GGML_Q4_0, 2, {256, 128}},
	{"blk.0.attn_output.weight", GGML_Q4_0, 2, {256, 256}},
	{"blk.0.ffn_norm.weight", GGML_F32, 1, {256, 1}},
	{"blk.0.ffn_gate.weight", GGML_TQ2_0, 2, {256, 512}},
	{"blk.0.ffn_up.weight", GGML_TQ2_0, 2, {256, 512}},
	{"blk.0.ffn_down.weight", GGML_Q8_0, 2, {512, 256}},
	{"output_norm.weight", GGML_F32, 1, {256, 1}},
	{"output.weight", GGML_Q4_0, 2, {256, 64}},
};
#define NT (sizeof model / sizeof model[0])

static const struct qformat *qf_of(uint32_t t)
{
	return t == GGML_Q8_0 ? qformat_find("q8_0") : t == GGML_Q4_0 ? qformat_find("q4_0")
		: t == GGML_TQ2_0 ? qformat_find("tq2_0") : NULL;
}

/* Writes the model; returns its file size. */
static long write_model(const char *p)
{
	struct gguf_writer *w = gguf_writer_new();
	struct ocb_rng r;
	cr_assert_not_null(w);
	ocb_rng_seed(&r, 5);
	cr_assert_eq(gguf_writer_str(w, "general.architecture", "llama"), OCB_OK);
	cr_assert_eq(gguf_writer_str(w, "general.name", "tiny"), OCB_OK);
	cr_assert_eq(gguf_writer_u32(w, "llama.block_count", 1), OCB_OK);
	cr_assert_eq(gguf_writer_u32(w, "llama.embedding_length", 256), OCB_OK);
	cr_assert_eq(gguf_writer_u32(w, "llama.feed_forward_length", 512), OCB_OK);
	cr_assert_eq(gguf_writer_u32(w, "llama.attention.head_count", 4), OCB_OK);
	cr_assert_eq(gguf_writer_u32(w, "llama.attention.head_count_kv", 2), OCB_OK);
	cr_assert_eq(gguf_writer_u32(w, "llama.context_length", 512), OCB_OK);
	cr_assert_eq(gguf_writer_f32(w, "llama.rope.freq_base", 10000.0f), OCB_OK);
	for (size_t i = 0; i < NT; i++) {
		const struct tdesc *t = &model[i];
		int64_t n = (int64_t)(t->ne[0] * t->ne[1]);
		float *x = malloc((size_t)n * sizeof *x);
		for (int64_t j = 0; j < n; j++)
			x[j] = (float)ocb_rng_normal(&r);
		const struct qformat *f = qf_of(t->type);
		size_t nb = f ? qformat_row_bytes(f, (int64_t)t->ne[0]) * t->ne[1] : (size_t)n * 4;
		void *q = malloc(nb);
		if (f)
			cr_assert_eq(qformat_quantize(f, x, q, (int64_t)t->ne[1], (int64_t)t->ne[0]),
				     OCB_OK);
		else
			memcpy(q, x, nb);
		cr_assert_eq(gguf_writer_tensor(w, t->name, t->type, t->nd, t->ne, q, nb), OCB_OK,
			     "%s", ocb_lasterr());
		free(x);
		free(q);
	}
	cr_assert_eq(gguf_writer_save(w, p), OCB_OK, "%s", ocb_lasterr());
	gguf_writer_free(w);
	FILE *f = fopen(p, "rb");
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fclose(f);
	return sz;
}

Test(gguf, round_trip)
{
	struct gguf_file *g = NULL;
	long sz = write_model(path);
	cr_assert_eq(gguf_read(path, &g), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(g->version, 3);
	cr_assert_eq(g->n_tensors, NT);
	cr_assert_eq(g->n_kv, 9);
	cr_assert_eq(g->alignment, 32);
	cr_assert_eq(g->data_offset % 32, 0);
	cr_assert_str_eq(gguf_get_str(g, "general.architecture"), "llama");
	int64_t v;
	cr_assert_eq(gguf_get_int(g, "llama.attention.head_count_kv", &v), OCB_OK);
	cr_assert_eq(v, 2);
	cr_assert_eq(gguf_get_int(g, "general.name", &v), OCB_EFORMAT);
	cr_assert_float_eq(gguf_find_kv(g, "llama.rope.freq_base")->f, 10000.0, 1e-9);
	uint64_t end = 0;
	for (size_t i = 0; i < NT; i++) {
		const struct gguf_tensor_info *t = gguf_find_tensor(g, model[i].name);
		cr_assert_not_null(t, "%s", model[i].name);
		cr_assert_eq(t->type, model[i].type);
		cr_assert_eq(t->n_dims, (uint32_t)model[i].nd);
		cr_assert_eq(t->ne[0], model[i].ne[0]);
		cr_assert_eq(t->ne[1], model[i].nd == 2 ? model[i].ne[1] : 1);
		const struct qformat *f = qf_of(t->type);
		uint64_t nb = f ? qformat_row_bytes(f, (int64_t)t->ne[0]) * t->ne[1] : t->ne[0] * 4;
		cr_assert_eq(t->nbytes, nb, "%s", t->name);
		cr_assert_geq(t->offset, end);
		end = t->offset + t->nbytes;
	}
	cr_assert_eq(g->data_offset + end, (uint64_t)sz);
	cr_assert_str_eq(ggml_type_name(GGML_TQ2_0), "tq2_0");
	gguf_free(g);

	/* and as a model: shapes from the metadata, vocab from the embedding, untied */
	struct ocb_model_spec s;
	cr_assert_eq(ocb_spec_load(path, &s), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(s.d_model, 256);
	cr_assert_eq(s.n_kv_heads, 2);
	cr_assert_eq(s.head_dim, 64);
	cr_assert_eq(s.vocab, 64);
	cr_assert_eq(s.tied, 0);
	struct ocb_cost c;
	cr_assert_eq(ocb_cost_compute(&s, 16, 1, &c), OCB_OK);
	double tensors = 0;
	for (size_t i = 0; i < NT; i++)
		tensors += (double)(model[i].ne[0] * model[i].ne[1]);
	cr_assert_eq(c.total.params, tensors);
	ocb_cost_release(&c);
}

static void copy_prefix(long n)
{
	FILE *a = fopen(path, "rb"), *b = fopen(path2, "wb");
	char *buf = malloc((size_t)n + 1);
	cr_assert_eq(fread(buf, 1, (size_t)n, a), (size_t)n);
	cr_assert_eq(fwrite(buf, 1, (size_t)n, b), (size_t)n);
	fclose(a);
	fclose(b);
	free(buf);
}

static void expect_bad(const char *p, const char *needle)
{
	struct gguf_file *g = NULL;
	int rc = gguf_read(p, &g);
	cr_assert_eq(rc, OCB_EFORMAT, "accepted (%s)", needle ? needle : "");
	cr_assert_null(g);
	const char *e = ocb_lasterr();
	cr_assert_null(strchr(e, '\n'), "%s", e);
	cr_assert_eq(strncmp(e, p, strlen(p)), 0, "%s", e);
	if (needle)
		cr_assert_not_null(strstr(e, needle), "'%s' lacks '%s'", e, needle);
}

Test(gguf, truncated_everywhere)
{
	write_model(path);
	struct gguf_file *g = NULL;
	cr_assert_eq(gguf_read(path, &g), OCB_OK);
	long meta = (long)g->data_offset;
	/* every byte of header, key-values, tensor infos and padding */
	for (long n = 0; n < meta; n++) {
		copy_prefix(n);
		expect_bad(path2, NULL);
	}
	/* every tensor boundary of the data section, one byte short */
	for (uint64_t i = 0; i < g->n_tensors; i++) {
		copy_prefix((long)(g->data_offset + g->t[i].offset + g->t[i].nbytes) - 1);
		expect_bad(path2, "truncated in the data section");
	}
	/* section boundaries name their section */
	copy_prefix(24);
	expect_bad(path2, "cannot fit");
	copy_prefix(10);
	expect_bad(path2, "truncated in the header");
	gguf_free(g);
}

/* A hand-built file: header, one u32 kv, one tensor info; fields patched per case. */
struct mini {
	uint8_t b[512];
	size_t n;
};

static void m_put(struct mini *m, const void *p, size_t n)
{
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void m_u32(struct mini *m, uint32_t v)
{
	m_put(m, &v, 4);
}

static void m_u64(struct mini *m, uint64_t v)
{
	m_put(m, &v, 8);
}

static void m_str(struct mini *m, const char *s)
{
	m_u64(m, strlen(s));
	m_put(m, s, strlen(s));
}

/* Offsets of the patchable fields. */
struct mini_off {
	size_t version, n_tensors, n_kv, key_len, vtype, name_len, n_dims, ne0, type, offset;
};

static void mini_build(struct mini *m, struct mini_off *o, uint32_t align)
{
	memset(m, 0, sizeof *m);
	m_put(m, "GGUF", 4);
	o->version = m->n;
	m_u32(m, 3);
	o->n_tensors = m->n;
	m_u64(m, 1);
	o->n_kv = m->n;
	m_u64(m, 1);
	o->key_len = m->n;
	m_str(m, "general.alignment");
	o->vtype = m->n;
	m_u32(m, GGUF_U32);
	m_u32(m, align);
	o->name_len = m->n;
	m_str(m, "w");
	o->n_dims = m->n;
	m_u32(m, 2);
	o->ne0 = m->n;
	m_u64(m, 32);
	m_u64(m, 2);
	o->type = m->n;
	m_u32(m, GGML_Q8_0);
	o->offset = m->n;
	m_u64(m, 0);
	while (m->n % 32)
		m->n++;
	m->n += 2 * 34; /* data: 2 rows of one q8_0 block */
}

static void mini_write(const struct mini *m)
{
	FILE *f = fopen(path2, "wb");
	cr_assert_eq(fwrite(m->b, 1, m->n, f), m->n);
	fclose(f);
}

static void patch32(struct mini *m, size_t at, uint32_t v)
{
	memcpy(m->b + at, &v, 4);
}

static void patch64(struct mini *m, size_t at, uint64_t v)
{
	memcpy(m->b + at, &v, 8);
}

Test(gguf, hostile_fields)
{
	struct mini m;
	struct mini_off o;
	struct gguf_file *g = NULL;

	mini_build(&m, &o, 32);
	mini_write(&m);
	cr_assert_eq(gguf_read(path2, &g), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(g->t[0].nbytes, 68);
	gguf_free(g);

	const struct {
		size_t *at;
		int wide;
		uint64_t v;
		const char *needle;
	} cases[] = {
		{&o.version, 0, 2, "version 2"},
		{&o.n_tensors, 1, 1ull << 62, "cannot fit"},
		{&o.n_kv, 1, UINT64_MAX, "cannot fit"},
		{&o.key_len, 1, 1ull << 40, "string length"},
		{&o.vtype, 0, 13, "unknown value type 13"},
		{&o.name_len, 1, UINT64_MAX, "string length"},
		{&o.n_dims, 0, 5, "5 dimensions"},
		{&o.n_dims, 0, 0, "0 dimensions"},
		{&o.ne0, 1, 0, "absurd dimension"},
		{&o.ne0, 1, 1ull << 60, "absurd dimension"},
		{&o.ne0, 1, 33, "not a multiple"},
		{&o.type, 0, 4, "unknown ggml type id 4"},
		{&o.type, 0, 77, "unknown ggml type id 77"},
		{&o.offset, 1, 7, "not aligned"},
		{&o.offset, 1, 32, "truncated in the data section"},
		{&o.offset, 1, UINT64_MAX - 31, "truncated in the data section"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		mini_build(&m, &o, 32);
		if (cases[i].wide)
			patch64(&m, *cases[i].at, cases[i].v);
		else
			patch32(&m, *cases[i].at, (uint32_t)cases[i].v);
		mini_write(&m);
		expect_bad(path2, cases[i].needle);
	}
	mini_build(&m, &o, 3);
	mini_write(&m);
	expect_bad(path2, "power of two");
	mini_build(&m, &o, 32);
	memcpy(m.b, "GGUG", 4);
	mini_write(&m);
	expect_bad(path2, "not a GGUF file");
	cr_assert_eq(gguf_read("/nonexistent.gguf", &g), OCB_ENOENT);
}

Test(gguf, arrays_are_skipped_and_bounded)
{
	struct mini m;
	memset(&m, 0, sizeof m);
	m_put(&m, "GGUF", 4);
	m_u32(&m, 3);
	m_u64(&m, 0);
	m_u64(&m, 2);
	m_str(&m, "tokenizer.ggml.tokens");
	m_u32(&m, GGUF_ARRAY);
	m_u32(&m, GGUF_STRING);
	m_u64(&m, 2);
	m_str(&m, "a");
	m_str(&m, "bc");
	m_str(&m, "scores");
	m_u32(&m, GGUF_ARRAY);
	m_u32(&m, GGUF_F32);
	size_t cnt = m.n;
	m_u64(&m, 3);
	m.n += 12;
	mini_write(&m);
	struct gguf_file *g = NULL;
	cr_assert_eq(gguf_read(path2, &g), OCB_OK, "%s", ocb_lasterr());
	cr_assert_eq(gguf_find_kv(g, "tokenizer.ggml.tokens")->arr_n, 2);
	cr_assert_eq(gguf_find_kv(g, "scores")->arr_type, GGUF_F32);
	gguf_free(g);
	patch64(&m, cnt, 1ull << 61);
	mini_write(&m);
	expect_bad(path2, "array of");
}

/* Random corruptions of the metadata (1-4 bytes each, seeded): never a crash, never a
 * read past the end (ASan: make sanitize), only OCB_OK or one OCB_EFORMAT line. */
Test(gguf, random_corruptions)
{
	write_model(path);
	struct gguf_file *g = NULL;
	cr_assert_eq(gguf_read(path, &g), OCB_OK);
	long meta = (long)g->data_offset;
	gguf_free(g);
	long size;
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *orig = malloc((size_t)size), *buf = malloc((size_t)size);
	cr_assert_eq(fread(orig, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	struct ocb_rng r;
	ocb_rng_seed(&r, 11);
	int bad = 0;
	for (int it = 0; it < 300; it++) {
		memcpy(buf, orig, (size_t)size);
		int nflip = 1 + (int)ocb_rng_below(&r, 4);
		for (int k = 0; k < nflip; k++)
			buf[ocb_rng_below(&r, (uint64_t)meta)] = (unsigned char)ocb_rng_u64(&r);
		FILE *o = fopen(path2, "wb");
		cr_assert_eq(fwrite(buf, 1, (size_t)size, o), (size_t)size);
		fclose(o);
		int rc = gguf_read(path2, &g);
		cr_assert(rc == OCB_OK || rc == OCB_EFORMAT, "iteration %d: rc %d", it, rc);
		if (rc == OCB_OK) {
			gguf_free(g);
		} else {
			bad++;
			cr_assert_null(strchr(ocb_lasterr(), '\n'));
		}
	}
	cr_log_info("%d of 300 corruptions refused", bad);
	cr_assert_gt(bad, 0);
	free(orig);
	free(buf);
}
