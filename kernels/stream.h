/* stream: memory-bandwidth kernels on fp32 arrays, for the roofline's bandwidth
 * ceilings (ERT-style working-set sweep) and for the STREAM baseline benches
 * (McCalpin, STREAM, https://www.cs.virginia.edu/stream/; REFERENCE.md §3):
 *   sum    s = sum_i x[i]            reads 4 n bytes
 *   copy   c[i] = a[i]               counted 2 x 4 n bytes
 *   triad  a[i] = b[i] + s * c[i]    counted 3 x 4 n bytes, 2 n flops
 * (write-allocate traffic is not counted, as in STREAM).
 *
 * Every kernel is multi-threaded with OpenMP: thread t of the team works on its own
 * contiguous slice (boundaries on 64-byte multiples), the same slice in every call, and
 * repeats its slice `reps` times inside one parallel region so that small working sets
 * are not drowned by the cost of starting the team. Callers own every buffer; nothing
 * here allocates. threads <= 0 means the OpenMP default team.
 *
 * Each kernel has a plain-C _ref twin and an AVX2 variant (call _avx2 only when
 * ocb_cpu_avx2()), the sum also an AVX-512 one; the unsuffixed name dispatches at run
 * time to the widest the CPU has. */
#ifndef OCB_STREAM_H
#define OCB_STREAM_H

#include <stddef.h>

/* [*lo, *hi) of thread t of nt over n floats; boundaries are multiples of 16 floats. */
void ocb_stream_slice(size_t n, int nt, int t, size_t *lo, size_t *hi);

/* x[i] = v0 + dv * (i % 1024), written by the same threads and slices the kernels use
 * (first touch places the pages near the thread that will read them). */
void ocb_stream_fill(float *x, size_t n, float v0, float dv, int threads);

/* Sum of x[0..n) (computed reps times; the last pass's value is returned). */
double ocb_stream_sum(const float *x, size_t n, long reps, int threads);
/* The read loops a read ceiling takes the best of on this CPU (stream.c says why):
 * variant 0 the dispatching one-stream loop (zmm where the CPU has AVX-512F, else ymm);
 * where it has AVX-512F, 1 the one-stream ymm loop; then the widest loop on 2 and on 4
 * streams per thread (each thread's slice cut in 2 or 4 parts read side by side), and on
 * 4 with a software prefetch 2 KiB ahead: 5 variants with AVX-512F, 4 with AVX2, 1
 * without. ocb_stream_sum_variant(v, ..) runs variant v (0, or any v out of range:
 * ocb_stream_sum). */
int ocb_stream_sum_variants(void);
double ocb_stream_sum_variant(int v, const float *x, size_t n, long reps, int threads);
/* The loads the dispatching kernels use on this CPU, for method texts: the read
 * ceiling's (sum != 0: "AVX-512F or AVX2 on 1, 2 or 4 streams per thread (4 also with a
 * prefetch), the best", or its AVX2 form) or the triad's and copy's ("AVX2"); "C"
 * without AVX2. */
const char *ocb_stream_isa(int sum);
double ocb_stream_sum_ref(const float *x, size_t n, long reps, int threads);
double ocb_stream_sum_avx2(const float *x, size_t n, long reps, int threads);
/* Call only when ocb_cpu_avx512f(); the dispatcher prefers it to the AVX2 one (stream.c). */
double ocb_stream_sum_avx512(const float *x, size_t n, long reps, int threads);

/* a[i] = b[i] + s * c[i] for i < n, reps times. The AVX2 variant multiplies and adds
 * separately (no FMA), so it is bit-identical to _ref. */
void ocb_stream_triad(float *a, const float *b, const float *c, float s, size_t n, long reps,
		      int threads);
void ocb_stream_triad_ref(float *a, const float *b, const float *c, float s, size_t n,
			  long reps, int threads);
void ocb_stream_triad_avx2(float *a, const float *b, const float *c, float s, size_t n,
			   long reps, int threads);

/* c[i] = a[i] for i < n, reps times. */
void ocb_stream_copy(float *c, const float *a, size_t n, long reps, int threads);
void ocb_stream_copy_ref(float *c, const float *a, size_t n, long reps, int threads);
void ocb_stream_copy_avx2(float *c, const float *a, size_t n, long reps, int threads);

#endif
