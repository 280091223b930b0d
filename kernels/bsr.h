/* bsr: block compressed sparse row (BSR) storage of a weight matrix W [m][k] and the three
 * products training with a block-sparse W needs. Blocks are br x bc with br, bc in
 * {1, 4, 8, 16, 32, 64} (square B x B, or the rectangular 1 x B and B x 1 variants); m is
 * a multiple of br and k of bc.
 *
 * Layout (row-major everywhere, the shapes):
 *   W   [m][k]    sparse, stored as BSR: block row i holds blocks row_ptr[i]..row_ptr[i+1]-1,
 *                 block b sits at block column col_idx[b], its values val[b][br][bc]
 *                 (row-major inside the block). A transpose index (col_ptr, t_blk) lists
 *                 the blocks of each block column in block-row order, for W^T products.
 *   X   [k][n]    dense, n contiguous (ld >= n)
 *   Y   [m][n]    Y  = W X                       (ocb_bsr_spmm)
 *   dX  [k][n]    dX = W^T dY                    (ocb_bsr_spmm_t)
 *   dW  [nnzb][br][bc]  dW = dY X^T on W's nonzero blocks only (ocb_bsr_sddmm), the same
 *                 block order as val.
 *
 * Every product has a plain-C `_ref` twin; the plain names take a SIMD micro-kernel when
 * the blocks are square with B a multiple of 4: AVX-512F (bsr_avx512.c) when
 * ocb_cpu_avx512f(), else AVX2+FMA (bsr_avx2.c) when ocb_cpu_avx2(); else the `_ref` path. Threads: OpenMP over block rows (block columns for W^T),
 * split so each thread gets about the same number of nonzero blocks; every output element
 * is written by one thread in a fixed order, so results do not depend on the thread count.
 * threads <= 0: OpenMP's default.
 *
 * Memory (DESIGN.md style 6): one allocation holds the index arrays and val;
 * ocb_bsr_release frees it. Errors: OCB_EINVAL (bad shape/block size), OCB_ENOMEM. */
#ifndef OCB_BSR_H
#define OCB_BSR_H

#include <stddef.h>
#include <stdint.h>

struct ocb_bsr {
	int m, k;        /* dense shape */
	int br, bc;      /* block shape */
	int mb, kb;      /* block rows m/br, block columns k/bc */
	int nnzb;        /* stored blocks */
	int32_t *row_ptr; /* [mb + 1] */
	int32_t *col_idx; /* [nnzb] block column of each block */
	int32_t *col_ptr; /* [kb + 1] transpose index: blocks of each block column ... */
	int32_t *t_blk;   /* [nnzb] ... as indices into val, in block-row order, */
	int32_t *t_row;   /* [nnzb] ... and their block rows */
	float *val;       /* [nnzb][br][bc] */
	void *block;      /* the one allocation */
};

/* 1 if (br, bc) is a supported block shape for an m x k matrix. */
int ocb_bsr_shape_ok(int m, int k, int br, int bc);

/* Builds the structure from a block mask mask[mb][kb] (non-zero: the block is stored) and
 * copies the values from dense w[m][k] (w may be NULL: values zero). *b is initialised
 * here; on failure there is nothing to release. */
int ocb_bsr_from_mask(struct ocb_bsr *b, const uint8_t *mask, const float *w, int m, int k,
		      int br, int bc);
/* Dense -> BSR: a block is stored when any of its entries is non-zero. */
int ocb_bsr_from_dense(struct ocb_bsr *b, const float *w, int m, int k, int br, int bc);
void ocb_bsr_release(struct ocb_bsr *b);

/* Copies the stored blocks' values from dense w[m][k] (structure unchanged). */
void ocb_bsr_gather(struct ocb_bsr *b, const float *w);
/* Writes w[m][k]: stored blocks from vals (nnzb blocks, e.g. b->val or a dW), zeros
 * elsewhere when zero_rest != 0 (else the other entries are left alone). */
void ocb_bsr_scatter(const struct ocb_bsr *b, const float *vals, float *w, int zero_rest);

/* Inference bytes: values (4 bytes each) + indices (row_ptr and col_idx, 4 bytes each).
 * The transpose index is a training aid and not counted. */
size_t ocb_bsr_bytes(const struct ocb_bsr *b);
/* Same with the block values stored in a quantized format of value_bits per weight
 * (incl. its scales), e.g. 8.5 for Q8_0, 4.5 for Q4_0 (REFERENCE.md section 2). */
double ocb_bsr_bytes_quant(const struct ocb_bsr *b, double value_bits);
/* Density: stored blocks / all blocks. */
double ocb_bsr_density(const struct ocb_bsr *b);

/* Y[m][n] = W X[k][n] (overwrites Y). */
int ocb_bsr_spmm(const struct ocb_bsr *w, const float *x, int ldx, int n, float *y, int ldy,
		 int threads);
int ocb_bsr_spmm_ref(const struct ocb_bsr *w, const float *x, int ldx, int n, float *y,
		     int ldy, int threads);
/* dX[k][n] = W^T dY[m][n] (overwrites dX). */
int ocb_bsr_spmm_t(const struct ocb_bsr *w, const float *dy, int lddy, int n, float *dx,
		   int lddx, int threads);
int ocb_bsr_spmm_t_ref(const struct ocb_bsr *w, const float *dy, int lddy, int n, float *dx,
		       int lddx, int threads);
/* dW[b] (+)= dY[rows of b][n] X[cols of b][n]^T for every stored block b; dw holds
 * nnzb blocks like w->val. accumulate: 0 overwrite, 1 add. */
int ocb_bsr_sddmm(const struct ocb_bsr *w, const float *dy, int lddy, const float *x, int ldx,
		  int n, float *dw, int accumulate, int threads);
int ocb_bsr_sddmm_ref(const struct ocb_bsr *w, const float *dy, int lddy, const float *x,
		      int ldx, int n, float *dw, int accumulate, int threads);

/* The same three products on row-major activations, as a layer sees them (rows t of a
 * batch of n, features contiguous; workloads/linear.h's shapes), so no transpose is
 * needed around them:
 *   Y  [n][m]  = X [n][k] W^T          (ocb_bsr_spmm_rm; ldx >= k, ldy >= m)
 *   dX [n][k]  = dY [n][m] W           (ocb_bsr_spmm_t_rm; lddy >= m, lddx >= k)
 *   dW [nnzb][br][bc] (+)= dY^T X on the stored blocks (ocb_bsr_sddmm_rm)
 * The SIMD paths (square B % 4 == 0, the same choice as above) of Y and dX first copy
 * each block into the layout their micro-kernel reads, into `scratch` (at least
 * ocb_bsr_rm_scratch_floats(w) floats, 64-byte aligned; NULL: allocated per call,
 * OCB_ENOMEM if it cannot be had; the `_ref` twins ignore it); each output element is
 * summed by one thread in a fixed order. */
size_t ocb_bsr_rm_scratch_floats(const struct ocb_bsr *w);
int ocb_bsr_spmm_rm(const struct ocb_bsr *w, const float *x, int ldx, int n, float *y, int ldy,
		    float *scratch, int threads);
int ocb_bsr_spmm_rm_ref(const struct ocb_bsr *w, const float *x, int ldx, int n, float *y,
			int ldy, float *scratch, int threads);
int ocb_bsr_spmm_t_rm(const struct ocb_bsr *w, const float *dy, int lddy, int n, float *dx,
		      int lddx, float *scratch, int threads);
int ocb_bsr_spmm_t_rm_ref(const struct ocb_bsr *w, const float *dy, int lddy, int n,
			  float *dx, int lddx, float *scratch, int threads);
int ocb_bsr_sddmm_rm(const struct ocb_bsr *w, const float *dy, int lddy, const float *x,
		     int ldx, int n, float *dw, int accumulate, int threads);
int ocb_bsr_sddmm_rm_ref(const struct ocb_bsr *w, const float *dy, int lddy, const float *x,
			 int ldx, int n, float *dw, int accumulate, int threads);

/* Static work models (FLOPs): useful 2 * nnzb * br * bc * n for each product; the dense
 * equivalent is 2 * m * k * n. */
double ocb_bsr_flops(const struct ocb_bsr *w, int n);

/* Name of the path the plain names take for w now: "avx512", "avx2" or "ref". */
const char *ocb_bsr_path(const struct ocb_bsr *w);

#endif
