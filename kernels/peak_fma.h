/* peak_fma: a compute-bound fp32 FMA loop for the roofline's compute ceiling
 * (REFERENCE.md §3, ERT style). Each thread keeps OCB_FMA_ACC independent 8-lane
 * accumulators and updates each with acc = acc * m + c, so the FMA pipes never wait on
 * a previous result (latency 4 x 2 ports needs >= 8 chains; 12 leaves slack).
 * Owns nothing: no allocation, no global state. */
#ifndef OCB_PEAK_FMA_H
#define OCB_PEAK_FMA_H

/* Independent accumulators and lanes per accumulator (one ymm register of floats). */
#define OCB_FMA_ACC 12
#define OCB_FMA_LANES 8
/* Flops of one iteration of one thread: every lane of every accumulator does one FMA. */
#define OCB_FMA_FLOPS_PER_ITER (2.0 * OCB_FMA_ACC * OCB_FMA_LANES)

/* Runs `iters` iterations on each of `threads` OpenMP threads (threads <= 0: the OpenMP
 * default) and returns the flops done (threads x iters x OCB_FMA_FLOPS_PER_ITER).
 * *sink (may be NULL) receives the sum of every lane of every thread's accumulators,
 * which makes the work observable; the values stay in [0.5, 2] for any iters.
 * Dispatches to the AVX2 variant when ocb_cpu_avx2(), else the plain-C _ref. */
double ocb_peak_fma(long iters, int threads, double *sink);
/* Plain C, same arithmetic lane by lane (not fast: the compiler may not vectorise it). */
double ocb_peak_fma_ref(long iters, int threads, double *sink);
/* AVX2+FMA; call only when ocb_cpu_avx2() (tests compare it with _ref). */
double ocb_peak_fma_avx2(long iters, int threads, double *sink);

#endif
