/* seeds_gen: writes the binary seed inputs of the fuzz corpora (GGUF files and
 * checkpoints) with ocbench's own writers, so the seeds are valid files the fuzzer
 * mutates from. Run once: build/fuzz-replay/seeds_gen OUTDIR (make fuzz-seeds); the
 * outputs are committed under tests/fuzz/corpus/. Not a fuzz target. */
#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../common/ocb_error.h"
#include "../../workloads/checkpoint.h"
#include "../../workloads/gguf.h"

static int gguf_seed(const char *path, int ntensors)
{
	struct gguf_writer *w = gguf_writer_new();
	static uint8_t q[2 * 34 * 4]; /* 4 rows of 64 q8_0 weights: 2 blocks of 34 bytes */
	const uint64_t ne[2] = {64, 4};
	int rc = OCB_ENOMEM;

	if (!w)
		return rc;
	if ((rc = gguf_writer_str(w, "general.architecture", "llama")) ||
	    (rc = gguf_writer_str(w, "general.name", "seed")) ||
	    (rc = gguf_writer_u32(w, "llama.block_count", 1)) ||
	    (rc = gguf_writer_u32(w, "llama.embedding_length", 64)) ||
	    (rc = gguf_writer_u32(w, "llama.feed_forward_length", 128)) ||
	    (rc = gguf_writer_u32(w, "llama.attention.head_count", 4)) ||
	    (rc = gguf_writer_u32(w, "llama.attention.head_count_kv", 2)) ||
	    (rc = gguf_writer_u32(w, "llama.context_length", 256)) ||
	    (rc = gguf_writer_u32(w, "llama.vocab_size", 4)) ||
	    (rc = gguf_writer_f32(w, "llama.rope.freq_base", 10000.0f)))
		goto out;
	for (int i = 0; i < ntensors; i++) {
		char name[32];
		snprintf(name, sizeof name, i ? "blk.%d.attn_q.weight" : "token_embd.weight", i - 1);
		if ((rc = gguf_writer_tensor(w, name, GGML_Q8_0, 2, ne, q, sizeof q)))
			goto out;
	}
	rc = gguf_writer_save(w, path);
out:
	gguf_writer_free(w);
	return rc;
}

static int ckpt_seed(const char *path, const char *kind, const char *cfg_text)
{
	static float w1[5 * 8], b1[5];
	static int8_t q[21];
	cJSON *cfg = cJSON_Parse(cfg_text);
	struct ocb_ckpt_tensor t[3] = {
		{.name = "fc1.w", .dtype = OCB_DT_F32, .ndim = 2, .shape = {5, 8}, .data = w1},
		{.name = "fc1.b", .dtype = OCB_DT_F32, .ndim = 1, .shape = {5}, .data = b1},
		{.name = "q", .dtype = OCB_DT_I8, .ndim = 3, .shape = {1, 3, 7}, .data = q},
	};
	int rc = ocb_ckpt_save(path, kind, cfg, t, 3);
	cJSON_Delete(cfg);
	return rc;
}

int main(int argc, char **argv)
{
	char p[4096];
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: seeds_gen OUTDIR\n");
		return 2;
	}
	snprintf(p, sizeof p, "%s/gguf-1.gguf", argv[1]);
	rc |= gguf_seed(p, 1);
	snprintf(p, sizeof p, "%s/gguf-3.gguf", argv[1]);
	rc |= gguf_seed(p, 3);
	snprintf(p, sizeof p, "%s/mlp.ckpt", argv[1]);
	rc |= ckpt_seed(p, "mlp", "{\"dims\":[8,5],\"act\":\"relu\"}");
	snprintf(p, sizeof p, "%s/lm.ckpt", argv[1]);
	rc |= ckpt_seed(p, "lm", "{\"vocab\":256,\"d_model\":32,\"n_layers\":2,\"n_heads\":4,"
				 "\"ffn\":64,\"ctx\":64}");
	if (rc)
		fprintf(stderr, "seeds_gen: %s\n", ocb_lasterr());
	return rc ? 1 : 0;
}
