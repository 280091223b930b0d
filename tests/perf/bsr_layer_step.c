/* bsr_layer_step: the training step of the sparse MLP's pruned layers alone (issue 11's
 * ">= 3x faster than the dense step on the same layers at 90%"), outside the runner:
 * the layers 784 -> 512 (no dX: the model's first layer) and 512 -> 256 (with dX), batch
 * 256, B x B blocks kept by magnitude (ocb_bsr_layer_prune on random weights: a random
 * mask) at each density, timed by ocb_bsr_layer_time_step (the block-sparse step against
 * the same layers dense on OpenBLAS, best of `reps` interleaved rounds), `rounds` times
 * over the densities in turn.
 *
 *   build/perf/bsr_layer_step [block threads reps rounds density%...]
 *   defaults: 8 1 20 3 10 5
 *   OCB_THREAD_CPU=1 (1 thread): the calling thread's CPU clock instead of the wall clock
 *   (a loaded machine's descheduling drops out); OCB_PROCESS_CPU=1: the process's CPU
 *   time (every thread's; with passive OpenMP waiting, the work of both cores).
 * Prints one line per layer and density and their sum: sparse ms, dense ms, ratio. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/ocb_alloc.h"
#include "../../common/ocb_cpu.h"
#include "../../common/ocb_error.h"
#include "../../common/ocb_rng.h"
#include "../../common/ocb_time.h"
#include "../../workloads/bsr_layer.h"

#define BATCH 256

struct layer {
	struct ocb_linear l;
	struct ocb_bsr_layer L;
	float *mem;
};

static int layer_init(struct layer *y, int in, int out, int B, int threads, uint64_t seed)
{
	memset(y, 0, sizeof *y);
	size_t nw = (size_t)in * out;
	y->mem = ocb_alloc((2 * nw + 2 * (size_t)out) * sizeof(float));
	if (!y->mem)
		return ocb_seterr(OCB_ENOMEM, "out of memory");
	y->l = (struct ocb_linear){.in = in, .out = out, .w = y->mem, .gw = y->mem + nw,
				   .b = y->mem + 2 * nw, .gb = y->mem + 2 * nw + out};
	memset(y->mem + nw, 0, (nw + 2 * (size_t)out) * sizeof(float));
	struct ocb_rng r;
	ocb_rng_seed(&r, seed);
	for (size_t i = 0; i < nw; i++)
		y->l.w[i] = (float)(0.05 * ocb_rng_normal(&r));
	return ocb_bsr_layer_init(&y->L, &y->l, B, BATCH, threads);
}

static void layer_free(struct layer *y)
{
	ocb_bsr_layer_release(&y->L, &y->l);
	ocb_free(y->mem);
}

int main(int argc, char **argv)
{
	/* as the other perf programs: passive OpenMP waiting on a shared 2-core VM */
	if (!getenv("OMP_WAIT_POLICY")) {
		setenv("OMP_WAIT_POLICY", "passive", 1);
		execv("/proc/self/exe", argv);
	}
	int B = argc > 1 ? atoi(argv[1]) : 8, threads = argc > 2 ? atoi(argv[2]) : 1;
	int reps = argc > 3 ? atoi(argv[3]) : 20, rounds = argc > 4 ? atoi(argv[4]) : 3;
	double dens[8] = {10, 5};
	int nd = 2;
	if (argc > 5)
		for (nd = 0; nd < 8 && 5 + nd < argc; nd++)
			dens[nd] = atof(argv[5 + nd]);
	double (*clock)(void) = ocb_now_s;
	const char *cname = "wall time";
	if (getenv("OCB_THREAD_CPU") && threads == 1)
		clock = ocb_thread_cpu_s, cname = "thread CPU time";
	else if (getenv("OCB_PROCESS_CPU"))
		clock = ocb_process_cpu_s, cname = "process CPU time";
	static const int dims[][3] = {{784, 512, 0}, {512, 256, 1}}; /* in, out, with dX */
	struct layer ly[2];
	for (int i = 0; i < 2; i++)
		if (layer_init(&ly[i], dims[i][0], dims[i][1], B, threads, 11 + i)) {
			fprintf(stderr, "ocbench: bsr_layer_step: %s\n", ocb_lasterr());
			return 2;
		}
	printf("# %s; OpenBLAS %s; %dx%d blocks, batch %d, %d threads, best of %d, %s, path %s\n",
	       ocb_cpu_id()->brand, openblas_get_corename(), B, B, BATCH, threads, reps, cname,
	       ocb_bsr_path(&ly[0].L.s));
	printf("# round dens%%  layer    sparse_ms  dense_ms  ratio\n");
	for (int r = 0; r < rounds; r++)
		for (int d = 0; d < nd; d++) {
			double sum_s = 0, sum_d = 0;
			for (int i = 0; i < 2; i++) {
				double sp, dn;
				/* magnitude pruning of random weights from a full mask: random blocks */
				if (ocb_bsr_layer_prune(&ly[i].L, &ly[i].l, 1.0 - dens[d] / 100.0, 0.0,
							NULL) ||
				    ocb_bsr_layer_time_step(&ly[i].L, &ly[i].l, BATCH, dims[i][2],
							    threads, reps, clock, &sp, &dn)) {
					fprintf(stderr, "ocbench: bsr_layer_step: %s\n", ocb_lasterr());
					return 3;
				}
				printf("  %d  %5.1f  %3dx%-4d %9.3f %9.3f %6.2f\n", r, dens[d],
				       dims[i][1], dims[i][0], sp * 1e3, dn * 1e3, dn / sp);
				sum_s += sp, sum_d += dn;
			}
			printf("  %d  %5.1f  both     %9.3f %9.3f %6.2f\n", r, dens[d], sum_s * 1e3,
			       sum_d * 1e3, sum_d / sum_s);
			fflush(stdout);
		}
	for (int i = 0; i < 2; i++)
		layer_free(&ly[i]);
	return 0;
}
