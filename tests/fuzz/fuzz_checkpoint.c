/* fuzz_checkpoint: an ocbench checkpoint (workloads/checkpoint.h) through ocb_ckpt_load,
 * then every tensor copied out with its own dtype and shape and the config read as a
 * model spec, as the quantized suites and `inspect` do.
 * Input: one mode byte, then the file. An odd mode byte makes the file self-consistent
 * first (file_len at offset 12 set to the size, the crc32 of the last 4 bytes
 * recomputed), so the fuzzer reaches the table and config parsers behind the checksum;
 * an even one leaves it as it is, for the length and checksum refusals. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../../workloads/checkpoint.h"
#include "../../analysis/model_spec.h"
#include "fuzz_util.h"

static void fix_len_crc(uint8_t *p, size_t n)
{
	uint32_t crc;

	if (n < 24)
		return;
	for (int i = 0; i < 8; i++)
		p[12 + i] = (uint8_t)((uint64_t)n >> (8 * i));
	crc = (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), p, n - 4);
	for (int i = 0; i < 4; i++)
		p[n - 4 + i] = (uint8_t)(crc >> (8 * i));
}

static void use(const struct ocb_ckpt *c)
{
	struct ocb_model_spec spec;

	for (size_t i = 0; i < c->ntensors; i++) {
		const struct ocb_ckpt_tensor *t = &c->tensors[i];
		void *dst = malloc(t->nbytes ? t->nbytes : 1);
		if (!dst)
			continue;
		(void)ocb_ckpt_read_tensor(c, t->name, t->dtype, t->ndim, t->shape, dst);
		free(dst);
	}
	(void)ocb_spec_from_ckpt_config(c->kind, c->config, "fuzz", &spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ocb_ckpt *c = NULL;
	uint8_t *buf;
	char path[32];
	int fd;

	if (size < 1 || size > (1u << 20))
		return 0;
	buf = malloc(size);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	if (data[0] & 1)
		fix_len_crc(buf, size - 1);
	fd = fuzz_memfile(buf, size - 1, path);
	free(buf);
	if (fd < 0)
		return 0;
	if (fuzz_note("ckpt", ocb_ckpt_load(path, &c)) == 0)
		use(c);
	ocb_ckpt_free(c);
	close(fd);
	return 0;
}
