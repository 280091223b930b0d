/* bsr: storage, conversion, plain-C products and the dispatch (see bsr.h). */
#include "bsr.h"

#include <string.h>

#include "../common/ocb_alloc.h"
#include "../common/ocb_error.h"
#include "bsr_impl.h"

static int block_dim_ok(int d)
{
	return d == 1 || d == 4 || d == 8 || d == 16 || d == 32 || d == 64;
}

int ocb_bsr_shape_ok(int m, int k, int br, int bc)
{
	if (!block_dim_ok(br) || !block_dim_ok(bc) || (br == 1 && bc == 1))
		return 0;
	/* square, 1 x B or B x 1 */
	if (br != bc && br != 1 && bc != 1)
		return 0;
	return m > 0 && k > 0 && m % br == 0 && k % bc == 0;
}

/* Carves the index arrays and values out of one allocation (values 64-byte aligned). */
static int bsr_alloc(struct ocb_bsr *b, int nnzb)
{
	size_t ints = (size_t)(b->mb + 1) + (size_t)(b->kb + 1) + 3 * (size_t)nnzb;
	size_t ibytes = ocb_round_up(ints * sizeof(int32_t), 64);
	size_t vbytes = (size_t)nnzb * b->br * b->bc * sizeof(float);
	b->block = ocb_alloc(ibytes + vbytes + 64);
	if (!b->block)
		return ocb_seterr(OCB_ENOMEM, "bsr: out of memory (%zu bytes)", ibytes + vbytes);
	int32_t *p = b->block;
	b->row_ptr = p;
	p += b->mb + 1;
	b->col_ptr = p;
	p += b->kb + 1;
	b->col_idx = p;
	p += nnzb;
	b->t_blk = p;
	p += nnzb;
	b->t_row = p;
	b->val = (float *)((char *)b->block + ibytes);
	b->nnzb = nnzb;
	return OCB_OK;
}

/* The transpose index: counting sort of the blocks by block column, stable in block row. */
static void bsr_build_transpose(struct ocb_bsr *b)
{
	memset(b->col_ptr, 0, (size_t)(b->kb + 1) * sizeof(int32_t));
	for (int i = 0; i < b->nnzb; i++)
		b->col_ptr[b->col_idx[i] + 1]++;
	for (int j = 0; j < b->kb; j++)
		b->col_ptr[j + 1] += b->col_ptr[j];
	for (int i = 0; i < b->mb; i++)
		for (int p = b->row_ptr[i]; p < b->row_ptr[i + 1]; p++) {
			int j = b->col_idx[p];
			int q = b->col_ptr[j]++;
			b->t_blk[q] = p;
			b->t_row[q] = i;
		}
	for (int j = b->kb; j > 0; j--) /* undo the shift the fill made */
		b->col_ptr[j] = b->col_ptr[j - 1];
	b->col_ptr[0] = 0;
}

int ocb_bsr_from_mask(struct ocb_bsr *b, const uint8_t *mask, const float *w, int m, int k,
		      int br, int bc)
{
	memset(b, 0, sizeof *b);
	if (!mask || !ocb_bsr_shape_ok(m, k, br, bc))
		return ocb_seterr(OCB_EINVAL, "bsr: %dx%d blocks do not tile a %dx%d matrix (block "
					      "sides 1,4..64, square, 1xB or Bx1)", br, bc, m, k);
	b->m = m, b->k = k, b->br = br, b->bc = bc;
	b->mb = m / br, b->kb = k / bc;
	long nnzb = 0;
	for (long i = 0; i < (long)b->mb * b->kb; i++)
		nnzb += mask[i] != 0;
	int rc = bsr_alloc(b, (int)nnzb);
	if (rc) {
		memset(b, 0, sizeof *b);
		return rc;
	}
	int p = 0;
	b->row_ptr[0] = 0;
	for (int i = 0; i < b->mb; i++) {
		for (int j = 0; j < b->kb; j++)
			if (mask[(size_t)i * b->kb + j])
				b->col_idx[p++] = j;
		b->row_ptr[i + 1] = p;
	}
	bsr_build_transpose(b);
	if (w)
		ocb_bsr_gather(b, w);
	else
		memset(b->val, 0, (size_t)nnzb * br * bc * sizeof(float));
	return OCB_OK;
}

int ocb_bsr_from_dense(struct ocb_bsr *b, const float *w, int m, int k, int br, int bc)
{
	memset(b, 0, sizeof *b);
	if (!w || !ocb_bsr_shape_ok(m, k, br, bc))
		return ocb_bsr_from_mask(b, NULL, w, m, k, br, bc);
	int mb = m / br, kb = k / bc;
	uint8_t *mask = ocb_alloc((size_t)mb * kb);
	if (!mask)
		return ocb_seterr(OCB_ENOMEM, "bsr: out of memory");
	memset(mask, 0, (size_t)mb * kb);
	for (int r = 0; r < m; r++)
		for (int c = 0; c < k; c++)
			if (w[(size_t)r * k + c] != 0.0f)
				mask[(size_t)(r / br) * kb + c / bc] = 1;
	int rc = ocb_bsr_from_mask(b, mask, w, m, k, br, bc);
	ocb_free(mask);
	return rc;
}

void ocb_bsr_release(struct ocb_bsr *b)
{
	if (!b)
		return;
	ocb_free(b->block);
	memset(b, 0, sizeof *b);
}

void ocb_bsr_gather(struct ocb_bsr *b, const float *w)
{
	int br = b->br, bc = b->bc;
	for (int i = 0; i < b->mb; i++)
		for (int p = b->row_ptr[i]; p < b->row_ptr[i + 1]; p++) {
			const float *src = w + (size_t)i * br * b->k + (size_t)b->col_idx[p] * bc;
			float *dst = b->val + (size_t)p * br * bc;
			for (int r = 0; r < br; r++)
				memcpy(dst + (size_t)r * bc, src + (size_t)r * b->k, bc * sizeof(float));
		}
}

void ocb_bsr_scatter(const struct ocb_bsr *b, const float *vals, float *w, int zero_rest)
{
	int br = b->br, bc = b->bc;
	if (zero_rest)
		memset(w, 0, (size_t)b->m * b->k * sizeof(float));
	for (int i = 0; i < b->mb; i++)
		for (int p = b->row_ptr[i]; p < b->row_ptr[i + 1]; p++) {
			float *dst = w + (size_t)i * br * b->k + (size_t)b->col_idx[p] * bc;
			const float *src = vals + (size_t)p * br * bc;
			for (int r = 0; r < br; r++)
				memcpy(dst + (size_t)r * b->k, src + (size_t)r * bc, bc * sizeof(float));
		}
}

size_t ocb_bsr_bytes(const struct ocb_bsr *b)
{
	return (size_t)b->nnzb * b->br * b->bc * sizeof(float) +
	       ((size_t)b->mb + 1 + (size_t)b->nnzb) * sizeof(int32_t);
}

double ocb_bsr_bytes_quant(const struct ocb_bsr *b, double value_bits)
{
	return (double)b->nnzb * b->br * b->bc * value_bits / 8.0 +
	       ((double)b->mb + 1 + b->nnzb) * sizeof(int32_t);
}

double ocb_bsr_density(const struct ocb_bsr *b)
{
	double all = (double)b->mb * b->kb;
	return all > 0 ? b->nnzb / all : 0.0;
}

double ocb_bsr_flops(const struct ocb_bsr *w, int n)
{
	return 2.0 * w->nnzb * w->br * w->bc * (double)n;
}

void bsr_split(const int32_t *ptr, int nitems, int t, int nt, int *lo, int *hi)
{
	/* cost of rows [0, i) = ptr[i] + i; thread t starts at the first row whose prefix
	 * cost reaches t/nt of the total */
	double total = (double)ptr[nitems] + nitems;
	int bounds[2];
	for (int e = 0; e < 2; e++) {
		double target = total * (t + e) / nt;
		int a = 0, z = nitems;
		while (a < z) {
			int mid = (a + z) / 2;
			if ((double)ptr[mid] + mid < target)
				a = mid + 1;
			else
				z = mid;
		}
		bounds[e] = a;
	}
	*lo = bounds[0];
	*hi = t == nt - 1 ? nitems : bounds[1];
}
