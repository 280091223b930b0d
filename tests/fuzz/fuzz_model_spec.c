/* fuzz_model_spec: `ocbench inspect MODEL` — ocb_spec_load (workloads/model_spec_load.h) tells
 * a spec JSON, an ocbench checkpoint and a GGUF file apart by their first bytes and reads
 * the shape; an accepted spec is then costed (workloads/model_cost.h) at its own context
 * as inspect does, so the arithmetic on hostile-but-in-range sizes runs under UBSan. */
#include <stdint.h>
#include <unistd.h>

#include "../../analysis/model_cost.h"
#include "../../workloads/model_spec_load.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ocb_model_spec spec;
	struct ocb_cost cost = {0};
	char path[32];
	int fd = fuzz_memfile(data, size, path);

	if (fd < 0)
		return 0;
	if (fuzz_note("spec", ocb_spec_load(path, &spec)) == 0) {
		int64_t ctx = spec.arch == OCB_ARCH_LLAMA && spec.ctx < 2048 ? spec.ctx : 2048;
		if (ocb_cost_compute(&spec, ctx, 1, &cost) == 0)
			ocb_cost_release(&cost);
	}
	close(fd);
	return 0;
}
