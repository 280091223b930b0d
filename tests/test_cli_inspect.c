/* ocbench inspect end to end: the Llama parameter counts and per-format weight bytes in
 * the table and the JSON, a GGUF file and an LM checkpoint as models, and malformed
 * models (missing, bad JSON, bad spec, truncated/garbage GGUF, bad options) -> exit 2
 * with one line. No database: static analysis only. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../workloads/model_lm.h"
#include "cli_util.h"

static void run_ok(struct cli_out *o, const char *const *argv)
{
	cr_assert_eq(cli_run(o, argv, NULL), 0);
	cr_assert_eq(o->status, 0, "exit %d: %s", o->status, o->err);
}

Test(cli_inspect, llama_counts)
{
	char dir[64], db[128];
	struct cli_out o;
	cli_tmpdir(dir, sizeof dir);
	snprintf(db, sizeof db, "--db=%s/none.db", dir);
	const char *a8[] = {"", db, "inspect", "examples/models/llama-3-8b.json", NULL};
	run_ok(&o, a8);
	cr_expect(strstr(o.out, "Llama-3-8B (llama): 8.03 B parameters"), "%s", o.out);
	cr_expect(strstr(o.out, "q4_0       4.5000      4.52 GB"), "%s", o.out);
	const char *a1[] = {"", db, "inspect", "examples/models/llama-3.2-1b.json", "--json",
			    NULL};
	run_ok(&o, a1);
	cJSON *j = cJSON_Parse(o.out);
	cr_assert_not_null(j, "%s", o.out);
	const cJSON *t = cJSON_GetObjectItem(j, "total");
	cr_assert_eq(cJSON_GetObjectItem(t, "params")->valuedouble, 1235814400.0);
	const cJSON *wb = cJSON_GetObjectItem(t, "weight_bytes");
	double mat = 1235814400.0 - (2 * 16 + 1) * 2048;
	cr_assert_eq(cJSON_GetObjectItem(wb, "tq2_0")->valuedouble,
		     mat * 2.0625 / 8 + (2 * 16 + 1) * 2048 * 4.0);
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "layers")), 18);
	cJSON_Delete(j);
}

Test(cli_inspect, checkpoint_as_model)
{
	char dir[64], path[160];
	struct cli_out o;
	struct lm_config c;
	struct lm_model *m = NULL;
	cli_tmpdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/lm.ckpt", dir);
	lm_config_default(&c);
	c.n_layers = 2;
	cr_assert_eq(lm_create(&c, 0, 1, &m), 0);
	cr_assert_eq(lm_save(m, path), 0);
	char want[64];
	snprintf(want, sizeof want, "\"params\":\t%zu", lm_param_count(&c));
	lm_free(m);
	const char *a[] = {"", "inspect", path, "--json", "--ctx", "64", NULL};
	run_ok(&o, a);
	cr_expect(strstr(o.out, want), "'%s' not in %s", want, o.out);
}

Test(cli_inspect, malformed_exit_2_one_line)
{
	char dir[64], f[6][160];
	cli_tmpdir(dir, sizeof dir);
	const char *body[] = {"{\"arch\":", "{\"arch\":\"llama\",\"vocab\":-3}", "GGUF",
			      "GGUF\x03\0\0\0\xff\xff\xff\xff\xff\xff\xff\x7f", "[1,2]",
			      "GGUF\x02\0\0\0"};
	size_t blen[] = {8, 27, 4, 16, 5, 8};
	for (int i = 0; i < 6; i++) {
		snprintf(f[i], sizeof f[i], "%s/m%d", dir, i);
		FILE *fp = fopen(f[i], "wb");
		cr_assert_eq(fwrite(body[i], 1, blen[i], fp), blen[i]);
		fclose(fp);
	}
	const char *cases[][6] = {
		{"", "inspect", "/nonexistent/model.json", NULL},
		{"", "inspect", f[0], NULL},
		{"", "inspect", f[1], NULL},
		{"", "inspect", f[2], NULL},
		{"", "inspect", f[3], NULL},
		{"", "inspect", f[4], NULL},
		{"", "inspect", f[5], NULL},
		{"", "inspect", NULL},
		{"", "inspect", "examples/models/lm.json", "--ctx", "0", NULL},
		{"", "inspect", "examples/models/lm.json", "--format", "q9", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cli_out o;
		cr_assert_eq(cli_run(&o, cases[i], NULL), 0);
		cr_expect_eq(o.status, 2, "case %zu: exit %d: %s", i, o.status, o.err);
		cr_expect_eq(cli_lines(o.err), 1, "case %zu: %s", i, o.err);
		cr_expect(strncmp(o.err, "ocbench: inspect: ", 18) == 0, "case %zu: %s", i, o.err);
	}
}

#include "../kernels/quant_formats.h"
#include "../workloads/gguf.h"

/* A 1-block llama GGUF (d 256, ffn 512, 4 heads / 2 KV, vocab 32): q8_0 embedding and
 * head, q4_0 attention, tq2_0 FFN, f32 norms. */
static void write_gguf(const char *path)
{
	static const struct {
		const char *name;
		uint32_t type;
		uint64_t ne0, ne1;
	} t[] = {{"token_embd.weight", GGML_Q8_0, 256, 32},
		 {"blk.0.attn_norm.weight", GGML_F32, 256, 1},
		 {"blk.0.attn_q.weight", GGML_Q4_0, 256, 256},
		 {"blk.0.attn_k.weight", GGML_Q4_0, 256, 128},
		 {"blk.0.attn_v.weight", GGML_Q4_0, 256, 128},
		 {"blk.0.attn_output.weight", GGML_Q4_0, 256, 256},
		 {"blk.0.ffn_norm.weight", GGML_F32, 256, 1},
		 {"blk.0.ffn_gate.weight", GGML_TQ2_0, 256, 512},
		 {"blk.0.ffn_up.weight", GGML_TQ2_0, 256, 512},
		 {"blk.0.ffn_down.weight", GGML_TQ2_0, 512, 256},
		 {"output_norm.weight", GGML_F32, 256, 1},
		 {"output.weight", GGML_Q8_0, 256, 32}};
	struct gguf_writer *w = gguf_writer_new();
	cr_assert_not_null(w);
	gguf_writer_str(w, "general.architecture", "llama");
	gguf_writer_u32(w, "llama.block_count", 1);
	gguf_writer_u32(w, "llama.embedding_length", 256);
	gguf_writer_u32(w, "llama.feed_forward_length", 512);
	gguf_writer_u32(w, "llama.attention.head_count", 4);
	gguf_writer_u32(w, "llama.attention.head_count_kv", 2);
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		size_t n = t[i].ne0 * t[i].ne1;
		float *x = calloc(n, sizeof *x);
		for (size_t j = 0; j < n; j++)
			x[j] = (float)((j * 7919) % 13) - 6.0f;
		const char *fn = ggml_type_name(t[i].type);
		const struct qformat *f = t[i].type == GGML_F32 ? NULL : qformat_find(fn);
		size_t nb = f ? qformat_row_bytes(f, (int64_t)t[i].ne0) * t[i].ne1 : n * 4;
		void *q = malloc(nb);
		if (f)
			cr_assert_eq(qformat_quantize(f, x, q, (int64_t)t[i].ne1, (int64_t)t[i].ne0), 0);
		else
			memcpy(q, x, nb);
		uint64_t ne[2] = {t[i].ne0, t[i].ne1};
		cr_assert_eq(gguf_writer_tensor(w, t[i].name, t[i].type, t[i].ne1 > 1 ? 2 : 1, ne,
						q, nb), 0);
		free(x);
		free(q);
	}
	cr_assert_eq(gguf_writer_save(w, path), 0);
	gguf_writer_free(w);
}

Test(cli_inspect, gguf_model)
{
	char dir[64], path[160], db[160];
	struct cli_out o;
	cli_tmpdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/tiny.gguf", dir);
	snprintf(db, sizeof db, "--db=%s/none.db", dir);
	write_gguf(path);
	const char *a[] = {"", db, "inspect", path, "--json", NULL};
	run_ok(&o, a);
	cJSON *j = cJSON_Parse(o.out);
	cr_assert_not_null(j, "%s", o.out);
	const cJSON *ty = cJSON_GetObjectItem(j, "gguf_types");
	cr_assert_eq(cJSON_GetObjectItem(ty, "q8_0")->valuedouble, 2 * 32 * 8 * 34.0);
	cr_assert_eq(cJSON_GetObjectItem(ty, "q4_0")->valuedouble, (256 + 128 * 2 + 256) * 8 * 18.0);
	cr_assert_eq(cJSON_GetObjectItem(ty, "tq2_0")->valuedouble,
		     (512 + 512) * 66.0 + 256 * 2 * 66.0);
	cr_assert_eq(cJSON_GetObjectItem(ty, "f32")->valuedouble, 3 * 256 * 4.0);
	const cJSON *m = cJSON_GetObjectItem(j, "model");
	cr_assert_eq(cJSON_GetObjectItem(m, "vocab")->valuedouble, 32);
	cr_assert_eq(cJSON_GetObjectItem(m, "n_kv_heads")->valuedouble, 2);
	cJSON_Delete(j);
	const char *b[] = {"", db, "inspect", path, NULL};
	run_ok(&o, b);
	cr_expect(strstr(o.out, "stored types: f32 3 (3072 B) q4_0 4"), "%s", o.out);
}

/* The byte offsets where the sections of a GGUF file end (REFERENCE.md §4): the four
 * header fields, each key-value, each tensor info, the padded start of the data section
 * and each tensor's data. Sizes from the parsed file (scalar kvs and strings only: the
 * file written above has no arrays). Returns the count written to b. */
static size_t gguf_boundaries(const struct gguf_file *g, uint64_t *b, size_t cap)
{
	static const uint64_t scalar[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
	size_t n = 0;
	uint64_t at = 0;
	const uint64_t head[4] = {4, 4, 8, 8}; /* magic, version, n_tensors, n_kv */
	for (int i = 0; i < 4 && n < cap; i++)
		b[n++] = at += head[i];
	for (uint64_t i = 0; i < g->n_kv && n < cap; i++) {
		const struct gguf_kv *kv = &g->kv[i];
		cr_assert(kv->type == GGUF_STRING || (kv->type < 13 && scalar[kv->type]));
		at += 8 + strlen(kv->key) + 4;
		at += kv->type == GGUF_STRING ? 8 + strlen(kv->str) : scalar[kv->type];
		b[n++] = at;
	}
	for (uint64_t i = 0; i < g->n_tensors && n < cap; i++) {
		const struct gguf_tensor_info *t = &g->t[i];
		b[n++] = at += 8 + strlen(t->name) + 4 + 8ull * t->n_dims + 4 + 8;
	}
	cr_assert_eq(g->data_offset, (at + g->alignment - 1) / g->alignment * g->alignment);
	if (n < cap)
		b[n++] = g->data_offset;
	for (uint64_t i = 0; i < g->n_tensors && n < cap; i++)
		b[n++] = g->data_offset + g->t[i].offset + g->t[i].nbytes;
	return n;
}

/* `inspect` on the GGUF cut one byte short of every section boundary, and cut exactly at
 * it (the next section missing): exit 2 and one line each time; the whole file reads. */
Test(cli_inspect, gguf_truncated_at_every_section_boundary)
{
	char dir[64], path[160], cut[160], db[160];
	uint64_t b[128];
	struct gguf_file *g = NULL;
	struct cli_out o;
	size_t len = 0;
	cli_tmpdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/tiny.gguf", dir);
	snprintf(cut, sizeof cut, "%s/cut.gguf", dir);
	snprintf(db, sizeof db, "--db=%s/none.db", dir);
	write_gguf(path);
	cr_assert_eq(gguf_read(path, &g), 0);
	size_t nb = gguf_boundaries(g, b, sizeof b / sizeof b[0]);
	gguf_free(g);
	char *all = cli_slurp(path, &len);
	cr_assert_not_null(all);
	cr_assert_eq(b[nb - 1], len, "the last tensor ends the file");
	cr_assert_eq(nb, 4 + 6 + 12 + 1 + 12);
	for (size_t i = 0; i < nb; i++)
		for (uint64_t keep = b[i] - 1; keep <= b[i] && keep < len; keep++) {
			FILE *f = fopen(cut, "wb");
			cr_assert_eq(fwrite(all, 1, keep, f), keep);
			fclose(f);
			const char *a[] = {"", db, "inspect", cut, NULL};
			cr_assert_eq(cli_run(&o, a, NULL), 0);
			cr_expect_eq(o.status, 2, "cut at %llu: exit %d: %s", (unsigned long long)keep,
				     o.status, o.err);
			cr_expect_eq(cli_lines(o.err), 1, "cut at %llu: %s", (unsigned long long)keep,
				     o.err);
			cr_expect(strncmp(o.err, "ocbench: inspect: ", 18) == 0, "%s", o.err);
		}
	free(all);
	const char *a[] = {"", db, "inspect", path, NULL};
	run_ok(&o, a);
}
