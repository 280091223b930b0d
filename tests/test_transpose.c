/* Criterion suite `transpose` (kernels/transpose.h): the tiled AVX2 path, threaded and
 * not, and the scalar-forced path against the plain loop, over shapes with and without
 * 8-row / 8-column edges. A transpose moves values without arithmetic, so the paths are
 * identical by construction and compared bit for bit. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "../common/ocb_cpu.h"
#include "../common/ocb_rng.h"
#include "../kernels/transpose.h"

static void check_shape(int rows, int cols, int threads)
{
	size_t n = (size_t)rows * cols;
	float *src = malloc(n * sizeof(float)), *want = malloc(n * sizeof(float));
	float *got = malloc(n * sizeof(float));
	struct ocb_rng r;
	ocb_rng_seed(&r, (uint64_t)rows * 1000 + cols);
	for (size_t i = 0; i < n; i++)
		src[i] = ocb_rng_uniformf(&r) - 0.5f;
	ocb_transpose_ref(src, rows, cols, want);
	for (size_t i = 0; i < n; i++) /* spot check of the reference itself */
		cr_assert_eq(want[(i % cols) * rows + i / cols], src[i]);
	memset(got, 0xff, n * sizeof(float));
	ocb_transpose(src, rows, cols, got, threads);
	cr_assert_eq(memcmp(got, want, n * sizeof(float)), 0, "%dx%d, %d threads", rows, cols,
		     threads);
	free(src), free(want), free(got);
}

Test(transpose, matches_plain_loop_every_shape_and_path)
{
	static const int shapes[][2] = {{1, 1}, {1, 9}, {9, 1}, {8, 8}, {7, 13}, {16, 24},
					{256, 784}, {784, 256}, {257, 515}, {512, 256}};
	for (int forced = 0; forced < 2; forced++) {
		if (forced)
			setenv("OCB_FORCE_SCALAR", "1", 1);
		ocb_cpu_reset();
		for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
			for (int t = 1; t <= 2; t++)
				check_shape(shapes[s][0], shapes[s][1], t);
		if (forced)
			unsetenv("OCB_FORCE_SCALAR");
		ocb_cpu_reset();
	}
}
