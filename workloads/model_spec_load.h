/* model_spec_load: a model spec from a file: a spec file (JSON), an ocbench checkpoint
 * (workloads/checkpoint.h: its config) or a GGUF file (workloads/gguf.h: its llama.*
 * keys). The struct and the pure conversions are analysis/model_spec.h; reading files is
 * here because checkpoints and GGUF are workloads' formats. */
#ifndef OCB_MODEL_SPEC_LOAD_H
#define OCB_MODEL_SPEC_LOAD_H

#include "../analysis/model_spec.h"

/* A spec file (JSON), a checkpoint or a GGUF file, told apart by their first bytes
 * ("OCBCKPT\0", "GGUF", else JSON). OCB_ENOENT, OCB_EFORMAT (one line naming the file). */
int ocb_spec_load(const char *path, struct ocb_model_spec *s);

#endif
