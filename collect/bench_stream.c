/* stream_copy, stream_triad: STREAM (McCalpin; REFERENCE.md §3) on fp32 arrays of n
 * elements with our OpenMP kernels (kernels/stream.c), ctx->threads threads, each its
 * own slice, arrays first-touched by the same threads. Bytes as STREAM counts them
 * (copy 2 x 4 n, triad 3 x 4 n; no write-allocate). params {"n": N}.
 * Data are small integers so every result is exact: the check compares bit for bit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_cpu.h"
#include "../common/ocb_error.h"
#include "../common/ocb_json.h"
#include "../kernels/stream.h"
#include "suite_baseline.h"

#define TRIAD_S 3.0f

struct stream_state {
	int triad;     /* 0 copy c = a; 1 triad a = b + s c */
	size_t n;
	int threads;
	float *x, *y, *z; /* copy: x = a, y = c; triad: x = a, y = b, z = c */
	void *buf;
};

static cJSON *stream_cases(const struct ocb_ctx *ctx)
{
	/* 256 MiB per array (quick: 64 MiB); the bound's level follows from the arrays'
	 * total size against this machine's caches, and from the arrays being swept pass
	 * after pass (work's cycle: common/ocb_roofline.h ocb_roof_level_cycle). Quick arrays
	 * were 16 MiB until 4 Dec 2026: on the Zen 5 VM (last level measured at 43-54 MiB)
	 * the triad's 48 MiB was given the DRAM roof by the level rule but, swept cyclically
	 * a little over the last level, mostly hit in it: 138% / 160% of bw_dram_triad at 1
	 * / 2 threads (the CI run at 5d5ff71). At 64 MiB (copy 128, triad 192 MiB) two quick
	 * runs there gave 86-95% of the DRAM ceilings, a later one 107-119% at 2 threads (a
	 * last level of 50 MiB: the DRAM ceiling is measured from 4 x that per thread). Since
	 * then a sweep shorter than the DRAM ceiling's working sets is bound by the last
	 * level's ceiling: on that VM the quick cases are L3 cases (32-41% of bw_l3), the full
	 * ones (copy 512, triad 768 MiB) DRAM cases. Quick arrays of 256 MiB would have made
	 * them DRAM cases too, but took the A/B tests (tests/test_ab_cli.c, which spawn
	 * many quick STREAM children) from 3 to 4.7 minutes. */
	double n = ctx->quick ? (double)(1 << 24) : (double)(1 << 26);
	cJSON *a = cJSON_CreateArray(), *o = cJSON_CreateObject();
	if (!a || !o || !cJSON_AddNumberToObject(o, "n", n)) {
		cJSON_Delete(o);
		cJSON_Delete(a);
		return NULL;
	}
	cJSON_AddItemToArray(a, o);
	return a;
}

static int stream_n(const cJSON *params, size_t *n)
{
	double v = ocb_pfloat_or(params, "n", -1);
	if (!(v >= 1 && v <= 4e9) || v != floor(v))
		return ocb_seterr(OCB_EINVAL, "stream: params.n must be a whole number 1..4e9");
	*n = (size_t)v;
	return OCB_OK;
}

static int stream_setup(int triad, const cJSON *params, const struct ocb_ctx *ctx,
			void **state)
{
	struct stream_state *s = NULL;
	size_t n = 0;
	int rc;

	*state = NULL;
	if ((rc = stream_n(params, &n)))
		return rc;
	s = calloc(1, sizeof *s);
	if (!s)
		return ocb_seterr(OCB_ENOMEM, "stream: no memory");
	s->triad = triad;
	s->n = n;
	s->threads = ocb_baseline_threads(ctx);
	/* One allocation for the group; each array starts on a 64-byte line. Not ocb_alloc:
	 * its memset would first-touch every page from this one thread. */
	size_t stride = ocb_round_up(n * sizeof(float), OCB_ALIGN);
	if (posix_memalign(&s->buf, OCB_ALIGN, (size_t)(triad ? 3 : 2) * stride) != 0) {
		free(s);
		return ocb_seterr(OCB_ENOMEM, "stream: cannot allocate %zu bytes",
				  (size_t)(triad ? 3 : 2) * stride);
	}
	s->x = s->buf;
	s->y = (float *)((char *)s->buf + stride);
	s->z = triad ? (float *)((char *)s->buf + 2 * stride) : NULL;
	/* Integers < 2^12: b + 3 c is exact in fp32 with or without FMA. */
	ocb_stream_fill(s->x, n, 0.0f, 0.0f, s->threads);
	ocb_stream_fill(s->y, n, 1.0f, 1.0f, s->threads);
	if (triad)
		ocb_stream_fill(s->z, n, 2.0f, 1.0f, s->threads);
	*state = s;
	return OCB_OK;
}

static int copy_setup(const cJSON *p, const struct ocb_ctx *c, void **st)
{
	return stream_setup(0, p, c, st);
}

static int triad_setup(const cJSON *p, const struct ocb_ctx *c, void **st)
{
	return stream_setup(1, p, c, st);
}

static int stream_run(void *state)
{
	struct stream_state *s = state;
	if (s->triad)
		ocb_stream_triad(s->x, s->y, s->z, TRIAD_S, s->n, 1, s->threads);
	else
		ocb_stream_copy(s->y, s->x, s->n, 1, s->threads);
	return OCB_OK;
}

/* Copy c = a: set a, clear c, run, compare every element exactly.
 * Triad: clear a, run, compare a[i] with b[i] + 3 c[i] exactly. */
static int stream_check(void *state, double *err)
{
	struct stream_state *s = state;
	size_t bad = 0, first = 0;
	if (s->triad)
		ocb_stream_fill(s->x, s->n, -1.0f, 0.0f, s->threads);
	else {
		ocb_stream_fill(s->x, s->n, 5.0f, 1.0f, s->threads); /* a: the source */
		ocb_stream_fill(s->y, s->n, -1.0f, 0.0f, s->threads);
	}
	stream_run(s);
	for (size_t i = 0; i < s->n; i++) {
		float want = s->triad ? s->y[i] + TRIAD_S * s->z[i] : s->x[i];
		float got = s->triad ? s->x[i] : s->y[i];
		if (memcmp(&want, &got, sizeof want) != 0 && bad++ == 0)
			first = i;
	}
	*err = bad ? (double)bad / (double)s->n : 0.0;
	if (bad)
		return ocb_seterr(OCB_ECHECK, "stream_%s n=%zu: %zu wrong elements, first at %zu",
				  s->triad ? "triad" : "copy", s->n, bad, first);
	return OCB_OK;
}

static int copy_work(const cJSON *params, struct ocb_work *w)
{
	size_t n = 0;
	int rc = stream_n(params, &n);
	if (rc)
		return rc;
	w->flops = 0.0;
	w->bytes = 2.0 * sizeof(float) * (double)n;
	w->cycle = w->bytes; /* the same two arrays every pass */
	w->bound = "bw_*"; /* read bandwidth of the level the arrays live in */
	return OCB_OK;
}

static int triad_work(const cJSON *params, struct ocb_work *w)
{
	size_t n = 0;
	int rc = stream_n(params, &n);
	if (rc)
		return rc;
	w->flops = 2.0 * (double)n;
	w->bytes = 3.0 * sizeof(float) * (double)n;
	w->cycle = w->bytes;
	w->bound = "bw_*_triad"; /* the triad ceiling of the level the arrays live in */
	return OCB_OK;
}

static const char *stream_variant(void *state)
{
	(void)state;
	return ocb_cpu_avx2() ? "avx2" : "ref";
}

static void stream_teardown(void *state)
{
	struct stream_state *s = state;
	if (!s)
		return;
	free(s->buf);
	free(s);
}

/* Declared parameters (collect/params.h), of copy and triad alike. */
static const struct ocb_param stream_params[] = {
	{"n", OCB_P_INT, "67108864", 1, 4e9, NULL, "elements", "fp32 elements per array"},
	{0},
};

const struct ocb_bench ocb_bench_stream_copy = {
	.name = "stream_copy",
	.doc = "STREAM copy c = a on fp32 arrays (bytes 2 x 4 n)",
	.kind = OCB_KERNEL,
	.params = stream_params,
	.cases = stream_cases,
	.setup = copy_setup,
	.run = stream_run,
	.check = stream_check,
	.work = copy_work,
	.variant = stream_variant,
	.teardown = stream_teardown,
	.sweep_threads = 1,
};

const struct ocb_bench ocb_bench_stream_triad = {
	.name = "stream_triad",
	.doc = "STREAM triad a = b + s c on fp32 arrays (bytes 3 x 4 n, 2 n flops)",
	.kind = OCB_KERNEL,
	.params = stream_params,
	.cases = stream_cases,
	.setup = triad_setup,
	.run = stream_run,
	.check = stream_check,
	.work = triad_work,
	.variant = stream_variant,
	.teardown = stream_teardown,
	.sweep_threads = 1,
};
