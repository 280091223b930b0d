/* harness_overhead: does the harness add measurable time to what it measures?
 *
 * For a float sum over n elements (n = 256 .. 1 Mi: ~30 ns to ~300 us per call, so both
 * the batched path (< 50 us) and the one-call-per-sample path are exercised) it compares
 *   direct  : median over 31 trials of (time of R back-to-back calls) / R, R chosen so a
 *             trial lasts ~200 us (as a harness sample): the call with no harness around;
 *   harness : the median per-call time ocb_harness_case() reports for the same kernel.
 * ratio = harness / direct should be ~1. Exit 1 when any ratio exceeds 1.5 (a loose
 * bound: this machine is shared and noisy; a real overhead shows up far above it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../collect/harness.h"
#include "../../common/ocb_alloc.h"
#include "../../common/ocb_json.h"
#include "../../common/ocb_stats.h"
#include "../../common/ocb_time.h"

struct sum_state {
	float *x;
	size_t n;
	volatile float out;
};

static int sum_run(void *st)
{
	struct sum_state *s = st;
	float acc[8] = {0};
	for (size_t i = 0; i < s->n; i += 8)
		for (int k = 0; k < 8; k++)
			acc[k] += s->x[i + k];
	s->out = acc[0] + acc[1] + acc[2] + acc[3] + acc[4] + acc[5] + acc[6] + acc[7];
	return 0;
}

static struct sum_state S;

static int sum_setup(const cJSON *p, const struct ocb_ctx *ctx, void **state)
{
	(void)ctx;
	S.n = (size_t)ocb_json_num(p, "n", 1024);
	S.x = ocb_alloc(S.n * sizeof *S.x);
	if (!S.x)
		return -7;
	for (size_t i = 0; i < S.n; i++)
		S.x[i] = (float)(i % 7) * 0.25f;
	*state = &S;
	return 0;
}

static void sum_teardown(void *st)
{
	struct sum_state *s = st;
	ocb_free(s->x);
	s->x = NULL;
}

static int sum_work(const cJSON *p, struct ocb_work *w)
{
	double n = ocb_json_num(p, "n", 1024);
	w->flops = n;
	w->bytes = 4 * n;
	w->bound = NULL;
	return 0;
}

static const struct ocb_bench sum_bench = {
	.name = "sum_f32", .kind = OCB_KERNEL, .setup = sum_setup,
	.run = sum_run, .work = sum_work, .teardown = sum_teardown,
};

/* The direct measurement: no harness, one clock pair per trial. */
static double direct_per_call(void *st)
{
	uint64_t t0 = ocb_now_ns();
	long r = 0;
	do {
		sum_run(st);
		r++;
	} while (ocb_now_ns() - t0 < 200000);
	double trials[31];
	for (int t = 0; t < 31; t++) {
		uint64_t a = ocb_now_ns();
		for (long i = 0; i < r; i++)
			sum_run(st);
		trials[t] = (double)(ocb_now_ns() - a) * 1e-9 / (double)r;
	}
	return ocb_median(trials, 31);
}

int main(void)
{
	const long sizes[] = {256, 4096, 65536, 1 << 20};
	struct ocb_ctx ctx = {.threads = 1};
	struct ocb_harness_opts o;
	ocb_harness_defaults(&o);
	o.budget_s = 0.5;
	int bad = 0;

	printf("%-10s %14s %14s %8s %6s\n", "n", "direct_s", "harness_s", "ratio", "reps");
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddNumberToObject(p, "n", (double)sizes[i]);
		struct ocb_result r;
		if (ocb_harness_case(&sum_bench, p, &ctx, &o, NULL, &r) != 0 ||
		    r.status[0] != 'o') {
			fprintf(stderr, "harness_overhead: %s\n", r.error);
			return 3;
		}
		void *st = NULL;
		sum_setup(p, &ctx, &st);
		double d = direct_per_call(st);
		sum_teardown(st);
		double ratio = r.st.median / d;
		printf("%-10ld %14.4g %14.4g %8.3f %6ld\n", sizes[i], d, r.st.median, ratio, r.st.n);
		if (!(ratio < 1.5))
			bad = 1;
		free(r.params_json);
		free(r.samples);
		free(r.counters);
		cJSON_Delete(p);
	}
	if (bad)
		fprintf(stderr, "harness_overhead: harness/direct above 1.5\n");
	return bad;
}
