#include "artifact.h"

#include <stdio.h>
#include <string.h>

#include "../common/ocb_error.h"

int ocb_artifact_path(const struct ocb_ctx *ctx, const char *name, char *buf, size_t len)
{
	int k = snprintf(buf, len, "%s/%s%s.ckpt", ctx->out_dir ? ctx->out_dir : ".", name,
			 ctx->quick ? "_quick" : "");
	if (k < 0 || (size_t)k >= len)
		return ocb_seterr(OCB_EINVAL, "%s: artifact path too long", name);
	return OCB_OK;
}

static int listed(const char *const *list, const char *name)
{
	for (; list && *list; list++)
		if (strcmp(*list, name) == 0)
			return 1;
	return 0;
}

int ocb_bench_needs(const struct ocb_bench *a, const struct ocb_bench *b)
{
	if (a == b)
		return 0;
	for (const char *const *c = a->consumes; c && *c; c++)
		if (listed(b->produces, *c))
			return 1;
	return 0;
}

void ocb_order_prerequisites(const struct ocb_bench *const *bench_of, size_t *order, size_t n)
{
	size_t moves = 0;
	for (size_t k = 0; k < n && moves <= n * n; k++) {
		size_t last = k;
		for (size_t j = k + 1; j < n; j++)
			if (ocb_bench_needs(bench_of[order[k]], bench_of[order[j]]))
				last = j;
		if (last == k)
			continue;
		size_t c = order[k];
		memmove(order + k, order + k + 1, (last - k) * sizeof *order);
		order[last] = c;
		moves++;
		k--; /* another case is at k now (wraps to k on the loop's k++) */
	}
}
