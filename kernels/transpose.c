/* transpose: see transpose.h. The 8 x 8 register transpose is the usual unpack /
 * shuffle / 128-bit-lane permute sequence (Intel's intrinsics guide documents each
 * instruction's lane movement). */
#include "transpose.h"

#include <immintrin.h>
#include <omp.h>
#include <stddef.h>

#include "../common/ocb_cpu.h"

/* Below this many elements one thread does it (a parallel region costs more). */
#define PAR_MIN (64 * 1024)
/* Source rows per strip (a multiple of 8): 32 -> 128 contiguous bytes per destination row. */
#define STRIP 32

void ocb_transpose_ref(const float *src, int rows, int cols, float *dst)
{
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++)
			dst[(size_t)c * rows + r] = src[(size_t)r * cols + c];
}

/* dst[c0 .. c0+8)[r0 .. r0+8) = src[r0 .. r0+8)[c0 .. c0+8) transposed. */
static __attribute__((target("avx2"))) inline void tile8(const float *src, int cols,
							  float *dst, int rows, int r0, int c0)
{
	const float *s = src + (size_t)r0 * cols + c0;
	__m256 a[8], t[8];
	for (int i = 0; i < 8; i++)
		a[i] = _mm256_loadu_ps(s + (size_t)i * cols);
	for (int i = 0; i < 8; i += 2) {
		t[i] = _mm256_unpacklo_ps(a[i], a[i + 1]);
		t[i + 1] = _mm256_unpackhi_ps(a[i], a[i + 1]);
	}
	/* a[4h + j]: rows 4h..4h+3, column pair j of each 128-bit lane */
	for (int h = 0; h < 2; h++) {
		a[4 * h + 0] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0x44);
		a[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0xee);
		a[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0x44);
		a[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0xee);
	}
	float *d = dst + (size_t)c0 * rows + r0;
	for (int j = 0; j < 4; j++) {
		_mm256_storeu_ps(d + (size_t)j * rows, _mm256_permute2f128_ps(a[j], a[4 + j], 0x20));
		_mm256_storeu_ps(d + (size_t)(j + 4) * rows,
				 _mm256_permute2f128_ps(a[j], a[4 + j], 0x31));
	}
}

__attribute__((target("avx2"))) void ocb_transpose_8x8(const float *src, int lds, float *dst,
							 int ldd)
{
	/* tile8 with the strides as its row counts: dst row c at dst + c*ldd */
	tile8(src, lds, dst, ldd, 0, 0);
}

/* Source rows [r0, r1) (r1 - r0 <= STRIP): for each 8 columns, the strip's whole 8-row
 * groups as 8 x 8 tiles (so each destination row gets STRIP contiguous floats, whole cache
 * lines, while the strip's source lines stay in L1), then what the tiles did not cover
 * element by element: the last columns, and the rows of a short last group. */
static __attribute__((target("avx2"))) void strip_avx2(const float *src, int rows, int cols,
							float *dst, int r0, int r1)
{
	int rt = r0 + (r1 - r0) / 8 * 8, c = 0; /* rows [r0, rt) in whole groups of 8 */
	for (; c + 8 <= cols; c += 8)
		for (int r = r0; r < rt; r += 8)
			tile8(src, cols, dst, rows, r, c);
	for (int r = r0; r < r1; r++)
		for (int cc = r < rt ? c : 0; cc < cols; cc++)
			dst[(size_t)cc * rows + r] = src[(size_t)r * cols + cc];
}

void ocb_transpose(const float *src, int rows, int cols, float *dst, int threads)
{
	if (!ocb_cpu_avx2()) {
		ocb_transpose_ref(src, rows, cols, dst);
		return;
	}
	int strips = (rows + STRIP - 1) / STRIP;
	int nt = (size_t)rows * cols < PAR_MIN ? 1 : threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(nt)
	for (int s = 0; s < strips; s++) {
		int r0 = STRIP * s, r1 = r0 + STRIP < rows ? r0 + STRIP : rows;
		strip_avx2(src, rows, cols, dst, r0, r1);
	}
}
