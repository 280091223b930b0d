/* fuzz_idx: IDX image + label files (workloads/data_idx.h), plain or gzip'd, through
 * ocb_idx_load and, when accepted, ocb_idx_standardize and ocb_idx_gather as training
 * does. Input: u16 little-endian length L of the images file, L bytes of it, the rest is
 * the labels file (a shorter input: all images, empty labels). */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../workloads/data_idx.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ocb_idx_set s = {0};
	char pimg[32], plab[32];
	size_t li;
	int fi = -1, fl = -1;

	if (size < 2)
		return 0;
	li = (size_t)data[0] | (size_t)data[1] << 8;
	data += 2, size -= 2;
	if (li > size)
		li = size;
	fi = fuzz_memfile(data, li, pimg);
	fl = fuzz_memfile(data + li, size - li, plab);
	if (fi < 0 || fl < 0)
		goto out;
	if (fuzz_note("idx", ocb_idx_load(pimg, plab, 0, 0, 10, &s)) == 0) {
		int k = s.n < 4 ? s.n : 4;
		float *x = malloc((size_t)k * (size_t)s.dim * sizeof *x + 1);
		int y[4];
		ocb_idx_standardize(&s);
		if (x && k > 0)
			ocb_idx_gather(&s, NULL, s.n - k, k, x, y);
		free(x);
		ocb_idx_release(&s);
	}
out:
	if (fi >= 0)
		close(fi);
	if (fl >= 0)
		close(fl);
	return 0;
}
