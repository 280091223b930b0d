#include "suite_baseline.h"

#include "../common/ocb_cpu.h"

int ocb_baseline_threads(const struct ocb_ctx *ctx)
{
	return ctx && ctx->threads > 0 ? ctx->threads : ocb_cpu_cores();
}
