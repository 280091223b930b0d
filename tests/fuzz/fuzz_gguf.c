/* fuzz_gguf: a GGUF file's header, key-values and tensor table through gguf_read
 * (workloads/gguf.h), then the look-ups `inspect` and `compress` make on what it read. */
#include <stdint.h>
#include <unistd.h>

#include "../../workloads/gguf.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gguf_file *g = NULL;
	char path[32];
	int64_t v;
	int fd = fuzz_memfile(data, size, path);

	if (fd < 0)
		return 0;
	if (fuzz_note("gguf", gguf_read(path, &g)) == 0) {
		(void)gguf_get_str(g, "general.architecture");
		(void)gguf_get_int(g, "llama.block_count", &v);
		(void)gguf_find_tensor(g, "token_embd.weight");
		for (uint64_t i = 0; i < g->n_kv; i++)
			(void)gguf_vtype_name(g->kv[i].type);
		for (uint64_t i = 0; i < g->n_tensors; i++)
			(void)ggml_type_name(g->t[i].type);
	}
	gguf_free(g);
	close(fd);
	return 0;
}
