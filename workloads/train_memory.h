/* train_memory: bytes per parameter a training holds, computed and measured.
 *
 * Computed: the trainer's own accounting (struct ocb_train_info: weights, gradients,
 * optimizer state, activations incl. batch buffers), i.e. the sizes of its allocations
 * that are resident during a step.
 * Measured: the training runs `steps` optimizer steps in a forked child process. The
 * child first creates a throw-away trainer of the same spec, takes one step and frees it
 * (warm-up), so that what a process maps once for any training — the code pages of the
 * paths taken (libm alone ~0.5 MB: ~4 B/param of the suite's 133 k-parameter LM), lazily
 * initialised library state — is not counted as the training's: the computed figures
 * count data (allocations) only, and so does the measurement. File-backed pages mapped
 * after base anyway are subtracted too (`code`). The
 * child's resident set is read before the trainer is created (base), the peak-RSS mark is
 * reset after creation (Linux /proc/self/clear_refs "5"), and after the steps the peak
 * (VmHWM) minus base is the training's footprint. An "empty run" (a child that does the
 * same minus the trainer; both first run one 1024^3 sgemm so that OpenBLAS's threads
 * and packing buffers exist before `base`) gives the process
 * overhead, which is subtracted. The child sets malloc's mmap threshold to 4 KiB so
 * every large buffer is a fresh mapping counted when touched, and calls malloc_trim(0)
 * before `base` so that free heap pages inherited from the parent are not reused
 * uncounted (seen inside ocbench after other workloads had freed their models).
 * The one-off transient of creation (e.g. DQT's fp32 init before it is quantized and
 * released) is excluded by the reset. The reset is verified (the mark must sit at the
 * current RSS right after it); when it did not take effect (no clear_refs, or seen now
 * and then in a busy process), the peak is the RSS after the steps instead (the
 * steady-state footprint, without transient buffers) and `hwm_reset` is 0. */
#ifndef OCB_TRAIN_MEMORY_H
#define OCB_TRAIN_MEMORY_H

#include <stddef.h>

#include "trainer.h"

struct ocb_train_mem {
	size_t nparams;
	size_t weights, grads, optimizer, activations; /* computed, bytes */
	size_t computed;       /* their sum */
	long measured;         /* bytes: peak RSS delta of the training minus the empty run's */
	long empty;            /* bytes: the empty run's delta */
	long code;             /* bytes of file-backed pages (code) mapped during the measured
				  steps, not counted in `measured` (0 after the warm-up, as a rule) */
	int hwm_reset;         /* 1: peak = high-water mark after a verified reset; 0: end RSS */
};

/* Creates `t` from spec/cfg in a child process, runs `steps` (>= 1) steps at cfg->lr and
 * fills *m. The children run with 1 thread whatever cfg->threads says (libgomp cannot
 * start a thread team in a child forked from a process that had one). OCB_EINVAL (steps), OCB_ERUNTIME (fork/pipe, or the child failed: its error
 * message is passed on). */
int ocb_train_measure_memory(const struct ocb_trainer *t, const void *spec,
			     const struct ocb_train_cfg *cfg, long steps, struct ocb_train_mem *m);

#endif
